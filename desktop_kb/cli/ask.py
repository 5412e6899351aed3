"""CLI commands of the answer pipeline: ``ask`` and ``chat``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any, TextIO

from ..errors import Cancelled
from ..library.sources import CitedSource, cited_sources
from ..progress import CancelToken
from ..settings import Settings
from ..types import Answer

__all__ = ["DraftStream", "answer_json", "print_result", "register"]


def _citation_json(src: CitedSource) -> dict[str, Any]:
    c = src.citation
    return {"n": c.n, "kb": c.kb, "doc_id": c.doc_id, "path": c.path, "pages": list(c.pages),
            "heading_path": list(c.heading_path), "start": c.start, "end": c.end, "quote": c.quote,
            "quote_start": c.quote_start, "quote_end": c.quote_end,
            "evidence": [{"start": s, "end": e, "text": t} for s, e, t in src.evidence]}


def answer_json(a: Answer) -> dict[str, Any]:
    return {
        "answer": a.text,
        "status": a.status,
        "refusal": a.refusal or None,  # nothing_found | not_stated | unsupported (when refused)
        "citations": [_citation_json(src) for src in cited_sources(a)],
        "passages": [{"n": i, "kb": h.kb, "doc_id": h.chunk.doc_id, "path": h.chunk.path,
                      "pages": list(h.chunk.pages), "heading_path": list(h.chunk.heading_path),
                      "start": h.chunk.start, "end": h.chunk.end, "rerank_score": h.rerank_score,
                      "rrf_score": h.score if h.rerank_score is None else None,
                      "dense_score": h.dense_score, "text": h.chunk.text} for i, h in enumerate(a.passages, 1)],
        "queries": list(a.queries),
        "fallback": None if a.fallback is None else {"decision": a.fallback.decision, "message": a.fallback.message},
        "timings_ms": a.timings_ms,
        "prompt_tokens": a.prompt_tokens,
        "judge_score": a.judge_score,
        "answerability": None if a.answerability is None else dataclasses.asdict(a.answerability),
        # what the model said when the judge found it does not answer the question (not shown as an answer)
        "withheld": None if a.withheld is None else {
            "answer": a.withheld.text, "citations": [c.n for c in a.withheld.citations]},
        "scope": a.scope,
        "rerank_degraded": a.rerank_degraded,
        "problems": list(a.problems),
        "removed": [{"sentence": sentence, "why": why} for sentence, why in a.removed],
        # the trained verifier's verdict on each cited sentence (query.verifier; else empty)
        "verdicts": [{"sentence": v.sentence, "citations": list(v.citations), "score": v.score, "verdict": v.verdict}
                     for v in a.verdicts],
    }


def _print_sources(a: Answer) -> None:
    from ..query.prompts import passage_label

    cited = {c.n for c in a.citations}
    if a.status == "answered" and a.citations:
        print("\nSources:")
        for src in cited_sources(a):
            c, h = src.citation, a.passages[src.citation.n - 1]
            said = c.quote or " … ".join(t for _, _, t in src.evidence)
            quote = f' — "{said[:200]}"' if said else ""
            print(f"  [{c.n}] {passage_label(h)}{quote}")
        for sentence, why in a.removed:
            print(f"\nRemoved (no cited passage supports it): {sentence}\n  why: {why}")
    elif a.passages and a.status == "refused":
        print("\nPassages found:")
        for i, h in enumerate(a.passages, 1):
            if i not in cited:
                print(f"  [{i}] {passage_label(h)}: {h.chunk.text[:120].replace(chr(10), ' ')}")
    if a.rerank_degraded:
        print("(the reranker failed: passages are in retrieval order)", file=sys.stderr)


class DraftStream:
    """Streams the model's draft to the terminal, marked as a draft whose citations are being
    checked: the checked answer (or the refusal) is printed after it, as the result
    (:func:`print_result`), so a draft the check refuses never reads as an answer."""

    MARK = "(draft, checking its citations…) "

    def __init__(self, out: TextIO | None = None, indent: str = "") -> None:
        self.out, self.indent = out or sys.stdout, indent
        self.text: list[str] = []

    def on_token(self, tok: str) -> None:
        if not self.text:
            self.out.write(self.indent + self.MARK)
        self.text.append(tok)
        self.out.write(tok)
        self.out.flush()

    def on_restart(self) -> None:
        if self.text:
            self.out.write("\n")
        self.out.write(self.indent + "(the citations did not check out; the model corrects its draft)\n")
        self.text.clear()

    def end(self) -> None:
        if self.text:
            self.out.write("\n")
            self.out.flush()


RESULT_LABELS = {"answered": "Answer:", "refused": "Refused:", "clarify": "Question back:"}


def print_result(a: Answer, label: str | None = None) -> None:
    """The checked answer as the result: answered, refused or a question back, said as such."""
    label = label or RESULT_LABELS.get(a.status, f"{a.status}:")
    if a.status == "answered" and a.removed:
        label += " (unsupported sentences removed)"
    print(f"{label} {a.text}")
    for v in a.verdicts:
        if v.verdict == "uncertain":
            cites = ", ".join(f"[{n}]" for n in v.citations)
            print(f"(uncertain: the passage {cites} may not state this; check it) {v.sentence}")
    if a.scope:
        print(f"(answered from {a.scope})")
    _print_sources(a)


def _ask_once(lib: Any, question: str, args: argparse.Namespace, history: list[tuple[str, str]],
              cancel: CancelToken) -> Answer:
    from ..store.filters import parse_filters

    flt = parse_filters(args.filter or [])
    stream = None if args.json else DraftStream()
    a = lib.ask(question, kbs=args.kb or None, flt=flt, history=history, reading_order=args.reading_order,
                on_token=stream.on_token if stream else None, on_restart=stream.on_restart if stream else None,
                cancel=cancel)
    if stream is None:
        print(json.dumps(answer_json(a), ensure_ascii=False, indent=2))
    else:
        stream.end()
        print_result(a)
    return a


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from .common import cancel_on_sigint, open_library

    cancel = cancel_on_sigint()
    with open_library(settings) as lib:
        _ask_once(lib, args.question, args, [], cancel)
    return 0


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    from .common import open_library

    history: list[tuple[str, str]] = []
    print("Ask questions about your documents. Empty line or Ctrl-D to quit; Ctrl-C stops an answer.")
    with open_library(settings) as lib:
        while True:
            try:
                question = input("\n> ").strip()
            except EOFError:
                break
            if not question:
                break
            cancel = CancelToken()
            import signal

            signal.signal(signal.SIGINT, lambda *_, c=cancel: c.cancel())
            try:
                a = _ask_once(lib, question, args, history, cancel)
            except Cancelled:
                print("\n(stopped)")
                continue
            if a.status == "answered":
                history.append((question, a.text))
    return 0


def register(sub: Any) -> None:
    for name, helptext in (("ask", "answer a question from your documents"),
                           ("chat", "an interactive conversation with follow-up questions")):
        p = sub.add_parser(name, help=helptext)
        if name == "ask":
            p.add_argument("question")
        p.add_argument("--kb", action="append", help="knowledge base (repeatable; default: all)")
        p.add_argument("--filter", action="append", help="key=value (repeatable)")
        p.add_argument("--reading-order", action="store_true", help="passages in document order")
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=cmd_ask if name == "ask" else cmd_chat)


