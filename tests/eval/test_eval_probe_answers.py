"""The knowledge-base probe with a fake LLM, and answer scoring on hand-made Answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.eval.answers import aggregate, citations_valid, score_answer
from desktop_kb.eval.datasets import QAItem
from desktop_kb.eval.probe import probe
from desktop_kb.library.kb import Library
from desktop_kb.settings import Settings
from desktop_kb.types import Answer, Chunk, Citation, Hit

TOPICS = {
    "photosynthesis": "Plants convert sunlight into chemical energy inside chloroplasts using chlorophyll pigments.",
    "volcanoes": "Magma rises through the crust and erupts as lava, volcanic ash and sulfur dioxide gas.",
    "glaciers": "Compacted snow forms glacial ice that flows slowly downhill and carves U-shaped valleys.",
    "tides": "The gravitational pull of the moon raises ocean tides twice a day along every coastline.",
    "antibiotics": "Penicillin inhibits bacterial cell wall synthesis and kills susceptible streptococci.",
}


class QuestionWriter:
    """A fake LLM that 'asks' about the passage's rarest-looking words (the last five)."""

    id = "test/question-writer"

    def __init__(self) -> None:
        self.schemas: list[dict] = []

    def chat(self, messages, *, max_tokens=512, temperature=0.0, json_schema=None, on_token=None, cancel=None):
        self.schemas.append(json_schema)
        passage = messages[-1]["content"].split("\n", 1)[1]
        words = passage.replace(".", " ").split()
        return json.dumps({"question": "What about " + " ".join(words[-5:]) + "?"})


def test_probe_recall_with_a_fake_llm(settings: Settings, tmp_path: Path) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    for name, text in TOPICS.items():
        (src / f"{name}.md").write_text(f"# {name.title()}\n\n{text}\n", encoding="utf-8")
    gen = QuestionWriter()
    with Library.open(settings, embedder=HashEmbedder(), reranker=None, generator=gen) as lib:
        lib.ingest("notes", [src])
        report = probe(lib, "notes", n=4, seed=1)
        again = probe(lib, "notes", n=4, seed=1)
    assert report.n == 4 and report.asked == 4
    assert gen.schemas[0]["required"] == ["question"]
    assert report.recall_at_5 == 1.0 and report.mrr_at_5 == 1.0  # exact words: BM25 puts the chunk first
    assert [i.chunk_id for i in report.items] == [i.chunk_id for i in again.items]  # seeded sample
    assert all(i.question.startswith("What about") for i in report.items)


def _hit(path: str, text: str, n: int = 0) -> Hit:
    return Hit(chunk=Chunk(chunk_id=f"c{n}", doc_id="0" * 32, path=path, index=0, text=text, heading_path=(),
                           start=0, end=len(text)), kb="kb", score=1.0)


def _citation(path: str) -> Citation:
    return Citation(n=1, kb="kb", doc_id="0" * 32, path=path, pages=(), heading_path=(), start=0, end=10)


def test_score_answered_item() -> None:
    item = QAItem("i1", "Who increased British military resources?", ("William Pitt",), "ctx1", True)
    passages = (_hit("/c/ctx1.md", "William Pitt increased British military resources in the colonies."),)
    ans = Answer(question=item.question, text='William Pitt did, "increased British military resources" [1].',
                 status="answered", citations=(_citation("/c/ctx1.md"),), passages=passages,
                 timings_ms={"retrieve": 10.0, "generate": 100.0})
    s = score_answer(item, ans, lambda p: Path(p).stem)
    assert s.contains_gold and s.citations_valid and s.cites_gold

    bad = Answer(question=item.question, text='Pitt, "raised taxes" [1] and [3].', status="answered",
                 citations=(_citation("/c/other.md"),), passages=passages)
    assert not citations_valid(bad)  # [3] does not exist and the quote is not in passage 1
    s2 = score_answer(item, bad, lambda p: Path(p).stem)
    assert not s2.contains_gold and s2.citations_valid is False and s2.cites_gold is False


