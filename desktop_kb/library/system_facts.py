"""What this computer is, for ``desktop-kb doctor``: the CPU, its instruction sets as llama.cpp
sees them, memory and free space. Standard library only (and llama.cpp's own report), so it
works the same in the frozen Linux and Windows builds."""

from __future__ import annotations

import ctypes
import os
import platform
import re
import shutil
import sys
from pathlib import Path
from typing import Any

__all__ = ["cpu_name", "disk_free", "instruction_sets", "llama_cpu_backend", "memory", "system_facts"]

# the instruction sets that decide llama.cpp's speed, in the order its report gives them
_WANTED = ("SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "AVX_VNNI", "AVX512", "AVX512_VBMI", "AVX512_VNNI",
           "AVX512_BF16", "AMX_INT8", "NEON", "ARM_FMA", "SVE")


def cpu_name() -> str:
    if sys.platform.startswith("linux"):
        try:
            for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
        except OSError:
            pass
    if sys.platform == "win32":
        try:
            import winreg

            key = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"HARDWARE\DESCRIPTION\System\CentralProcessor\0")
            return str(winreg.QueryValueEx(key, "ProcessorNameString")[0]).strip()
        except OSError:
            pass
    return platform.processor() or platform.machine()


def instruction_sets() -> list[str]:
    """The instruction sets llama.cpp's CPU backend reports as present ("AVX2 = 1"); [] without it."""
    try:
        import llama_cpp

        from ..backends.llama_cpu import load_cpu_backend

        load_cpu_backend()
        info = llama_cpp.llama_print_system_info()
    except Exception:  # no llama.cpp here: the doctor says so elsewhere
        return []
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    present = {m.group(1) for m in re.finditer(r"([A-Z0-9_]+) = 1", text)}
    return [s for s in _WANTED if s in present]


class _MemoryStatus(ctypes.Structure):  # Windows' MEMORYSTATUSEX
    _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                ("ullTotalPageFile", ctypes.c_ulonglong), ("ullAvailPageFile", ctypes.c_ulonglong),
                ("ullTotalVirtual", ctypes.c_ulonglong), ("ullAvailVirtual", ctypes.c_ulonglong),
                ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]


def memory() -> tuple[float | None, float | None]:
    """(total, available) memory in GiB, None where it cannot be read."""
    gib = 1024 ** 3
    if sys.platform == "win32":
        status = _MemoryStatus()
        status.dwLength = ctypes.sizeof(_MemoryStatus)
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
            return status.ullTotalPhys / gib, status.ullAvailPhys / gib
        return None, None
    try:
        info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines()
                    if ":" in line)
        kib = lambda k: int(info[k].split()[0]) * 1024 / gib  # noqa: E731
        return kib("MemTotal"), kib("MemAvailable")
    except (OSError, KeyError, ValueError):
        pass
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        return pages * size / gib, None
    except (ValueError, OSError, AttributeError):
        return None, None


def disk_free(path: Path) -> float | None:
    """Free GiB on the disk holding ``path`` (its nearest existing parent)."""
    path = Path(path)
    while not path.exists() and path.parent != path:
        path = path.parent
    try:
        return shutil.disk_usage(path).free / 1024 ** 3
    except OSError:
        return None


def llama_cpu_backend() -> str:
    """The llama.cpp CPU build loaded for this CPU (backends/llama_cpu.py), or why there is none."""
    try:
        from ..backends.llama_cpu import load_cpu_backend

        return load_cpu_backend()
    except Exception as exc:
        return f"none ({type(exc).__name__}: {exc})"


def system_facts() -> dict[str, Any]:
    total, available = memory()
    return {"os": f"{platform.system()} {platform.release()}", "python": platform.python_version(),
            "frozen": bool(getattr(sys, "frozen", False)), "cpu": cpu_name(), "cores": os.cpu_count(),
            "instruction_sets": instruction_sets(), "llama_cpu_backend": llama_cpu_backend(),
            "ram_gib": round(total, 1) if total else None,
            "ram_available_gib": round(available, 1) if available else None}
