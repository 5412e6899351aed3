"""Calibrate the answerability judge (settings.query.judge_threshold) on QA gold data.

For claims of the faithfulness set (desktop_kb/eval/faithfulness.py) — the gold sentence cited
to its passage ("verbatim"), the question restated with the gold answer ("paraphrased"), and
SQuAD 2.0's adversarial questions answered with the sentence holding their plausible wrong answer
("trap"), and in both sets a sentence near the question's words that holds no gold answer
("off_passage") — the claim is validated as the product does, and the judge weighs what it would read
(query/judge.py) with the real shipped LLM. Items of the `eval answers --limit 50` sample are left
out, so that run is not scored on what set the threshold. Prints, per threshold, the share of
faithful claims the judge lets through and the share of traps it stops; AUC per set.

    .venv/bin/python benchmarks/calibrate_judge.py [--per-kind 40] [--kinds verbatim,trap] [--model PATH.gguf] [--json]

Progress on stderr; with --json exactly one JSON document on stdout (scores included).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from desktop_kb.eval.datasets import load_qa, sample_ids
from desktop_kb.eval.faithfulness import build_claims
from desktop_kb.query.citations import validate
from desktop_kb.query.judge import judge_messages, judge_text
from desktop_kb.query.support import TermStats

SHARED = Path(os.environ.get("DKB_EVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "eval"))
KINDS = {"squad2_dev": ("verbatim", "paraphrased", "trap", "off_passage"),
         "cmrc2018_dev": ("verbatim", "paraphrased", "off_passage")}
NEGATIVE = ("trap", "off_passage")
THRESHOLDS = (-2.0, -1.5, -1.2, -1.0, -0.9, -0.8, -0.7, -0.6, -0.5, -0.4, -0.3, 0.0, 0.5)


def _model(path: str | None) -> Path:
    if path:
        return Path(path)
    from desktop_kb.models.registry import SHIPPED_LLMS
    from desktop_kb.settings import Settings

    shipped = next(m for m in SHIPPED_LLMS.values() if "1.5b" in m.filename)
    return Settings(data_dir=Path("/nonexistent")).models_dir / shipped.filename


def auc(pos: list[float], neg: list[float]) -> float | None:
    """P(a positive scores above a negative), ties counting half (None without both)."""
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-kind", type=int, default=40)
    ap.add_argument("--model", help="GGUF file (default: the shipped Qwen2.5-Coder-1.5B)")
    ap.add_argument("--exclude-limit", type=int, default=50, help="leave out the `eval answers --limit N` sample")
    ap.add_argument("--kinds", default="verbatim,paraphrased,trap,off_passage", help="claim kinds to judge")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from desktop_kb.backends.llm_llamacpp import LlamaCppGenerator

    model = _model(args.model)
    gen = LlamaCppGenerator(model, model.stem, n_ctx=2048, n_threads=int(os.environ.get("DKB_THREADS", "2")))
    rows: list[dict] = []
    started = time.perf_counter()
    for name, kinds in KINDS.items():
        ds = load_qa(SHARED / "qa" / name)
        held_out = set(sample_ids([it.id for it in ds.items], args.exclude_limit))
        stats = TermStats.from_texts(f"{d.title} {d.text}" for d in ds.corpus.values())
        wanted = set(kinds) & set(args.kinds.split(","))
        claims = [c for c in build_claims(ds, limit=args.per_kind + 20)
                  if c.kind in wanted and c.item_id not in held_out]
        taken: dict[str, int] = {}
        for c in claims:
            if taken.get(c.kind, 0) >= args.per_kind:
                continue
            v = validate(c.answer, list(c.passages), c.question, stats=stats)
            if not v.citations:
                continue
            taken[c.kind] = taken.get(c.kind, 0) + 1
            t = time.perf_counter()
            score = gen.yes_no(judge_messages(c.question, judge_text(v.citations, list(c.passages))))
            rows.append({"set": name, "kind": c.kind, "id": c.item_id, "valid": v.valid,
                         "score": round(float(score), 4), "s": round(time.perf_counter() - t, 2)})
            print(f"{name} {c.kind} {taken[c.kind]}/{args.per_kind} score {score:+.2f} "
                  f"({rows[-1]['s']} s)", file=sys.stderr, flush=True)
    gen.close()

    faithful = [r["score"] for r in rows if r["kind"] not in NEGATIVE]
    traps = [r["score"] for r in rows if r["kind"] == "trap"]
    table = []
    for t in THRESHOLDS:
        row = {"threshold": t, "trap_rejected": round(sum(s < t for s in traps) / len(traps), 4) if traps else None}
        for name, kinds in KINDS.items():
            for kind in kinds:
                scores = [r["score"] for r in rows if r["set"] == name and r["kind"] == kind]
                if scores and kind not in NEGATIVE:
                    row[f"{name}/{kind}_accepted"] = round(sum(s >= t for s in scores) / len(scores), 4)
                elif scores and kind == "off_passage":
                    row[f"{name}/off_passage_stopped"] = round(sum(s < t for s in scores) / len(scores), 4)
        table.append(row)
    squad_ok = [r["score"] for r in rows if r["set"] == "squad2_dev" and r["kind"] not in NEGATIVE]
    cmrc_ok = [r["score"] for r in rows if r["set"] == "cmrc2018_dev" and r["kind"] not in NEGATIVE]
    cmrc_off = [r["score"] for r in rows if r["set"] == "cmrc2018_dev" and r["kind"] == "off_passage"]
    out = {"model": model.name, "per_kind": args.per_kind, "seconds": round(time.perf_counter() - started, 1),
           "auc_squad_faithful_vs_trap": auc(squad_ok, traps), "auc_all_faithful_vs_trap": auc(faithful, traps),
           "auc_cmrc_faithful_vs_off_passage": auc(cmrc_ok, cmrc_off),
           "mean_judge_s": round(sum(r["s"] for r in rows) / len(rows), 2) if rows else None,
           "thresholds": table, "rows": rows}
    if args.json:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        return 0
    print(f"AUC faithful vs trap: SQuAD {out['auc_squad_faithful_vs_trap']}, all {out['auc_all_faithful_vs_trap']}")
    for row in table:
        print("  ".join(f"{k}={v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
