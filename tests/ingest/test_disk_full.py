"""A full disk stops a writer cleanly: committed work kept, one message naming the folder and the
space, the CLI exits 5 without a traceback, and nothing dies of a signal.

Two ways: a disk that "fills" part-way through a run (the free-space measure made to report
nothing left from a chosen moment: runs everywhere), and real small RAM disks (tmpfs, needs root:
CI runs as root), where before the check the store's memory-mapped writes ended the process with
SIGBUS."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_kb import diskspace
from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.errors import DiskFull
from desktop_kb.library.kb import Library
from desktop_kb.protocols import SearchFilter

HASH = {"models": {"embedder": {"backend": "hash", "id": "test/hash-embedder", "dim": 64}}}


def _folder(tmp_path: Path, n: int = 4) -> Path:
    d = tmp_path / "docs"
    d.mkdir(exist_ok=True)
    for i in range(n):
        (d / f"f{i}.md").write_text(f"# File {i}\n\nProject {i} starts in month {i + 1}. Budget {i * 10} euros.\n",
                                    encoding="utf-8")
    return d


class Disk:
    """The free-space measure, made to say "full" from a chosen moment."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = False
        real = diskspace.free_bytes
        monkeypatch.setattr(diskspace, "free_bytes", lambda p: 4096 if self.full else real(p))


def _consistent(lib: Library, kb: str) -> dict[str, set[str]]:
    """Every document of the manifest has its points and no point lacks a document."""
    docs = lib.manifest(kb).documents()
    points: dict[str, set[str]] = {}
    for r in lib.store.scroll(kb):
        points.setdefault(r.payload["path"], set()).add(r.payload["chunk_id"])
    assert set(points) == set(docs)
    for path, row in docs.items():
        assert len(points[path]) == row.chunks
    return points


def test_a_disk_filling_mid_ingest_stops_it_and_keeps_what_was_committed(settings, tmp_path, monkeypatch):
    d = _folder(tmp_path)
    disk = Disk(monkeypatch)

    def progress(p):  # the disk fills while the third file is embedded
        if p.files_done == 2 and p.stage == "embed":
            disk.full = True

    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        with pytest.raises(DiskFull) as err:
            lib.ingest("kb", [d], progress=progress)
        assert str(settings.data_dir) in err.value.message and "4.0 KB free" in err.value.message
        assert len(lib.manifest("kb").documents()) == 2
        assert len(_consistent(lib, "kb")) == 2
        assert not lib.manifest("kb").pending()
        assert lib.search("project", kbs=["kb"]) != []  # searching needs no space and works
        with pytest.raises(DiskFull):  # still full: refused before anything is read
            lib.ingest("kb", [d])
        disk.full = False  # space freed: the rerun completes
        report = lib.ingest("kb", [d])
        assert len(report.added) == 2 and len(report.unchanged) == 2 and not report.failed
        resumed = _consistent(lib, "kb")
    fresh_settings = settings.replace(data_dir=tmp_path / "fresh")
    with Library.open(fresh_settings, embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [d])
        assert _consistent(lib, "kb") == resumed  # equal to an uninterrupted run


def test_settings_export_and_import_on_a_full_disk(settings, tmp_path, monkeypatch):
    from desktop_kb.settings import load_settings, save_settings

    d = _folder(tmp_path, 2)
    disk = Disk(monkeypatch)
    save_settings(settings)
    before = settings.settings_file.read_text(encoding="utf-8")
    with Library.open(settings, embedder=HashEmbedder(), reranker=None) as lib:
        lib.ingest("kb", [d])
        out = tmp_path / "out"
        out.mkdir()
        disk.full = True
        with pytest.raises(DiskFull):
            save_settings(settings.replace(chunk=settings.chunk.__class__(size=300, overlap=30)))
        assert settings.settings_file.read_text(encoding="utf-8") == before
        with pytest.raises(DiskFull) as err:
            lib.export_kb("kb", out / "kb.zip")
        assert str(out) in err.value.message and list(out.iterdir()) == []  # no archive, no .part
        disk.full = False
        lib.export_kb("kb", out / "kb.zip")
        disk.full = True
        with pytest.raises(DiskFull):
            lib.import_kb(out / "kb.zip", as_name="copy")
        assert "copy" not in lib.list_kbs()
        disk.full = False
        lib.import_kb(out / "kb.zip", as_name="copy")
        assert lib.store.count("copy") == lib.store.count("kb") > 0
    assert load_settings(settings.data_dir).chunk == settings.chunk


def test_the_cli_says_it_and_exits_5(tmp_path, monkeypatch, capsys):
    from desktop_kb.cli import main

    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps(HASH))
    Disk(monkeypatch).full = True
    assert main(["--data-dir", str(data), "ingest", str(_folder(tmp_path)), "--kb", "k"]) == 5
    err = capsys.readouterr().err
    assert "Not enough free space in" in err and "Traceback" not in err


# -- real small disks ------------------------------------------------------------------------------
@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root on Linux (CI runs as root)")
    mnt = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    mounted: list[str] = []

    def mount(size: str) -> Path:
        if mounted:
            subprocess.run(["umount", str(mnt)], check=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True)
        if done.returncode != 0:  # a container without the right to mount (the faked-disk tests still run)
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
        mounted[:] = [size]
        return mnt

    mount.path = mnt  # type: ignore[attr-defined]
    try:
        yield mount  # type: ignore[misc]
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(mnt)], check=False)


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_kb", "--data-dir", str(data), *args],
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_real_small_and_nearly_full_disks_end_in_a_message_not_a_signal(tmpfs, tmp_path):
    docs = _folder(tmp_path, 3)
    mnt = tmpfs("8m")  # smaller than a new store's mapped files: SIGBUS before the check
    data = mnt / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps(HASH))
    proc = _cli(data, "ingest", str(docs), "--kb", "k")
    assert proc.returncode == 5, (proc.returncode, proc.stderr[-2000:])
    assert f"Not enough free space in {data}" in proc.stderr and "Traceback" not in proc.stderr

    mnt = tmpfs("300m")  # room for a store; then the disk is filled up to a little under its need
    data = mnt / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps(HASH))
    assert _cli(data, "ingest", str(docs), "--kb", "k").returncode == 0
    free = shutil.disk_usage(mnt).free
    subprocess.run(["fallocate", "-l", str(free - (64 << 20)), str(mnt / "filler")], check=True)
    (docs / "more.md").write_text("# More\n\nA file added when the disk is nearly full.\n", encoding="utf-8")
    proc = _cli(data, "ingest", str(docs), "--kb", "k")
    assert proc.returncode == 5, (proc.returncode, proc.stderr[-2000:])
    assert "Not enough free space in" in proc.stderr and "Traceback" not in proc.stderr
    # opening the store fills mapped files it left sparse, so a search is refused the same way
    proc = _cli(data, "search", "project", "--kb", "k")
    assert proc.returncode == 5 and "Not enough free space in" in proc.stderr, (proc.returncode, proc.stderr[-2000:])
    (mnt / "filler").unlink()
    proc = _cli(data, "search", "project", "--kb", "k")
    assert proc.returncode == 0 and "f0.md" in proc.stdout  # nothing was lost
    proc = _cli(data, "ingest", str(docs), "--kb", "k", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert len(report["added"]) == 1 and len(report["unchanged"]) == 3
    with Library.open(_settings_for(data), embedder=HashEmbedder(), reranker=None) as lib:
        _consistent(lib, "k")
        assert lib.store.count("k", SearchFilter(paths=(str(docs / "more.md"),))) == 1


def _settings_for(data: Path):
    from desktop_kb.settings import load_settings

    return load_settings(data)
