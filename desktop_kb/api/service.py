"""What the local API does, apart from HTTP: which knowledge bases a model name means, the answer
queue (one answer at a time, a bounded number waiting), and answers and hits as JSON with their
citations (passage, file, pages, headings, offsets, the quote, the supporting sentences, verdicts).

Used by the HTTP app (:mod:`.app`) and the MCP server (:mod:`.mcp_server`) alike.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from ..errors import DesktopKBError, KnowledgeBaseNotFound
from ..library.sources import CitedSource, cited_sources
from ..progress import CancelToken
from ..protocols import SearchFilter
from ..query.pipeline import check_question
from ..types import Answer, Hit

__all__ = ["ALL_MODEL", "AnswerQueue", "Busy", "Place", "Service", "answer_record", "hit_record"]

ALL_MODEL = "desktop-kb"  # every knowledge base
KB_PREFIX = "kb:"


class Busy(DesktopKBError):
    """The answer queue is full: the client should retry later."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("The model is busy with other questions.", f"Retry in {retry_after} s.")
        self.retry_after = retry_after


class Place:
    """A question's place in the answer queue, held from when it is accepted until its answer is
    done or given up; released once."""

    def __init__(self, queue: AnswerQueue) -> None:
        self._queue: AnswerQueue | None = queue

    def release(self) -> None:
        queue, self._queue = self._queue, None
        if queue is not None:
            queue._leave()


class AnswerQueue:
    """One answer at a time (the model is one), at most ``max_waiting`` more queued behind it. A
    question counts from when it is accepted (:meth:`reserve`), not from when a thread picks it up,
    and a waiting question whose client has gone leaves the queue within ``POLL_S``."""

    POLL_S = 0.2

    def __init__(self, max_waiting: int = 4, seconds_per_answer: int = 30) -> None:
        self.max_waiting = max(0, int(max_waiting))
        self.seconds_per_answer = seconds_per_answer
        self._count = threading.Lock()
        self._model = threading.Lock()
        self.queued = 0  # accepted: waiting or running

    def reserve(self) -> Place:
        """A place in the queue; Busy at once when it is full (one running, max_waiting behind it)."""
        with self._count:
            if self.queued >= self.max_waiting + 1:
                raise Busy(self.seconds_per_answer * self.queued)
            self.queued += 1
        return Place(self)

    def _leave(self) -> None:
        with self._count:
            self.queued -= 1

    @contextmanager
    def slot(self, place: Place | None = None, cancel: CancelToken | None = None) -> Iterator[None]:
        """Hold the model (blocking) for a question in ``place`` (reserved here when None), which
        is released after; Cancelled as soon as ``cancel`` is set while it waits."""
        place = place or self.reserve()
        try:
            while not self._model.acquire(timeout=self.POLL_S):
                if cancel is not None:
                    cancel.raise_if_cancelled()
            try:
                if cancel is not None:
                    cancel.raise_if_cancelled()
                yield
            finally:
                self._model.release()
        finally:
            place.release()


def _citation_record(src: CitedSource) -> dict[str, Any]:
    c = src.citation
    return {
        "n": c.n, "kb": c.kb, "doc_id": c.doc_id, "file": c.path, "pages": list(c.pages),
        "heading_path": list(c.heading_path), "passage": {"start": c.start, "end": c.end},
        "quote": c.quote, "quote_offsets": None if c.quote_start is None else {"start": c.quote_start, "end": c.quote_end},
        "sentences": [{"start": s, "end": e, "text": t} for s, e, t in src.evidence],
        "verdict": src.verdict,
    }


def answer_record(a: Answer) -> dict[str, Any]:
    """The answer's citations and verdicts, as the API returns them beside the text."""
    return {
        "status": a.status,  # answered | refused | clarify
        "refusal": None if a.status == "answered" else {"reason": a.text, "kind": a.refusal or None,
                                                        "problems": list(a.problems)},
        "citations": [_citation_record(src) for src in cited_sources(a)],
        "verdicts": [{"sentence": v.sentence, "citations": list(v.citations), "score": v.score, "verdict": v.verdict}
                     for v in a.verdicts],
        "removed": [{"sentence": s, "why": w} for s, w in a.removed],
        "passages_found": [hit_record(h, n) for n, h in enumerate(a.passages, 1)] if a.status != "answered" else [],
        "timings_ms": a.timings_ms,
    }


