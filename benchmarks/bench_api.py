"""A bounded load on the local API over loopback: N clients x M questions, one answer at a time
behind a bounded queue. Prints per-request latency (p50/p95), the queue wait the server reports,
how many were told to retry (429), lost requests (must be 0) and the server process's RSS before
and after. The model is a stand-in that takes ``--model-s`` seconds per answer (what is measured is
the API: queueing, HTTP, the check; the real model's time per answer is in docs/benchmarks.md).

    .venv/bin/python benchmarks/bench_api.py [--clients 8] [--questions 5] [--model-s 0.5] [--queue 4] [--json]

Exactly one JSON document on stdout with --json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "api"))


def rss_mb() -> float:
    """This process's resident memory now (Linux), else its peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--model-s", type=float, default=0.5, help="seconds the stand-in model takes per answer")
    ap.add_argument("--queue", type=int, default=4, help="questions that may wait behind the running one")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    import httpx
    from api_helpers import ANSWER, write_docs
    from conftest import SlowGenerator

    from desktop_kb.api.server import ServerThread
    from desktop_kb.api.tokens import TokenStore
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import Settings

    tmp = Path(tempfile.mkdtemp(prefix="bench-api-"))
    s = Settings(data_dir=tmp / "data")
    s = s.replace(query=dataclasses.replace(s.query, dense_threshold=0.0))
    words = len(ANSWER.split(" "))
    lib = Library.open(s, embedder=HashEmbedder(), reranker=None, generator=SlowGenerator(ANSWER, args.model_s / words))
    lib.ingest("docs", [write_docs(tmp / "docs")])
    server = ServerThread(lib, s.data_dir, "127.0.0.1", 0, max_waiting=args.queue)
    server.start()
    _, token = TokenStore(s.data_dir).create("bench")
    url = f"http://127.0.0.1:{server.port}/v1/chat/completions"
    rows: list[dict[str, float | int]] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        with httpx.Client(timeout=300) as c:
            for i in range(args.questions):
                t0 = time.perf_counter()
                r = c.post(url, headers={"Authorization": f"Bearer {token}"},
                           json={"messages": [{"role": "user", "content": f"When must invoices be paid? {k}.{i}"}]})
                row = {"status": r.status_code, "ms": (time.perf_counter() - t0) * 1000}
                if r.status_code == 200:
                    row["queue_ms"] = r.json()["desktop_kb"]["timings_ms"].get("queue", 0.0)
                with lock:
                    rows.append(row)

    def load() -> float:
        started = time.perf_counter()
        threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.perf_counter() - started

    load()  # warm-up round (first imports, caches); then the measured one, RSS around it
    rows.clear()
    rss0 = rss_mb()
    wall = load()
    rss1 = rss_mb()
    server.stop()
    lib.close()

    def pct(v: list[float], q: float) -> float | None:
        return round(sorted(v)[min(len(v) - 1, int(q * len(v)))], 1) if v else None

    ok = [float(r["ms"]) for r in rows if r["status"] == 200]
    waits = [float(r["queue_ms"]) for r in rows if "queue_ms" in r]
    out = {"clients": args.clients, "questions": args.questions, "model_s": args.model_s, "queue": args.queue,
           "sent": args.clients * args.questions, "answered": len(ok), "told_to_retry": sum(r["status"] == 429 for r in rows),
           "other": sum(r["status"] not in (200, 429) for r in rows),
           "lost": args.clients * args.questions - len(rows), "wall_s": round(wall, 1),
           "latency_ms": {"p50": pct(ok, 0.5), "p95": pct(ok, 0.95)},
           "queue_wait_ms": {"p50": pct(waits, 0.5), "p95": pct(waits, 0.95), "mean": round(statistics.fmean(waits), 1) if waits else None},
           "rss_mb": {"before": round(rss0), "after": round(rss1)}, "rounds": "a warm-up round, then the measured one"}
    if args.json:
        sys.stdout.write(json.dumps(out) + "\n")
    else:
        print(json.dumps(out, indent=2))
    return 0 if out["lost"] == 0 and out["other"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
