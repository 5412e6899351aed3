"""Bare llama.cpp prefill (and decode) speed of the answer LLM per context option set or per
CPU build of llama.cpp.

    .venv/bin/python benchmarks/bench_prefill.py                      # the options below
    .venv/bin/python benchmarks/bench_prefill.py --tokens 800 --json
    .venv/bin/python benchmarks/bench_prefill.py --option '{"flash_attn": true}'
    .venv/bin/python benchmarks/bench_prefill.py --cpu all --rounds 3 --json   # CPU backends

Loads the configured GGUF once per option set (``Llama(**options)``, threads = ``models.threads``)
and prefills the same text (SciFact abstracts, cut to ``--tokens`` tokens) from an empty context,
best of ``--repeat``, then decodes ``--decode`` tokens one at a time; prints tokens per second.
``--cpu all`` (or a list such as ``haswell,zen4``) runs the default options once per llama.cpp
CPU backend this CPU can run (backends/llama_cpu.py), each in its own process, the backends taking
turns for ``--rounds`` rounds so that a drift of the machine's speed touches all alike.
``--build LABEL=DIR`` (repeatable) takes turns with them: llama-cpp-python as installed in DIR
(``pip install --target DIR``: the release wheel with every CPU variant, or one built with the
Windows build's flags, issue #58), first on the subprocess's path; ``DIR@haswell`` loads that CPU
backend of it.
With ``--json`` stdout holds exactly one JSON document; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Prefill and decode speed per option set, in this process."""
    from llama_cpp import Llama

    from desktop_kb.backends.llama_cpu import load_cpu_backend
    from desktop_kb.models.registry import resolve_llm_path
    from desktop_kb.settings import load_settings

    settings = load_settings(args.data_dir)
    path, threads = resolve_llm_path(settings), settings.models.threads
    cpu = load_cpu_backend()
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
        decode = None
        if args.decode > 0:  # one token at a time after the prompt, as generation does
            t0 = time.perf_counter()
            for tok in tokens[: args.decode]:
                llm.eval([tok])
            decode = round(min(args.decode, len(tokens)) / (time.perf_counter() - t0), 1)
        llm.close()
        row = {"options": opts, "tokens": len(tokens), "seconds": round(best, 3),
               "tokens_per_s": round(len(tokens) / best, 1), "decode_tokens_per_s": decode}
        rows.append(row)
        print(f"[bench] cpu {cpu} {json.dumps(opts)}: prefill {row['tokens_per_s']} tok/s, decode {decode} tok/s",
              file=sys.stderr, flush=True)
    return {"model": path.name, "threads": threads, "cpu": cpu, "load_before": load_before, "runs": rows}


def by_cpu(args: argparse.Namespace) -> dict[str, Any]:
    """Default options once per CPU backend per round, each backend in its own process."""
    from desktop_kb.backends.llama_cpu import cpu_variants, lib_dir

    shipped = cpu_variants(lib_dir())  # where the loader looks (LLAMA_CPP_LIB_PATH too)
    wanted = list(shipped) if args.cpu == "all" else [v for v in (args.cpu or "").split(",") if v]
    builds = dict(b.split("=", 1) for b in args.build or [])
    load_before = list(os.getloadavg())
    runs: dict[str, list[dict[str, Any]]] = {}
    for rnd in range(max(1, args.rounds)):
        for variant in [*wanted, *builds]:
            cmd = [sys.executable, __file__, "--json", "--tokens", str(args.tokens), "--repeat", str(args.repeat),
                   "--decode", str(args.decode), "--option", "{}"]
            if args.data_dir:
                cmd += ["--data-dir", args.data_dir]
            env = {k: v for k, v in os.environ.items() if k != "DESKTOP_KB_LLAMA_CPU"}
            if variant in builds:  # that build's llama_cpp first on the path; the app's code after it
                folder, _, backend = builds[variant].partition("@")  # DIR@haswell: that CPU backend of it
                env["PYTHONPATH"] = os.pathsep.join([folder, str(Path(__file__).resolve().parents[1]),
                                                     *filter(None, [os.environ.get("PYTHONPATH")])])
                if backend:
                    env["DESKTOP_KB_LLAMA_CPU"] = backend
            else:
                env["DESKTOP_KB_LLAMA_CPU"] = variant
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if proc.returncode != 0:  # a backend this CPU cannot run (score 0)
                print(f"[bench] round {rnd + 1} {variant}: {proc.stderr.strip().splitlines()[-1:]}",
                      file=sys.stderr, flush=True)
                continue
            row = json.loads(proc.stdout)["runs"][0]
            runs.setdefault(variant, []).append(row)
            print(f"[bench] round {rnd + 1} {variant}: prefill {row['tokens_per_s']} tok/s, "
                  f"decode {row['decode_tokens_per_s']} tok/s", file=sys.stderr, flush=True)
    summary = {v: {"prefill_tokens_per_s": [r["tokens_per_s"] for r in rs],
                   "prefill_median": statistics.median(r["tokens_per_s"] for r in rs),
                   "decode_median": statistics.median(r["decode_tokens_per_s"] or 0 for r in rs)}
               for v, rs in runs.items()}
    return {"tokens": args.tokens, "rounds": args.rounds, "load_before": load_before,
            "load_after": list(os.getloadavg()), "cpu": summary}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", help="take the model settings from this data folder")
    ap.add_argument("--tokens", type=int, default=800)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--decode", type=int, default=0, help="also time decoding this many tokens")
    ap.add_argument("--option", action="append", help="a JSON object of Llama() options (repeatable)")
    ap.add_argument("--cpu", help="'all' or a comma-separated list of llama.cpp CPU backends to compare")
    ap.add_argument("--rounds", type=int, default=2, help="with --cpu: rounds of taking turns")
    ap.add_argument("--build", action="append",
                    help="LABEL=DIR[@BACKEND]: llama-cpp-python installed in DIR, taking turns with --cpu's backends")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = by_cpu(args) if args.cpu or args.build else measure(args)
    if args.json:
        print(json.dumps(result))
    elif args.cpu or args.build:
        for variant, row in result["cpu"].items():
            print(f"{variant:16} prefill {row['prefill_median']:7.1f} tok/s (rounds {row['prefill_tokens_per_s']}), "
                  f"decode {row['decode_median']:.1f} tok/s")
    else:
        for r in result["runs"]:
            print(f"{json.dumps(r['options']):45} {r['tokens_per_s']:7.1f} tok/s  ({r['tokens']} tokens, {r['seconds']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
