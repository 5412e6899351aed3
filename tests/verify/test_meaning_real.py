"""The meaning check with the real shipped LLM (Qwen2.5-Coder-1.5B, llama.cpp): claims made of the
passage's own words, bound rightly and wrongly, in English and Chinese, through the product's
answer check (word and figure checks, then the judge at the shipped thresholds). None of these
texts is among the judge prompt's examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_kb.settings import Settings
from desktop_kb.text.term_stats import TermStats
from desktop_kb.types import Chunk, Hit
from desktop_kb.verify.answer_check import CheckOptions, check_answer
from desktop_kb.verify.citations import validate

pytestmark = [pytest.mark.slow, pytest.mark.llm]

CONTRACT = "The supply contract was signed by Ms. Lin in May and approved by Mr. Park in June."
REFUNDS = "Refunds go to the original card. Store credit is offered for late returns."
HETONG = "这份供货合同由林女士在五月签署，由朴先生在六月批准。"
TUIKUAN = "退款将退回原银行卡。逾期退货只能换取商店积分。"
OTHER = {"en": ("Hotels are reimbursed up to 180 euros per night.", "The canteen opens at noon."),
         "zh": ("出差住宿每晚不超过五百元。", "食堂中午十二点开门。")}

CASES = [  # (passage, question, answer, accepted)
    (CONTRACT, "Who approved the supply contract?", "The supply contract was approved by Mr. Park [1].", True),
    (CONTRACT, "Who approved the supply contract?", "The supply contract was approved by Ms. Lin [1].", False),
    (CONTRACT, "Who approved the supply contract?", "Mr. Park [1].", True),
    (CONTRACT, "Who approved the supply contract?", "Ms. Lin [1].", False),
    (REFUNDS, "Where do refunds go?", "Refunds go to the original card [1].", True),
    (REFUNDS, "Where do refunds go?", "Refunds go to store credit [1].", False),
    (HETONG, "谁批准了这份供货合同？", "这份供货合同由朴先生批准[1]。", True),
    (HETONG, "谁批准了这份供货合同？", "这份供货合同由林女士批准[1]。", False),
    (HETONG, "谁批准了这份供货合同？", "朴先生[1]。", True),
    (HETONG, "谁批准了这份供货合同？", "林女士[1]。", False),
    (TUIKUAN, "退款会退到哪里？", "退款将退回原银行卡[1]。", True),
    (TUIKUAN, "退款会退到哪里？", "退款将退回商店积分[1]。", False),
]


def _hit(text: str, n: int) -> Hit:
    return Hit(Chunk(f"c{n}", f"d{n}", f"/docs/d{n}.md", 0, text, (), 0, len(text)), "kb", 1.0)


@pytest.fixture(scope="module")
def judge_llm(shipped_llm):
    from desktop_kb.backends.llm_llamacpp import LlamaCppGenerator

    gen = LlamaCppGenerator(shipped_llm, shipped_llm.stem, n_ctx=2048, n_threads=2)
    yield gen
    gen.close()


@pytest.mark.parametrize(("passage", "question", "answer", "accepted"), CASES,
                         ids=[f"{c[1][:12]}|{c[2][:24]}" for c in CASES])
def test_the_real_llm_tells_a_right_binding_from_a_wrong_one(judge_llm, passage, question, answer, accepted):
    other = OTHER["zh" if passage in (HETONG, TUIKUAN) else "en"]
    passages = [_hit(passage, 1), _hit(other[0], 2), _hit(other[1], 3)]
    stats = TermStats.from_texts([passage, *other])
    options = CheckOptions.of(Settings(data_dir=Path("/nonexistent")).query)  # the shipped thresholds, margins
    checked = check_answer(question, answer, passages, lambda t: validate(t, passages, question, stats=stats),
                           options=options, scorer=judge_llm, stats=stats)
    assert checked.accepted is accepted, (checked.judge_score, checked.problems)
    if not accepted:
        # withheld by the judge or refused by the binding checks: the reason names what the passage
        # says instead
        assert any(w in checked.problems[0] for w in ("Mr. Park", "朴先生", "original card", "原银行卡"))


def test_the_real_llm_reads_the_answer_given_as_its_own_or_not(judge_llm):
    """The core reading: teacher-forced as the judge's reply, the rightly bound answer's words are
    the model's own reply (gap 0), the wrongly bound one's far less likely than it and than "none"."""
    from desktop_kb.verify.judge import REFUSAL_WORD, judge_messages

    messages = judge_messages("Who approved the supply contract?", f"(Contract) {CONTRACT}")
    right = judge_llm.answer_span(messages, refusal=(REFUSAL_WORD,), candidate="Mr. Park")
    wrong = judge_llm.answer_span(messages, refusal=(REFUSAL_WORD,), candidate="Ms. Lin")
    assert right.span == wrong.span == "Mr. Park"
    assert right.candidate_logp == pytest.approx(right.span_logp, abs=0.05)
    assert wrong.candidate_logp < wrong.span_logp - 2.5 and wrong.candidate_logp < wrong.refusal
    assert right.candidate_tokens == wrong.candidate_tokens == 3
    # the judge asks for the core only when the reply alone would withhold the answer
    skipped = judge_llm.answer_span(messages, refusal=(REFUSAL_WORD,), candidate="Mr. Park",
                                    candidate_if=lambda score, reply: False)
    # (the same score up to the cache: a prompt evaluated in other batches rounds a little differently)
    assert skipped.span == "Mr. Park" and skipped.candidate_logp is None
    assert skipped.score == pytest.approx(right.score, abs=0.2)
