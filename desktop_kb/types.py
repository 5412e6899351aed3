"""Typed frozen records that flow between pipeline stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "FIRST_TOKEN",
    "STAGE_ALTERNATE",
    "STAGE_CHECKING",
    "STAGE_PART",
    "STAGE_PARTS",
    "STAGE_READING",
    "STAGE_REWRITING",
    "STAGE_SEARCHING",
    "Answer",
    "Chunk",
    "Citation",
    "ConvertedDocument",
    "FallbackDecision",
    "FileFailure",
    "Hit",
    "IngestReport",
    "OcrLine",
    "OcrPage",
    "Page",
    "SentenceVerdict",
    "SourceFile",
]


@dataclass(frozen=True)
class SourceFile:
    """A file found by discovery, with its content hash."""

    path: str  # absolute, resolved
    size: int
    mtime: int  # Unix seconds
    sha256: str
    folder: str  # the folder the user added (the "virtual dir")

    @property
    def doc_id(self) -> str:
        return self.sha256[:32]


@dataclass(frozen=True)
class Page:
    """A span of the converted Markdown that belongs to one page (or slide)."""

    number: int  # 1-based
    start: int
    end: int


@dataclass(frozen=True)
class OcrLine:
    """One recognised line; the box is in fractions (0–1) of the upright page's width and height."""

    text: str
    x: float
    y: float
    w: float
    h: float
    confidence: float
    start: int = -1  # offsets in the converted Markdown, set once the text is final (-1: not found)
    end: int = -1


@dataclass(frozen=True)
class OcrPage:
    """A page read by OCR. ``rotation``: degrees (counter-clockwise) the scan was turned to read it."""

    number: int  # 1-based, as in Page
    rotation: int
    lines: tuple[OcrLine, ...]


@dataclass(frozen=True)
class ConvertedDocument:
    """Markdown for one file, with the page spans it covers (empty when the format has no pages)."""

    markdown: str
    pages: tuple[Page, ...] = ()
    title: str = ""
    warnings: tuple[str, ...] = ()
    ocr: tuple[OcrPage, ...] = ()  # the pages that were read by OCR
    outline: tuple[tuple[int, str, int], ...] = ()  # a PDF's bookmarks: (level from 1, title, page)


@dataclass(frozen=True)
class Chunk:
    """A passage of a document, the unit that is embedded, retrieved and cited."""

    chunk_id: str  # UUID string, content-derived
    doc_id: str
    path: str
    index: int  # position in the document
    text: str
    heading_path: tuple[str, ...]
    start: int  # char offsets into the converted Markdown
    end: int
    pages: tuple[int, ...] = ()


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk with its scores."""

    chunk: Chunk
    kb: str
    score: float  # the score that ordered this list (RRF, rerank…)
    dense_score: float | None = None
    sparse_score: float | None = None
    rerank_score: float | None = None
    payload: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Citation:
    """A validated `[n]` in an answer, pointing at a real passage."""

    n: int
    kb: str
    doc_id: str
    path: str
    pages: tuple[int, ...]
    heading_path: tuple[str, ...]
    start: int
    end: int
    quote: str | None = None
    quote_start: int | None = None  # offsets of the quote in the converted Markdown
    quote_end: int | None = None
    # the sentence(s) of the passage that support the citing claims (offsets in the converted
    # Markdown), found by alignment when the model quoted nothing
    evidence: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class FallbackDecision:
    decision: Literal["reject", "clarify", "retry_wider"]
    message: str


FIRST_TOKEN = "first_token"
# what an answer is doing, for a status line: (stage, count) through ``ask(on_stage=…)``
STAGE_SEARCHING, STAGE_READING, STAGE_CHECKING = "searching", "reading", "checking"
STAGE_REWRITING = "rewriting"  # a follow-up made a standalone question (before searching)
STAGE_ALTERNATE = "alternate"  # a refused draft: passage n read alone (query/alternate.py)
# a section too big for one prompt: "parts" (n = how many), then "part" (n = which, from 2)
STAGE_PARTS, STAGE_PART = "parts", "part"


@dataclass(frozen=True)
class Answerability:
    """What the pipeline knew when it decided whether the documents answer the question."""

    judge_score: float | None = None  # log P(yes) − log P(no) (verify/judge.py)
    threshold: float | None = None  # the score the answer needed: the language's, plus the margins
    weak_retrieval: bool = False  # the retrieval signal was below its threshold (query/fallback.py)
    best_dense: float | None = None  # the embedder's top-1 similarity
    missing_terms: tuple[str, ...] = ()  # key terms of the question no cited passage has
    span: str = ""  # the evidence's own answer to the question, as the judge read it
    bound: bool = True  # the answer given says what that span says
    core: str = ""  # the answer's own words (those the question does not have)
    core_odds: float | None = None  # log P(the judge replies with them) − log P(it refuses)
    core_gap: float | None = None  # log P(them) − log P(the judge's own reply)


@dataclass(frozen=True)
class SentenceVerdict:
    """The trained verifier's verdict on one cited sentence of an answer (verify/graded.py)."""

    sentence: str  # as in the answer, its [n] marks included
    citations: tuple[int, ...]  # the passages it cites
    score: float  # P(the cited evidence states it as the answer to the question)
    verdict: Literal["supported", "uncertain", "unsupported"]


