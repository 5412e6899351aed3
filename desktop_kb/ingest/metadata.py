"""Metadata edits without re-embedding: tags and owner of documents, in the manifest and in every
passage's payload. No text is converted and no vector is recomputed or rewritten."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import ConfigError
from ..protocols import SearchFilter, VectorStore
from .manifest import DocumentRow, Manifest, path_key

__all__ = ["select_documents", "set_metadata"]


def select_documents(rows: dict[str, DocumentRow], paths: Iterable[str | Path]) -> list[DocumentRow]:
    """The documents named by ``paths``: a file, or every document under a folder."""
    chosen: dict[str, DocumentRow] = {}
    for given in paths:
        key = path_key(given)
        hits = [r for p, r in rows.items() if p == key or p.startswith(key.rstrip(os.sep) + os.sep)]
        if not hits:
            raise ConfigError(f"{given} is not in this knowledge base.",
                              "Check the path (`desktop-kb kb docs NAME` lists its files).")
        chosen.update((r.path, r) for r in hits)
    return [chosen[p] for p in sorted(chosen)]


def _clean_tags(tags: Iterable[str]) -> list[str]:
    out = []
    for t in tags:
        t = t.strip()
        if not t or len(t) > 100 or any(ch in t for ch in ",\n\r\t"):
            raise ConfigError(f"Invalid tag {t!r}: tags are short words without commas or line breaks.")
        if t not in out:
            out.append(t)
    return out


def set_metadata(
    kb: str, store: VectorStore, manifest: Manifest, rows: Sequence[DocumentRow], *,
    add: Sequence[str] = (), remove: Sequence[str] = (), tags: Sequence[str] | None = None,
    owner: str | None = None,
) -> list[str]:
    """Change tags (``tags`` replaces them; ``add``/``remove`` edit them) and/or the owner of
    ``rows``; returns the paths whose metadata changed. The store is updated before the manifest,
    so an interrupted edit is finished by running it again."""
    add, remove = _clean_tags(add), set(_clean_tags(remove))
    base = _clean_tags(tags) if tags is not None else None
    changed = []
    for row in rows:
        new_tags = [t for t in (base if base is not None else list(row.tags)) + add if t not in remove]
        new_tags = list(dict.fromkeys(new_tags))
        new_owner = row.owner if owner is None else owner.strip()
        if tuple(new_tags) == row.tags and new_owner == row.owner:
            continue
        store.set_payload(kb, SearchFilter(paths=(row.path,)), {"tags": new_tags, "owner": new_owner})
        with manifest.transaction() as db:
            manifest.put_document(db, dataclasses.replace(row, tags=tuple(new_tags), owner=new_owner))
        changed.append(row.path)
    return changed
