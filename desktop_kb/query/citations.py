"""Citation validation: every ``[n]`` names a real passage, every quoted excerpt next to ``[n]``
is really in passage n (whitespace-, width- and case-insensitive; CJK and Latin quotes), and an
answer that used passages cites at least one. Produces structured citations with offsets."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..types import Citation, Hit

__all__ = [
    "Validation", "attach_citations", "cite_uncited", "find_in_passage", "is_refusal", "normalise",
    "repoint_citations", "validate",
]

_MARK = re.compile(r"[\[【]\s*(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)\s*[\]】]")
_QUOTES = re.compile(r"“([^”]{2,400})”|「([^」]{2,400})」|『([^』]{2,400})』|\"([^\"\n]{2,400})\"")
_WORD = re.compile(r"[^\W_]")
_SENTENCE_END = re.compile(r"[。！？!?\n]|\.(?=\s|$)")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…+)\s*")
_EDGE_PUNCT = " \t\n.,;:!?。，；：！？、…'\"“”‘’「」『』()（）"
_REFUSAL = re.compile(
    r"(do(?:es)? not (?:contain|mention|provide|include|say|answer)|not (?:found|mentioned|provided) in|"
    r"no (?:information|mention)|cannot (?:find|answer|be answered)|can't (?:find|answer)|unable to (?:find|answer)|"
    r"there is no|isn't (?:mentioned|stated)|"
    r"没有(?:提到|提及|相关|包含|说明|给出|找到)|未(?:提到|提及|找到|说明|包含)|无法(?:回答|找到|确定|从)|不包含|找不到|并未)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Validation:
    valid: bool
    errors: tuple[str, ...]  # problems that must be corrected (bad [n], quote not found, no citation)
    warnings: tuple[str, ...]  # uncited claims (flagged, not fatal)
    citations: tuple[Citation, ...]
    refusal: bool  # the answer says the passages do not contain the answer


def normalise(text: str) -> tuple[str, list[int]]:
    """Comparable form of ``text`` and, for each of its chars, the index of the source char."""
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch).lower():
            if c.isspace() or c in "\u200b\u200c\u200d\ufeff*_`":
                continue
            c = {"‘": "'", "’": "'", "“": '"', "”": '"', "「": '"', "」": '"', "—": "-", "–": "-"}.get(c, c)
            out.append(c)
            index.append(i)
    return "".join(out), index


def find_in_passage(quote: str, passage: str) -> tuple[int, int] | None:
    """(start, end) of ``quote`` in ``passage`` (original offsets), or None.
    An ellipsis in the quote matches any gap, the parts in order."""
    parts = [p.strip(_EDGE_PUNCT) for p in _ELLIPSIS.split(quote.strip(_EDGE_PUNCT))]
    parts = [p for p in parts if p]
    if not parts:
        return None
    hay, index = normalise(passage)
    pos = 0
    first = last = None
    for part in parts:
        needle, _ = normalise(part)
        if not needle:
            continue
        at = hay.find(needle, pos)
        if at < 0:
            return None
        first = at if first is None else first
        last = at + len(needle) - 1
        pos = at + len(needle)
    if first is None or last is None:
        return None
    return index[first], index[last] + 1


def is_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text))


def _numbers(mark: re.Match[str]) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", mark.group(1))]


def validate(answer: str, passages: Sequence[Hit], question: str = "") -> Validation:
    errors: list[str] = []
    warnings: list[str] = []
    n_pass = len(passages)
    marks = list(_MARK.finditer(answer))
    cited: dict[int, tuple[str | None, int | None, int | None]] = {}
    for m in marks:
        for n in _numbers(m):
            if not 1 <= n <= n_pass:
                errors.append(f"[{n}] does not exist: there are only {n_pass} passages (1–{n_pass}).")
            else:
                cited.setdefault(n, (None, None, None))

    for q in _QUOTES.finditer(answer):
        quote = next(g for g in q.groups() if g is not None)
        if len(quote.strip(_EDGE_PUNCT)) < 2:
            continue
        numbers = _adjacent_citations(answer, q.start(), q.end(), marks)
        if not numbers:
            continue
        valid_numbers = [n for n in numbers if 1 <= n <= n_pass]
        found = None
        for n in valid_numbers:
            span = find_in_passage(quote, passages[n - 1].chunk.text)
            if span is not None:
                found = (n, span)
                break
        if found is None:
            if valid_numbers:
                errors.append(f"The quote \"{quote[:80]}\" is not in passage "
                              + " or ".join(f"[{n}]" for n in valid_numbers) + ".")
            continue
        n, (s, e) = found
        base = passages[n - 1].chunk.start
        if cited.get(n, (None,))[0] is None:
            cited[n] = (passages[n - 1].chunk.text[s:e], base + s, base + e)

    errors.extend(_unsupported(answer, passages, question))
    if marks and not _WORD.search(_MARK.sub("", answer)):
        errors.append(NO_CONTENT)
    # "Passage [2] does not mention Walter Reed." is a refusal too, marks or not
    refusal = is_refusal(answer) and all(is_refusal(s) for s in _sentences(answer) if _MARK.search(s))
    if n_pass and not marks and not refusal and answer.strip():
        errors.append(NO_CITATION)
    if marks:
        for sentence in _sentences(answer):
            if len(sentence) >= 25 and not _MARK.search(sentence) and not is_refusal(sentence):
                warnings.append(f"{UNCITED}{sentence[:80]}")

    citations = tuple(
        Citation(
            n=n, kb=passages[n - 1].kb, doc_id=passages[n - 1].chunk.doc_id, path=passages[n - 1].chunk.path,
            pages=passages[n - 1].chunk.pages, heading_path=passages[n - 1].chunk.heading_path,
            start=passages[n - 1].chunk.start, end=passages[n - 1].chunk.end,
            quote=quote, quote_start=qs, quote_end=qe,
        )
        for n, (quote, qs, qe) in sorted(cited.items())
    )
    return Validation(not errors, tuple(dict.fromkeys(errors)), tuple(warnings), citations, refusal)


UNCITED = "Uncited claim: "
NO_CONTENT = "The answer is only citation marks: answer the question in words and cite it with [n]."
NO_CITATION = "The answer cites no passage: mark each key fact with [n]."


def attach_citations(answer: str, passages: Sequence[Hit], min_coverage: float = 0.8) -> str | None:
    """For an answer without any [n]: cite, after each sentence, the passage that contains at
    least ``min_coverage`` of its words (same script). None when a sentence has no such passage,
    so only answers that are plainly taken from a passage are cited this way."""
    sentences = [s for s in _sentences(answer) if s]
    if not sentences or _MARK.search(answer):
        return None
    vocab = _vocabularies(passages)
    out = []
    for sentence in sentences:
        cover = _coverage(sentence, vocab)
        if cover is None:
            out.append(sentence)
            continue
        if not cover or max(cover) < min_coverage:
            return None
        end = len(sentence.rstrip("。.!?！？"))
        out.append(f"{sentence[:end]} [{cover.index(max(cover)) + 1}]{sentence[end:]}")
    return " ".join(out)


def cite_uncited(answer: str, passages: Sequence[Hit], min_coverage: float = 0.8) -> str:
    """In an answer that cites, add [n] to each uncited sentence (of the length validation flags)
    that passage n plainly contains (``min_coverage`` of its words). Other text is unchanged."""
    if not _MARK.search(answer):
        return answer
    vocab = _vocabularies(passages)
    return _per_sentence(answer, lambda piece: _cite_sentence(piece, vocab, min_coverage))


def repoint_citations(answer: str, passages: Sequence[Hit], min_coverage: float = 0.8) -> str:
    """Fix a wrong passage number: a sentence whose cited passages do not plainly contain it
    (``min_coverage`` of its words) while another passage does gets that passage's [n] instead.
    Short sentences (under 4 distinct words) are left alone: too many passages would match."""
    vocab = _vocabularies(passages)
    return _per_sentence(answer, lambda piece: _repoint_sentence(piece, vocab, min_coverage))


def _per_sentence(answer: str, fix: Callable[[str], str]) -> str:
    text = _TRAILING_MARKS.sub(lambda m: m.group(2) + m.group(1), answer)
    out: list[str] = []
    pos = 0
    for m in _SENTENCE_SPLIT.finditer(text):
        out.append(fix(text[pos:m.start()]) + m.group())
        pos = m.end()
    out.append(fix(text[pos:]))
    fixed = "".join(out)
    return fixed if fixed != text else answer


def _vocabularies(passages: Sequence[Hit]) -> list[set[str]]:
    from ..text.tokenize import tokenize

    return [set(tokenize(h.chunk.text)) for h in passages]


def _coverage(claim: str, vocab: Sequence[set[str]], min_words: int = 1) -> list[float] | None:
    """Share of the claim's distinct words found in each passage's vocabulary; None for too short
    a claim."""
    from ..text.tokenize import tokenize

    words = set(tokenize(claim))
    if len(words) < min_words:
        return None
    return [len(words & v) / len(words) for v in vocab]


def _cite_sentence(piece: str, vocab: Sequence[set[str]], min_coverage: float) -> str:
    sentence = piece.strip()
    if len(sentence) < 25 or _MARK.search(sentence) or is_refusal(sentence) or sentence.startswith("#"):
        return piece
    cover = _coverage(sentence, vocab)
    if not cover or max(cover) < min_coverage:
        return piece
    best = cover.index(max(cover))
    body = piece.rstrip()
    end = len(body.rstrip("。.!?！？"))
    return f"{body[:end]} [{best + 1}]{body[end:]}{piece[len(body):]}"


def _repoint_sentence(piece: str, vocab: Sequence[set[str]], min_coverage: float) -> str:
    marks = list(_MARK.finditer(piece))
    claim = _MARK.sub(" ", piece)
    if not marks or is_refusal(claim):
        return piece
    cover = _coverage(claim, vocab, min_words=4)
    if not cover or max(cover) < min_coverage:
        return piece
    cited = [n for m in marks for n in _numbers(m) if 1 <= n <= len(vocab)]
    if cited and max(cover[n - 1] for n in cited) >= min_coverage:
        return piece
    best = cover.index(max(cover))
    first = marks[0]
    return piece[: first.start()] + f"[{best + 1}]" + _MARK.sub("", piece[first.end():])


def _adjacent_citations(answer: str, qstart: int, qend: int, marks: Sequence[re.Match[str]]) -> list[int]:
    """Citations that belong to the quote at [qstart, qend): the first marks after it in the same
    sentence, else a mark right before it."""
    end_of_sentence = _SENTENCE_END.search(answer, qend)
    limit = end_of_sentence.end() + 12 if end_of_sentence else len(answer)
    after = [m for m in marks if qend <= m.start() <= limit]
    if after:
        # the quote's own group of marks: consecutive marks starting at the first one
        group = [after[0]]
        for m in after[1:]:
            if answer[group[-1].end():m.start()].strip(" ,，、") == "":
                group.append(m)
        return [n for m in group for n in _numbers(m)]
    before = [m for m in marks if m.end() <= qstart and qstart - m.end() <= 3]
    return _numbers(before[-1]) if before else []


def _unsupported(answer: str, passages: Sequence[Hit], question: str = "") -> list[str]:
    """Sentences whose cited passages do not support them lexically (same script only: an English
    answer may cite a Chinese passage):

    * the sentence shares no content word with any passage it cites ("Arr, 42 doubloons [1]");
    * the sentence restates at least two of the question's key terms that no cited passage
      mentions (the question asks about "adoptive parents", the passage only about "paid leave"):
      the typical answer to an unanswerable question.
    """
    from pathlib import Path

    from ..text.tokenize import cjk_ratio, tokenize

    question_terms = {t for t in tokenize(question) if len(t) >= 4 or cjk_ratio(t) > 0}
    problems = []
    for sentence in _sentences(answer):
        numbers = [n for m in _MARK.finditer(sentence) for n in _numbers(m) if 1 <= n <= len(passages)]
        claim = _MARK.sub(" ", sentence)
        words = set(tokenize(claim))
        if not numbers or len(words) < 2 or is_refusal(sentence):
            continue
        cites = "".join(f"[{n}]" for n in dict.fromkeys(numbers))
        contexts = []
        for n in numbers:
            chunk = passages[n - 1].chunk
            if (cjk_ratio(claim) > 0.5) != (cjk_ratio(chunk.text) > 0.5):
                break  # cross-language citation: not judged lexically
            contexts.append(set(tokenize(" ".join([chunk.text, *chunk.heading_path, Path(chunk.path).stem]))))
        else:
            known = set().union(*contexts)
            if not words & known:
                problems.append(f"\"{claim.strip()[:80]}\" is not supported by passage {cites}: "
                                "it shares no words with it.")
                continue
            asked = words & question_terms
            missing = sorted(asked - known)
            if len(missing) >= 2 and len(missing) * 2 >= len(asked):
                problems.append(f"Passage {cites} does not mention {', '.join(missing[:5])}: "
                                "it does not answer the question; say so if no passage does.")
    return problems


_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?])|(?<=\.)\s+|\n+")
_TRAILING_MARKS = re.compile(r"([.。!?！？])((?:\s*[\[【]\s*\d{1,3}(?:\s*[,，、]\s*\d{1,3})*\s*[\]】])+)")


def _sentences(text: str) -> list[str]:
    # "… per year. [1]" — a citation after the full stop belongs to the sentence before it
    text = _TRAILING_MARKS.sub(lambda m: m.group(2) + m.group(1), text)
    parts = _SENTENCE_SPLIT.split(text)
    return [p.strip() for p in parts if p and p.strip() and not p.strip().startswith("#")]
