"""An English answer over Chinese passages put in one script (query/one_script.py): dates, lines and
measures by rule, other runs by a scripted model (plumbing), with what a reply must hold to be used."""

from __future__ import annotations

from desktop_kb.query.one_script import by_rule, chinese_runs, in_one_script


class _Model:
    def __init__(self, reply: str) -> None:
        self.reply, self.asked = reply, []

    def chat(self, messages, **kw):
        self.asked.append(messages[-1]["content"])
        return self.reply


def test_dates_lines_and_measures_are_put_into_english_by_rule():
    assert by_rule("2005年2月5日") == "5 February 2005"
    assert by_rule("2011年1月") == "January 2011"
    assert by_rule("16号线") == "Line 16"
    assert by_rule("42公分") == "42 cm"
    assert by_rule("500元") == "500 yuan"
    assert by_rule("2005年13月") is None and by_rule("黄河巨龙") is None


def test_chinese_in_quotes_or_brackets_stays():
    text = "It is called “厚壳仔” (厚壳仔) on the Beijing地铁10号线 [1]."
    assert [text[s:e] for s, e in chinese_runs(text)] == ["地铁10号线"]
    assert chinese_runs("Hotels are reimbursed up to 180 euros [1].") == []


def test_a_run_is_followed_by_its_own_words_in_brackets():
    model = _Model("1. Beijing Subway Line 10")
    text = in_one_script("Suzhou Street is a station on the Beijing地铁10号线 and the planned 16号线 [1].", model)
    assert text == ("Suzhou Street is a station on the Beijing Subway Line 10 (地铁10号线) and the planned "
                    "Line 16 (16号线) [1].")  # "Beijing" said once
    assert model.asked == ["1. 地铁10号线"]  # the line number went by rule, in no model call
    assert in_one_script("2005年2月5日 [4]", None) == "5 February 2005 (2005年2月5日) [4]"


def test_a_reply_with_chinese_or_other_figures_is_not_used():
    original = "The early stages were the黄河巨龙 and the地铁10号线 [1]."
    assert in_one_script(original, _Model("1. 黄河 dragon\n2. Subway Line 11")) == original
    assert in_one_script(original, None) == original  # no model: the runs stay as they are
    assert in_one_script(original, _Model("1. the Huanghe dragon")) == (
        "The early stages were the Huanghe dragon (黄河巨龙) and the地铁10号线 [1].")


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
