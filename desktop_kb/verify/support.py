"""Claim support: does the passage a sentence cites actually say what the sentence claims?

A cited sentence (a *claim*) is supported by its cited passages (text, headings and file name)
when all of these hold:

* **figures**: every number, date, amount and percentage of the claim is in a cited passage,
  compared by value (digits, full-width forms, thousands separators, multipliers and Chinese
  numerals normalised by :mod:`desktop_kb.text.numbers`) and, when both sides name one, by unit;
* **key terms**: the claim's rare words (rare in the knowledge base by document frequency, see
  :class:`TermStats`) and Latin names that the question does not already contain occur in a
  cited passage;
* **coverage**: at least :data:`MIN_COVERAGE` of the claim's other content words occur there;
* **negation**: a claim that negates (not, never, 不, 没有, 未…) is backed by a passage sentence
  that negates too;
* **other language**: a claim in another language than its passage keeps the figure check and
  the check of codes (ISO-9001, GB18030); the rest is judged by the embedder's
  similarity between the claim and the passage (:data:`CROSS_LANGUAGE_MIN`).

The answer as a whole is checked against its question in :mod:`desktop_kb.verify.question`. Every
problem is worded so a correction prompt can quote it ("passage [1] says 30 days, not 90 days").

:func:`evidence` aligns a claim with the sentence(s) of its passage that support it; citations
carry those spans, and the viewer highlights them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..text.directives import blank_directives, clean_label
from ..text.numbers import Quantity, quantities, same_value
from ..text.pinyin_names import name_glossary, pinyin_names
from ..text.term_stats import TermStats
from ..text.tokenize import cjk_ratio, is_cjk_char, reads_as_chinese, tokenize
from ..types import Hit
from .claim_terms import (
    CODE,
    FILLER,
    NAME,
    NEGATION_EN,
    NEGATION_ZH,
    QUESTION_WORDS,
    SENTENCE_END,
)
from .contrast import contrast

__all__ = [
    "CROSS_LANGUAGE_MIN", "MIN_COVERAGE", "Claim", "PassageView", "TermStats", "check_claim",
    "cite_marks", "evidence", "latin_names", "negates", "quantity_found", "sentence_spans",
]

# Calibrated on the faithfulness set built from the shared QA data (docs/history/benchmarks-log.md,
# "Faithfulness"; desktop-kb eval faithfulness).
MIN_COVERAGE = 0.8  # share of a claim's new content words that its passages must contain
CROSS_LANGUAGE_MIN = 0.79  # embedder cosine between a claim and a passage in another language (e5-small)

Similarity = Callable[[str, str], float]



def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, surrounding spaces excluded. A full stop ends a sentence
    only before a space and a word that is not lower-case ("U.S. army", "e.g. this" stay whole),
    and not after an initial ("T. S. Eliot")."""
    spans = []
    pos = 0
    for m in [*SENTENCE_END.finditer(text), None]:
        s, e = pos, (m.end() if m else len(text))
        pos = e
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
    return spans


