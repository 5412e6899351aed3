"""Citation validation: every ``[n]`` names a real passage, every quoted excerpt next to ``[n]``
is really in passage n (whitespace-, width- and case-insensitive; CJK and Latin quotes), and an
answer that used passages cites at least one. Produces structured citations with offsets."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..text.tokenize import cjk_ratio, is_chinese, reads_as_chinese, tokenize
from ..types import Citation, Hit
from .answer_type import answer_kind_mismatch, echoes_question
from .binding import check_binding
from .claim_terms import NOT_AFTER
from .question import check_question
from .support import Claim, PassageView, Similarity, TermStats, check_claim
from .support import evidence as support_evidence

__all__ = [
    "ECHO", "NO_CITATION", "NO_CONTENT", "WRONG_LANGUAGE", "Validation", "echoes_prompt", "find_in_passage",
    "is_refusal", "mark_numbers", "normalise", "validate", "wrong_language",
]

_MARK = re.compile(r"[\[【]\s*(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)\s*[\]】]")
_QUOTES = re.compile(r"“([^”]{2,400})”|「([^」]{2,400})」|『([^』]{2,400})』|\"([^\"\n]{2,400})\"")
_WORD = re.compile(r"[^\W_]")
_SENTENCE_END = re.compile(rf"[。！？!?\n]|{NOT_AFTER}\.(?=\s|$)")  # not after an initial ("T. S. Eliot"), "Ms."
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
    # cited sentences that no cited passage supports: (sentence as in the answer, why)
    unsupported: tuple[tuple[str, str], ...] = ()


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


def _binding(claim: Claim, n: int, view: PassageView, question: str, stats: TermStats | None) -> str | None:
    chunk = view.hit.chunk
    sentences = [view.text[s:e] for s, e, _ in view.sentences]
    return check_binding(claim.text, n, view.text, sentences, question, stats, topic=" ".join(chunk.heading_path))


def is_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text))


# what a refusal is about: the passages, the documents, what is (not) given ("我": the model itself)
_ABOUT_SOURCES = re.compile(r"\b(?:passages?|documents?|texts?|sources?|context|information|provided)\b|"
                            r"段落|文档|文件|资料|文本|上下文|信息|我", re.IGNORECASE)


def _refuses(sentence: str) -> bool:
    """A sentence that declines to answer. A cited one must speak of the passages ("Passage [2]
    does not mention …"); "There is no limit on meals [1]" is a claim about the world, checked
    like any other (it was taken for a refusal and shown as one)."""
    return is_refusal(sentence) and (not _MARK.search(sentence) or bool(_ABOUT_SOURCES.search(sentence)))


def _numbers(mark: re.Match[str]) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", mark.group(1))]


def mark_numbers(text: str) -> list[int]:
    """The passage numbers of ``text``'s citation marks, in order ("[1, 3]" gives 1 and 3)."""
    return [n for m in _MARK.finditer(text) for n in _numbers(m)]


def validate(
    answer: str,
    passages: Sequence[Hit],
    question: str = "",
    *,
    stats: TermStats | None = None,
    similarity: Similarity | None = None,
) -> Validation:
    """The one check of an answer against its passages (the pipeline and the eval call it):
    citation marks, quotes, claim support per cited sentence (:mod:`.support`), whether the cited
    passages answer the question, echoes of our own prompts and the answer's language.
    ``stats`` (the knowledge base's document frequencies) tells rare words from common ones;
    ``similarity`` (the embedder) judges claims made in another language than their passage."""
    marks = list(_MARK.finditer(answer))
    errors, cited = _marked(marks, len(passages))
    view_of: dict[int, PassageView] = {}  # one view a passage: its evidence text is worked out once

    def view(n: int) -> PassageView:
        if n not in view_of:
            view_of[n] = PassageView(passages[n - 1])
        return view_of[n]

    verified = _check_quotes(answer, marks, passages, cited, view, errors)
    claims = _check_claims(answer, question, len(passages), {n: view(n) for n in cited}, verified, stats,
                           similarity, errors)
    # "Passage [2] does not mention Walter Reed." is a refusal too, marks or not
    refusal = is_refusal(answer) and all(_refuses(s) for s in _sentences(answer) if _MARK.search(s))
    errors += _form_errors(answer, question, marks, len(passages), refusal)
    warnings = [f"{UNCITED}{s[:80]}" for s in _sentences(answer)
                if marks and len(s) >= 25 and not _MARK.search(s) and not is_refusal(s)]
    return Validation(not errors, tuple(dict.fromkeys(errors)), tuple(warnings),
                      _citations(passages, cited, claims.evidence), refusal, tuple(claims.unsupported))


Cited = dict[int, tuple[str | None, int | None, int | None]]  # n -> (quote, its start, its end)


def _marked(marks: Sequence[re.Match[str]], n_pass: int) -> tuple[list[str], Cited]:
    """The passages the marks cite, and an error for each mark naming no passage."""
    errors: list[str] = []
    cited: Cited = {}
    for m in marks:
        for n in _numbers(m):
            if not 1 <= n <= n_pass:
                errors.append(f"[{n}] does not exist: there are only {n_pass} passages (1–{n_pass}).")
            else:
                cited.setdefault(n, (None, None, None))
    return errors, cited


def _check_quotes(answer: str, marks: Sequence[re.Match[str]], passages: Sequence[Hit], cited: Cited,
                  view: Callable[[int], PassageView], errors: list[str]) -> list[str]:
    """The quotes found in the passages they cite (each passage's first one becomes its
    citation's quote, in ``cited``); a quote of 4+ characters found in none is an error."""
    n_pass = len(passages)
    all_cited = sorted(cited)
    verified: list[str] = []
    for q in _QUOTES.finditer(answer):
        quote = next(g for g in q.groups() if g is not None)
        if len(quote.strip(_EDGE_PUNCT)) < 2:
            continue
        # a quote is checked against the passages it cites: its own marks, else the marks of its
        # sentence, else every passage the answer cites (any passage when it cites none)
        numbers = (_adjacent_citations(answer, q.start(), q.end(), marks)
                   or _sentence_citations(answer, q.start(), marks) or all_cited or list(range(1, n_pass + 1)))
        valid_numbers = [n for n in numbers if 1 <= n <= n_pass]
        found = None
        for n in valid_numbers:
            span = find_in_passage(quote, view(n).text)  # not an instruction (directives blanked)
            if span is not None:
                found = (n, span)
                break
        if found is None:
            if valid_numbers and len(quote.strip(_EDGE_PUNCT)) >= 4:
                errors.append(f"The quote \"{quote[:80]}\" is not in passage "
                              + " or ".join(f"[{n}]" for n in valid_numbers) + ".")
            continue
        n, (s, e) = found
        verified.append(quote)
        base = passages[n - 1].chunk.start
        if cited.get(n, (None,))[0] is None:
            cited[n] = (passages[n - 1].chunk.text[s:e], base + s, base + e)
    return verified


@dataclass
class _Claims:
    unsupported: list[tuple[str, str]] = field(default_factory=list)  # (sentence, why)
    evidence: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # n -> supporting spans


def _check_claims(answer: str, question: str, n_pass: int, views: dict[int, PassageView], verified: Sequence[str],
                  stats: TermStats | None, similarity: Similarity | None, errors: list[str]) -> _Claims:
    """Each cited sentence against its passages (support, then binding); then whether the
    supported claims, together, answer the question."""
    q_tokens = set(tokenize(question))
    claims: list[Claim] = []
    out = _Claims()
    for sentence in _sentences(answer):
        numbers = [n for m in _MARK.finditer(sentence) for n in _numbers(m) if 1 <= n <= n_pass]
        text = _MARK.sub(" ", sentence).strip()
        if not numbers or not _WORD.search(text) or _refuses(sentence):
            continue
        claim = Claim.of(text, numbers, any(q in sentence for q in verified))
        vs = [views[n] for n in claim.numbers]
        problem = check_claim(claim, vs, q_tokens, stats, similarity) if len(claim.tokens) >= 1 else None
        if problem is None and len(vs) == 1 and not claim.quoted and vs[0].cjk == reads_as_chinese(text):
            problem = _binding(claim, claim.numbers[0], vs[0], question, stats)
        if problem:
            errors.append(f"\"{text[:80]}\": {problem}.")
            out.unsupported.append((sentence, problem))
            continue
        claims.append(claim)
        for i, s, e in support_evidence(claim, vs):
            base = vs[i].hit.chunk.start
            out.evidence.setdefault(claim.numbers[i], []).append((base + s, base + e))
    about = check_question(question, claims, views, stats)
    if about:
        errors.append(about)
    return out


def _form_errors(answer: str, question: str, marks: Sequence[re.Match[str]], n_pass: int,
                 refusal: bool) -> list[str]:
    """What is wrong with the answer's form: only marks, our own prompt echoed, only the
    question's words, not the kind of answer asked for, no citation, the other language."""
    errors = []
    if marks and not _WORD.search(_MARK.sub("", answer)):
        errors.append(NO_CONTENT)
    if echoes_prompt(answer):
        errors.append(ECHO)
    elif marks and not refusal and question:
        said = _MARK.sub("", answer)
        if echoes_question(said, question):
            errors.append(REPEATS_QUESTION)
        elif kind := answer_kind_mismatch(question, said):
            errors.append(OTHER_KIND.format(kind=kind))
    if n_pass and not marks and not refusal and answer.strip():
        errors.append(NO_CITATION)
    if question and wrong_language(answer, question):
        errors.append(WRONG_LANGUAGE)
    return errors


def _citations(passages: Sequence[Hit], cited: Cited, evidence: dict[int, list[tuple[int, int]]]
               ) -> tuple[Citation, ...]:
    out = []
    for n, (quote, qs, qe) in sorted(cited.items()):
        chunk = passages[n - 1].chunk
        out.append(Citation(n=n, kb=passages[n - 1].kb, doc_id=chunk.doc_id, path=chunk.path, pages=chunk.pages,
                            heading_path=chunk.heading_path, start=chunk.start, end=chunk.end, quote=quote,
                            quote_start=qs, quote_end=qe, evidence=tuple(dict.fromkeys(evidence.get(n, ())))))
    return tuple(out)


UNCITED = "Uncited claim: "
NO_CONTENT = "The answer is only citation marks: answer the question in words and cite it with [n]."
NO_CITATION = "The answer cites no passage: mark each key fact with [n]."
ECHO = "The answer repeats these instructions instead of answering: answer the question itself."
REPEATS_QUESTION = ("The answer only repeats words of the question: give what the passages say is the answer "
                    "to it, and cite that.")
OTHER_KIND = ("The question asks for {kind}, and the answer is not one: give what the passages say is the answer "
              "to this question, and cite it.")
WRONG_LANGUAGE = "The answer is not in the question's language: write it in the language of the question."
# Our own prompt texts: an answer that repeats them is no answer.
_PROMPT_ECHOES = (
    "citation problems", "rewrite the whole answer", "cite only passages", "only quote words that appear",
    "answer from the passages only", "data only, not instructions", "the answer cites no passage",
    "mark each key fact with", "you answer questions using only", "is not supported by passage",
    "is not in the question's language", "请用中文回答",
)


def echoes_prompt(answer: str) -> bool:
    folded = " ".join(answer.lower().split())
    return any(p in folded for p in _PROMPT_ECHOES)


def wrong_language(answer: str, question: str) -> bool:
    """A Chinese question answered in English or the other way round (quotes and citation marks
    aside; names in Latin letters inside a Chinese answer are fine)."""
    body = _QUOTES.sub(" ", _MARK.sub(" ", answer))
    if sum(ch.isalpha() for ch in body) < 12:
        return False
    q_zh, a_zh = is_chinese(question), cjk_ratio(body)
    return (q_zh and a_zh < 0.15) or (not q_zh and cjk_ratio(question) == 0 and a_zh > 0.6)


def _sentence_citations(answer: str, at: int, marks: Sequence[re.Match[str]]) -> list[int]:
    """The marks of the sentence around position ``at``."""
    starts = [m.end() for m in _SENTENCE_END.finditer(answer, 0, at)]
    lo = starts[-1] if starts else 0
    end = _SENTENCE_END.search(answer, at)
    hi = end.end() + 12 if end else len(answer)
    return [n for m in marks if lo <= m.start() <= hi for n in _numbers(m)]


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


_SENTENCE_SPLIT = re.compile(rf"(?<=[。！？!?])|(?<={NOT_AFTER}\.)\s+|\n+")
_TRAILING_MARKS = re.compile(r"([.。!?！？])((?:\s*[\[【]\s*\d{1,3}(?:\s*[,，、]\s*\d{1,3})*\s*[\]】])+)")


def _sentences(text: str) -> list[str]:
    # "… per year. [1]" — a citation after the full stop belongs to the sentence before it
    text = _TRAILING_MARKS.sub(lambda m: m.group(2) + m.group(1), text)
    parts = _SENTENCE_SPLIT.split(text)
    return [p.strip() for p in parts if p and p.strip() and not p.strip().startswith("#")]
