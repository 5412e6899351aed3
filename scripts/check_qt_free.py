"""Fail if anything outside desktop_kb/gui imports Qt (the core must run headless)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "desktop_kb"
QT = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "qtpy")

bad = []
for path in ROOT.rglob("*.py"):
    if path.relative_to(ROOT).parts[0] == "gui":
        continue
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        bad += [f"{path}:{node.lineno}: imports {n}" for n in names if n.split(".")[0] in QT]
if bad:
    print("Qt imported outside desktop_kb/gui:\n" + "\n".join(bad))
    sys.exit(1)
print("core is Qt-free")
