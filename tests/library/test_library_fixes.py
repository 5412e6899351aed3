"""Bugs found when the library was used on real folders, each with the test that failed before."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.library.kb import Library
from desktop_kb.protocols import SearchFilter


def _lib(settings) -> Library:
    return Library.open(settings, embedder=HashEmbedder(), reranker=None)


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_renaming_one_base_leaves_the_others_usable(settings, tmp_path):
    a = _write(tmp_path / "a", "a.md", "# A\n\nAlpha invoices are due in May.\n")
    b = _write(tmp_path / "b", "b.md", "# B\n\nBeta contracts end in June.\n")
    with _lib(settings) as lib:
        lib.ingest("alpha", [a])
        lib.ingest("beta", [b])
        beta_manifest = lib.manifest("beta")
        lib.rename_kb("alpha", "gamma")
        assert lib.manifest("beta") is beta_manifest  # not dropped while its lock is held
        _write(b, "b2.md", "# B2\n\nBeta renewals start in July.\n")
        assert len(lib.ingest("beta", [b]).added) == 1
        assert lib.search("renewals", kbs=["beta"]) and lib.search("invoices", kbs=["gamma"])


def test_changed_chunk_settings_leave_no_old_chunks(settings, tmp_path):
    text = "# Policy\n\n" + " ".join(f"Rule {i}: receipts of type {i} are kept for {i} years." for i in range(60))
    d = _write(tmp_path / "d", "policy.md", text)
    with _lib(settings) as lib:
        lib.ingest("kb", [d])
        first = lib.store.count("kb")
    smaller = settings.replace(chunk=dataclasses.replace(settings.chunk, size=300, overlap=40))
    with _lib(smaller) as lib:
        report = lib.ingest("kb", [d])
        assert report.updated and report.chunks > first
        assert lib.store.count("kb") == report.chunks  # only the new chunks are left
        assert lib.store.count("kb", SearchFilter(paths=(str((d / "policy.md").resolve()),))) == report.chunks


def test_history_turns_zero_keeps_no_history(settings, tmp_path, scripted):
    d = _write(tmp_path / "d", "a.md", "# Leave\n\nStaff get 25 days of paid leave per year.\n")
    gen = scripted(answers=["Staff get 25 days of paid leave per year [1]."])
    s = settings.replace(query=dataclasses.replace(settings.query, history_turns=0))
    with Library.open(s, embedder=HashEmbedder(), reranker=None, generator=gen) as lib:
        lib.ingest("kb", [d])
        lib.ask("How many days of leave?", kbs=["kb"], history=[("What about the SECRET-EARLIER-TOPIC?", "x")])
    sent = " ".join(m["content"] for call in gen.calls for m in call["messages"])
    assert "SECRET-EARLIER-TOPIC" not in sent
