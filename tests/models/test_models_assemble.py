"""GGUF assembly from numbered part packages."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from desktop_kb.errors import Cancelled, ModelError, ModelNotInstalled
from desktop_kb.models import assemble
from desktop_kb.models.assemble import assemble_gguf, locate_parts, sidecar_path, verify_gguf
from desktop_kb.progress import CancelToken

PART_BODIES = [b"GGUF" + b"\x03\x00\x00\x00" + b"A" * 1000, b"B" * 777, b"C" * 5]


@pytest.fixture()
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    parts = []
    for i, body in enumerate(PART_BODIES, start=1):
        p = tmp_path / "site" / f"fake_model_part{i}" / "data" / f"part{i:02d}.bin"
        p.parent.mkdir(parents=True)
        p.write_bytes(body)
        parts.append(p)
    calls: list[tuple[str, int]] = []

    def fake_locate(prefix: str, n: int) -> list[Path]:
        calls.append((prefix, n))
        assert prefix == "fake_model"
        return parts[:n]

    monkeypatch.setattr(assemble, "locate_parts", fake_locate)
    fake_locate.calls = calls  # type: ignore[attr-defined]
    return parts


def _whole() -> bytes:
    return b"".join(PART_BODIES)


def test_concatenates_in_order_and_writes_sidecar(fake_parts: list[Path], tmp_path: Path) -> None:
    dest = tmp_path / "models" / "m.gguf"
    seen: list[tuple[int, int]] = []
    out = assemble_gguf(
        "fake_model", 3, dest, expected_size=len(_whole()),
        expected_sha256=hashlib.sha256(_whole()).hexdigest(), on_progress=lambda d, t: seen.append((d, t)),
    )
    assert out == dest
    assert dest.read_bytes() == _whole()
    meta = json.loads(sidecar_path(dest).read_text())
    assert meta["size"] == len(_whole()) and meta["sha256"] == hashlib.sha256(_whole()).hexdigest()
    assert seen[-1] == (len(_whole()), len(_whole()))
    assert [p.name for p in dest.parent.iterdir()] and not list(dest.parent.glob("*.tmp"))


def test_idempotent_second_run_does_not_rebuild(fake_parts: list[Path], tmp_path: Path) -> None:
    dest = tmp_path / "m.gguf"
    assemble_gguf("fake_model", 3, dest, expected_size=len(_whole()))
    mtime = dest.stat().st_mtime_ns
    calls_before = len(assemble.locate_parts.calls)  # type: ignore[attr-defined]
    assemble_gguf("fake_model", 3, dest, expected_size=len(_whole()))
    assert dest.stat().st_mtime_ns == mtime
    assert len(assemble.locate_parts.calls) == calls_before  # type: ignore[attr-defined]


def test_damaged_existing_file_is_rebuilt(fake_parts: list[Path], tmp_path: Path) -> None:
    dest = tmp_path / "m.gguf"
    assemble_gguf("fake_model", 3, dest)
    with dest.open("r+b") as fh:  # same size, different tail
        fh.seek(len(_whole()) - 3)
        fh.write(b"zzz")
    with pytest.raises(ModelError, match="changed"):
        verify_gguf(dest)
    assemble_gguf("fake_model", 3, dest)
    assert dest.read_bytes() == _whole()


def test_missing_magic_is_rejected(fake_parts: list[Path], tmp_path: Path) -> None:
    fake_parts[0].write_bytes(b"XXXX" + PART_BODIES[0][4:])
    dest = tmp_path / "m.gguf"
    with pytest.raises(ModelError, match="GGUF magic"):
        assemble_gguf("fake_model", 3, dest)
    assert not dest.exists()


def test_wrong_total_size_is_rejected(fake_parts: list[Path], tmp_path: Path) -> None:
    fake_parts[1].write_bytes(PART_BODIES[1][:-10])  # a truncated part
    dest = tmp_path / "m.gguf"
    with pytest.raises(ModelError, match="add up to") as info:
        assemble_gguf("fake_model", 3, dest, expected_size=len(_whole()))
    assert "force-reinstall" in info.value.hint
    assert not dest.exists()


def test_corrupted_part_fails_the_checksum_and_leaves_no_file(fake_parts: list[Path], tmp_path: Path) -> None:
    fake_parts[2].write_bytes(b"X" * len(PART_BODIES[2]))  # same size, different bytes
    dest = tmp_path / "m.gguf"
    with pytest.raises(ModelError, match="SHA-256"):
        assemble_gguf(
            "fake_model", 3, dest, expected_size=len(_whole()), expected_sha256=hashlib.sha256(_whole()).hexdigest()
        )
    assert list(tmp_path.glob("m.gguf*")) == []


def test_cancel_leaves_nothing(fake_parts: list[Path], tmp_path: Path) -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        assemble_gguf("fake_model", 3, tmp_path / "m.gguf", cancel=token)
    assert list(tmp_path.glob("m.gguf*")) == []


def test_verify_rejects_wrong_size_and_non_gguf(tmp_path: Path) -> None:
    f = tmp_path / "x.gguf"
    f.write_bytes(b"GGUF1234")
    verify_gguf(f, expected_size=8)
    with pytest.raises(ModelError, match="expected 9"):
        verify_gguf(f, expected_size=9)
    f.write_bytes(b"PK\x03\x04zip")
    with pytest.raises(ModelError, match="not a GGUF"):
        verify_gguf(f)
    with pytest.raises(ModelNotInstalled):
        verify_gguf(tmp_path / "absent.gguf")


def test_locate_parts_reports_missing_packages() -> None:
    with pytest.raises(ModelNotInstalled, match="not installed") as info:
        locate_parts("surely_no_such_model_pkg", 3)
    assert "surely-no-such-model-pkg-part1" in info.value.message


def test_locate_parts_finds_the_real_package_layout() -> None:
    from desktop_kb.models.registry import SHIPPED_LLMS

    shipped = SHIPPED_LLMS["qwen2.5-coder-0.5b-instruct-q4_k_m"]
    if importlib.util.find_spec(f"{shipped.package_prefix}_part1") is None:
        pytest.skip("0.5B model packages not installed")
    parts = locate_parts(shipped.package_prefix, shipped.n_parts)
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, shipped.n_parts + 1)]
    assert sum(p.stat().st_size for p in parts) == shipped.size


@pytest.mark.slow
def test_real_assembly_of_the_small_model(tmp_path: Path) -> None:
    from desktop_kb.models.install import install_shipped
    from desktop_kb.models.registry import SHIPPED_LLMS
    from desktop_kb.settings import Settings

    model_id = "qwen2.5-coder-0.5b-instruct-q4_k_m"
    shipped = SHIPPED_LLMS[model_id]
    if importlib.util.find_spec(f"{shipped.package_prefix}_part1") is None:
        pytest.skip("0.5B model packages not installed")
    settings = Settings(data_dir=tmp_path)
    (path,) = install_shipped(settings, (model_id,))
    assert path == settings.models_dir / shipped.filename and path.is_relative_to(tmp_path)
    assert path.stat().st_size == shipped.size
    with path.open("rb") as fh:
        assert fh.read(4) == b"GGUF"
    verify_gguf(path, expected_sha256=shipped.sha256, full=True)
    assert install_shipped(settings, (model_id,)) == [path]  # idempotent
