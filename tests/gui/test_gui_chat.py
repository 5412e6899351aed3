"""Asking: streamed answers with [n] footnotes, the footnote viewer, Stop, conversations, keys."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import pytest
from gui_fakes import ANSWER, QUOTE, FakeGenerator, find_chunk
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from desktop_kb.gui import viewer as viewer_mod

pytestmark = pytest.mark.gui

LONG_ANSWER = " ".join(["The invoice is due on March 15 [1]."] * 12)


def ingest(qtbot, win, folder: Path, kb: str = "default") -> None:
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.ingest_paths([str(folder)], kb=kb)
    qtbot.waitUntil(lambda: kb in win.kb_panel.kb_names() and win.chat.kbs == [kb], timeout=5000)


def click_anchor(qtbot, browser, href: str) -> None:
    """Click the first link to ``href`` in a QTextBrowser, with the mouse."""
    doc = browser.document()
    cursor = QTextCursor(doc)
    for pos in range(1, doc.characterCount()):
        cursor.setPosition(pos)
        if cursor.charFormat().anchorHref() == href:
            cursor.setPosition(pos)  # just after the link's first character
            point = browser.cursorRect(cursor).center()
            point.setX(point.x() + 1)
            browser.ensureCursorVisible()
            qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=point)
            return
    raise AssertionError(f"no link to {href} in {browser.toHtml()[:500]}")


def ask(qtbot, win, question: str) -> None:
    qtbot.keyClicks(win.chat.input, question)
    qtbot.keyClick(win.chat.input, Qt.Key.Key_Return)


def test_ask_streams_tokens_and_shows_footnotes(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    fake = win.chat.ask_fn
    fake.delay_s = 0.12
    ask(qtbot, win, "When is the invoice due?")
    assert win.chat.busy and win.chat.input.toPlainText() == ""
    assert win.chat.stop_btn.isEnabled() and not win.chat.ask_btn.isEnabled()
    turn = win.chat.conversation.turns[-1]
    # part of the answer is on screen before the answer is complete
    qtbot.waitUntil(lambda: 0 < len(turn.answer) < len(ANSWER), timeout=5000)
    qtbot.waitUntil(lambda: "The invoice" in win.chat.transcript.toPlainText(), timeout=2000)
    assert not turn.finished
    with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
        pass
    assert turn.status == "answered" and turn.answer == ANSWER
    assert fake.calls[0]["kbs"] == ["default"]
    html = win.chat.transcript.toHtml()
    assert 'href="cite:1#0"' in html
    text = " ".join(win.chat.transcript.toPlainText().split())  # (the [n] chip is padded with no-break spaces)
    assert "due on March 15 [1]" in text
    assert "Sources" in text and "invoice.md · Invoice 🧾 2024-031 › Payment" in text
    assert "reranker" not in text.lower()  # no reranker installed is normal: no note on every answer
    assert not win.chat.busy and win.chat.ask_btn.isEnabled()


def test_status_line_shows_the_stage_until_the_first_token(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    fake = win.chat.ask_fn
    fake.reading_s, fake.delay_s = 0.6, 0.01
    ask(qtbot, win, "When is the invoice due?")
    qtbot.waitUntil(lambda: win.chat.status.text() == "Reading 1 passage…", timeout=3000)
    assert win.chat.conversation.turns[-1].answer == ""  # still reading: nothing streamed yet
    qtbot.waitUntil(lambda: win.chat.status.text() == "Writing the answer…", timeout=3000)
    with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
        pass


def test_ranking_is_shown_once_in_the_status_bar_and_a_failing_reranker_on_the_answer(qtbot, make_window, docs):
    win = make_window()
    win.show_ranking(False)
    assert win.ranking_label.text() == "Ranking: hybrid search" and "reranker" in win.ranking_label.toolTip()
    win.show_ranking(True)
    assert win.ranking_label.text() == "Ranking: hybrid search + reranker"
    ingest(qtbot, win, docs)
    win.chat.ask_fn.rerank_degraded = True  # an installed reranker failed on this answer
    win.chat.ask_fn.delay_s = 0
    ask(qtbot, win, "When is the invoice due?")
    with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
        pass
    assert "The reranker failed" in win.chat.transcript.toPlainText()


def test_sentences_without_a_citation_are_pointed_out(qtbot, make_window, docs):
    from desktop_kb.gui.conversations import Turn

    win = make_window()
    ingest(qtbot, win, docs)
    fake = win.chat.ask_fn
    fake.delay_s = 0
    fake.text = ANSWER + " Late fees are usually waived for first offences."
    fake.problems = ("Uncited claim: Late fees are usually waived for first offences.",)
    with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
        ask(qtbot, win, "When is the invoice due?")
    text = win.chat.transcript.toPlainText()
    assert "Not backed by a cited passage: “Late fees are usually waived for first offences.”" in text
    turn = win.chat.conversation.turns[-1]
    assert Turn.from_json(turn.to_json()).uncited == ["Late fees are usually waived for first offences."]


def test_clicking_footnote_opens_viewer_with_highlighted_passage(qtbot, make_window, docs, monkeypatch):
    win = make_window()
    ingest(qtbot, win, docs)
    win.chat.ask_fn.delay_s = 0
    with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
        ask(qtbot, win, "When is the invoice due?")
    assert not win.viewer.isVisible()
    with qtbot.waitSignal(win.viewer_opened, timeout=5000) as opened:
        click_anchor(qtbot, win.chat.transcript, "cite:1#0")
    cite = opened.args[0]
    chunk = find_chunk(win.lib, "default", QUOTE).chunk
    assert win.viewer.isVisible()
    assert win.viewer.highlighted_text() == chunk.text  # exactly the cited chunk, emoji before it
    assert win.viewer.quote_text() == QUOTE
    bar = win.filter_bar  # beside the open viewer the filter fields keep their width (wrapped if need be)
    win.resize(1100, 760)
    qtbot.waitUntil(lambda: bar.width() < 900, timeout=3000)
    fields = (bar.tag, bar.folder, bar.ext, bar.owner, bar.dated)
    qtbot.waitUntil(lambda: all(f.width() >= f.minimumSizeHint().width() for f in fields), timeout=3000)
    (evidence,) = win.viewer.evidence_text()  # the supporting sentence, strongly inside the passage
    assert QUOTE in evidence and evidence in chunk.text and evidence != chunk.text
    assert win.viewer.passage_visible()
    assert "invoice.md" in win.viewer.title.text() and "[1]" in win.viewer.title.text()
    assert "Invoice 🧾 2024-031 › Payment" in win.viewer.meta.text()
    # document text is data: markup in it is shown as typed, not interpreted
    assert "quote <b>INV-031</b>." in win.viewer.text.toPlainText()
    assert not win.viewer.tabs.isTabEnabled(1)  # no page view for Markdown
    opened_files = []
    monkeypatch.setattr(viewer_mod, "open_file", lambda path: opened_files.append(path) or True)
    qtbot.mouseClick(win.viewer.open_btn, Qt.MouseButton.LeftButton)
    assert opened_files == [cite.path]


def _link_rect(browser, href: str):
    doc = browser.document()
    cursor = QTextCursor(doc)
    for pos in range(1, doc.characterCount()):
        cursor.setPosition(pos)
        if cursor.charFormat().anchorHref() == href:
            return browser.cursorRect(cursor)
    return None


def test_the_answer_whose_footnote_was_clicked_stays_in_view_when_the_viewer_opens(qtbot, make_window, docs):
    """The viewer narrows the transcript, whose text reflows longer: the clicked footnote stays at
    its height on screen instead of sliding away with the reflow."""
    win = make_window()
    win.resize(1300, 760)
    ingest(qtbot, win, docs)
    fake = win.chat.ask_fn
    fake.text, fake.delay_s = LONG_ANSWER, 0
    for q in ("When is the invoice due?", "And the second invoice?", "And the third one?"):
        with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
            ask(qtbot, win, q)
    browser = win.chat.transcript
    href = "cite:1#2"
    qtbot.waitUntil(lambda: _link_rect(browser, href) is not None and not win.chat._render_timer.isActive(),
                    timeout=3000)
    before = _link_rect(browser, href)
    assert 0 <= before.top() and before.bottom() <= browser.viewport().height()
    point = before.center()
    point.setX(point.x() + 1)
    qtbot.mouseMove(browser.viewport(), point)  # the pointer on the footnote, as a hand moves it there
    with qtbot.waitSignal(win.viewer_opened, timeout=5000):
        qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.wait(50)
    after = _link_rect(browser, href)
    assert 0 <= after.top() and after.bottom() <= browser.viewport().height(), (before, after)
    assert abs(after.top() - before.top()) <= 2 * before.height(), (before, after)


def test_refusal_shows_status_line_and_passages_found(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    fake = win.chat.ask_fn
    fake.text, fake.status, fake.delay_s = "Your documents do not say who signed the invoice.", "refused", 0
    with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
        ask(qtbot, win, "Who signed the invoice?")
    turn = win.chat.conversation.turns[-1]
    assert turn.status == "refused" and turn.citations == [] and len(turn.passages) == 1
    text = win.chat.transcript.toPlainText()
    # one refusal, one reason: the answer's own words, no second generic line contradicting it
    assert "Your documents do not say who signed the invoice." in text
    assert "No answer: your documents do not seem to cover this question." not in text
    assert "Passages found" in text and "Sources" not in text
    with qtbot.waitSignal(win.viewer_opened, timeout=5000):
        click_anchor(qtbot, win.chat.transcript, "passage:1#0")
    assert win.viewer.highlighted_text() == find_chunk(win.lib, "default", QUOTE).chunk.text
    assert win.viewer.quote_text() == ""


def test_escape_stops_generation_within_a_second(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    fake = win.chat.ask_fn
    fake.text, fake.delay_s = LONG_ANSWER, 0.25
    win.activateWindow()
    qtbot.waitActive(win)
    ask(qtbot, win, "When is the invoice due?")
    turn = win.chat.conversation.turns[-1]
    qtbot.waitUntil(lambda: len(turn.answer) > 0, timeout=5000)
    started = time.monotonic()
    qtbot.keyClick(win.chat.input, Qt.Key.Key_Escape)
    # the interface is free at once
    assert not win.chat.busy and win.chat.ask_btn.isEnabled() and not win.chat.stop_btn.isEnabled()
    assert turn.status == "stopped"
    # and the worker really stops
    qtbot.waitUntil(lambda: fake.finished.is_set() and not win.runner.running("ask"), timeout=1000)
    assert time.monotonic() - started < 1.0
    shown = turn.answer
    assert 0 < len(shown) < len(LONG_ANSWER)
    qtbot.wait(300)
    assert turn.answer == shown  # no late tokens
    shown_text = win.chat.transcript.toPlainText()
    # a stopped draft was never checked: labelled so, and not left on screen as an answer
    assert "Stopped — not checked" in shown_text and shown[:40] not in shown_text


def test_followups_pass_history_and_conversations_persist(qtbot, make_window, make_lib, docs, gui_settings):
    lib = make_lib()
    win = make_window(lib)
    ingest(qtbot, win, docs)
    fake = win.chat.ask_fn
    fake.delay_s = 0
    for q in ("When is the invoice due?", "And how do I pay it?"):
        with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
            ask(qtbot, win, q)
    assert fake.calls[0]["history"] == []
    assert fake.calls[1]["history"] == [("When is the invoice due?", ANSWER)]
    saved = gui_settings.data_dir / "conversations" / "default.json"
    data = json.loads(saved.read_text(encoding="utf-8"))
    turns = data["conversations"][0]["turns"]
    assert [t["question"] for t in turns] == ["When is the invoice due?", "And how do I pay it?"]
    assert turns[0]["citations"][0]["quote"] == QUOTE
    conv_id = data["conversations"][0]["id"]
    win.close()

    # reopened: the conversation is back, and its footnotes still open
    win2 = make_window(lib)
    qtbot.waitUntil(lambda: win2.chat.kbs == ["default"], timeout=5000)
    assert win2.chat.conversation.id == conv_id
    assert "And how do I pay it?" in win2.chat.transcript.toPlainText()
    with qtbot.waitSignal(win2.viewer_opened, timeout=5000):
        win2.chat.open_citation(1, 0)
    assert QUOTE in win2.viewer.highlighted_text()
    win2.chat.new_conversation()
    assert win2.chat.conversation.turns == [] and win2.chat.conversation.id != conv_id
    assert win2.chat.open_conversation(conv_id) and len(win2.chat.conversation.turns) == 2


def test_ctrl_enter_inserts_newline_and_enter_asks(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    win.chat.ask_fn.delay_s = 0
    qtbot.keyClicks(win.chat.input, "first line")
    qtbot.keyClick(win.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(win.chat.input, "second line")
    assert win.chat.input.toPlainText() == "first line\nsecond line"
    assert not win.chat.busy and win.chat.ask_fn.calls == []
    with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
        qtbot.keyClick(win.chat.input, Qt.Key.Key_Return)
    assert win.chat.ask_fn.calls[0]["question"] == "first line\nsecond line"


needs_pipeline = pytest.mark.skipif(importlib.util.find_spec("desktop_kb.query.pipeline") is None,
                                    reason="desktop_kb.query.pipeline is not available yet")


@needs_pipeline
def test_real_library_ask_streams_and_cites(qtbot, make_window, make_lib, docs):
    gen = FakeGenerator(ANSWER, delay_s=0.05)
    win = make_window(make_lib(generator=gen), ask_fn=None)  # the window's own Library.ask
    ingest(qtbot, win, docs)
    with qtbot.waitSignal(win.chat.answer_finished, timeout=30000) as done:
        ask(qtbot, win, "When is the invoice due?")
    turn = done.args[0]
    assert turn.status == "answered", (turn.status, turn.answer, turn.notes)
    assert turn.answer.startswith("The invoice is due on March 15") and turn.citations
    assert 'href="cite:1#0"' in win.chat.transcript.toHtml()
    with qtbot.waitSignal(win.viewer_opened, timeout=5000) as opened:
        click_anchor(qtbot, win.chat.transcript, "cite:1#0")
    c = opened.args[0]
    md = win.lib.document_markdown(c.kb, c.doc_id)
    assert win.viewer.highlighted_text() == md[c.start : c.end]
    assert "due on March 15" in win.viewer.highlighted_text()


@needs_pipeline
def test_real_library_ask_stops_within_a_second(qtbot, make_window, make_lib, docs):
    gen = FakeGenerator(LONG_ANSWER, delay_s=0.25)
    win = make_window(make_lib(generator=gen), ask_fn=None)
    ingest(qtbot, win, docs)
    ask(qtbot, win, "When is the invoice due?")
    turn = win.chat.conversation.turns[-1]
    qtbot.waitUntil(lambda: len(turn.answer) > 0, timeout=15000)
    started = time.monotonic()
    qtbot.mouseClick(win.chat.stop_btn, Qt.MouseButton.LeftButton)
    assert not win.chat.busy and turn.status == "stopped"
    qtbot.waitUntil(lambda: not win.runner.running("ask"), timeout=1000)
    assert time.monotonic() - started < 1.0


def test_pdf_page_view_renders_the_cited_page(qtbot, make_window, tmp_path):
    from desktop_kb.gui.demo import write_sample_documents
    from desktop_kb.types import Citation

    folder = tmp_path / "pdfs"
    write_sample_documents(folder)
    for p in folder.iterdir():
        if p.suffix != ".pdf":
            p.unlink()
    win = make_window()
    ingest(qtbot, win, folder)
    doc = win.lib.documents("default")[0]
    hit = find_chunk(win.lib, "default", "Service Agreement")
    assert hit.chunk.pages == (1, 2)
    md = win.lib.document_markdown("default", doc.doc_id)
    c = Citation(n=1, kb="default", doc_id=doc.doc_id, path=doc.path, pages=hit.chunk.pages,
                 heading_path=(), start=hit.chunk.start, end=hit.chunk.end)
    with qtbot.waitSignal(win.viewer_opened, timeout=5000):
        win.open_citation(c, "Late payments cost 2% interest per month. [1]")
    assert win.viewer.tabs.isTabEnabled(1) and win.viewer.show_page_view()
    assert win.viewer.page_index == 1  # the citing sentence is about page 2
    assert win.viewer.page_highlighted and not win.viewer.page_label.pixmap().isNull()
    assert win.viewer.page_info.text() == "Page 2 of 2" and not win.viewer.next_btn.isEnabled()
    qtbot.mouseClick(win.viewer.prev_btn, Qt.MouseButton.LeftButton)
    assert win.viewer.page_index == 0 and win.viewer.page_highlighted
    fit = win.viewer.page_label.pixmap().width()  # the page fits the view; + and − zoom it, marks kept
    assert fit >= win.viewer.page_scroll.viewport().width() * win.viewer.devicePixelRatioF() - 40 or fit >= 300
    qtbot.mouseClick(win.viewer.zoom_in_btn, Qt.MouseButton.LeftButton)
    assert win.viewer.page_label.pixmap().width() > fit * 1.2 and win.viewer.page_highlighted
    for _ in range(2):
        qtbot.mouseClick(win.viewer.zoom_out_btn, Qt.MouseButton.LeftButton)
    assert win.viewer.page_label.pixmap().width() < fit and win.viewer.page_index == 0

    # with a quote, its page wins whatever the sentence says
    at = md.index("This agreement")
    quoted = Citation(n=1, kb="default", doc_id=doc.doc_id, path=doc.path, pages=(1, 2), heading_path=(),
                      start=hit.chunk.start, end=hit.chunk.end, quote="This agreement",
                      quote_start=at, quote_end=at + len("This agreement"))
    with qtbot.waitSignal(win.viewer_opened, timeout=5000):
        win.open_citation(quoted, "Late payments cost 2% interest per month. [1]")
    assert win.viewer.show_page_view() and win.viewer.page_index == 0
    assert win.viewer.quote_text() == "This agreement"


def test_removed_sentences_are_shown_with_the_answer(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    fake = win.chat.ask_fn
    fake.delay_s = 0
    fake.removed = (("Late fees are 90 percent.", "passage [1] does not state 90 percent"),)
    with qtbot.waitSignal(win.chat.answer_finished, timeout=10000):
        ask(qtbot, win, "When is the invoice due?")
    text = win.chat.transcript.toPlainText()
    assert "Removed, because no cited passage supports it: “Late fees are 90 percent.”" in text
    assert win.chat.conversation.turns[-1].removed == ["Late fees are 90 percent."]


def test_scanned_image_page_view_marks_the_cited_lines(qtbot, make_window, tmp_path):
    from filemakers import make_scan
    from PySide6.QtGui import QColor

    from desktop_kb.types import Citation

    folder = tmp_path / "scans"
    folder.mkdir()
    lines = ["Receipts must be submitted within 30 days of purchase.",
             "Travel costs are paid back at the end of each month."]
    make_scan(lines).rotate(90, expand=True).save(folder / "policy.png")  # scanned sideways
    win = make_window()  # the real OCR engine, built from the settings
    with qtbot.waitSignal(win.ingest_finished, timeout=120000):
        win.ingest_paths([str(folder)], kb="default")
    qtbot.waitUntil(lambda: "default" in win.kb_panel.kb_names(), timeout=5000)
    assert "OCR" in win.ingest_panel.current.text()
    doc = win.lib.documents("default")[0]
    md = win.lib.document_markdown("default", doc.doc_id)
    at = md.index("Travel costs")
    c = Citation(n=1, kb="default", doc_id=doc.doc_id, path=doc.path, pages=(1,), heading_path=(),
                 start=0, end=len(md), evidence=((at, at + len(lines[1])),))
    with qtbot.waitSignal(win.viewer_opened, timeout=5000):
        win.open_citation(c, "Travel costs are paid back monthly [1].")
    assert win.viewer.tabs.isTabEnabled(1) and win.viewer.show_page_view()
    assert win.viewer.page_highlighted and win.viewer.page_info.text() == "Page 1 of 1"
    image = win.viewer.page_label.pixmap().toImage()
    assert image.width() > image.height()  # shown upright: wider than tall, as the page was typed
    # the evidence line's box is tinted; the margin above the first line is still white
    ocr = win.lib.document_ocr("default", doc.doc_id)
    line = next(ln for ln in ocr[0].lines if ln.text.startswith("Travel"))
    x, y = int((line.x + 0.002) * image.width()), int((line.y + line.h / 2) * image.height())
    assert QColor(image.pixel(x, y)) != QColor("white")
    assert QColor(image.pixel(image.width() // 2, 10)) == QColor("white")


def test_filter_bar_reaches_every_search_of_the_answer_and_is_shown(qtbot, make_window, make_lib, docs,
                                                                    monkeypatch):
    gen = FakeGenerator(ANSWER, delay_s=0.0)
    lib = make_lib(generator=gen)
    win = make_window(lib, ask_fn=None)
    ingest(qtbot, win, docs)
    win.lib.set_metadata("default", [docs / "invoice.md"], add=["finance"])
    win.refresh_documents()
    qtbot.waitUntil(lambda: win.filter_bar.tag.findData("finance") > 0, timeout=5000)
    seen = []  # the filter of every store search (each query, each knowledge base)
    store_search = win.lib.store.search_both

    def spy(name, dense, sparse, flt, limit):
        seen.append(flt)
        return store_search(name, dense, sparse, flt, limit)

    monkeypatch.setattr(win.lib.store, "search_both", spy)
    win.filter_bar.tag.setCurrentIndex(win.filter_bar.tag.findData("finance"))
    win.filter_bar.ext.setCurrentIndex(win.filter_bar.ext.findData(".md"))
    with qtbot.waitSignal(win.chat.answer_finished, timeout=30000) as done:
        ask(qtbot, win, "When is the invoice due?")
    turn = done.args[0]
    invoice = next(r for r in win.lib.documents("default") if r.path.endswith("invoice.md"))
    assert seen and all(f is not None and f.tags == ("finance",) and f.doc_ids == (invoice.doc_id,) for f in seen)
    assert turn.filter == "tag finance · .md"
    assert "Searched only: tag finance · .md" in win.chat.transcript.toPlainText()
    win.filter_bar.clear()
    seen.clear()
    with qtbot.waitSignal(win.chat.answer_finished, timeout=30000):
        ask(qtbot, win, "When is the invoice due?")
    assert seen and all(f is None for f in seen)


@needs_pipeline
def test_an_empty_base_answers_at_once_with_what_to_do(qtbot, make_window, make_lib, tmp_path):
    """No passages: the specific reason, no model call, and no "your documents do not cover it"."""
    gen = FakeGenerator(ANSWER, delay_s=0.05)
    win = make_window(make_lib(generator=gen), ask_fn=None)
    empty = tmp_path / "empty"
    empty.mkdir()
    ingest(qtbot, win, empty, kb="notes")
    with qtbot.waitSignal(win.chat.answer_finished, timeout=30000) as done:
        ask(qtbot, win, "When is the invoice due?")
    turn = done.args[0]
    assert turn.status == "refused" and not turn.passages and not turn.citations
    assert turn.answer == "The knowledge base 'notes' has no documents yet: add files or folders."
    html = win.chat.transcript.toHtml()
    assert "has no documents yet" in html and "do not seem to cover" not in html
    assert gen.calls == []


def _anchors(browser) -> set[str]:
    doc, cursor, found = browser.document(), QTextCursor(browser.document()), set()
    for pos in range(1, doc.characterCount()):
        cursor.setPosition(pos)
        if cursor.charFormat().anchorHref():
            found.add(cursor.charFormat().anchorHref())
    return found


def test_a_draft_looks_like_a_draft_until_it_is_checked(qtbot, make_window, docs):
    win = make_window()
    ingest(qtbot, win, docs)
    fake = win.chat.ask_fn
    fake.text, fake.delay_s = LONG_ANSWER, 0.1
    ask(qtbot, win, "When is the invoice due?")
    turn = win.chat.conversation.turns[-1]
    qtbot.waitUntil(lambda: "[1]" in turn.answer, timeout=5000)
    win.chat.render()
    text = win.chat.transcript.toPlainText()
    # labelled, and its [n] are not links: nothing unchecked can be clicked as a source
    assert "Draft — checking its citations…" in text
    assert not any(a.startswith("cite:") for a in _anchors(win.chat.transcript))
    with qtbot.waitSignal(win.chat.answer_finished, timeout=15000):
        pass
    text = win.chat.transcript.toPlainText()
    assert "Draft — checking" not in text and "The invoice is due on March 15" in text
    assert "cite:1#0" in _anchors(win.chat.transcript)  # the checked answer's footnote is live
