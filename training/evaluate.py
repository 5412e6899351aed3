"""Measure the cross-encoder: the held-out training split, and the faithfulness report halves.

    .venv/bin/python -m training.evaluate --checkpoint training/runs/ce [--json]
    .venv/bin/python -m training.evaluate --onnx ~/.local/share/desktop-kb/models/e5-cross-encoder

* ``heldout``: the articles :func:`training.data.split_of` held out of training (what thresholds
  are calibrated on): AUC of the verify head (right vs wrong claims, per language and per kind),
  AUC of the rerank head (own paragraph vs others).
* ``report``: the faithfulness set built from ``../shared/eval/qa`` by the product's own
  :func:`~desktop_kb.eval.faithfulness.build_claims`, the *report* half of
  ``benchmarks/faithfulness_set.py`` (the ``eval answers --limit 50`` sample left out), never
  trained or calibrated on. As in ``benchmarks/calibrate_judge.py``, only the claims that pass the
  word and figure checks are scored (the others are refused before any meaning check), the
  evidence being what the check found for the citation; AUC right (verbatim, paraphrased,
  short_right) vs wrongly bound (in_passage_swap, short_wrong, swapped_roles) and vs off-topic
  (trap, off_passage) — the numbers the LLM judge scored 0.68 (en) / 0.73 (zh) on.

Exactly one JSON document on stdout with ``--json``; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RIGHT = ("verbatim", "paraphrased", "short_right")
BOUND = ("in_passage_swap", "short_wrong", "swapped_roles")
OFF = ("trap", "off_passage")
SETS = {"en": "squad2_dev", "zh": "cmrc2018_dev"}

# (head, first text, second text) pairs -> logits of that head
Scorer = Callable[[Sequence[tuple[int, str, str]]], list[float]]


def _benchmarks_importable() -> None:
    """benchmarks/ (scripts, not a package) on the import path, once."""
    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.insert(0, str(ROOT / "benchmarks"))


def auc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    """P(a positive scores above a negative), ties half: the judge's calibration script's own."""
    _benchmarks_importable()
    from calibrate_judge import auc as judge_auc

    return judge_auc(list(pos), list(neg))


def torch_scorer(run: Path, max_tokens: int = 256, batch: int = 32) -> Scorer:
    import torch

    from desktop_kb.backends.cross_encoder_e5 import encode_pairs
    from training.model import CrossEncoder, load_e5
    from training.train import tokenizer_for

    model = CrossEncoder(load_e5())
    ckpt = torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=False)
    model.load_state_dict(ckpt["model"], strict=False)
    model.eval()
    tok = tokenizer_for(run / "tokenizer")

    def score(items: Sequence[tuple[int, str, str]]) -> list[float]:
        out: list[float] = [0.0] * len(items)
        order = sorted(range(len(items)), key=lambda i: len(items[i][1]) + len(items[i][2]))
        with torch.no_grad():  # float32: bf16 on an AVX2-only CPU is ~15x slower
            for k in range(0, len(order), batch):
                group = order[k:k + batch]
                ids, mask = encode_pairs(tok, [(items[i][1], items[i][2]) for i in group], max_tokens=max_tokens)
                logits = model(torch.from_numpy(ids), torch.from_numpy(mask)).float()
                for r, i in enumerate(group):
                    out[i] = float(logits[r, items[i][0]])
        return out

    return score


def onnx_scorer(folder: Path) -> Scorer:
    from desktop_kb.backends.cross_encoder_e5 import E5CrossEncoder

    ce = E5CrossEncoder(folder, batch=16)

    def score(items: Sequence[tuple[int, str, str]]) -> list[float]:
        logits = ce.logits([(a, b) for _, a, b in items])
        return [float(logits[i, h]) for i, (h, _, _) in enumerate(items)]

    return score


def calibrate(rows: Sequence[Any], logits: Sequence[float], *, keep_right: float = 0.97, support_right: float = 0.90,
              ) -> dict[str, Any]:
    """The verifier's two thresholds (on its probability), from the held-out claims of the
    faithfulness kinds: ``refuse_below`` lets ``keep_right`` of the right claims stand, and
    ``support_from`` calls ``support_right`` of them supported. (The held-out English verify pairs
    are WikiQA's, not claims: one pair of thresholds serves both languages, calibrated on the
    held-out claims, and is reported per language on the eval sets.)"""
    import numpy as np

    from training.data import SQUAD_FILES

    claims = [(e, 1 / (1 + np.exp(-s))) for e, s in zip(rows, logits, strict=True)
              if e.task == "verify" and e.source + ".json" in SQUAD_FILES]
    right = np.array([p for e, p in claims if e.kind in RIGHT])
    if not len(right):
        return {}
    lo = float(np.quantile(right, 1 - keep_right))
    hi = max(lo, float(np.quantile(right, 1 - support_right)))
    out: dict[str, Any] = {"refuse_below": round(lo, 4), "support_from": round(hi, 4),
                           "rule": f"{keep_right:.0%} of held-out right claims stand, {support_right:.0%} supported",
                           "heldout_claims": len(claims)}
    for kind in sorted({e.kind for e, _ in claims}):
        ps = np.array([p for e, p in claims if e.kind == kind])
        out.setdefault("heldout_rates", {})[kind] = {
            "n": len(ps), "supported": round(float((ps >= hi).mean()), 3), "refused": round(float((ps < lo).mean()), 3)}
    return out


def heldout(score: Scorer, limit: int = 0) -> dict[str, Any]:
    from desktop_kb.backends.cross_encoder_e5 import RERANK, VERIFY, rerank_pair, verify_pair
    from training.data import build

    rows = build("heldout", cache=ROOT / "training" / ".cache")
    if limit:
        rows = rows[:limit]
    items = [(VERIFY, *verify_pair(e.question, e.claim, e.text)) if e.task == "verify"
             else (RERANK, *rerank_pair(e.question, e.text)) for e in rows]
    print(f"[evaluate] held-out: {len(items)} pairs", file=sys.stderr)
    logits = score(items)
    out: dict[str, Any] = {}
    for task in ("verify", "rerank"):
        for lang in ("en", "zh"):
            sel = [(e, s) for e, s in zip(rows, logits, strict=True) if e.task == task and e.lang == lang]
            pos = [s for e, s in sel if e.label]
            neg = [s for e, s in sel if not e.label]
            kinds = {}
            for kind in sorted({e.kind for e, _ in sel if not e.label}):
                kinds[kind] = auc(pos, [s for e, s in sel if e.kind == kind and not e.label])
            out[f"{task}_{lang}"] = {"pairs": len(sel), "positives": len(pos), "auc": auc(pos, neg),
                                     "auc_by_negative_kind": kinds}
    out["calibration"] = calibrate(rows, logits)
    return out


def report_claims(lang: str, per_kind: int = 40, which: str = "report",
                  totals: dict[str, int] | None = None) -> list[tuple[str, str, str, str]]:
    """(kind, question, claim, evidence) of the report half's claims that pass the word checks,
    of the first ``per_kind`` claims a kind (the ``faithfulness_set.py --write --per-kind 40``
    files that ``eval claims`` reads); ``which="calibrate"``: the other half's. ``totals``, when
    given, is filled with each kind's count before the word checks."""
    _benchmarks_importable()
    from faithfulness_set import SHARED, half

    from desktop_kb.eval.datasets import load_qa, sample_ids
    from desktop_kb.eval.faithfulness import build_claims
    from desktop_kb.text.term_stats import TermStats
    from desktop_kb.verify.citations import validate
    from desktop_kb.verify.verifier import claim_text, evidence_of

    ds = load_qa(SHARED / "qa" / SETS[lang])
    held = set(sample_ids([it.id for it in ds.items], 50))
    stats = TermStats.from_texts(f"{d.title} {d.text}" for d in ds.corpus.values())
    out = []
    taken: dict[str, int] = {}
    for c in build_claims(ds):
        if c.item_id in held or half(c.item_id) != which:
            continue
        taken[c.kind] = taken.get(c.kind, 0) + 1
        if taken[c.kind] > per_kind or c.kind not in (*RIGHT, *BOUND, *OFF):
            continue
        if totals is not None:
            totals[c.kind] = totals.get(c.kind, 0) + 1
        v = validate(c.answer, list(c.passages), c.question, stats=stats)
        if not v.valid or not v.citations:
            continue
        cite = v.citations[0]
        out.append((c.kind, c.question, claim_text(c.answer), evidence_of(cite, c.passages[cite.n - 1])))
    return out


