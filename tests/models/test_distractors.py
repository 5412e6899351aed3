"""training/distractors.py and the split: the typed wrong answers the verifier is trained to reject,
and an English article always on the side of its Chinese translation. Data plumbing (no model)."""

from __future__ import annotations

import random

from desktop_kb.eval.datasets import QAItem
from training.align_en import TITLES
from training.data import article_key, split_of
from training.distractors import candidates, shape, typed_claims

EN = ("The Normans conquered England in 1066. William of Normandy was crowned at Westminster Abbey on "
      "Christmas Day. Harold Godwinson died at Hastings with 7,000 men.")
ZH = "1949年，毛泽东在北京宣布成立中华人民共和国。周恩来担任总理，办公地点在中南海。"


def _item(question: str, answer: str) -> QAItem:
    return QAItem("q", question, (answer,), "d", True, {})


def test_shapes_only_for_short_answers_of_one_kind():
    assert shape("1066") == "number" and shape("7,000 men") == "number"
    assert shape("William of Normandy") == "name"
    assert shape("毛泽东") == "nr" and shape("北京") == "ns"  # jieba's tags
    assert shape("crowned at the abbey") is None  # English, not a name
    assert shape("他在那里宣布成立了一个新的国家并担任领导") is None  # too long for a bare answer


def test_candidates_are_of_the_answers_kind_and_never_a_gold_or_question_word():
    names = candidates("William of Normandy", "name", EN, "Who was crowned at Westminster Abbey?",
                       ("William of Normandy", "William"))
    assert "Christmas Day" in names and "Harold Godwinson" in names
    assert not any("William" in n or "Westminster" in n for n in names)
    assert candidates("1066", "number", EN, "When did the Normans conquer England?", ("1066",)) == ["7,000"]
    places = candidates("北京", "ns", ZH, "毛泽东在哪里宣布成立中华人民共和国？", ("北京",))
    assert places == ["中南海"]


def test_each_answerable_question_gets_a_bare_and_a_sentence_negative():
    rng = random.Random(3)
    out = dict(typed_claims(_item("Where did Harold Godwinson die?", "Hastings"), EN, rng))
    assert set(out) == {"typed_short", "typed_swap"}
    assert out["typed_short"] in ("England", "William of Normandy", "Westminster Abbey", "Christmas Day")
    assert out["typed_swap"] == f"Harold Godwinson died at {out['typed_short']} with 7,000 men."
    zh = dict(typed_claims(_item("毛泽东在哪里宣布成立中华人民共和国？", "北京"), ZH, rng))
    assert zh == {"typed_short": "中南海", "typed_swap": "1949年，毛泽东在中南海宣布成立中华人民共和国。"}
    # an answer that stands twice in its passage has no one sentence: nothing is made
    assert list(typed_claims(_item("Who?", "Normans"), EN + " The Normans left.", rng)) == []


def test_an_english_article_is_split_with_its_chinese_translation():
    for zh, en in TITLES.items():
        side = split_of(article_key("chinesesquad_zh", zh))
        assert split_of(article_key("squad_en_aligned", en.replace("_", " "))) == side
        assert split_of(article_key("squad2_testhalf_en_unlabelled", en)) == side
    assert article_key("squad2_testhalf_en_unlabelled", "Miscellaneous") == "squad2_testhalf_en_unlabelled:Miscellaneous"
    assert article_key("drcd_test", "台北") == "drcd_test:台北"
