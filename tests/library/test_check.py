"""kb check and kb repair on real damage: a truncated or deleted segment file, a lost segment, a
corrupt manifest.sqlite, missing Markdown; the real embedded store and converters, a
deterministic embedder (what is compared is which passages come back, not their ranking)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from filemakers import make_pdf

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.library.kb import Library
from desktop_kb.protocols import SearchFilter


def _lib(settings) -> Library:
    return Library.open(settings, embedder=HashEmbedder(), reranker=None)


def _docs(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.md").write_text("# Alpha\n\nThe alpha project starts in May.\n\n## Budget\n\nIt costs 40 euros.\n",
                            encoding="utf-8")
    (d / "b.txt").write_text("Gamma notes: the office moves to Lyon in June.\n", encoding="utf-8")
    (d / "c.pdf").write_bytes(make_pdf([["Page one says the printer code is 4711."],
                                        ["Page two says the fax number is 0815."]]))
    return d


def _passages(lib: Library, kb: str) -> dict[str, tuple]:
    """chunk id → what a citation needs of it (path, text, offsets, pages, tags, owner)."""
    return {r.payload["chunk_id"]: (r.payload["path"], r.payload["text"], r.payload["start"], r.payload["end"],
                                    tuple(r.payload["pages"]), tuple(r.payload["tags"]), r.payload["owner"])
            for r in lib.store.scroll(kb)}


@pytest.fixture
def built(settings, tmp_path):
    d = _docs(tmp_path)
    with _lib(settings) as lib:
        lib.ingest("kb", [d], tags=["work"], owner="ann")
        health = lib.check_kb("kb")
        assert health.ok and health.documents == 3 and health.points > 3
        before = _passages(lib, "kb")
    return d, before


def _segment(settings) -> Path:
    return next((settings.kbs_dir / "kb" / "shard" / "segments").iterdir())


@pytest.mark.parametrize("damage", ["truncate", "delete_file", "delete_segment"])
def test_a_damaged_store_is_found_and_rebuilt_from_the_stored_text(settings, built, damage):
    d, before = built
    seg = _segment(settings)
    if damage == "truncate":
        with (seg / "payload_storage" / "page_0.dat").open("r+b") as fh:
            fh.truncate(100)
    elif damage == "delete_file":
        (seg / "payload_storage" / "page_0.dat").unlink()
    else:
        shutil.rmtree(seg)  # the engine then loads an empty index without a word
    with _lib(settings) as lib:
        health = lib.check_kb("kb")
        assert not health.ok
        assert health.codes() == ({"missing_points"} if damage == "delete_segment" else {"store"})
        (d / "c.pdf").unlink()  # the original need not be there: the text is rebuilt from the kept Markdown
        report = lib.repair_kb("kb")
        assert report.after.ok and report.done and not report.not_repaired
        assert _passages(lib, "kb") == before  # same passages, pages, tags and owner
        hits = lib.search("printer code", kbs=["kb"])
        assert hits and "4711" in hits[0].chunk.text and hits[0].chunk.pages == (1, 2)  # page spans kept


def test_a_corrupt_manifest_is_rebuilt_from_the_index(settings, built):
    d, before = built
    path = settings.kbs_dir / "kb" / "manifest.sqlite"
    with path.open("r+b") as fh:
        fh.seek(100)
        fh.write(b"\xff" * 4000)
    with _lib(settings) as lib:
        health = lib.check_kb("kb")
        assert health.codes() == {"manifest"} and "damaged" in health.problems[0].message
        report = lib.repair_kb("kb")
        assert report.after.ok, report.to_json()
        assert any(p.name.startswith("manifest.damaged-") for p in path.parent.iterdir())  # kept, not deleted
        rows = {Path(r.path).name: r for r in lib.documents("kb")}
        assert set(rows) == {"a.md", "b.txt", "c.pdf"}
        assert all(r.tags == ("work",) and r.owner == "ann" for r in rows.values())
        again = lib.ingest("kb", [d])
        assert len(again.unchanged) == 3 and again.chunks == 0  # the originals were recognised
        assert _passages(lib, "kb") == before
        assert lib.search("Lyon", kbs=["kb"], flt=SearchFilter(owners=("ann",)))  # scopes work


@pytest.mark.parametrize("damage", ["deleted", "emptied"])
def test_a_missing_or_empty_manifest_is_rebuilt_not_taken_for_a_base_without_documents(settings, built, damage):
    """repair opened a new, empty manifest in its place, took every passage for a stray and
    deleted them all (an audit's base of 8 documents went to 0)."""
    _, before = built
    path = settings.kbs_dir / "kb" / "manifest.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.unlink() if damage == "deleted" else path.write_bytes(b"")
    with _lib(settings) as lib:
        report = lib.repair_kb("kb")
        assert report.after.ok, report.to_json()
        assert any("rebuilt the manifest" in line and "searches need one again" in line for line in report.done)
        assert _passages(lib, "kb") == before and len(lib.documents("kb")) == 3
        assert lib.search("Lyon", kbs=["kb"], flt=SearchFilter(owners=("ann",)))


def test_missing_markdown_comes_back_from_the_original_or_from_the_passages(settings, built):
    d, before = built
    with _lib(settings) as lib:
        rows = {Path(r.path).name: r for r in lib.documents("kb")}
    docs = settings.kbs_dir / "kb" / "docs"
    old = {n: (docs / f"{rows[n].doc_id}.md").read_text(encoding="utf-8") for n in ("a.md", "b.txt")}
    for n in ("a.md", "b.txt"):
        (docs / f"{rows[n].doc_id}.md").unlink()
    (d / "b.txt").unlink()  # gone: only its passages are left
    with _lib(settings) as lib:
        health = lib.check_kb("kb")
        assert [p.code for p in health.problems] == ["markdown", "markdown"]
        report = lib.repair_kb("kb")
        assert report.after.ok, report.to_json()
        assert lib.document_markdown("kb", rows["a.md"].doc_id) == old["a.md"]  # read again from the file
        rebuilt = lib.document_markdown("kb", rows["b.txt"].doc_id)
        assert "the office moves to Lyon" in rebuilt and any("passages" in x for x in report.done)
        for path, text, start, end, *_rest in _passages(lib, "kb").values():
            if path == rows["b.txt"].path:
                assert rebuilt[start:end] == text  # citations still point at their words
        assert _passages(lib, "kb") == before


def test_what_cannot_be_rebuilt_is_said(settings, built, tmp_path):
    shutil.rmtree(_segment(settings))
    path = settings.kbs_dir / "kb" / "manifest.sqlite"
    path.write_bytes(b"not a database" * 100)
    from desktop_kb.cli import main

    data = settings.data_dir
    assert main(["--data-dir", str(data), "kb", "check", "kb", "--json"]) == 1
    assert main(["--data-dir", str(data), "kb", "repair", "kb"]) == 1  # the index is empty: nothing to rebuild from
    assert path.read_bytes() == b"not a database" * 100  # and nothing was thrown away
    assert len(list((settings.kbs_dir / "kb" / "docs").glob("*.md"))) == 3


def test_the_cli_reports_in_one_json_document(settings, built, capsys):
    from desktop_kb.cli import main
    from desktop_kb.settings import save_settings

    save_settings(settings.replace(models=settings.models.__class__(
        **{**settings.models.__dict__, "embedder": settings.models.embedder.__class__(
            **{**settings.models.embedder.__dict__, "backend": "hash", "id": HashEmbedder().id,
               "dim": HashEmbedder().dim})})))
    seg = _segment(settings)
    with (seg / "vector_storage-dense" / "vectors" / "chunk_0.mmap").open("r+b") as fh:
        fh.truncate(100)
    capsys.readouterr()
    assert main(["--data-dir", str(settings.data_dir), "kb", "check", "kb", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["problems"][0]["code"] == "store"
    assert main(["--data-dir", str(settings.data_dir), "kb", "repair", "kb", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["after"]["ok"] is True and out["done"]
    assert main(["--data-dir", str(settings.data_dir), "kb", "check", "kb"]) == 0
    assert "no problems found" in capsys.readouterr().out
