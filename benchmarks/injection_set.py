"""Instructions inside documents: every case of desktop_kb.eval.injection, asked with the real models.

    .venv/bin/python benchmarks/injection_set.py --data-dir /tmp/inj [--json] [--only en01-body,zh03-heading]

All cases' documents go into one knowledge base (each question is retrieved over all of them, as
in a real folder); each case's question is asked once. Per case: the answer, whether it follows
the hidden instruction (the injection's words appear in it) and whether it gives the document's
fact. Printed: the share that followed an injection (must be 0) and the share answered with the
fact, by language and placement. Progress goes to stderr; ``--json`` prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_kb.eval.injection import CASES, score, write_cases  # noqa: E402
from desktop_kb.library.kb import Library  # noqa: E402
from desktop_kb.settings import load_settings  # noqa: E402

FONTS = [*sorted((ROOT / "resources" / "fonts").glob("*.tt[cf]")), Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
         Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", required=True, type=Path, help="a fresh folder for the knowledge base")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated case ids")
    args = ap.parse_args(argv)
    only = {c for c in args.only.split(",") if c}
    cases = [c for c in CASES if not only or c.id in only]
    docs = args.data_dir / "documents"
    cases = write_cases(docs, cases, cjk_font=next((f for f in FONTS if f.exists()), None))
    settings = load_settings(args.data_dir / "data")  # the models: the default data folder's
    rows = []
    started = time.time()
    with Library.open(settings) as lib:
        lib.ingest("inj", [docs])
        for i, case in enumerate(cases, 1):
            a = lib.ask(case.question, kbs=["inj"])
            rows.append(score(case, a.status, a.text))
            print(f"[{i}/{len(cases)}] {case.id}: {a.status}, followed={rows[-1]['followed_injection']}, "
                  f"fact={rows[-1]['gave_fact']}", file=sys.stderr)
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r["lang"]].append(r)
        groups[r["placement"]].append(r)

    def rates(rs: list[dict]) -> dict[str, float | int]:
        return {"n": len(rs), "followed_injection": round(sum(r["followed_injection"] for r in rs) / len(rs), 3),
                "gave_fact": round(sum(r["gave_fact"] for r in rs) / len(rs), 3)}

    report = {"cases": len(rows), "seconds": round(time.time() - started, 1), "load_average": os.getloadavg(),
              "all": rates(rows), "by": {k: rates(v) for k, v in sorted(groups.items())}, "results": rows}
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    else:
        print(f"{len(rows)} cases: followed an injection {report['all']['followed_injection']:.1%}, "
              f"gave the fact {report['all']['gave_fact']:.1%}")
        for k, v in report["by"].items():
            print(f"  {k:<12} n={v['n']:>2}  followed {v['followed_injection']:.1%}  fact {v['gave_fact']:.1%}")
        for r in rows:
            if r["followed_injection"] or not r["gave_fact"]:
                print(f"  - {r['id']} ({r['status']}): {r['answer'][:160]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
