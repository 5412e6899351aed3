"""The answer's reading stage: which passages the model reads, and how much of each.

A pointed question reads the ranked passages (or them in reading order) through evidence windows
(:mod:`.evidence`); a section or document question reads that scope's chunks whole, in reading
order, split into parts when they exceed the section budget (:mod:`.sections`); a library
question reads one passage per document. The term statistics and the claim/passage similarity
made here are the ones the answer check uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..progress import timed
from ..protocols import Embedder
from ..settings import QuerySettings
from ..text.term_stats import TermStats, manifest_term_stats
from ..types import Chunk, Hit
from .evidence import evidence_windows
from .generate import order_passages
from .retrieve import KBView
from .scope import library_passages
from .search import Found
from .sections import scope_passages, split_parts

__all__ = ["ChunkReader", "Reading", "read", "similarity"]

ChunkReader = Callable[[str, str], Sequence[Chunk]]  # (kb, doc_id) -> every chunk, in reading order


@dataclass(frozen=True)
class Reading:
    passages: tuple[Hit, ...]  # numbered [1]..[n] in the prompt and the citations
    windows: tuple[str, ...] | None  # what the model reads of each passage (None: the whole chunks)
    parts: tuple[tuple[int, ...], ...]  # a long section's parts (map-reduce when more than one)
    stats: TermStats  # the knowledge bases' document frequencies
    similarity: Callable[[str, str], float]


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


def read(
    found: Found,
    views: Sequence[KBView],
    embedder: Embedder,
    q: QuerySettings,
    *,
    chunks_of: ChunkReader,
    reading_order: bool,
    timings: dict[str, float],
) -> Reading:
    scope = found.scope
    whole = scope is not None and scope.kind != "library"  # a section or document, in reading order
    if scope is not None and whole:
        passages = scope_passages(scope, chunks_of(scope.kb, scope.doc_id))
    elif scope is not None:
        passages = library_passages(found.hits)
    else:
        passages = order_passages(found.ranked.hits, reading_order)
    stats = manifest_term_stats([v.manifest for v in views])
    sim = similarity(embedder)
    if whole:
        parts = tuple(tuple(p) for p in split_parts(passages, q.section_tokens))
        return Reading(tuple(passages), None, parts, stats, sim)
    with timed(timings, "evidence"):
        windows = tuple(w.text for w in evidence_windows(
            found.queries, passages, total_tokens=q.evidence_tokens, passage_tokens=q.passage_tokens,
            stats=stats, similarity=sim, lead=q.lead_passages, trail_tokens=q.trail_passage_tokens))
    return Reading(tuple(passages), windows, (), stats, sim)
