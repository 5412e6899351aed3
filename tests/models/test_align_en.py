"""training/align_en.py: English claims recovered from the labelled Chinese translation.

Plumbing only: a dictionary embedder stands in for e5 (which text translates which is given), so
what is tested is the alignment and the rules by which an English span is found: by string first,
else the one word run close enough in meaning and clear of the others, else none. The real run
is measured in training/README.md and docs/history/meaning-check.md."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence

import numpy as np
import pytest

from training.align_en import _english_span, _name_span, _phrase_span, _phrases, aligned_english

# each group: texts that mean the same (the fake embedder gives them one vector)
GROUPS = [
    ["南加州，通常缩写为SoCal，包括10个县。洛杉矶是最大的城市。",
     "Southern California, often abbreviated SoCal, includes 10 counties. Los Angeles is the largest city."],
    ["南加州通常缩写为什么？", "What is Southern California often abbreviated as?"],
    ["南加州有几个县？", "How many counties does Southern California include?"],
    ["最大的城市是哪个？", "What is the largest city?"],
    ["南加州的首都是哪里？", "What is the capital of Southern California?"],
    ["南加州，通常缩写为SoCal，包括10个县。", "Southern California, often abbreviated SoCal, includes 10 counties."],
    ["洛杉矶是最大的城市。", "Los Angeles is the largest city."],
    ["洛杉矶", "Los Angeles"],
    ["经济中心", "economic centre"],
    ["南加州包括什么？", "What does Southern California include?"],
]


def _embed(texts: Sequence[str]) -> np.ndarray:
    out = np.zeros((len(texts), len(GROUPS) + 64))
    for i, t in enumerate(texts):
        g = next((k for k, group in enumerate(GROUPS) if t.strip() in group), None)
        if g is None:  # anything else: its own direction, far from every group
            out[i, len(GROUPS) + zlib.crc32(t.encode()) % 64] = 1.0
        else:
            out[i, g] = 1.0
    return out


def test_an_english_span_is_found_by_string_or_not_at_all():
    assert _english_span("SoCal", "often abbreviated SoCal, includes") == "SoCal"
    assert _english_span("1066年", "In 1066 the Normans came.") == "1066"
    assert _english_span("3,792,621人", "a population of 3,792,621 people") == "3,792,621"
    assert _english_span("10个", "includes 100 counties") is None  # a number inside another is no match
    assert _english_span("洛杉矶", "Los Angeles is the largest city.") is None  # no Latin letters or digits
    assert _name_span("七", "There are seven counties.", _embed) == "seven"
    assert _name_span("洛杉矶", "Los Angeles is the largest city.", _embed) == "Los Angeles"
    assert _name_span("经济中心", "It is the economic centre of the region.", _embed) is None  # no name is close


def test_where_no_string_matches_the_word_run_closest_in_meaning_is_the_span():
    sentence = "It is the economic centre of the region."
    runs = {sentence[a:b] for a, b in _phrases(sentence)}
    assert "economic centre" in runs and "region" in runs
    assert not {"the economic centre", "centre of", "of the region"} & runs  # no small word at an edge
    assert "1,600 miles" in {t[a:b] for t in ["about 1,600 miles (2,600 km) long"] for a, b in _phrases(t)}
    assert not any("," in "ABC, Sony Pictures"[a:b] for a, b in _phrases("ABC, Sony Pictures"))  # one clause
    assert _phrase_span("经济中心", sentence, _embed) == "economic centre"
    assert _phrase_span("经济中心", "It is a small town of the region.", _embed) is None  # nothing close enough
    # two runs as close as each other: no span is guessed
    assert _phrase_span("经济中心", "One economic centre, then another economic centre.", _embed) is None


@pytest.fixture
def files(tmp_path):
    zh_context, en_context = GROUPS[0]
    zh = {"data": [{"title": "南加利佛尼亚州", "paragraphs": [{"context": zh_context, "qas": [
        {"id": "z1", "question": GROUPS[1][0], "is_impossible": False,
         "answers": [{"text": "SoCal", "answer_start": zh_context.index("SoCal")}]},
        {"id": "z2", "question": GROUPS[2][0], "is_impossible": False,
         "answers": [{"text": "10", "answer_start": zh_context.index("10")}]},
        {"id": "z3", "question": GROUPS[3][0], "is_impossible": False,
         "answers": [{"text": "洛杉矶", "answer_start": zh_context.index("洛杉矶")}]},
        {"id": "z4", "question": GROUPS[4][0], "is_impossible": True, "answers": []},
        {"id": "z5", "question": GROUPS[9][0], "is_impossible": False,  # no string, name or close run
         "answers": [{"text": "县", "answer_start": zh_context.index("县")}]},
    ]}]}]}
    en = {"data": [{"title": "Southern_California", "paragraphs": [{"context": en_context, "qas": [
        {"id": "e-b", "question": GROUPS[2][1]}, {"id": "e-a", "question": GROUPS[1][1]},
        {"id": "e-c", "question": GROUPS[3][1]}, {"id": "e-d", "question": GROUPS[4][1]},
        {"id": "e-x", "question": "A question with no counterpart?"}, {"id": "e-e", "question": GROUPS[9][1]},
    ]}]}]}
    (tmp_path / "chinesesquad_zh.json").write_text(json.dumps(zh, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "squad2_testhalf_en_unlabelled.json").write_text(json.dumps(en), encoding="utf-8")
    return tmp_path


def test_questions_align_by_meaning_and_carry_the_chinese_labels(files):
    ds = aligned_english(files, _embed, _embed, log=lambda _m: None)
    got = {item.id: (item.answerable, item.answers) for item in ds.items}
    assert got == {"e-a": (True, ("SoCal",)), "e-b": (True, ("10",)), "e-c": (True, ("Los Angeles",)),
                   "e-d": (False, ())}  # e-x has no Chinese counterpart; e-e no span found: left out
    (doc,) = ds.corpus.values()
    assert doc.title == "Southern California" and doc.text == GROUPS[0][1]
    for item in ds.items:
        assert all(a in doc.text for a in item.answers)  # every span is in the English paragraph


def test_where_no_match_finds_a_span_the_reader_given_is_asked_with_the_aligned_sentence(files):
    asked = []

    def read(question: dict, sentence: str, zh_answer: str) -> str:
        asked.append((question["id"], question["title"], sentence, zh_answer))
        return "counties" if question["id"] == "e-e" else ""

    ds = aligned_english(files, _embed, _embed, log=lambda _m: None, read=read)
    assert asked == [("e-e", "Southern_California", GROUPS[5][1], "县")]  # only where nothing else found one
    got = {item.id: item.answers for item in ds.items if item.answerable}
    assert got["e-e"] == ("counties",) and got["e-a"] == ("SoCal",)
    ds = aligned_english(files, _embed, _embed, log=lambda _m: None, read=lambda *_a: "")
    assert "e-e" not in {item.id for item in ds.items}  # the reader found nothing: left out as before
