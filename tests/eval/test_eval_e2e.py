"""End to end on a tiny generated BEIR set: the real pipeline and store, a fake embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.cli import main
from desktop_kb.eval.corpus import eval_kb_name, prepare_kb
from desktop_kb.eval.datasets import load_beir
from desktop_kb.eval.retrieval import kb_views, run_mode
from desktop_kb.library.kb import Library
from desktop_kb.settings import Settings

DOCS = {
    "d1": ("Photosynthesis", "Plants convert sunlight into chemical energy inside chloroplasts."),
    "d2": ("Volcanoes", "Magma rises through the crust and erupts as lava and volcanic ash."),
    "d3": ("Glaciers", "Compacted snow forms glacial ice that flows slowly downhill under its weight."),
    "d4": ("Tides", "The gravitational pull of the moon raises ocean tides twice a day."),
    "d5": ("Antibiotics", "Penicillin inhibits bacterial cell wall synthesis and kills susceptible bacteria."),
    "d6": ("Earthquakes", "Seismic waves radiate from the fault where tectonic plates slip."),
}
QUERIES = {"q1": "chloroplasts sunlight", "q2": "penicillin bacterial", "q3": "glacial ice flows"}
QRELS = [("q1", "d1", 2), ("q2", "d5", 1), ("q3", "d3", 1)]
METRICS = {"ndcg@10", "recall@10", "recall@100", "mrr@10", "p50_ms", "p95_ms"}


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    root.mkdir()
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "title": t, "text": x}) + "\n"
                                               for k, (t, x) in DOCS.items()), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n"
                                                for k, v in QUERIES.items()), encoding="utf-8")
    (root / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in QRELS),
                                    encoding="utf-8")
    return root


def test_sparse_mode_finds_exact_terms_first(beir: Path, settings: Settings) -> None:
    ds = load_beir(beir)
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1)
        assert prep.documents == 6 and prep.failed == 0 and not prep.cached
        assert prep.name == eval_kb_name(ds.corpus_sha1, HashEmbedder.id)
        res = run_mode(lib, kb_views(lib, [prep.name]), "sparse", ds.queries, ds.qrels,
                       lambda h: prep.doc_id(h.chunk.path), recall=100)
        again = prepare_kb(lib, ds.corpus, ds.corpus_sha1)
    assert {q: r[0] for q, r in res.rankings.items()} == {"q1": "d1", "q2": "d5", "q3": "d3"}
    assert res.metrics["ndcg@10"] == pytest.approx(1.0)
    assert res.metrics["queries"] == 3 and len(res.latencies_ms) == 3
    assert again.cached and again.report.chunks == 0  # the second run embeds nothing


def test_a_second_cache_folder_does_not_put_the_corpus_twice_into_its_kb(beir: Path, settings: Settings,
                                                                         tmp_path: Path) -> None:
    ds = load_beir(beir)
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        first = prepare_kb(lib, ds.corpus, ds.corpus_sha1, cache_root=tmp_path / "cache-a")
        second = prepare_kb(lib, ds.corpus, ds.corpus_sha1, cache_root=tmp_path / "cache-b")
        paths = [d.path for d in lib.documents(second.name)]
    assert first.name == second.name and first.documents == 6
    assert second.documents == 6 and len(paths) == 6
    assert all(str((tmp_path / "cache-b").resolve()) in p for p in paths)


def _hash_settings(data: Path) -> None:
    data.mkdir(parents=True, exist_ok=True)
    (data / "settings.json").write_text(json.dumps({"models": {
        "embedder": {"id": "test/hash-embedder", "backend": "hash", "dim": 64},
        "reranker": {"id": "none", "backend": "none"},
        "llm": {"id": "none", "backend": "none"},
    }}), encoding="utf-8")


def _qa_set(tmp_path: Path, beir: Path, items: list[dict]) -> Path:
    """A QA set (items.jsonl, contexts.jsonl) over the tiny BEIR corpus."""
    qa = tmp_path / "qa"
    qa.mkdir()
    (qa / "contexts.jsonl").write_text((beir / "corpus.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    (qa / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return qa


def test_cli_all_modes_json(beir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    _hash_settings(data)
    per_query = tmp_path / "pq.jsonl"
    code = main(["--data-dir", str(data), "eval", "retrieval", "--dataset", str(beir), "--mode", "all",
                 "--per-query", str(per_query), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert set(result) == {"dense", "sparse", "hybrid-equal", "hybrid", "hybrid-convex", "default"}
    assert "needs a reranker: none installed" in err
    for mode, m in result.items():
        assert METRICS <= set(m), mode
        assert all(0.0 <= m[k] <= 1.0 for k in ("ndcg@10", "recall@10", "recall@100", "mrr@10"))
        assert m["queries"] == 3
    assert result["sparse"]["mrr@10"] == 1.0
    assert result["default"]["ndcg@10"] == result["hybrid"]["ndcg@10"]  # no reranker: default = hybrid
    lines = [json.loads(x) for x in per_query.read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in lines] == ["q1", "q2", "q3"]
    assert lines[0]["sparse"]["top10"][0] == "d1"
    assert set(lines[0]["hybrid"]["weights"]) == {"dense", "sparse", "coverage", "language_agreement"}

    # the table form, limited to one query
    code = main(["--data-dir", str(data), "eval", "retrieval", "--dataset", str(beir), "--mode", "sparse",
                 "--limit-queries", "1"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "sparse (BM25)" in out and "1 queries" in out and "cached" in out


def test_answers_and_probe_fail_clearly_without_llm(beir: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    _hash_settings(data)
    qa = _qa_set(tmp_path, beir, [{"id": "i1", "question": "What do chloroplasts do?",
                                   "answers": ["chemical energy"], "context_id": "d1", "answerable": True}])
    code = main(["--data-dir", str(data), "eval", "answers", "--dataset", str(qa)])
    _, err = capsys.readouterr()
    assert code != 0 and "LLM" in err
    assert not (tmp_path / "data-eval").exists()  # failed before ingesting anything

    assert main(["--data-dir", str(data), "eval", "retrieval", "--dataset", str(beir), "--mode", "dense"]) == 0
    capsys.readouterr()
    kb = eval_kb_name(load_beir(beir).corpus_sha1, "test/hash-embedder")
    code = main(["--data-dir", str(data), "eval", "probe", "--kb", kb])
    _, err = capsys.readouterr()
    assert code != 0 and "LLM" in err


def test_answers_cli_writes_each_item_as_it_goes(beir: Path, tmp_path: Path, scripted,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Plumbing with a scripted LLM: the per-item file holds every question, one JSON line each."""
    import dataclasses

    from desktop_kb.cli import evaluate as eval_cli

    data = tmp_path / "data"
    _hash_settings(data)
    qa = _qa_set(tmp_path, beir, [
        {"id": "i1", "question": "What do chloroplasts convert?", "answers": ["sunlight"], "context_id": "d1",
         "answerable": True},
        {"id": "i2", "question": "Who discovered chloroplasts?", "answers": [], "context_id": "d1",
         "answerable": False},
    ])
    gen = scripted(answers=["Plants convert sunlight into chemical energy [1].",
                            "The passages do not say who discovered chloroplasts."])

    def open_library(settings: Settings) -> Library:
        s = settings.replace(query=dataclasses.replace(settings.query, dense_threshold=0.0))
        return Library.open(s, embedder=HashEmbedder(), reranker=None, generator=gen)

    monkeypatch.setattr(eval_cli, "_open_library", open_library)
    per_item = tmp_path / "out" / "items.jsonl"
    assert main(["--data-dir", str(data), "eval", "answers", "--dataset", str(qa), "--per-item", str(per_item),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = [json.loads(line) for line in per_item.read_text(encoding="utf-8").splitlines()]
    assert [r["question"] for r in rows] == ["What do chloroplasts convert?", "Who discovered chloroplasts?"]
    assert [r["status"] for r in rows] == ["answered", "refused"]
    assert rows[0]["contains_gold"] and rows[0]["citations_valid"]
    assert summary["refusal_rate_unanswerable"] == 1.0 and summary["false_refusal_rate"] == 0.0
    # --ids re-asks chosen items only (e.g. a previous run's failures)
    assert main(["--data-dir", str(data), "eval", "answers", "--dataset", str(qa), "--ids", "i2, nope",
                 "--per-item", str(per_item), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items"] == 1
    assert [json.loads(line)["id"] for line in per_item.read_text(encoding="utf-8").splitlines()] == ["i2"]


def test_answers_cli_asks_the_questions_translated(beir: Path, tmp_path: Path, scripted,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """--query-lang: each question asked as the LLM translated it (cached: a second run asks no
    translation), scored against the same gold answers."""
    import dataclasses

    from desktop_kb.cli import evaluate as eval_cli

    data = tmp_path / "data"
    _hash_settings(data)
    qa = _qa_set(tmp_path, beir, [
        {"id": "i1", "question": "What do chloroplasts convert?", "answers": ["sunlight"], "context_id": "d1",
         "answerable": True}])
    gen = scripted(answers=["叶绿体转化什么？", "Plants convert sunlight into chemical energy [1]."])

    def open_library(settings: Settings) -> Library:
        s = settings.replace(query=dataclasses.replace(settings.query, dense_threshold=0.0))
        return Library.open(s, embedder=HashEmbedder(), reranker=None, generator=gen)

    monkeypatch.setattr(eval_cli, "_open_library", open_library)
    per_item = tmp_path / "items.jsonl"
    args = ["--data-dir", str(data), "eval", "answers", "--dataset", str(qa), "--query-lang", "zh",
            "--per-item", str(per_item), "--json"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["questions"] == "queries translated en→zh by the local LLM"
    assert json.loads(per_item.read_text(encoding="utf-8"))["question"] == "叶绿体转化什么？"
    calls = len(gen.calls)
    gen.answers = ["Plants convert sunlight into chemical energy [1]."]
    assert main(args) == 0 and json.loads(capsys.readouterr().out)["items"] == 1
    # the English question is not translated again (cached); the pipeline still reads the Chinese one
    assert not any("What do chloroplasts convert?" in c["messages"][-1]["content"] for c in gen.calls[calls:])


def test_rewrites_are_searched_and_cached(beir: Path, settings: Settings, tmp_path: Path, scripted) -> None:
    from desktop_kb.eval.rewrites import rewrite_queries

    ds = load_beir(beir)
    gen = scripted(json_replies=[{"query": "plants chloroplasts energy"}, {"query": "penicillin antibiotic"},
                                 {"query": "glaciers ice"}])
    with Library.open(settings, embedder=HashEmbedder(), reranker=None, generator=gen) as lib:
        prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1)
        views = kb_views(lib, [prep.name])
        auto = rewrite_queries(lib, views, ds.queries, "auto", tmp_path)
        assert auto == {q: [t] for q, t in ds.queries.items()} and gen.calls == []  # same language: no LLM
        always = rewrite_queries(lib, views, ds.queries, "always", tmp_path)
        assert always["q1"] == ["chloroplasts sunlight", "plants chloroplasts energy"] and len(gen.calls) == 3
        assert rewrite_queries(lib, views, ds.queries, "always", tmp_path) == always and len(gen.calls) == 3
        res = run_mode(lib, views, "hybrid", always, ds.qrels, lambda h: prep.doc_id(h.chunk.path), recall=100)
    assert res.rankings["q1"][0] == "d1" and res.metrics["queries"] == 3


def test_a_reranked_run_names_the_reranker_and_its_blend(tmp_path: Path) -> None:
    import dataclasses

    from desktop_kb.cli.evaluate import _rerank_note
    from desktop_kb.settings import Settings

    class Own:
        id = "desktop-kb/e5-cross-encoder@x"
        blend = (0.3, 10)

    class Theirs:
        id = "BAAI/bge-reranker-v2-m3"

    s = Settings(data_dir=tmp_path)
    assert _rerank_note(Own(), s) == ("hybrid + rerank (desktop-kb/e5-cross-encoder@x, blended with the fused "
                                      "order, weight 0.3, over the first 10)")
    assert _rerank_note(Theirs(), s) == "hybrid + rerank (BAAI/bge-reranker-v2-m3, alone, over all 20)"
    s = s.replace(query=dataclasses.replace(s.query, rerank_weight=1.0, rerank_candidates=5))
    assert _rerank_note(Own(), s).endswith("alone, over the first 5)")  # the settings override its own
