"""Work-arounds for bugs in the pinned Qt bindings, applied once when ``desktop_kb.gui`` is imported.

PySide6 6.12.0 on CPython 3.11: ``SignalInstance.emit()`` returns ``True`` without taking a
reference (and a failed ``disconnect()`` does the same with ``False``), so every emit from Python
drops one reference to ``True``. After a few hundred emits (one per streamed token) CPython aborts
with "Fatal Python error: bool_dealloc: deallocating True or False". On CPython ≥ 3.12 the bools are
immortal and the bug is harmless. Here we detect the leak and, only when it is present, make the
two bools effectively immortal as 3.12 does, by adding a large constant to their reference counts.
"""

from __future__ import annotations

import sys

__all__ = ["BOOL_REFCOUNT_PATCHED", "emit_steals_bool_reference"]


def emit_steals_bool_reference() -> bool:
    """Whether ``Signal.emit()`` drops a reference to ``True`` (measured, not assumed)."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        ping = Signal()

    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(8):
        probe.ping.emit()
    return sys.getrefcount(True) < before - 4


def _immortalise_bools() -> bool:
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    if not emit_steals_bool_reference():
        return False
    import ctypes

    for obj in (True, False):
        # ob_refcnt is the first field of every CPython object (release builds)
        ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40
    return True


BOOL_REFCOUNT_PATCHED = _immortalise_bools()
