"""Backend interfaces. Implementations live in ``desktop_kb.backends`` and ``desktop_kb.store``
and are chosen in one place, :mod:`desktop_kb.library.factory`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .progress import CancelToken

__all__ = [
    "ChatMessage",
    "Embedder",
    "Generator",
    "OcrEngine",
    "OcrRead",
    "Reranker",
    "ScoredRecord",
    "SearchFilter",
    "SpanJudge",
    "SpanReading",
    "SparseEncoder",
    "SparseVec",
    "StoredPoint",
    "TokenCounter",
    "VectorStore",
    "Verifier",
    "YesNoScorer",
]


@dataclass(frozen=True)
class SparseVec:
    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.indices)


@runtime_checkable
class Embedder(Protocol):
    """Dense text embedder. Vectors are L2-normalised float32."""

    id: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@runtime_checkable
class SparseEncoder(Protocol):
    """Lexical encoder: BM25 term-frequency weights; IDF is applied by the store."""

    id: str

    def tokenize(self, text: str) -> list[str]: ...

    def encode_document(self, text: str) -> SparseVec: ...

    def encode_query(self, text: str) -> SparseVec: ...


@runtime_checkable
class Reranker(Protocol):
    """Cross-encoder: higher score = more relevant. Scores are in [0, 1] (sigmoid) when possible.
    A reranker may carry ``blend = (weight, candidates)``, how its scores are mixed with the fused
    order (query/rerank.py ``blend_of``); one without it reorders every candidate by its score alone."""

    id: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


@runtime_checkable
class Verifier(Protocol):
    """Does a passage state a claim as the answer to a question? For each (claim, evidence) pair,
    the probability that the evidence states the claim as the answer to ``question``."""

    id: str

    def verify(self, question: str, claims: Sequence[tuple[str, str]]) -> list[float]: ...


ChatMessage = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": ...}


@runtime_checkable
class Generator(Protocol):
    """A chat LLM that streams tokens and can be cancelled between tokens."""

    id: str

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_schema: dict[str, Any] | None = None,
        on_token: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> str: ...


@runtime_checkable
class TokenCounter(Protocol):
    """A generator that can say how long a prompt is in its own tokens (``None``: it cannot)."""

    def count_tokens(self, messages: Sequence[ChatMessage]) -> int | None: ...


@runtime_checkable
class YesNoScorer(Protocol):
    """A generator that can weigh "Yes" against "No" as its reply's first word: log P(yes) −
    log P(no) after ``messages``, no text generated (``None``: this model cannot say)."""

    def yes_no(self, messages: Sequence[ChatMessage], *, cancel: CancelToken | None = None) -> float | None: ...


@dataclass(frozen=True)
class SpanReading:
    """What a :class:`SpanJudge` read in one call: ``score``, log P(a first word that is not the
    refusal) − log P(the refusal); ``span``, its greedy reply's first line; ``refusal``, log P of
    the refusal as the first word; ``span_logp``, log P of the reply's tokens; and, when a
    ``candidate`` reply was given, ``candidate_logp``, log P of the reply being those words
    (teacher-forced, at most ``candidate_tokens`` of them)."""

    score: float
    span: str
    refusal: float = 0.0
    span_logp: float = 0.0
    candidate_logp: float | None = None
    candidate_tokens: int = 0

    @property
    def candidate_odds(self) -> float | None:
        """log P(the candidate reply) − log P(the refusal) (``None``: not read)."""
        return None if self.candidate_logp is None else round(self.candidate_logp - self.refusal, 4)

    @property
    def candidate_gap(self) -> float | None:
        """log P(the candidate reply) − log P(the greedy reply): 0 when it is that reply."""
        return None if self.candidate_logp is None else round(self.candidate_logp - self.span_logp, 4)


@runtime_checkable
class SpanJudge(Protocol):
    """A generator that can, in one call, weigh a refusal against any other reply as its first
    word, say its reply's first line and how likely a given ``candidate`` reply was (when
    ``candidate_if(score, reply)`` asks for it) (:class:`SpanReading`; ``None``: this model cannot
    say)."""

    def answer_span(self, messages: Sequence[ChatMessage], *, refusal: Sequence[str] = ("none",),
                    candidate: str = "", candidate_if: Callable[[float, str], bool] | None = None,
                    max_tokens: int = 24, cancel: CancelToken | None = None) -> SpanReading | None: ...


@runtime_checkable
class Warmable(Protocol):
    """A generator that can load its model and prefill fixed system prompts ahead of the first
    question; returns the tokens it prefilled now (0 when all were cached)."""

    def warm(self, systems: Sequence[str], *, cancel: CancelToken | None = None) -> int: ...


@dataclass(frozen=True)
class OcrRead:
    """What an OCR engine read from one image: the rotation (degrees counter-clockwise) that made it
    upright, the upright size in pixels, and lines as (text, confidence, (x, y, w, h) in upright
    pixels)."""

    rotation: int
    width: int
    height: int
    lines: tuple[tuple[str, float, tuple[float, float, float, float]], ...]


@runtime_checkable
class OcrEngine(Protocol):
    """Text recognition for scanned pages and photos (RGB uint8 arrays, H×W×3)."""

    id: str

    def read(self, image: np.ndarray) -> OcrRead: ...


@dataclass(frozen=True)
class SearchFilter:
    """Validated filter on chunk payloads; every backend must apply every field or raise."""

    tags: tuple[str, ...] = ()  # any of
    folders: tuple[str, ...] = ()  # any of (the folder the user added)
    owners: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    doc_ids: tuple[str, ...] = ()
    chunk_ids: tuple[str, ...] = ()
    mtime_from: int | None = None
    mtime_to: int | None = None
    ingested_from: int | None = None
    ingested_to: int | None = None

    def is_empty(self) -> bool:
        return self == SearchFilter()


@dataclass(frozen=True)
class StoredPoint:
    id: str  # UUID string
    dense: np.ndarray
    sparse: SparseVec
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoredRecord:
    id: str
    score: float
    payload: dict[str, Any]


@runtime_checkable
class VectorStore(Protocol):
    """One collection per knowledge base: a named dense vector and a sparse ``bm25`` vector (IDF)."""

    def has_collection(self, name: str) -> bool: ...

    def create_collection(self, name: str, dim: int) -> None: ...

    def drop_collection(self, name: str) -> None: ...

    def upsert(self, name: str, points: Sequence[StoredPoint]) -> None: ...

    def ensure_room(self, name: str, size: int) -> None:
        """Raise ``DiskFull`` unless a write of ``size`` bytes into ``name`` has room (every
        write checks this itself; a long job asks before it starts)."""
        ...

    def delete(self, name: str, flt: SearchFilter, exclude_doc_ids: Sequence[str] = ()) -> None: ...

    def set_payload(self, name: str, flt: SearchFilter, values: dict[str, Any]) -> None:
        """Set payload keys on every point matching ``flt`` (vectors untouched)."""
        ...

    def count(self, name: str, flt: SearchFilter | None = None) -> int: ...

    def scroll(self, name: str, flt: SearchFilter | None = None, limit: int = 10_000) -> list[ScoredRecord]: ...

    def points(self, name: str, batch: int = 256) -> Iterator[StoredPoint]:
        """Every point with its vectors and payload (export, copying to another store)."""
        ...

    def search_dense(self, name: str, vector: np.ndarray, flt: SearchFilter | None, limit: int) -> list[ScoredRecord]: ...

    def search_sparse(self, name: str, vector: SparseVec, flt: SearchFilter | None, limit: int) -> list[ScoredRecord]: ...

    def search_both(
        self, name: str, dense: np.ndarray | None, sparse: SparseVec | None, flt: SearchFilter | None,
        limit: int,
    ) -> tuple[list[ScoredRecord], list[ScoredRecord]]:
        """Dense and sparse legs in one round trip (fusion happens in ``query.fuse``)."""
        ...

    def flush(self, name: str) -> None: ...

    def close(self) -> None: ...
