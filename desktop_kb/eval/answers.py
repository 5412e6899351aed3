"""Answer evaluation: ask every question through ``Library.ask`` and score the Answer.

Per item: status, whether the text contains a gold answer (see :mod:`.normalize`), whether a
cited passage comes from the gold context's file, and, independent of the code that gates answers,
whether the gold answer the text gives is *inside a passage it cites* (``gold_supported``): a
correct answer cited to a passage that does not say it is not counted as supported.
``citations_valid`` re-runs :func:`desktop_kb.verify.citations.validate`; it is a self-check (the
same validator gated the answer), reported for regressions, never as a quality claim.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..types import FIRST_TOKEN
from .datasets import QAItem
from .normalize import contains_answer

__all__ = ["ItemScore", "aggregate", "citations_valid", "gold_support", "score_answer"]

_MARK = re.compile(r"[\[【]\s*(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)\s*[\]】]")


@dataclass(frozen=True)
class ItemScore:
    id: str
    answerable: bool
    status: str
    contains_gold: bool
    citations_valid: bool | None  # None when the item was not answered
    cites_gold: bool | None
    n_citations: int
    timings_ms: dict[str, float] = field(default_factory=dict)
    text: str = ""
    error: str = ""
    problems: tuple[str, ...] = ()  # Answer.problems: why citations failed (refused) or uncited claims
    gold_supported: bool | None = None  # the gold answer in the text is in a cited passage
    cited_gold_span: bool | None = None  # some cited passage contains a gold answer
    judge_score: float | None = None  # Answer.judge_score
    answerability: dict[str, Any] | None = None  # Answer.answerability: what decided it, for calibration
    # the same item scored as if the judge were off (its withheld answer stands); None: no change
    without_judge: ItemScore | None = None

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__) | {"problems": list(self.problems)}
        out["without_judge"] = self.without_judge.to_json() if self.without_judge is not None else None
        return out


def citations_valid(answer: Any) -> bool:
    """Every [n] names a passage and every quote is found in its passage."""
    try:
        from ..verify.citations import validate
    except ImportError:  # a build without the answer pipeline: fall back to the Answer's own report
        pass
    else:
        return bool(validate(answer.text, list(answer.passages)).valid)
    if answer.problems:
        return False
    n_pass = len(answer.passages)
    numbers = [int(x) for m in _MARK.finditer(answer.text) for x in re.findall(r"\d+", m.group(1))]
    return bool(numbers) and all(1 <= n <= n_pass for n in numbers)


def _cited_texts(answer: Any) -> list[str]:
    passages = list(answer.passages)
    return [passages[c.n - 1].chunk.text for c in answer.citations if 1 <= c.n <= len(passages)]


def gold_support(item: QAItem, answer: Any) -> tuple[bool, bool]:
    """(the gold answer the text gives occurs in a cited passage, some cited passage has a gold)."""
    cited = _cited_texts(answer)
    given = [g for g in item.answers if contains_answer(answer.text, [g])]
    supported = any(contains_answer(t, [g]) for g in given for t in cited)
    return supported, any(contains_answer(t, item.answers) for t in cited)


def score_answer(item: QAItem, answer: Any, doc_of: Callable[[str], str]) -> ItemScore:
    """The item's score; an answer the judge withheld is also scored as it would have stood."""
    withheld = getattr(answer, "withheld", None)
    score = _score(item, answer, doc_of)
    if withheld is None:
        return score
    return replace(score, without_judge=_score(item, withheld, doc_of))


def _score(item: QAItem, answer: Any, doc_of: Callable[[str], str]) -> ItemScore:
    answered = answer.status == "answered"
    gold_cited = valid = supported = span = None
    if answered:
        valid = citations_valid(answer)
        gold_cited = any(doc_of(c.path) == item.context_id for c in answer.citations)
        if item.answers:
            supported, span = gold_support(item, answer)
    return ItemScore(
        id=item.id, answerable=item.answerable, status=str(answer.status),
        contains_gold=bool(answered and item.answers and contains_answer(answer.text, item.answers)),
        citations_valid=valid, cites_gold=gold_cited, gold_supported=supported, cited_gold_span=span,
        n_citations=len(answer.citations),
        timings_ms=dict(answer.timings_ms or {}), text=answer.text, problems=tuple(answer.problems or ()),
        judge_score=getattr(answer, "judge_score", None),
        answerability=asdict(answer.answerability) if getattr(answer, "answerability", None) is not None else None,
    )


def _rate(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def aggregate(scores: Sequence[ItemScore]) -> dict[str, Any]:
    answerable = [s for s in scores if s.answerable and not s.error]
    unanswerable = [s for s in scores if not s.answerable and not s.error]
    answered = [s for s in scores if s.status == "answered" and not s.error]
    stages: dict[str, list[float]] = {}
    for s in scores:
        for k, v in s.timings_ms.items():
            stages.setdefault(k, []).append(float(v))
    totals = [sum(v for k, v in s.timings_ms.items() if k != FIRST_TOKEN) for s in scores if s.timings_ms]
    statuses: dict[str, int] = {}
    for s in scores:
        statuses[s.status] = statuses.get(s.status, 0) + 1
    return {
        "items": len(scores),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "errors": sum(1 for s in scores if s.error),
        "status": statuses,
        # over answerable items (a refusal counts as a miss)
        "answer_contains_gold": _rate([s.contains_gold for s in answerable]),
        # among answered answerable items
        "answer_contains_gold_when_answered": _rate([s.contains_gold for s in answerable if s.status == "answered"]),
        # independent of the validator: the gold answer in the text is in a cited passage
        # (over answerable items, a refusal counts as a miss; then among answered ones)
        "answer_gold_supported": _rate([bool(s.gold_supported) for s in answerable]),
        "answer_gold_supported_when_answered": _rate(
            [bool(s.gold_supported) for s in answerable if s.status == "answered"]),
        "cited_passage_has_gold": _rate([bool(s.cited_gold_span) for s in answerable if s.status == "answered"]),
        # self-check: the same validator gated the answers
        "citation_validity": _rate([bool(s.citations_valid) for s in answered]),
        "citation_hits_gold": _rate([bool(s.cites_gold) for s in answered if s.answerable]),
        "refusal_rate_unanswerable": _rate([s.status != "answered" for s in unanswerable]),
        "false_refusal_rate": _rate([s.status != "answered" for s in answerable]),
        "mean_timings_ms": {k: round(statistics.fmean(v), 1) for k, v in sorted(stages.items())},
        "mean_total_ms": round(statistics.fmean(totals), 1) if totals else None,
        # the answerability judge: how many answers it withheld, and the same metrics had it been off
        "judge_withheld": sum(1 for s in scores if s.without_judge is not None),
        "without_judge": _quality(aggregate([s.without_judge or s for s in scores]))
        if any(s.without_judge is not None for s in scores) else None,
    }


def _quality(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in ("mean_timings_ms", "mean_total_ms", "judge_withheld",
                                                        "without_judge", "items", "answerable", "unanswerable")}
