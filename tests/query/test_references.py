"""A follow-up's pronoun replaced by what it stands for (plumbing with a scripted generator; the
model's own accuracy is measured by benchmarks/bench_followups.py and the real-model journey test)."""

from __future__ import annotations

from desktop_kb.query.references import back_reference, replace_reference, resolve_reference
from desktop_kb.query.rewrite import rewrite

HISTORY = [("梁邦彦出生于什么地方？", "梁邦彦出生于东京。[1]")]


def test_words_that_point_back_are_found_and_others_are_not():
    assert back_reference("他的父亲选择了哪国国籍？") == "他"
    assert back_reference("它们生活在哪里？") == "它们"
    assert back_reference("When was its Parental Leave directive created?") == "its"
    assert back_reference("And the largest medical school there?") == "there"
    assert back_reference("Is there a limit on hotels?") is None  # "there is/are" points nowhere
    assert back_reference("How much may I spend on a hotel per night?") is None
    assert back_reference("What did Smith say?") is None  # "it" inside a word is no pronoun
    assert back_reference("其他员工的住宿标准是什么？") is None


def test_the_word_is_replaced_as_grammar_asks():
    assert replace_reference("他的父亲选择了哪国国籍？", "他", "梁邦彦") == "梁邦彦的父亲选择了哪国国籍？"
    assert replace_reference("When was its directive created?", "its", "the UK") == "When was UK's directive created?"
    assert replace_reference("What are its three sources?", "its", "European Union law") == \
        "What are European Union law's three sources?"
    assert replace_reference("How long is it?", "it", "the Kang Wang Road") == "How long is the Kang Wang Road?"
    assert replace_reference("And the largest medical school there?", "there", "Poland") == \
        "And the largest medical school in Poland?"
    assert replace_reference("It was built when?", "It", "the bridge") == "The bridge was built when?"


def test_the_referent_counts_only_when_copied_from_the_last_turn(scripted):
    gen = scripted(json_replies=[{"refers_to": "梁邦彦"}])
    assert resolve_reference("他的父亲选择了哪国国籍？", HISTORY, gen) == "梁邦彦的父亲选择了哪国国籍？"
    assert "Earlier question: 梁邦彦出生于什么地方？" in gen.calls[0]["messages"][-1]["content"]
    assert "[1]" not in gen.calls[0]["messages"][-1]["content"]  # the answer's marks are not shown to it
    for invented in ({"refers_to": "王小明"}, {"refers_to": "他"}, {"wrong": "x"}, "not json"):
        assert resolve_reference("他的父亲选择了哪国国籍？", HISTORY, scripted(json_replies=[invented])) is None


def test_nothing_is_asked_without_a_pointing_word_or_a_conversation(scripted):
    gen = scripted(json_replies=[])
    assert resolve_reference("梁邦彦的父亲是谁？", HISTORY, gen) is None
    assert resolve_reference("他的父亲是谁？", [], gen) is None
    assert gen.calls == []


def test_a_follow_up_the_rewrite_hands_back_unchanged_is_resolved(scripted):
    gen = scripted(json_replies=[{"query": "他的父亲选择了哪国国籍？"}, {"refers_to": "梁邦彦"}])
    assert rewrite("他的父亲选择了哪国国籍？", HISTORY, gen) == ["梁邦彦的父亲选择了哪国国籍？"]
    gen = scripted(json_replies=[{"query": "梁邦彦的父亲选择了哪国国籍？"}])
    assert rewrite("他的父亲选择了哪国国籍？", HISTORY, gen) == ["梁邦彦的父亲选择了哪国国籍？"]
    assert len(gen.calls) == 1  # resolved by the rewrite: no second call


def test_other_and_others_are_not_pronouns():
    assert replace_reference("他和其他员工的住宿标准一样吗？", "他", "张伟") == "张伟和其他员工的住宿标准一样吗？"
    assert back_reference("他人的报销怎么办？") is None
