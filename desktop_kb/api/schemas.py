"""The local API's request bodies, validated (pydantic): a malformed or hostile request gets a 4xx
that names the field, never a traceback.

Filters are extra fields of the body, as the CLI's ``--filter key=value`` (``tag``/``tags``,
``folder``, ``owner``, ``path``, ``doc_id`` — a string or a list of strings — and ``mtime_from``,
``mtime_to``, ``ingested_from``, ``ingested_to`` — Unix seconds or ``YYYY-MM-DD``), checked by
the same parser (:func:`desktop_kb.store.filters.parse_filters`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from ..errors import FilterError
from ..protocols import SearchFilter
from ..store.filters import parse_filters
from ..text.tokenize import lone_surrogate

__all__ = ["MAX_BODY_BYTES", "ChatMessage", "ChatRequest", "Filters", "SearchRequest"]

MAX_BODY_BYTES = 256 * 1024
MAX_TEXT = 8000
_LISTS = ("tag", "tags", "folder", "owner", "path", "doc_id")
_TIMES = ("mtime_from", "mtime_to", "ingested_from", "ingested_to")


class Filters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tag: str | list[str] | None = None
    tags: str | list[str] | None = None
    folder: str | list[str] | None = None
    owner: str | list[str] | None = None
    path: str | list[str] | None = None
    doc_id: str | list[str] | None = None
    mtime_from: str | StrictInt | None = None  # true is no time
    mtime_to: str | StrictInt | None = None
    ingested_from: str | StrictInt | None = None
    ingested_to: str | StrictInt | None = None

    def to_filter(self) -> SearchFilter:
        """The validated filter (FilterError, a 4xx naming it, for a bad value)."""
        items: list[str] = []
        for key in _LISTS:
            value = getattr(self, key)
            for v in [value] if isinstance(value, str) else value or []:
                items.append(f"{key}={v}")
        for key in _TIMES:
            value = getattr(self, key)
            if value is not None:
                items.append(f"{key}={value}")
        return parse_filters(items)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "user", "assistant", "developer", "tool"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """The message's text (a list of parts: its text parts joined)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(str(p.get("text", "")) for p in self.content or [] if p.get("type") == "text")


class _Common(BaseModel):
    """What both endpoints take: the knowledge base(s) and the filters (extra fields)."""

    model_config = ConfigDict(extra="allow")

    def filters(self) -> SearchFilter:
        """The filter of the body's extra fields; FilterError naming the field for a bad one."""
        from pydantic import ValidationError

        extra = {k: v for k, v in (self.model_extra or {}).items() if k in (*_LISTS, *_TIMES)}
        try:
            return Filters(**extra).to_filter()
        except ValidationError as exc:
            field = str((exc.errors() or [{}])[0].get("loc", ("filter",))[0])
            raise FilterError(f"{field}: a filter value must be a string (or a list of strings; times: "
                              "Unix seconds or YYYY-MM-DD).", param=field) from None


class ChatRequest(_Common):
    model: str = Field(default="desktop-kb", max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=64)
    stream: bool = False
    reading_order: bool = False

    @field_validator("messages")
    @classmethod
    def _ends_with_a_question(cls, messages: list[ChatMessage]) -> list[ChatMessage]:
        asked = [m for m in messages if m.role == "user"]
        if messages[-1].role != "user" or not messages[-1].text().strip():
            raise ValueError("the last message must be the user's question, with text")
        if any(len(m.text()) > MAX_TEXT for m in asked):
            raise ValueError(f"a user message may have at most {MAX_TEXT} characters")
        if any(lone_surrogate(m.text()) for m in messages):
            raise ValueError("a message is not valid Unicode text")
        return messages

    def question(self) -> str:
        return self.messages[-1].text().strip()

    def history(self) -> list[tuple[str, str]]:
        """The earlier turns as (question, answer) pairs."""
        out: list[tuple[str, str]] = []
        pending: str | None = None
        for m in self.messages[:-1]:
            if m.role == "user":
                pending = m.text()
            elif m.role == "assistant" and pending is not None:
                out.append((pending, m.text()[:MAX_TEXT]))
                pending = None
        return out


class SearchRequest(_Common):
    query: str = Field(min_length=1, max_length=MAX_TEXT)
    model: str = Field(default="desktop-kb", max_length=200)
    top_k: int = Field(default=5, ge=1, le=50)
    mode: Literal["hybrid", "dense", "sparse"] = "hybrid"
