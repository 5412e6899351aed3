"""The kind of answer a question asks for (verify/answer_type.py): a bare figure for "who / where /
why", works' titles for "where", no figure for "how many / what year" are refused by the word
checks; answers of the kind asked, and questions of no plain kind, are left alone."""

from __future__ import annotations

from desktop_kb.types import Chunk, Hit
from desktop_kb.verify.answer_type import answer_kind_mismatch
from desktop_kb.verify.citations import validate


def test_a_figure_does_not_answer_who_where_or_why():
    assert answer_kind_mismatch("Who translated this version of the scriptures?", "1294")
    assert answer_kind_mismatch("Why did Berlin Huguenots switch to German?", "1806")
    assert answer_kind_mismatch("导致北海道狼数量减少的原因是什么？", "1889年")
    assert answer_kind_mismatch("康王路在哪里？", "约2.8公里")
    assert answer_kind_mismatch("陈荣捷是哪里人？", "《朱学论集》、《西方对儒学的研究》等")
    assert not answer_kind_mismatch("Who translated this version of the scriptures?", "Jean de Meun, in 1294")
    assert not answer_kind_mismatch("康王路在哪里？", "广州市荔湾区")
    # 被称为什么 asks for a name ("as what"), not a reason
    assert not answer_kind_mismatch("四氟化碳又被称为什么？", "R-14")


def test_no_figure_does_not_answer_how_many_or_what_year():
    assert answer_kind_mismatch("In what year was the Corliss engine patented?", "Rumford medal")
    assert answer_kind_mismatch("陈荣捷卒于哪一年？", "广东开平")
    assert answer_kind_mismatch("康王路全长多少？", "广州市荔湾区")
    assert not answer_kind_mismatch("How many societal class divisions were in the plan?", "three, later four")
    assert not answer_kind_mismatch("陈荣捷卒于哪一年？", "一九九四年")
    assert not answer_kind_mismatch("How many students enrolled?", "None of them")


def test_questions_of_no_plain_kind_are_left_to_the_meaning_check():
    assert not answer_kind_mismatch("What is the population of Warsaw?", "1.7 million")
    assert not answer_kind_mismatch("What is the weakest force?", "gravity")
    assert not answer_kind_mismatch("How long did the siege last?", "all summer")


def test_validate_names_the_kind_asked_for():
    text = "The Corliss engine was patented in 1849 and won the Rumford medal."
    hit = Hit(Chunk("c1", "d1", "/docs/engines.md", 0, text, ("Engines",), 0, len(text)), "kb", 1.0)
    v = validate("The Rumford medal [1].", [hit], "In what year was the Corliss engine patented?")
    assert not v.valid and any("asks for a figure" in e for e in v.errors)
    assert validate("In 1849 [1].", [hit], "In what year was the Corliss engine patented?").valid
