"""Calibrate the judge's thresholds (settings.query.judge_threshold, judge_threshold_cjk) on the
calibration half of the faithfulness set, from what `desktop-kb eval claims` recorded.

    .venv/bin/python benchmarks/faithfulness_set.py --write DIR
    desktop-kb eval claims DIR/squad2_dev-calibrate.jsonl --json > en.json
    desktop-kb eval claims DIR/cmrc2018_dev-calibrate.jsonl --json > zh.json
    .venv/bin/python benchmarks/calibrate_judge.py en=en.json:DIR/squad2_dev-calibrate.jsonl \
        zh=zh.json:DIR/cmrc2018_dev-calibrate.jsonl [--max-stopped 0.02] [--json]

Per language: the judge's score of every claim that passed the word and figure checks (records
they rejected stay rejected at any threshold), the AUC of right claims (verbatim, paraphrased,
short_right) against wrongly bound ones (in_passage_swap, short_wrong, swapped_roles) and against
the off-topic kinds (trap, off_passage), the accept rates per kind over a grid of thresholds, and
the threshold the rule picks: the highest at which at most ``--max-stopped`` of the judged right
claims fall below it. With the records file after the colon, the key terms of each question that
no cited passage holds are recomputed (the product's own function) and a margin for them
(``query.judge_margin_missing_term``) is picked the same way: the threshold and the margin
that stop the most wrong claims while stopping at most ``--max-stopped`` of the right ones.
Report the picked thresholds on the *report* half (a separate
`eval claims` run), never on this one. Exactly one JSON document on stdout with --json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

RIGHT = ("verbatim", "paraphrased", "short_right")
BOUND = ("in_passage_swap", "short_wrong", "swapped_roles")
OFF = ("trap", "off_passage")
GRID = [round(-3.0 + 0.1 * i, 1) for i in range(61)]


def auc(pos: list[float], neg: list[float]) -> float | None:
    """P(a positive scores above a negative), ties counting half (None without both)."""
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def accept_rates(results: list[dict[str, Any]], threshold: float, margin: float = 0.0) -> dict[str, float]:
    """Per kind, the share accepted had the judge used ``threshold`` (plus ``margin`` where a key
    term of the question is in no cited passage; records the word checks rejected, or that the
    judge did not score, keep their decision)."""
    out: dict[str, list[bool]] = {}
    for r in results:
        s = r.get("judge_score")
        need = threshold + margin * bool(r.get("missing_terms"))
        ok = r.get("rejected_by") != "words" and (s is None or (s >= need and r.get("judge_bound", True)))
        out.setdefault(r["kind"], []).append(ok)
    return {k: round(sum(v) / len(v), 4) for k, v in sorted(out.items())}


def pick(right: list[tuple[float, bool]], max_stopped: float, margin: float = 0.0) -> float:
    """The highest grid threshold that stops at most ``max_stopped`` of the right claims
    (score, a key term missing)."""
    best = GRID[0]
    for t in GRID:
        if sum(s < t + margin * m for s, m in right) <= max_stopped * len(right):
            best = t
    return best


def _stopped_wrong(results: list[dict[str, Any]], threshold: float, margin: float) -> int:
    return sum(1 for r in results if r["kind"] in (*BOUND, *OFF) and r.get("judge_score") is not None
               and r.get("judge_bound", True) and r["judge_score"] < threshold + margin * bool(r.get("missing_terms")))


def with_missing_terms(results: list[dict[str, Any]], records_path: Path) -> list[dict[str, Any]]:
    """Each judged result with the key terms of its question that no cited passage holds (as
    `eval claims` records them since the margins exist; recomputed for runs from before)."""
    if all("missing_terms" in r for r in results if r.get("judge_score") is not None):
        return results
    from desktop_kb.eval.claims import _hit, load_records
    from desktop_kb.text.term_stats import TermStats
    from desktop_kb.verify.citations import validate
    from desktop_kb.verify.question import missing_terms

    records = {r.id: r for r in load_records(records_path)}
    hits = {p: _hit(*p) for r in records.values() for p in r.passages}
    stats = TermStats.from_texts(f"{t} {x}" for t, x in hits)
    out = []
    for res in results:
        rec = records.get(res["id"])
        if rec is not None and res.get("judge_score") is not None:
            passages = [hits[p] for p in rec.passages]
            v = validate(res.get("text") or rec.answer, passages, rec.question, stats=stats)
            res = res | {"missing_terms": list(missing_terms(rec.question, v.citations, passages, stats))}
        out.append(res)
    return out


def calibrate(results: list[dict[str, Any]], max_stopped: float) -> dict[str, Any]:
    def scores(kinds: tuple[str, ...]) -> list[float]:
        return [r["judge_score"] for r in results if r["kind"] in kinds and r.get("judge_score") is not None]

    # the binding verdict (the passage's own answer is not in the answer) stops a claim at any
    # threshold; the threshold is picked among the claims it lets through
    right = [(r["judge_score"], bool(r.get("missing_terms"))) for r in results
             if r["kind"] in RIGHT and r.get("judge_score") is not None and r.get("judge_bound", True)]
    chosen, margin = pick(right, max_stopped), 0.0
    if any("missing_terms" in r for r in results):
        options = [(m, pick(right, max_stopped, m)) for m in (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)]
        margin, chosen = max(options, key=lambda o: (_stopped_wrong(results, o[1], o[0]), -o[0]))
    return {
        "judged": {k: len(scores((k,))) for k in (*RIGHT, *BOUND, *OFF)},
        "auc_right_vs_bound": auc([s for s, _ in right], scores(BOUND)),
        "auc_right_vs_off": auc([s for s, _ in right], scores(OFF)),
        "threshold": chosen, "margin_missing_term": margin, "at_threshold": accept_rates(results, chosen, margin),
        "grid": {str(t): accept_rates(results, t) for t in GRID if round(t * 10) % 5 == 0},
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", help="LANG=FILE: an `eval claims --json` output per language (en, zh)")
    ap.add_argument("--max-stopped", type=float, default=0.02, help="share of right claims the judge may stop")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {}
    for spec in args.runs:
        lang, _, paths = spec.partition("=")
        path, _, records = paths.partition(":")
        report = json.loads(Path(path).read_text(encoding="utf-8"))
        results = with_missing_terms(report["results"], Path(records)) if records else report["results"]
        out[lang] = calibrate(results, args.max_stopped) | {"file": report.get("file", path)}
    if args.json:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        return 0
    for lang, c in out.items():
        print(f"{lang} ({c['file']}): AUC right vs wrongly bound {c['auc_right_vs_bound']}, vs off-topic "
              f"{c['auc_right_vs_off']}; judged {c['judged']}")
        print(f"  picked threshold {c['threshold']:+.1f}, margin for a missing key term {c['margin_missing_term']}: " + ", ".join(f"{k} {v:.0%}" for k, v in c["at_threshold"].items()))
        for t, rates in c["grid"].items():
            print(f"  {float(t):+.1f}: " + ", ".join(f"{k} {v:.0%}" for k, v in rates.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
