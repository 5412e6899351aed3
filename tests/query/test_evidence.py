"""Evidence windows (query/evidence.py) and what the LLM is shown in the answer prompt."""

from __future__ import annotations

import dataclasses

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.library.kb import Library
from desktop_kb.query.evidence import GAP, evidence_windows
from desktop_kb.text.budget import estimate_tokens
from desktop_kb.text.term_stats import TermStats
from desktop_kb.types import Chunk, Hit

FILLER = [f"Paragraph filler sentence number {w} talks about office plants and the weather." for w in
          ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")]


def _hit(text: str, i: int = 0) -> Hit:
    return Hit(Chunk(f"c{i}", "d", f"/docs/f{i}.md", i, text, ("H",), 0, len(text)), "kb", 1.0)


def _long(fact: str, at: int = 6) -> str:
    sentences = list(FILLER)
    sentences.insert(at, fact)
    return " ".join(sentences)


def test_a_short_passage_is_shown_whole() -> None:
    text = "Invoices must be paid within 30 days of receipt."
    [w] = evidence_windows(["When are invoices due?"], [_hit(text)], total_tokens=1000, passage_tokens=300)
    assert w.text == text and w.whole


def test_the_best_sentence_is_kept_with_its_neighbours_within_budget() -> None:
    fact = "Invoices must be paid within 30 days of receipt."
    text = _long(fact)
    stats = TermStats.from_texts([text, "Hotels cost money.", "Weather report."])
    [w] = evidence_windows(["When must invoices be paid?"], [_hit(text)], total_tokens=60, passage_tokens=60,
                           stats=stats)
    assert fact in w.text
    assert FILLER[5] in w.text and FILLER[6] in w.text  # the sentences before and after it
    assert estimate_tokens(w.text) <= 60 + 4 and estimate_tokens(w.text) < estimate_tokens(text) / 2
    assert w.text.startswith("… ") and w.text.endswith(" …")
    for s, e in w.spans:  # every piece is the chunk's own text (citations are checked against it)
        assert text[s:e] in w.text


def test_pieces_far_apart_are_joined_with_a_gap_in_reading_order() -> None:
    text = " ".join([FILLER[0], "Refunds take 14 days.", *FILLER[1:9], "Refunds need a receipt.", *FILLER[9:]])
    stats = TermStats.from_texts([text, "other", "more"])
    [w] = evidence_windows(["refunds receipt days"], [_hit(text)], total_tokens=80, passage_tokens=80, stats=stats)
    assert GAP in w.text
    assert w.text.index("Refunds take 14 days.") < w.text.index("Refunds need a receipt.")


def test_no_term_in_common_falls_back_to_similarity() -> None:
    fact = "发票必须在收到后三十天内支付。"
    text = "".join(["办公室的植物需要浇水。"] * 6 + [fact] + ["天气预报说明天下雨。"] * 6)
    seen = []

    def sim(question: str, sentence: str) -> float:
        seen.append(question)
        return 1.0 if "发票" in sentence else 0.1

    [w] = evidence_windows(["When are invoices due?"], [_hit(text)], total_tokens=40, passage_tokens=40, similarity=sim)
    assert fact in w.text and seen and set(seen) == {"When are invoices due?"}


def test_budget_left_by_short_passages_goes_to_long_ones() -> None:
    short = "Hotels are reimbursed up to 180 euros per night."
    long_text = _long("Invoices must be paid within 30 days of receipt.")
    windows = evidence_windows(["invoices paid, filler weather"], [_hit(short, 0), _hit(long_text, 1)],
                               total_tokens=150, passage_tokens=400)
    assert windows[0].text == short
    used = sum(estimate_tokens(w.text) for w in windows)
    assert estimate_tokens(windows[1].text) > 75 and used <= 150 + 8


def test_passages_after_the_lead_are_read_as_their_best_sentences() -> None:
    facts = [f"Invoices from office {n} must be paid within {n} days." for n in (10, 20, 30, 40)]
    hits = [_hit(_long(f), i) for i, f in enumerate(facts)]
    plain = evidence_windows(["When must invoices be paid?"], hits, total_tokens=2000, passage_tokens=400)
    ranked = evidence_windows(["When must invoices be paid?"], hits, total_tokens=2000, passage_tokens=400,
                              lead=2, trail_tokens=60)
    assert [w.text for w in ranked[:2]] == [w.text for w in plain[:2]]  # the lead as before
    for fact, w in zip(facts[2:], ranked[2:], strict=True):
        assert fact in w.text and estimate_tokens(w.text) <= 60 + 8 < estimate_tokens(plain[2].text)


def test_what_trailing_passages_leave_goes_to_the_lead() -> None:
    hits = [_hit(_long(f"Invoices from office {n} must be paid within {n} days."), n) for n in range(4)]
    even = evidence_windows(["invoices paid"], hits, total_tokens=400, passage_tokens=400)
    ranked = evidence_windows(["invoices paid"], hits, total_tokens=400, passage_tokens=400, lead=1, trail_tokens=50)
    assert estimate_tokens(ranked[0].text) > 2 * estimate_tokens(even[0].text)
    assert sum(estimate_tokens(w.text) for w in ranked) <= 400 + 16


def test_zero_budget_keeps_whole_passages() -> None:
    text = _long("Invoices must be paid within 30 days.")
    [w] = evidence_windows(["invoices"], [_hit(text)], total_tokens=0, passage_tokens=40)
    assert w.text == text


def test_the_answer_prompt_carries_the_window_and_citations_check_the_whole_chunk(settings, tmp_path, scripted):
    docs = tmp_path / "docs"
    docs.mkdir()
    fact = "Invoices must be paid within 30 days of receipt."
    (docs / "policy.md").write_text("# Policy\n\n" + _long(fact, at=2) + "\n", encoding="utf-8")
    gen = scripted(answers=['Invoices are due "within 30 days of receipt" [1].'])
    s = settings.replace(query=dataclasses.replace(settings.query, dense_threshold=0.0, evidence_tokens=60,
                                                   passage_tokens=60))
    s = s.replace(chunk=dataclasses.replace(s.chunk, size=2000))
    with Library.open(s, embedder=HashEmbedder(), reranker=None, generator=gen) as lib:
        lib.ingest("kb", [docs])
        a = lib.ask("When must invoices be paid?", kbs=["kb"])
    prompt = gen.calls[-1]["messages"][-1]["content"]
    assert fact in prompt and FILLER[10] not in prompt  # far-away filler left out
    assert FILLER[10] in a.passages[0].chunk.text  # the Answer keeps the whole chunk
    assert a.status == "answered" and a.citations[0].quote == "within 30 days of receipt"
    assert "evidence" in a.timings_ms and "first_token" in a.timings_ms
