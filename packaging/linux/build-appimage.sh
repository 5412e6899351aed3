#!/usr/bin/env bash
# The AppImage and the .deb, both from the frozen app folder that packaging/build.sh made
# (dist/desktop-kb): one file to double-click, and a package the software centre installs.
#
#   packaging/linux/build-appimage.sh [--appimage-only | --deb-only]
#
# Produces
#   dist/desktop-kb-<version>-x86_64.AppImage   runtime (packaging/linux/appimage/runtime.c, static) +
#                                               SquashFS of the app folder + trailer; unpacks once
#                                               into ~/.local/share/desktop-kb/app/ and runs AppRun
#   dist/desktop-kb_<version>_amd64.deb         /opt/desktop-kb, /usr/bin/desktop-kb{,-gui},
#                                               the menu entry and icon; removal takes them away
# Needs (Debian): gcc, squashfs-tools, libsquashfuse-dev, zlib1g-dev, liblzma-dev, libzstd-dev,
# liblz4-dev, liblzo2-dev, dpkg-deb; and the xcb libraries Qt's X11 plugin needs, so that the
# frozen build bundles them (libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0, as .ci/run installs).
# Both carry the same models as the folder: no network at run time. What they take from the system
# is what every desktop has: glibc >= 2.36, libGL/libEGL and libxcb (AppImage's exclude list; the
# .deb depends on them).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
APP="$ROOT/dist/desktop-kb"
[ -x "$APP/desktop-kb" ] || { echo "build-appimage.sh: $APP is missing; run packaging/build.sh first" >&2; exit 1; }
version=$(.venv/bin/python -c "import desktop_kb; print(desktop_kb.__version__)")
want_appimage=1 want_deb=1
case "${1:-}" in
  --appimage-only) want_deb=0 ;;
  --deb-only) want_appimage=0 ;;
  "") ;;
  *) echo "build-appimage.sh: unknown option $1" >&2; exit 2 ;;
esac
work="$ROOT/build/linux-packages"
rm -rf "$work"
mkdir -p "$work"

if [ "$want_appimage" = 1 ]; then
  echo "[appimage] the runtime (static)"
  gcc -O2 -static -o "$work/runtime" packaging/linux/appimage/runtime.c \
    -lsquashfuse -lz -llzma -lzstd -llz4 -llzo2
  echo "[appimage] the AppDir"
  appdir="$work/AppDir"
  cp -al "$APP" "$appdir" 2>/dev/null || cp -a "$APP" "$appdir"
  rm -f "$appdir/install-desktop-entry.sh"  # the app itself offers the menu entry (APPIMAGE is set)
  install -m 0755 packaging/linux/appimage/AppRun "$appdir/AppRun"
  sed -e "s|^Exec=.*|Exec=desktop-kb-gui %F|" -e '/^TryExec=/d' resources/desktop-kb.desktop > "$appdir/desktop-kb.desktop"
  ln -sf desktop-kb.png "$appdir/.DirIcon"
  echo "[appimage] SquashFS (zstd)"
  SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null || date +%s)" \
    mksquashfs "$appdir" "$work/image.sqfs" -comp zstd -Xcompression-level 6 -all-root -noappend -quiet -no-progress
  out="$ROOT/dist/desktop-kb-${version}-x86_64.AppImage"
  python3 - "$work/runtime" "$work/image.sqfs" "$out" <<'PY'
import os, struct, sys
runtime, image, out = sys.argv[1:]
head = bytearray(open(runtime, "rb").read())
head[8:11] = b"AI\x02"  # AppImage type-2 magic, in the ELF header's padding
pad = (-len(head)) % 4096
offset = len(head) + pad
with open(out + ".part", "wb") as f, open(image, "rb") as img:
    f.write(head + b"\0" * pad)
    while block := img.read(1 << 24):
        f.write(block)
    f.write(b"DKBAPPIM" + struct.pack("<Q", offset))
os.chmod(out + ".part", 0o755)
os.replace(out + ".part", out)
PY
  (cd "$ROOT/dist" && sha256sum "$(basename "$out")" > "$(basename "$out").sha256")
  echo "[appimage] $out: $(du -m "$out" | cut -f1) MB"
fi

if [ "$want_deb" = 1 ]; then
  echo "[deb] staging"
  pkg="$work/deb"
  mkdir -p "$pkg/opt" "$pkg/usr/bin" "$pkg/usr/share/applications" "$pkg/usr/share/icons/hicolor/256x256/apps" "$pkg/DEBIAN"
  cp -al "$APP" "$pkg/opt/desktop-kb" 2>/dev/null || cp -a "$APP" "$pkg/opt/desktop-kb"
  rm -f "$pkg/opt/desktop-kb/install-desktop-entry.sh" "$pkg/opt/desktop-kb/desktop-kb.desktop" "$pkg/opt/desktop-kb/portable.txt"
  ln -s /opt/desktop-kb/desktop-kb "$pkg/usr/bin/desktop-kb"
  ln -s /opt/desktop-kb/desktop-kb-gui "$pkg/usr/bin/desktop-kb-gui"
  sed -e "s|^Exec=.*|Exec=/opt/desktop-kb/desktop-kb-gui %F|" -e "s|^TryExec=.*|TryExec=/opt/desktop-kb/desktop-kb-gui|" \
    resources/desktop-kb.desktop > "$pkg/usr/share/applications/desktop-kb.desktop"
  install -m 0644 resources/icons/desktop-kb.png "$pkg/usr/share/icons/hicolor/256x256/apps/desktop-kb.png"
  size_kb=$(du -sk "$pkg/opt" | cut -f1)
  cat > "$pkg/DEBIAN/control" <<CONTROL
Package: desktop-kb
Version: ${version}
Section: utils
Priority: optional
Architecture: amd64
Depends: libc6 (>= 2.36), libgl1, libegl1, libxcb1
Installed-Size: ${size_kb}
Maintainer: desktop-kb developers <desktop-kb@localhost>
Homepage: https://localhost/desktop-kb
Description: answers from your own documents, offline, with every claim cited
 An offline, private desktop app: add folders of PDFs, Word, PowerPoint, Excel,
 Markdown, text and scans, ask in English or Chinese, and get answers whose every
 claim cites the passage that says it. The models are inside the package; nothing
 leaves the machine.
CONTROL
  for script in postinst postrm; do
    cat > "$pkg/DEBIAN/$script" <<'SCRIPT'
#!/bin/sh
set -e
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q /usr/share/applications || true; fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q /usr/share/icons/hicolor || true; fi
SCRIPT
    chmod 0755 "$pkg/DEBIAN/$script"
  done
  deb="$ROOT/dist/desktop-kb_${version}_amd64.deb"
  echo "[deb] dpkg-deb (zstd)"
  dpkg-deb --root-owner-group -Zzstd -z6 --build "$pkg" "$deb" >/dev/null
  (cd "$ROOT/dist" && sha256sum "$(basename "$deb")" > "$(basename "$deb").sha256")
  echo "[deb] $deb: $(du -m "$deb" | cut -f1) MB"
fi
