"""Rewrite and fallback stages with a scripted generator (plumbing: schema checks, guards)."""

from __future__ import annotations

from desktop_kb.query.fallback import decide, is_too_vague, weak_signal
from desktop_kb.query.rerank import blend, blend_of, rerank
from desktop_kb.query.rewrite import invented_entities, rewrite
from desktop_kb.types import Chunk, Hit


def _hit(text: str, score: float = 0.5) -> Hit:
    return Hit(Chunk("c" + text[:3], "d", "/a.md", 0, text, (), 0, len(text)), "kb", score)


def test_a_follow_up_is_searched_as_its_standalone_question_alone(scripted):
    gen = scripted(json_replies=[{"query": "tax rate for companies in France"}])
    qs = rewrite("and for companies?", [("What is the tax rate in France?", "It is 20% [1].")], gen)
    assert qs == ["tax rate for companies in France"]  # "and for companies?" alone finds anything on companies
    assert gen.calls[0]["json_schema"] is not None


def test_a_first_question_rewritten_keeps_the_original_first(scripted):
    gen = scripted(json_replies=[{"query": "VAT rules for companies"}])
    assert rewrite("What are the VAT rules for companies?", [], gen) == [
        "What are the VAT rules for companies?", "VAT rules for companies"]


def test_rewrite_falls_back_on_invalid_output(scripted):
    for bad in ["not json", {"q": "x"}, {"query": ""}, {"query": "x" * 500}]:
        assert rewrite("What is VAT?", [], scripted(json_replies=[bad])) == ["What is VAT?"]


def test_rewrite_rejects_invented_entities(scripted):
    gen = scripted(json_replies=[{"query": "VAT rules of Acme Corp in 2019"}])
    assert rewrite("What are the VAT rules?", [], gen) == ["What are the VAT rules?"]
    assert invented_entities("VAT rules of Acme Corp in 2019", ["What are the VAT rules?"]) == ["Acme", "Corp", "2019"]


def test_rewrite_drops_identical_query(scripted):
    gen = scripted(json_replies=[{"query": "what is vat"}])
    assert rewrite("What is VAT?", [], gen) == ["What is VAT?"]


def test_fallback_decisions_are_schema_checked(scripted):
    hits = [_hit("some text")]
    d = decide("tax?", hits, scripted(json_replies=[{"decision": "clarify", "message": "Which tax do you mean?"}]),
               allow_retry=True)
    assert d.decision == "clarify" and "Which tax" in d.message
    d = decide("q", hits, scripted(json_replies=[{"decision": "explode", "message": ""}]), allow_retry=True)
    assert d.decision == "reject"
    d = decide("q", hits, scripted(json_replies=[{"decision": "retry_wider", "message": ""}]), allow_retry=False)
    assert d.decision == "reject"
    d = decide("问题", hits, scripted(json_replies=["{broken"]), allow_retry=True)
    assert d.decision == "reject" and "文档" in d.message


def test_vague_and_weak_signals():
    assert is_too_vague("tax?", [])
    assert is_too_vague("发票", [])
    assert not is_too_vague("tax?", [("What is VAT?", "A tax [1].")])
    assert not is_too_vague("When is the invoice due?", [])
    h = [Hit(_hit("x").chunk, "kb", 0.9, rerank_score=0.1)]
    assert weak_signal(h, True, 0.95, 0.3, 0.8).weak  # the rerank score decides when scored
    assert not weak_signal(h, False, 0.95, 0.3, 0.8).weak  # else the dense similarity
    assert weak_signal([], False, None, 0.3, 0.8).weak


class _Reranker:
    id = "test/reranker"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def score(self, query, passages):
        if self.fail:
            raise RuntimeError("boom")
        return [len(p) / 100 for p in passages]


def test_rerank_orders_globally_and_degrades_on_failure():
    hits = [_hit("a" * n) for n in (10, 50, 30, 20, 40, 60)]
    r = rerank("q", hits, _Reranker(), 3)
    assert r.scored and [len(h.chunk.text) for h in r.hits] == [60, 50, 40]
    assert r.hits[0].rerank_score == 0.6
    bad = rerank("q", hits, _Reranker(fail=True), 3)
    assert bad.degraded and not bad.scored and bad.hits == tuple(hits[:3])
    none = rerank("q", hits, None, 3)
    assert not none.degraded and not none.scored and "no reranker" in none.reason  # a normal setup
    few = rerank("q", hits[:2], _Reranker(), 3)
    assert not few.scored and not few.degraded


