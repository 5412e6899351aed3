"""Paths a person's disk really has: names with a newline or in another encoding, a folder that is
moved, unplugged or made unreadable, a removal by folder (the real store, a fake embedder)."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.errors import ConfigError, KnowledgeBaseInUse
from desktop_kb.ingest.watch import to_ingest
from desktop_kb.library.kb import Library


def _lib(settings) -> Library:
    return Library.open(settings, embedder=HashEmbedder(), reranker=None)


def _names(paths) -> set[str]:
    return {Path(p).name for p in paths}


def test_a_newline_in_a_file_name_is_indexed_and_leaves_the_base_usable(settings, tmp_path):
    d = tmp_path / "odd"
    d.mkdir()
    (d / "new\nline.txt").write_text("The emu count is 3.\n", encoding="utf-8")
    (d / "tab\tname.txt").write_text("The owl count is 5.\n", encoding="utf-8")
    with _lib(settings) as lib:
        r = lib.ingest("kb", [d])
        assert _names(r.added) == {"new\nline.txt", "tab\tname.txt"} and not r.failed
        (d / "more.txt").write_text("The ibis count is 7.\n", encoding="utf-8")
        (d / "new\nline.txt").write_text("The emu count is 4.\n", encoding="utf-8")
        r2 = lib.ingest("kb", [d])  # a second run (its deletes filter by these paths) goes through
        assert _names(r2.added) == {"more.txt"} and _names(r2.updated) == {"new\nline.txt"} and not r2.failed
        assert _names(lib.remove_files("kb", [str(d / "tab\tname.txt")])) == {"tab\tname.txt"}


@pytest.mark.skipif(os.name == "nt", reason="Windows file names are always Unicode")
def test_a_file_name_in_another_encoding_fails_alone(settings, tmp_path):
    d = tmp_path / "names"
    d.mkdir()
    (d / "good.txt").write_text("The lemur count is 4.\n", encoding="utf-8")
    bad = os.fsencode(str(d)) + b"/bad\xff\xfename.txt"
    try:
        with open(bad, "wb") as fh:
            fh.write(b"The lemur count is 9.\n")
    except OSError:  # a file system that stores only UTF-8 names
        pytest.skip("this file system refuses non-UTF-8 names")
    with _lib(settings) as lib:
        r = lib.ingest("kb", [d])
        assert _names(r.added) == {"good.txt"}
        assert len(r.failed) == 1 and "not valid text" in r.failed[0].error and "\\xff" in r.failed[0].path


def test_a_folder_that_is_gone_keeps_its_documents_a_file_that_is_gone_is_removed(settings, tmp_path):
    d = tmp_path / "w"
    (d / "sub").mkdir(parents=True)
    (d / "a.txt").write_text("Alpha notes.\n", encoding="utf-8")
    (d / "sub" / "b.txt").write_text("Beta notes.\n", encoding="utf-8")
    with _lib(settings) as lib:
        assert len(lib.ingest("kb", [d]).added) == 2
        d.rename(tmp_path / "w_moved")  # moved, renamed, or its drive unplugged
        r = lib.ingest("kb", [d])
        assert not r.deleted and len(lib.documents("kb")) == 2
        assert len(r.failed) == 1 and "its 2 documents stay" in r.failed[0].error
        (tmp_path / "w_moved").rename(d)
        (d / "a.txt").unlink()
        r2 = lib.ingest("kb", [d / "a.txt"])  # a file named that is gone (what watch sends) is removed
        assert _names(r2.deleted) == {"a.txt"} and _names(p.path for p in lib.documents("kb")) == {"b.txt"}


def test_a_known_file_that_cannot_be_looked_at_is_kept_and_reported(settings, tmp_path, monkeypatch):
    d = tmp_path / "p"
    (d / "locked").mkdir(parents=True)
    (d / "ok.txt").write_text("Fine.\n", encoding="utf-8")
    (d / "locked" / "x.txt").write_text("Inner.\n", encoding="utf-8")
    with _lib(settings) as lib:
        assert len(lib.ingest("kb", [d]).added) == 2
        real_stat, locked = os.stat, str((d / "locked").resolve())

        def stat(path, *a, **k):  # what chmod 000 on the folder does for a user who is not root
            if str(path).startswith(locked + os.sep):
                raise PermissionError(13, "Permission denied", str(path))
            return real_stat(path, *a, **k)

        monkeypatch.setattr(os, "stat", stat)
        monkeypatch.setattr(os, "walk", lambda top, **k: iter([(str(d), [], ["ok.txt"])]))
        r = lib.ingest("kb", [d])
        monkeypatch.undo()
        assert not r.deleted and len(lib.documents("kb")) == 2
        assert [Path(f.path).name for f in r.failed] == ["x.txt"] and "Permission denied" in r.failed[0].error


def test_remove_takes_a_folder_and_refuses_a_path_not_in_the_base(settings, tmp_path):
    d = tmp_path / "r"
    (d / "sub").mkdir(parents=True)
    for name in ("a.txt", "sub/b.txt", "sub/c.txt"):
        (d / name).write_text(f"Notes of {name}.\n", encoding="utf-8")
    with _lib(settings) as lib:
        lib.ingest("kb", [d])
        with pytest.raises(ConfigError, match="not in this knowledge base"):
            lib.remove_files("kb", [str(d / "sub"), "/etc/passwd"])
        assert len(lib.documents("kb")) == 3  # nothing removed when one path is wrong
        assert _names(lib.remove_files("kb", [str(d / "sub")])) == {"b.txt", "c.txt"}
        assert _names(p.path for p in lib.documents("kb")) == {"a.txt"}


def test_watch_turns_a_deleted_folder_into_its_files_and_leaves_a_watched_root_alone(tmp_path):
    root = tmp_path / "watched"
    known = [str(root / "sub" / "a.txt"), str(root / "sub" / "b.txt"), str(root / "c.txt")]
    assert sorted(to_ingest([root / "sub"], known, [root])) == sorted(Path(k) for k in known[:2])
    assert to_ingest([root], known, [root]) == []  # the watched folder itself: unplugged, not deleted
    assert to_ingest([root / "c.txt"], known, [root]) == [root / "c.txt"]
    assert to_ingest([tmp_path / "tmp~"], known, [root]) == []


@contextmanager
def _held_by_another_process(settings, tmp_path):
    """A base "kb" of one document whose manifest another process holds (as an ingest or a watch
    does while it runs), until the block ends."""
    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.txt").write_text("Alpha notes.\n", encoding="utf-8")
    with _lib(settings) as lib:
        lib.ingest("kb", [d])
    code = ("import time; from pathlib import Path; from desktop_kb.ingest.manifest import Manifest; "
            f"m = Manifest(Path({str(settings.kbs_dir / 'kb' / 'manifest.sqlite')!r})); "
            "print('HOLDING', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "HOLDING"
        yield
    finally:
        holder.kill()
        holder.wait()


def test_a_base_another_process_uses_is_not_renamed(settings, tmp_path):
    with _held_by_another_process(settings, tmp_path), _lib(settings) as lib:
        with pytest.raises(KnowledgeBaseInUse):
            lib.rename_kb("kb", "kb2")  # it split the base and crashed the other process
        assert lib.list_kbs() == ["kb"]
    with _lib(settings) as lib:
        lib.rename_kb("kb", "kb2")
        assert lib.list_kbs() == ["kb2"] and len(lib.documents("kb2")) == 1


def test_reembed_with_a_file_not_there_or_an_embedder_that_fails_drops_nothing(settings, tmp_path):
    d = tmp_path / "usb"
    d.mkdir()
    for name in ("a.txt", "b.txt"):
        (d / name).write_text(f"Notes of {name}.\n", encoding="utf-8")
    with _lib(settings) as lib:
        lib.ingest("kb", [d], tags=["important"])
        d.rename(tmp_path / "unplugged")
        with pytest.raises(ConfigError, match="2 of the 2 files of 'kb' are not there"):
            lib.reembed("kb")  # it dropped every document and exited 0 ("Re-embedded 0 files")
        assert len(lib.documents("kb")) == 2 and lib.store.count("kb") == 2
        (tmp_path / "unplugged").rename(d)

    class Broken(HashEmbedder):
        def embed_query(self, text):
            raise ConfigError("the model file is damaged")

    with Library.open(settings, embedder=Broken(), reranker=None) as lib:
        with pytest.raises(ConfigError, match="damaged"):
            lib.reembed("kb")
        assert len(lib.documents("kb")) == 2
    with _lib(settings) as lib:
        assert len(lib.reembed("kb").added) == 2
        assert {r.tags for r in lib.documents("kb")} == {("important",)}


def test_kb_check_on_a_base_another_process_uses_says_in_use_not_damaged(settings, tmp_path):
    with _held_by_another_process(settings, tmp_path), _lib(settings) as lib:
        for run in (lib.check_kb, lib.repair_kb):  # "the manifest is damaged: … in use" before
            with pytest.raises(KnowledgeBaseInUse):
                run("kb")
    with _lib(settings) as lib:
        assert lib.check_kb("kb").ok and len(lib.documents("kb")) == 1
