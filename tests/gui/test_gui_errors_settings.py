"""Errors reach the user only through gui/errors.py; the first-run dialog; the settings dialog."""

from __future__ import annotations

import dataclasses

import pytest
from gui_fakes import FakeAsk
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton

from desktop_kb.errors import Cancelled, ModelNotInstalled
from desktop_kb.gui import errors
from desktop_kb.gui.errors import FirstRunDialog
from desktop_kb.gui.settings_dialog import SettingsDialog
from desktop_kb.gui.tasks import TaskRunner
from desktop_kb.settings import ModelSpec, load_settings

pytestmark = pytest.mark.gui


def test_missing_llm_at_start_shows_first_run_dialog(qtbot, make_window, make_lib, gui_settings, tmp_path):
    gguf = tmp_path / "models" / "answer-model.gguf"
    s = gui_settings.replace(models=dataclasses.replace(
        gui_settings.models, llm=ModelSpec("my-llm", "llama_cpp", str(gguf))))
    lib = make_lib(settings=s, generator=None)  # the real factory looks for the file
    win = make_window(lib, preload=True)
    qtbot.waitUntil(lambda: isinstance(errors.last_dialog(), FirstRunDialog), timeout=10000)
    dlg = errors.last_dialog()
    assert dlg.needed_file == str(gguf)
    assert str(gguf) in dlg.message_label.text() and str(s.models_dir) in dlg.folder_label.text()
    assert "Traceback" not in dlg.text() and "desktop-kb models install" in dlg.hint
    assert dlg.isVisible() and dlg.parent() is win
    dlg.close()


def test_error_while_asking_goes_through_errors_module(qtbot, make_window, make_lib, docs, monkeypatch):
    lib = make_lib()
    shown = []
    real_show = errors.show_error
    monkeypatch.setattr(errors, "show_error", lambda *a, **k: shown.append(a[1]) or real_show(*a, **k))
    win = make_window(lib, ask_fn=FakeAsk(lib, error=ModelNotInstalled(
        "LLM model file not found: /opt/models/x.gguf", "Copy the file there.")))
    win.chat.set_kbs(["default"])
    win.chat.input.setPlainText("When is the invoice due?")
    win.chat.submit()
    qtbot.waitUntil(lambda: not win.chat.busy, timeout=5000)
    assert len(shown) == 1 and isinstance(shown[0], ModelNotInstalled)
    dlg = errors.last_dialog()
    assert isinstance(dlg, FirstRunDialog) and dlg.needed_file == "/opt/models/x.gguf"
    assert win.chat.conversation.turns == []
    assert win.chat.input.toPlainText() == "When is the invoice due?"  # nothing lost
    dlg.close()


def test_unexpected_error_is_a_plain_message_box(qtbot, make_window, make_lib):
    lib = make_lib()
    win = make_window(lib, ask_fn=FakeAsk(lib, error=RuntimeError("boom <b>x</b>")))
    win.chat.set_kbs(["default"])
    win.chat.ask("anything")
    qtbot.waitUntil(lambda: isinstance(errors.last_dialog(), QMessageBox), timeout=5000)
    box = errors.last_dialog()
    assert box.text() == "Unexpected error: RuntimeError: boom <b>x</b>"
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert "report" in box.informativeText()
    box.close()


def test_cancelled_is_never_shown(qtbot, make_window, make_lib):
    assert errors.show_error(None, Cancelled()) is None
    lib = make_lib()
    win = make_window(lib, ask_fn=FakeAsk(lib, error=Cancelled()))
    win.chat.set_kbs(["default"])
    win.chat.ask("anything")
    qtbot.waitUntil(lambda: not win.chat.busy, timeout=5000)
    assert errors.last_dialog() is None
    assert win.chat.conversation.turns[-1].status == "stopped"


def test_settings_dialog_saves_settings(qtbot, gui_settings):
    runner = TaskRunner()
    dlg = SettingsDialog(gui_settings, runner)
    qtbot.addWidget(dlg)
    dlg.chunk_size.setValue(1000)
    dlg.recall.setValue(30)
    dlg.top_k.setValue(7)
    dlg.rerank_threshold.setValue(0.45)
    dlg.threads.setValue(4)
    dlg.llm_context.setValue(8192)
    dlg.language.setCurrentIndex(dlg.language.findData("zh"))
    dlg.qdrant_url.setText("http://localhost:6333")
    with qtbot.waitSignal(dlg.saved, timeout=2000) as saved:
        dlg.save()
    s = load_settings(gui_settings.data_dir)
    assert s == saved.args[0]
    assert (s.chunk.size, s.query.recall, s.query.top_k, s.query.rerank_threshold) == (1000, 30, 7, 0.45)
    assert (s.models.threads, s.models.llm_context, s.language, s.store.url) == (4, 8192, "zh", "http://localhost:6333")


