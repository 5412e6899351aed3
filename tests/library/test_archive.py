"""kb export / kb import: one archive, verified, answering with the same citations elsewhere."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from filemakers import hash_data_dir

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.errors import ConfigError, CorruptFile, EmbedderMismatch
from desktop_kb.library.kb import Library
from desktop_kb.settings import Settings

ANSWER = "Invoices are paid within 30 days [1]."


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "invoices.md").write_text("# Invoices\n\nInvoices are paid within 30 days of receipt.\n")
    (d / "leave.md").write_text("# Leave\n\nStaff get 25 days of paid leave each year.\n")
    return d


def _ask(lib: Library, kb: str):
    a = lib.ask("How fast are invoices paid?", kbs=[kb])
    return a.status, [(Path(c.path).name, c.start, c.end, c.pages) for c in a.citations]


def test_export_import_into_a_fresh_data_folder_answers_the_same(tmp_path, scripted):
    d = _folder(tmp_path)
    out = tmp_path / "finance.dkb"
    with Library.open(Settings(data_dir=tmp_path / "one"), embedder=HashEmbedder(), reranker=None,
                      generator=scripted(answers=[ANSWER])) as lib:
        lib.ingest("finance", [d], tags=["money"])
        original = _ask(lib, "finance")
        vectors = {p.id: p.dense.tobytes() for p in lib.store.points("finance")}
        header = lib.export_kb("finance", out)
    assert header["points"] == len(vectors) and original[0] == "answered" and original[1]
    with Library.open(Settings(data_dir=tmp_path / "two"), embedder=HashEmbedder(), reranker=None,
                      generator=scripted(answers=[ANSWER])) as lib:
        assert lib.import_kb(out) == "finance"
        assert _ask(lib, "finance") == original
        assert {p.id: p.dense.tobytes() for p in lib.store.points("finance")} == vectors
        assert {r.tags for r in lib.documents("finance")} == {("money",)}
        with pytest.raises(ConfigError, match="already exists"):
            lib.import_kb(out)
        assert lib.import_kb(out, as_name="copy") == "copy"
        assert {p.payload["kb"] for p in lib.store.points("copy")} == {"copy"}
        lib.import_kb(out, replace=True)
        assert sorted(lib.list_kbs()) == ["copy", "finance"]


def test_damaged_foreign_or_mismatched_archives_are_refused(tmp_path):
    d = _folder(tmp_path)
    out = tmp_path / "kb.dkb"
    with Library.open(Settings(data_dir=tmp_path / "one"), embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [d])
        lib.export_kb("kb", out)
    tampered = tmp_path / "tampered.dkb"
    with zipfile.ZipFile(out) as src, zipfile.ZipFile(tampered, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            dst.writestr(item, data.replace(b"30 days", b"90 days") if item.filename.startswith("docs/") else data)
    evil = tmp_path / "evil.dkb"
    with zipfile.ZipFile(out) as src, zipfile.ZipFile(evil, "w") as dst:
        header = json.loads(src.read("desktop-kb-archive.json"))
        header["files"]["../outside.txt"] = "0" * 64
        dst.writestr("desktop-kb-archive.json", json.dumps(header))
        dst.writestr("../outside.txt", "x")
    (tmp_path / "junk.dkb").write_bytes(b"not a zip")
    with Library.open(Settings(data_dir=tmp_path / "two"), embedder=HashEmbedder(dim=32), reranker=None) as lib:
        with pytest.raises(CorruptFile, match="checksum"):
            lib.import_kb(tampered)
        with pytest.raises(CorruptFile, match="unexpected members"):
            lib.import_kb(evil)
        with pytest.raises(CorruptFile, match="damaged or not a desktop-kb archive"):
            lib.import_kb(tmp_path / "junk.dkb")
        with pytest.raises(EmbedderMismatch, match="was built with the embedder"):
            lib.import_kb(out)
        assert lib.list_kbs() == [] and not (tmp_path / "outside.txt").exists()


def _rewritten(src_path: Path, dst_path: Path, change) -> Path:
    """The archive with ``change(member, data)`` applied and its checksums made to match: damage a
    checksum cannot see."""
    import hashlib

    with zipfile.ZipFile(src_path) as src:
        members = {i.filename: src.read(i) for i in src.infolist()}
    header = json.loads(members.pop("desktop-kb-archive.json"))
    members = {m: change(m, data) for m, data in members.items()}
    header["files"] = {m: hashlib.sha256(data).hexdigest() for m, data in members.items()}
    header = change("desktop-kb-archive.json", header)
    with zipfile.ZipFile(dst_path, "w") as dst:
        dst.writestr("desktop-kb-archive.json", json.dumps(header))
        for m, data in members.items():
            dst.writestr(m, data)
    return dst_path


def test_wrong_paths_and_well_sealed_damage_are_clear_errors(tmp_path):
    d = _folder(tmp_path)
    out = tmp_path / "kb.dkb"
    with Library.open(Settings(data_dir=tmp_path / "one"), embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [d])
        for wrong, message in ((tmp_path, "is a folder"), (tmp_path / "nowhere" / "x.dkb", "does not exist")):
            with pytest.raises(ConfigError, match=message):
                lib.export_kb("kb", wrong)
        lib.export_kb("kb", out)
    no_meta = _rewritten(out, tmp_path / "no-meta.dkb",
                         lambda m, x: {k: v for k, v in x.items() if k != "meta"} if m == "desktop-kb-archive.json" else x)
    no_vectors = _rewritten(out, tmp_path / "no-vectors.dkb", lambda m, x: x.replace(b'"dense"', b'"gone"')
                            if m == "points.jsonl" else x)
    with Library.open(Settings(data_dir=tmp_path / "two"), embedder=HashEmbedder(), reranker=None) as lib:
        for missing, message in ((tmp_path / "absent.dkb", "not there"), (tmp_path, "a folder")):
            with pytest.raises(ConfigError, match=message):
                lib.import_kb(missing)
        with pytest.raises(CorruptFile, match="does not describe a knowledge base"):
            lib.import_kb(no_meta)
        with pytest.raises(CorruptFile, match=r"passage 1 of points\.jsonl cannot be read") as caught:
            lib.import_kb(no_vectors)
        assert "Export it again" in caught.value.hint
        assert lib.list_kbs() == []  # nothing half-imported is left


def test_cli_export_and_import(tmp_path, capsys):
    from desktop_kb.cli import main

    for name in ("a", "b"):
        hash_data_dir(tmp_path / name)
    d = _folder(tmp_path)
    assert main(["--data-dir", str(tmp_path / "a"), "ingest", str(d), "--kb", "k", "--json"]) == 0
    capsys.readouterr()
    assert main(["--data-dir", str(tmp_path / "a"), "kb", "export", "k", str(tmp_path / "k.dkb"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["points"] == 2
    assert main(["--data-dir", str(tmp_path / "b"), "kb", "import", str(tmp_path / "k.dkb"), "--as", "moved",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"imported": "moved", "file": str(tmp_path / "k.dkb")}
    assert main(["--data-dir", str(tmp_path / "b"), "search", "invoices", "--kb", "moved", "--json"]) == 0
    assert "invoices.md" in capsys.readouterr().out


def test_push_into_a_server_store_keeps_vectors_and_answers(tmp_path, scripted):
    from desktop_kb.store.server import ServerStore

    d = _folder(tmp_path)
    server = ServerStore(":memory:")  # qdrant-client's in-process server API
    with Library.open(Settings(data_dir=tmp_path / "one"), embedder=HashEmbedder(), reranker=None,
                      generator=scripted(answers=[ANSWER])) as lib:
        lib.ingest("finance", [d])
        original = _ask(lib, "finance")
        vectors = {p.id: p.dense.tobytes() for p in lib.store.points("finance")}
        assert lib.push_kb("finance", "http://qdrant.example:6333", target=server) == len(vectors)
        assert lib.push_kb("finance", "http://qdrant.example:6333", target=server) == len(vectors)  # repeatable
        assert lib.location("finance") == "embedded (pushed to http://qdrant.example:6333)"
    assert {p.id: p.dense.tobytes() for p in server.points("finance")} == vectors
    # the same manifest with the server as the store answers the same
    with Library.open(Settings(data_dir=tmp_path / "one"), store=server, embedder=HashEmbedder(), reranker=None,
                      generator=scripted(answers=[ANSWER])) as lib:
        assert _ask(lib, "finance") == original
