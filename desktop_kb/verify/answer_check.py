"""After the model has answered: the one check that accepts, repairs or withholds an answer.

    validate (citations, quotes, claim support: the fast word and figure gate)
    → mechanical repairs, else a correction retry (only when ``regenerate`` is given)
    → drop unsupported sentences when the rest stands → an answer in the other language is noted
    → cite the sentences the model left uncited
    → the meaning decision: with the trained verifier (``options.verify``), a verdict per cited
      sentence (:mod:`.graded`: supported, uncertain, unsupported — withheld); else the LLM judge:
      does the cited evidence state *this answer* to *this question*? (one LLM call)

``ask`` runs :func:`check_answer` on the generated text, with ``regenerate`` asking the model
again; ``desktop-kb eval claims`` runs the same function on given answers with no generation
(``regenerate=None``: no retry), so what it measures is what the app does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..errors import GenerationError
from ..progress import CancelToken, timed
from ..protocols import SpanJudge, Verifier, YesNoScorer
from ..text.term_stats import TermStats
from ..text.tokenize import language_of
from ..types import Answerability, Citation, Hit, SentenceVerdict
from .citations import NO_CITATION, WRONG_LANGUAGE, Validation
from .conditions import dropped_cases, quote_cases
from .graded import Thresholds, grade
from .judge import NOT_JUDGED, judge, rejection_reason
from .question import missing_terms
from .refusal import NOT_STATED, UNSUPPORTED, best_sentence, drafted_wrong, not_stated, uncovered, unsupported
from .repair import (
    attach_citations,
    cite_by_support,
    cite_uncited,
    cite_what_stands,
    recite_unsupported,
    remove_sentences,
    repoint_citations,
)
from .subject import absent_subject
from .support import PassageView, cite_marks

__all__ = ["CheckOptions", "Checked", "check_answer", "language", "with_conditions"]


# (the text so far, its validation) -> the model's new answer, asked with the problems named
Regenerate = Callable[[str, Validation], str]


def language(text: str) -> str:
    return language_of(text)


@dataclass(frozen=True)
class CheckOptions:
    """The settings the check reads (``query.*``)."""

    retries: int = 2  # correction retries of the model (``query.citation_retries``)
    judge: bool = True
    threshold: float = 0.0  # the judge's threshold for English questions
    threshold_cjk: float = -0.6  # … for Chinese ones
    margin_weak_retrieval: float = 0.0  # added when retrieval was weak
    margin_missing_term: float = 0.0  # added when a key term of the question is in no cited passage
    margin_missing_term_cjk: float = 0.0  # … for Chinese questions
    margin_per_dense: float = 0.0  # added per unit of the embedder's top-1 cosine below dense_reference
    dense_reference: float = 0.0
    verify: bool = False  # the trained verifier decides meaning (when one is given), not the judge
    thresholds: Thresholds = field(default_factory=Thresholds)  # its verdicts' thresholds
    judge_uncertain: bool = False  # with the verifier: the judge decides an answer it is unsure of

    def threshold_for(self, question: str, *, weak_retrieval: bool = False, missing_terms: int = 0,
                      best_dense: float | None = None) -> float:
        zh = language(question) == "zh"
        base = self.threshold_cjk if zh else self.threshold
        missing = self.margin_missing_term_cjk if zh else self.margin_missing_term
        dense = self.margin_per_dense * max(0.0, self.dense_reference - best_dense) if best_dense is not None else 0.0
        return round(base + self.margin_weak_retrieval * weak_retrieval + missing * (missing_terms > 0) + dense, 4)

    @classmethod
    def of(cls, query: Any, embedder_id: str = "", calibrated_thresholds: Thresholds | None = None) -> CheckOptions:
        """From the ``query`` settings; the dense margin only for the embedder it was calibrated
        on (``embedder_id``, the one whose top-1 cosine the check is given); the verifier's
        thresholds are the settings' where set, else the model's own (``calibrated_thresholds``)."""
        model = calibrated_thresholds or Thresholds()
        thresholds = Thresholds(
            query.verifier_refuse_below if query.verifier_refuse_below >= 0 else model.refuse_below,
            query.verifier_support_from if query.verifier_support_from >= 0 else model.support_from)
        calibrated = not embedder_id or embedder_id.startswith(query.judge_dense_embedder)
        return cls(retries=query.citation_retries, judge=query.judge, threshold=query.judge_threshold,
                   threshold_cjk=query.judge_threshold_cjk, margin_weak_retrieval=query.judge_margin_weak_retrieval,
                   margin_missing_term=query.judge_margin_missing_term,
                   margin_missing_term_cjk=query.judge_margin_missing_term_cjk,
                   margin_per_dense=query.judge_margin_per_dense if calibrated else 0.0,
                   dense_reference=query.judge_dense_reference, verify=query.verifier, thresholds=thresholds,
                   judge_uncertain=query.verifier_judge_uncertain)


@dataclass(frozen=True)
class Checked:
    """What the check decided: the text to show, and why an answer was refused or withheld."""

    status: Literal["answered", "refused"]
    text: str
    validation: Validation
    citations: tuple[Citation, ...] = ()  # of the text shown (none on a refusal by the check)
    problems: tuple[str, ...] = ()
    removed: tuple[tuple[str, str], ...] = ()  # sentences taken out: (sentence, why)
    judge_score: float | None = None
    withheld: Checked | None = None  # the answer the judge withheld (it stood every word check)
    answerability: Answerability | None = None
    verdicts: tuple[SentenceVerdict, ...] = ()  # the verifier's, per cited sentence (of the text shown)
    refusal: str = ""  # why refused (:mod:`.refusal`): "not_stated" or "unsupported"; "" when answered

    @property
    def accepted(self) -> bool:
        return self.status == "answered"


class _Draft:
    """The answer text and its validation while repairs are tried."""

    def __init__(self, text: str, validate_text: Callable[[str], Validation], timings: dict[str, float]) -> None:
        self._validate, self._timings = validate_text, timings
        self.text = text
        self.check = self.validate(text)

    def validate(self, text: str) -> Validation:
        with timed(self._timings, "validate"):
            return self._validate(text)

    def accept(self, candidate: str | None) -> bool:
        """Take a mechanically fixed text when it changes something and validates."""
        if candidate is None or candidate == self.text:
            return False
        recheck = self.validate(candidate)
        if recheck.valid:
            self.text, self.check = candidate, recheck
        return recheck.valid

    def repair(self, passages: Sequence[Hit]) -> bool:
        """The mechanical repairs, in order; True when one made the answer valid."""
        text, check = self.text, self.check
        # a sentence cited with the wrong number, plainly taken from another passage: renumber it
        if self.accept(repoint_citations(text, passages)):
            return True
        # a right answer without [n] (small models do this): cite it only if every sentence is
        # plainly taken from one passage
        if list(check.errors) == [NO_CITATION] and (
                self.accept(attach_citations(text, passages))
                or self.accept(cite_by_support(text, len(passages), lambda t: self.validate(t).valid))):
            return True
        # an unsupported sentence that another passage supports (the model cited the wrong one)
        return bool(check.unsupported) and self.accept(recite_unsupported(
            text, [s for s, _ in check.unsupported], len(passages), lambda t: self.validate(t).valid))


NO_PASSAGE_SAYS = {"en": "no passage of the part read says it", "zh": "所读部分没有一段说明这一点"}


def _summary_checks(draft: _Draft, passages: Sequence[Hit], lang: str) -> tuple[tuple[str, str], ...] | None:
    """A section or document answer (many facts, from many passages): each sentence cited to the
    passage it stands in, the others withheld with their reason, when some stand (None: none)."""
    if draft.check.valid or draft.check.refusal:
        return None
    kept, dropped = cite_what_stands(draft.text, len(passages), lambda t: draft.validate(t).valid)
    if not kept or not draft.accept(kept):
        return None
    return tuple((sentence, NO_PASSAGE_SAYS[lang]) for sentence in dropped)


def _word_checks(draft: _Draft, passages: Sequence[Hit], options: CheckOptions,
                 regenerate: Regenerate | None, *, summary: str = "") -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """Repairs and retries until the answer validates or they run out; then the fallbacks that
    keep a mostly good answer. Returns (removed sentences, language note). A ``summary`` (its
    language; a section or document answer) keeps the sentences that stand before any retry."""
    if summary:
        stood = _summary_checks(draft, passages, summary)
        if stood is not None:
            return stood + _cite_uncited(draft, passages), ()
    attempt = 0
    retries = options.retries if regenerate is not None else 0
    while not draft.check.valid and attempt <= retries:
        if draft.repair(passages) or attempt == retries or regenerate is None:
            break
        attempt += 1
        draft.text = regenerate(draft.text, draft.check)
        draft.check = draft.validate(draft.text)
    removed: tuple[tuple[str, str], ...] = ()
    if not draft.check.valid and draft.check.unsupported:
        # the unsupported sentences go when the rest of the answer stands on its own
        unsupported = draft.check.unsupported
        rest = remove_sentences(draft.text, [sentence for sentence, _ in unsupported])
        if rest and draft.accept(rest):
            removed = unsupported
    note: tuple[str, ...] = ()
    check = draft.check
    if not check.valid and list(check.errors) == [WRONG_LANGUAGE]:
        # a supported answer in the other language beats a refusal; the user is told
        draft.check = Validation(True, (), check.warnings, check.citations, check.refusal)
        note = (WRONG_LANGUAGE,)
    if draft.check.valid:
        # sentences the model left uncited (or cited across languages to the wrong passage): cite
        # those a passage plainly says, flag the rest
        removed += _cite_uncited(draft, passages)
    return removed, note


def _cite_uncited(draft: _Draft, passages: Sequence[Hit]) -> tuple[tuple[str, str], ...]:
    """Cite the sentences a passage plainly says. One that then fails the checks (its words are
    the passage's, a figure or a name is not: "delivered within five days" over "two") is
    withheld, not left standing uncited and unchecked; the others stay."""
    candidate = cite_uncited(repoint_citations(draft.text, passages), passages)
    if candidate is None or candidate == draft.text or draft.accept(candidate):
        return ()
    bad = draft.validate(candidate).unsupported
    rest = remove_sentences(candidate, [sentence for sentence, _ in bad]) if bad else None
    return tuple(bad) if rest and draft.accept(rest) else ()


def with_conditions(question: str, checked: Checked, passages: Sequence[Hit],
                    validate_text: Callable[[str], Validation], timings: dict[str, float]) -> Checked:
    """An accepted answer that gives one figure of a passage sentence holding others of its unit
    for other cases, with that sentence quoted (:mod:`.conditions`); the check's decision is not
    touched, so the pipeline adds it after :func:`check_answer`."""
    cases = dropped_cases(checked.text, checked.citations, passages) if checked.accepted else []
    if not cases:
        return checked
    quoted = quote_cases(checked.text, cases, language(question))
    with timed(timings, "validate"):
        check = validate_text(quoted)
    return replace(checked, text=quoted, validation=check, citations=check.citations) if check.valid else checked


def check_answer(
    question: str,
    text: str,
    passages: Sequence[Hit],
    validate_text: Callable[[str], Validation],
    *,
    options: CheckOptions,
    scorer: YesNoScorer | SpanJudge | None = None,
    verifier: Verifier | None = None,
    regenerate: Regenerate | None = None,
    judged: bool = True,
    stats: TermStats | None = None,
    weak_retrieval: bool = False,
    best_dense: float | None = None,
    cancel: CancelToken | None = None,
    timings: dict[str, float] | None = None,
    judge_question: Callable[[Sequence[Citation]], str] | None = None,
) -> Checked:
    """The decision on ``text``, the model's answer to ``question`` over ``passages``.
    ``validate_text`` is :func:`~desktop_kb.verify.citations.validate` bound to the passages, the
    question and the knowledge base's statistics; ``scorer`` the LLM that judges (None: not
    judged); ``judged=False`` skips the judge (a section or document summary). What else the
    pipeline knows of whether the documents answer the question (``weak_retrieval``, and the key
    terms of the question that no cited passage has, by ``stats``) raises the score the judge's
    verdict must reach (``options``' margins). ``judge_question`` gives the question as the judge
    reads it over the cited passages (in their language; default: as asked)."""
    timings = {} if timings is None else timings
    draft = _Draft(text, validate_text, timings)
    removed, note = _word_checks(draft, passages, options, regenerate, summary="" if judged else language(question))
    check = draft.check
    if not check.valid:
        if uncovered(question, passages):  # the question speaks of what no passage has
            return Checked("refused", not_stated(language(question), passages, related=False), check,
                           problems=check.errors, refusal=NOT_STATED)
        return Checked("refused", drafted_wrong(question, draft.text, passages), check, problems=check.errors,
                       refusal=UNSUPPORTED)
    result = Checked("refused" if check.refusal else "answered", draft.text, check, check.citations,
                     problems=(*check.warnings, *note), removed=removed,
                     refusal=NOT_STATED if check.refusal else "")
    if check.refusal or not judged:
        return result
    judging = options.judge and scorer is not None
    if options.verify and verifier is not None:
        with timed(timings, "verify"):
            graded = graded_check(question, draft, result, passages, verifier, options.thresholds)
        if not (judging and options.judge_uncertain and graded.accepted
                and any(v.verdict == "uncertain" for v in graded.verdicts)):
            return graded
        # the verifier is unsure of a sentence: the judge decides the answer as it stands
        judged_result = _judge(question, graded, passages, scorer, options, stats=stats,  # type: ignore[arg-type]
                               weak_retrieval=weak_retrieval, best_dense=best_dense, cancel=cancel, timings=timings,
                               judge_question=judge_question)
        if not judged_result.accepted or judged_result.judge_score is None:
            return judged_result
        return replace(judged_result, verdicts=tuple(replace(v, verdict="supported") if v.verdict == "uncertain" else v
                                                     for v in graded.verdicts))
    if not judging:
        return result
    return _judge(question, result, passages, scorer, options, stats=stats,  # type: ignore[arg-type]
                  weak_retrieval=weak_retrieval, best_dense=best_dense, cancel=cancel, timings=timings,
                  judge_question=judge_question)


def _judge(question: str, result: Checked, passages: Sequence[Hit], scorer: YesNoScorer | SpanJudge,
           options: CheckOptions, *, stats: TermStats | None, weak_retrieval: bool, best_dense: float | None,
           cancel: CancelToken | None, timings: dict[str, float],
           judge_question: Callable[[Sequence[Citation]], str] | None = None) -> Checked:
    """The LLM judge on an answer every sentence of which stands in its passage: does the evidence
    state this answer to this question? Refused (the answer withheld) when it does not. The judge
    reads the question in the cited passages' language (``judge_question``), at that language's
    threshold."""
    check = result.validation
    missing = missing_terms(question, check.citations, passages, stats)
    asked = judge_question(check.citations) if judge_question is not None else question
    threshold = options.threshold_for(asked, weak_retrieval=weak_retrieval, missing_terms=len(missing),
                                      best_dense=best_dense)
    signals = Answerability(None, threshold, weak_retrieval, best_dense, missing)
    result = replace(result, answerability=signals)
    cited = [passages[c.n - 1] for c in check.citations if 1 <= c.n <= len(passages)]
    ordered = [*cited, *(h for h in passages if h not in cited)]
    elsewhere = _about_something_else(question, result, cited, ordered, asked=asked)
    if elsewhere is not None:
        return elsewhere
    try:
        with timed(timings, "judge"):
            verdict = judge(asked, check.citations, passages, scorer, threshold, answer=result.text,
                            cancel=cancel)
    except GenerationError as exc:  # the checked answer stands, marked as not judged
        return replace(result, problems=(*result.problems, f"{NOT_JUDGED}: {exc}"))
    if verdict is None:
        return result
    signals = replace(signals, judge_score=verdict.score, span=verdict.span, bound=verdict.bound,
                      core=verdict.core, core_odds=verdict.core_odds, core_gap=verdict.core_gap)
    result = replace(result, judge_score=verdict.score, answerability=signals)
    if verdict.answers:
        return result
    reason = rejection_reason(question, check.citations, verdict)
    lang = language(question)
    if verdict.span and not verdict.bound:  # the passage answers it, otherwise than the draft
        text = unsupported(lang, check.citations[0].n if check.citations else None, answer=verdict.span)
        kind = UNSUPPORTED
    else:
        related = not weak_retrieval and not missing and not uncovered(question, passages)
        text = not_stated(lang, ordered, related=related)
        kind = NOT_STATED
    return Checked("refused", text, check, problems=(reason,), judge_score=verdict.score, withheld=result,
                   answerability=signals, verdicts=result.verdicts, refusal=kind)


def _about_something_else(question: str, result: Checked, cited: Sequence[Hit],
                          ordered: Sequence[Hit], *, asked: str = "") -> Checked | None:
    """The refusal of an answer whose cited passages do not name what the question asks about
    (蟒鳗's length for 线蚓鳗's; :mod:`.subject`); None when they do. The refusal names it when no
    passage found does. ``asked``: the question as the judge reads it, translated into the
    passages' language; the subject it names must stand there too ("How long is the slender worm
    eel?" asked as 瘦虫尾长多少厘米？ over another eel's passage), but that name, the model's
    translation, is not put to the user."""
    texts = [PassageView(h).context for h in cited]
    absent, translated = absent_subject(question, texts), False
    if not absent and asked and asked != question:
        absent = absent_subject(asked, texts)
        translated = bool(absent)
    if not absent:
        return None
    lang, check = language(question), result.validation
    named = translated or not absent_subject(question, [PassageView(h).context for h in ordered])
    why = SUBJECT_ABSENT[lang].format(n=cite_marks(sorted({c.n for c in check.citations})), name=absent)
    signals = result.answerability
    if signals is not None:
        signals = replace(signals, missing_terms=(*signals.missing_terms, absent))
    return Checked("refused", not_stated(lang, ordered, related=False, absent="" if named else absent), check,
                   problems=(why,), withheld=result, answerability=signals, verdicts=result.verdicts,
                   refusal=NOT_STATED)


SUBJECT_ABSENT = {
    "en": "the cited passages ({n}) do not name “{name}”, which the question asks about",
    "zh": "所引段落（{n}）没有提到问题所问的“{name}”",
}

VERIFIER_NOT_STATED = {
    "en": "the cited passage does not state this as the answer to the question (verifier {p:.2f})",
    "zh": "所引段落没有把这句话作为该问题的答案（核验 {p:.2f}）",
}


def graded_check(question: str, draft: _Draft, result: Checked, passages: Sequence[Hit], verifier: Verifier,
                 thresholds: Thresholds) -> Checked:
    """The verifier's verdict on each cited sentence: unsupported ones are withheld when the rest
    stands (else the answer is refused); uncertain ones stay, marked; an answer none of whose
    sentences is at least uncertain is refused."""
    lang = language(question)
    verdicts = grade(question, draft.text, result.citations, passages, verifier, thresholds)
    bad = [v for v in verdicts if v.verdict == "unsupported"]
    if not bad:
        return replace(result, verdicts=verdicts)
    why = tuple((v.sentence, VERIFIER_NOT_STATED[lang].format(p=v.score)) for v in bad)
    kept = [v for v in verdicts if v.verdict != "unsupported"]
    rest = remove_sentences(draft.text, [v.sentence for v in bad]) if kept else None
    if rest and draft.accept(rest):
        return replace(result, text=draft.text, validation=draft.check, citations=draft.check.citations,
                       removed=(*result.removed, *why), verdicts=tuple(kept))
    n = bad[0].citations[0] if bad[0].citations else None
    text = unsupported(lang, n, words=best_sentence(question, passages[n - 1]) if n else "")
    return Checked("refused", text, result.validation, problems=tuple(f"{s}: {w}" for s, w in why),
                   withheld=replace(result, verdicts=verdicts), verdicts=verdicts, refusal=UNSUPPORTED)
