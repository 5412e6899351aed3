"""Conversations as a user manages them: the side list (newest first, search, rename, delete
with Undo, export as Markdown), and under each answer its time, Copy, Ask again and Edit."""

from __future__ import annotations

import json

import pytest
from gui_fakes import ANSWER, QUOTE
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QApplication
from test_gui_chat import ask, click_anchor, ingest

from desktop_kb.gui.conversation_export import conversation_markdown
from desktop_kb.gui.conversations import Conversation, ConversationStore, Turn

pytestmark = pytest.mark.gui


def _asked(qtbot, win, question: str) -> None:
    with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
        ask(qtbot, win, question)


def test_the_side_list_searches_renames_deletes_with_undo_and_exports(qtbot, make_window, docs, tmp_path):
    win = make_window()
    ingest(qtbot, win, docs)
    chat, side = win.chat, win.chat.conv_list
    chat.ask_fn.delay_s = 0
    _asked(qtbot, win, "When is the invoice due?")
    first = chat.conversation.id
    chat.new_conversation()
    _asked(qtbot, win, "How do I pay it?")
    assert side.titles() == ["How do I pay it?", "When is the invoice due?"]  # newest first
    qtbot.keyClicks(side.search, "PAY")  # any case, in a title, a question or an answer
    assert side.titles() == ["How do I pay it?"]
    side.search.clear()

    side.rename_requested.emit(first, "  Invoice   dates ")
    assert "Invoice dates" in side.titles()
    assert chat.store.load(["default"])[-1].name == "Invoice dates"  # kept in the file

    chat.open_conversation(first)
    side.delete_requested.emit(first)
    assert side.titles() == ["How do I pay it?"] and chat.conversation.id != first
    assert side.undo_btn.isVisibleTo(side)
    qtbot.mouseClick(side.undo_btn, Qt.MouseButton.LeftButton)
    assert side.titles() == ["How do I pay it?", "Invoice dates"] and not side.undo_btn.isVisibleTo(side)
    assert chat.conversation.id == first  # the conversation open when deleted is open again

    out = tmp_path / "export.md"
    assert chat.export_conversation(first, out)
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Invoice dates") and "## When is the invoice due?" in text
    assert "[1] invoice.md" in text and f"“{QUOTE}”" in text  # the file and the passage's own words


