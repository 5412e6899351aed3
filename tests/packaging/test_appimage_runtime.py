"""The AppImage runtime (packaging/linux/appimage/runtime.c) on a tiny app folder: it unpacks the
image once into the data folder (never half: an interrupted unpack is not used), runs AppRun with
the arguments and APPIMAGE/APPDIR set, starts at once the next time, and a new version's first
start removes the old copy. Needs gcc, mksquashfs and Debian's libsquashfuse-dev (.ci/run installs
them)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBS = ["-lsquashfuse", "-lz", "-llzma", "-lzstd", "-llz4", "-llzo2"]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not shutil.which("gcc") or not shutil.which("mksquashfs")
    or not Path("/usr/include/squashfuse/squashfuse.h").exists(),
    reason="needs gcc, squashfs-tools and libsquashfuse-dev (.ci/run installs them)")


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rt") / "runtime"
    subprocess.run(["gcc", "-O2", "-static", "-o", str(out), str(ROOT / "packaging/linux/appimage/runtime.c"), *LIBS],
                   check=True, capture_output=True)
    return out


def _appimage(runtime: Path, folder: Path, out: Path, version: str) -> Path:
    appdir = folder / f"AppDir-{version}"
    (appdir / "lib").mkdir(parents=True)
    (appdir / "AppRun").write_text('#!/bin/sh\necho "v=' + version + ' dir=$APPDIR image=$APPIMAGE args=$*"\n'
                                   'cat "$APPDIR/lib/data.txt"\n')
    (appdir / "AppRun").chmod(0o755)
    (appdir / "lib" / "data.txt").write_text(f"data {version}\n" * 1000)
    (appdir / "link").symlink_to("lib/data.txt")
    image = folder / f"{version}.sqfs"
    subprocess.run(["mksquashfs", str(appdir), str(image), "-comp", "zstd", "-all-root", "-noappend", "-quiet",
                    "-no-progress"], check=True, capture_output=True,
                   env={**os.environ, "SOURCE_DATE_EPOCH": str(1_700_000_000 + int(version))})
    head = bytearray(runtime.read_bytes())
    head[8:11] = b"AI\x02"
    pad = (-len(head)) % 4096
    out.write_bytes(bytes(head) + b"\0" * pad + image.read_bytes() + b"DKBAPPIM" + struct.pack("<Q", len(head) + pad))
    out.chmod(0o755)
    return out


def test_it_unpacks_once_into_the_data_folder_runs_apprun_and_replaces_old_versions(runtime, tmp_path):
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    image = _appimage(runtime, tmp_path, tmp_path / "desktop-kb.AppImage", "1")
    first = subprocess.run([str(image), "a", "b c"], capture_output=True, text=True, env=env, timeout=60)
    assert first.returncode == 0, first.stderr
    assert "unpacking" in first.stderr  # said once, the first time
    line = first.stdout.splitlines()[0]
    app = tmp_path / "home/.local/share/desktop-kb/app"
    (unpacked,) = list(app.iterdir())
    assert line == f"v=1 dir={unpacked} image={image} args=a b c"
    assert (unpacked / "link").is_symlink() and (unpacked / "lib/data.txt").read_text().startswith("data 1")
    again = subprocess.run([str(image)], capture_output=True, text=True, env=env, timeout=60)
    assert again.returncode == 0 and "unpacking" not in again.stderr  # no second unpack
    assert (image.read_bytes()[8:11]) == b"AI\x02"
    # an interrupted unpack of a new version is never used, and the new version replaces the old
    (app / "deadbeef-1.partial-123").mkdir()
    image2 = _appimage(runtime, tmp_path, tmp_path / "desktop-kb-2.AppImage", "2")
    new = subprocess.run([str(image2)], capture_output=True, text=True, env=env, timeout=60)
    assert new.returncode == 0 and new.stdout.startswith("v=2")
    assert [p.name for p in app.iterdir()] == [Path(new.stdout.split("dir=")[1].split()[0]).name]
    offset = subprocess.run([str(image2), "--appimage-offset"], capture_output=True, text=True, env=env)
    assert int(offset.stdout) % 4096 == 0


def test_a_damaged_image_is_an_error_not_a_crash(runtime, tmp_path):
    image = _appimage(runtime, tmp_path, tmp_path / "x.AppImage", "3")
    data = bytearray(image.read_bytes())
    offset = struct.unpack("<Q", bytes(data[-8:]))[0]
    image.write_bytes(bytes(data[:offset + 200]) + bytes(data[-16:]))  # the image cut short, trailer kept
    r = subprocess.run([str(image)], capture_output=True, text=True, env={"HOME": str(tmp_path / "h")}, timeout=60)
    assert r.returncode == 127 and "desktop-kb:" in r.stderr
    assert not any((tmp_path / "h/.local/share/desktop-kb/app").glob("*"))  # nothing half unpacked left
