"""Mechanical repairs of an answer's citations, tried before asking the model again (no LLM):
cite an uncited answer plainly taken from one passage (or, sentence by sentence, to the
passage whose claim checks it passes), renumber a sentence cited to the wrong
passage, re-cite an unsupported sentence to the first other passage that supports it, remove
sentences no passage supports. Every repair is only a candidate: the pipeline keeps it
when :func:`~desktop_kb.verify.citations.validate` accepts it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..types import Hit
from .citations import _MARK, _SENTENCE_SPLIT, _TRAILING_MARKS, _WORD, _numbers, _sentences, is_refusal

__all__ = [
    "attach_citations", "cite_by_support", "cite_uncited", "cite_what_stands", "recite_unsupported", "remove_sentences",
    "repoint_citations"]


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
        out.append(_marked(sentence, cover.index(max(cover)) + 1))
    return " ".join(out)


def cite_by_support(answer: str, n_passages: int, supported: Callable[[str], bool]) -> str | None:
    """For an answer without any [n] that :func:`attach_citations` could not cite (a short
    answer, "1992年。", shares too few words with any passage): cite each sentence to the first
    passage, in passage order, under which it passes ``supported`` (the claim checks, which leave
    the question's own words out of the count). None when a sentence has no such passage."""
    sentences = [s for s in _sentences(answer) if s]
    if not sentences or _MARK.search(answer) or is_refusal(answer):
        return None
    out = []
    for sentence in sentences:
        cited = next((c for c in (_marked(sentence, n) for n in range(1, n_passages + 1)) if supported(c)), None)
        if cited is None:
            return None
        out.append(cited)
    return " ".join(out)


def cite_what_stands(answer: str, n_passages: int, supported: Callable[[str], bool]) -> tuple[str, list[str]]:
    """A summary's sentences, each cited to a passage under which it passes ``supported`` (its own
    marks first, then the passages in order), and the sentences no passage supports, left out:
    (the cited text, the sentences left out). A long answer of many facts stands by each of them,
    not all or nothing."""
    kept: list[str] = []
    dropped: list[str] = []
    for sentence in (s for s in _sentences(answer) if s):
        bare = _MARK.sub("", sentence).strip()
        own = [sentence] if _MARK.search(sentence) else []
        tries = [*own, *(_marked(bare, n) for n in range(1, n_passages + 1))]
        cited = next((c for c in tries if _WORD.search(_MARK.sub("", c)) and supported(c)), None)
        (kept if cited is not None else dropped).append(cited if cited is not None else sentence)
    return " ".join(kept), dropped


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


def recite_unsupported(answer: str, unsupported: Sequence[str], n_passages: int,
                       supported: Callable[[str], bool]) -> str | None:
    """Each unsupported sentence cited instead to another passage: the first, in passage order,
    under which the sentence alone passes ``supported`` (the claim checks). None when one of them
    has no such passage. The whole answer still has to validate afterwards."""
    text = answer
    for sentence in unsupported:
        target = sentence.strip()
        cited = {n for m in _MARK.finditer(target) for n in _numbers(m)}
        for n in range(1, n_passages + 1):
            if n in cited:
                continue
            recited = _recite(target, n)
            if supported(recited):
                text = _per_sentence(text, lambda piece, t=target, r=recited: r if piece.strip() == t else piece)
                break
        else:
            return None
    return text if text != answer else None


def _marked(sentence: str, n: int) -> str:
    """``sentence`` with `` [n]`` before its closing punctuation ("Paid in 30 days [1].")."""
    end = len(sentence.rstrip("。.!?！？"))
    return f"{sentence[:end]} [{n}]{sentence[end:]}"


def _recite(sentence: str, n: int) -> str:
    """``sentence`` with its first mark replaced by [n] and its other marks dropped."""
    first = next(_MARK.finditer(sentence), None)
    if first is None:
        return sentence
    return sentence[: first.start()] + f"[{n}]" + _MARK.sub("", sentence[first.end():])


def remove_sentences(answer: str, sentences: Sequence[str]) -> str:
    """``answer`` without the given sentences (as :func:`_sentences` cuts them); "" when nothing
    with words is left."""
    drop = {s.strip() for s in sentences}
    text = _TRAILING_MARKS.sub(lambda m: m.group(2) + m.group(1), answer)
    kept: list[str] = []
    pos = 0
    for m in [*_SENTENCE_SPLIT.finditer(text), None]:
        end = m.end() if m else len(text)
        piece = text[pos:end]
        pos = end
        if piece.strip() and piece.strip() not in drop:
            kept.append(piece)
    rest = "".join(kept).strip()
    return rest if _WORD.search(_MARK.sub("", rest)) else ""


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
    return _marked(body, best + 1) + piece[len(body):]


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
