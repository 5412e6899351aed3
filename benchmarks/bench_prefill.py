"""Bare llama.cpp prefill speed of the answer LLM under different context options.

    .venv/bin/python benchmarks/bench_prefill.py                      # the options below
    .venv/bin/python benchmarks/bench_prefill.py --tokens 800 --json
    .venv/bin/python benchmarks/bench_prefill.py --option '{"flash_attn": true}'

Loads the configured GGUF once per option set (``Llama(**options)``, threads = ``models.threads``)
and prefills the same text (SciFact abstracts, cut to ``--tokens`` tokens) from an empty context,
best of ``--repeat``; prints prompt tokens per second per option set. With ``--json`` stdout holds
exactly one JSON document; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

EVAL = Path(os.environ.get("DKB_EVAL_DATA", "/work/shared/eval")) / "retrieval"
OPTIONS: list[dict[str, Any]] = [
    {},
    {"flash_attn": True},
    {"n_batch": 256, "n_ubatch": 256},
    {"n_batch": 1024, "n_ubatch": 1024},
    {"flash_attn": True, "n_ubatch": 128},
]


def _text(chars: int = 40_000) -> str:
    out: list[str] = []
    with (EVAL / "scifact" / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            out.append(json.loads(line)["text"])
            if sum(map(len, out)) > chars:
                break
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", help="take the model settings from this data folder")
    ap.add_argument("--tokens", type=int, default=800)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--option", action="append", help="a JSON object of Llama() options (repeatable)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from llama_cpp import Llama

    from desktop_kb.models.registry import resolve_llm_path
    from desktop_kb.settings import load_settings

    settings = load_settings(args.data_dir)
    path, threads = resolve_llm_path(settings), settings.models.threads
    options = [json.loads(o) for o in args.option] if args.option else OPTIONS
    text = _text()
    load_before = list(os.getloadavg())
    rows = []
    for opts in options:
        llm = Llama(model_path=str(path), n_ctx=4096, n_threads=threads, n_threads_batch=threads, verbose=False, **opts)
        tokens = llm.tokenize(text.encode("utf-8"))[: args.tokens]
        best = float("inf")
        for _ in range(max(1, args.repeat)):
            llm.reset()
            t0 = time.perf_counter()
            llm.eval(tokens)
            best = min(best, time.perf_counter() - t0)
        llm.close()
        row = {"options": opts, "tokens": len(tokens), "seconds": round(best, 3),
               "tokens_per_s": round(len(tokens) / best, 1)}
        rows.append(row)
        print(f"[bench] {json.dumps(opts)}: {row['tokens_per_s']} tok/s", file=sys.stderr, flush=True)
    result = {"model": path.name, "threads": threads, "load_before": load_before, "runs": rows}
    if args.json:
        print(json.dumps(result))
    else:
        for r in rows:
            print(f"{json.dumps(r['options']):45} {r['tokens_per_s']:7.1f} tok/s  ({r['tokens']} tokens, {r['seconds']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