def hit_record(h: Hit, n: int | None = None) -> dict[str, Any]:
    c = h.chunk
    rec = {"kb": h.kb, "doc_id": c.doc_id, "file": c.path, "pages": list(c.pages), "heading_path": list(c.heading_path),
           "start": c.start, "end": c.end, "score": h.rerank_score if h.rerank_score is not None else h.score,
           "text": c.text}
    return rec if n is None else {"n": n, **rec}


class Service:
    """The API's view of a Library: model names, answers through the queue, search."""

    def __init__(self, lib: Any, queue: AnswerQueue | None = None) -> None:
        self.lib = lib
        self.queue = queue or AnswerQueue()
        self._search = threading.Lock()
        # the answers' own threads, one per place in the queue: questions waiting for the model
        # never hold the threads a search runs on, and none waits uncounted for a thread
        self.executor = ThreadPoolExecutor(max_workers=self.queue.max_waiting + 1, thread_name_prefix="desktop-kb-answer")

    def requires_owner(self, name: str) -> bool:
        """Whether the knowledge base ``name`` is searched only for an owner (KnowledgeBaseNotFound
        for an unknown one)."""
        if name not in self.lib.list_kbs():
            raise KnowledgeBaseNotFound(f"No knowledge base {name!r}.")
        return bool(self.lib.manifest(name).get_meta("require_owner"))

    def models(self) -> list[str]:
        return [ALL_MODEL, *(KB_PREFIX + name for name in self.lib.list_kbs())]

    def kbs(self, model: str) -> list[str] | None:
        """The knowledge bases a model name asks (None: all); KnowledgeBaseNotFound for another."""
        if model in (ALL_MODEL, KB_PREFIX + "*", ""):
            return None
        name = model.removeprefix(KB_PREFIX)
        if not model.startswith(KB_PREFIX) or name not in self.lib.list_kbs():
            raise KnowledgeBaseNotFound(f"No model {model!r}: use {ALL_MODEL!r} or kb:NAME (GET /v1/models).")
        return [name]

    def ask(self, question: str, model: str, flt: SearchFilter, history: Sequence[tuple[str, str]] = (), *,
            reading_order: bool = False, cancel: CancelToken | None = None,
            on_stage: Callable[[str, int], None] | None = None, place: Place | None = None) -> Answer:
        """The answer through the queue: in ``place`` when the caller reserved one (released here)."""
        try:
            kbs = self.kbs(model)
        except BaseException:
            if place is not None:
                place.release()
            raise
        asked = time.perf_counter()
        with self.queue.slot(place, cancel):
            waited = round((time.perf_counter() - asked) * 1000, 1)
            answer = self.lib.ask(question, kbs=kbs, flt=None if flt.is_empty() else flt, history=history,
                                  reading_order=reading_order, cancel=cancel, on_stage=on_stage)
        answer.timings_ms["queue"] = waited  # time waiting for the model behind other questions
        return answer

    def check(self, question: str, model: str, flt: SearchFilter) -> None:
        """What would stop a question before the model is asked (a question too long, an owner the
        base requires, an unknown base), raised before it queues: a 4xx, also for a streamed reply."""
        check_question(question)
        kbs = self.kbs(model)
        with self._search:
            self.lib.views(kbs, None if flt.is_empty() else flt)

    def search(self, query: str, model: str, flt: SearchFilter, top_k: int, mode: str) -> list[Hit]:
        kbs = self.kbs(model)
        with self._search:
            return self.lib.search(query, kbs=kbs, flt=None if flt.is_empty() else flt, top_k=top_k, mode=mode)
