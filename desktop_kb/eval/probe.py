""""Check my knowledge base": can the product's retrieval find a passage from a question about it?

Samples ``n`` chunks of a knowledge base, has the LLM write one question each chunk answers
(schema-constrained JSON ``{"question": str}``), retrieves with the product's retrieval (hybrid with
the configured fusion, reranked when a reranker is installed: the answer pipeline's candidates) and
reports Recall@5 with the sampled chunk as the gold (and, more leniently, its document).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import DesktopKBError, GenerationError
from ..text.tokenize import is_chinese

__all__ = ["ProbeItem", "ProbeReport", "probe"]

SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 5, "maxLength": 300}},
    "required": ["question"],
    "additionalProperties": False,
}
MIN_CHARS = 80  # chunks shorter than this rarely answer a real question


@dataclass(frozen=True)
class ProbeItem:
    chunk_id: str
    doc_id: str
    path: str
    question: str
    rank: int | None  # 1-based rank of the gold chunk in the top 5, None if absent or no question
    doc_rank: int | None  # 1-based rank of the first chunk of the gold document in the top 5
    error: str = ""


@dataclass(frozen=True)
class ProbeReport:
    kb: str
    n: int  # chunks sampled
    asked: int  # questions the LLM produced
    recall_at_5: float  # gold chunk in the top 5, over asked questions
    doc_recall_at_5: float  # a chunk of the gold document in the top 5
    mrr_at_5: float
    seconds: float
    items: tuple[ProbeItem, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "items"}
        out["items"] = [dict(i.__dict__) for i in self.items]
        return out


def _messages(text: str) -> list[dict[str, str]]:
    zh = is_chinese(text)
    lang = "in Chinese" if zh else "in the passage's language"
    return [
        {"role": "system", "content": (
            "You write evaluation questions for a search engine. Given a passage, write ONE specific question "
            f"that this passage answers, {lang}. The question must make sense on its own, without the passage "
            "(name the subject instead of saying 'the passage' or 'this text'). "
            'Reply with JSON: {"question": "..."}')},
        {"role": "user", "content": f"Passage:\n{text[:2000]}"},
    ]


def _ask_question(generator: Any, text: str) -> str | None:
    try:
        raw = generator.chat(_messages(text), max_tokens=96, temperature=0.0, json_schema=SCHEMA)
        value = json.loads(raw)
    except ValueError:
        return None
    q = value.get("question") if isinstance(value, dict) else None
    return " ".join(q.split()) if isinstance(q, str) and len(q.strip()) >= 5 else None


def probe(
    lib: Any,
    kb: str,
    n: int = 20,
    seed: int = 0,
    *,
    on_item: Callable[[int, int], None] | None = None,
) -> ProbeReport:
    """Raises GenerationError (or the model's error) when no LLM is available."""
    from .retrieval import kb_views, search_mode

    started = time.perf_counter()
    views = kb_views(lib, [kb])
    try:
        generator = lib.generator  # ModelNotInstalled / ConfigError carry their own hint
    except DesktopKBError:
        raise
    except Exception as exc:  # e.g. llama_cpp missing or a broken model file
        raise GenerationError(f"The probe needs the LLM, which could not be loaded: {exc}") from exc
    records = [r for r in lib.store.scroll(kb, limit=100_000) if len(str(r.payload.get("text", ""))) >= MIN_CHARS]
    rng = random.Random(seed)
    sample = rng.sample(records, min(n, len(records)))
    reranker = lib.reranker
    items: list[ProbeItem] = []
    for i, rec in enumerate(sample, 1):
        p = rec.payload
        chunk_id, doc_id, path = str(p.get("chunk_id", rec.id)), str(p.get("doc_id", "")), str(p.get("path", ""))
        question = _ask_question(generator, str(p.get("text", "")))
        if question is None:
            items.append(ProbeItem(chunk_id, doc_id, path, "", None, None, "the LLM gave no usable question"))
        else:
            hits, _ = search_mode(lib, views, question, "default", recall=lib.settings.query.recall, reranker=reranker)
            top = hits[:5]
            rank = next((j for j, h in enumerate(top, 1) if h.chunk.chunk_id == chunk_id), None)
            doc_rank = next((j for j, h in enumerate(top, 1) if h.chunk.doc_id == doc_id and h.chunk.path == path),
                            None)
            items.append(ProbeItem(chunk_id, doc_id, path, question, rank, doc_rank))
        if on_item is not None:
            on_item(i, len(sample))
    asked = [it for it in items if not it.error]
    k = len(asked)
    return ProbeReport(
        kb=kb, n=len(sample), asked=k,
        recall_at_5=round(sum(1 for it in asked if it.rank) / k, 4) if k else 0.0,
        doc_recall_at_5=round(sum(1 for it in asked if it.doc_rank) / k, 4) if k else 0.0,
        mrr_at_5=round(sum(1 / it.rank for it in asked if it.rank) / k, 4) if k else 0.0,
        seconds=round(time.perf_counter() - started, 1), items=tuple(items),
    )
