"""Free-space checks and the one disk-full error (desktop_kb.diskspace): the measures, the message,
and which failures count as a full disk."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from desktop_kb import diskspace
from desktop_kb.errors import DiskFull, StoreError, exit_code, human_size, user_message


def test_the_message_names_the_folder_the_space_free_and_needed(tmp_path: Path) -> None:
    with pytest.raises(DiskFull) as err:
        diskspace.ensure_free(tmp_path, diskspace.free_bytes(tmp_path) + (5 << 30), "to add a.pdf")
    message, hint = user_message(err.value)
    assert str(tmp_path) in message and " free, " in message and "needed to add a.pdf" in message
    assert "Free some space" in hint and exit_code(err.value) == 5
    assert err.value.needed - err.value.free >= 5 << 30
    assert human_size(7_900_000) == "7.5 MB" and human_size(3 << 30) == "3.0 GB" and human_size(12) == "12 bytes"
    diskspace.ensure_free(tmp_path, 1, "to add a.pdf")  # room: no error


def test_free_space_of_a_folder_not_yet_made_is_its_disks(tmp_path: Path) -> None:
    assert diskspace.free_bytes(tmp_path / "a" / "b" / "c") == diskspace.free_bytes(tmp_path) > 0


def test_store_headroom_counts_what_sparse_files_can_still_take(tmp_path: Path) -> None:
    with (tmp_path / "page_0.dat").open("wb") as fh:
        fh.truncate(8 << 20)  # a mapped file as the engine makes it: 8 MB long, no disk used
    (tmp_path / "data.bin").write_bytes(b"x" * 100_000)  # written: nothing more to take
    headroom = diskspace.store_headroom(tmp_path)
    assert (8 << 20) - (64 << 10) <= headroom <= 8 << 20
    assert diskspace.store_need(tmp_path, 1000) == headroom + 4 * 1000 + diskspace.MARGIN
    assert diskspace.store_need(tmp_path / "absent", 0) == diskspace.FRESH_STORE + diskspace.MARGIN
    with (tmp_path / "big.dat").open("wb") as fh:
        fh.truncate(4 << 30)
    assert diskspace.store_headroom(tmp_path) == diskspace.STORE_HEADROOM_CAP


def test_disk_full_is_told_by_type_and_code_or_by_the_space_left(tmp_path: Path) -> None:
    assert isinstance(diskspace.disk_full(OSError(errno.ENOSPC, "No space left on device"), tmp_path), DiskFull)
    assert isinstance(diskspace.disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"), tmp_path), DiskFull)
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL  # what sqlite3 sets on SQLITE_FULL
    assert isinstance(diskspace.disk_full(full, tmp_path), DiskFull)
    # other errors are a full disk only when the disk is now short of what the write needed
    engine = Exception("Service internal error: flush failed")
    assert diskspace.disk_full(engine, tmp_path, needed=1) is None
    assert diskspace.disk_full(OSError(errno.EACCES, "Permission denied"), tmp_path) is None
    short = diskspace.disk_full(engine, tmp_path, needed=diskspace.free_bytes(tmp_path) + (1 << 40))
    assert isinstance(short, DiskFull) and short.needed > short.free
    with pytest.raises(DiskFull) as err, diskspace.guard(tmp_path, what="to save x"):
        raise OSError(errno.ENOSPC, "No space left on device")
    assert isinstance(err.value.__cause__, OSError) and "to save x" in err.value.message
    with pytest.raises(StoreError), diskspace.guard(tmp_path):
        raise StoreError("not about space")


def test_an_atomic_write_on_a_full_disk_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "settings.json"
    diskspace.write_text_atomic(path, '{"a": 1}')
    assert path.read_text() == '{"a": 1}'

    def no_space(self: Path, data: bytes) -> int:
        self.open("wb").close()  # the file is created, then the disk runs out
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", no_space)
    with pytest.raises(DiskFull):
        diskspace.write_text_atomic(path, '{"a": 2}')
    assert path.read_text() == '{"a": 1}' and sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    monkeypatch.setattr(diskspace, "free_bytes", lambda _p: 1000)  # refused before anything is written
    with pytest.raises(DiskFull):
        diskspace.write_text_atomic(path, '{"a": 3}')
    assert path.read_text() == '{"a": 1}'
