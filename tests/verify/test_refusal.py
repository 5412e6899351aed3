"""One refusal, one reason (verify/refusal.py): the three kinds, each its own text; "about this"
only when the search and the question's key terms say so; the invented draft never quoted as if
the passage had been asked about it. Plumbing (scripted judges); the real model's refusals are in
tests/query/test_first_hour_real.py."""

from __future__ import annotations

from desktop_kb.types import Chunk, Hit
from desktop_kb.verify.answer_check import CheckOptions, check_answer, with_conditions
from desktop_kb.verify.citations import validate
from desktop_kb.verify.refusal import best_sentence, not_stated, topics, unsupported

FLIGHTS = ("All flights must be booked through the company travel portal. Economy class is standard for "
           "flights under six hours.")
MEALS = "Meals are reimbursed up to 60 euros per day. Receipts must be uploaded within 30 days of the trip."


def _hit(text: str, path: str, heading: str, n: int = 0) -> Hit:
    chunk = Chunk(chunk_id=f"c{n}", doc_id=f"d{n}", path=path, index=0, text=text, heading_path=(heading,),
                  start=0, end=len(text))
    return Hit(chunk=chunk, score=1.0, kb="kb")


PASSAGES = [_hit(FLIGHTS, "/docs/travel-policy.md", "Flights", 1), _hit(MEALS, "/docs/travel-policy.md", "Expenses", 2)]


class Scorer:
    def __init__(self, score: float) -> None:
        self.score = score

    def yes_no(self, messages, *, cancel=None):
        return self.score


def _check(question: str, draft: str, score: float, **kw):
    return check_answer(question, draft, PASSAGES, lambda t: validate(t, PASSAGES, question),
                        options=CheckOptions(threshold=0.0), scorer=Scorer(score), **kw)


def test_passages_about_something_else_are_named_not_called_about_this() -> None:
    question = "What is the company's parental leave policy?"
    draft = "The company's parental leave policy is that all flights must be booked through the company travel portal [1]."
    checked = _check(question, draft, -4.0)
    assert not checked.accepted and checked.refusal == "not_stated"
    # "parental" and "leave" are in no passage: the passages are not "about this"
    assert "about this" not in checked.text
    assert checked.text == ("The passages found speak of travel-policy.md › Flights; travel-policy.md › Expenses; "
                            "none of them answers this question, so I won't guess.")
    # the invented draft is not repeated as if the passage had been asked about it
    assert "booked" not in checked.text


def test_weak_retrieval_is_never_about_this() -> None:
    checked = _check("How many days do I have to upload receipts?", "Receipts must be uploaded within 30 days [2].",
                     -4.0, weak_retrieval=True)
    assert checked.refusal == "not_stated" and "about this" not in checked.text
    strong = _check("How many days do I have to upload receipts?", "Receipts must be uploaded within 30 days [2].",
                    -4.0)
    assert strong.text.startswith("The passages found (travel-policy.md › Expenses; travel-policy.md › Flights) "
                                  "are about this")


def test_a_draft_the_word_checks_refuse_says_what_its_passage_says() -> None:
    question = "How much may I spend on meals per day?"
    checked = _check(question, "You may spend 95 euros a day on meals [2].", 5.0)
    assert not checked.accepted and checked.refusal == "unsupported"
    assert checked.text == ("The answer I drafted is not what the cited passage says, so I won't give it. "
                            "Passage [2] says: \u201cMeals are reimbursed up to 60 euros per day.\u201d")
    assert "95" not in checked.text  # the invented figure is not repeated as if it were the passage's


def test_each_kind_in_chinese() -> None:
    zh = [_hit("住宿费每晚不超过五百元，一线城市不超过六百元。", "/docs/员工手册.md", "差旅报销")]
    assert not_stated("zh", zh, related=True) == "找到的段落（“员工手册.md › 差旅报销”）与此相关，但没有一段说明这个问题的答案，因此不作猜测。"
    assert not_stated("zh", zh, related=False) == "找到的段落讲的是“员工手册.md › 差旅报销”，没有一段回答这个问题，因此不作猜测。"
    assert unsupported("zh", 1, answer="五百元") == "起草的答案与所引段落的内容不符，因此不给出。段落[1]对这个问题的回答是“五百元”。"
    assert unsupported("zh", None) == "起草的答案无法对应到任何一段说明它的文字，因此不给出。"
    assert unsupported("en", None) == "The answer I drafted could not be tied to a passage that says it, so I won't give it."


def test_topics_name_each_document_and_heading_once_best_first() -> None:
    hits = [PASSAGES[1], PASSAGES[1], PASSAGES[0], _hit("x", "/a/notes.txt", "", 3), _hit("y", "/a/b.md", "B", 4)]
    assert topics(hits) == ["travel-policy.md › Expenses", "travel-policy.md › Flights", "notes.txt"]


def test_best_sentence_is_the_one_sharing_most_words_with_the_question() -> None:
    assert best_sentence("When must receipts be uploaded?", PASSAGES[1]) == (
        "Receipts must be uploaded within 30 days of the trip.")


# -- conditions travel with figures (verify/conditions.py) -------------------------------------------
HOTEL = "员工出差期间的住宿费用每晚不超过五百元，一线城市不超过六百元。报销须在出差结束后十五个工作日内提交。"


def _judge_off(question: str, answer: str, text: str = HOTEL):
    hit = _hit(text, "/docs/员工手册.md", "差旅报销")
    def check(t):
        return validate(t, [hit], question)

    checked = check_answer(question, answer, [hit], check, options=CheckOptions(judge=False))
    return with_conditions(question, checked, [hit], check, {})


def test_a_figure_given_without_its_other_case_gets_the_passage_sentence_quoted() -> None:
    zh = _judge_off("出差住宿费用每晚最多可以报销多少钱？", "出差住宿费用每晚最多可以报销500元。[1]")
    assert zh.accepted and zh.text == ("出差住宿费用每晚最多可以报销500元。[1]原文：“员工出差期间的住宿费用每晚不超过五百元，"
                                       "一线城市不超过六百元。”[1]")
    assert zh.citations[-1].quote.startswith("员工出差期间的住宿费用每晚不超过五百元，一线城市不超过六百元")
    en = _judge_off("How much may I spend on a hotel per night?", "500元 [1]")
    assert en.text == ("500元 [1]. The passage says: \u201c员工出差期间的住宿费用每晚不超过五百元，一线城市不超过六百元。"
                       "\u201d [1]")


def test_an_answer_that_gives_every_case_or_a_passage_with_one_figure_is_left_alone() -> None:
    both = "住宿费每晚不超过500元，一线城市不超过600元。[1]"
    assert _judge_off("出差住宿费用每晚最多可以报销多少钱？", both).text == both
    one = "Meals are reimbursed up to 60 euros per day [1]."
    assert _judge_off("How much for meals?", one, MEALS).text == one
