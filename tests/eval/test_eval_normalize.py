"""Answer normalisation for English and Chinese gold answers."""

from __future__ import annotations

from desktop_kb.eval.normalize import contains_answer, normalize_cjk, normalize_en


def test_english_normalisation() -> None:
    assert normalize_en("The Quick,  brown FOX!") == "quick brown fox"
    assert normalize_en("an apple a day") == "apple day"
    assert normalize_en("ＡＢＣ １２３") == "abc 123"  # full width via NFKC


def test_english_containment_respects_word_boundaries() -> None:
    assert contains_answer("It was William Pitt [1].", ["william pitt"])
    assert contains_answer("Dendritic cells, according to [2].", ["the dendritic cells"])
    assert not contains_answer("He lived in Pittsburgh [1].", ["Pitt"])
    assert not contains_answer("anything", [])
    assert not contains_answer("anything", [""])


def test_chinese_normalisation() -> None:
    assert normalize_cjk("《黑 姑娘》，！") == "黑姑娘"
    assert normalize_cjk("２０１８年") == "2018年"


def test_chinese_containment() -> None:
    assert contains_answer("廖琼枝编导的作品是《黑姑娘》[1]。", ["《黑姑娘》"])
    assert contains_answer("作品叫 黑 姑 娘", ["黑姑娘"])
    assert not contains_answer("作品叫白姑娘[1]", ["黑姑娘"])
    # any of several references
    assert contains_answer("光荣和ω-force", ["任天堂", "ω-force"])
