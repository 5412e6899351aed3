#!/usr/bin/env bash
# Build desktop-kb for macOS: dist/desktop-kb.app (PyInstaller) inside a .dmg (hdiutil).
#
#   packaging/build-macos.sh [--skip-setup] [--no-dmg] [--clean]
#
# NOT RUN on the development machine (Linux); written to mirror packaging/build.sh. Needs Xcode
# command-line tools (clang, cmake via `brew install cmake` if missing) and Python 3.11/3.12 from
# python.org or Homebrew. Build on the architecture you ship: arm64 (Apple silicon) or x86_64.
#
# Produces
#   dist/desktop-kb.app                                   main program desktop-kb-gui; the CLI is
#                                                         desktop-kb.app/Contents/MacOS/desktop-kb
#   dist/desktop-kb-<version>-macos-<arch>.dmg            the .app and an /Applications link
#
# Signing (optional): DESKTOP_KB_CODESIGN_IDENTITY="Developer ID Application: …" signs the app
# (otherwise PyInstaller signs it ad hoc, and Gatekeeper asks the user to right-click → Open once);
# NOTARY_PROFILE=<notarytool keychain profile> additionally notarizes and staples the .dmg.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

skip_setup=0 dmg=1 clean=()
for arg in "$@"; do
  case "$arg" in
    --skip-setup) skip_setup=1 ;;
    --no-dmg) dmg=0 ;;
    --clean) clean=(--clean) ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "build-macos.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
[ "$(uname -s)" = Darwin ] || { echo "build-macos.sh: run this on macOS" >&2; exit 2; }

ARCH="$(uname -m)"  # arm64 | x86_64
PY=.venv/bin/python
LLAMA_VERSION="0.3.36"
PYINSTALLER_VERSION="${PYINSTALLER_VERSION:-6.22.3}"
export MACOSX_DEPLOYMENT_TARGET="${MACOSX_DEPLOYMENT_TARGET:-11.0}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# Portable llama.cpp (never -march=native / -mcpu=native): GGML_NATIVE=OFF.
#  arm64: the Metal GPU backend with its shader library embedded (every Apple-silicon Mac has Metal).
#  x86_64: CPU only, AVX2/FMA/F16C baseline (Haswell, 2013+), like the Linux and Windows builds.
if [ -z "${CMAKE_ARGS:-}" ]; then
  if [ "$ARCH" = arm64 ]; then
    CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON"
  else
    CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_METAL=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  fi
fi
export CMAKE_ARGS

step() { printf '\n[build] %s\n' "$*"; }

if [ "$skip_setup" = 0 ]; then
  step "setting up .venv ($ARCH; CMAKE_ARGS=$CMAKE_ARGS)"
  [ -x "$PY" ] || "${PYTHON:-python3}" -m venv .venv
  "$PY" -m pip install -q --upgrade pip wheel
  WHEELS="${DESKTOP_KB_WHEEL_CACHE:-$HOME/Library/Caches/desktop-kb/wheels}"
  mkdir -p "$WHEELS"
  if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*"$ARCH"*.whl >/dev/null 2>&1; then
    step "compiling llama-cpp-python $LLAMA_VERSION (once)"
    "$PY" -m pip wheel --no-deps -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
  fi
  "$PY" -m pip install -q --find-links "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
  # No [st] extra: torch is not bundled (the sentence-transformers backends stay optional).
  "$PY" -m pip install -q -e ".[llm,models,gui,fastembed]"
fi
[ -x "$PY" ] || { echo "build-macos.sh: $PY is missing; run without --skip-setup" >&2; exit 1; }
if ! "$PY" -c "import PyInstaller, sys; sys.exit(PyInstaller.__version__ != '$PYINSTALLER_VERSION')" 2>/dev/null; then
  "$PY" -m pip install -q "pyinstaller==$PYINSTALLER_VERSION"
fi

step "checking the bundle's ingredients"
"$PY" packaging/check_ingredients.py --load-embedder
"$PY" packaging/make_icons.py
"$PY" -m desktop_kb models install >/dev/null

step "PyInstaller (.app; one folder inside)"
"$PY" -m PyInstaller --noconfirm "${clean[@]}" --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" packaging/desktop-kb.spec
APP="$ROOT/dist/desktop-kb.app"
[ -d "$APP" ] || { echo "build-macos.sh: $APP was not produced" >&2; exit 1; }

step "smoke check of the frozen CLI inside the .app"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$APP/Contents/MacOS/desktop-kb" --data-dir "$tmp/data" models status
echo "[build] $APP: $(du -sm "$APP" | cut -f1) MB"

if [ "$dmg" = 1 ]; then
  version=$("$PY" -c "import desktop_kb; print(desktop_kb.__version__)")
  out="$ROOT/dist/desktop-kb-${version}-macos-${ARCH}.dmg"
  step "hdiutil: $out"
  stage="$tmp/dmg"
  mkdir -p "$stage"
  ditto "$APP" "$stage/desktop-kb.app"  # ditto keeps symlinks, extended attributes and signatures
  ln -s /Applications "$stage/Applications"
  rm -f "$out"
  hdiutil create -volname "desktop-kb" -srcfolder "$stage" -fs HFS+ -format UDZO -imagekey zlib-level=6 -ov "$out"
  if [ -n "${DESKTOP_KB_CODESIGN_IDENTITY:-}" ]; then
    codesign --sign "$DESKTOP_KB_CODESIGN_IDENTITY" --timestamp "$out"
    if [ -n "${NOTARY_PROFILE:-}" ]; then
      xcrun notarytool submit "$out" --keychain-profile "$NOTARY_PROFILE" --wait
      xcrun stapler staple "$out"
    fi
  fi
  echo "[build] $out: $(du -sm "$out" | cut -f1) MB"
fi
step "done: open $APP (first start of an unsigned build: right-click → Open)"