def test_invalid_settings_are_refused_with_a_message(qtbot, gui_settings):
    dlg = SettingsDialog(gui_settings, TaskRunner())
    qtbot.addWidget(dlg)
    dlg.top_k.setValue(30)
    dlg.recall.setValue(10)  # recall must be >= top_k
    assert not dlg.save()
    box = errors.last_dialog()
    assert isinstance(box, QMessageBox) and "recall" in box.text()
    assert not gui_settings.settings_file.exists()
    box.close()


def test_model_check_reports_each_model(qtbot, gui_settings, tmp_path):
    s = gui_settings.replace(models=dataclasses.replace(
        gui_settings.models, embedder=ModelSpec("test/hash-embedder", "hash", "", 64),
        reranker=ModelSpec("none", "none", ""), llm=ModelSpec("x", "llama_cpp", str(tmp_path / "no.gguf"))))
    runner = TaskRunner()
    dlg = SettingsDialog(s, runner)
    qtbot.addWidget(dlg)
    dlg.check()
    qtbot.waitUntil(lambda: dlg.check_results is not None, timeout=20000)
    marks = {role: mark for role, mark, _ in dlg.check_results}
    assert marks == {"embedder": "ok", "reranker": "off", "verifier": "off", "reader": "off", "llm": "failed"}  # optional: off
    assert str(tmp_path / "no.gguf") in dlg.check_label.text()
    runner.shutdown()


def test_settings_from_the_window_reopen_the_library(qtbot, make_window, make_lib):
    opened = []

    def factory(settings):
        opened.append(settings)
        return make_lib(settings=settings)

    win = make_window(library_factory=factory)
    dlg = win.open_settings()
    dlg.top_k.setValue(3)
    with qtbot.waitSignal(win.settings_applied, timeout=5000):
        dlg.save()
    assert opened and opened[0].query.top_k == 3
    assert win.lib.settings.query.top_k == 3 and win.settings.query.top_k == 3


def test_a_base_built_with_another_embedder_offers_re_embedding(qtbot, make_window, make_lib, docs):
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.errors import EmbedderMismatch

    old = make_lib()
    old.ingest("default", [docs])
    old.set_metadata("default", [docs / "notes.txt"], tags=["people"])
    n_docs = len(old.manifest("default").documents())
    old.close()
    lib = make_lib(embedder=HashEmbedder(dim=32))  # the embedder was switched in the settings
    win = make_window(lib)
    win.chat.set_kbs(["default"])
    win.chat.ask("When is the invoice due?")
    qtbot.waitUntil(lambda: isinstance(errors.last_dialog(), QMessageBox), timeout=5000)
    box = errors.last_dialog()
    assert "was built with the embedder" in box.text()
    assert "kb reembed default" in box.informativeText()  # the hint names the base
    button = box.findChild(QPushButton, "reembedButton")
    assert button is not None and button.text() == "Re-embed default"
    with qtbot.waitSignal(win.ingest_finished, timeout=30000) as done:
        button.click()
        assert win.ingest_panel.title.text() == "Re-embedding default"
    report = done.args[0]
    assert report is not None and not report.cancelled and len(report.added) == n_docs
    assert lib.stats("default").dim == 32
    assert {r.path.rsplit("/", 1)[-1]: r.tags for r in lib.documents("default")}["notes.txt"] == ("people",)
    win.chat.ask("When is the invoice due?")  # answers now
    qtbot.waitUntil(lambda: not win.chat.busy, timeout=10000)
    assert win.chat.conversation.turns[-1].status == "answered"
    # an error that names no base (an archive built with another embedder) has no button
    other = errors.show_error(win, EmbedderMismatch("The archive was built with another embedder."),
                              reembed=win.reembed_kb)
    assert other.findChild(QPushButton, "reembedButton") is None
    other.close()


def test_settings_say_no_reranker_is_in_use_and_hide_its_threshold(qtbot, gui_settings):
    from desktop_kb.gui.settings_dialog import SettingsDialog
    from desktop_kb.gui.tasks import TaskRunner
    from desktop_kb.library.model_status import reranker_status, state

    runner = TaskRunner()
    dlg = SettingsDialog(gui_settings, runner)
    qtbot.addWidget(dlg)
    status = reranker_status(gui_settings)
    assert not status.installed and state(status) == "off"  # bge-reranker is not shipped
    assert dlg.rr_state.text().startswith("In use: none") and "hybrid search" in dlg.rr_state.text()
    form = dlg.rerank_threshold.parentWidget().layout()
    assert not form.isRowVisible(dlg.rerank_threshold)
    assert "Not in use" in status.message and "MISSING" not in status.message
