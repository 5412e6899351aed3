"""Names an English question spells in pinyin, read back from the passages (real pypinyin)."""

from __future__ import annotations

from desktop_kb.text.pinyin_names import name_glossary, name_runs


def test_a_name_spelled_in_pinyin_is_read_as_the_passage_writes_it():
    passage = "潘淑，会稽句章（今浙江省宁波市）人，吴大帝孙权的皇后。"
    assert name_glossary("Where was Pan Shu from?", [passage]) == {"Pan Shu": "潘淑"}
    # a character with two readings (曾: céng, zēng) is read either way; tones do not count
    assert name_glossary("Where was the mathematician Zeng Jiong from?", ["曾炯()，字炯之，江西南昌人。"]) == \
        {"Zeng Jiong": "曾炯"}
    assert name_glossary("When was Kaifeng raised to a circuit?", ["开封府在崇宁五年被升为京畿路。"]) == {"Kaifeng": "开封"}


def test_only_what_a_passage_holds_and_only_names_of_two_syllables_or_more():
    assert name_glossary("Where was Pan Shu from?", ["潘皇后，名淑。"]) == {}  # not written together
    assert name_glossary("Where was Pan Shu from?", ["The empress Pan Shu."]) == {}  # no Chinese to read
    # an English word that spells one syllable is no name to read back
    assert name_glossary("What did the Song court eat?", ["宋朝宫廷吃什么"]) == {}
    # names spelled otherwise are not found (Wade-Giles 郭芝苑 is Guo Zhiyuan in pinyin)
    assert name_glossary("Whom did Kuo Chih-yuan admire?", ["郭芝苑曾多次表示对江文也的景仰。"]) == {}


def test_two_spellings_read_alike_in_a_tie_give_none_else_the_commoner():
    assert name_glossary("What is Jingji?", ["京畿路", "经济"]) == {}
    assert name_glossary("What is Jingji?", ["京畿路", "京畿", "经济"]) == {"Jingji": "京畿"}


def test_the_runs_tried_are_capitalised_words_in_a_row_and_their_parts_longest_first():
    assert name_runs("Did Pan Shu meet Sun Quan in Jian-ye?") == [
        "Did Pan Shu", "Did Pan", "Pan Shu", "Sun Quan", "Quan", "Jian ye", "Jian"]  # under four letters: not tried


def test_a_name_in_pinyin_is_not_common_english():
    from desktop_kb.text.pinyin_names import is_pinyin_name, pinyin_names

    assert [r for r in ("Pan Shu", "Zeng Jiong", "Anzhenmen", "Guizhou", "Sun Quan") if not is_pinyin_name(r)] == []
    # common English words that spell pinyin, and words all common ("Hong Kong": no Chinese passage
    # spells hong-kong, so every English question about it would be refused over Chinese passages)
    assert [r for r in ("China", "Canada", "Hong Kong", "Beijing", "Munich", "Long") if is_pinyin_name(r)] == []
    assert pinyin_names("When did Pan Shu visit Hong Kong and Anzhenmen?") == ["Pan Shu", "Anzhenmen"]
