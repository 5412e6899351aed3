"""The AppImage and the .deb, met the way a user meets them: in a clean Debian system made with
debootstrap (no Python, no build tools, no X libraries), as a fresh user, with no network.

    sudo python3 packaging/linux/verify_clean.py [--root /var/tmp/dkb-clean] [--json OUT]

Needs root (debootstrap, chroot, unshare -n) and, on the host, Xvfb (the X server the apps draw
on; it runs outside the clean system, which only sees its socket, so no X library comes from the
system under test). It makes the clean system once (``debootstrap --variant=minbase bookworm``),
then, each in its own copy of it:

* the .deb: ``dpkg -i`` it (no other package may be needed), then as the user ``alice``, offline:
  ``desktop-kb ingest`` a PDF and a scanned image, ``desktop-kb ask`` with a citation, the GUI
  started under Xvfb (a window shown and a screenshot taken); then ``dpkg -r``: nothing left;
* the AppImage: as ``alice``, offline: the same through ``--cli``, and the GUI by running the file.

Each run checks what changed on the system: for the .deb only its own files (``/opt/desktop-kb``,
``/usr/bin``, the menu entry and icon, dpkg's records) and the data folder; for the AppImage only
the data folder (its unpacked copy lives there too). Prints one JSON document (also to ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
QUESTION = "What is the printer code?"
SCAN_QUESTION = "Which room holds the spare keys?"
USER = "alice"
ALLOWED_DEB = ("/opt/desktop-kb", "/usr/bin/desktop-kb", "/usr/bin/desktop-kb-gui",
               "/usr/share/applications/desktop-kb.desktop", "/usr/share/icons/hicolor", "/var/lib/dpkg",
               "/var/log/dpkg.log", "/var/cache/debconf")
DATA = f"/home/{USER}/.local/share/desktop-kb"


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def deb_depends(deb: Path) -> tuple[str, ...]:
    """The packages the .deb's control file depends on (libc6 is in every system)."""
    r = run(["dpkg-deb", "-f", str(deb), "Depends"], check=True)
    names = [d.strip().split(" ")[0] for d in r.stdout.split(",") if d.strip()]
    return tuple(n for n in names if n != "libc6")


def make_root(base: Path) -> Path:
    if not (base / "usr" / "bin" / "dpkg").exists():
        base.parent.mkdir(parents=True, exist_ok=True)
        r = run(["debootstrap", "--variant=minbase", "bookworm", str(base), "http://deb.debian.org/debian"], timeout=3600)
        if r.returncode != 0:
            sys.exit(f"debootstrap failed: {r.stderr[-2000:]}")
    return base


def documents(folder: Path) -> None:
    """A text PDF and a scanned page (PNG) for the user to add."""
    sys.path.insert(0, str(ROOT / "tests"))
    from filemakers import make_pdf
    from PIL import Image, ImageDraw, ImageFont

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "office.pdf").write_bytes(make_pdf([["Office notes."], ["The printer code is 4711."]]))
    img = Image.new("L", (1654, 600), 255)
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(["Facilities notice", "The spare keys are kept in room B12."]):
        draw.text((120, 160 + i * 110), line, font=ImageFont.load_default(size=40), fill=0)
    img.save(folder / "keys-scan.png")


def snapshot(root: Path) -> set[str]:
    skip = {"/proc", "/sys", "/dev", "/tmp", "/run", "/var/tmp"}
    out: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = "/" + os.path.relpath(dirpath, root) if dirpath != str(root) else "/"
        dirnames[:] = [d for d in dirnames if os.path.join(rel, d).replace("//", "/") not in skip]
        for name in filenames + dirnames:
            out.add(os.path.join(rel, name).replace("//", "/"))
    return out


