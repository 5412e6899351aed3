"""The named subject of a question (verify/subject.py) and the refusal of an answer whose cited
passages do not name it (plumbing: a scripted judge that would pass the answer)."""

from __future__ import annotations

from desktop_kb.types import Chunk, Hit
from desktop_kb.verify.answer_check import CheckOptions, check_answer
from desktop_kb.verify.citations import validate
from desktop_kb.verify.subject import absent_subject, question_subjects

OTHER_EEL = "蟒鳗为蚓鳗科的其中一种，分布于印度太平洋区，体长可达42公分。"
THE_EEL = "线蚓鳗为蚓鳗科的其中一种，分布于印度太平洋区，体长可达33公分。"


def test_the_subject_is_a_title_or_the_name_the_question_opens_with():
    assert question_subjects("线蚓鳗的体长是多少？") == ("线蚓鳗",)
    assert question_subjects("《掌故王》由哪个公司制作？") == ("掌故王",)
    assert question_subjects("请简述林越峰的写作风格？") == ("林越峰",)
    assert question_subjects("潘淑是哪里人？") == ("潘淑",)  # 潘淑是: the segmenter glued 是 on


def test_everyday_words_and_english_questions_name_no_subject():
    # a policy's own words are no name: the passage may say 住宿 where the question says 住宿费用
    assert question_subjects("出差住宿费用每晚最多可以报销多少钱？") == ()
    assert question_subjects("差旅费报销标准是多少？") == ()
    assert question_subjects("年假有几天？") == ()
    assert question_subjects("退款会退到哪里？") == ()  # 退款|会退: a particle glued on is no part of a name
    assert question_subjects("How long is the eel?") == ()
    # traditional characters: its everyday words are unknown to the simplified dictionary
    assert question_subjects("擁有「東引別墅」別名的建築是由哪一國人設計的？") == ()


def test_a_passage_names_the_subject_by_the_name_or_its_first_characters():
    assert absent_subject("线蚓鳗的体长是多少？", [OTHER_EEL]) == "线蚓鳗"
    assert absent_subject("线蚓鳗的体长是多少？", [OTHER_EEL, THE_EEL]) == ""
    assert absent_subject("长齿锯犁鳗分布在什么地区？", ["长齿锯犁属的鱼分布在印度西太平洋。"]) == ""  # 长齿锯
    assert absent_subject("《掌故王》由哪个公司制作？", ["长鼻王由嘉兴长鼻王食品有限公司生产。"]) == "掌故王"


def test_passages_in_another_language_or_script_are_not_read_for_it():
    assert absent_subject("线蚓鳗的体长是多少？", ["The snake eel grows to 42 cm."]) == ""
    traditional = "線蚓鰻為蚓鰻科的魚，這個種類的體長來說是33公分，國會時間。"
    assert absent_subject("线蚓鳗的体长是多少？", [traditional]) == ""
    assert absent_subject("线蚓鳗的体长是多少？", []) == ""


def _hit(text: str, name: str) -> Hit:
    return Hit(Chunk(name, name, f"/docs/{name}.md", 0, text, (name,), 0, len(text)), "kb", 1.0)


class _Judge:
    """A judge that would pass the answer: its reading is the draft's figure, with a high score."""

    def __init__(self, span: str = "42公分") -> None:
        self.span = span

    def answer_span(self, messages, *, refusal=("none",), candidate="", candidate_if=None, max_tokens=24,
                    cancel=None):
        from desktop_kb.protocols import SpanReading

        return SpanReading(4.0, self.span)

    def yes_no(self, messages, *, cancel=None):
        return 4.0


def _check(question: str, answer: str, hits: list[Hit], span: str = "42公分"):
    return check_answer(question, answer, hits, lambda t: validate(t, hits, question),
                        options=CheckOptions(threshold=0.6), scorer=_Judge(span))


def test_an_answer_about_something_else_is_refused_naming_what_was_asked():
    hits = [_hit(OTHER_EEL, "蟒鳗")]
    checked = _check("线蚓鳗的体长是多少？", "蟒鳗的体长可达42公分[1]。", hits)
    assert not checked.accepted and checked.refusal == "not_stated"
    assert "线蚓鳗" in checked.text and "蟒鳗" in checked.text  # what was asked, what the passages speak of
    assert "42" not in checked.text
    assert checked.answerability is not None and "线蚓鳗" in checked.answerability.missing_terms
    assert checked.withheld is not None and "42公分" in checked.withheld.text


def test_the_refusal_does_not_say_no_passage_names_it_when_another_does():
    hits = [_hit(OTHER_EEL, "蟒鳗"), _hit(THE_EEL, "线蚓鳗")]
    checked = _check("线蚓鳗的体长是多少？", "蟒鳗的体长可达42公分[1]。", hits)
    assert not checked.accepted and checked.refusal == "not_stated"
    assert "没有提到" not in checked.text


def test_an_answer_from_a_passage_that_names_the_subject_is_judged_as_before():
    checked = _check("线蚓鳗的体长是多少？", "线蚓鳗的体长可达33公分[1]。", [_hit(THE_EEL, "线蚓鳗")], span="33公分")
    assert checked.accepted, (checked.text, checked.problems)
    assert checked.judge_score == 4.0


def test_an_english_questions_pinyin_name_must_be_written_by_a_chinese_passage():
    """"When did Anzhenmen station open?" over a base without 安贞门站's article was answered with
    安德门站's date: a name the question spells in pinyin is read back through the passages'
    characters; names spelled otherwise, common English words and English passages are not read."""
    other_station = ["安德门站是南京地铁1号线的车站，1996年开通。"]
    assert absent_subject("When did Anzhenmen station open?", other_station) == "Anzhenmen"
    assert absent_subject("When did Anzhenmen station open?", ["安贞门站是北京地铁10号线的车站。"]) == ""
    assert absent_subject("Where was Pan Shu from?", ["DEV_162.md › 潘淑 潘皇后，名淑，会稽句章人。"]) == ""
    assert absent_subject("Which country does Svealand belong to?", other_station) == ""  # not pinyin
    assert absent_subject("Which country is next to China?", other_station) == ""  # a common English word
    assert absent_subject("When did Anzhenmen station open?", ["Anzhenmen station opened in 2008."]) == ""


def test_the_subject_of_the_question_as_translated_for_the_judge_must_stand_in_the_passage_too():
    """"How long is the slender worm eel?" names nothing in pinyin; the judge reads it as
    translated (线蚓鳗的体长是多少？), whose subject the other eel's passage does not name: refused,
    without putting the translation's name to the user."""
    hits = [_hit(OTHER_EEL, "蟒鳗")]

    def check(asked: str):
        return check_answer("How long is the slender worm eel?", "It grows to 42 cm [1].", hits,
                            lambda t: validate(t, hits, "How long is the slender worm eel?"),
                            options=CheckOptions(threshold=0.6), scorer=_Judge("42公分"),
                            judge_question=lambda citations: asked)

    refused = check("线蚓鳗的体长是多少？")
    assert not refused.accepted and refused.refusal == "not_stated"
    assert "线蚓鳗" not in refused.text and "线蚓鳗" in refused.problems[0]
    assert check("蟒鳗的体长是多少？").accepted  # the subject the passage names: judged as before
