"""BEIR / QA loaders, deterministic sampling, and the id <-> file name encoding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_kb.errors import ConfigError
from desktop_kb.eval.corpus import decode_id, encode_id, id_for_path, markdown_for, materialise
from desktop_kb.eval.datasets import Document, load_beir, load_qa, sample_ids


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_load_beir(tmp_path: Path) -> None:
    _jsonl(tmp_path / "corpus.jsonl", [{"_id": "d1", "title": "T1", "text": "one"},
                                       {"_id": 2, "title": "", "text": "two"}])
    _jsonl(tmp_path / "queries.jsonl", [{"_id": "q1", "text": "first"}, {"_id": "q2", "text": "second"},
                                        {"_id": "q3", "text": "third"}])
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\t2\t1\nq2\td1\t0\n",
                                        encoding="utf-8")
    ds = load_beir(tmp_path)
    assert ds.corpus["2"] == Document("2", "", "two")
    assert ds.queries == {"q1": "first", "q2": "second", "q3": "third"}
    assert ds.qrels == {"q1": {"d1": 2, "2": 1}, "q2": {"d1": 0}}
    assert list(ds.judged_queries()) == ["q1"]  # q2 has only a 0 grade, q3 none
    assert len(ds.corpus_sha1) == 40


def test_load_beir_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"corpus\.jsonl"):
        load_beir(tmp_path)


def test_load_qa(tmp_path: Path) -> None:
    _jsonl(tmp_path / "contexts.jsonl", [{"_id": "c1", "title": "Normans", "text": "..."}])
    _jsonl(tmp_path / "items.jsonl", [
        {"id": "a", "question": "Who?", "answers": ["Rollo"], "context_id": "c1", "answerable": True},
        {"id": "b", "question": "When?", "answers": [], "context_id": "c1", "answerable": False,
         "plausible_answers": ["911"]},
    ])
    ds = load_qa(tmp_path)
    assert [i.answerable for i in ds.items] == [True, False]
    assert ds.items[0].answers == ("Rollo",)
    assert ds.items[1].extra == {"plausible_answers": ["911"]}


def test_sample_ids_is_deterministic_and_keeps_order() -> None:
    ids = [f"q{i}" for i in range(50)]
    a = sample_ids(ids, 10)
    assert a == sample_ids(list(reversed(ids))[::-1], 10)
    assert len(a) == 10 and a == sorted(a, key=ids.index)
    assert a != ids[:10]  # spread over the set, not the first N
    assert sample_ids(ids, None) == ids


@pytest.mark.parametrize("doc_id", ["4983", "DEV_0", "sq2-00-000", "a/b c", "中文", ".hidden", "50%", ""])
def test_id_encoding_round_trips_and_is_safe(doc_id: str) -> None:
    stem = encode_id(doc_id)
    assert decode_id(stem) == doc_id
    assert all(ch.isascii() and (ch.isalnum() or ch in "_-%") for ch in stem)
    assert not stem.startswith(".")


def test_materialise_writes_markdown_and_maps_back(tmp_path: Path) -> None:
    corpus = {"Ab": Document("Ab", "Title", "Body"), "ab": Document("ab", "", "lower"),
              "x" * 200: Document("x" * 200, "", "long")}
    folder = tmp_path / "corpus"
    stems = materialise(corpus, folder)
    assert sorted(stems.values()) == sorted(corpus)
    # case-insensitive file systems: the two names must not collide
    assert len({s.lower() for s in stems}) == 3
    for stem, doc_id in stems.items():
        path = folder / f"{stem}.md"
        assert path.read_text(encoding="utf-8") == markdown_for(corpus[doc_id])
        assert id_for_path(str(path), stems) == doc_id
    assert (folder / "Ab.md").read_text(encoding="utf-8") == "# Title\n\nBody\n"
    mtime = (folder / "Ab.md").stat().st_mtime_ns
    materialise(corpus, folder)  # unchanged files are not rewritten
    assert (folder / "Ab.md").stat().st_mtime_ns == mtime
    assert not list(folder.glob("*.json"))  # the id map must not be ingested as a document


def test_without_articles_takes_whole_articles_out_and_marks_their_questions(tmp_path):
    from desktop_kb.eval.datasets import without_articles

    ctx = [{"_id": "a1", "title": "A", "text": "A one."}, {"_id": "a2", "title": "A", "text": "A two."},
           {"_id": "b1", "title": "B", "text": "B one."}]
    items = [{"id": "q1", "question": "?", "answers": ["one"], "context_id": "a1", "answerable": True},
             {"id": "q2", "question": "?", "answers": ["two"], "context_id": "a2", "answerable": True},
             {"id": "q3", "question": "?", "answers": ["one"], "context_id": "b1", "answerable": True}]
    (tmp_path / "contexts.jsonl").write_text("".join(json.dumps(c) + "\n" for c in ctx), encoding="utf-8")
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    ds = load_qa(tmp_path)
    cut, made = without_articles(ds, ["q1"], 1)
    assert set(cut.corpus) == {"b1"}  # the whole article A, both its paragraphs
    assert made == ["q1", "q2"]
    assert [it.answerable for it in cut.items] == [False, False, True] and cut.items[0].answers == ()
    assert cut.corpus_sha1 != ds.corpus_sha1  # its own cached knowledge base
    again, _ = without_articles(ds, ["q1"], 1)
    assert again.corpus_sha1 == cut.corpus_sha1
