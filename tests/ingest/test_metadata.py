"""Metadata edits without re-embedding, tags on re-ingest, the owner scope, a missing index."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from filemakers import hash_data_dir

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.errors import IndexMissing, OwnerScopeRequired
from desktop_kb.library.kb import Library
from desktop_kb.protocols import SearchFilter


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def embed_passages(self, texts):
        self.calls += 1
        return super().embed_passages(texts)


def _docs(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    (d / "finance").mkdir(parents=True)
    (d / "finance" / "invoices.md").write_text("# Invoices\n\nInvoices are paid within 30 days.\n")
    (d / "finance" / "budget.md").write_text("# Budget\n\nThe travel budget is 4,000 euros.\n")
    (d / "hr.md").write_text("# Leave\n\nStaff get 25 days of paid leave.\n")
    return d


def _vectors(lib: Library, kb: str) -> dict[str, bytes]:
    """Every point's dense vector, straight from the engine (the store API returns payloads only)."""
    import qdrant_edge as q

    shard = lib.store._open(kb)  # type: ignore[attr-defined]
    records, _ = shard.scroll(q.ScrollRequest(limit=1000, with_vector=True))
    return {str(r.id): np.asarray(r.vector["dense"], dtype=np.float32).tobytes() for r in records}


def test_tag_edit_calls_no_embedder_and_changes_no_vector(settings, tmp_path):
    d = _docs(tmp_path)
    emb = CountingEmbedder()
    with Library.open(settings, embedder=emb, reranker=None) as lib:
        lib.ingest("kb", [d])
        before, calls = _vectors(lib, "kb"), emb.calls
        changed = lib.set_metadata("kb", [d / "finance"], add=["finance", "2024"])
        assert sorted(Path(p).name for p in changed) == ["budget.md", "invoices.md"]
        changed = lib.set_metadata("kb", [d / "finance" / "budget.md"], remove=["2024"])
        assert emb.calls == calls and _vectors(lib, "kb") == before
        tags = {Path(r.path).name: r.tags for r in lib.documents("kb")}
        assert tags == {"invoices.md": ("finance", "2024"), "budget.md": ("finance",), "hr.md": ()}
        hits = lib.search("how long until invoices are paid", kbs=["kb"], flt=SearchFilter(tags=("2024",)))
        assert {Path(h.chunk.path).name for h in hits} == {"invoices.md"}
        assert lib.set_metadata("kb", [d / "hr.md"], add=[]) == []  # nothing to change
        with pytest.raises(Exception, match="not in this knowledge base"):
            lib.set_metadata("kb", [tmp_path / "elsewhere.md"], add=["x"])


def test_reingest_with_new_tags_updates_unchanged_files_and_none_keeps_them(settings, tmp_path):
    d = _docs(tmp_path)
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [d], tags=["old"])
        report = lib.ingest("kb", [d], tags=["new"], owner="ana")
        assert len(report.unchanged) == 3 and report.chunks == 0
        rows = lib.documents("kb")
        assert {r.tags for r in rows} == {("new",)} and {r.owner for r in rows} == {"ana"}
        payloads = [r.payload for r in lib.store.scroll("kb")]
        assert {tuple(p["tags"]) for p in payloads} == {("new",)} and {p["owner"] for p in payloads} == {"ana"}
        (d / "hr.md").write_text("# Leave\n\nStaff get 27 days of paid leave.\n")
        lib.ingest("kb", [d])  # no tags given: the changed file keeps its own
        hr = next(r for r in lib.documents("kb") if r.path.endswith("hr.md"))
        assert hr.tags == ("new",) and hr.owner == "ana"


def test_owner_scope_is_fail_closed(settings, tmp_path):
    d = _docs(tmp_path)
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        lib.create_kb("clinic", require_owner=True)
        lib.ingest("clinic", [d / "finance"], owner="dr-li")
        lib.ingest("clinic", [d / "hr.md"], owner="dr-wu")
        with pytest.raises(OwnerScopeRequired, match="only be searched for an owner"):
            lib.search("paid", kbs=["clinic"])
        with pytest.raises(OwnerScopeRequired):
            lib.search("paid", kbs=["clinic"], flt=SearchFilter(tags=("x",)))
        hits = lib.search("paid leave days", kbs=["clinic"], flt=SearchFilter(owners=("dr-wu",)))
        assert hits and {Path(h.chunk.path).name for h in hits} == {"hr.md"}
        lib.set_metadata("clinic", [d / "hr.md"], owner="dr-li")
        assert lib.search("paid leave days", kbs=["clinic"], flt=SearchFilter(owners=("dr-wu",))) == []
        lib.reembed("clinic")  # the scope survives re-embedding
        with pytest.raises(OwnerScopeRequired):
            lib.search("paid", kbs=["clinic"])


