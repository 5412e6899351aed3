"""Answer speed, and the answer quality that goes with it, on shared QA slices.

    .venv/bin/python benchmarks/bench_answer.py --data-dir /tmp/bench --limit 16 --json
    .venv/bin/python benchmarks/bench_answer.py --dataset ../shared/eval/qa/cmrc2018_dev --limit 8
    .venv/bin/python benchmarks/bench_answer.py --compare before.jsonl after.jsonl
    .venv/bin/python benchmarks/bench_answer.py --data-dir /tmp/bench --first-question

Every question goes through ``Library.ask`` with the real models (the same sample and order as
``desktop-kb eval answers --limit N``). Per question: the answer prompt's tokens, the time to the
first answer token (from the question, as the user waits), the total time, and, in the same run on
the same final prompt with the same loaded model, llama.cpp's bare prefill (context reset, the
prompt's tokens evaluated, nothing cached). Printed: p50/p95 of each and of the ratio TTFT / bare
prefill, plus the ``eval answers`` scores of the same answers (contains the gold answer, gold
answer inside a cited passage, refusals). The load average is printed with it: compare runs only
when it was alike. Progress goes to stderr; ``--json`` prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EVAL = Path(os.environ.get("DKB_EVAL_DATA", ROOT.parent / "shared" / "eval"))
DEFAULT_SETS = [EVAL / "qa" / "squad2_dev", EVAL / "qa" / "cmrc2018_dev"]
KEEP = ("answer_contains_gold", "answer_gold_supported", "cited_passage_has_gold", "citation_hits_gold",
        "refusal_rate_unanswerable", "false_refusal_rate", "answerable", "unanswerable", "status")


class Spy:
    """Wraps the real generator: remembers each chat and judge call's messages (the bench re-times
    the first answer prompt's bare prefill afterwards)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.id = inner.id
        self.calls: list[dict[str, Any]] = []

    def chat(self, messages: Any, **kw: Any) -> str:
        self.calls.append({"messages": list(messages), "json": kw.get("json_schema") is not None})
        return self.inner.chat(messages, **kw)

    def count_tokens(self, messages: Any) -> int | None:
        return self.inner.count_tokens(messages)

    def yes_no(self, messages: Any, **kw: Any) -> float | None:
        """The answerability judge's call (without it the pipeline would skip the judge)."""
        self.calls.append({"messages": list(messages), "json": False, "judge": True})
        return self.inner.yes_no(messages, **kw)

    def answer_span(self, messages: Any, **kw: Any) -> Any:
        """The span judge's call (without it the pipeline would judge by yes/no instead)."""
        self.calls.append({"messages": list(messages), "json": False, "judge": True})
        return self.inner.answer_span(messages, **kw)

    def close(self) -> None:
        self.inner.close()


def bare_prefill_ms(generator: Any, messages: Any) -> tuple[int, float]:
    """Prompt tokens and the time llama.cpp takes to evaluate them from an empty context."""
    with generator._lock:
        llm = generator._load_locked()
        tokens = generator._template.prompt(messages)
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(tokens)
        ms = (time.perf_counter() - t0) * 1000
        llm.reset()  # nothing of this prompt is reused by the next question
    return len(tokens), ms


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 3)


def dist(values: list[float]) -> dict[str, Any]:
    return {"p50": pct(values, 0.5), "p95": pct(values, 0.95),
            "mean": round(statistics.fmean(values), 3) if values else None, "n": len(values)}


