"""``desktop-kb demo``: ingest the bundled sample folder and answer one English and one Chinese
question, streaming, with sources — the quickest way to see the whole pipeline work."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..settings import Settings

__all__ = ["SAMPLE_DOCS", "register"]

SAMPLE_DOCS = Path(__file__).resolve().parent / "resources" / "sample_docs"
QUESTIONS = (
    "How long do I have to upload travel receipts?",
    "出差住宿费用每晚最多可以报销多少钱？",
)


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    from ..query.prompts import passage_label
    from .ask import _print_sources
    from .common import TerminalProgress, open_library

    questions = args.question or list(QUESTIONS)
    with open_library(settings) as lib:
        print(f"Data folder: {settings.data_dir}")
        report = lib.ingest("demo", [SAMPLE_DOCS], progress=TerminalProgress())
        print(f"Knowledge base 'demo': {len(report.added)} added, {len(report.unchanged)} unchanged, "
              f"{lib.stats('demo').chunks} chunks.")
        for q in questions:
            print(f"\nQ: {q}\nA: ", end="", flush=True)
            a: Any = lib.ask(q, kbs=["demo"], on_token=lambda t: (sys.stdout.write(t), sys.stdout.flush()))
            if a.status != "answered":
                print(f"\n[{a.status}] {a.text}")
            else:
                print()
            _print_sources(a)
            if a.status == "answered":
                for c in a.citations:
                    print(f"      passage [{c.n}] {passage_label(a.passages[c.n - 1])}: "
                          f"{a.passages[c.n - 1].chunk.text[:100]!r}")
            print(f"  (timings ms: {', '.join(f'{k} {v:.0f}' for k, v in a.timings_ms.items())})")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="ingest the sample folder and answer sample questions")
    p.add_argument("--question", action="append", help="ask this instead of the sample questions")
    p.set_defaults(func=cmd_demo)
