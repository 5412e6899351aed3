"""The table of contents under each document in the app: expand, click a section, the viewer opens there."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop_kb.gui.toc_tree import NODE_ROLE

pytestmark = pytest.mark.gui

GUIDE = ("# Guide\n\nIntro text.\n\n## 1 Setup\n\nInstall the tool and restart.\n\n"
         "### 1.1 Linux\n\nUse the AppImage.\n\n## 2 Use\n\nOpen a folder and ask.\n")


def test_document_toc_tree_opens_the_section_in_the_viewer(qtbot, make_window, tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    win = make_window()
    with qtbot.waitSignal(win.documents_refreshed, timeout=30000):
        with qtbot.waitSignal(win.ingest_finished, timeout=30000):
            win.ingest_paths([str(docs)], kb="default")
    tree = win.kb_panel.docs
    qtbot.waitUntil(lambda: tree.topLevelItemCount() == 1 and tree.topLevelItem(0).childCount() == 1, timeout=5000)
    doc = tree.topLevelItem(0)
    doc.setExpanded(True)
    qtbot.waitUntil(lambda: doc.childCount() == 1 and doc.child(0).data(0, NODE_ROLE) is not None, timeout=5000)
    root = doc.child(0)
    assert root.text(0) == "Guide" and [root.child(i).text(0) for i in range(root.childCount())] == ["1 Setup", "2 Use"]
    assert root.child(0).child(0).text(0) == "1.1 Linux" and "tokens" in root.child(0).text(2)
    assert win.kb_panel.selected_paths() == []  # sections are not documents (remove/tag act on files)
    setup = root.child(0)
    root.setExpanded(True)
    tree.scrollToItem(setup)
    rect = tree.visualItemRect(setup)
    with qtbot.waitSignal(win.viewer_opened, timeout=5000) as opened:
        qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    cite = opened.args[0]
    assert win.viewer.isVisible() and win.viewer.title.text() == "guide.md"
    shown = win.viewer.highlighted_text()
    assert shown.startswith("## 1 Setup") and "AppImage" in shown and "Open a folder" not in shown
    assert cite.heading_path == ("1 Setup",)


def test_a_base_that_asks_for_it_is_summarised_after_adding_documents(qtbot, make_window, make_lib, tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    lib = make_lib()
    lib.create_kb("default")
    lib.manifest("default").set_meta(enrich=True)
    win = make_window(lib)
    with qtbot.waitSignal(win.enriching.finished, timeout=30000):
        win.ingest_paths([str(docs)], kb="default")
    assert len(lib.enrichments("default")) == 1
    tree = win.kb_panel.docs
    qtbot.waitUntil(lambda: tree.topLevelItemCount() == 1 and "Keywords:" in tree.topLevelItem(0).toolTip(0),
                    timeout=5000)
    summary = next(iter(lib.enrichments("default").values()))["summary"]
    assert summary in tree.topLevelItem(0).toolTip(0)
