"""The answer pipeline's query rewrite applied to evaluation queries, cached per query and mode,
so `eval retrieval --rewrite` can show what the LLM rewrite adds to retrieval (and what
`query.rewrite = "auto"` saves by skipping it for first questions)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["rewrite_queries"]


def rewrite_queries(
    lib: Any, views: Sequence[Any], queries: Mapping[str, str], mode: str, cache_dir: Path,
    *, on_progress: Callable[[int, int], None] | None = None,
) -> dict[str, list[str]]:
    """Per query id, the queries the pipeline would search for it as a first question:
    ``[question]`` or ``[question, rewrite]``."""
    from ..query.rewrite import rewrite
    from ..query.search import corpus_cjk

    path = Path(cache_dir) / f"rewrites-{mode}.json"
    cache: dict[str, list[str]] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    cjk = corpus_cjk(views)
    q = lib.settings.query
    out: dict[str, list[str]] = {}
    generator = None
    try:
        for i, (qid, text) in enumerate(queries.items(), 1):
            key = f"{qid}|{hashlib.sha1(text.encode('utf-8')).hexdigest()[:12]}|{lib.settings.models.llm.id}"
            if key not in cache:
                generator = generator or lib.small_generator
                cache[key] = rewrite(text, [], generator, max_queries=q.max_queries, mode=mode, corpus_cjk=cjk)
                if i % 20 == 0:
                    _save(path, cache)
            out[qid] = list(cache[key])
            if on_progress is not None:
                on_progress(i, len(queries))
    finally:
        _save(path, cache)
    return out


def _save(path: Path, cache: dict[str, list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(cache, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
