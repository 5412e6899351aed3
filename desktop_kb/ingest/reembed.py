"""Re-embedding a knowledge base from its files without losing what only its manifest knows.

Re-embedding drops the vectors and the document rows and ingests the files again with the
configured embedder. Two things live only in those rows: *which* files belong to the base, and
the tags and owner the user set on each (``set_metadata``). Before anything is dropped they are
written to the manifest's meta (``reembed``: path → tags and owner), and each file that comes
back gets its tags and owner again, without a second embedding. An entry leaves the meta once
its file is back; a re-embedding stopped part-way (Cancel, a crash) or with files that failed
leaves the rest there, and the next one takes them up. A first run refuses to start while a file
of the base is not there (:func:`check_present`), and the caller checks that the embedder loads:
either would otherwise drop documents that cannot come back.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from ..errors import ConfigError
from ..protocols import VectorStore
from .manifest import Manifest
from .metadata import set_metadata

__all__ = ["KEY", "check_present", "finish", "remember", "to_embed"]

KEY = "reembed"
_LEGACY_KEY = "reembed_paths"  # 0.x: the paths only


def to_embed(m: Manifest) -> dict[str, dict[str, Any]]:
    """Every file of the base (path → ``{"tags": [...], "owner": str}``): its documents, and the
    files a stopped re-embedding has not brought back yet."""
    files: dict[str, dict[str, Any]] = {p: {"tags": [], "owner": ""} for p in m.get_meta(_LEGACY_KEY, []) or []}
    files.update({p: {"tags": list(r.tags), "owner": r.owner} for p, r in m.documents().items()})
    saved = m.get_meta(KEY, {})
    if isinstance(saved, dict):
        files.update({str(p): _clean(v) for p, v in saved.items()})
    return files


def check_present(kb: str, files: dict[str, dict[str, Any]]) -> None:
    """ConfigError, before anything is dropped, when a file of the base is not there: its document
    would be lost (a folder moved, a drive not plugged in)."""
    missing = [p for p in files if not os.path.isfile(p)]
    if missing:
        raise ConfigError(f"{len(missing)} of the {len(files)} files of {kb!r} are not there (such as {missing[0]}): "
                          "nothing was re-embedded.",
                          "Reconnect the drive or folder they are on; remove those gone for good with "
                          f"`desktop-kb kb remove {kb} PATH`; then re-embed.")


def _clean(value: Any) -> dict[str, Any]:
    value = value if isinstance(value, dict) else {}
    tags = value.get("tags", [])
    return {"tags": [str(t) for t in tags] if isinstance(tags, list) else [], "owner": str(value.get("owner", "") or "")}


def remember(m: Manifest, files: dict[str, dict[str, Any]]) -> None:
    """Write ``files`` to the meta, before the reset drops the rows (it keeps this key)."""
    m.set_meta(**{KEY: files})


def finish(kb: str, store: VectorStore, m: Manifest, files: dict[str, dict[str, Any]], *, complete: bool) -> None:
    """Give the files that came back their tags and owner again; forget them in the meta (all of
    them when the run was ``complete``)."""
    rows = m.documents()
    groups: dict[tuple[tuple[str, ...], str], list[Any]] = defaultdict(list)
    for path, meta in files.items():
        row = rows.get(path)
        if row is not None and (meta["tags"] or meta["owner"]):
            groups[(tuple(meta["tags"]), meta["owner"])].append(row)
    for (tags, owner), group in groups.items():
        set_metadata(kb, store, m, group, tags=list(tags), owner=owner)
    m.set_meta(**{KEY: {} if complete else {p: v for p, v in files.items() if p not in rows}})
