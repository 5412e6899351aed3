"""``desktop-kb demo``: ingest the bundled sample folder and answer one English and one Chinese
question, streaming, with sources — the quickest way to see the whole pipeline work.

The sample folder is package data (``desktop_kb/resources/sample_docs``), found from the package's
root wherever it is installed: a checkout, site-packages, a frozen app's bundle. A missing folder or
a failed ingest stops the demo with the reason and a non-zero exit: it never asks over nothing."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import DesktopKBError
from ..settings import Settings

__all__ = ["QUESTIONS", "SAMPLE_DOCS", "register", "sample_docs"]

QUESTIONS = (
    "How long do I have to upload travel receipts?",
    "出差住宿费用每晚最多可以报销多少钱？",
)
KB = "demo"


def sample_docs() -> Path:
    """The bundled sample folder, from the package root (not from this module's own folder)."""
    import desktop_kb

    return Path(desktop_kb.__file__).resolve().parent / "resources" / "sample_docs"


SAMPLE_DOCS = sample_docs()


class DemoError(DesktopKBError):
    default_hint = "The installation looks incomplete: reinstall desktop-kb (or run ./run setup in a checkout)."


def _ingest(lib: Any, folder: Path) -> None:
    from .common import TerminalProgress

    if not folder.is_dir() or not any(folder.iterdir()):
        raise DemoError(f"The demo's sample folder is missing or empty: {folder}")
    report = lib.ingest(KB, [folder], progress=TerminalProgress())
    if report.failed:
        why = "; ".join(f"{Path(f.path).name}: {f.error}" for f in report.failed)
        raise DemoError(f"The demo could not index its sample folder {folder}: {why}")
    stats = lib.stats(KB)
    if not stats.chunks:
        raise DemoError(f"The demo indexed nothing from its sample folder {folder}.")
    print(f"Knowledge base '{KB}': {len(report.added)} added, {len(report.updated)} updated, "
          f"{len(report.unchanged)} unchanged, {stats.chunks} chunks.")


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    from ..query.prompts import passage_label
    from .ask import DraftStream, print_result
    from .common import open_library

    questions = args.question or list(QUESTIONS)
    with open_library(settings) as lib:
        print(f"Data folder: {settings.data_dir}")
        _ingest(lib, sample_docs())
        for q in questions:
            print(f"\nQ: {q}")
            stream = DraftStream(indent="   ")
            a: Any = lib.ask(q, kbs=[KB], on_token=stream.on_token, on_restart=stream.on_restart)
            stream.end()
            print_result(a, label="A:" if a.status == "answered" else f"A: [{a.status}]")
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
