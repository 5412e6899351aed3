"""Binding checks (verify/binding.py): the passage's own words, bound otherwise than the passage
binds them, are refused before the judge is asked; faithful copies and paraphrases are not."""

from __future__ import annotations

from desktop_kb.text.term_stats import TermStats
from desktop_kb.types import Chunk, Hit
from desktop_kb.verify.binding import answer_elsewhere, moved_span
from desktop_kb.verify.citations import validate

TEXT = ("The contract was drafted in March by the legal team. It was signed by Ms. Lin and approved by "
        "Mr. Park. The board met twice in April to discuss the budget.")
SENTENCES = ["The contract was drafted in March by the legal team.",
             "It was signed by Ms. Lin and approved by Mr. Park.",
             "The board met twice in April to discuss the budget."]


def _hit(text: str = TEXT) -> Hit:
    return Hit(Chunk("c1", "d1", "/docs/contract.md", 0, text, ("Contract",), 0, len(text)), "kb", 1.0)


def test_a_span_put_where_the_sentence_says_something_else_is_seen():
    assert moved_span("It was signed by Ms. Lin and approved by Ms. Lin", SENTENCES) == ("Mr. Park", "Ms. Lin")
    assert moved_span("It was signed by Ms. Lin and approved by the legal team", SENTENCES) == (
        "Mr. Park", "the legal team")
    assert moved_span("It was signed by Mr. Park and approved by Ms. Lin", SENTENCES) == ("Ms. Lin", "Mr. Park")


def test_faithful_copies_and_rewordings_are_not_moved_spans():
    assert moved_span("It was signed by Ms. Lin and approved by Mr. Park", SENTENCES) is None
    assert moved_span("Ms. Lin signed it and Mr. Park approved it", SENTENCES) is None
    assert moved_span("It was approved by Mr. Park", SENTENCES) is None
    # the question's subject in place of the passage's "it" is no moved span
    assert moved_span("The contract was signed by Ms. Lin", SENTENCES, "Who signed the contract?") is None


def test_a_short_answer_from_a_sentence_about_something_else_is_seen():
    stats = TermStats.from_texts([TEXT, "Hotels are reimbursed up to 180 euros.", "The canteen opens at noon."])
    other = answer_elsewhere("the legal team", "When did the board meet to discuss the budget?", SENTENCES, stats)
    assert other == SENTENCES[2]
    assert answer_elsewhere("twice in April", "When did the board meet to discuss the budget?", SENTENCES,
                            stats) is None
    assert answer_elsewhere("Mr. Park", "Who approved the contract?", SENTENCES, stats) is None


def test_validate_refuses_a_wrong_binding_and_says_what_the_passage_says():
    hit = _hit()
    bad = validate("It was signed by Ms. Lin and approved by Ms. Lin [1].", [hit], "Who approved the contract?")
    assert not bad.valid and bad.unsupported
    assert "passage [1] says \u201cMr. Park\u201d there, not \u201cMs. Lin\u201d" in bad.errors[0]
    good = validate("It was signed by Ms. Lin and approved by Mr. Park [1].", [hit], "Who approved the contract?")
    assert good.valid
    short = validate("The legal team [1].", [hit], "When did the board meet to discuss the budget?",
                     stats=TermStats.from_texts([TEXT, "Hotels are reimbursed.", "The canteen opens at noon."]))
    assert not short.valid and "does not give this as the answer" in short.errors[0]