def report(score: Scorer) -> dict[str, Any]:
    from desktop_kb.backends.cross_encoder_e5 import VERIFY, verify_pair

    out: dict[str, Any] = {}
    for lang in SETS:
        claims = report_claims(lang)
        print(f"[evaluate] report half {lang}: {len(claims)} claims past the word checks", file=sys.stderr)
        logits = score([(VERIFY, *verify_pair(q, c, e)) for _, q, c, e in claims])
        by: dict[str, list[float]] = {}
        for (kind, *_), s in zip(claims, logits, strict=True):
            by.setdefault(kind, []).append(s)
        right = [s for k in RIGHT for s in by.get(k, [])]
        out[lang] = {"claims": {k: len(v) for k, v in sorted(by.items())},
                     "auc_right_vs_bound": auc(right, [s for k in BOUND for s in by.get(k, [])]),
                     "auc_right_vs_off": auc(right, [s for k in OFF for s in by.get(k, [])]),
                     "logits": {k: [round(x, 3) for x in v] for k, v in sorted(by.items())}}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", type=Path, help="a training run folder (its checkpoint.pt)")
    ap.add_argument("--onnx", type=Path, help="a built cross-encoder folder")
    ap.add_argument("--limit", type=int, default=0, help="held-out pairs (0: all)")
    ap.add_argument("--skip-report", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--calibration-out", type=Path, help="write the held-out calibration here (for export)")
    args = ap.parse_args(argv)
    if bool(args.checkpoint) == bool(args.onnx):
        ap.error("give one of --checkpoint or --onnx")
    score = torch_scorer(args.checkpoint) if args.checkpoint else onnx_scorer(args.onnx)
    result: dict[str, Any] = {"heldout": heldout(score, args.limit)}
    if args.calibration_out:
        args.calibration_out.write_text(json.dumps({"verify": result["heldout"]["calibration"]}, indent=2))
    if not args.skip_report:
        result["report"] = report(score)
    if args.json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    else:
        for name, part in result.items():
            for key, val in part.items():
                shown = {k: v for k, v in val.items() if k != "logits"} if isinstance(val, dict) else val
                print(f"{name} {key}: {json.dumps(shown, ensure_ascii=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