def run_set(settings: Any, dataset: Path, limit: int, answerable_only: bool, per_item: Any,
            prefix_cache: bool = True) -> dict[str, Any]:
    from desktop_kb.eval.answers import aggregate, score_answer
    from desktop_kb.eval.corpus import LogProgress, prepare_kb
    from desktop_kb.eval.datasets import load_qa, sample_ids
    from desktop_kb.library.factory import build_generator
    from desktop_kb.library.kb import Library
    from desktop_kb.types import FIRST_TOKEN

    ds = load_qa(str(dataset))
    wanted = set(sample_ids([it.id for it in ds.items], limit))
    items = [it for it in ds.items if it.id in wanted and (it.answerable or not answerable_only)]
    spy = Spy(build_generator(settings))
    if not prefix_cache:  # as before the cache: only llama.cpp's reuse of the previous prompt
        spy.inner.prefix_cache.capacity = 0
    rows, scores = [], []
    with Library.open(settings, generator=spy) as lib:
        prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, progress=LogProgress(f"ingest {ds.name}"))
        spy.inner.load()
        for i, item in enumerate(items, 1):
            spy.calls.clear()
            t0 = time.perf_counter()
            ans = lib.ask(item.question, kbs=[prep.name])
            total = (time.perf_counter() - t0) * 1000
            prompts = [c["messages"] for c in spy.calls if not c["json"] and not c.get("judge")]
            row: dict[str, Any] = {"id": item.id, "status": ans.status, "total_ms": round(total, 1),
                                   "llm_calls": len(spy.calls), "timings_ms": ans.timings_ms}
            if "judge" in ans.timings_ms:
                row["judge_ms"] = ans.timings_ms["judge"]
            if prompts and FIRST_TOKEN in ans.timings_ms:
                n_tokens, bare = bare_prefill_ms(spy.inner, prompts[0])
                ttft = ans.timings_ms[FIRST_TOKEN]
                row |= {"prompt_tokens": n_tokens, "ttft_ms": ttft, "bare_prefill_ms": round(bare, 1),
                        "ttft_over_prefill": round(ttft / bare, 3) if bare else None}
            score = score_answer(item, ans, prep.doc_id)
            scores.append(score)
            row |= {"answerable": item.answerable, "contains_gold": score.contains_gold,
                    "gold_supported": score.gold_supported}
            rows.append(row)
            if per_item is not None:
                per_item.write(json.dumps({"set": ds.name, **row}, ensure_ascii=False) + "\n")
                per_item.flush()
            sys.stderr.write(f"{ds.name} {i}/{len(items)}: {ans.status} {total / 1000:.1f} s, "
                             f"{row.get('prompt_tokens')} prompt tokens\n")
    return summarise(rows) | {"quality": {k: v for k, v in aggregate(scores).items() if k in KEEP}}


