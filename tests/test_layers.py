"""The layering contract (pyproject's [tool.importlinter], docs/architecture.md): gui → cli → api →
library/eval → query → verify → ingest/store/models → backends → text → base, no import circles
between the modules of a package (training/ included), and the app never importing training. Run by import-linter over every import, lazy ones in
functions included."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(exe), "--no-cache"], cwd=cwd, capture_output=True, text=True,
                          env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"})


def test_the_package_keeps_its_layers_and_has_no_circles():
    out = _lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 kept, 0 broken" in out.stdout


def test_the_contract_catches_an_upward_import_and_a_circle(tmp_path):
    """The same contract over a copy of the package with two breaches added: the answer check
    reaching up into the query stages, two modules of verify importing each other, a circle in
    training/, and the app importing training."""
    copy = tmp_path / "desktop_kb"
    shutil.copytree(ROOT / "desktop_kb", copy, ignore=shutil.ignore_patterns("__pycache__", "resources"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(ROOT / "training", tmp_path / "training", ignore=shutil.ignore_patterns("__pycache__", ".cache"))
    with (tmp_path / "training" / "common.py").open("a", encoding="utf-8") as fh:  # a circle in training/
        fh.write("\n\ndef _breach() -> None:\n    from training import data  # noqa: F401\n")
    with (copy / "cli" / "common.py").open("a", encoding="utf-8") as fh:  # the app importing training
        fh.write("\n\ndef _breach2() -> None:\n    import training.data  # noqa: F401\n")
    with (copy / "verify" / "judge.py").open("a", encoding="utf-8") as fh:
        fh.write(textwrap.dedent("""
            def _breach() -> None:
                from ..query import prompts  # noqa: F401
                from . import answer_check  # noqa: F401
        """))
    out = _lint_imports(tmp_path)
    assert out.returncode == 1, out.stdout
    assert "0 kept, 3 broken" in out.stdout
    assert "No cycles are allowed in training" in out.stdout and "desktop_kb.cli.common -> training.data" in out.stdout
    assert "desktop_kb.verify.judge -> desktop_kb.query.prompts" in out.stdout
    assert ".judge -> .answer_check" in out.stdout