def test_an_answer_shows_its_time_copies_asks_again_and_edits(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    chat = win.chat
    chat.ask_fn.delay_s = 0.02  # (a token every 20 ms: the answer takes a measurable time)
    _asked(qtbot, win, "When is the invoice due?")
    _asked(qtbot, win, "How do I pay it?")
    turns = chat.conversation.turns
    assert all(t.seconds > 0 for t in turns)
    shown = chat.transcript.toPlainText()
    assert "Copy" in shown and "Edit question" in shown and shown.count("Ask again") == 1  # the last answer only

    click_anchor(qtbot, chat.transcript, "act:copy#0")
    copied = QApplication.clipboard().text()
    assert copied.startswith(ANSWER.split("[")[0].strip()[:20]) and "Sources:" in copied and QUOTE in copied

    with qtbot.waitSignal(chat.answer_finished, timeout=10000):
        click_anchor(qtbot, chat.transcript, "act:again#1")
    assert [t.question for t in chat.conversation.turns] == ["When is the invoice due?", "How do I pay it?"]
    assert chat.ask_fn.calls[-1]["history"] == [("When is the invoice due?", ANSWER)]

    click_anchor(qtbot, chat.transcript, "act:edit#0")
    assert chat.input.toPlainText() == "When is the invoice due?"
    chat.input.clear()
    _asked(qtbot, win, "When is the second invoice due?")
    assert [t.question for t in chat.conversation.turns] == ["When is the second invoice due?"]  # replaced
    assert chat.ask_fn.calls[-1]["history"] == []
    saved = json.loads(chat.store.path(["default"]).read_text(encoding="utf-8"))
    assert saved["version"] == 2 and saved["conversations"][0]["turns"][0]["seconds"] > 0


def test_version_1_files_are_read_and_the_export_quotes_aligned_evidence(tmp_path):
    store = ConversationStore(tmp_path)
    store.root.mkdir(parents=True)
    cite = {"n": 1, "kb": "a", "doc_id": "d1", "path": "/x/policy.md", "pages": [2], "heading_path": ["Hotels"],
            "start": 0, "end": 40, "evidence": [[10, 35]]}
    old = {"version": 1, "kbs": ["a"], "conversations": [{"id": "c1", "kbs": ["a"], "created_at": 5, "turns": [
        {"question": "Hotel limit?", "answer": "120 euros a night. [1]", "status": "answered", "citations": [cite]}]}]}
    store.path(["a"]).write_text(json.dumps(old), encoding="utf-8")
    (conv,) = store.load(["a"])
    assert conv.name == "" and conv.title == "Hotel limit?" and conv.turns[0].seconds == 0.0
    doc = "# Hotels\n\nA hotel costs at most 120 euros a night."
    md = conversation_markdown(conv, lambda kb, doc_id: doc)
    assert f"- [1] policy.md · p. 2 · Hotels — “{doc[10:35]}”" in md  # the aligned sentence, from the document
    assert conversation_markdown(conv, lambda kb, doc_id: (_ for _ in ()).throw(OSError("gone"))).count("“") == 0
    assert not Conversation(kbs=("a",), turns=[Turn("q")]).matches("zzz") and conv.matches("HOTEL")


def test_a_deleted_conversation_comes_back_where_its_date_puts_it(tmp_path):
    store = ConversationStore(tmp_path)
    older = Conversation(kbs=("a",), turns=[Turn("older", "x", "answered")], created_at=1)
    newer = Conversation(kbs=("a",), turns=[Turn("newer", "y", "answered")], created_at=2)
    store.save(older)
    store.save(newer)
    gone = store.delete(["a"], older.id)
    assert gone is not None and [c.id for c in store.load(["a"])] == [newer.id]
    assert store.delete(["a"], "nope") is None
    store.restore(gone)
    assert [c.id for c in store.load(["a"])] == [newer.id, older.id]


def test_a_footnote_is_big_enough_to_hit_and_names_its_source_on_hover(qtbot, make_window, docs, monkeypatch):
    from PySide6.QtGui import QTextCursor

    win = make_window()
    ingest(qtbot, win, docs)
    chat = win.chat
    chat.ask_fn.delay_s = 0
    _asked(qtbot, win, "When is the invoice due?")
    browser, doc = chat.transcript, chat.transcript.document()
    cursor, where = QTextCursor(doc), []
    for pos in range(doc.characterCount()):  # the first [1] link: the answer's (the Sources table has one too)
        cursor.setPosition(pos)
        if cursor.charFormat().anchorHref() == "cite:1#0":
            where.append(browser.cursorRect(cursor))
        elif where:
            break
    assert where, "no [1] link in the answer"
    width = where[-1].right() - where[0].left()
    assert width >= 16 and min(r.height() for r in where) >= 16, (width, [r.height() for r in where])
    shown = []
    monkeypatch.setattr("desktop_kb.gui.chat.QToolTip.showText", lambda pos, text, *a: shown.append(text))
    browser.highlighted.emit(QUrl("cite:1#0"))
    assert shown and shown[-1].startswith("[1] invoice.md")


def test_a_base_open_elsewhere_is_said_so_not_called_missing(qtbot, make_window, docs, monkeypatch):
    from desktop_kb.errors import KnowledgeBaseInUse
    from desktop_kb.gui import errors as gui_errors

    win = make_window()
    ingest(qtbot, win, docs)

    def in_use(kb):
        raise KnowledgeBaseInUse(f"Knowledge base {kb!r} is in use by another desktop-kb process.")

    monkeypatch.setattr(win.lib, "stats", in_use)
    monkeypatch.setattr(gui_errors, "show_error", lambda *a, **k: None)
    monkeypatch.setattr(win, "show_error", lambda *a, **k: None)
    win.refresh_documents()
    label = win.kb_panel.stats_label
    qtbot.waitUntil(lambda: "another desktop-kb" in label.text(), timeout=5000)
    assert "default" in label.text() and "No knowledge base" not in label.text()


def test_a_new_question_scrolls_into_view(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    chat = win.chat
    chat.ask_fn.delay_s = 0
    for i in range(6):
        _asked(qtbot, win, f"When is invoice {i} due?")
    bar = chat.transcript.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(0)  # the reader scrolled back to the first answer
    with qtbot.waitSignal(chat.answer_finished, timeout=10000):
        ask(qtbot, win, "And the last one?")
        assert bar.value() == bar.maximum()


def test_ask_again_that_cannot_start_loses_nothing(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    chat = win.chat
    chat.ask_fn.delay_s = 0
    _asked(qtbot, win, "When is the invoice due?")
    chat.ask_fn = None  # (as when no model can answer now)
    chat.turn_action("again", 0)
    assert [t.question for t in chat.conversation.turns] == ["When is the invoice due?"]
    assert chat.conversation.turns[0].status == "answered"
