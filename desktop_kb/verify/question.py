"""The answer as a whole against its question: do the cited passages speak of what was asked?

:func:`question_key_terms` are the question's rare words and names; :func:`check_question` asks
whether the cited passages name them, whether the question turns round what a passage says (or
asks what did not happen), and whether a "how many / when / who" question got a figure or a name
that the passages hold. Each problem is worded for a correction prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..text.common_words import common_chinese, common_english
from ..text.numbers import quantities
from ..text.term_stats import TermStats
from ..text.tokenize import is_chinese, is_cjk_char, tokenize
from ..types import Citation, Hit
from .claim_terms import FILLER, OR_NOT, PERCENT_Q, PERSON_Q, QUANTITY_Q, QUESTION_WORDS, TIME_Q, VAGUE
from .contrast import contrast
from .premise import unstated_details
from .support import Claim, PassageView, cite_marks, latin_names, negates, quantity_found

__all__ = ["QUESTION_MISSING_MIN", "QUESTION_RARE_SHARE", "check_question", "missing_terms", "question_key_terms"]

QUESTION_RARE_SHARE = 0.02  # support's rare-word share for the question's words (questions paraphrase more)
_FIGURE = re.compile(r"\d+(?:s|th|st|nd|rd)?")
QUESTION_MISSING_MIN = 0.75  # share (and at least 2) of the question's key terms the passages lack


def question_key_terms(question: str, stats: TermStats | None) -> list[str]:
    """The question's rare words and names (the entity asked about), as tokens. Common English
    and Chinese words ("anything", "assumed", 样子) are no key terms even where the knowledge base
    rarely has them: a paraphrased question uses them for the passage's own wording."""
    tokens = set(tokenize(question)) - QUESTION_WORDS - FILLER - common_english() - common_chinese()
    # without statistics every longer content word of the question counts
    key = (stats.rare(tokens, unseen=False, share=QUESTION_RARE_SHARE) if stats is not None
           else {t for t in tokens if len(t) >= 4 or is_cjk_char(t[0])})
    for w in latin_names(question):
        key.update(t for t in tokenize(w) if t not in QUESTION_WORDS)
    # figures are the premise check's (verify/premise.py); decades and ordinals ("1600s", "17th")
    # are said too many ways ("the 17th century", "the 1600s") to be looked for as words
    return sorted(t for t in key if not _FIGURE.fullmatch(t))


def check_question(
    question: str,
    answer_claims: Sequence[Claim],
    views: dict[int, PassageView],
    stats: TermStats | None = None,
) -> str | None:
    """Answer-level checks on what was cited: the passages name the question's key terms, and a
    how-many / when / who question gets a figure or a name that the passages hold."""
    if not question.strip() or not answer_claims:
        return None
    cited = sorted({n for c in answer_claims for n in c.numbers if n in views})
    if not cited:
        return None
    vs = [views[n] for n in cited]
    cites = cite_marks(cited)
    if all(v.cjk != (is_chinese(question)) for v in vs):
        return None  # cross-language: the claim checks above use the embedder instead
    key = question_key_terms(question, stats)
    missing = [t for t in key if not any(v.has(t) for v in vs)]
    if len(missing) >= 2 and len(missing) >= QUESTION_MISSING_MIN * len(key):
        return (f"Passage {cites} does not mention {', '.join(missing[:5])}, which the question asks "
                "about: it does not answer the question; say so if no passage does.")
    q_tokens = set(tokenize(question))
    topical = q_tokens - QUESTION_WORDS - FILLER
    related = [v.hit.chunk.text[s:e] for v in vs for s, e, toks in v.sentences if len(toks & topical) >= 2]
    turned = contrast(question, related)
    if turned:  # the question turns round what the passage says (SQuAD 2.0's adversarial kind)
        return (f"The question asks about \"{turned[0]}\", but passage {cites} says \"{turned[1]}\": it does "
                "not answer the question; say so if no passage does.")
    if negates(OR_NOT.sub(" ", question)) and related and not any(negates(r) for r in related):
        return (f"The question asks about what did not happen, and passage {cites} says nothing of the kind: "
                "it does not answer the question; say so if no passage does.")
    said = " ".join(c.text for c in answer_claims)
    if QUANTITY_Q.search(question):
        q_values = {v for q in quantities(question) for v in q.values}
        figures = [q for q in quantities(said) if not q.values <= q_values]
        vague = [w for w in VAGUE.findall(said.lower()) if any(w in v.folded for v in vs)]
        stated = [q for q in figures if quantity_found(q, vs)]
        if not vague and not stated:
            return (f"The question asks for a number, and the answer gives none that passage {cites} "
                    "states.")
        if PERCENT_Q.search(question) and not any(q.percent for q in stated):
            return (f"The question asks for a percentage, and the answer gives none that passage {cites} "
                    "states.")
    elif PERSON_Q.search(question) or TIME_Q.search(question):
        new = {t for c in answer_claims for t in c.tokens} - q_tokens - FILLER
        if not any(v.has(t) for t in new for v in vs):
            kind = "who" if PERSON_Q.search(question) else "when"
            return f"The answer does not say {kind} with words from passage {cites}."
    return None


def missing_terms(question: str, citations: Sequence[Citation], passages: Sequence[Hit],
                  stats: TermStats | None) -> tuple[str, ...]:
    """The question's key terms (its rare words and names) that no cited passage has, then its
    figures that none states by value (:mod:`.premise`: "in 1765" over passages that say 1756);
    none when the passages are in another language than the question (the terms would not match)."""
    return _unstated(question, [PassageView(passages[c.n - 1]) for c in citations if 1 <= c.n <= len(passages)],
                     stats)


def _unstated(question: str, views: Sequence[PassageView], stats: TermStats | None) -> tuple[str, ...]:
    if not views or all(v.cjk != (is_chinese(question)) for v in views):
        return ()
    terms = [t for t in question_key_terms(question, stats) if not any(v.has(t) for v in views)]
    details = [d for d in unstated_details(question, [v.context for v in views]) if d.lower() not in terms]
    return (*terms, *details)
