"""Binding checks (verify/binding.py): the passage's own words, bound otherwise than the passage
binds them, are refused before the judge is asked; faithful copies and paraphrases are not."""

from __future__ import annotations

from desktop_kb.text.term_stats import TermStats
from desktop_kb.types import Chunk, Hit
from desktop_kb.verify.answer_type import echoes_question
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


HORMONES = ["By contrast, male sex hormones such as testosterone seem to be immunosuppressive.",
            "Female sex hormones such as estradiol are immunostimulators."]


def test_the_questions_subject_put_in_place_of_the_answer_is_a_moved_span():
    q = "What is the effect of testosterone on the male immune system?"
    assert moved_span("By contrast, male sex hormones such as testosterone seem to be testosterone", HORMONES, q) == (
        "immunosuppressive", "testosterone")
    # named where the sentence refers to it, once, it is not
    assert moved_span("By contrast, testosterone and its kind seem to be immunosuppressive", HORMONES, q) is None


def test_an_answer_of_the_questions_own_words_answers_nothing():
    q = "What is the effect of testosterone on the male immune system?"
    assert echoes_question("testosterone", q)
    assert echoes_question("It has an effect on the male immune system.", q)
    assert not echoes_question("It is immunosuppressive.", q)
    assert echoes_question("脱发", "男性的脱发问题可以由什么药物处理？")
    assert not echoes_question("非那雄胺", "男性的脱发问题可以由什么药物处理？")
    # a yes/no question's answer, and a choice the question offers, may repeat it
    assert not echoes_question("The tower is in Paris.", "Is the tower in Paris?")
    assert not echoes_question("任何员工都可以申请年假。", "任何员工都可以申请年假吗？")
    assert not echoes_question("Tesla", "Who invented AC, Tesla or Edison?")
    # nor another form of a name it gives
    assert not echoes_question("现代货箱码头", "现代货箱码头有限公司的简称是什么？")


def test_validate_refuses_an_answer_that_repeats_the_question():
    hit = Hit(Chunk("h1", "d2", "/docs/immune.md", 0, " ".join(HORMONES), ("Immune system",), 0, 140), "kb", 1.0)
    v = validate("Testosterone [1].", [hit], "What is the effect of testosterone on the male immune system?")
    assert not v.valid and any("only repeats words of the question" in e for e in v.errors)
    ok = validate("Testosterone seems to be immunosuppressive [1].", [hit],
                  "What is the effect of testosterone on the male immune system?")
    assert ok.valid, ok.errors
