"""Two `desktop-kb eval claims --json` runs side by side, per kind, on the records both hold.

    .venv/bin/python benchmarks/compare_claims.py BEFORE.json AFTER.json [--json]

Accept rates per kind (of the records in both runs, matched by id), and the share of each kind
decided as its `expect` says; the timings of each run. One JSON document on stdout with --json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ORDER = ("verbatim", "paraphrased", "short_right", "wrong_passage", "changed_number", "swapped_answer", "negated",
         "in_passage_swap", "swapped_roles", "short_wrong", "trap", "off_passage")


def load(path: str) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def compare(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    b = {r["id"]: r for r in before["results"]}
    a = {r["id"]: r for r in after["results"]}
    common = [i for i in a if i in b]
    kinds: dict[str, dict[str, Any]] = {}
    for i in common:
        k = kinds.setdefault(a[i]["kind"], {"n": 0, "before": 0, "after": 0})
        k["n"] += 1
        k["before"] += int(b[i]["accepted"])
        k["after"] += int(a[i]["accepted"])
    for k in kinds.values():
        k["before_rate"], k["after_rate"] = round(k["before"] / k["n"], 4), round(k["after"] / k["n"], 4)
    order = [k for k in ORDER if k in kinds] + sorted(k for k in kinds if k not in ORDER)
    return {"records": len(common), "kinds": {k: kinds[k] for k in order},
            "timings_ms": {"before": before.get("timings_ms"), "after": after.get("timings_ms")}}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", help="`desktop-kb eval claims --json` output before a change")
    ap.add_argument("after", help="… and after it")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = compare(load(args.before), load(args.after))
    if args.json:
        sys.stdout.write(json.dumps(out) + "\n")
        return 0
    print(f"{out['records']} records in both runs; accepted, before → after")
    for kind, k in out["kinds"].items():
        print(f"  {kind:<16} {k['n']:>4}  {k['before_rate']:6.1%} → {k['after_rate']:6.1%}")
    for side, t in out["timings_ms"].items():
        if t:
            print(f"  {side}: ms per record p50 {t['p50']}, mean {t['mean']}; judge mean {t['judge_mean']} ({t['judged']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