@dataclass(frozen=True)
class Answer:
    question: str
    text: str
    status: Literal["answered", "refused", "clarify"]
    citations: tuple[Citation, ...] = ()
    passages: tuple[Hit, ...] = ()
    queries: tuple[str, ...] = ()
    fallback: FallbackDecision | None = None
    # ms per stage, and "first_token": ms from the question to the first streamed answer token
    # (a moment, not a stage: leave it out of sums, see FIRST_TOKEN)
    timings_ms: dict[str, float] = field(default_factory=dict, compare=False, hash=False)
    rerank_degraded: bool = False
    problems: tuple[str, ...] = ()  # citation problems left after retries (when refused)
    # sentences taken out because no cited passage supports them: (sentence, why)
    removed: tuple[tuple[str, str], ...] = ()
    prompt_tokens: int | None = None  # the first answer prompt, in the LLM's tokens (when it can count)
    scope: str = ""  # what a section / document / library question was answered from ("" = pointed)
    # log P(yes) − log P(no) that the cited sentences answer the question (verify/judge.py; None: not judged)
    judge_score: float | None = None
    # the answer the judge withheld (every claim in its passage, but not an answer to the question)
    withheld: Answer | None = None
    answerability: Answerability | None = None
    # each cited sentence's verdict when the trained verifier checked the answer (else empty)
    verdicts: tuple[SentenceVerdict, ...] = ()
    # why refused (verify/refusal.py): "nothing_found" (no relevant passage), "not_stated" (passages
    # found, none states the answer), "unsupported" (a draft its passage does not say); "" otherwise
    refusal: str = ""


@dataclass(frozen=True)
class FileFailure:
    path: str
    error: str
    hint: str = ""


@dataclass(frozen=True)
class IngestReport:
    kb: str
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    failed: tuple[FileFailure, ...] = ()
    warnings: tuple[FileFailure, ...] = ()
    chunks: int = 0  # chunks written in this run
    cancelled: bool = False
    skipped: tuple[FileFailure, ...] = ()  # files of a type that is not read, with the reason
    ocr: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (path, pages read by OCR)
    excluded: tuple[str, ...] = ()  # files the user removed from the base, passed over by this scan

    def to_json(self) -> dict[str, Any]:
        return {
            "kb": self.kb,
            "added": list(self.added),
            "updated": list(self.updated),
            "unchanged": list(self.unchanged),
            "deleted": list(self.deleted),
            "failed": [{"path": f.path, "error": f.error} for f in self.failed],
            "warnings": [{"path": f.path, "warning": f.error} for f in self.warnings],
            "chunks": self.chunks,
            "cancelled": self.cancelled,
            "skipped": [{"path": f.path, "reason": f.error} for f in self.skipped],
            "ocr": [{"path": path, "pages": list(pages)} for path, pages in self.ocr],
            "excluded": list(self.excluded),
        }
