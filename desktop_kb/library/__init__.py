"""Knowledge bases and their owner, the :class:`~.kb.Library` facade.

Owns: opening a data folder and its one store (:mod:`.kb`), documents, tags and tables of
contents (:mod:`.documents`), creating, renaming and deleting bases (:mod:`.admin`), export and
import (:mod:`.archive`), the FAQ enrichment (:mod:`.enrich`), damage checks and repair
(:mod:`.check`), the backend factory (:mod:`.factory`: settings → embedder, reranker, generator,
store, OCR) and the models' status (:mod:`.model_status`).
May import: :mod:`desktop_kb.query`, :mod:`desktop_kb.verify`, ``ingest``, ``store``, ``models``,
``backends``, ``text`` and the base modules; never ``cli``, ``eval`` or ``gui``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .kb import Library

__all__ = ["Library"]


def __getattr__(name: str) -> Any:
    if name == "Library":  # lazily: importing the package does not load the whole facade
        from .kb import Library

        return Library
    raise AttributeError(name)