def test_aggregate_refusals() -> None:
    ans_item = QAItem("a", "q", ("x",), "c", True)
    un_item = QAItem("u", "q", (), "c", False)
    refused = Answer(question="q", text="Not in the documents.", status="refused", timings_ms={"retrieve": 4.0})
    answered = Answer(question="q", text="x [1]", status="answered", passages=(_hit("/c/c.md", "x y"),),
                      citations=(_citation("/c/c.md"),), timings_ms={"retrieve": 6.0, "generate": 50.0})
    scores = [score_answer(ans_item, refused, lambda p: Path(p).stem),
              score_answer(ans_item, answered, lambda p: Path(p).stem),
              score_answer(un_item, refused, lambda p: Path(p).stem),
              score_answer(un_item, answered, lambda p: Path(p).stem)]
    out = aggregate(scores)
    assert out["false_refusal_rate"] == 0.5
    assert out["refusal_rate_unanswerable"] == 0.5
    assert out["answer_contains_gold"] == 0.5 and out["answer_contains_gold_when_answered"] == 1.0
    assert out["citation_hits_gold"] == 1.0
    assert out["mean_timings_ms"] == {"generate": 50.0, "retrieve": 5.0}
    assert out["status"] == {"refused": 2, "answered": 2}
    assert out["mean_total_ms"] == pytest.approx((4 + 56 + 4 + 56) / 4)


def test_gold_support_is_judged_from_the_cited_passage_not_the_validator() -> None:
    item = QAItem("i2", "Who founded the colony?", ("William Penn",), "ctx2", True)
    passages = (_hit("/c/ctx2.md", "The colony was founded by William Penn in 1681.", 0),
                _hit("/c/other.md", "Penn State is a university in Pennsylvania.", 1))
    right = Answer(question=item.question, text="William Penn founded it [1].", status="answered",
                   citations=(_citation("/c/ctx2.md"),), passages=passages)
    wrong_cite = Answer(question=item.question, text="William Penn founded it [2].", status="answered",
                        citations=(Citation(n=2, kb="kb", doc_id="0" * 32, path="/c/other.md", pages=(),
                                            heading_path=(), start=0, end=10),), passages=passages)
    wrong_answer = Answer(question=item.question, text="A governor founded it [1].", status="answered",
                          citations=(_citation("/c/ctx2.md"),), passages=passages)
    doc = lambda p: Path(p).stem  # noqa: E731
    a, b, c = (score_answer(item, x, doc) for x in (right, wrong_cite, wrong_answer))
    assert (a.contains_gold, a.gold_supported, a.cited_gold_span) == (True, True, True)
    assert (b.contains_gold, b.gold_supported, b.cited_gold_span) == (True, False, False)
    assert (c.contains_gold, c.gold_supported, c.cited_gold_span) == (False, False, True)
    out = aggregate([a, b, c])
    assert out["answer_gold_supported"] == round(1 / 3, 4)
    assert out["cited_passage_has_gold"] == round(2 / 3, 4)


def test_an_answer_the_judge_withheld_is_also_scored_as_if_the_judge_were_off() -> None:
    item = QAItem("a", "q", ("x",), "c", True)
    trap = QAItem("u", "q", (), "c", False)
    answered = Answer(question="q", text="x [1]", status="answered", passages=(_hit("/c/c.md", "x y"),),
                      citations=(_citation("/c/c.md"),), judge_score=-2.0)
    withheld = Answer(question="q", text="Not answered as asked.", status="refused", judge_score=-2.0,
                      passages=answered.passages, withheld=answered)
    scores = [score_answer(item, withheld, lambda p: Path(p).stem), score_answer(trap, withheld, lambda p: Path(p).stem)]
    assert scores[0].judge_score == -2.0 and scores[0].without_judge.status == "answered"
    out = aggregate(scores)
    assert out["false_refusal_rate"] == 1.0 and out["refusal_rate_unanswerable"] == 1.0
    assert out["judge_withheld"] == 2
    off = out["without_judge"]
    assert off["false_refusal_rate"] == 0.0 and off["refusal_rate_unanswerable"] == 0.0
    assert off["answer_contains_gold"] == 1.0
    assert json.loads(json.dumps(scores[0].to_json()))["without_judge"]["status"] == "answered"
    assert aggregate([score_answer(item, answered, lambda p: Path(p).stem)])["without_judge"] is None
