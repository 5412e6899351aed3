"""`desktop-kb enrich NAME`: summaries, keywords and FAQ points by the local LLM (see enrich.py)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..settings import Settings

__all__ = ["register", "run_enrich"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("enrich", help="LLM summary, keywords and FAQ per document (resumable, Ctrl-C stops)")
    p.add_argument("kb")
    p.add_argument("--off", action="store_true", help="stop enriching this knowledge base after each ingest")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_enrich)


def _progress(done: int, total: int, eta: float | None) -> None:
    if total:
        sys.stderr.write(f"enrich: {done}/{total} documents" + (f", ETA {eta:.0f} s" if eta else "") + "\n")
        sys.stderr.flush()


def run_enrich(lib: Any, kb: str, cancel: Any) -> dict[str, Any]:
    """Enrich ``kb`` (and remember to do so after each ingest); the report as JSON."""
    lib.manifest(kb).set_meta(enrich=True)
    r = lib.enrich(kb, progress=_progress, cancel=cancel)
    per_k = round(r.seconds / (r.tokens / 1000), 2) if r.tokens else None
    return {"kb": kb, "enriched": len(r.enriched), "skipped": len(r.skipped), "failed": len(r.failed),
            "faq_points": r.faq_points, "seconds": r.seconds, "seconds_per_1k_tokens": per_k,
            "cancelled": r.cancelled}


def cmd_enrich(args: argparse.Namespace, settings: Settings) -> int:
    from .common import cancel_on_sigint, open_library

    with open_library(settings) as lib:
        if args.off:
            lib.manifest(args.kb).set_meta(enrich=False)
            out: dict[str, Any] = {"kb": args.kb, "enrich": False}
        else:
            out = run_enrich(lib, args.kb, cancel_on_sigint())
    if args.json:
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    else:
        print(", ".join(f"{k} {v}" for k, v in out.items()))
    return 130 if out.get("cancelled") else 0
