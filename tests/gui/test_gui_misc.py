"""Safe answer rendering, translations, Chinese fonts, window state, conversations store, and
the --screenshot scenario."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest
from PySide6.QtGui import QFont, QRawFont
from PySide6.QtWidgets import QApplication

from desktop_kb.gui import i18n
from desktop_kb.gui.conversations import Conversation, ConversationStore, Turn
from desktop_kb.gui.fonts import install_fonts
from desktop_kb.gui.markdown import markdown_to_html, parse_cite_href
from desktop_kb.types import Citation

pytestmark = pytest.mark.gui

GUI = Path(__file__).resolve().parents[2] / "desktop_kb" / "gui"


def test_markdown_escapes_html_and_links_citations():
    html = markdown_to_html('<script>alert(1)</script> Due **March 15** [1], see [2, 3] and [x](http://evil)\n'
                           "- item `<i>code</i>` [4]", valid_citations={1, 2, 3})
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<a href="cite:1"' in html and "&nbsp;[1]&nbsp;</a>" in html
    assert '<a href="cite:2"' in html and '<a href="cite:3"' in html
    assert "<b>March 15</b>" in html
    assert "http://evil" not in html and "href=\"http" not in html  # links from the model are not clickable
    assert "<code>&lt;i&gt;code&lt;/i&gt;</code>" in html
    assert "<sup>[4]</sup>" in html and 'href="cite:4"' not in html  # not a real citation: no link
    assert parse_cite_href("cite:3#2") == (3, 2) and parse_cite_href("cite:1") == (1, None)
    assert parse_cite_href("https://x") is None


def _marked_strings() -> list[tuple[str, str]]:
    out = []
    for path in sorted(GUI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("tr", "N_") and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                out.append((path.name, node.args[0].value))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr_n":  # tr_n(one, many, n, …)
                out += [(path.name, a.value) for a in node.args[:2] if isinstance(a, ast.Constant)]
    return out


def test_every_ui_string_has_a_chinese_translation_with_the_same_placeholders():
    strings = _marked_strings()
    assert len(strings) > 100
    missing = [(f, s) for f, s in strings if s not in i18n.ZH]
    assert missing == []
    fields = lambda t: sorted(n for _, n, _, _ in string.Formatter().parse(t) if n)  # noqa: E731
    wrong = [s for _, s in strings if fields(s) != fields(i18n.ZH[s])]
    assert wrong == []
    untranslated = [s for _, s in strings if re.search(r"[a-z]{4}", i18n.ZH[s]) and not re.search(
        r"[\u4e00-\u9fff]", i18n.ZH[s]) and s not in ("desktop-kb",)]
    assert untranslated == []


def test_chinese_ui_text_renders_with_a_cjk_font(qtbot, make_window):
    app = QApplication.instance()
    families = install_fonts(app)
    if not families:
        pytest.skip("no CJK font installed (apt-get install fonts-wqy-microhei) and none in resources/fonts")
    font = app.font()
    assert any(QRawFont.fromFont(QFont(f)).supportsCharacter("中") for f in font.families())
    i18n.set_language("zh")
    win = make_window()
    assert win.menuBar().actions()[0].text() == "文件(&F)"
    assert win.chat.ask_btn.text() == "提问"
    assert win.kb_panel.add_folder_btn.text() == "添加文件夹…"


def test_window_geometry_is_remembered(qtbot, make_window, make_lib):
    lib = make_lib()
    win = make_window(lib)
    screen = win.screen().availableGeometry()
    size = (min(1111, screen.width() - 50), min(707, screen.height() - 50))  # restore clamps to the screen
    win.resize(*size)
    qtbot.waitUntil(lambda: (win.width(), win.height()) == size, timeout=2000)
    win.close()
    assert (lib.settings.data_dir / "gui_state.json").exists()
    win2 = make_window(lib)
    assert (win2.width(), win2.height()) == size


def test_conversation_store_roundtrip_rename_and_forget(tmp_path):
    store = ConversationStore(tmp_path)
    c = Citation(n=1, kb="a", doc_id="d" * 32, path="/x/文件.pdf", pages=(2, 3), heading_path=("H", "S"),
                 start=5, end=50, quote="q", quote_start=10, quote_end=11)
    conv = Conversation(kbs=("b", "a"), turns=[Turn("问题？", "答案 [1]", "answered", [c])])
    path = store.save(conv)
    assert path.name == "a+b.json"
    back = store.load(["a", "b"])[0]
    assert back.turns[0].citations == [c] and back.turns[0].question == "问题？"
    store.rename_kb("a", "z")
    assert store.load(["b", "z"])[0].kbs == ("b", "z") and not path.exists()
    store.forget_kb("z")
    assert store.load(["b", "z"]) == []


def test_the_filter_bar_wraps_instead_of_squeezing_its_fields(qtbot):
    from desktop_kb.gui.filter_bar import FilterBar

    bar = FilterBar()
    qtbot.addWidget(bar)
    bar.show()
    bar.resize(1600, 40)
    qtbot.waitUntil(lambda: bar.wrapped is False, timeout=2000)
    assert bar.date_from.y() == bar.tag.y()  # one line
    bar.resize(480, 80)
    qtbot.waitUntil(lambda: bar.wrapped is True, timeout=2000)
    qtbot.wait(50)
    assert bar.date_from.y() > bar.tag.y()  # the dates on a second line
    for field in (bar.tag, bar.folder, bar.ext, bar.owner, bar.dated, bar.clear_btn):
        assert field.width() >= field.minimumSizeHint().width()
    assert bar.tag.currentText() == "any tag"


def test_started_from_the_appimage_it_offers_a_menu_entry_once(qtbot, make_window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from desktop_kb.gui import menu_entry

    image = tmp_path / "desktop-kb-0.1.0-x86_64.AppImage"
    image.write_bytes(b"\x7fELF")
    appdir = tmp_path / "appdir"
    appdir.mkdir()
    (appdir / "desktop-kb.png").write_bytes(b"png")
    monkeypatch.setenv("APPIMAGE", str(image))
    monkeypatch.setenv("APPDIR", str(appdir))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: asked.append(a) or QMessageBox.StandardButton.Yes)
    win = make_window()
    qtbot.waitUntil(lambda: bool(win.state.get(menu_entry.STATE_KEY)), timeout=5000)
    entry = menu_entry.menu_entry_file().read_text(encoding="utf-8")
    assert f'Exec="{image}" %F' in entry and "Icon=desktop-kb" in entry and len(asked) == 1
    assert (tmp_path / "share/icons/hicolor/256x256/apps/desktop-kb.png").read_bytes() == b"png"
    menu_entry.remove_menu_entry()
    assert not menu_entry.offer_menu_entry(win, win.state)  # asked once: not again, even without the entry
    assert len(asked) == 1 and not menu_entry.menu_entry_file().exists()


def test_counts_of_one_are_singular_in_english_and_chinese():
    assert i18n.tr_n("{n} file · {chunks} chunks · {failed} failed", "{n} files · {chunks} chunks · {failed} failed",
                     1, chunks=4, failed=0) == "1 file · 4 chunks · 0 failed"
    assert i18n.tr_n("Added 1 file to {kb}.", "Added {n} files to {kb}.", 3, kb="a") == "Added 3 files to a."
    i18n.set_language("zh")
    try:
        assert i18n.tr_n("Added 1 file to {kb}.", "Added {n} files to {kb}.", 1, kb="a") == "已向 a 添加 1 个文件。"
    finally:
        i18n.set_language("en")


def test_the_cores_messages_shown_in_the_app_are_in_chinese():
    import re as _re

    from desktop_kb.errors import KnowledgeBaseInUse, user_message
    from desktop_kb.gui.core_messages import localize, localize_pair
    from desktop_kb.ingest.convert import unsupported_reason

    shown = [unsupported_reason(f"/x/{name}") for name in ("fake.doc", "a.zip", "notes.xyz", "README", "old.ppt")]
    shown.append(user_message(KnowledgeBaseInUse("Knowledge base 'default' is in use by another desktop-kb process.")))
    assert localize(shown[0][0]) == shown[0][0]  # English UI: the core's own words
    i18n.set_language("zh")
    try:
        for message, hint in shown:
            zh = " ".join(localize_pair(message, hint))
            words = _re.sub(r"[\w-]*\.(?:doc|zip|xyz|ppt|docx|pptx)\b|README|desktop-kb|--pdf-password|PDF|DOCX|"
                            r"Markdown|PPTX|“default”", "", zh)  # names of files, formats and the base stay
            assert not _re.search(r"[A-Za-z]{4}", words), zh  # no English left but names
            assert _re.search(r"[\u4e00-\u9fff]", zh)
        assert localize("Something the catalogue has no pattern for.") == "Something the catalogue has no pattern for."
    finally:
        i18n.set_language("en")


def test_why_a_file_could_not_be_read_is_said_in_chinese(tmp_path):
    """The failed files of an ingest (damaged, empty, password-protected, a blank scan, a
    binary .txt), as the core reports them, shown in the Chinese app without English words."""
    import re as _re

    from filemakers import make_pdf

    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.gui.core_messages import localize_pair
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import Settings

    d = tmp_path / "bad"
    d.mkdir()
    (d / "empty.txt").write_text("", encoding="utf-8")
    (d / "corrupt.pdf").write_bytes(b"%PDF-1.4 garbage" * 10)
    (d / "locked.pdf").write_bytes(make_pdf([["secret"]], password="pw"))
    (d / "broken.docx").write_bytes(b"PK\x03\x04 not a zip")
    (d / "blank.pdf").write_bytes(make_pdf([[]]))
    with Library.open(Settings(data_dir=tmp_path / "data"), embedder=HashEmbedder(), reranker=None,
                      generator=None) as lib:
        report = lib.ingest("kb", [d])
    assert len(report.failed) == 5, report.failed
    i18n.set_language("zh")
    try:
        for f in report.failed:
            zh = " ".join(localize_pair(f.error, f.hint))
            words = _re.sub(r"[\w-]*\.(?:txt|pdf|docx)\b|PDF|DOCX|OCR|--pdf-password|ingest --ocr auto", "", zh)
            assert not _re.search(r"[A-Za-z]{4}", words), zh
        assert localize_pair("The question is empty.", "Type a question.") == ("问题是空的。", "请输入一个问题。")
    finally:
        i18n.set_language("en")


def test_help_checks_this_computer_and_copies_the_report(qtbot, make_window, monkeypatch):
    from desktop_kb.library import doctor

    real = doctor.run_doctor
    monkeypatch.setattr(doctor, "run_doctor", lambda settings, **kw: real(settings, speed=False))
    win = make_window()
    assert win.doctor_action in win.menuBar().actions()[-1].menu().actions()
    win.doctor_action.trigger()
    dialog = next(w for w in QApplication.topLevelWidgets() if w.objectName() == "doctorDialog")
    qtbot.waitUntil(lambda: dialog.copy_btn.isEnabled(), timeout=20000)
    assert "CPU" in dialog.report.toPlainText() and "embedder" in dialog.report.toPlainText()
    dialog.copy_btn.click()
    assert QApplication.clipboard().text() == dialog.report.toPlainText()


def test_every_hint_of_the_error_tree_is_shown_in_chinese():
    import inspect

    import desktop_kb.errors as tree
    from desktop_kb.gui.core_messages import localize

    hints = {c.default_hint for _, c in inspect.getmembers(tree, inspect.isclass)
             if c.__module__ == tree.__name__ and c.__dict__.get("default_hint")}
    assert len(hints) >= 15
    i18n.set_language("zh")
    try:
        english = [h for h in hints if not re.search(r"[\u4e00-\u9fff]", localize(h))]
    finally:
        i18n.set_language("en")
    assert english == []


def test_any_other_error_and_a_full_disk_are_said_in_chinese():
    """What errors.user_message makes of an exception outside the tree (memory, permissions, a
    missing file, any OS error, a bug), a full disk and a question too long, in the Chinese app."""
    from pathlib import Path

    from desktop_kb.errors import DiskFull, user_message
    from desktop_kb.gui.core_messages import localize_pair
    from desktop_kb.query.pipeline import check_question

    errors: list[BaseException] = [MemoryError(), PermissionError(13, "denied", "/a/b"),
                                   FileNotFoundError(2, "missing", "/a/b"), OSError(5, "Input/output error"),
                                   ValueError("boom"), DiskFull(Path("/data"), 10, 2048, "to import a.dkb")]
    try:
        check_question("word " * 3000)
    except Exception as exc:  # the too-long question's error, as the app gets it
        errors.append(exc)
    assert len(errors) == 7
    i18n.set_language("zh")
    try:
        shown = [localize_pair(*user_message(exc)) for exc in errors]
    finally:
        i18n.set_language("en")
    for message, hint in shown:
        left = re.sub(r"/a/b|/data|Input/output error|ValueError: boom|\d+(?:\.\d+)? (?:bytes|KB)|"
                      r"desktop-kb|--data-dir|DESKTOP_KB_DATA_DIR", "", f"{message} {hint}")
        assert re.search(r"[\u4e00-\u9fff]", message) and not re.search(r"[A-Za-z]{4}", left), (message, hint)


def test_the_scope_of_a_whole_document_answer_is_said_only_when_answered_and_in_the_uis_language():
    from desktop_kb.gui.chat_render import turn_notes
    from desktop_kb.types import Answer

    answered, refused = Turn("Overview?"), Turn("Overview?")
    answered.apply_answer(Answer("Overview?", "It covers hotels [1].", "answered", scope="the whole of 员工手册.md"))
    refused.apply_answer(Answer("Overview?", "The answer I drafted is not what the cited passage says.", "refused",
                                scope="the whole of 员工手册.md"))
    assert "Answered from the whole of 员工手册.md." in turn_notes(answered)
    assert not any("Answered from" in n for n in turn_notes(refused))  # a refusal was answered from nothing
    back = Turn.from_json(answered.to_json())
    i18n.set_language("zh")
    try:
        assert "根据 员工手册.md 全文作答。" in turn_notes(back)
    finally:
        i18n.set_language("en")


def test_the_file_dialogs_are_labelled_in_the_apps_language(qtbot):
    """Qt's own dialog asked its catalogue for "&Look in:" and "Files of &type:", which the
    Chinese one has only without the shortcut: the app's file dialogs set both."""
    from PySide6.QtWidgets import QFileDialog, QLabel

    from desktop_kb.gui.file_dialogs import _dialog

    i18n.set_language("zh")
    try:
        d = _dialog(None, "x", "/tmp/report.md", "Markdown (*.md)", QFileDialog.FileMode.AnyFile, save=True)
        d.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        qtbot.addWidget(d)
        labels = [label.text() for label in d.findChildren(QLabel)]
        assert "查找范围(&L)：" in labels and "文件类型(&T)：" in labels, labels
        assert d.selectedFiles()[0].endswith("report.md")  # a save dialog starts on the proposed name
    finally:
        i18n.set_language("en")
