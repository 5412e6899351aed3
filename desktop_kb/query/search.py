"""The answer's search stage: rewrite → retrieve → (scope) → rerank → fallback.

Takes what it reads (the knowledge bases' retrieval views, a table-of-contents reader, the
embedder, reranker and small model) and returns :class:`Found`: the ranked passages, the signals
the answer check weighs later, and, when the fallback refuses or asks to clarify, that decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..ingest.toc import TocNode
from ..progress import CancelToken, timed
from ..protocols import Embedder, Generator, Reranker, SearchFilter
from ..settings import QuerySettings
from ..text.tokenize import is_chinese
from ..types import STAGE_REWRITING, STAGE_SEARCHING, FallbackDecision, Hit
from .fallback import Signal, decide, is_too_vague, nothing_to_read, weak_signal
from .rerank import RerankResult, rerank
from .retrieve import KBView, retrieve
from .rewrite import rewrite
from .scope import Scope, resolve_scope, scope_cue
from .translate import named, translate

__all__ = ["Found", "SearchModels", "corpus_cjk", "search"]

TocReader = Callable[[str, str], Sequence[TocNode]]  # (kb, doc_id) -> the document's table of contents


@dataclass(frozen=True)
class SearchModels:
    embedder: Embedder
    reranker: Reranker | None
    small: Generator  # rewrites and fallback decisions


@dataclass(frozen=True)
class Found:
    """What the search found and what it signals."""

    queries: tuple[str, ...]
    hits: tuple[Hit, ...]  # fused, before reranking (a library question lists their documents)
    ranked: RerankResult
    best_dense: float | None
    signal: Signal
    scope: Scope | None = None
    fallback: FallbackDecision | None = None
    asked: str = ""  # the question as answered: a follow-up's standalone rewrite ("": as asked)

    @property
    def stopped(self) -> bool:
        """The fallback refused the question or asked to clarify it: nothing is generated."""
        return self.fallback is not None and self.fallback.decision in ("reject", "clarify")


def corpus_cjk(views: Sequence[KBView], stats: Sequence[tuple[int, int, int, int]] | None = None) -> float | None:
    """The share of CJK letters in the knowledge bases searched (``None``: nothing indexed);
    ``stats``: their ``corpus_stats()`` when already read."""
    cjk = letters = 0
    for _, _, c, n in stats if stats is not None else [v.manifest.corpus_stats() for v in views]:
        cjk, letters = cjk + c, letters + n
    return cjk / letters if letters else None


def search(
    question: str,
    history: Sequence[tuple[str, str]],
    views: Sequence[KBView],
    models: SearchModels,
    q: QuerySettings,
    *,
    flt: SearchFilter | None,
    toc_of: TocReader,
    timings: dict[str, float],
    cancel: CancelToken | None = None,
    asked: Sequence[str] = (),
    on_stage: Callable[[str], None] | None = None,
) -> Found:
    """``asked``: the knowledge bases the question was put to (named when they hold nothing);
    ``on_stage`` hears STAGE_REWRITING before a follow-up is rewritten, STAGE_SEARCHING after."""
    stats = [v.manifest.corpus_stats() for v in views]  # (documents, chunks, cjk, letters), read once
    if not any(chunks for _, chunks, _, _ in stats):
        return _nothing(question, asked, indexed=False, flt=flt)
    if flt is not None and not flt.is_empty() and not any(v.store.count(v.name, flt) for v in views):
        return _nothing(question, asked or [v.name for v in views], indexed=True, flt=flt)  # before any rewrite
    if on_stage is not None:
        on_stage(STAGE_REWRITING if history else STAGE_SEARCHING)
    with timed(timings, "rewrite"):
        queries = tuple(rewrite(question, history, models.small, max_queries=q.max_queries,
                                cancel=cancel, mode=q.rewrite, corpus_cjk=corpus_cjk(views, stats)))
    if history and on_stage is not None:
        on_stage(STAGE_SEARCHING)
    standalone = queries[0] if history and queries[0] != question else ""

    def ranked_at(recall: int) -> tuple[tuple[Hit, ...], float | None, RerankResult, Signal]:
        with timed(timings, "retrieve"):
            res = retrieve(queries, views, models.embedder, flt=flt, recall=recall, rrf_k=q.rrf_k,
                           adaptive=q.adaptive_fusion, fusion=q.fusion)
        with timed(timings, "rerank"):
            ranked = rerank(question, res.hits, models.reranker, q.top_k, weight=q.rerank_weight,
                            candidates=q.rerank_candidates)
        signal = weak_signal(ranked.hits, ranked.scored, res.best_dense, q.rerank_threshold,
                             q.dense_threshold)
        return res.hits, res.best_dense, ranked, signal

    hits, best_dense, ranked, signal = ranked_at(q.recall)
    renamed = _renamed(question, queries, ranked.hits, models.small, cancel, timings) if not history else None
    if renamed is not None:  # searched again with the names as the passages write them
        queries = (question, renamed)
        hits, best_dense, ranked, signal = ranked_at(q.recall)
    if not hits:  # nothing to read: no model is asked, nothing is generated from nothing
        return _nothing(question, asked or [v.name for v in views], indexed=True, flt=flt, queries=queries)
    scope = _scope(question, hits, toc_of, timings)
    found = Found(queries, hits, ranked, best_dense, signal, scope, asked=standalone)
    vague = is_too_vague(question, history) and not standalone
    if scope is not None or not (vague or signal.weak):
        return found
    with timed(timings, "fallback"):
        fallback = decide(standalone or question, ranked.hits, models.small, allow_retry=not vague, cancel=cancel)
    if fallback.decision == "retry_wider":
        hits, best_dense, ranked, signal = ranked_at(q.recall * 2)
        # The dense top-1 cannot rise with a wider recall, so only fresh rerank scores are judged
        # again; otherwise the model answers from the wider passages (and the checks still apply).
        if signal.weak and signal.kind == "rerank":
            with timed(timings, "fallback"):
                fallback = decide(standalone or question, ranked.hits, models.small, allow_retry=False,
                                  cancel=cancel)
    return Found(queries, hits, ranked, best_dense, signal, None, fallback, asked=standalone)


def _renamed(question: str, queries: Sequence[str], hits: Sequence[Hit], generator: Generator,
             cancel: CancelToken | None, timings: dict[str, float]) -> str | None:
    """The English question translated again when its translation misses a name that it spells in
    pinyin and the passages found write in Chinese (:func:`.translate.named`); else None."""
    if len(queries) != 2 or is_chinese(question) or not is_chinese(queries[1]):
        return None
    asked, names = named(question, hits)
    if not names or all(name in queries[1] for name in names):
        return None
    with timed(timings, "rewrite"):
        again = translate(asked, "zh", generator, cancel=cancel)
    return again if again is not None and all(name in again for name in names) else None


def _nothing(question: str, kbs: Sequence[str], *, indexed: bool, flt: SearchFilter | None,
             queries: tuple[str, ...] = ()) -> Found:
    return Found(queries or (question,), (), RerankResult((), scored=False, degraded=False), None,
                 Signal("none", None, 0.0), None, nothing_to_read(question, kbs, indexed=indexed, flt=flt))


def _scope(question: str, hits: Sequence[Hit], toc_of: TocReader, timings: dict[str, float]) -> Scope | None:
    """The section, document or library a question's wording points at (None: a pointed question)."""
    cue = scope_cue(question)
    if cue is None:
        return None
    with timed(timings, "scope"):
        return resolve_scope(question, cue, hits, toc_of, lambda h: str(h.payload.get("title") or ""))
