"""Calibrate what raises the score an answer needs, on `eval answers` over held-out questions.

The answer check withholds an answer whose judge score is below the language's threshold plus
margins (verify/answer_check.py): a key term, name or figure of the question in no cited passage
(``query.judge_margin_missing_term``, ``_cjk``), and the embedder's top-1 cosine below
``query.judge_dense_reference`` (``query.judge_margin_per_dense`` per unit). This script chooses
them on questions that are in neither the faithfulness set's report half nor the ``eval answers
--limit 50`` sample the results are reported on:

    # the held-out ids: the --limit 150 sample without the --limit 50 one
    .venv/bin/python benchmarks/calibrate_answerability.py --ids ../shared/eval/qa/squad2_dev > ids-en
    desktop-kb --data-dir D eval answers --dataset ../shared/eval/qa/squad2_dev --ids "$(cat ids-en)" \\
        --per-item cal-en.jsonl --json
    # Chinese: questions made unanswerable by taking their articles out (CMRC has none of its own)
    .venv/bin/python benchmarks/calibrate_answerability.py --ids ../shared/eval/qa/cmrc2018_dev > ids-zh
    desktop-kb --data-dir D eval answers --dataset ../shared/eval/qa/cmrc2018_dev --limit 150 \\
        --remove-articles 100 --ids "$(cat ids-zh)" --per-item cal-zh.jsonl --json
    .venv/bin/python benchmarks/calibrate_answerability.py en=cal-en.jsonl zh=cal-zh.jsonl [--json]

From each item's recorded signals (judge score, binding, core odds, missing terms, top-1
cosine) every setting of the grid is replayed without the LLM: an item refused before the judge
stays refused, a judged one is answered when its score reaches the threshold with the margins
(or the core rescue of verify/judge.py holds). Printed per language: the share of unanswerable
questions refused and of answerable ones refused, now and on the grid's best trade-offs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_kb.settings import QuerySettings  # noqa: E402
from desktop_kb.verify.judge import RESCUE_BAND, RESCUE_ODDS  # noqa: E402

# the thresholds the margins add to (query.judge_threshold(_cjk), calibrated on the claims by calibrate_judge.py)
BASE = {"en": QuerySettings().judge_threshold, "zh": QuerySettings().judge_threshold_cjk}


SHIFTS = tuple(round(-3.0 + 0.25 * i, 2) for i in range(25))


def held_out_ids(dataset: Path, report: int = 50, pool: int = 150) -> list[str]:
    from desktop_kb.eval.datasets import load_qa, sample_ids

    ids = [it.id for it in load_qa(dataset).items]
    reported = set(sample_ids(ids, report))
    return [i for i in sample_ids(ids, pool) if i not in reported]


def answered(item: dict[str, Any], lang: str, missing: float, per_dense: float, reference: float,
             shift: float = 0.0) -> bool:
    a = item.get("answerability")
    if not a or a.get("judge_score") is None:  # refused before the judge, or not judged
        return item["status"] == "answered"
    if a.get("bound") is False:
        return False
    need = BASE[lang] + shift + missing * bool(a.get("missing_terms"))
    if a.get("best_dense") is not None:
        need += per_dense * max(0.0, reference - a["best_dense"])
    score, odds = a["judge_score"], a.get("core_odds")
    return score >= need or (odds is not None and odds >= RESCUE_ODDS and score >= need - RESCUE_BAND)


def rates(items: list[dict[str, Any]], lang: str, *params: float) -> dict[str, float]:
    una = [i for i in items if not i["answerable"]]
    ans = [i for i in items if i["answerable"]]
    return {"refused_unanswerable": round(sum(not answered(i, lang, *params) for i in una) / max(1, len(una)), 4),
            "false_refusals": round(sum(not answered(i, lang, *params) for i in ans) / max(1, len(ans)), 4)}


def frontier(items: list[dict[str, Any]], lang: str, shifts: tuple[float, ...] = (0.0,)) -> list[dict[str, Any]]:
    """The grid's settings that refuse more unanswerable questions than any setting with as few
    false refusals (the simplest setting first among equals); with ``shifts``, the threshold
    itself moved by each of them too."""
    grid = []
    for shift, missing, per_dense, reference in itertools.product(
            shifts, (0.0, 0.75, 1.5), (0.0, 10.0, 20.0, 30.0, 40.0), (0.84, 0.85, 0.86, 0.87, 0.88)):
        if per_dense == 0 and reference != 0.84:
            continue
        r = rates(items, lang, missing, per_dense, reference, shift)
        grid.append((r["false_refusals"], -r["refused_unanswerable"], abs(shift) + missing + per_dense / 40,
                     {"threshold": round(BASE[lang] + shift, 2), "missing_term": missing, "per_dense": per_dense,
                      "dense_reference": reference} | r))
    out, best = [], -1.0
    for _, neg_refused, _, row in sorted(grid, key=lambda g: g[:3]):
        if -neg_refused > best + 1e-9:
            best = -neg_refused
            out.append(row)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", metavar="LANG=FILE", help="per-item files of `eval answers --per-item`")
    ap.add_argument("--ids", metavar="DATASET", help="print the held-out ids of a QA set (comma-separated)")
    ap.add_argument("--move-threshold", action="store_true",
                    help="let the frontier move the threshold too (-3 to +3), not only the margins")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.ids:
        print(",".join(held_out_ids(Path(args.ids))))
        return 0
    q = QuerySettings()
    report: dict[str, Any] = {}
    for run in args.runs:
        lang, _, path = run.partition("=")
        if lang not in BASE or not path:
            ap.error(f"expected en=FILE or zh=FILE, not {run!r}")
        items = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
        missing = q.judge_margin_missing_term_cjk if lang == "zh" else q.judge_margin_missing_term
        report[lang] = {"items": len(items), "answerable": sum(i["answerable"] for i in items),
                        "without_margins": rates(items, lang, 0.0, 0.0, 0.0),
                        "settings": rates(items, lang, missing, q.judge_margin_per_dense, q.judge_dense_reference),
                        "frontier": frontier(items, lang, SHIFTS if args.move_threshold else (0.0,))}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for lang, r in report.items():
        print(f"{lang}: {r['items']} items ({r['answerable']} answerable)")
        print(f"  no margins:          {r['without_margins']}")
        print(f"  the settings' values: {r['settings']}")
        for row in r["frontier"]:
            print(f"  frontier: {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
