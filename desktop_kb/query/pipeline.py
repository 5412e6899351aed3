"""The answer pipeline, wired in plain Python, one stage after another:

    search (:mod:`.search`: rewrite → retrieve → scope → rerank → fallback)
    → read (:mod:`.read`: the passages, evidence windows or a section's parts)
    → generate (:mod:`.generate`, :mod:`.sections` for a long section)
    → check (:mod:`desktop_kb.verify.answer_check`: validation, repairs, retries, the judge)

Each stage takes what it needs; the pipeline takes the knowledge bases' retrieval views and
readers (:class:`Sources`) and the models (:class:`Models`), never the ``Library`` that owns them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..errors import ConfigError, QuestionTooLong
from ..progress import CancelToken, timed
from ..protocols import (
    ChatMessage,
    Embedder,
    Generator,
    Reranker,
    SearchFilter,
    SpanJudge,
    TokenCounter,
    Verifier,
    YesNoScorer,
)
from ..settings import QuerySettings
from ..text.budget import estimate_tokens
from ..types import (
    FIRST_TOKEN,
    STAGE_ALTERNATE,
    STAGE_CHECKING,
    STAGE_PART,
    STAGE_PARTS,
    STAGE_READING,
    Answer,
    Citation,
)
from ..verify.answer_check import Checked, CheckOptions, check_answer, language, with_conditions
from ..verify.citations import Validation, validate
from ..verify.conditions import QUOTED
from ..verify.graded import Thresholds
from ..verify.judge import judge
from ..verify.refusal import NOTHING_FOUND
from ..verify.subject import absent_subject
from ..verify.support import PassageView
from .alternate import judge_question, other_passages, passage_answer, renumber
from .generate import generate
from .one_script import ENGLISH_NOTED, has_chinese, in_one_script
from .prompts import correction_message
from .read import ChunkReader, Reading, read
from .retrieve import KBView
from .search import Found, SearchModels, TocReader, search
from .sections import map_reduce

__all__ = ["MAX_QUESTION_TOKENS", "Events", "Models", "Sources", "answer", "check_question",
           "recent_history"]

# A question's share of the LLM's 4,096-token prompt (about 4,600 English or 1,100 Chinese
# characters): the passages, the history and the instructions need the rest.
MAX_QUESTION_TOKENS = 1000
MAX_HISTORY_TOKENS = 800  # the earlier turns' share
_MARKS = re.compile(r"\s*\[\d+(?:\s*[,，-]\s*\d+)*\]")


@dataclass(frozen=True)
class Sources:
    """What the answer reads from the knowledge bases."""

    views: Sequence[KBView]  # the bases searched, embedder and owner scope checked
    toc_of: TocReader  # a document's table of contents (section and document questions)
    chunks_of: ChunkReader  # a document's chunks in reading order (idem)
    asked: tuple[str, ...] = ()  # the bases the question was put to (named when they hold nothing)


@dataclass(frozen=True)
class Models:
    embedder: Embedder
    reranker: Reranker | None
    generator: Generator  # answers, and judges them
    small: Generator  # rewrites and fallback decisions (the answer model when none is set)
    verifier: Verifier | None = None  # the trained verifier (query.verifier), else the LLM judges


@dataclass(frozen=True)
class Events:
    """How the caller follows the answer: ``on_token`` streams the first attempt; ``on_restart``
    announces a correction retry, which then streams too (without it retries are not streamed);
    ``on_stage(stage, n)`` tells what the answer is doing (searching, reading n passages until the
    first token, a section's parts, checking)."""

    on_token: Callable[[str], None] | None = None
    on_restart: Callable[[], None] | None = None
    on_stage: Callable[[str, int], None] | None = None
    cancel: CancelToken | None = None

    def stage(self, name: str, n: int = 0) -> None:
        if self.on_stage is not None:
            self.on_stage(name, n)


@dataclass(frozen=True)
class Draft:
    text: str
    messages: list[ChatMessage]  # the conversation that produced it (a retry continues it)
    prompt_tokens: int | None


def recent_history(history: Sequence[tuple[str, str]], turns: int,
                   budget: int = MAX_HISTORY_TOKENS) -> list[tuple[str, str]]:
    """The last ``turns`` turns that fit ``budget`` tokens together, newest kept first: a long
    conversation is shortened, never sent past the prompt's size. The answers lose their ``[n]``
    marks: those point at that turn's passages, not this one's (a follow-up's search query and
    citations took them up)."""
    kept: list[tuple[str, str]] = []
    for question, said in reversed(list(history)[-turns:] if turns > 0 else []):
        # the condition quote and its English: the model copied them as a way to answer
        turn = (question, _MARKS.sub("", ENGLISH_NOTED.sub("", QUOTED.sub("", said))))
        budget -= estimate_tokens(turn[0]) + estimate_tokens(turn[1])
        if budget < 0:
            break
        kept.append(turn)
    return kept[::-1]


def check_question(question: str) -> None:
    """ConfigError for an empty question; QuestionTooLong for one that would crowd the passages out
    of the prompt (its words counted as :func:`answer` reads them, spaces run together).
    :meth:`Library.ask` asks it before any model loads."""
    question = " ".join(question.split())
    if not question:
        raise ConfigError("The question is empty.", "Type a question.")
    tokens = estimate_tokens(question)
    if tokens > MAX_QUESTION_TOKENS:
        raise QuestionTooLong(f"The question is too long: about {tokens} tokens, at most {MAX_QUESTION_TOKENS}.")


def answer(
    question: str,
    sources: Sources,
    models: Models,
    q: QuerySettings,
    *,
    flt: SearchFilter | None = None,
    history: Sequence[tuple[str, str]] = (),
    reading_order: bool = False,
    events: Events | None = None,
) -> Answer:
    events = events or Events()
    started = time.perf_counter()
    timings: dict[str, float] = {}
    question = " ".join(question.split())
    history = recent_history(history, q.history_turns)
    found = search(question, history, sources.views, SearchModels(models.embedder, models.reranker, models.small),
                   q, flt=flt, toc_of=sources.toc_of, timings=timings, cancel=events.cancel, asked=sources.asked,
                   on_stage=events.stage)
    if found.stopped:
        return _stopped(question, found, timings)
    reading = read(found, sources.views, models.embedder, q, chunks_of=sources.chunks_of,
                   reading_order=reading_order, timings=timings)
    events.stage(STAGE_READING, len(reading.passages))
    asked = found.asked or question  # a follow-up is answered and checked as its standalone question
    draft = _generate(asked, history, reading, models.generator, q, events, timings, started)
    events.stage(STAGE_CHECKING)
    checker = _Checker(asked, history, found, reading, models, q, events, timings)
    checked = checker.check(draft)
    if not checked.accepted and checked.refusal != NOTHING_FOUND and found.scope is None:
        draft, checked = checker.alternates(draft, checked)
    if checked.accepted and language(question) == "en" and has_chinese(checked.text):
        with timed(timings, "translate"):  # "the Beijing地铁10号线" → "Beijing Subway Line 10 (地铁10号线)"
            checked = replace(checked, text=in_one_script(checked.text, models.small, cancel=events.cancel))
    return _answer(question, found, reading, draft, checked, timings)


def _stopped(question: str, found: Found, timings: dict[str, float]) -> Answer:
    """The fallback's refusal or request to clarify, with the passages found."""
    assert found.fallback is not None
    clarify = found.fallback.decision == "clarify"
    return Answer(question=question, text=found.fallback.message, status="clarify" if clarify else "refused",
                  refusal="" if clarify else NOTHING_FOUND,
                  passages=found.ranked.hits, queries=found.queries, fallback=found.fallback, timings_ms=timings,
                  rerank_degraded=found.ranked.degraded)


def _generate(question: str, history: Sequence[tuple[str, str]], reading: Reading, generator: Generator,
              q: QuerySettings, events: Events, timings: dict[str, float], started: float) -> Draft:
    """The model's first answer, streamed; a long section is answered part by part."""

    def first(piece: str) -> None:
        if FIRST_TOKEN not in timings:
            timings[FIRST_TOKEN] = round((time.perf_counter() - started) * 1000, 1)
        if events.on_token is not None:
            events.on_token(piece)

    def on_part(k: int, n: int) -> None:
        events.stage(STAGE_PART, k) if k > 1 else events.stage(STAGE_PARTS, n)

    with timed(timings, "generate"):
        if len(reading.parts) > 1:
            text, messages = map_reduce(question, reading.passages, history, generator, reading.parts,
                                        max_tokens=q.max_answer_tokens, part_tokens=q.part_answer_tokens, on_token=first,
                                        cancel=events.cancel, on_part=on_part)
        else:
            text, messages = generate(question, reading.passages, history, generator,
                                      max_tokens=q.max_answer_tokens, on_token=first, cancel=events.cancel,
                                      texts=reading.windows)
    prompt_tokens = generator.count_tokens(messages) if isinstance(generator, TokenCounter) else None
    return Draft(text, messages, prompt_tokens)


class _Checker:
    """The answer check over one reading: the draft with correction retries, then, when refused,
    the passages the draft did not cite, each answered from alone (:mod:`.alternate`)."""

    def __init__(self, question: str, history: Sequence[tuple[str, str]], found: Found, reading: Reading,
                 models: Models, q: QuerySettings, events: Events, timings: dict[str, float]) -> None:
        self.question, self.history, self.found, self.reading = question, history, found, reading
        self.models, self.q, self.events, self.timings = models, q, events, timings
        self._translated: dict[str, str] = {}

    def validate(self, candidate: str) -> Validation:
        reading = self.reading
        return validate(candidate, reading.passages, self.question, stats=reading.stats, similarity=reading.similarity)

    def check(self, draft: Draft, *, retry: bool = True) -> Checked:
        """The answer check, with a correction retry that asks the model again with the problems named."""
        question, reading, q, events = self.question, self.reading, self.q, self.events
        passages, generator = reading.passages, self.models.generator

        check_text = self.validate

        def regenerate(previous: str, check: Validation) -> str:
            if events.on_restart is not None:
                events.on_restart()
            again = [*draft.messages, {"role": "assistant", "content": previous},
                     correction_message(check.errors, len(passages))]
            with timed(self.timings, "generate"):
                # a little temperature, so a retry does not repeat the same text word for word
                new, _ = generate(question, passages, self.history, generator, max_tokens=q.max_answer_tokens,
                                  on_token=events.on_token if events.on_restart is not None else None,
                                  cancel=events.cancel, messages=again, temperature=0.3)
            return new

        def judge_as(citations: Sequence[Citation]) -> str:
            cited = [passages[c.n - 1] for c in citations if 1 <= c.n <= len(passages)]
            with timed(self.timings, "translate"):
                return judge_question(question, self.found.queries, cited, self.models.small, self._translated)

        scorer = generator if isinstance(generator, (SpanJudge, YesNoScorer)) else None
        options = CheckOptions.of(q, embedder_id=self.models.embedder.id,
                                  calibrated_thresholds=Thresholds.of_model(self.models.verifier))
        checked = check_answer(question, draft.text, passages, check_text, options=options, scorer=scorer,
                            verifier=self.models.verifier, regenerate=regenerate if retry else None,
                            judged=self.found.scope is None, stats=reading.stats,
                            weak_retrieval=self.found.signal.weak, best_dense=self.found.best_dense,
                            cancel=events.cancel, timings=self.timings, judge_question=judge_as)
        return with_conditions(question, checked, passages, check_text, self.timings)

    def _most_likely(self, others: list[int], at_most: int = 4) -> list[int]:
        """The passages most likely to state the answer first: by the judge's span call over each
        alone (its log-odds that the passage answers the question, read in its language), else by
        the embedder's cosine (e5 reads across languages). The rank order put first the passage
        the model already misread."""
        reading, generator = self.reading, self.models.generator
        if not isinstance(generator, SpanJudge):
            texts = reading.windows or tuple(h.chunk.text for h in reading.passages)
            return sorted(others, key=lambda n: -reading.similarity(self.question, texts[n - 1]))
        scores: dict[int, float] = {}
        for n in others[:at_most]:
            h = reading.passages[n - 1]
            whole = Citation(n=n, kb=h.kb, doc_id=h.chunk.doc_id, path=h.chunk.path, pages=h.chunk.pages,
                             heading_path=h.chunk.heading_path, start=h.chunk.start, end=h.chunk.end,
                             evidence=((h.chunk.start, h.chunk.end),))
            with timed(self.timings, "judge"):
                asked = judge_question(self.question, self.found.queries, [h], self.models.small, self._translated)
                verdict = judge(asked, [whole], reading.passages, generator, 0.0, cancel=self.events.cancel)
            scores[n] = verdict.score if verdict is not None else float("-inf")
        return sorted(others[:at_most], key=lambda n: -scores[n])

    def alternates(self, draft: Draft, refused: Checked) -> tuple[Draft, Checked]:
        """The cited passage's own answer when the judge read one (:func:`passage_answer`); else the
        first answer from a passage the refused draft did not cite (closest to the question
        first) that stands the check (no correction retries: each costs one generation and one
        judging); else the refusal."""
        reading, events = self.reading, self.events
        own = passage_answer(self.question, refused, reading.passages, self.validate, self.timings)
        if own is not None:  # the judge read the passage's own answer: that is the answer
            return Draft(own.text, draft.messages, draft.prompt_tokens), own
        cited = refused.withheld.citations if refused.withheld is not None else refused.citations
        others = [n for n in other_passages(draft.text, cited, len(reading.passages))  # those naming what is asked
                  if not absent_subject(self.question, [PassageView(reading.passages[n - 1]).context])]
        others = self._most_likely(others)
        for n in others[: self.q.alternate_passages]:
            if events.on_restart is not None:
                events.on_restart()
            events.stage(STAGE_ALTERNATE, n)
            texts = [reading.windows[n - 1]] if reading.windows is not None else None
            with timed(self.timings, "generate"):
                text, messages = generate(self.question, [reading.passages[n - 1]], self.history,
                                          self.models.generator, max_tokens=self.q.max_answer_tokens,
                                          on_token=events.on_token if events.on_restart is not None else None,
                                          cancel=events.cancel, texts=texts)
            events.stage(STAGE_CHECKING)
            other = Draft(renumber(text, n), messages, draft.prompt_tokens)
            checked = self.check(other, retry=False)
            if checked.accepted:
                return other, checked
        return draft, refused


def _answer(question: str, found: Found, reading: Reading, draft: Draft, checked: Checked,
            timings: dict[str, float]) -> Answer:
    withheld = _answer(question, found, reading, draft, checked.withheld, timings) if checked.withheld else None
    return Answer(
        question=question, text=checked.text, status=checked.status, citations=checked.citations,
        passages=reading.passages, queries=found.queries, fallback=found.fallback, timings_ms=timings,
        rerank_degraded=found.ranked.degraded, problems=checked.problems, removed=checked.removed,
        prompt_tokens=draft.prompt_tokens, scope=found.scope.describe() if found.scope else "",
        judge_score=checked.judge_score, withheld=withheld, answerability=checked.answerability,
        verdicts=checked.verdicts, refusal=checked.refusal,
    )
