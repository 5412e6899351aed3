"""Validated payload filters: parsing ``key=value`` strings and a backend-neutral condition list.

Every field of :class:`SearchFilter` becomes a condition; backends translate each condition or
raise. A filter is never silently dropped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import FilterError
from ..protocols import SearchFilter
from ..text.tokenize import lone_surrogate

__all__ = ["PAYLOAD_INDEXES", "Condition", "conditions", "describe_filter", "parse_filters"]

MAX_VALUE_LEN = 1024
MAX_VALUES = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FIRST_DAY = int(dt.datetime(1, 1, 1, tzinfo=dt.UTC).timestamp())
_LAST_DAY = int(dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC).timestamp())

# payload field → index type (keyword | integer)
PAYLOAD_INDEXES: dict[str, str] = {
    "kb": "keyword",
    "doc_id": "keyword",
    "path": "keyword",
    "folder": "keyword",
    "tags": "keyword",
    "owner": "keyword",
    "mtime": "integer",
    "ingested_at": "integer",
}


@dataclass(frozen=True)
class Condition:
    key: str
    any_of: tuple[str, ...] = ()
    gte: int | None = None
    lte: int | None = None
    negate: bool = False

    @property
    def is_range(self) -> bool:
        return self.gte is not None or self.lte is not None


def conditions(flt: SearchFilter | None, exclude_doc_ids: Sequence[str] = ()) -> list[Condition]:
    """The conditions a backend must apply for ``flt`` (all must hold)."""
    out: list[Condition] = []
    if flt is not None:
        for key, values in (("tags", flt.tags), ("folder", flt.folders), ("owner", flt.owners),
                            ("path", flt.paths), ("doc_id", flt.doc_ids), ("chunk_id", flt.chunk_ids)):
            if values:
                out.append(Condition(key, any_of=tuple(_as_text(v, key) for v in values)))
        if flt.mtime_from is not None or flt.mtime_to is not None:
            out.append(Condition("mtime", gte=flt.mtime_from, lte=flt.mtime_to))
        if flt.ingested_from is not None or flt.ingested_to is not None:
            out.append(Condition("ingested_at", gte=flt.ingested_from, lte=flt.ingested_to))
    if exclude_doc_ids:
        out.append(Condition("doc_id", any_of=tuple(exclude_doc_ids), negate=True))
    return out


def _as_text(value: object, key: str) -> str:
    """A value of a filter the store applies: text, not empty. What a person typed was checked
    harder by :func:`parse_filters`; the ingest's own filters carry real file names, which may
    hold a newline or be long."""
    if not isinstance(value, str) or not value:
        raise FilterError(f"{key}: a filter value must be text, not {type(value).__name__} {str(value)[:20]!r}.",
                          param=key)
    return value


def _check_value(value: object, key: str = "filter") -> str:
    if not isinstance(value, str):
        raise FilterError(f"Filter values must be text, got {type(value).__name__}.", param=key)
    if not value or len(value) > MAX_VALUE_LEN:
        raise FilterError(f"{key}: filter values must be 1 to {MAX_VALUE_LEN} characters long.", param=key)
    if _CONTROL.search(value):
        raise FilterError(f"{key}: filter values must not contain control characters.", param=key)
    if lone_surrogate(value):
        raise FilterError(f"{key}: the value is not valid Unicode text.", param=key)
    return value


def _no_trailing_sep(value: str, key: str) -> str:
    """"/docs/" names the folder "/docs" (a folder filter with the slash matched nothing)."""
    if key in ("folder", "path") and len(value) > 1 and value.endswith(("/", "\\")) and not value.endswith(":\\"):
        return value.rstrip("/\\") or value
    return value


def _parse_time(key: str, value: str, end_of_day: bool) -> int:
    value = value.strip()
    if re.fullmatch(r"-?\d{1,12}", value):
        seconds = int(value)
        if not _FIRST_DAY <= seconds <= _LAST_DAY:  # a date no message can show (year 1 to 9999)
            raise FilterError(f"{key}: {seconds} seconds is not a date between the years 1 and 9999.", param=key)
        return seconds
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise FilterError(f"{key} must be Unix seconds or a date like 2024-05-31, not {value[:40]!r}.",
                          param=key) from None
    moment = dt.datetime.combine(day, dt.time.max if end_of_day else dt.time.min, tzinfo=dt.UTC)
    return int(moment.timestamp())


_LIST_KEYS = {"tag": "tags", "tags": "tags", "folder": "folders", "owner": "owners", "path": "paths",
              "doc_id": "doc_ids"}
_TIME_KEYS = {"mtime_from": False, "mtime_to": True, "ingested_from": False, "ingested_to": True}


def parse_filters(items: Iterable[str]) -> SearchFilter:
    """Parse ``key=value`` strings (CLI/GUI) into a validated filter. Repeated keys OR together."""
    flt = SearchFilter()
    lists: dict[str, list[str]] = {}
    for raw in items:
        if not isinstance(raw, str) or "=" not in raw:
            raise FilterError(f"A filter must look like key=value, got {str(raw)[:60]!r}.")
        key, _, value = raw.partition("=")
        key = key.strip().lower()
        if key in _LIST_KEYS:
            parts = [v.strip() for v in value.split(",")] if key in ("tag", "tags") else [_no_trailing_sep(value, key)]
            for part in parts:
                lists.setdefault(_LIST_KEYS[key], []).append(_check_value(part, key))
        elif key in _TIME_KEYS:
            times: dict[str, Any] = {key: _parse_time(key, _check_value(value, key), _TIME_KEYS[key])}
            flt = replace(flt, **times)
        else:
            raise FilterError(f"Unknown filter key {key[:40]!r}.")
        if sum(len(v) for v in lists.values()) > MAX_VALUES:
            raise FilterError(f"At most {MAX_VALUES} filter values are allowed.")
    values: dict[str, Any] = {k: tuple(dict.fromkeys(v)) for k, v in lists.items()}
    flt = replace(flt, **values)
    for lo, hi in (("mtime_from", "mtime_to"), ("ingested_from", "ingested_to")):
        a, b = getattr(flt, lo), getattr(flt, hi)
        if a is not None and b is not None and a > b:
            raise FilterError(f"{lo} is after {hi}: nothing can match.", param=lo)
    return flt


def describe_filter(flt: SearchFilter) -> str:
    """The filter in a person's words ("tag finance, folder /docs, modified 2024-01-01–…"), for
    messages that name the filters as the reason nothing was found."""
    parts = [f"{label} {', '.join(values)}" for label, values in (
        ("tag", flt.tags), ("folder", flt.folders), ("owner", flt.owners), ("file", flt.paths))
        if values]
    if flt.doc_ids or flt.chunk_ids:
        parts.append("chosen documents")

    def day(t: int | None) -> str:
        return "…" if t is None else dt.datetime.fromtimestamp(t, dt.UTC).date().isoformat()

    for label, lo, hi in (("modified", flt.mtime_from, flt.mtime_to), ("added", flt.ingested_from, flt.ingested_to)):
        if lo is not None or hi is not None:
            parts.append(f"{label} {day(lo)}–{day(hi)}")
    return "; ".join(parts)
