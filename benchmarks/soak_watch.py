"""Hours of folder watching, compressed: ``desktop-kb watch`` runs while this script creates,
edits, renames and deletes files in the watched folder for N minutes; the watcher's memory (RSS),
open files and threads are sampled all along, and at the end the knowledge base must equal a
fresh ingest of the final folder (the same files, the same passages).

    .venv/bin/python benchmarks/soak_watch.py --minutes 10 [--files 40] [--seed 7] [--json]

The watcher is the real CLI in its own process, with the configured models (the shipped e5
embedder unless settings say otherwise), in a fresh data folder. Progress goes to stderr;
``--json`` prints one JSON document. "Flat" is judged on the second half of the run against the
first (start-up allocations excluded): RSS may grow at most 15%, open files and threads not at all.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = ("budget invoice travel receipt meeting office printer contract schedule leave policy report "
         "supplier delivery payment deadline review project team customer").split()


def _text(rng: random.Random, n: int) -> str:
    paras = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 40))).capitalize() + "." for _ in range(n)]
    return "# Note\n\n" + "\n\n".join(paras) + "\n"


def _sample(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {"rss_kb": int(fields["VmRSS"].split()[0]), "threads": int(fields["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def _passages(data: Path, kb: str) -> dict[str, list[str]]:
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import load_settings

    with Library.open(load_settings(data)) as lib:
        out: dict[str, list[str]] = {}
        for r in lib.store.scroll(kb):
            if r.payload.get("kind") != "faq":
                out.setdefault(Path(r.payload["path"]).name, []).append(r.payload["text"])
        health = lib.check_kb(kb)
    assert health.ok, health.to_json()
    return {k: sorted(v) for k, v in sorted(out.items())}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--files", type=int, default=40, help="files in the folder at the start")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--every", type=float, default=2.0, help="seconds between changes")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="dkb-soak-"))
    folder, data = work / "watched", work / "data"
    folder.mkdir()
    for i in range(args.files):
        (folder / f"note-{i:03d}.md").write_text(_text(rng, rng.randint(2, 8)), encoding="utf-8")
    cli = [sys.executable, "-m", "desktop_kb", "--data-dir", str(data)]
    subprocess.run([*cli, "ingest", str(folder), "--kb", "soak"], check=True, capture_output=True)
    watcher = subprocess.Popen([*cli, "watch", "--kb", "soak"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(5)
    samples: list[dict[str, float]] = []
    counts = {"created": 0, "edited": 0, "renamed": 0, "deleted": 0}
    started = time.monotonic()
    next_sample = started
    n = args.files
    try:
        while time.monotonic() - started < args.minutes * 60:
            files = sorted(folder.glob("*.md"))
            op = rng.choices(["created", "edited", "renamed", "deleted"], weights=[3, 4, 2, 2])[0]
            if op == "created" or len(files) < 5:
                (folder / f"note-{n:03d}.md").write_text(_text(rng, rng.randint(2, 8)), encoding="utf-8")
                n += 1
                op = "created"
            elif op == "edited":
                rng.choice(files).write_text(_text(rng, rng.randint(2, 8)), encoding="utf-8")
            elif op == "renamed":
                src = rng.choice(files)
                src.rename(folder / f"note-{n:03d}.md")
                n += 1
            else:
                rng.choice(files).unlink()
            counts[op] += 1
            if time.monotonic() >= next_sample:
                if watcher.poll() is not None:
                    raise SystemExit(f"the watcher died: {watcher.stderr.read().decode()[-2000:] if watcher.stderr else ''}")
                samples.append({"t_s": round(time.monotonic() - started, 1), **_sample(watcher.pid)})
                print(f"[{samples[-1]['t_s']:>6}s] {samples[-1]}", file=sys.stderr)
                next_sample += 15
            time.sleep(args.every)
        time.sleep(15)  # the last batch settles (debounce + ingest)
        samples.append({"t_s": round(time.monotonic() - started, 1), **_sample(watcher.pid)})
    finally:
        watcher.send_signal(signal.SIGINT)
        try:
            watcher.wait(timeout=60)
        except subprocess.TimeoutExpired:
            watcher.kill()
    watched = _passages(data, "soak")
    fresh = work / "fresh"
    subprocess.run([sys.executable, "-m", "desktop_kb", "--data-dir", str(fresh), "ingest", str(folder), "--kb", "soak"],
                   check=True, capture_output=True)
    expected = _passages(fresh, "soak")
    half = len(samples) // 2
    first, second = samples[1:half] or samples[:1], samples[half:]

    def peak(rows: list[dict[str, float]], key: str) -> float:
        return max(r[key] for r in rows)

    report = {
        "minutes": args.minutes, "changes": counts, "files_at_end": len(list(folder.glob("*.md"))),
        "samples": samples, "load_average": os.getloadavg(),
        "rss_mb": {"first_half_peak": round(peak(first, "rss_kb") / 1024, 1),
                   "second_half_peak": round(peak(second, "rss_kb") / 1024, 1),
                   "median": round(statistics.median(r["rss_kb"] for r in samples) / 1024, 1)},
        "fds": {"first_half_peak": peak(first, "fds"), "second_half_peak": peak(second, "fds")},
        "threads": {"first_half_peak": peak(first, "threads"), "second_half_peak": peak(second, "threads")},
        "equal_to_fresh_ingest": watched == expected,
        "watcher_exit": watcher.returncode,
    }
    report["flat"] = (report["rss_mb"]["second_half_peak"] <= 1.15 * report["rss_mb"]["first_half_peak"]
                      and report["fds"]["second_half_peak"] <= report["fds"]["first_half_peak"]
                      and report["threads"]["second_half_peak"] <= report["threads"]["first_half_peak"])
    if not report["equal_to_fresh_ingest"]:
        report["differs"] = sorted(set(watched) ^ set(expected)) or [k for k in watched if watched[k] != expected.get(k)]
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        print(json.dumps({k: v for k, v in report.items() if k != "samples"}, indent=2))
    return 0 if report["flat"] and report["equal_to_fresh_ingest"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
