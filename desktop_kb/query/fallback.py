"""Fallback: when retrieval is weak, the LLM chooses reject / clarify / retry_wider (schema-checked).

The signal is the best rerank score when real rerank scores exist; otherwise the embedder's top-1
cosine similarity, with its own calibrated threshold. Made-up scores are never thresholded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..progress import CancelToken
from ..protocols import Generator, SearchFilter
from ..store.filters import describe_filter
from ..text.tokenize import language_of, tokenize
from ..types import FallbackDecision, Hit
from .llm_json import ask_json
from .prompts import FALLBACK_SCHEMA, fallback_messages

__all__ = ["Signal", "decide", "is_too_vague", "nothing_to_read", "weak_signal"]

DEFAULT_REJECT = {
    "en": "The documents don't seem to contain the answer to this question.",
    "zh": "文档中似乎没有这个问题的答案。",
}


@dataclass(frozen=True)
class Signal:
    kind: str  # "rerank" | "dense" | "none"
    value: float | None
    threshold: float

    @property
    def weak(self) -> bool:
        return self.value is None or self.value < self.threshold


def weak_signal(hits: Sequence[Hit], scored: bool, best_dense: float | None,
                rerank_threshold: float, dense_threshold: float) -> Signal:
    if not hits:
        return Signal("none", None, 0.0)
    if scored:
        return Signal("rerank", max(h.rerank_score or 0.0 for h in hits), rerank_threshold)
    return Signal("dense", best_dense, dense_threshold)


def is_too_vague(question: str, history: Sequence[tuple[str, str]]) -> bool:
    """A one-term question with no conversation to resolve it is ambiguous whatever the scores."""
    return not history and len(set(tokenize(question))) <= 1


def nothing_to_read(question: str, kbs: Sequence[str], *, indexed: bool,
                    flt: SearchFilter | None) -> FallbackDecision:
    """The answer when there are no passages at all: the bases asked hold no documents yet
    (``indexed`` False), or nothing in them matches (the filters named when some are in force).
    Nothing is generated from nothing, so no model is asked."""
    zh = _lang(question) == "zh"
    names = "、".join(f"“{k}”" for k in kbs) if zh else ", ".join(f"'{k}'" for k in kbs)
    if not indexed:
        if not kbs:
            msg = "还没有任何知识库：请先添加文件或文件夹。" if zh else "There is no knowledge base yet: add files or folders."
        elif zh:
            msg = f"知识库{names}还没有文档：请先添加文件或文件夹。"
        else:
            bases = "knowledge base" if len(kbs) == 1 else "knowledge bases"
            msg = f"The {bases} {names} {'has' if len(kbs) == 1 else 'have'} no documents yet: add files or folders."
        return FallbackDecision("reject", msg)
    where = names or ("知识库" if zh else "the knowledge bases")
    filters = describe_filter(flt) if flt is not None and not flt.is_empty() else ""
    if zh:
        msg = f"{where}中没有与这个问题匹配的内容" + (f"（当前筛选条件：{filters}；可去掉筛选条件再试）。" if filters else "。")
    else:
        msg = f"Nothing in {where} matches this question" + (
            f" with the filters in force ({filters}); try without them." if filters else ".")
    return FallbackDecision("reject", msg)


def _lang(question: str) -> str:

    return language_of(question)


def _from_documents(message: str, hits: Sequence[Hit]) -> bool:
    """Whether ``message`` repeats a run of document text (6 words, or 10 CJK characters)."""
    def grams(text: str) -> set[str]:
        words = re.findall(r"\w+", text.lower())
        cjk = "".join(ch for ch in text if "\u4e00" <= ch <= "\u9fff")
        return ({" ".join(words[i:i + 6]) for i in range(len(words) - 5)}
                | {cjk[i:i + 10] for i in range(len(cjk) - 9)})

    said = grams(message)
    return bool(said) and any(said & grams(h.chunk.text) for h in hits)


def decide(question: str, hits: Sequence[Hit], generator: Generator | None, *, allow_retry: bool,
           cancel: CancelToken | None = None) -> FallbackDecision:
    """Ask the LLM; anything invalid (or a retry that is not allowed) becomes reject."""
    reply = ask_json(generator, fallback_messages(question, hits), FALLBACK_SCHEMA, max_tokens=120,
                     cancel=cancel) if generator is not None else None
    if reply is None or (reply["decision"] == "retry_wider" and not allow_retry):
        return FallbackDecision("reject", DEFAULT_REJECT[_lang(question)])
    message = str(reply.get("message", "")).strip()
    if message and _from_documents(message, hits):
        # the app never speaks document text as its own message (an injected "call this number")
        return FallbackDecision("reject", DEFAULT_REJECT[_lang(question)])
    if reply["decision"] == "reject" and not message:
        message = DEFAULT_REJECT[_lang(question)]
    if reply["decision"] == "clarify" and not message:
        return FallbackDecision("reject", DEFAULT_REJECT[_lang(question)])
    return FallbackDecision(reply["decision"], message)
