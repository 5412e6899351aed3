"""The faithfulness set's rates per kind (what tests/eval/test_faithfulness.py asserts), printed.

    .venv/bin/python benchmarks/faithfulness_set.py [--json]

Built from ../shared/eval/qa/{squad2_dev,cmrc2018_dev} gold data by desktop_kb.eval.faithfulness
(no LLM, seconds per set).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from desktop_kb.eval.datasets import load_qa
from desktop_kb.eval.faithfulness import build_claims, score_claims

SHARED = Path(os.environ.get("DKB_EVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "eval"))


def main(argv: list[str]) -> int:
    out = {}
    for name in ("squad2_dev", "cmrc2018_dev"):
        ds = load_qa(SHARED / "qa" / name)
        kinds = score_claims(build_claims(ds), ds)["kinds"]
        out[name] = {k: {kk: vv for kk, vv in v.items() if kk != "examples"} for k, v in kinds.items()}
    if "--json" in argv:
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
        return 0
    for name, kinds in out.items():
        print(name)
        for kind, v in kinds.items():
            rate = v.get("accept_rate", v.get("reject_rate"))
            what = "accepted" if "accept_rate" in v else "rejected"
            print(f"  {kind:<16} {rate:.1%} {what} of {v['claims']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
