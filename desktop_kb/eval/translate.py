"""Query translation for the cross-lingual check, cached so the LLM does it once per query.

The cache is a JSON file next to the dataset's knowledge-base cache
(``<data dir>/eval-cache/<kb>/translations-<lang>.json``)::

    {"version": 1, "target": "en",
     "items": {"<query id>|<sha1(text)[:12]>": {"src": "...", "text": "...", "model": "...", "prompt": 2}}}

Entries are keyed by query id and a hash of the source text, so an edited query is translated
again (so is one made with an older prompt). The file can be produced (or completed) later, by any run that has the LLM, and queries
without a translation are reported rather than guessed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..query.translate import clean_translation, translation_messages
from ..text.tokenize import is_chinese

__all__ = ["TranslationCache", "clean_translation", "query_language", "translate_queries"]

PROMPT_VERSION = 2  # translations made with another prompt are ignored (made again)


def query_language(texts: list[str]) -> str:
    """"zh" when most queries are mostly CJK, else "en"."""
    if not texts:
        return "en"
    return "zh" if sum(1 for t in texts if is_chinese(t)) * 2 > len(texts) else "en"


def _key(qid: str, text: str) -> str:
    return f"{qid}|{hashlib.sha1(text.encode('utf-8')).hexdigest()[:12]}"


class TranslationCache:
    def __init__(self, path: Path, target: str) -> None:
        self.path = Path(path)
        self.target = target
        self.items: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(raw, dict) and raw.get("target") == target:
                self.items = dict(raw.get("items") or {})

    def get(self, qid: str, text: str) -> str | None:
        entry = self.items.get(_key(qid, text))
        return entry.get("text") if entry and entry.get("prompt", 1) == PROMPT_VERSION else None

    def put(self, qid: str, text: str, translation: str, model: str) -> None:
        self.items[_key(qid, text)] = {"src": text, "text": translation, "model": model, "prompt": PROMPT_VERSION}

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps({"version": 1, "target": self.target, "items": self.items}, ensure_ascii=False,
                                  indent=1), encoding="utf-8")
        os.replace(tmp, self.path)


def translate_queries(
    queries: Mapping[str, str],
    cache: TranslationCache,
    generator_factory: Callable[[], Any] | None,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    save_every: int = 20,
) -> tuple[dict[str, str], list[str], str]:
    """Translated queries (from the cache, else from the LLM), the ids still untranslated, and why
    (empty when all were translated). ``generator_factory`` is called only if something is missing;
    if it raises, the cached translations are returned with the error message."""
    out: dict[str, str] = {}
    missing = []
    for qid, text in queries.items():
        got = cache.get(qid, text)
        if got:
            out[qid] = got
        else:
            missing.append(qid)
    if not missing:
        return out, [], ""
    if generator_factory is None:
        return out, missing, "not in the cache; translations were not requested from the LLM"
    try:
        generator = generator_factory()
    except Exception as exc:  # ModelNotInstalled, ConfigError, missing llama_cpp…
        from ..errors import user_message

        message, hint = user_message(exc)
        return out, missing, f"{message} {hint}".strip()
    still: list[str] = []
    try:
        for i, qid in enumerate(missing, 1):
            text = queries[qid]
            reply = generator.chat(translation_messages(text, cache.target), max_tokens=64, temperature=0)
            translation = clean_translation(reply)
            if translation:
                cache.put(qid, text, translation, str(getattr(generator, "id", "")))
                out[qid] = translation
            else:
                still.append(qid)
            if i % save_every == 0:
                cache.save()
            if on_progress is not None:
                on_progress(i, len(missing))
    finally:
        cache.save()
    return out, still, "the LLM gave an empty translation" if still else ""
