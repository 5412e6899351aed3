"""Ingestion plumbing with the real store and converters, and a deterministic fake embedder:
incremental runs, bad files, crash safety."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from filemakers import make_docx, make_pdf

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.library.kb import Library
from desktop_kb.protocols import SearchFilter


def _lib(settings) -> Library:
    return Library.open(settings, embedder=HashEmbedder(), reranker=None)


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.md").write_text("# Alpha\n\nThe alpha project starts in May.\n", encoding="utf-8")
    (d / "b.md").write_text("# Beta\n\nBeta invoices are paid monthly.\n", encoding="utf-8")
    (d / "c.txt").write_text("Gamma notes: the office moves to Lyon.\n", encoding="utf-8")
    return d


def _chunks_by_path(lib: Library, kb: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in lib.store.scroll(kb):
        out.setdefault(r.payload["path"], set()).add(r.payload["doc_id"])
    return out


def test_rerun_is_unchanged_edit_reindexes_one_delete_removes(settings, tmp_path):
    d = _folder(tmp_path)
    with _lib(settings) as lib:
        r1 = lib.ingest("kb", [d])
        assert len(r1.added) == 3 and not r1.failed
        before = lib.store.count("kb")
        r2 = lib.ingest("kb", [d])
        assert len(r2.unchanged) == 3 and not (r2.added or r2.updated or r2.deleted)
        assert r2.chunks == 0 and lib.store.count("kb") == before

        (d / "b.md").write_text("# Beta\n\nBeta invoices are paid weekly now.\n", encoding="utf-8")
        r3 = lib.ingest("kb", [d])
        assert [Path(p).name for p in r3.updated] == ["b.md"] and len(r3.unchanged) == 2
        texts = [r.payload["text"] for r in lib.store.scroll("kb", SearchFilter(paths=(str(d / "b.md"),)))]
        assert texts == ["Beta invoices are paid weekly now."]  # old version gone

        (d / "c.txt").unlink()
        r4 = lib.ingest("kb", [d])
        assert [Path(p).name for p in r4.deleted] == ["c.txt"]
        assert str(d / "c.txt") not in _chunks_by_path(lib, "kb")
        assert {Path(p).name for p in _chunks_by_path(lib, "kb")} == {"a.md", "b.md"}


def test_bad_files_are_reported_and_good_ones_indexed(settings, tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "good.md").write_text("# Good\n\nThis file is fine.\n", encoding="utf-8")
    (d / "corrupt.docx").write_bytes(os.urandom(2048))
    (d / "locked.pdf").write_bytes(make_pdf([["secret"]], password="pw"))
    (d / "empty.txt").write_bytes(b"")
    (d / "binary.txt").write_bytes(bytes(range(256)) * 8)
    (d / "mail.msg").write_bytes(b"From: someone\n\nnot an Outlook file")  # .msg is picked up by default
    with _lib(settings) as lib:
        r = lib.ingest("kb", [d])
        assert [Path(p).name for p in r.added] == ["good.md"]
        reasons = {Path(f.path).name: f.error for f in r.failed}
        assert set(reasons) == {"corrupt.docx", "locked.pdf", "empty.txt", "binary.txt", "mail.msg"}
        assert "not a real Outlook message" in reasons["mail.msg"]
        assert "password" in reasons["locked.pdf"].lower()
        assert "empty" in reasons["empty.txt"].lower()
        assert "damaged" in reasons["corrupt.docx"].lower() or "not a real" in reasons["corrupt.docx"].lower()
        assert "binary" in reasons["binary.txt"].lower()
        assert set(lib.failures("kb")) == {str(d / n) for n in reasons}


def test_cli_exit_codes_for_bad_files(tmp_path):
    from desktop_kb.cli import main

    data = tmp_path / "data"
    (tmp_path / "settings").mkdir()
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"models": {"embedder": {"backend": "hash", "id": "test/hash-embedder", "dim": 64}}}))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.txt").write_bytes(b"")
    assert main(["--data-dir", str(data), "ingest", str(bad), "--kb", "k", "--json"]) == 1
    (bad / "y.md").write_text("# Y\n\nfine\n")
    assert main(["--data-dir", str(data), "ingest", str(bad), "--kb", "k", "--json"]) == 0


def test_pages_and_headings_for_pdf_and_docx(settings, tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "report.pdf").write_bytes(make_pdf([["Page one intro"], ["Budget table on page two"], ["Closing remarks"]]))
    make_docx(d / "policy.docx", [("Heading1", "Travel policy"), ("", "Hotels up to 300 dollars per night.")])
    with _lib(settings) as lib:
        lib.ingest("kb", [d])
        recs = {r.payload["text"]: r.payload for r in lib.store.scroll("kb")}
    pdf = [p for p in recs.values() if p["path"].endswith("report.pdf")]
    assert len(pdf) == 1 and pdf[0]["pages"] == [1, 2, 3]
    docx = [p for p in recs.values() if p["path"].endswith("policy.docx")]
    assert docx[0]["heading_path"] == ["Travel policy"]


def test_small_chunks_split_pdf_pages(settings, tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    pages = [[f"Line {p}.{i} of the long report with enough words to fill a chunk." for i in range(8)]
             for p in range(1, 4)]
    (d / "long.pdf").write_bytes(make_pdf(pages))
    s = settings.replace(chunk=settings.chunk.__class__(size=200, overlap=30))
    with _lib(s) as lib:
        lib.ingest("kb", [d])
        recs = sorted(lib.store.scroll("kb"), key=lambda r: r.payload["index"])
        md = lib.document_markdown("kb", recs[0].payload["doc_id"])
    for r in recs:
        p = r.payload
        assert md[p["start"]:p["end"]] == p["text"]  # offsets point into the converted Markdown
        first_page = int(p["text"].split("Line ")[1].split(".")[0]) if p["text"].startswith("Line") else None
        if first_page is not None:
            assert first_page in p["pages"]
    assert {tuple(r.payload["pages"]) for r in recs} >= {(1,), (3,)}


_CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import Settings

    class Slow(HashEmbedder):
        def embed_passages(self, texts):
            time.sleep(0.15)
            return super().embed_passages(texts)

    s = Settings(data_dir=Path(sys.argv[1]))
    s = s.replace(models=s.models.__class__(embed_batch=1))
    with Library.open(s, embedder=Slow(), reranker=None) as lib:
        def progress(p):
            print(json.dumps({"done": p.files_done, "stage": p.stage, "file": p.current_file}), flush=True)
        lib.ingest("kb", [Path(sys.argv[2])], progress=progress)
""")


