"""What the reader and the verifier decide together, replayed from ``training.reader evaluate``'s
JSON (no model runs here).

    .venv/bin/python -m training.reader_report eval.json [--json]

The fused score is ``logit(mass) + w · verifier logit``: ``w`` is the one of a few that separates
right from wrong held-out claims best, and the two thresholds are the fused scores that 97% / 90%
of held-out right claims of the language reach (refused below the first, supported from the
second, uncertain between) — all drawn from the held-out training split, none from the halves.
Then, for each faithfulness half and language: AUC right vs wrongly bound and vs off-topic of
each score, and every kind's share refused / supported, counting the claims the word checks had
already refused (``totals`` minus those scored) as refused.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from training.evaluate import BOUND, OFF, RIGHT, auc

WEIGHTS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
KEEP, SUPPORT = 0.97, 0.90
SHIPPED = (0.2, 0.5)  # the probabilities the app's thresholds read; fuse() maps each language's cuts onto them
MIN_RIGHT = 100  # held-out right claims a language needs for its cut points (the 3rd percentile of fewer is one claim)
# the languages the fused score decides in; English, given cut points of its own (135 held-out right claims,
# data version 5), refused 15% of the report half's bare right answers against the verify head's 2.5%
# (docs/history/meaning-check.md, session 26), so it stays on the verify head alone unless asked for
FUSED_LANGS = ("zh",)


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def scores(r: dict[str, Any], w: float) -> dict[str, float]:
    return {"reader": r["mass"], "verifier": r["verifier"], "fused": _logit(r["mass"]) + w * r["verifier"]}


def _aucs(rows: list[dict[str, Any]], w: float) -> dict[str, dict[str, float | None]]:
    right = [scores(r, w) for r in rows if r["kind"] in RIGHT]
    out = {}
    for name, kinds in (("bound", BOUND), ("off", OFF)):
        wrong = [scores(r, w) for r in rows if r["kind"] in kinds]
        out[name] = {s: auc([x[s] for x in right], [x[s] for x in wrong]) for s in ("reader", "verifier", "fused")}
    return out


def choose(held: list[dict[str, Any]]) -> tuple[float, dict[str, tuple[float, float]]]:
    """``w`` (best mean held-out AUC right vs wrong over the two languages) and per-language
    (refuse below, supported from)."""
    def mean_auc(w: float) -> float:
        vals = []
        for lang in ("en", "zh"):
            rows = [r for r in held if r["lang"] == lang]
            a = auc([scores(r, w)["fused"] for r in rows if r["kind"] in RIGHT],
                    [scores(r, w)["fused"] for r in rows if r["kind"] not in RIGHT])
            vals.append(a or 0.0)
        return sum(vals) / len(vals)

    w = max(WEIGHTS, key=mean_auc)
    cuts = {}
    for lang in ("en", "zh"):
        right = sorted(scores(r, w)["fused"] for r in held if r["lang"] == lang and r["kind"] in RIGHT)
        cuts[lang] = (right[int(len(right) * (1 - KEEP))], right[int(len(right) * (1 - SUPPORT))])
    return w, cuts


def replay(part: dict[str, Any], w: float | None, cut: tuple[float, float]) -> dict[str, Any]:
    """Every kind's shares; ``w`` None: the verifier's logit alone."""
    by: dict[str, Counter[str]] = {}
    for r in part["records"]:
        f = r["verifier"] if w is None else scores(r, w)["fused"]
        by.setdefault(r["kind"], Counter())["refused" if f < cut[0] else "supported" if f >= cut[1] else "uncertain"] += 1
    kinds, uncertain = {}, 0
    for kind, total in part["totals"].items():
        c = by.get(kind, Counter())
        uncertain += c["uncertain"]
        kinds[kind] = {"claims": total, "refused": round((total - sum(c.values()) + c["refused"]) / total, 3),
                       "supported": round(c["supported"] / total, 3)}
    return {"kinds": kinds, "uncertain_share": round(uncertain / max(1, sum(part["totals"].values())), 3),
            "auc": _aucs(part["records"], w or 0.0)}


def _verifier_cut() -> tuple[float, float]:
    """The shipped verifier's own thresholds (its manifest's held-out calibration), as logits."""
    from desktop_kb.models.cross_encoder import load_weights

    cal = load_weights()[1]["calibration"]["verify"]
    return _logit(float(cal["refuse_below"])), _logit(float(cal["support_from"]))


def report(result: dict[str, Any]) -> dict[str, Any]:
    held = result["heldout_claims"]
    w, cuts = choose(held)
    alone = _verifier_cut()
    out: dict[str, Any] = {"w": w, "thresholds": {k: {"refuse_below": round(a, 3), "support_from": round(b, 3)}
                                                   for k, (a, b) in cuts.items()},
                           "heldout_auc": {lang: _aucs([r for r in held if r["lang"] == lang], w) for lang in cuts}}
    for key, part in result.items():
        if isinstance(part, dict) and "records" in part:
            out[key] = replay(part, w, cuts[key.rsplit("_", 1)[1]])
            out[key]["verifier_alone"] = replay(part, None, alone)["kinds"]
    return out


def calibration(result: dict[str, Any], langs: tuple[str, ...] = FUSED_LANGS) -> dict[str, Any]:
    """What the reader's manifest records for the app (``training.export --reader --calibration``):
    ``w`` and the held-out cut points of each of ``langs`` with enough held-out right claims, which
    :func:`desktop_kb.backends.reader_e5.fuse` maps onto the shipped thresholds; a language without
    them is read by the verify head alone."""
    held = result["heldout_claims"]
    w, cuts = choose(held)
    right = {lang: sum(r["lang"] == lang and r["kind"] in RIGHT for r in held) for lang in cuts}
    return {"fused": {"w": w, "refuse_below": SHIPPED[0], "support_from": SHIPPED[1],
                      "by_lang": {lang: [round(a, 4), round(b, 4)] for lang, (a, b) in cuts.items()
                                  if right[lang] >= MIN_RIGHT and lang in langs},
                      "rule": f"{KEEP:.0%} of held-out right claims stand, {SUPPORT:.0%} supported, per language "
                              f"({', '.join(langs)}); a language with fewer than {MIN_RIGHT} held-out right claims, "
                              "or not among those, is read by the verifier alone at its own thresholds",
                      "heldout_right_claims": right,
                      "heldout_claims": {lang: sum(r["lang"] == lang for r in held) for lang in cuts}}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("result", type=Path, help="training.reader evaluate --json output")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--calibration", type=Path, help="also write the manifest's calibration here")
    ap.add_argument("--fused-langs", nargs="+", default=list(FUSED_LANGS),
                    help="the languages the fused score decides in (the others: the verify head alone)")
    args = ap.parse_args(argv)
    result = json.loads(args.result.read_text(encoding="utf-8"))
    if args.calibration:
        args.calibration.write_text(json.dumps(calibration(result, tuple(args.fused_langs)), indent=2) + "\n",
                                    encoding="utf-8")
    out = report(result)
    if args.json:
        sys.stdout.write(json.dumps(out) + "\n")
        return 0
    print(f"w = {out['w']}, thresholds {out['thresholds']}, held-out AUC {out['heldout_auc']}")
    for key, part in out.items():
        if isinstance(part, dict) and "kinds" in part:
            print(f"{key}: AUC {part['auc']}; uncertain {part['uncertain_share']:.1%}")
            for kind, v in part["kinds"].items():
                b = part["verifier_alone"][kind]
                print(f"    {kind:16s} {v['claims']:3d}  refused {v['refused']:6.1%}  supported {v['supported']:6.1%}"
                      f"   (verifier alone {b['refused']:6.1%} / {b['supported']:6.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
