"""Question translation into the knowledge base's language (so its BM25 leg can match).

Used by the rewrite stage for a first question written in another language than the documents,
and by the cross-lingual evaluation. A plain one-line reply with two worked examples: asked for
JSON, or without the examples, the 1.5B model often *answers* the question ("1999") instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..progress import CancelToken
from ..protocols import Generator
from ..text.pinyin_names import is_pinyin_name, name_glossary
from ..text.tokenize import is_chinese
from ..types import Hit

__all__ = ["LANG_NAMES", "clean_translation", "named", "translate", "translation_messages"]

LANG_NAMES = {"en": "English", "zh": "Simplified Chinese"}
_PREFIX = re.compile(r"^\s*(?:english|chinese|translation|英文|中文|翻译|译文)\s*[:：]\s*", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
# Few-shot pairs (not from any evaluation set)
_SHOTS = (
    ("北京故宫是哪一年建成的？", "In which year was the Forbidden City in Beijing completed?"),
    ("李白的代表作有哪些？", "What are Li Bai's representative works?"),
)


def clean_translation(raw: str) -> str:
    """The first non-empty line of the model's reply, without a "Translation:" label or quotes."""
    lines = [ln.strip() for ln in raw.strip().splitlines() if ln.strip()]
    text = _PREFIX.sub("", lines[0]) if lines else ""
    if len(text) >= 2 and text[0] in "\"'“「" and text[-1] in "\"'”」":
        text = text[1:-1].strip()
    return text


def translation_messages(text: str, target: str) -> list[dict[str, str]]:
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


def translate(text: str, target: str, generator: Generator, *, cancel: CancelToken | None = None) -> str | None:
    """``text`` in ``target`` ("en" | "zh"), or ``None`` when the reply is not a usable translation
    (empty, in the wrong script, or with numbers the question does not have)."""
    reply = clean_translation(generator.chat(translation_messages(text, target), max_tokens=64, temperature=0,
                                             cancel=cancel))
    if not reply or (is_chinese(reply)) != (target == "zh"):
        return None
    if not set(_DIGITS.findall(reply)) <= set(_DIGITS.findall(text)):
        return None
    return reply


def named(question: str, hits: Sequence[Hit]) -> tuple[str, list[str]]:
    """``question`` with each name it spells in pinyin written as the passages ``hits`` (their text
    and headings) write it ("Where was 潘淑 from?"), and those names: translated so, the model keeps
    them (asked with "Pan Shu" it wrote 潘书; with "Zeng Jiong", 陈景润). Common English words are
    left to the model (Beijing, China: it knows them, and a passage's characters might spell them
    by chance)."""
    texts = [" ".join((*h.chunk.heading_path, h.chunk.text)) for h in hits]
    names = {run: chinese for run, chinese in name_glossary(question, texts).items() if is_pinyin_name(run)}
    for run, chinese in names.items():
        question = question.replace(run, chinese)
    return question, list(names.values())
