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
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..text.tokenize import cjk_ratio

__all__ = ["TranslationCache", "clean_translation", "query_language", "translate_queries"]

LANG_NAMES = {"en": "English", "zh": "Simplified Chinese"}
PROMPT_VERSION = 2  # translations made with another prompt are ignored (made again)
_PREFIX = re.compile(r"^\s*(?:english|translation|英文|翻译|译文)\s*[:：]\s*", re.IGNORECASE)


def query_language(texts: list[str]) -> str:
    """"zh" when most queries are mostly CJK, else "en"."""
    if not texts:
        return "en"
    return "zh" if sum(1 for t in texts if cjk_ratio(t) > 0.3) * 2 > len(texts) else "en"


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


def clean_translation(raw: str) -> str:
    """The first non-empty line of the model's reply, without a "Translation:" label or quotes."""
    lines = [ln.strip() for ln in raw.strip().splitlines() if ln.strip()]
    text = _PREFIX.sub("", lines[0]) if lines else ""
    if len(text) >= 2 and text[0] in "\"'“「" and text[-1] in "\"'”」":
        text = text[1:-1].strip()
    return text


# Few-shot pairs (not from any evaluation set): without them the 1.5B model often *answers* the
# question ("1999", "Line 1") instead of translating it.
_SHOTS = (
    ("北京故宫是哪一年建成的？", "In which year was the Forbidden City in Beijing completed?"),
    ("李白的代表作有哪些？", "What are Li Bai's representative works?"),
)


def _messages(text: str, target: str) -> list[dict[str, str]]:
    lang = LANG_NAMES[target]
    extra = (" Translate every name too (the usual English name, or pinyin), so no Chinese characters remain."
             if target == "en" else "")
    ask = f"Translate into {lang}, do not answer:\n"
    messages = [{"role": "system", "content": f"You translate questions into {lang}. You never answer them.{extra} "
                                              "Reply with the translated question only, on one line."}]
    for zh, en in _SHOTS:
        src, dst = (zh, en) if target == "en" else (en, zh)
        messages += [{"role": "user", "content": ask + src}, {"role": "assistant", "content": dst}]
    messages.append({"role": "user", "content": ask + text})
    return messages


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
            reply = generator.chat(_messages(text, cache.target), max_tokens=64, temperature=0)
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