class Clean:
    """A copy of the clean system, with /proc, /dev and the X socket mounted while in use."""

    def __init__(self, base: Path, where: Path, deps: tuple[str, ...] = ()) -> None:
        if where.exists():
            shutil.rmtree(where)
        # cp -a keeps /dev's device nodes as nodes (a copy that reads /dev/full fills the disk)
        subprocess.run(["cp", "-a", str(base), str(where)], check=True)
        self.root = where
        self.mounts: list[Path] = []
        for src, dst in (("/proc", "proc"), ("/dev", "dev"), ("/tmp/.X11-unix", "tmp/.X11-unix")):
            target = where / dst
            target.mkdir(parents=True, exist_ok=True)
            kind = ["-t", "proc", "proc"] if src == "/proc" else ["--bind", src]
            subprocess.run(["mount", *kind, str(target)], check=True)
            self.mounts.append(target)
        run(["chroot", str(where), "useradd", "-m", "-s", "/bin/sh", USER], check=True)
        if deps:  # what the package depends on (or a desktop has), from Debian, as apt would
            shutil.copy("/etc/resolv.conf", where / "etc" / "resolv.conf")
            for cmd in (["apt-get", "update", "-qq"],
                        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *deps], ["apt-get", "clean"]):
                r = run(["chroot", str(where), *cmd], env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                        timeout=1800)
                if r.returncode != 0:
                    sys.exit(f"{' '.join(cmd)} in the clean system failed: {r.stderr[-2000:]}")
        self.before = snapshot(where)

    def as_user(self, *cmd: str, display: str = "", timeout: int = 900) -> subprocess.CompletedProcess[str]:
        """``cmd`` as the user, with no network (a new, empty network namespace)."""
        env = ["env", "-i", f"HOME=/home/{USER}", f"USER={USER}", "PATH=/usr/local/bin:/usr/bin:/bin",
               "LANG=C.UTF-8", "QT_QPA_PLATFORM=xcb" if display else "QT_QPA_PLATFORM=offscreen"]
        if display:
            env.append(f"DISPLAY={display}")
        return run(["unshare", "-n", "chroot", "--userspec", f"{USER}:{USER}", str(self.root), *env, *cmd],
                   timeout=timeout)

    def changed(self) -> list[str]:
        return sorted(snapshot(self.root) - self.before)

    def close(self) -> None:
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", str(m)], check=False)


