"""Evidence windows: the sentences of each passage that bear on the question, within a token budget.

Prefill is most of an answer's time on a CPU, and a small model answers no worse from less text.
So the LLM sees, per passage, a window around its best-matching sentences (question terms
weighted by how rare they are in the knowledge base, and, when no term matches, as in a question
asked in another language, the embedder's similarity) in reading order, with " … " where text was
left out. Citations, quote checks and the viewer still work on the whole chunk: a window is made
of the chunk's own sentences, so whatever the model takes from it is in the chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..text.budget import estimate_tokens
from ..text.term_stats import TermStats, idf
from ..text.tokenize import tokenize
from ..types import Hit
from ..verify.support import sentence_spans

__all__ = ["GAP", "Window", "evidence_windows"]

GAP = " … "


@dataclass(frozen=True)
class Window:
    """What the LLM sees of one passage: ``text`` is the chosen ``spans`` (offsets into the chunk's
    text) joined by :data:`GAP`; the whole chunk when it fits."""

    text: str
    spans: tuple[tuple[int, int], ...]

    @property
    def whole(self) -> bool:
        return len(self.spans) == 1 and self.spans[0][0] == 0


def _weights(queries: Sequence[str], stats: TermStats | None) -> dict[str, float]:
    terms = {t for q in queries for t in tokenize(q)}
    if not terms:
        return {}
    if stats is None or stats.n_docs <= 0:
        return dict.fromkeys(terms, 1.0)
    counts = stats.df(sorted(terms))
    return {t: idf(stats.n_docs, counts.get(t, 0)) for t in terms}


def _choose(scores: Sequence[float], costs: Sequence[int], budget: int) -> list[int]:
    """Sentence indexes: the best one with its neighbours, then the next best, while they fit."""
    chosen: set[int] = set()
    used = 0

    def take(i: int) -> bool:
        nonlocal used
        if i in chosen or not 0 <= i < len(costs):
            return True
        if used + costs[i] > budget and chosen:
            return False
        chosen.add(i)
        used += costs[i]
        return True

    for rank, i in enumerate(sorted(range(len(scores)), key=lambda k: (-scores[k], k))):
        if scores[i] <= 0 and chosen:
            break
        if not take(i):
            break
        if rank == 0:  # the best sentence is read with the one before and after it
            take(i - 1)
            take(i + 1)
    return sorted(chosen)


def _merge(spans: Sequence[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Adjacent sentences become one span (only space between them)."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and not text[out[-1][1]:s].strip():
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def window(
    text: str, weights: dict[str, float], budget: int,
    similarity: Callable[[str], float] | None = None,
) -> Window:
    """The window of one passage of ``text`` within ``budget`` tokens."""
    if estimate_tokens(text) <= budget:
        return Window(text, ((0, len(text)),))
    spans = sentence_spans(text)
    sentences = [text[s:e] for s, e in spans]
    scores = [sum(weights.get(t, 0.0) for t in set(tokenize(s))) for s in sentences]
    if similarity is not None and not any(score > 0 for score in scores):
        scores = [similarity(s) for s in sentences]
    costs = [estimate_tokens(s) + 1 for s in sentences]
    chosen = _choose(scores, costs, budget)
    if len(chosen) == 1 and costs[chosen[0]] > budget:  # one huge sentence: its start
        s, e = spans[chosen[0]]
        cut = s
        while cut < e and estimate_tokens(text[s:cut + 40]) <= budget:
            cut += 40
        merged = [(s, max(cut, s + 1))]
    else:
        merged = _merge([spans[i] for i in chosen], text)
    shown = GAP.join(text[s:e] for s, e in merged)
    if merged and merged[0][0] > 0:
        shown = "… " + shown
    if merged and merged[-1][1] < len(text.rstrip()):
        shown += " …"
    return Window(shown, tuple(merged))


def evidence_windows(
    queries: Sequence[str],
    hits: Sequence[Hit],
    *,
    total_tokens: int,
    passage_tokens: int,
    stats: TermStats | None = None,
    similarity: Callable[[str, str], float] | None = None,
    lead: int | None = None,
    trail_tokens: int | None = None,
) -> list[Window]:
    """One window per hit. The total budget is shared evenly, each passage capped at
    ``passage_tokens`` (the hits after the first ``lead`` at ``trail_tokens``: lower-ranked
    passages are read as their best sentences); what a short passage leaves over goes to the
    longer ones. ``total_tokens <= 0`` keeps whole passages."""
    if total_tokens <= 0 or not hits:
        return [Window(h.chunk.text, ((0, len(h.chunk.text)),)) for h in hits]
    weights = _weights(queries, stats)
    caps = [passage_tokens if lead is None or trail_tokens is None or i < lead else min(passage_tokens, trail_tokens)
            for i in range(len(hits))]
    # what each passage can use: all of it, or its cap
    wants = [min(estimate_tokens(h.chunk.text), cap) for h, cap in zip(hits, caps, strict=True)]
    budgets = [0] * len(hits)
    left, open_ = total_tokens, list(range(len(hits)))
    while open_:  # water-filling: passages wanting less than an even share get it, the rest share
        share = max(1, left // len(open_))
        small = [i for i in open_ if wants[i] <= share]
        if not small:
            for i in open_:
                budgets[i] = share
            break
        for i in small:
            budgets[i] = wants[i]
            left -= wants[i]
            open_.remove(i)
    question = queries[0] if queries else ""
    out = []
    for h, budget in zip(hits, budgets, strict=True):
        sim = (lambda s: similarity(question, s)) if similarity is not None and question else None
        out.append(window(h.chunk.text, weights, budget, sim))
    return out