def test_blend_mixes_the_scaled_fused_score_with_the_reranker_score():
    fused, scores = [0.9, 0.5, 0.1], [0.1, 0.2, 0.9]
    assert blend(fused, scores, 0.0) == [0, 1, 2]  # the fused order
    assert blend(fused, scores, 1.0) == [2, 1, 0]  # the reranker alone
    assert blend(fused, scores, 0.3) == [0, 1, 2]  # 0.73, 0.41, 0.27: a clear fused lead holds
    assert blend([0.9, 0.88, 0.1], [0.1, 0.9, 0.0], 0.3) == [1, 0, 2]  # a near tie goes to the reranker
    assert blend([0.5, 0.5], [0.2, 0.1], 0.0) == [0, 1]  # equal fused scores: no division by zero


def test_rerank_blends_only_the_first_candidates_and_keeps_the_rest_in_fused_order():
    hits = [_hit("a" * n, s) for n, s in ((10, 0.9), (50, 0.8), (30, 0.7), (60, 0.1))]
    r = rerank("q", hits, _Reranker(), 3, weight=1.0, candidates=2)
    assert [len(h.chunk.text) for h in r.hits] == [50, 10, 30]  # the third was not reranked
    assert r.hits[2].rerank_score is None and r.hits[0].rerank_score == 0.5
    own = _Reranker()
    own.blend = (0.0, 3)
    assert blend_of(own) == (0.0, 3) and blend_of(own, 0.5, 0) == (0.5, 3) and blend_of(_Reranker()) == (1.0, 0)
    kept = rerank("q", hits, own, 3)  # the reranker's own blend: weight 0 keeps the fused order
    assert [len(h.chunk.text) for h in kept.hits] == [10, 50, 30] and kept.scored


def test_first_question_is_searched_as_asked_without_an_llm_call(scripted):
    gen = scripted(json_replies=[{"query": "should not be used"}])
    assert rewrite("What is VAT?", [], gen, mode="auto", corpus_cjk=0.0) == ["What is VAT?"]
    assert rewrite("增值税是什么？", [], gen, mode="auto", corpus_cjk=0.9) == ["增值税是什么？"]
    assert gen.calls == []
    assert rewrite("What is VAT?", [], gen, mode="off", corpus_cjk=0.0) == ["What is VAT?"] and gen.calls == []


def test_follow_up_is_rewritten_in_auto_mode(scripted):
    gen = scripted(json_replies=[{"query": "tax rate for companies in France"}])
    qs = rewrite("and for companies?", [("What is the tax rate in France?", "It is 20% [1].")], gen,
                 mode="auto", corpus_cjk=0.0)
    assert qs[-1] == "tax rate for companies in France" and gen.calls[0]["json_schema"] is not None


def test_first_question_in_another_language_is_translated_for_the_search(scripted):
    gen = scripted(answers=["增值税的税率是多少？"])
    qs = rewrite("What is the VAT rate?", [], gen, mode="auto", corpus_cjk=0.95)
    assert qs == ["What is the VAT rate?", "增值税的税率是多少？"]
    assert "Simplified Chinese" in gen.calls[0]["messages"][0]["content"]
    gen = scripted(answers=["What is the VAT rate?"])
    assert rewrite("增值税的税率是多少？", [], gen, mode="auto", corpus_cjk=0.02)[1] == "What is the VAT rate?"


def test_a_translation_that_answers_or_invents_numbers_is_dropped(scripted):
    # wrong script (the model answered in English), and a number the question does not have
    for bad in ["The VAT rate is high.", "2019年的增值税税率是多少？", ""]:
        assert rewrite("What is the VAT rate?", [], scripted(answers=[bad]), mode="auto", corpus_cjk=0.95) == \
            ["What is the VAT rate?"]
