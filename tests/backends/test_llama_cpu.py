"""The llama.cpp CPU backend: a shippable wheel (``DESKTOP_KB_LLAMA_BUILD=all``: packaging and
CI) carries one per instruction-set level and the best one this CPU runs is loaded; a developer's
host build (the default) has its one backend built in and nothing is loaded. Each case runs in a
fresh process: a backend, once registered with llama.cpp, stays for the life of the process."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_kb.backends.llama_cpu import BUILT_IN, ENV, cpu_variants

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python missing")

PROBE = """
import json, sys
from desktop_kb.backends.llama_cpu import lib_dir, _score, cpu_variants, load_cpu_backend, _ggml
from desktop_kb.errors import ModelError
try:
    name = load_cpu_backend()
except ModelError as exc:
    print(json.dumps({"error": exc.message, "hint": exc.hint}))
    sys.exit(0)
scores = {n: _score(p) for n, p in cpu_variants(lib_dir()).items()}
print(json.dumps({"name": name, "again": load_cpu_backend(), "scores": scores,
                  "registered": _ggml().ggml_backend_reg_count()}))
"""


def _probe(**env: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                          env={**{k: v for k, v in os.environ.items() if k != ENV}, **env})
    assert proc.returncode == 0, proc.stderr
    assert "load_backend" not in proc.stderr  # llama.cpp's INFO line is kept quiet
    return json.loads(proc.stdout)


def _lib() -> Path:
    import llama_cpp

    return Path(llama_cpp.__file__).resolve().parent / "lib"


def _shippable() -> bool:
    """Whether the installed wheel is the all-variants build (else: built for this CPU only)."""
    return bool(cpu_variants(_lib()))


def test_variants_are_named_by_their_file(tmp_path: Path) -> None:
    for name in ("libggml-cpu-haswell.so", "libggml-cpu-zen4.so", "libggml-base.so", "libggml-cpu.so.0"):
        (tmp_path / name).write_bytes(b"")
    if sys.platform != "win32":
        assert cpu_variants(tmp_path) == {"haswell": tmp_path / "libggml-cpu-haswell.so",
                                          "zen4": tmp_path / "libggml-cpu-zen4.so"}
    assert cpu_variants(tmp_path / "missing") == {}


@needs_llama
def test_a_shippable_wheel_has_cpu_backends_for_each_instruction_set_level() -> None:
    """DESKTOP_KB_LLAMA_BUILD=all builds GGML_CPU_ALL_VARIANTS (CI sets it); a host build has none."""
    if not _shippable():
        pytest.skip("host-only llama.cpp build (DESKTOP_KB_LLAMA_BUILD=host); CI builds all variants")
    shipped = set(cpu_variants(_lib()))
    assert {"x64", "haswell", "alderlake", "skylakex", "icelake", "zen4"} <= shipped


@needs_llama
def test_the_best_backend_this_cpu_runs_is_loaded_once() -> None:
    out = _probe()
    scores = out["scores"]
    assert out["again"] == out["name"]
    assert out["registered"] == 1  # llama.cpp's own registry holds it (not a second copy of ggml)
    if _shippable():
        assert out["name"] != BUILT_IN
        assert scores[out["name"]] == max(scores.values()) > 0
    else:  # the host build: its one backend is compiled in, nothing to choose or load
        assert out["name"] == BUILT_IN and scores == {}


@needs_llama
def test_a_variant_can_be_chosen_by_hand_for_measurements() -> None:
    if _shippable():
        assert _probe(**{ENV: "x64"})["name"] == "x64"  # the baseline runs on every x86-64 CPU
        out = _probe(**{ENV: "no-such-cpu"})
        assert "no-such-cpu" in out["error"] and "haswell" in out["hint"]
    else:  # a host build has no variants: the choice cannot apply and is not an error
        assert _probe(**{ENV: "x64"})["name"] == BUILT_IN


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_a_model_runs_on_the_loaded_backend(shipped_llm: Path) -> None:
    script = (
        "from desktop_kb.backends.llm_llamacpp import LlamaCppGenerator\n"
        f"g = LlamaCppGenerator({str(shipped_llm)!r}, 'm', n_ctx=512)\n"
        "out = g.chat([{'role': 'user', 'content': 'Say OK.'}], max_tokens=2)\n"
        "print(g.cpu, bool(out.strip()))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != ENV})
    assert proc.returncode == 0, proc.stderr
    cpu, answered = proc.stdout.split()
    assert answered == "True"
    assert cpu in cpu_variants(_lib()) if _shippable() else cpu == BUILT_IN
