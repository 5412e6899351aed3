"""Which CPU build of llama.cpp runs the LLM: the best one this processor supports.

Most of an answer's time is the model reading its prompt (prefill), which is matrix arithmetic
whose speed depends on the instruction set it was compiled for. ``scripts/setup.sh`` builds
llama-cpp-python with ``GGML_BACKEND_DL`` and ``GGML_CPU_ALL_VARIANTS``: the wheel carries one CPU
backend per instruction-set level (``libggml-cpu-haswell.so``: AVX2; ``-alderlake``: AVX-VNNI;
``-skylakex``, ``-icelake``, ``-zen4``: AVX-512; …) and none built in, like llama.cpp's own release
builds. llama.cpp looks for them beside the Python executable and in the current folder, not in
the package's ``lib`` folder, so :func:`load_cpu_backend` loads the best one from there, once per
process, before the first model: each candidate's ``ggml_backend_score()`` says whether this CPU
can run it and how good it is (0 = it cannot). On 2 AMD EPYC cores the AVX-512 backend prefills
1.7–2 times as fast as the AVX2 one (docs/history/benchmarks-log.md, "Session 10").

A wheel built the old way has its one CPU backend built in; nothing is loaded then ("built-in").
``DESKTOP_KB_LLAMA_CPU=haswell`` (a variant's name) picks a variant by hand, for measurements.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path
from typing import Any

from ..errors import ModelError

__all__ = ["BUILT_IN", "ENV", "cpu_variants", "lib_dir", "load_cpu_backend"]

ENV = "DESKTOP_KB_LLAMA_CPU"
BUILT_IN = "built-in"

_lock = threading.Lock()
_loaded: str | None = None


def _affixes() -> tuple[str, str]:
    """How ggml names a backend module file on this platform: ``{prefix}ggml-cpu-NAME{ext}``."""
    return ("", ".dll") if sys.platform == "win32" else ("lib", ".so")


def lib_dir() -> Path:
    """The folder llama-cpp-python loaded its libraries from (``LLAMA_CPP_LIB_PATH`` or its own lib)."""
    import llama_cpp.llama_cpp as api

    base = getattr(api, "_base_path", None)
    return Path(base) if base else Path(api.__file__).resolve().parent / "lib"


def cpu_variants(folder: Path) -> dict[str, Path]:
    """The CPU backends shipped in ``folder``, by variant name (none: the backend is built in)."""
    prefix, ext = _affixes()
    head = f"{prefix}ggml-cpu-"
    return {p.name[len(head):-len(ext)]: p for p in sorted(folder.glob(f"{head}*{ext}"))}


def _close(lib: Any) -> None:
    import _ctypes

    closer = getattr(_ctypes, "FreeLibrary" if sys.platform == "win32" else "dlclose", None)
    if closer is not None:
        closer(lib._handle)


def _score(path: Path) -> int:
    """The variant's own verdict on this CPU (0: it cannot run here)."""
    try:
        lib = ctypes.CDLL(str(path))
    except OSError:
        return 0
    try:
        fn = getattr(lib, "ggml_backend_score", None)
        if fn is None:
            return 0
        fn.restype = ctypes.c_int
        return int(fn())
    finally:
        _close(lib)


def _ggml() -> Any:
    """The ggml library that llama.cpp itself uses (its backend registry is the one that counts).

    A wheel cannot hold symbolic links, so on Linux ``libggml.so`` and ``libggml.so.0`` are two
    copies of one file, and loading the former by path (as ``llama_cpp._ggml`` does) makes a
    second registry that llama.cpp never sees; by its soname, the copy already loaded with
    ``libllama`` is returned."""
    import llama_cpp.llama_cpp  # noqa: F401  (loads libllama, and with it its libggml)

    if sys.platform.startswith("linux"):
        lib = ctypes.CDLL("libggml.so.0")
    else:
        from llama_cpp import _ggml

        lib = _ggml.libggml
    lib.ggml_backend_reg_count.restype = ctypes.c_size_t
    lib.ggml_backend_load.restype = ctypes.c_void_p
    lib.ggml_backend_load.argtypes = [ctypes.c_char_p]
    return lib


def _load_quietly(ggml: Any, path: Path) -> bool:
    """Register the backend module at ``path``; llama.cpp's "loaded CPU backend from …" line is
    kept off stderr (llama-cpp-python prints llama.cpp's INFO lines until a model is loaded)."""
    import logging

    from llama_cpp._logger import logger

    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    try:
        return bool(ggml.ggml_backend_load(str(path).encode()))
    finally:
        logger.setLevel(level)


def load_cpu_backend() -> str:
    """Register the best CPU backend for this processor with llama.cpp (once per process) and
    name it: a variant such as ``"zen4"`` or ``"haswell"``, or ``"built-in"``."""
    global _loaded
    with _lock:
        if _loaded is not None:
            return _loaded
        ggml = _ggml()
        variants = cpu_variants(lib_dir())
        if ggml.ggml_backend_reg_count() > 0 or not variants:
            _loaded = BUILT_IN  # the CPU backend is compiled in (or another loader did this)
            return _loaded
        wanted = os.environ.get(ENV, "").strip()
        if wanted:
            if wanted not in variants:
                raise ModelError(f"{ENV}={wanted}: no such llama.cpp CPU backend.",
                                 f"Shipped: {', '.join(sorted(variants))}.")
            best = wanted if _score(variants[wanted]) > 0 else ""
        else:
            scores = {name: _score(path) for name, path in variants.items()}
            best = max(scores, key=lambda n: scores[n]) if any(scores.values()) else ""
        if not best or not _load_quietly(ggml, variants[best]):
            raise ModelError(
                "llama.cpp has no CPU backend that runs on this processor"
                + (f" ({wanted} was asked for)." if wanted else "."),
                "Reinstall desktop-kb; the answer generator needs at least an x86-64 or ARM64 CPU backend.",
            )
        _loaded = best
        return _loaded
