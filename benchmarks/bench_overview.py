"""How long a whole-document overview takes, and what it holds, with the real models.

    .venv/bin/python benchmarks/bench_overview.py --json
    .venv/bin/python benchmarks/bench_overview.py --file ../shared/eval/files/markitdown/REPAIR-2022-INV-001_multipage.pdf \\
        --question "Give me an overview of the repair invoice REPAIR-2022-INV-001." --repeat 2

The file is ingested into a fresh knowledge base (a temporary data folder unless ``--data-dir``),
then the question is asked through ``Library.ask`` as the app asks it. Per run: the seconds from
question to checked answer, to the first token, the parts the document was read in, the sentences
shown (each cited or not), those withheld, whether any sentence repeats, and the status. Issue
#56's target: an overview of a 3-page PDF in at most 90 s on 2 cores. The load average is printed
with it: compare runs only when it was alike. Progress on stderr; ``--json`` prints one document.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EVAL = Path(os.environ.get("DKB_EVAL_DATA", ROOT.parent / "shared" / "eval"))
DEFAULT_FILE = EVAL / "files" / "markitdown" / "REPAIR-2022-INV-001_multipage.pdf"
DEFAULT_QUESTION = "Give me an overview of the repair invoice REPAIR-2022-INV-001."


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?。！？])\s*", text) if re.search(r"\w", s)]


def run_once(lib: Any, question: str) -> dict[str, Any]:
    from desktop_kb.query.loops import LoopGuard

    parts = [0]
    started = time.perf_counter()
    a = lib.ask(question, kbs=["bench"],
                on_stage=lambda stage, n: parts.__setitem__(0, n) if stage == "parts" else None)
    seconds = time.perf_counter() - started
    sentences = _sentences(a.text) if a.status == "answered" else []
    guard = LoopGuard()
    guard.feed(a.text + " ")
    return {"status": a.status, "seconds": round(seconds, 1),
            "first_token_s": round(a.timings_ms.get("first_token", 0.0) / 1000, 1),
            "parts": parts[0] or 1, "scope": a.scope, "sentences": len(sentences),
            "cited": sum(bool(re.search(r"\[\d+\]", s)) for s in sentences), "withheld": len(a.removed),
            "repeats": guard.looped, "answer": a.text}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE)
    ap.add_argument("--question", default=DEFAULT_QUESTION)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--data-dir", type=Path, help="data folder (default: a temporary one)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import load_settings

    with tempfile.TemporaryDirectory() as tmp:
        data = args.data_dir or Path(tmp)
        folder = Path(tmp) / "doc"
        folder.mkdir()
        (folder / args.file.name).write_bytes(args.file.read_bytes())
        with Library.open(load_settings(data)) as lib:
            lib.ingest("bench", [folder])
            runs = []
            for i in range(args.repeat):
                runs.append(run_once(lib, args.question))
                print(f"run {i + 1}/{args.repeat}: {runs[-1]['seconds']} s, {runs[-1]['status']}", file=sys.stderr)
    report = {"file": args.file.name, "question": args.question, "load_average": [round(x, 2) for x in os.getloadavg()],
              "cores": os.cpu_count(), "runs": runs}
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    else:
        for r in runs:
            print(f"{r['seconds']:6.1f} s  first token {r['first_token_s']} s  parts {r['parts']}  "
                  f"{r['cited']}/{r['sentences']} sentences cited, {r['withheld']} withheld, "
                  f"repeats: {r['repeats']}  {r['status']}")
        print(f"load average {report['load_average']} on {report['cores']} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
