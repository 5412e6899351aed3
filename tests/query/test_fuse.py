from __future__ import annotations

import pytest

from desktop_kb.protocols import ScoredRecord
from desktop_kb.query.fuse import adaptive_weights, convex, language_agreement, rrf, term_coverage


def _recs(*ids: str) -> list[ScoredRecord]:
    return [ScoredRecord(i, 1.0 - n / 10, {"id": i}) for n, i in enumerate(ids)]


def test_equal_weight_rrf_matches_hand_computation():
    fused = rrf([_recs("a", "b", "c")], [(_recs("c", "a"), 1.0)], k=60)
    scores = {f.id: f.score for f in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert [f.id for f in fused] == ["a", "c", "b"]


def test_zero_sparse_weight_keeps_dense_order():
    fused = rrf([_recs("a", "b", "c")], [(_recs("c", "b", "z"), 0.0)], k=60)
    assert [f.id for f in fused][:3] == ["a", "b", "c"]
    assert fused[-1].id == "z" and fused[-1].score == 0.0


def test_low_sparse_weight_cannot_overturn_dense_top():
    fused = rrf([_recs("good", "x1", "x2")], [(_recs("noise1", "noise2"), 0.1)], k=60)
    assert fused[0].id == "good"


def test_term_coverage_is_idf_weighted():
    df = {1: 50, 2: 1}
    assert term_coverage([1, 2], df, 100) == pytest.approx(1.0)
    assert term_coverage([3], df, 100) == 0.0
    rare_missing = term_coverage([1, 3], df, 100)  # the informative term is missing
    common_missing = term_coverage([2, 3], df, 100)
    assert 0 < rare_missing < common_missing < 1


def test_language_agreement():
    assert language_agreement(1.0, 1.0) == 1.0
    assert language_agreement(0.0, 0.98) == 0.0  # English question, Chinese corpus: BM25 leg off
    assert language_agreement(0.0, 0.85) == pytest.approx(0.5)
    assert language_agreement(1.0, 0.3) == 1.0  # mixed corpus still agrees
    w = adaptive_weights("What is the VAT deadline?", corpus_cjk=0.97, coverage=0.4)
    assert w.dense == 1.0 and w.sparse == 0.0
    w = adaptive_weights("增值税发票的期限", corpus_cjk=0.97, coverage=1.0)
    assert w.sparse == 1.0


def test_mirrored_ranks_tie_is_broken_by_the_clearer_leg():
    dense = [ScoredRecord("b", 0.90, {}), ScoredRecord("a", 0.89, {})]  # cosines: nearly equal
    sparse = [ScoredRecord("a", 12.0, {}), ScoredRecord("b", 3.0, {})]  # BM25: a is far ahead
    fused = rrf([dense], [(sparse, 1.0)], k=60)
    assert fused[0].score == pytest.approx(fused[1].score)
    assert [f.id for f in fused] == ["a", "b"]


def _scored(**scores: float) -> list[ScoredRecord]:
    return [ScoredRecord(i, s, {"id": i}) for i, s in sorted(scores.items(), key=lambda kv: -kv[1])]


def test_convex_fusion_matches_hand_computation_and_keeps_score_gaps():
    dense = _scored(a=0.90, b=0.89, c=0.70)  # a and b nearly tied in the dense leg
    sparse = _scored(b=12.0, a=2.0)  # BM25 clearly prefers b
    fused = convex([dense], [(sparse, 1.0)], alpha=0.5)
    scores = {f.id: f.score for f in fused}
    assert scores["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert scores["b"] == pytest.approx(0.5 * (0.19 / 0.20) + 0.5 * 1.0)
    assert scores["c"] == pytest.approx(0.0)
    assert [f.id for f in fused] == ["b", "a", "c"]
    # RRF sees only ranks: a (1st + 2nd) and b (2nd + 1st) tie there
    assert {f.id for f in rrf([dense], [(sparse, 1.0)], k=60)[:2]} == {"a", "b"}


def test_convex_fusion_with_zero_sparse_weight_is_the_dense_order():
    fused = convex([_scored(a=0.9, b=0.8, c=0.1)], [(_scored(c=30.0, b=1.0), 0.0)], limit=2)
    assert [f.id for f in fused] == ["a", "b"]
    assert fused[0].dense_score == 0.9 and fused[1].sparse_score == 1.0


def test_the_same_text_in_two_files_is_one_search_hit(settings, tmp_path):
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.library.kb import Library

    text = "# Travel\n\nHotels are reimbursed up to 180 euros per night.\n"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "travel.md").write_text(text, encoding="utf-8")  # a copy in each folder
    (tmp_path / "a" / "leave.md").write_text("# Leave\n\nEmployees get 25 days of leave.\n", encoding="utf-8")
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [tmp_path / "a", tmp_path / "b"])
        assert lib.stats("kb").documents == 3  # both copies are kept as documents
        hits = lib.search("hotels reimbursed per night", kbs=["kb"], top_k=5)
    texts = [" ".join(h.chunk.text.split()) for h in hits]
    assert texts and "180 euros" in texts[0]
    assert len(texts) == len(set(texts))
