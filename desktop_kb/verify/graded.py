"""Graded verdicts: the trained verifier weighs each cited sentence of an answer.

After the word and figure checks (the fast first gate), each sentence that carries ``[n]`` is read
with the evidence of the passages it cites (:func:`~desktop_kb.verify.verifier.evidence_of`) by
the :class:`~desktop_kb.protocols.Verifier`: the probability that the evidence states this
sentence as the answer to this question, its best over the passages it cites. Two thresholds,
calibrated on the held-out training split (``training/evaluate.py``, recorded in the shipped
manifest), make three verdicts:

* ``supported``   (p ≥ ``support_from``): shown as it is;
* ``uncertain``   (``refuse_below`` ≤ p < ``support_from``): shown with a visible marker and its
  passage one click away;
* ``unsupported`` (p < ``refuse_below``): withheld, as an unsupported sentence is today; an answer
  with no supported sentence is refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..protocols import Verifier
from ..types import Citation, Hit, SentenceVerdict
from .support import sentence_spans
from .verifier import claim_text, evidence_of

__all__ = ["Thresholds", "grade"]

_MARK = re.compile(r"[\[【]\s*(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)\s*[\]】]")
_LEADING = re.compile(rf"(?:\s*{_MARK.pattern})+")


@dataclass(frozen=True)
class Thresholds:
    refuse_below: float = 0.2
    support_from: float = 0.5

    @classmethod
    def of_model(cls, verifier: object) -> Thresholds | None:
        """The verifier's own calibrated thresholds (its ``calibration``: the shipped manifest's),
        or None when it has none."""
        cal = getattr(verifier, "calibration", None) or {}
        try:
            return cls(float(cal["refuse_below"]), float(cal["support_from"]))
        except (KeyError, TypeError, ValueError):
            return None

    def verdict(self, p: float) -> str:
        return "supported" if p >= self.support_from else "uncertain" if p >= self.refuse_below else "unsupported"


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(dict.fromkeys(int(n) for m in _MARK.finditer(text) for n in re.findall(r"\d+", m.group(1))))


def cited_sentences(answer: str) -> list[tuple[str, tuple[int, ...]]]:
    """Each sentence of ``answer`` that carries marks, with the passage numbers it cites; marks
    standing after a sentence's full stop ("Claim. [1] Next …") belong to that sentence."""
    out: list[list[object]] = []  # [sentence, numbers]
    for s, e in sentence_spans(answer):
        sentence = answer[s:e]
        lead = _LEADING.match(sentence)
        if lead and out:  # marks at the start: they cite the sentence before
            out[-1][0] = f"{out[-1][0]} {lead.group(0).strip()}"
            out[-1][1] = tuple(dict.fromkeys((*out[-1][1], *_numbers(lead.group(0)))))  # type: ignore[misc]
            sentence = sentence[lead.end():].strip()
        if claim_text(sentence):
            out.append([sentence, _numbers(sentence)])
    return [(str(t), n) for t, n in out if n]  # type: ignore[misc]


def grade(question: str, answer: str, citations: Sequence[Citation], passages: Sequence[Hit],
          verifier: Verifier, thresholds: Thresholds) -> tuple[SentenceVerdict, ...]:
    """The verdict of each cited sentence of ``answer`` (one verifier call for all of them)."""
    by_n = {c.n: c for c in citations}
    sentences = [(s, tuple(n for n in nums if n in by_n and 1 <= n <= len(passages)))
                 for s, nums in cited_sentences(answer)]
    pairs: list[tuple[str, str]] = []
    owner: list[int] = []
    for k, (sentence, nums) in enumerate(sentences):
        for n in nums:
            pairs.append((claim_text(sentence), evidence_of(by_n[n], passages[n - 1])))
            owner.append(k)
    probs = verifier.verify(question, pairs) if pairs else []
    best = [0.0] * len(sentences)
    for k, p in zip(owner, probs, strict=True):
        best[k] = max(best[k], float(p))
    return tuple(SentenceVerdict(sentence, nums, round(best[k], 4), thresholds.verdict(best[k]))  # type: ignore[arg-type]
                 for k, (sentence, nums) in enumerate(sentences) if nums)