def _fold(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


@dataclass
class PassageView:
    """A cited passage as the checks see it: text plus headings and file name, tokenised once."""

    hit: Hit

    @cached_property
    def text(self) -> str:
        """The chunk text as evidence: its sentences addressed to the answering model blanked
        out (:mod:`.directives`; same length, so offsets hold). An instruction is no fact."""
        return blank_directives(self.hit.chunk.text)

    @cached_property
    def context(self) -> str:
        c = self.hit.chunk
        return " ".join([self.text, *(clean_label(h) for h in c.heading_path), clean_label(Path(c.path).stem)])

    @cached_property
    def tokens(self) -> set[str]:
        return set(tokenize(self.context))

    @cached_property
    def folded(self) -> str:
        return _fold(self.context)

    @cached_property
    def quantities(self) -> list[Quantity]:
        return quantities(self.context)

    @cached_property
    def sentences(self) -> list[tuple[int, int, set[str]]]:
        """(start, end, tokens) of each sentence of the chunk text (a directive's tokens: none)."""
        text = self.text
        return [(s, e, set(tokenize(text[s:e]))) for s, e in sentence_spans(text)]

    @cached_property
    def sentence_quantities(self) -> list[list[Quantity]]:
        """The figures of each sentence of :attr:`sentences`."""
        return [quantities(self.text[s:e]) for s, e, _ in self.sentences]

    @cached_property
    def cjk(self) -> bool:
        return cjk_ratio(self.hit.chunk.text) > 0.5

    def has(self, token: str) -> bool:
        if token in self.tokens:
            return True
        folded = _fold(token)
        if folded in self.folded:  # codes lose their dashes; CJK words segment differently
            return any(ch.isdigit() for ch in token) or is_cjk_char(token[0])
        if is_cjk_char(token[0]) and len(folded) >= 3:
            # a run glued across words by the segmenter (于德乙球会 from 效力于德乙球会): all but
            # one of its character pairs are in the passage
            pairs = [folded[i:i + 2] for i in range(len(folded) - 1)]
            return sum(p not in self.folded for p in pairs) <= 1
        return False


@dataclass(frozen=True)
class Claim:
    """One cited sentence of an answer, with the numbers of the passages it cites."""

    text: str  # without its [n] marks
    numbers: tuple[int, ...]
    tokens: frozenset[str] = field(default=frozenset())
    quoted: bool = False  # it holds a quote found in its passage: the rest is framing ("the rule says")

    @staticmethod
    def of(text: str, numbers: Sequence[int], quoted: bool = False) -> Claim:
        return Claim(text, tuple(dict.fromkeys(numbers)), frozenset(tokenize(text)), quoted)


def cite_marks(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def latin_names(text: str) -> list[str]:
    """Latin names, acronyms and codes as written (a capitalised first word only when it is not a
    common word: that is decided by the caller through key terms)."""
    out = []
    for m in NAME.finditer(text):
        word = m.group(0).strip("'’-")
        at_start = m.start() == 0 or text[: m.start()].rstrip().endswith((".", ":", "!", "?", '"', "“"))
        if len(word) < 2 or (at_start and not CODE.match(word)):
            continue
        out.append(word)
    return out


def quantity_found(q: Quantity, views: Sequence[PassageView]) -> bool:
    for v in views:
        for p in v.quantities:
            if any(same_value(a, b) for a in q.values for b in p.values):
                if q.percent and not p.percent:
                    continue
                if q.unit and p.unit and q.unit != p.unit and not q.percent:
                    continue
                return True
    return False


def _says_instead(q: Quantity, views: Sequence[PassageView], numbers: Sequence[int]) -> str:
    """'passage [1] says 30 days, not 90 days' (or 'does not state 90 days')."""
    for n, v in zip(numbers, views, strict=False):
        alike = [p for p in v.quantities if q.unit and p.unit == q.unit]
        if alike:
            return f"passage [{n}] says {alike[0].text}, not {q.text}"
    return f"passage {cite_marks(numbers)} does not state {q.text}"


def question_values(question_tokens: set[str]) -> set[float]:
    """Figures of the question: its tokens keep digits as they are, and number words ("three
    kinds of phagocytes") are read as their values."""
    digits = {float(t) for t in question_tokens if re.fullmatch(r"\d+(?:\.\d+)?", t)}
    words = " ".join(sorted(t for t in question_tokens if t.isalpha()))
    return digits | {v for q in quantities(words) for v in q.values}


def negates(text: str) -> bool:
    return bool(NEGATION_EN.search(text) or NEGATION_ZH.search(text))


def _fold_negation(text: str) -> str:
    text = re.sub(r"n['’]t\b", " not", unicodedata.normalize("NFKC", text).lower())
    text = re.sub(r"\bcannot\b", "can not", text)
    return " ".join(text.split())


_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th|s)", re.IGNORECASE)


def _unwritten_pinyin(text: str, views: Sequence[PassageView], question_tokens: set[str]) -> list[str]:
    """The names of an English claim spelled in pinyin that no Chinese passage it cites writes
    ("Guizhou" over 潘淑，会稽句章人: the model's own place); the question's names are the subject
    check's (:mod:`.subject`)."""
    names = [w for w in pinyin_names(text, latin_names(text)) if not set(tokenize(w)) <= question_tokens]
    return [w for w in names if not any(v.has(_fold(w)) for v in views)
            and not name_glossary(w, [v.context for v in views])]


def _negation_phrases(text: str) -> list[str]:
    """Each negation of ``text`` with the word it negates ("not referred", "不是"): the passage
    must say that, not only something else with a negation somewhere."""
    folded = _fold_negation(text)
    out = [m.group(0) for m in re.finditer(r"\b(?:not|no|never)\s+[^\W\d_]+", folded)]
    out += [m.group(0) + folded[m.end(): m.end() + 1] for m in NEGATION_ZH.finditer(folded)
            if m.end() < len(folded) and is_cjk_char(folded[m.end()])]
    return out


def check_claim(
    claim: Claim,
    views: Sequence[PassageView],
    question_tokens: set[str],
    stats: TermStats | None = None,
    similarity: Similarity | None = None,
) -> str | None:
    """None when the cited passages support the claim, else the problem in words."""
    numbers = claim.numbers
    cites = cite_marks(numbers)
    problems: list[str] = []
    premise = question_values(question_tokens)
    for q in quantities(claim.text):
        if not quantity_found(q, views) and not q.values & premise:  # the question's own figures
            problems.append(_says_instead(q, views, numbers))
    cross = all(v.cjk != reads_as_chinese(claim.text) for v in views)
    if cross:
        # codes (GB18030, ISO-9001, A4) read the same in every language; names and acronyms are
        # translated (VAT = 增值税), so those are left to the similarity
        # an ordinal or a decade ("19th", "1990s") is a figure, checked by value above (19世纪)
        codes = [w for w in latin_names(claim.text) if any(ch.isdigit() for ch in w) and any(ch.isalpha() for ch in w)
                 and not _ORDINAL.fullmatch(w)]
        missing = [w for w in codes if not any(v.has(_fold(w)) for v in views)]
        if not reads_as_chinese(claim.text):
            missing += _unwritten_pinyin(claim.text, views, question_tokens)
        if missing:
            problems.append(f"passage {cites} does not mention {', '.join(missing[:4])}")
        if similarity is not None and not problems:
            # the whole passage, or the one sentence that says it (a long passage dilutes it)
            best = max(similarity(claim.text, text) for v in views
                       for text in [v.text, *(v.text[s:e] for s, e, _ in v.sentences[:12])])
            if best < CROSS_LANGUAGE_MIN:
                problems.append(f"passage {cites} does not say this (similarity {best:.2f})")
        return "; ".join(problems) or None

    content = {t for t in claim.tokens - question_tokens - FILLER if not t.isdigit()}
    found = {t for t in content if any(v.has(t) for v in views)}
    # rare words of the knowledge base; a Latin word no document has is mostly the answer's own
    # wording ("due" for "must be paid"), left to the coverage check
    key: set[str] = set()
    if stats is not None:
        seen = stats.rare(content, unseen=False)
        key = {t for t in stats.rare(content) if (len(t) >= 2 and is_cjk_char(t[0])) or t in seen}
    name_words = [w for w in latin_names(claim.text) if not (set(tokenize(w)) <= question_tokens)]
    missing_names = [w for w in name_words if not all(any(v.has(t) for v in views) for t in tokenize(w))]
    missing_key = sorted(key - found - {t for w in missing_names for t in tokenize(w)})
    if missing_names or missing_key:
        listed = list(dict.fromkeys([*missing_names, *missing_key]))
        problems.append(f"passage {cites} does not mention {', '.join(listed[:5])}")
    # a short claim may reword one word ("due" for "must be paid"), a longer one a fifth of them
    # the question's words that the claim asserts must be in the passage too (an answer that
    # restates "parental leave for adoptive parents" over a passage about paid leave)
    asked = {t for t in claim.tokens & question_tokens - QUESTION_WORDS - FILLER
             if not t.isdigit() and (len(t) >= 4 or (is_cjk_char(t[0]) and len(t) >= 2))}
    restated_missing = sorted(t for t in asked if not any(v.has(t) for v in views))
    # the segmenter's search mode gives a word and its parts (出生地, 生地): one missing word
    restated_missing = [t for t in restated_missing if not any(t != o and t in o for o in restated_missing)]
    if stats is not None and restated_missing:  # with statistics: only words no document has
        counts = stats.df(restated_missing)
        restated_missing = [t for t in restated_missing if counts.get(t, 0) == 0]
    if len(restated_missing) >= 2 and len(restated_missing) * 2 >= len(asked):
        problems.append(f"passage {cites} does not mention {', '.join(restated_missing[:5])}, which the "
                        "question asks about")
    if not claim.quoted and len(content) >= 2 and len(content) - len(found) > max(1, int((1 - MIN_COVERAGE) * len(content) + 1e-9)):
        problems.append(f"passage {cites} does not say most of this: only {len(found)} of its "
                        f"{len(content)} words are in it")
    elif not content and claim.tokens and not claim.tokens & set().union(*(v.tokens for v in views)):
        problems.append(f"passage {cites} shares no words with it")
    if not problems and negates(claim.text):
        spans = evidence(claim, views)
        said = _fold_negation(" ".join(views[i].hit.chunk.text[s:e] for i, s, e in spans))
        missing_neg = [p for p in _negation_phrases(claim.text) if p not in said]
        if missing_neg:
            problems.append(f"passage {cites} does not say \"{missing_neg[0]}\"")
    if not problems:
        turned = contrast(claim.text, [views[i].hit.chunk.text[s:e] for i, s, e in evidence(claim, views)])
        if turned:
            problems.append(f"passage {cites} says \"{turned[1]}\", not \"{turned[0]}\"")
    return "; ".join(problems) or None


def evidence(claim: Claim, views: Sequence[PassageView], max_sentences: int = 3) -> list[tuple[int, int, int]]:
    """(view index, start, end) of the passage sentences that best support the claim: the best
    sentence of each cited passage that shares anything with the claim, grown by the next or
    previous sentence while that adds words or figures of the claim the span lacks."""
    claim_qs = quantities(claim.text)
    wanted = set(claim.tokens) - FILLER
    out: list[tuple[int, int, int]] = []
    for i, v in enumerate(views):
        sents = v.sentences
        if not sents:
            continue

        def score(j: int, have: set[str], sents: list[tuple[int, int, set[str]]] = sents,
                  v: PassageView = v) -> float:
            toks = sents[j][2]
            text_qs = v.sentence_quantities[j]
            figures = sum(1 for q in claim_qs if any(same_value(a, b) for p in text_qs
                                                     for a in q.values for b in p.values))
            return len((wanted & toks) - have) + 2.0 * figures

        best = max(range(len(sents)), key=lambda j: (score(j, set()), -j))
        if score(best, set()) <= 0:
            continue
        lo = hi = best
        have = set(sents[best][2])
        while hi - lo + 1 < max_sentences:
            options = [j for j in (lo - 1, hi + 1) if 0 <= j < len(sents) and score(j, have) >= 1]
            if not options:
                break
            j = max(options, key=lambda k: score(k, have))
            have |= sents[j][2]
            lo, hi = min(lo, j), max(hi, j)
        out.append((i, sents[lo][0], sents[hi][1]))
    return out
