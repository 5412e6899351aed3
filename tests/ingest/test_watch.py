"""Folder watch with real file-system events (watchdog/inotify), the real store and converters."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from filemakers import hash_data_dir

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.ingest.watch import FolderWatcher, watched_folders
from desktop_kb.library.kb import Library


def _wait(cond, timeout: float = 15.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def test_debounce_merges_bursts_and_ignores_temp_and_hidden_files(tmp_path):
    d = tmp_path / "docs"
    (d / ".git").mkdir(parents=True)
    batches: list[list[str]] = []
    with FolderWatcher([d], batches.append, extensions=(".md",), debounce=0.5):
        f = d / "notes.md"
        f.write_text("one")
        f.write_text("two")  # saved twice within a second
        for i in range(500):  # a burst of new files
            (d / f"new{i:03}.md").write_text(f"note {i}")
        (d / "notes.md~").write_text("backup")
        (d / "~$lock.md").write_text("lock")
        (d / ".git" / "HEAD").write_text("ref")
        assert _wait(lambda: bool(batches))
        time.sleep(1.0)
    assert len(batches) == 1
    names = {Path(p).name for p in batches[0]}
    assert "notes.md" in names and len([n for n in names if n.startswith("new")]) == 500
    assert not names & {"notes.md~", "~$lock.md", "HEAD", ".git"}


def test_watched_folders_are_the_outermost():
    assert watched_folders(["/tmp", "/tmp/a", "/nonexistent-folder"]) == [Path("/tmp")]


def test_edited_file_is_reindexed_alone_and_a_deleted_one_leaves(settings, tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    for name in ("a", "b", "c"):
        (d / f"{name}.md").write_text(f"# {name}\n\nNote {name} says the meeting is on Monday.\n")
    reports = []
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [d])
        lock = threading.Lock()

        def ingest(paths: list[str]) -> None:
            with lock:
                reports.append(lib.ingest("kb", [Path(p) for p in paths]))

        folders = watched_folders(r.folder for r in lib.documents("kb"))
        with FolderWatcher(folders, ingest, extensions=settings.extensions, debounce=0.4):
            (d / "b.md").write_text("# b\n\nNote b now says the meeting moved to Friday.\n")
            assert _wait(lambda: bool(reports))
            with lock:
                first = reports[0]
            assert [Path(p).name for p in first.updated] == ["b.md"] and not first.added and not first.unchanged
            (d / "c.md").unlink()
            assert _wait(lambda: len(reports) >= 2)
        with lock:
            assert [Path(p).name for p in reports[1].deleted] == ["c.md"]
        assert sorted(Path(r.path).name for r in lib.documents("kb")) == ["a.md", "b.md"]
        texts = [r.payload["text"] for r in lib.store.scroll("kb")]
        assert any("Friday" in t for t in texts) and not any("Note c" in t for t in texts)


def test_cli_watch_scans_at_start_and_stops_on_cancel(tmp_path, monkeypatch):

    from desktop_kb.cli import commands as cli
    from desktop_kb.progress import CancelToken

    data = hash_data_dir(tmp_path / "data")
    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.md").write_text("# A\n\nAlpha.\n")
    assert cli.main(["--data-dir", str(data), "ingest", str(d), "--kb", "k", "--json"]) == 0
    (d / "offline.md").write_text("# Offline\n\nAdded while nothing was watching.\n")
    token = CancelToken()
    monkeypatch.setattr(cli, "cancel_on_sigint", lambda: token)
    threading.Timer(3.0, token.cancel).start()
    assert cli.main(["--data-dir", str(data), "watch", "--kb", "k", "--debounce", "0.3"]) == 0
    from desktop_kb.settings import load_settings

    with Library.open(load_settings(data), reranker=None) as lib:
        assert sorted(Path(r.path).name for r in lib.documents("k")) == ["a.md", "offline.md"]