def check_app(c: Clean, cli: list[str], gui: list[str], display: str, label: str) -> dict:
    """Ingest, ask, GUI: what the user sees, timed."""
    out: dict = {}
    t0 = time.monotonic()
    r = c.as_user(*cli, "ingest", "/tmp/dkb-docs", "--kb", label, "--json")
    out["ingest_s"] = round(time.monotonic() - t0, 1)
    assert r.returncode == 0, (label, "ingest", r.stdout[-2000:], r.stderr[-3000:])
    report = json.loads(r.stdout)
    out["ingested"] = len(report["added"])
    out["read_by_ocr"] = [Path(o["path"] if isinstance(o, dict) else o[0]).name for o in report.get("ocr", [])]
    for key, question, gold in (("answer", QUESTION, "4711"), ("scan_answer", SCAN_QUESTION, "B12")):
        t0 = time.monotonic()
        r = c.as_user(*cli, "ask", question, "--kb", label, "--json")
        assert r.returncode == 0, (label, "ask", r.stderr[-3000:])
        a = json.loads(r.stdout)
        out[key] = {"status": a["status"], "text": a["answer"], "citations": len(a["citations"]),
                    "seconds": round(time.monotonic() - t0, 1), "has_gold": gold in a["answer"]}
        assert a["status"] == "answered" and a["citations"] and gold in a["answer"], (label, question, a)
    shots = f"/tmp/dkb-shots-{label}"
    t0 = time.monotonic()
    r = c.as_user(*gui, "--screenshot", shots, "--fake-models", display=display, timeout=600)
    out["gui_s"] = round(time.monotonic() - t0, 1)
    pngs = sorted(p.name for p in (c.root / shots.lstrip("/")).glob("*.png"))
    assert r.returncode == 0 and pngs, (label, "gui", r.stdout[-1500:], r.stderr[-3000:])
    out["screenshots"] = pngs
    # a system without fonts draws boxes: the bundled fonts must have been found
    out["fonts_found"] = "No Chinese font found" not in r.stderr
    assert out["fonts_found"], (label, r.stderr[-2000:])
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path("/var/tmp/dkb-clean/base"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("verify_clean.py needs root (debootstrap, chroot, unshare -n)")
    deb = next(DIST.glob("desktop-kb_*_amd64.deb"))
    appimage = next(DIST.glob("desktop-kb-*-x86_64.AppImage"))
    base = make_root(args.root)
    xvfb = subprocess.Popen(["Xvfb", ":87", "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)
    result: dict = {"deb": str(deb.name), "appimage": str(appimage.name),
                    "deb_mb": deb.stat().st_size >> 20, "appimage_mb": appimage.stat().st_size >> 20,
                    "clean_system": {"python3": False, "gcc": False}}
    try:
        depends = deb_depends(deb)
        result["deb_depends"] = list(depends)
        for kind in ("deb", "appimage"):
            # the .deb's dependencies come from Debian (as the software centre fetches them); the
            # AppImage assumes the same few libraries every desktop has (AppImage's exclude list)
            c = Clean(base, args.root.parent / kind, depends)
            try:
                result["clean_system"] = {"python3": (c.root / "usr/bin/python3").exists(),
                                          "gcc": (c.root / "usr/bin/gcc").exists()}
                documents(c.root / "tmp" / "dkb-docs")
                if kind == "deb":
                    shutil.copy(deb, c.root / "tmp" / deb.name)
                    r = run(["chroot", str(c.root), "dpkg", "-i", f"/tmp/{deb.name}"])
                    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
                    result["deb_run"] = check_app(c, ["desktop-kb"], ["desktop-kb-gui"], ":87", "deb")
                    parents = {str(Path(a).parent) for a in ALLOWED_DEB} | {"/usr/share/icons/hicolor"}
                    extra = [p for p in c.changed()
                             if not p.startswith(ALLOWED_DEB) and not p.startswith(DATA) and p not in parents
                             and p not in (f"/home/{USER}/.local", f"/home/{USER}/.local/share")]
                    result["deb_run"]["outside"] = extra
                    r = run(["chroot", str(c.root), "dpkg", "-r", "desktop-kb"])
                    assert r.returncode == 0, r.stderr
                    left = [p for p in c.changed() if p.startswith(("/opt/desktop-kb", "/usr/bin/desktop-kb",
                                                                    "/usr/share/applications/desktop-kb"))]
                    result["deb_run"]["left_after_removal"] = left
                else:
                    target = c.root / "tmp" / appimage.name
                    shutil.copy(appimage, target)
                    os.chmod(target, 0o755)
                    t0 = time.monotonic()
                    r = c.as_user(f"/tmp/{appimage.name}", "--cli", "models", "status")
                    result["appimage_first_start_s"] = round(time.monotonic() - t0, 1)  # unpacks once
                    assert r.returncode == 0, r.stderr[-3000:]
                    t0 = time.monotonic()
                    r = c.as_user(f"/tmp/{appimage.name}", "--cli", "models", "status")
                    result["appimage_next_start_s"] = round(time.monotonic() - t0, 1)
                    result["appimage_run"] = check_app(c, [f"/tmp/{appimage.name}", "--cli"],
                                                       [f"/tmp/{appimage.name}"], ":87", "appimage")
                    extra = [p for p in c.changed() if not p.startswith(DATA)
                             and p not in (f"/home/{USER}/.local", f"/home/{USER}/.local/share")]
                    result["appimage_run"]["outside"] = extra
            finally:
                c.close()
    finally:
        xvfb.terminate()
    ok = (not result["clean_system"]["python3"] and not result["deb_run"]["outside"]
          and not result["deb_run"]["left_after_removal"] and not result["appimage_run"]["outside"])
    result["ok"] = ok
    text = json.dumps(result, ensure_ascii=False, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