def first_question(settings: Any, dataset: Path, limit: int) -> dict[str, Any]:
    """The first question after the Library opens, twice with fresh models: cold (the model loads
    and the system prompts are prefilled inside the question) and after ``Library.warm_up`` (what
    the app does when it opens). Same question (the sample's first answerable one), same base."""
    from desktop_kb.eval.corpus import LogProgress, prepare_kb
    from desktop_kb.eval.datasets import load_qa, sample_ids
    from desktop_kb.library.kb import Library
    from desktop_kb.types import FIRST_TOKEN

    ds = load_qa(str(dataset))
    order = sample_ids([it.id for it in ds.items], limit)
    item = next(it for i in order for it in ds.items if it.id == i and it.answerable)
    out: dict[str, Any] = {"question_id": item.id}
    for mode in ("cold", "warm"):
        with Library.open(settings) as lib:
            prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, progress=LogProgress(f"ingest {ds.name}"))
            if mode == "warm":
                t0 = time.perf_counter()
                out["warm_up_tokens"] = lib.warm_up()
                out["warm_up_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            t0 = time.perf_counter()
            ans = lib.ask(item.question, kbs=[prep.name])
            out[mode] = {"ttft_ms": ans.timings_ms.get(FIRST_TOKEN), "total_ms": round((time.perf_counter() - t0) * 1000, 1),
                         "status": ans.status}
        sys.stderr.write(f"{ds.name} first question {mode}: {out[mode]}\n")
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    timed = [r for r in rows if "ttft_ms" in r]
    answerable = [r for r in rows if r.get("answerable")]
    return {
        "questions": len(rows),
        "prompt_tokens": dist([r["prompt_tokens"] for r in timed]),
        "ttft_ms": dist([r["ttft_ms"] for r in timed]),
        "bare_prefill_ms": dist([r["bare_prefill_ms"] for r in timed]),
        "ttft_over_prefill": dist([r["ttft_over_prefill"] for r in timed if r["ttft_over_prefill"]]),
        "total_ms": dist([r["total_ms"] for r in rows]),
        "judge_ms": dist([r["judge_ms"] for r in rows if "judge_ms" in r]),  # answers that were judged
        "llm_calls": dist([r["llm_calls"] for r in rows]),
        "answerable": len(answerable),
        "contains_gold": sum(bool(r["contains_gold"]) for r in answerable),
        "gold_supported": sum(bool(r["gold_supported"]) for r in answerable),
        "answered": sum(r["status"] == "answered" for r in rows),
        "refused_unanswerable": sum(r["status"] != "answered" for r in rows if not r.get("answerable")),
    }


def compare(before: Path, after: Path) -> dict[str, Any]:
    """Both per-item files summarised on the questions they have in common (a run stopped early
    is compared on what it did)."""
    runs = [{(r["set"], r["id"]): r for r in map(json.loads, p.read_text(encoding="utf-8").splitlines()) if r}
            for p in (before, after)]
    common = [k for k in runs[0] if k in runs[1]]
    for k in common:  # per-item files written before the field existed
        for run, other in ((runs[0], runs[1]), (runs[1], runs[0])):
            run[k].setdefault("answerable", other[k].get("answerable"))
    out: dict[str, Any] = {}
    for name in sorted({s for s, _ in common}):
        keys = [k for k in common if k[0] == name]
        out[name] = {label: summarise([run[k] for k in keys]) for label, run in zip(("before", "after"), runs,
                                                                                     strict=True)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", action="append", type=Path, help="QA folder (repeatable); default SQuAD + CMRC")
    ap.add_argument("--limit", type=int, default=16, help="the `eval answers --limit` sample of each set")
    ap.add_argument("--answerable-only", action="store_true")
    ap.add_argument("--data-dir", type=Path, help="data folder (eval knowledge bases are cached)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                    help="summarise two --per-item files on their common questions, then stop")
    ap.add_argument("--per-item", type=Path, help="also write one JSON line per question")
    ap.add_argument("--no-prefix-cache", action="store_true", help="keep no system-prompt states (the old way)")
    ap.add_argument("--first-question", action="store_true",
                    help="only the first question after opening, cold vs after the warm-up")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.compare:
        sys.stdout.write(json.dumps(compare(*args.compare), ensure_ascii=False, indent=2) + "\n")
        return 0
    if args.data_dir is None:
        ap.error("--data-dir is required")

    from desktop_kb.settings import load_settings

    settings = load_settings(args.data_dir)
    out: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()},
                           "settings": {"top_k": settings.query.top_k,
                                                                  "prefix_cache": not args.no_prefix_cache}, "sets": {}}
    if args.first_question:
        out["first_question"] = {d.name: first_question(settings, d, args.limit) for d in args.dataset or DEFAULT_SETS}
        out["machine"]["load_avg_end"] = os.getloadavg()
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
        return 0
    fh = args.per_item.open("w", encoding="utf-8") if args.per_item else None
    try:
        for dataset in args.dataset or DEFAULT_SETS:
            out["sets"][dataset.name] = run_set(settings, dataset, args.limit, args.answerable_only, fh,
                                               prefix_cache=not args.no_prefix_cache)
    finally:
        if fh is not None:
            fh.close()
    out["machine"]["load_avg_end"] = os.getloadavg()
    if args.json:
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
        return 0
    for name, r in out["sets"].items():
        print(f"{name}: {r['questions']} questions")
        for key in ("prompt_tokens", "ttft_ms", "bare_prefill_ms", "ttft_over_prefill", "total_ms", "judge_ms"):
            print(f"  {key:18} p50 {r[key]['p50']}  p95 {r[key]['p95']}")
        print(f"  quality            {r['quality']}")
    print(f"load average {out['machine']['load_avg_start']} → {out['machine']['load_avg_end']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
