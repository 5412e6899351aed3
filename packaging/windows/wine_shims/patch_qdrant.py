"""TEST-ONLY (wine_smoke.sh): build kernelwi.dll and point an installed qdrant_edge.pyd at it.

    python patch_qdrant.py INSTALLED_QDRANT_EDGE_PYD SYSTEM32_DIR

Reads the pyd's imports from the lowercase "kernel32.dll" (objdump), writes a .def forwarding each
to kernel32 except SetFileInformationByHandle (file_allocation.c), links kernelwi.dll into the Wine
prefix's system32 with mingw-w64, and renames that one import's DLL name in the pyd (same length).
Only ever run on the copy installed into the throwaway test prefix; never on a build output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OLD, NEW = b"kernel32.dll\x00", b"kernelwi.dll\x00"


def imports(pyd: Path) -> list[str]:
    out = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(pyd)], capture_output=True, text=True,
                         check=True).stdout
    names, inside = [], False
    for line in out.splitlines():
        if "DLL Name:" in line:
            inside = line.split("DLL Name:")[1].strip() in ("kernel32.dll", "kernelwi.dll")
        elif inside and line.strip() and line.split()[-1].isidentifier() and line.split()[0] != "vma:":
            names.append(line.split()[-1])
    return [n for n in dict.fromkeys(names) if n not in ("Hint/Ord", "Name")]


def main(pyd: Path, system32: Path) -> None:
    names = imports(pyd)
    if "SetFileInformationByHandle" not in names:
        raise SystemExit(f"{pyd}: no SetFileInformationByHandle import from kernel32.dll")
    lines = ["LIBRARY kernelwi.dll", "EXPORTS"]
    for n in names:
        lines.append(f"  {n}=ShimSetFileInformationByHandle" if n == "SetFileInformationByHandle"
                     else f"  {n}=kernel32.{n}")
    build = system32 / "kernelwi.def"
    build.write_text("\n".join(lines) + "\n")
    subprocess.run(["x86_64-w64-mingw32-gcc", "-O2", "-shared", "-o", str(system32 / "kernelwi.dll"),
                    str(HERE / "file_allocation.c"), str(build)], check=True)
    build.unlink()
    data = pyd.read_bytes()
    if data.count(OLD) == 1:
        pyd.write_bytes(data.replace(OLD, NEW))
    elif data.count(NEW) != 1:
        raise SystemExit(f"{pyd}: expected one lowercase kernel32.dll import name")
    print(f"patched {pyd.name}: {len(names)} kernel32 imports forwarded, SetFileInformationByHandle shimmed")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
