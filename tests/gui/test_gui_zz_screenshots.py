"""The screenshot scenario runs the app's own event loop to the end (``app.exec()`` then quit),
after which Qt does not deliver the queued results of new windows' tasks in this process: so it
lives in the file that pytest runs last."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

pytestmark = pytest.mark.gui


def test_screenshot_scenario_saves_pngs(qtbot, tmp_path):
    from desktop_kb.gui.screenshot import run_screenshots

    out = tmp_path / "shots"
    assert run_screenshots(QApplication.instance(), out, data_dir=str(tmp_path / "none"), fake=True) == 0
    names = sorted(p.name for p in out.glob("*.png"))
    assert names == ["empty-kb.png", "first-run.png", "main-en.png", "main-zh.png", "pdf-page-view.png", "settings.png"]
    assert all(p.stat().st_size > 20_000 for p in out.glob("*.png"))
