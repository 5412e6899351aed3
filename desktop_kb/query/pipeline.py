"""The answer pipeline (RRR), wired in plain Python:
rewrite → retrieve (hybrid, adaptive RRF) → rerank → fallback → evidence windows → generate →
the answer check (:mod:`.answer_check`: validation, repairs, the judge)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..progress import CancelToken
from ..protocols import Embedder, SearchFilter, SpanJudge, TokenCounter, YesNoScorer
from ..types import (
    FIRST_TOKEN,
    STAGE_CHECKING,
    STAGE_PART,
    STAGE_PARTS,
    STAGE_READING,
    STAGE_SEARCHING,
    Answer,
    FallbackDecision,
    Hit,
)
from .answer_check import REFUSAL, Checked, CheckOptions, check_answer
from .answer_check import timed as _timed
from .citations import Validation, validate
from .evidence import evidence_windows
from .fallback import decide, is_too_vague, weak_signal
from .generate import generate, order_passages
from .prompts import correction_message
from .rerank import rerank
from .retrieve import retrieve
from .rewrite import rewrite
from .scope import library_passages, resolve_scope, scope_cue
from .sections import map_reduce, scope_passages, split_parts
from .term_stats import manifest_term_stats

if TYPE_CHECKING:
    from ..kb import Library
    from .retrieve import KBView

__all__ = ["REFUSAL", "answer"]


def corpus_cjk(views: Sequence[KBView]) -> float | None:
    """The share of CJK letters in the knowledge bases searched (``None``: nothing indexed)."""
    cjk = letters = 0
    for v in views:
        _, _, c, n = v.manifest.corpus_stats()
        cjk, letters = cjk + c, letters + n
    return cjk / letters if letters else None


def similarity(embedder: Embedder) -> Callable[[str, str], float]:
    """Cosine between a claim and a passage by the embedder (claim and passage vectors cached per
    answer: one claim is compared with a passage and each of its sentences)."""
    claims: dict[str, Any] = {}
    passages: dict[str, Any] = {}

    def sim(claim: str, passage: str) -> float:
        if claim not in claims:
            claims[claim] = embedder.embed_query(claim)
        if passage not in passages:
            passages[passage] = embedder.embed_passages([passage])[0]
        return float(claims[claim] @ passages[passage])

    return sim


def answer(
    lib: Library,
    question: str,
    *,
    kbs: Sequence[str] | None = None,
    flt: SearchFilter | None = None,
    history: Sequence[tuple[str, str]] = (),
    reading_order: bool = False,
    on_token: Callable[[str], None] | None = None,
    on_restart: Callable[[], None] | None = None,
    cancel: CancelToken | None = None,
    on_stage: Callable[[str, int], None] | None = None,
) -> Answer:
    """``on_stage(stage, n)`` tells what the answer is doing: searching, reading n passages (the
    LLM's prefill, until the first token streams), checking the citations."""
    started = time.perf_counter()

    def stage(name: str, n: int = 0) -> None:
        if on_stage is not None:
            on_stage(name, n)

    question = " ".join(question.split())
    q = lib.settings.query
    timings: dict[str, float] = {}
    history = list(history)[-q.history_turns:] if q.history_turns > 0 else []
    views = lib.views(kbs, flt)
    generator = lib.generator  # fails early with a clear message when the LLM is missing
    small = lib.small_generator

    stage(STAGE_SEARCHING)
    with _timed(timings, "rewrite"):
        queries = rewrite(question, history, small, max_queries=q.max_queries, cancel=cancel, mode=q.rewrite,
                          corpus_cjk=corpus_cjk(views))

    def search(recall: int) -> tuple[tuple[Hit, ...], float | None]:
        with _timed(timings, "retrieve"):
            res = retrieve(queries, views, lib.embedder, flt=flt, recall=recall, rrf_k=q.rrf_k,
                           adaptive=q.adaptive_fusion, fusion=q.fusion)
        return res.hits, res.best_dense

    hits, best_dense = search(q.recall)
    scope = None
    cue = scope_cue(question)
    if cue is not None:
        with _timed(timings, "scope"):
            scope = resolve_scope(question, cue, hits, lib.document_toc,
                                  lambda h: str(h.payload.get("title") or ""))
    with _timed(timings, "rerank"):
        ranked = rerank(question, hits, lib.reranker, q.top_k)
    signal = weak_signal(ranked.hits, ranked.scored, best_dense, q.rerank_threshold, q.dense_threshold)
    fallback: FallbackDecision | None = None
    vague = is_too_vague(question, history)
    if scope is None and (vague or signal.weak):
        with _timed(timings, "fallback"):
            fallback = decide(question, ranked.hits, small, allow_retry=not vague, cancel=cancel)
        if fallback.decision == "retry_wider":
            hits, best_dense = search(q.recall * 2)
            with _timed(timings, "rerank"):
                ranked = rerank(question, hits, lib.reranker, q.top_k)
            signal = weak_signal(ranked.hits, ranked.scored, best_dense, q.rerank_threshold, q.dense_threshold)
            # The dense top-1 cannot rise with a wider recall, so only fresh rerank scores are
            # judged again; otherwise the model answers from the wider passages (and the
            # citation checks still apply).
            if signal.weak and signal.kind == "rerank":
                with _timed(timings, "fallback"):
                    fallback = decide(question, ranked.hits, small, allow_retry=False, cancel=cancel)
        if fallback.decision in ("reject", "clarify"):
            return Answer(
                question=question, text=fallback.message,
                status="clarify" if fallback.decision == "clarify" else "refused",
                passages=ranked.hits, queries=tuple(queries), fallback=fallback, timings_ms=timings,
                rerank_degraded=ranked.degraded,
            )

    whole = scope is not None and scope.kind != "library"  # a section or document, in reading order
    if whole:
        passages = scope_passages(scope, lib.document_chunks(scope.kb, scope.doc_id))
    elif scope is not None:
        passages = library_passages(hits)
    else:
        passages = order_passages(ranked.hits, reading_order)
    stats = manifest_term_stats([v.manifest for v in views])
    sim = similarity(lib.embedder)

    def check_text(candidate: str) -> Validation:
        return validate(candidate, passages, question, stats=stats, similarity=sim)

    windows = None
    if not whole:
        with _timed(timings, "evidence"):
            windows = [w.text for w in evidence_windows(queries, passages, total_tokens=q.evidence_tokens,
                                                        passage_tokens=q.passage_tokens, stats=stats,
                                                        similarity=sim, lead=q.lead_passages,
                                                        trail_tokens=q.trail_passage_tokens)]
    parts = split_parts(passages, q.section_tokens) if whole else []

    stage(STAGE_READING, len(passages))

    def first(piece: str) -> None:
        if FIRST_TOKEN not in timings:
            timings[FIRST_TOKEN] = round((time.perf_counter() - started) * 1000, 1)
        if on_token is not None:
            on_token(piece)

    with _timed(timings, "generate"):
        if len(parts) > 1:
            text, messages = map_reduce(question, passages, history, generator, parts,
                                        max_tokens=q.max_answer_tokens, on_token=first, cancel=cancel,
                                        on_part=lambda k, n: stage(STAGE_PART, k) if k > 1 else stage(STAGE_PARTS, n))
        else:
            text, messages = generate(question, passages, history, generator, max_tokens=q.max_answer_tokens,
                                      on_token=first, cancel=cancel, texts=windows)
    prompt_tokens = generator.count_tokens(messages) if isinstance(generator, TokenCounter) else None
    stage(STAGE_CHECKING)

    def regenerate(previous: str, check: Validation) -> str:
        """The model asked again, with the problems named."""
        if on_restart is not None:
            on_restart()
        retry_messages = [*messages, {"role": "assistant", "content": previous},
                          correction_message(check.errors, len(passages))]
        with _timed(timings, "generate"):
            # a little temperature, so a retry does not repeat the same text word for word
            new, _ = generate(question, passages, history, generator, max_tokens=q.max_answer_tokens,
                              on_token=on_token if on_restart is not None else None, cancel=cancel,
                              messages=retry_messages, temperature=0.3)
        return new

    checked = check_answer(question, text, passages, check_text, options=CheckOptions.of(q),
                           scorer=generator if isinstance(generator, (SpanJudge, YesNoScorer)) else None,
                           regenerate=regenerate, judged=scope is None, stats=stats, weak_retrieval=signal.weak,
                           best_dense=best_dense, cancel=cancel, timings=timings)

    def as_answer(c: Checked) -> Answer:
        return Answer(
            question=question, text=c.text, status=c.status, citations=c.citations, passages=tuple(passages),
            queries=tuple(queries), fallback=fallback,
            timings_ms=timings, rerank_degraded=ranked.degraded, problems=c.problems, removed=c.removed,
            prompt_tokens=prompt_tokens, scope=scope.describe() if scope else "", judge_score=c.judge_score,
            withheld=as_answer(c.withheld) if c.withheld is not None else None, answerability=c.answerability,
        )

    return as_answer(checked)
