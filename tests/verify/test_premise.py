"""The figures a question takes for granted (verify/premise.py), how the answer check weighs one
that no cited passage states (plumbing: a scripted judge), and the common words that are no key
terms."""

from __future__ import annotations

from desktop_kb.types import Chunk, Hit
from desktop_kb.verify.answer_check import CheckOptions, check_answer
from desktop_kb.verify.citations import validate
from desktop_kb.verify.premise import question_figures, unstated_details
from desktop_kb.verify.question import missing_terms

PASSAGE = "In 1756 the reinforcements for New France were led by the Chevalier de Lévis."


def test_figures_in_digits_but_not_decades_centuries_or_number_words():
    assert [t for t, _ in question_figures("Who led New France reinforcements in 1765?")] == ["1765"]
    assert [t for t, _ in question_figures("How are the 83 constituency members chosen?")] == ["83"]
    assert question_figures("What Irish cities had Huguenot mayors in the 1600s and 1700s?") == []
    assert question_figures("When did France and the Dutch fight in the 17th century?") == []
    assert question_figures("What are three kinds of phagocytes?") == []
    assert question_figures("19世纪有哪些战争？") == []


def test_unstated_details_look_for_the_figure_by_value():
    assert unstated_details("Who led the reinforcements in 1765?", ["The reinforcements of 1756 were led by Lévis."]) \
        == ["1765"]
    assert unstated_details("Who led the reinforcements in 1756?", ["In 1,756 the reinforcements were led by Lévis."]) \
        == []
    # names are no details: "the Lisbon Treaty" is "the Treaty of Lisbon"
    assert unstated_details("What type of treaty was the Lisbon Treaty?", ["The Treaty of Lisbon is a treaty."]) == []


def _hit(text: str, title: str = "Seven Years' War") -> Hit:
    return Hit(Chunk("c1", "d1", "/docs/war.md", 0, text, (title,), 0, len(text)), "kb", 1.0)


class _Judge:
    """A scripted span judge: the passage's answer is "the Chevalier de Lévis", read with this score."""

    def __init__(self, score: float) -> None:
        self.score = score

    def answer_span(self, messages, *, refusal=("none",), candidate="", candidate_if=None, max_tokens=24,
                    cancel=None):
        from desktop_kb.protocols import SpanReading

        return SpanReading(self.score, "the Chevalier de Lévis")

    def yes_no(self, messages, *, cancel=None):
        return self.score


def _check(question: str, score: float, hit: Hit):
    options = CheckOptions(threshold=0.7, margin_missing_term=0.75)
    answer = "They were led by the Chevalier de Lévis [1]."
    return check_answer(question, answer, [hit], lambda t: validate(t, [hit], question), options=options,
                        scorer=_Judge(score))


def test_an_unstated_figure_raises_the_score_the_answer_needs():
    hit = _hit(PASSAGE)
    asked = "Who led the reinforcements for New France in 1765?"
    citations = validate("They were led by the Chevalier de Lévis [1].", [hit], asked).citations
    assert missing_terms(asked, citations, [hit], None) == ("1765",)
    # the same judge score stands for the year the passage speaks of, not for the changed one
    assert _check(asked.replace("1765", "1756"), 1.0, hit).accepted
    withheld = _check(asked, 1.0, hit)
    assert not withheld.accepted
    assert withheld.answerability is not None and withheld.answerability.threshold == 1.45
    assert withheld.answerability.missing_terms == ("1765",)


def test_common_words_are_no_key_terms_in_either_language():
    """A word few passages of a small knowledge base have is rare there, but 想 (want), 一段 (a
    stretch) or "assumed" are no entity a question asks about; the subject of the question is."""
    from desktop_kb.text.common_words import common_chinese
    from desktop_kb.verify.question import question_key_terms

    common = common_chinese()
    assert {"想", "一段", "样子"} <= common and not {"圣保罗", "线蚓鳗"} & common
    key = question_key_terms("我想知道圣保罗堂区的一段历史是什么样子？", None)
    assert "圣保罗" in key and not {"想", "一段", "样子"} & set(key)
    assert "assumed" not in question_key_terms("It is generally assumed that Lisbon is what?", None)


def test_decades_and_ordinals_are_no_key_terms():
    """"The 1600s" of a question is "the 17th century" of many passages: a figure said too many
    ways to be looked for as a word (the premise check skips it too)."""
    from desktop_kb.verify.question import question_key_terms

    key = question_key_terms("Which Irish cities had Huguenot mayors in the 1600s and 1700s?", None)
    assert "huguenot" in key and not {"1600s", "1700s"} & set(key)
    assert "3rd" not in question_key_terms("Who was the 3rd Duke of Marlborough?", None)
