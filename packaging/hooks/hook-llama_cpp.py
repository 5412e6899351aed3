# llama-cpp-python loads its shared libraries with ctypes from <package>/lib (llama_cpp/_ggml.py,
# llama_cpp/llama_cpp.py), so they must keep that relative location in the bundle. The wheel holds
# three copies of each Linux library (libX.so, libX.so.0, libX.so.0.y.z); the loader opens libX.so and
# the libraries reference each other by soname (libX.so.0, found through RUNPATH=$ORIGIN), so only
# those two names are needed.
import glob
import os
import sys

from PyInstaller.utils.hooks import get_package_paths

_, pkg_dir = get_package_paths("llama_cpp")
lib_dir = os.path.join(pkg_dir, "lib")
if sys.platform == "win32":
    patterns = ("*.dll",)
elif sys.platform == "darwin":
    patterns = ("*.dylib", "*.so", "*.metal")
else:
    patterns = ("*.so", "*.so.[0-9]")
binaries = []
datas = []
for pattern in patterns:
    for path in sorted(glob.glob(os.path.join(lib_dir, pattern))):
        if path.endswith(".metal"):  # Metal shader source (macOS, when not embedded in the library)
            datas.append((path, "llama_cpp/lib"))
        else:
            binaries.append((path, "llama_cpp/lib"))
if not binaries:
    raise SystemExit(f"hook-llama_cpp: no shared libraries found in {lib_dir}; is llama-cpp-python built?")
# The OpenAI-compatible server (fastapi, uvicorn…) is not used by desktop-kb.
excludedimports = ["llama_cpp.server"]