def test_kill_mid_ingest_loses_nothing_reported_done(settings, tmp_path):
    d = tmp_path / "many"
    d.mkdir()
    for i in range(8):
        paras = "\n\n".join(f"Paragraph {j} of file {i}, with words to make it longer than one chunk." for j in range(40))
        (d / f"f{i}.md").write_text(f"# File {i}\n\n{paras}\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(settings.data_dir), str(d)],
                            stdout=subprocess.PIPE, text=True)
    done = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event["stage"] == "write":
            continue
        if event["done"] >= 3 and event["stage"] == "embed":
            done = event["done"]
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert done >= 3

    with _lib(settings) as lib:
        rows = lib.manifest("kb").documents()
        assert len(rows) >= done  # everything reported done survived the kill
        lib.ingest("kb", [d])  # the next run recovers and completes
        rows = lib.manifest("kb").documents()
        by_path = _chunks_by_path(lib, "kb")
        assert len(rows) == 8
        for path, row in rows.items():
            assert by_path[path] == {row.doc_id}  # exactly one version per file
            assert lib.store.count("kb", SearchFilter(paths=(path,))) == row.chunks  # never half-indexed
        assert set(by_path) == set(rows)


_KILL_AT = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.ingest import manifest, pipeline
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import Settings

    step = sys.argv[3]
    def die(*args, **kwargs):
        os._exit(9)  # as a SIGKILL would: no cleanup runs
    if step == "text":  # the new Markdown written, no passage yet
        pipeline.write_points = die
    elif step == "points":  # the new passages written, the manifest row not yet switched
        manifest.Manifest.put_document = die
    elif step == "switch":  # the manifest row switched, the old version's text and passages still there
        pipeline._drop_markdown = die
    elif step == "cleared":  # everything done but clearing the pending row
        manifest.Manifest.clear_pending = die
    elif step == "create":  # a new base: its manifest written, its index not yet made
        from desktop_kb.store.edge import EdgeStore
        EdgeStore.create_collection = die
    with Library.open(Settings(data_dir=Path(sys.argv[1])), embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [Path(sys.argv[2])])
