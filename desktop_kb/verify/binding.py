"""Binding: the claim's words are in its passage, but are they bound as the passage binds them?

Errors a small model makes with the passage's own words, seen without an LLM:

* **a moved span**: the claim copies a passage sentence but puts, in one place, words the
  sentence has elsewhere or another sentence has ("signed by Ms. Lin and approved by Ms. Lin"
  over "signed by Ms. Lin and approved by Mr. Park"; two names exchanged): the claim aligned
  with its sentence shows a replaced span whose passage side the claim dropped;
* **an answer from another sentence** (Latin-script passages): a short answer ("Ms. Lin [1].") whose words stand only
  in sentences that share little of what the question asks, while another sentence of the same
  passage shares much more (the answer to another question about the passage).

What these cannot see (roles inside one sentence, "approved by Ms. Lin" over "signed by Ms. Lin
and approved by Mr. Park") is left to the judge (:mod:`.judge`), which weighs the answer
against the evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

from ..text.term_stats import TermStats, idf
from ..text.tokenize import cjk_ratio, is_cjk_char, tokenize
from .claim_terms import FILLER, QUESTION_WORDS

__all__ = ["answer_elsewhere", "check_binding", "moved_span"]

_UNIT = re.compile(r"[0-9A-Za-z\u00c0-\u024f]+|[\u3400-\u9fff]")
MAX_SPAN = 8  # units of a replaced span (words; Chinese characters count as units too)
MIN_ALIGNED = 0.6  # share of the claim's units the sentence must match for a span to count as moved


def _units(text: str) -> list[str]:
    return [u.lower() for u in _UNIT.findall(text)]


def _join(units: Sequence[str]) -> str:
    out = ""
    for u in units:
        out += u if (out and is_cjk_char(u[0]) and is_cjk_char(out[-1])) or not out else " " + u
    return out


def _content(units: Sequence[str]) -> bool:
    """The span holds a word that says something (not only function words)."""
    toks = set(tokenize(" ".join(units) if not any(is_cjk_char(u[0]) for u in units) else "".join(units)))
    toks -= FILLER
    cjk = sum(1 for u in units if is_cjk_char(u[0]))
    return bool(toks) and (cjk == 0 or cjk >= 2 or any(not is_cjk_char(t[0]) for t in toks))


def _contains(hay: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(list(hay[i:i + n]) == list(needle) for i in range(len(hay) - n + 1))


def _count(hay: Sequence[str], needle: Sequence[str]) -> int:
    n = len(needle)
    return sum(list(hay[i:i + n]) == list(needle) for i in range(len(hay) - n + 1)) if n else 0


def moved_span(claim: str, sentences: Sequence[str], question: str = "") -> tuple[str, str] | None:
    """(what the passage says there, what the claim put in its place) when the claim is one of
    ``sentences`` (the cited passage's, in order) with one span replaced by words that sentence
    has elsewhere or another sentence has, and the replaced words dropped from the claim, or
    with two of its spans exchanged. Words of the question put in place of the passage's ("this
    fish" → the fish the question names) are no moved span, unless the claim also keeps them
    where the sentence has them."""
    c, c_at = _units(claim), [m.span() for m in _UNIT.finditer(claim)]
    if len(c) < 4:
        return None
    aligned = []
    for k, s in enumerate(sentences):
        u = _units(s)
        sm = SequenceMatcher(None, c, u, autojunk=False)
        aligned.append((sum(b.size for b in sm.get_matching_blocks()), u, sm, k))
    matched, u, sm, at = max(aligned, key=lambda a: a[0]) if aligned else (0, [], None, 0)
    if sm is None or matched < MIN_ALIGNED * len(c):
        return None
    u_at = [m.span() for m in _UNIT.finditer(sentences[at])]

    def shown(text: str, spans: Sequence[tuple[int, int]], lo: int, hi: int) -> str:
        return text[spans[lo][0]:spans[hi - 1][1]]
    asked = set(tokenize(question))
    ops = sm.get_opcodes()
    replaced = [(c[i1:i2], u[j1:j2], (i1, i2, j1, j2)) for tag, i1, i2, j1, j2 in ops if tag == "replace"]
    for put, said, (i1, i2, j1, j2) in replaced:  # two spans exchanged ("signed by Park, approved by Lin")
        if _content(put) and put != said and any((p2, s2) == (said, put) for p2, s2, _ in replaced):
            return shown(sentences[at], u_at, j1, j2), shown(claim, c_at, i1, i2)
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "replace" or i2 - i1 > MAX_SPAN or j2 - j1 > MAX_SPAN:
            continue
        put, said = c[i1:i2], u[j1:j2]
        if not (_content(put) and _content(said)):
            continue
        # framed by what the sentence says on at least one side (a slot, not a rewording)
        before = ops[k - 1][2] - ops[k - 1][1] if k > 0 and ops[k - 1][0] == "equal" else 0
        after = ops[k + 1][2] - ops[k + 1][1] if k + 1 < len(ops) and ops[k + 1][0] == "equal" else 0
        if max(before, after) < 2:
            continue
        if _contains(c, said):  # reordered
            continue
        # the question's subject named where the sentence refers to it ("this fish" -> the fish the
        # question names) is no moved span, unless the claim names it where the sentence does and
        # again in another's place ("male hormones such as testosterone seem to be testosterone"
        # over "… such as testosterone seem to be immunosuppressive")
        if set(tokenize(_join(put))) <= asked and not (_contains(u, put) and _count(c, put) > 1):
            continue
        # the put words stand elsewhere in the passage, and no sentence holding them fits the claim as well
        holders = [m for m, o, _, _ in aligned if _contains(o, put)]
        if holders and (max(holders) < 0.8 * matched or _contains(u, put)):
            return shown(sentences[at], u_at, j1, j2), shown(claim, c_at, i1, i2)
    return None


def _weights(tokens: set[str], stats: TermStats | None) -> dict[str, float]:
    if stats is None or stats.n_docs <= 0:
        return dict.fromkeys(tokens, 1.0)
    df = stats.df(sorted(tokens))
    return {t: idf(stats.n_docs, df.get(t, 0)) for t in tokens}


def answer_elsewhere(claim: str, question: str, sentences: Sequence[str], stats: TermStats | None,
                     topic: str = "", max_words: int = 6, share: float = 0.5) -> str | None:
    """For a short answer: the passage sentence that shares most of what the question asks, when
    the answer's words stand only in sentences that share less than ``share`` of that (by the
    terms' rarity); else None. The sentences next to one holding the answer count as holding it
    (the answer is often named in the sentence after the question's words). The question's words
    in ``topic`` (the passage's title and headings) say what the whole passage is about, not
    where in it the answer stands: they are left out."""
    q = set(tokenize(question)) - QUESTION_WORDS - FILLER
    q -= set(tokenize(topic)) if q - set(tokenize(topic)) else set()
    new = {t for t in tokenize(claim) if t not in q} - FILLER
    if not q or not new or len(new) > max_words:
        return None
    toks = [set(tokenize(s)) for s in sentences]
    holding = [k for k, t in enumerate(toks) if new <= t]
    if not holding:
        return None
    w = _weights(q, stats)

    def asked(k: int) -> float:
        return sum(w[t] for t in q & toks[k])

    scores = [asked(k) for k in range(len(sentences))]
    best = max(range(len(sentences)), key=lambda k: scores[k])
    near = {j for k in holding for j in (k - 1, k, k + 1) if 0 <= j < len(sentences)}
    if scores[best] <= 0 or best in near:
        return None
    if max(scores[j] for j in near) >= share * scores[best]:
        return None
    return sentences[best]


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def check_binding(claim: str, n: int, passage: str, sentences: Sequence[str], question: str,
                  stats: TermStats | None, topic: str = "") -> str | None:
    """The problem, in words, when a claim citing passage [n] alone binds its words otherwise
    than the passage does; else None."""
    moved = moved_span(claim, sentences, question)
    if moved is not None:
        said, put = moved
        return f"passage [{n}] says \u201c{said}\u201d there, not \u201c{put}\u201d"
    # Chinese passages name their subject once and leave it out after (线蚓鳗… 体长可达33公分): the
    # sentence nearest the question is then the first one, not the one that answers it
    if question and cjk_ratio(passage) < 0.3:
        other = answer_elsewhere(claim, question, sentences, stats, topic=topic)
        if other is not None:
            return (f"passage [{n}] does not give this as the answer to the question; the sentence that "
                    f"speaks of what it asks says: \u201c{_short(other)}\u201d")
    return None
