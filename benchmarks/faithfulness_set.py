"""The faithfulness set's rates per kind under the word and figure checks alone (what
tests/eval/test_faithfulness.py asserts), printed; or the set written out for `eval claims`.

    .venv/bin/python benchmarks/faithfulness_set.py [--json]
    .venv/bin/python benchmarks/faithfulness_set.py --write DIR [--per-kind 40]

Built from ../shared/eval/qa/{squad2_dev,cmrc2018_dev} gold data by desktop_kb.eval.faithfulness
(no LLM, seconds per set). ``--write`` writes, per set, ``NAME-calibrate.jsonl`` and
``NAME-report.jsonl``: the items split in two halves by a hash of their id (a question's claims
all fall in one half), the items of the ``eval answers --limit 50`` sample left out of both, so
thresholds chosen on the first half are reported on the second and on that eval.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from desktop_kb.eval.datasets import load_qa, sample_ids
from desktop_kb.eval.faithfulness import build_claims, score_claims, to_records

SHARED = Path(os.environ.get("DKB_EVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "eval"))
SETS = ("squad2_dev", "cmrc2018_dev")


def half(item_id: str) -> str:
    return "calibrate" if int(hashlib.sha1(item_id.encode()).hexdigest()[:8], 16) % 2 == 0 else "report"


def write(out_dir: Path, per_kind: int, exclude_limit: int) -> dict[str, dict[str, dict[str, int]]]:
    out_dir.mkdir(parents=True, exist_ok=True)
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for name in SETS:
        ds = load_qa(SHARED / "qa" / name)
        held_out = set(sample_ids([it.id for it in ds.items], exclude_limit))
        claims = [c for c in build_claims(ds) if c.item_id not in held_out]
        files = {h: (out_dir / f"{name}-{h}.jsonl").open("w", encoding="utf-8") for h in ("calibrate", "report")}
        taken: dict[str, dict[str, int]] = {h: {} for h in files}
        for c, rec in zip(claims, to_records(claims, ds), strict=True):
            h = half(c.item_id)
            if taken[h].get(c.kind, 0) >= per_kind:
                continue
            taken[h][c.kind] = taken[h].get(c.kind, 0) + 1
            files[h].write(json.dumps(rec, ensure_ascii=False) + "\n")
        for fh in files.values():
            fh.close()
        counts[name] = taken
    return counts


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--write", metavar="DIR", help="write the set as `eval claims` JSONL files into DIR")
    ap.add_argument("--per-kind", type=int, default=40, help="with --write: at most N claims per kind and half")
    ap.add_argument("--exclude-limit", type=int, default=50, help="leave out the `eval answers --limit N` sample")
    args = ap.parse_args(argv)
    if args.write:
        counts = write(Path(args.write), args.per_kind, args.exclude_limit)
        sys.stdout.write(json.dumps(counts, indent=2) + "\n")
        return 0
    out = {}
    for name in SETS:
        ds = load_qa(SHARED / "qa" / name)
        kinds = score_claims(build_claims(ds), ds)["kinds"]
        out[name] = {k: {kk: vv for kk, vv in v.items() if kk != "examples"} for k, v in kinds.items()}
    if args.json:
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