def test_a_missing_index_is_an_error_that_says_how_to_repair(settings, tmp_path):
    import shutil

    d = _docs(tmp_path)
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [d])
    shutil.rmtree(settings.kbs_dir / "kb" / "shard")
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        with pytest.raises(IndexMissing) as info:
            lib.search("invoices", kbs=["kb"])
        assert "kb reembed kb" in info.value.hint
        lib.reembed("kb")
        assert lib.search("invoices", kbs=["kb"])


def test_cli_create_tag_and_set_owner(tmp_path, capsys):
    from desktop_kb.cli import main

    data = hash_data_dir(tmp_path / "data")
    d = _docs(tmp_path)
    base = ["--data-dir", str(data)]
    assert main([*base, "kb", "create", "k", "--require-owner", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"created": "k", "require_owner": True}
    assert main([*base, "ingest", str(d), "--kb", "k", "--json"]) == 0
    capsys.readouterr()
    assert main([*base, "kb", "tag", "k", str(d / "finance"), "--add", "money", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["changed"]) == 2
    assert main([*base, "kb", "set-owner", "k", str(d), "ops", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["changed"]) == 3
    assert main([*base, "search", "invoices", "--kb", "k", "--json"]) != 0  # no owner: refused
    assert "owner" in capsys.readouterr().err
    assert main([*base, "search", "invoices", "--kb", "k", "--filter", "owner=ops", "--json"]) == 0
    assert "invoices.md" in capsys.readouterr().out


def test_reembed_keeps_tags_owners_and_every_file_across_a_stop(settings, tmp_path):
    """A re-embedding drops the rows that hold the user's tags and owners: they come back; one
    stopped after its first file loses no file, and the next re-embedding finishes it."""
    from desktop_kb.progress import CancelToken

    d = _docs(tmp_path)
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [d])
        lib.set_metadata("kb", [d / "finance"], tags=["money", "2024"])
        lib.set_metadata("kb", [d / "hr.md"], owner="dr-wu")
    with Library.open(settings, embedder=HashEmbedder(dim=32), reranker=None) as lib:
        token = CancelToken()

        def progress(p):
            if p.files_done >= 1:
                token.cancel()

        stopped = lib.reembed("kb", progress=progress, cancel=token)
        assert stopped.cancelled and len(lib.manifest("kb").documents()) == 1
        report = lib.reembed("kb")  # takes up the two files the stopped run did not reach
        assert not report.cancelled
        rows = lib.manifest("kb").documents()
        assert {Path(p).name for p in rows} == {"invoices.md", "budget.md", "hr.md"}
        assert lib.stats("kb").dim == 32
        by_name = {Path(p).name: r for p, r in rows.items()}
        assert by_name["invoices.md"].tags == ("money", "2024") == by_name["budget.md"].tags
        assert by_name["hr.md"].owner == "dr-wu" and by_name["hr.md"].tags == ()
        # the passages carry them too: filters find them
        hits = lib.search("travel budget", kbs=["kb"], flt=SearchFilter(tags=("money",)))
        assert hits and {Path(h.chunk.path).name for h in hits} <= {"invoices.md", "budget.md"}
        assert {Path(h.chunk.path).name for h in lib.search("paid leave", kbs=["kb"],
                                                             flt=SearchFilter(owners=("dr-wu",)))} == {"hr.md"}
        assert lib.manifest("kb").get_meta("reembed") == {}  # finished: nothing left to take up
        lib.remove_files("kb", [str(d / "hr.md")])
        lib.reembed("kb")  # a file removed after a finished re-embedding does not come back
        assert {Path(p).name for p in lib.manifest("kb").documents()} == {"invoices.md", "budget.md"}
