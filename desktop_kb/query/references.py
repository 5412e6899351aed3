"""A follow-up's pronoun, resolved: "他的父亲选择了哪国国籍？" after a question about 梁邦彦.

The rewrite (:mod:`.rewrite`) asks the LLM for a standalone question; the 1.5B model often hands
the follow-up back unchanged, pronoun and all ("它全长多少？"), and a pronoun searches for nothing
and leaves the answer's check guessing. Measured on the follow-up chains of
``benchmarks/bench_followups.py`` (16 Chinese, 16 English), the same model names what a pronoun
stands for far more reliably than it rewrites the question around it (15 of 16 Chinese pronouns
against 5 of 16 rewrites). So when the standalone question still has a word pointing back, the LLM
is asked once what that word stands for; the reply counts only when it is copied from the earlier
turn, and the word is replaced by it here, by rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ..progress import CancelToken
from ..protocols import Generator
from .llm_json import ask_json

__all__ = ["back_reference", "replace_reference", "resolve_reference"]

# Words that point back to the conversation. English "there" only where it is not "there is/are…";
# "that/this/those" are left alone (relative clauses and determiners read alike).
_ZH = r"它们|他们|她们|(?<!其)它|(?<!其)他(?!人)|她|那里"  # not 其他 / 其它 (other) or 他人 (others)
_EN = r"\b(?:its|it|his|him|he|hers|her|she|their|them|they)\b|(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )\bthere\b(?!\s+(?:is|are|was|were|be|been|has|have|had|will|would|may|might)\b)"
_BACK = re.compile(f"{_ZH}|{_EN}", re.IGNORECASE)
_POSSESSIVE = {"its", "his", "their", "her", "hers"}
_MARKS = re.compile(r"\s*[\[【]\s*\d{1,3}(?:\s*[,，、]\s*\d{1,3})*\s*[\]】]")

REFERENT_SCHEMA = {
    "type": "object",
    "properties": {"refers_to": {"type": "string", "minLength": 1, "maxLength": 120}},
    "required": ["refers_to"],
    "additionalProperties": False,
}
REFERENT_SYSTEM = """The latest question uses a word that points back to the earlier turn. Say what that word stands for: the name or thing in the earlier question or its answer, copied exactly, as short as it can be and still complete.
Reply with JSON: {"refers_to": "..."}"""
# made-up examples (never from evaluation data): one person in Chinese, one thing in English
_SHOTS = (
    ("张伟是哪一年加入公司的？", "张伟于2015年加入公司。", "他现在的职位是什么？", "他", "张伟"),
    ("Who designed the Harbour Bridge?", "John Bradfield designed it.", "When did its construction begin?", "its",
     "the Harbour Bridge"),
)


def back_reference(question: str) -> str | None:
    """The first word of ``question`` that points back to the conversation, if any."""
    m = _BACK.search(question)
    return m.group(0) if m else None


def _turn(earlier: str, answer: str, latest: str, word: str) -> str:
    return f"Earlier question: {earlier}\nIts answer: {answer}\nLatest question: {latest}\nThe word: {word}"


def _messages(earlier: str, answer: str, latest: str, word: str) -> list[dict[str, str]]:
    out = [{"role": "system", "content": REFERENT_SYSTEM}]
    for q, a, f, w, r in _SHOTS:
        out += [{"role": "user", "content": _turn(q, a, f, w)},
                {"role": "assistant", "content": json.dumps({"refers_to": r}, ensure_ascii=False)}]
    out.append({"role": "user", "content": _turn(earlier, answer, latest, word)})
    return out


def replace_reference(question: str, word: str, referent: str) -> str:
    """``question`` with each ``word`` replaced by ``referent`` ("its" → "X's", "there" → "in X")."""
    if re.fullmatch(_ZH, word):
        return re.sub(_ZH, lambda m: referent if m.group(0) == word else m.group(0), question)
    low = word.lower()
    bare = re.sub(r"^(?:the|a|an)\s+", "", referent, flags=re.IGNORECASE) if low in _POSSESSIVE else referent
    by = {"there": f"in {referent}"}.get(low) or (
        (f"{bare}'" if bare.endswith("s") else f"{bare}'s") if low in _POSSESSIVE else referent)
    out = re.sub(rf"\b{re.escape(word)}\b", by, question, flags=re.IGNORECASE)
    return out[0].upper() + out[1:] if out and question[:1].isupper() else out


def resolve_reference(
    question: str, history: Sequence[tuple[str, str]], generator: Generator, *, cancel: CancelToken | None = None,
) -> str | None:
    """``question`` with its pointing-back word replaced by what it stands for in the last turn;
    ``None`` when it has none, or the LLM's reply is not copied from that turn."""
    word = back_reference(question)
    if word is None or not history:
        return None
    earlier, answer = history[-1]
    answer = _MARKS.sub("", answer)[:300]
    reply = ask_json(generator, _messages(earlier, answer, question, word), REFERENT_SCHEMA, max_tokens=48,
                     cancel=cancel)
    referent = " ".join(str(reply["refers_to"]).split()).strip(" \"'“”《》?？。.") if reply else ""
    pool = f"{earlier} {answer}".lower()
    if referent.lower() not in pool:  # "the Warsaw City Council" for the turn's "Warsaw City Council"
        referent = re.sub(r"^(?:the|a|an)\s+", "", referent, flags=re.IGNORECASE)
    if not referent or referent.lower() not in pool or back_reference(referent) is not None:
        return None
    return replace_reference(question, word, referent)