""")


@pytest.mark.parametrize("step", ["text", "points", "switch", "cleared"])
def test_a_kill_at_each_step_of_a_files_commit_shows_one_version_and_leaves_no_stray_text(settings, tmp_path, step):
    """Each step of writing an edited file's new version, killed: the base holds together (only
    the interrupted write to finish), search shows the version the manifest holds and no other,
    and the next run leaves one version of everything."""
    d = _folder(tmp_path)
    with _lib(settings) as lib:
        lib.ingest("kb", [d])
    (d / "a.md").write_text("# Alpha\n\nThe alpha project starts in June, not May.\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", _KILL_AT, str(settings.data_dir), str(d), step],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr[-2000:]
    docs_dir = settings.data_dir / "kbs" / "kb" / "docs"
    with _lib(settings) as lib:
        assert lib.check_kb("kb").codes() == {"pending"}
        rows = lib.manifest("kb").documents()
        hits = lib.search("the alpha project starts", kbs=["kb"], top_k=20)
        assert str(d / "a.md") in {h.chunk.path for h in hits}
        assert all(h.chunk.doc_id == rows[h.chunk.path].doc_id for h in hits)  # one version, the manifest's
        lib.ingest("kb", [d])  # recovers, then indexes the edit
        health = lib.check_kb("kb")
        assert health.ok, health.to_json()
        rows = lib.manifest("kb").documents()
        assert {f.name.split(".")[0] for f in docs_dir.iterdir()} == {r.doc_id for r in rows.values()}
        assert _chunks_by_path(lib, "kb") == {p: {r.doc_id} for p, r in rows.items()}
        assert "June" in lib.document_markdown("kb", rows[str(d / "a.md")].doc_id)


def test_a_kill_while_a_new_base_is_made_leaves_an_empty_base(settings, tmp_path):
    """Killed between writing a new base's manifest and making its index: an empty base, not a
    damaged one (nothing to repair, search finds nothing), and the next ingest fills it."""
    d = _folder(tmp_path)
    proc = subprocess.run([sys.executable, "-c", _KILL_AT, str(settings.data_dir), str(d), "create"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr[-2000:]
    with _lib(settings) as lib:
        assert lib.list_kbs() == ["kb"] and not lib.store.has_collection("kb")
        assert lib.check_kb("kb").ok
        assert lib.search("alpha project", kbs=["kb"]) == []
        lib.ingest("kb", [d])
        assert lib.check_kb("kb").ok and len(lib.manifest("kb").documents()) == 3


def test_cancel_keeps_finished_files(settings, tmp_path):
    from desktop_kb.progress import CancelToken

    d = _folder(tmp_path)
    token = CancelToken()

    def progress(p):
        if p.files_done >= 1 and p.stage == "convert":
            token.cancel()

    with _lib(settings) as lib:
        r = lib.ingest("kb", [d], progress=progress, cancel=token)
        assert r.cancelled and len(r.added) == 1
        assert len(lib.manifest("kb").documents()) == 1
        r2 = lib.ingest("kb", [d])
        assert len(r2.added) == 2 and len(r2.unchanged) == 1


def test_embedder_change_is_refused_then_reembed(settings, tmp_path):
    from desktop_kb.errors import EmbedderMismatch

    d = _folder(tmp_path)
    with _lib(settings) as lib:
        lib.ingest("kb", [d])
    with Library.open(settings, embedder=HashEmbedder(dim=32), reranker=None) as lib:
        with pytest.raises(EmbedderMismatch):
            lib.search("alpha", kbs=["kb"])
        with pytest.raises(EmbedderMismatch):
            lib.ingest("kb", [d])
        r = lib.reembed("kb")
        assert len(r.added) == 3
        assert lib.stats("kb").dim == 32
        assert lib.search("alpha project", kbs=["kb"])


def test_own_data_folder_is_never_ingested(tmp_path):
    from desktop_kb.settings import Settings

    d = _folder(tmp_path)
    s = Settings(data_dir=d / "appdata")  # the data folder lives inside the documents folder
    with _lib(s) as lib:
        lib.ingest("kb", [d])
        r = lib.ingest("kb", [d])
        assert len(r.unchanged) == 3 and not r.added  # its converted Markdown was not picked up
        bad = lib.ingest("kb", [s.data_dir])
        assert bad.failed and "own data folder" in bad.failed[0].error


def test_failures_can_be_forgotten(settings, tmp_path):
    d = tmp_path / "x"
    d.mkdir()
    (d / "empty.txt").write_bytes(b"")
    (d / "ok.md").write_text("# ok\n\nfine\n")
    with _lib(settings) as lib:
        lib.ingest("kb", [d])
        assert list(lib.failures("kb")) == [str(d / "empty.txt")]
        lib.forget_failures("kb", [str(d / "empty.txt")])
        assert lib.failures("kb") == {}


def test_bm25_average_length_is_not_taken_from_the_first_file_alone(settings, tmp_path):
    from desktop_kb.text.tokenize import tokenize

    d = tmp_path / "docs"
    d.mkdir()
    (d / "a_note.md").write_text("Short note.\n", encoding="utf-8")  # first in discovery order
    long_text = " ".join(f"The quarterly report lists revenue item {i} in detail." for i in range(12))
    for name in ("b.md", "c.md", "d.md"):
        (d / name).write_text(f"# {name}\n\n{long_text}\n", encoding="utf-8")
    with _lib(settings) as lib:
        lib.ingest("kb", [d])
        lengths = [len(tokenize(r.payload["text"])) for r in lib.store.scroll("kb")]
        meta = lib.manifest("kb")
        assert meta.get_meta("bm25_len_samples") == len(lengths)
        expected = sum(lengths) / len(lengths)
        assert meta.get_meta("bm25_avg_len") == pytest.approx(expected)
        assert expected > 2 * 20.0  # the short note alone would have given the 20-token floor


def test_second_process_gets_in_use_whatever_the_store(tmp_path):
    """With a Qdrant server the store has no folder lock: the manifest's lock keeps two processes
    from ingesting into (and "recovering") the same knowledge base; a crash releases it."""
    data = tmp_path / "data"
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from desktop_kb.library.kb import Library
        from desktop_kb.settings import Settings, StoreSettings
        from desktop_kb.backends.embed_hash import HashEmbedder
        from desktop_kb.errors import KnowledgeBaseInUse
        s = Settings(data_dir=Path({str(data)!r}), store=StoreSettings(url=":memory:"))
        lib = Library.open(s, embedder=HashEmbedder(), reranker=None)
        try:
            lib.create_kb("kb")
        except KnowledgeBaseInUse as e:
            print("IN_USE", e, flush=True)
            sys.exit(0)
        print("HOLDING", flush=True)
        time.sleep(60)
    """)
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "HOLDING"
        second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert "IN_USE" in second.stdout and "'kb'" in second.stdout, second.stderr
    finally:
        holder.kill()
        holder.wait()
    third = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:  # the killed holder's lock is gone
        assert third.stdout is not None and third.stdout.readline().strip() == "HOLDING"
    finally:
        third.kill()
        third.wait()
