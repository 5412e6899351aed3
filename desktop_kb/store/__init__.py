"""Vector stores: the embedded engine (default) and a Qdrant server by URL."""

from __future__ import annotations

from ..protocols import VectorStore
from ..settings import Settings

__all__ = ["open_store"]


def open_store(settings: Settings) -> VectorStore:
    """The one store of this process, chosen from the settings."""
    if settings.store.url:
        from .server import ServerStore

        return ServerStore(settings.store.url, settings.store.api_key, settings.store.hnsw_threshold)
    from .edge import EdgeStore

    return EdgeStore(settings.kbs_dir, settings.store.hnsw_threshold)
