"""An English answer over Chinese passages put in one script (query/one_script.py): dates, lines and
measures by rule, other runs by a scripted model (plumbing), with what a reply must hold to be used."""

from __future__ import annotations

from desktop_kb.query.one_script import by_rule, chinese_runs, in_one_script, romanised


class _Model:
    def __init__(self, reply: str) -> None:
        self.reply, self.asked = reply, []

    def chat(self, messages, **kw):
        self.asked.append(messages[-1]["content"])
        return self.reply


def test_dates_lines_and_measures_are_put_into_english_by_rule():
    assert by_rule("2005年2月5日") == "5 February 2005"
    assert by_rule("2011年1月") == "January 2011"
    assert by_rule("16号线") == "Line 16" and by_rule("北京地铁10号线") == "Beijing Subway Line 10"
    assert by_rule("42公分") == "42 cm"
    assert by_rule("500元") == "500 yuan"
    assert by_rule("2005年13月") is None and by_rule("黄河巨龙") is None


def test_chinese_in_quotes_or_brackets_stays():
    text = "It is called “厚壳仔” (厚壳仔) on the Beijing地铁10号线 [1]."
    assert [text[s:e] for s, e in chinese_runs(text)] == ["地铁10号线"]
    assert chinese_runs("Hotels are reimbursed up to 180 euros [1].") == []


def test_a_run_is_followed_by_its_own_words_in_brackets():
    model = _Model("1. first-tier cities")
    text = in_one_script("Hotels cost up to 600 yuan in 一线城市 and the planned 16号线 [1].", model)
    assert text == "Hotels cost up to 600 yuan in first-tier cities (一线城市) and the planned Line 16 (16号线) [1]."
    assert model.asked == ["1. 一线城市"]  # the line went by rule, in no model call
    assert in_one_script("2005年2月5日 [4]", None) == "5 February 2005 (2005年2月5日) [4]"
    said = in_one_script("Suzhou Street is a station on the Beijing地铁10号线 [1].", None)
    assert said == "Suzhou Street is a station on the Beijing Subway Line 10 (地铁10号线) [1]."  # "Beijing" once


def test_a_name_is_romanised_not_translated():
    """The small model renamed 白朗宁 "William Shakespeare": a run that is not everyday words is
    put in pinyin, by rule, whatever the model would say."""
    model = _Model("1. William Shakespeare")
    assert in_one_script("John·白朗宁 [1]", model) == "John·Bailangning (白朗宁) [1]"
    assert in_one_script("The mother of Zhu Youyuan was 邵宸妃 [1].", model) == (
        "The mother of Zhu Youyuan was Shaochenfei (邵宸妃) [1].")
    assert model.asked == []
    assert romanised("约翰·白朗宁") == "Yuehan Bailangning"


def test_a_reply_with_chinese_or_other_figures_is_not_used():
    original = "Take 药物 within 一线城市 [1]."
    assert in_one_script(original, _Model("1. 药 medicine\n2. first-tier cities 2")) == original
    assert in_one_script(original, None) == original  # no model: the runs stay as they are
    assert in_one_script(original, _Model("1. the medicine")) == "Take the medicine (药物) within 一线城市 [1]."


def test_an_answer_written_in_chinese_is_left_whole():
    text = "药物（如非那雄胺）或治疗，均能达到不同程度的成功效果。[1]"
    assert in_one_script(text, _Model("1. medicine")) == text


def test_a_quoted_chinese_sentence_is_followed_by_its_english():
    """The hotel answer: its condition reaches a reader of English (the first-tier cities' 600)."""
    text = "500 yuan (500元) [2]. The passage says: “员工出差期间的住宿费用每晚不超过五百元，一线城市不超过六百元。” [2]"
    model = _Model("1. During business trips, hotel costs may not exceed 500 yuan a night, or 600 yuan in "
                   "first-tier cities.")
    out = in_one_script(text, model)
    assert out == (text.removesuffix(" [2]") + " (in English: During business trips, hotel costs may not exceed "
                   "500 yuan a night, or 600 yuan in first-tier cities.) [2]")
    # a translation that changes a figure (五百 read as 5,000) is not used
    assert in_one_script(text, _Model("1. Hotel costs may not exceed 5000 yuan, or 600 yuan.")) == text
    assert in_one_script("It is called “厚壳仔” [1].", _Model("1. thick-shelled")) == "It is called “厚壳仔” [1]."


def test_a_place_turned_into_another_places_pinyin_is_romanised_instead():
    """江西南昌 is everyday words, so the model put it into English: "Jiangsu Province, Jiangnan",
    two other places. A capitalised word that begins with a word's first syllable without spelling
    it is caught, and the run goes in pinyin, a word each; a right name ("Zhejiang") stands."""
    assert in_one_script("Zeng Jiong was from 江西南昌 [1].", _Model("1. Jiangsu Province, Jiangnan")) == (
        "Zeng Jiong was from Jiangxi Nanchang (江西南昌) [1].")
    assert in_one_script("She lived in 浙江省 [1].", _Model("1. Zhejiang Province")) == (
        "She lived in Zhejiang Province (浙江省) [1].")
