"""A removal stays a removal: a file or folder removed from a base is recorded as excluded, and
re-scans of its folder (the app's start-up update, watch) keep it out until it is added again by
name or put back. The real store and manifest, a fake embedder (plumbing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.cli import main
from desktop_kb.errors import ConfigError
from desktop_kb.library.kb import Library


def _lib(settings) -> Library:
    return Library.open(settings, embedder=HashEmbedder(), reranker=None)


def _names(paths) -> set[str]:
    return {Path(p).name for p in paths}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    (d / "sub").mkdir(parents=True)
    (d / "it-faq.txt").write_text("Reset your password at the portal.\n", encoding="utf-8")
    (d / "travel.md").write_text("# Travel\n\nHotels up to 180 euros a night.\n", encoding="utf-8")
    (d / "sub" / "a.txt").write_text("The emu count is 3.\n", encoding="utf-8")
    (d / "sub" / "b.txt").write_text("The owl count is 5.\n", encoding="utf-8")
    return d


def test_a_removed_file_stays_out_of_later_scans_of_its_folder(settings, folder):
    with _lib(settings) as lib:
        lib.ingest("kb", [folder])
        lib.remove_files("kb", [str(folder / "it-faq.txt")])
        again = lib.ingest("kb", [folder])  # what the app's start-up update and watch do
        assert not again.added and not again.updated and _names(again.excluded) == {"it-faq.txt"}
        assert "it-faq.txt" not in _names(lib.manifest("kb").documents())
        assert lib.excluded("kb") == [str((folder / "it-faq.txt").resolve())]
        (folder / "it-faq.txt").write_text("Changed: reset it at the new portal.\n", encoding="utf-8")
        assert not lib.ingest("kb", [folder / "it-faq.txt"]).added  # a watch event for it: still out
    with _lib(settings) as lib:  # and after a restart
        assert not lib.ingest("kb", [folder]).added and lib.excluded("kb")


def test_a_removed_folder_stays_out_and_comes_back_when_put_back(settings, folder):
    with _lib(settings) as lib:
        lib.ingest("kb", [folder])
        assert _names(lib.remove_files("kb", [str(folder / "sub")])) == {"a.txt", "b.txt"}
        assert _names(lib.ingest("kb", [folder]).excluded) == {"a.txt", "b.txt"}
        report = lib.put_back("kb", [str(folder / "sub")])
        assert _names(report.added) == {"a.txt", "b.txt"} and lib.excluded("kb") == []
        with pytest.raises(ConfigError, match="not removed"):
            lib.put_back("kb", [str(folder / "travel.md")])


def test_adding_a_removed_file_by_name_brings_it_back(settings, folder):
    with _lib(settings) as lib:
        lib.ingest("kb", [folder])
        lib.remove_files("kb", [str(folder / "it-faq.txt")])
        lib.remove_files("kb", [str(folder / "sub")])
        # the user's own "Add folder…" of the folder holding them: what was removed stays removed
        assert not lib.ingest("kb", [folder], restore=True).added
        report = lib.ingest("kb", [folder / "it-faq.txt"], restore=True)  # the user's own "Add files…"
        assert _names(report.added) == {"it-faq.txt"}
        assert _names(lib.ingest("kb", [folder / "sub"], restore=True).added) == {"a.txt", "b.txt"}
        assert lib.excluded("kb") == []


def test_the_command_line_removes_lists_and_puts_back(folder, tmp_path, capsys):
    data = tmp_path / "cli-data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"models": {
        "embedder": {"id": "test/hash-embedder", "backend": "hash", "dim": 64},
        "reranker": {"id": "none", "backend": "none"}, "llm": {"id": "none", "backend": "none"}}}), encoding="utf-8")
    assert main(["--data-dir", str(data), "ingest", str(folder), "--kb", "kb"]) == 0
    capsys.readouterr()
    assert main(["--data-dir", str(data), "kb", "remove", "kb", str(folder / "it-faq.txt")]) == 0
    assert "Removed 1 file;" in capsys.readouterr().out  # one file, not "1 files"
    assert main(["--data-dir", str(data), "ingest", str(folder), "--kb", "kb", "--json"]) == 0
    assert _names(json.loads(capsys.readouterr().out)["excluded"]) == {"it-faq.txt"}  # a folder re-scan
    assert main(["--data-dir", str(data), "kb", "excluded", "kb", "--json"]) == 0
    assert _names(json.loads(capsys.readouterr().out)["excluded"]) == {"it-faq.txt"}
    assert main(["--data-dir", str(data), "kb", "put-back", "kb", str(folder / "it-faq.txt"), "--json"]) == 0
    assert _names(json.loads(capsys.readouterr().out)["added"]) == {"it-faq.txt"}
