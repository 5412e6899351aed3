"""Adding documents: drag and drop, progress, cancel, failures, the document list, KB management."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_fakes import SlowEmbedder, write_docs
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from desktop_kb.gui import kb_panel

pytestmark = pytest.mark.gui


def drop(widget, paths: list[Path]) -> tuple[bool, bool]:
    """Drag ``paths`` onto ``widget`` and drop them, as the window system would."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, enter)
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)
    return enter.isAccepted(), event.isAccepted()


def test_drop_folder_shows_progress_and_lists_documents(qtbot, make_window, docs):
    win = make_window()
    progress = []
    win.ingest_panel.bar.valueChanged.connect(lambda v: progress.append(v))
    with qtbot.waitSignal(win.ingest_finished, timeout=30000) as done:
        # dropped on the question box: file drops go to the window, not into the text
        accepted = drop(win.chat.input, [docs])
    assert accepted == (True, True)
    assert win.chat.input.toPlainText() == ""
    report = done.args[0]
    assert report is not None and not report.cancelled
    assert sorted(Path(p).name for p in report.added) == ["invoice.md", "notes.txt"]
    # progress went through the worker's signals to the bar and the labels
    last = win.ingest_panel.last_progress
    assert last is not None and last.files_total == 3 and last.chunks_done >= 2
    assert progress and max(progress) == 3
    # failed files are listed with their reason
    failed = win.ingest_panel.failed_items()
    assert failed == ["empty.txt is empty."]  # the file's name said once, by the reason that begins with it
    qtbot.waitUntil(lambda: len(win.kb_panel.document_states()) == 3, timeout=5000)
    states = {Path(p).name: s for p, s in win.kb_panel.document_states().items()}
    assert states == {"invoice.md": "indexed", "notes.txt": "indexed", "empty.txt": "failed"}
    assert win.kb_panel.kb_names() == ["default"]
    assert "2 files" in win.kb_panel.stats_label.text() and "test/hash-embedder" in win.kb_panel.stats_label.text()


def test_drop_ignores_non_file_urls(qtbot, make_window):
    win = make_window()
    mime = QMimeData()
    mime.setUrls([QUrl("https://example.com/a.pdf")])
    enter = QDragEnterEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(win, enter)
    assert not enter.isAccepted()
    assert not win.ingesting


def test_cancel_during_ingest_keeps_finished_files(qtbot, make_window, make_lib, tmp_path):
    folder = write_docs(tmp_path / "many", extra=10)
    lib = make_lib(embedder=SlowEmbedder(0.3))
    win = make_window(lib)
    win.ingest_paths([str(folder)], kb="slow")
    qtbot.waitUntil(lambda: (win.ingest_panel.last_progress or None) is not None
                    and win.ingest_panel.last_progress.files_done >= 3, timeout=30000)  # empty.txt fails
    with qtbot.waitSignal(win.ingest_finished, timeout=15000) as done:
        qtbot.mouseClick(win.ingest_panel.cancel_btn, Qt.MouseButton.LeftButton)
    report = done.args[0]
    assert report is not None and report.cancelled
    total = 12  # indexable files (empty.txt fails)
    kept = len(report.added)
    assert 2 <= kept < total
    indexed = {d.path for d in lib.documents("slow")}
    assert indexed == set(report.added)  # every finished file stays indexed, nothing half-written
    qtbot.waitUntil(lambda: len(win.kb_panel.document_states()) >= kept, timeout=5000)
    assert "Cancelled" in win.ingest_panel.detail.text()
    assert not win.ingesting


def test_remove_file_from_document_list(qtbot, make_window, docs, monkeypatch):
    win = make_window()
    (docs / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0 a Word 97 file")
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.ingest_paths([str(docs)])
    qtbot.waitUntil(lambda: len(win.kb_panel.document_states()) == 3, timeout=5000)
    panel = win.ingest_panel  # done: folded to its summary line, the skipped file behind "Details (n)"
    assert panel.isVisible() and "Done." in panel.detail.text() and not panel.bar.isVisible()
    listed = len(panel.failed_items()) + len(panel.skipped_items())
    assert not panel.skipped_list.isVisible() and panel.details_btn.text() == f"Details ({listed})"
    qtbot.mouseClick(panel.details_btn, Qt.MouseButton.LeftButton)
    assert panel.skipped_list.isVisible() and "old.doc" in panel.skipped_items()[0]
    notes = str((docs / "notes.txt").resolve())
    win.kb_panel.select_paths([notes])
    assert win.kb_panel.remove_btn.isEnabled()
    asked = []
    monkeypatch.setattr(kb_panel, "confirm", lambda *a: asked.append(a) or True)
    with qtbot.waitSignal(win.documents_refreshed, timeout=10000):
        qtbot.mouseClick(win.kb_panel.remove_btn, Qt.MouseButton.LeftButton)
    assert asked and "notes.txt" in asked[0][2]
    qtbot.waitUntil(lambda: notes not in win.kb_panel.document_states(), timeout=5000)
    assert notes not in {d.path for d in win.lib.documents("default")}
    assert not panel.isVisible()  # its "Done. 3 added" is no longer true


def test_create_rename_delete_and_multi_select(qtbot, make_window, monkeypatch):
    win = make_window()
    for name in ("alpha", "beta"):
        with qtbot.waitSignal(win.kbs_refreshed, timeout=10000):
            win.create_kb(name)
    qtbot.waitUntil(lambda: win.kb_panel.kb_names() == ["alpha", "beta"], timeout=5000)

    # the ticks' meaning is said beside them; ask across both
    assert win.kb_panel.ask_hint.text().startswith("Questions go to the selected base.")
    win.kb_panel.set_checked(["alpha", "beta"])
    assert sorted(win.chat.kbs) == ["alpha", "beta"]
    assert win.kb_panel.ask_hint.text() == "Questions go to the ticked bases: alpha, beta."

    # rename through the panel's button (name dialog answered by the test)
    win.kb_panel.set_current_kb("alpha")
    monkeypatch.setattr(kb_panel, "ask_name", lambda *a: "gamma")
    with qtbot.waitSignal(win.kbs_refreshed, timeout=10000):
        qtbot.mouseClick(win.kb_panel.rename_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.kb_panel.kb_names() == ["beta", "gamma"], timeout=5000)
    assert win.lib.list_kbs() == ["beta", "gamma"]
    assert sorted(win.kb_panel.checked_kbs()) == ["beta", "gamma"]

    # delete asks first; "no" keeps it
    win.kb_panel.set_current_kb("beta")
    monkeypatch.setattr(kb_panel, "confirm", lambda *a: False)
    qtbot.mouseClick(win.kb_panel.delete_btn, Qt.MouseButton.LeftButton)
    assert not win.runner.running("delete")
    assert win.lib.list_kbs() == ["beta", "gamma"]
    monkeypatch.setattr(kb_panel, "confirm", lambda *a: True)
    with qtbot.waitSignal(win.kbs_refreshed, timeout=10000):
        qtbot.mouseClick(win.kb_panel.delete_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.kb_panel.kb_names() == ["gamma"], timeout=5000)
    assert win.lib.list_kbs() == ["gamma"]


def test_watched_folder_change_is_reindexed_in_the_background(qtbot, make_window, make_lib, gui_settings, docs):
    import dataclasses

    settings = gui_settings.replace(ingest=dataclasses.replace(gui_settings.ingest, watch=True))
    lib = make_lib(settings=settings)
    win = make_window(lib)
    win.watching.debounce = 1.0  # the file's create and write events land in one batch even on a busy machine
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.ingest_paths([str(docs)], kb="default")
    qtbot.waitUntil(lambda: win.watching.folders("default") == (docs.resolve(),), timeout=5000)
    new = docs / "watched-note.md"
    with qtbot.waitSignal(win.ingest_finished, timeout=60000, check_params_cb=lambda r: r is not None and bool(
            r.added or r.updated)) as done:
        new.write_text("# Watched\n\nThe watcher saw this note.\n", encoding="utf-8")
    report = done.args[0]
    assert [Path(p).name for p in report.added] == ["watched-note.md"] and not report.updated
    assert any(Path(r.path).name == "watched-note.md" for r in win.lib.documents("default"))
    win.shutdown()
    assert win.watching.folders("default") == ()
    win.close()
    lib.close()
    (docs / "while-closed.md").write_text("# Closed\n\nWritten while the app was closed.\n", encoding="utf-8")
    with qtbot.waitSignal(make_window(make_lib(settings=settings)).ingest_finished, timeout=60000) as scan:
        pass  # the start-up scan of the watched folders
    assert [Path(p).name for p in scan.args[0].added] == ["while-closed.md"]


def test_tags_and_owner_are_edited_from_the_document_list(qtbot, make_window, docs):
    win = make_window()
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.ingest_paths([str(docs)], kb="default")
    qtbot.waitUntil(lambda: len(win.kb_panel.document_states()) >= 2, timeout=5000)
    invoice = next(p for p in win.kb_panel.document_states() if p.endswith("invoice.md"))
    answers = iter([("finance, 2024", True), ("finance", True), ("ana", True), ("ignored", False)])
    win.ask_text = lambda *_a: next(answers)

    def edit(field: str) -> None:
        win.kb_panel.select_paths([invoice])
        before = win.runner.running("metadata")
        win.kb_panel._edit_metadata(field)
        assert not before
        qtbot.waitUntil(lambda: not win.runner.running("metadata") and not win.runner.running("documents"),
                        timeout=5000)

    row = lambda: next(r for r in win.lib.documents("default") if r.path == invoice)  # noqa: E731
    edit("tags")
    assert row().tags == ("finance", "2024")
    edit("tags")
    assert row().tags == ("finance",)
    edit("owner")
    assert row().owner == "ana"
    edit("owner")  # cancelled: nothing changes
    assert row().owner == "ana" and row().tags == ("finance",)
    item = next(win.kb_panel.docs.topLevelItem(i) for i in range(win.kb_panel.docs.topLevelItemCount())
                if win.kb_panel.docs.topLevelItem(i).text(0) == "invoice.md")
    assert "tags: finance" in item.toolTip(0) and "owner: ana" in item.toolTip(0)


def test_export_then_import_from_the_file_menu_actions(qtbot, make_window, docs, tmp_path):
    from desktop_kb.gui import archive_actions

    win = make_window()
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.ingest_paths([str(docs)], kb="default")
    assert win.export_action in win.menuBar().actions()[0].menu().actions()
    out = tmp_path / "default.dkb"
    with qtbot.waitSignal(archive_actions.run_export(win, "default", str(out)).signals.done, timeout=10000):
        pass
    assert out.is_file() and "Exported default" in win.statusBar().currentMessage()
    win.lib.rename_kb("default", "old")
    with qtbot.waitSignal(win.kbs_refreshed, timeout=10000, check_params_cb=lambda names: "default" in names):
        archive_actions.run_import(win, str(out))
    assert sorted(win.lib.list_kbs()) == ["default", "old"] and "Imported default.dkb" in win.statusBar().currentMessage()


def test_a_full_disk_is_said_and_the_app_goes_on(qtbot, make_window, docs, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from desktop_kb import diskspace

    win = make_window()
    real = diskspace.free_bytes
    full = {"on": True}
    monkeypatch.setattr(diskspace, "free_bytes", lambda p: 4096 if full["on"] else real(p))
    with qtbot.waitSignal(win.ingest_finished, timeout=30000) as done:
        win.ingest_paths([str(docs)])
    assert done.args[0] is None  # stopped, no report
    assert "Not enough free space in" in win.ingest_panel.detail.text()
    boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
    assert boxes and "Not enough free space in" in boxes[0].text() and "Free some space" in boxes[0].informativeText()
    boxes[0].close()
    qtbot.waitUntil(lambda: not win.ingesting, timeout=5000)
    assert win.isVisible()
    full["on"] = False  # space freed: the same window adds the files
    with qtbot.waitSignal(win.ingest_finished, timeout=30000) as done:
        win.ingest_paths([str(docs)])
    assert done.args[0] is not None and len(done.args[0].added) == 2


def test_a_damaged_base_shows_what_is_wrong_and_repairs(qtbot, make_window, docs, settings):
    from PySide6.QtWidgets import QMessageBox

    win = make_window()
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.ingest_paths([str(docs)])
    qtbot.waitUntil(lambda: len(win.kb_panel.document_states()) == 3, timeout=5000)
    kb = win.kb_panel.current_kb()
    shard = win.lib.settings.kbs_dir / kb / "shard"
    for page in (shard / "segments").glob("*/payload_storage/page_0.dat"):
        with page.open("r+b") as fh:
            fh.truncate(100)  # damaged under the running app
    win.lib.store.close()  # as after a restart: the damaged files are read again
    win.kb_panel.check_action.trigger()  # the list's context menu: "Check and repair…"
    qtbot.waitUntil(lambda: getattr(win, "damaged_dialog", None) is not None and win.damaged_dialog.isVisible(),
                    timeout=10000)
    dlg = win.damaged_dialog
    assert "damaged" in dlg.text() and "The index cannot be read" in dlg.informativeText()
    assert dlg.repair_btn is not None
    assert win.ingest_paths([str(docs)], kb=kb) is None  # read-only until repaired: nothing written
    assert "repair it first" in win.statusBar().currentMessage()
    qtbot.mouseClick(dlg.repair_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: getattr(win, "repaired_dialog", None) is not None and win.repaired_dialog.isVisible(),
                    timeout=20000)
    assert "repaired" in win.repaired_dialog.text() and "rebuilt the index" in win.repaired_dialog.informativeText()
    assert win.lib.check_kb(kb).ok and win.lib.search("invoice", kbs=[kb])
    assert kb not in win.damaged  # writable again
    assert isinstance(win.repaired_dialog, QMessageBox)


def test_a_sync_reports_like_a_sync_and_only_when_something_changed(qtbot, make_window, docs):
    win = make_window()
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.ingest_paths([str(docs)], kb="default")
    win.ingest_panel.hide()
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.sync_paths([str(docs)], "default")  # as at start-up: nothing changed
    assert not win.ingest_panel.isVisible()
    assert win.statusBar().currentMessage() == "default is up to date."
    (docs / "notes.txt").write_text("Changed notes: the office moves to Lyon.\n", encoding="utf-8")
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.sync_paths([str(docs)], "default")
    assert win.ingest_panel.isVisible()
    assert win.ingest_panel.title.text() == "Updated default"
    assert "1 file changed, updated" in win.ingest_panel.detail.text()
    assert "could not be read" not in win.ingest_panel.detail.text()  # empty.txt still fails: no news
    (docs / "broken.txt").write_bytes(b"")
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.sync_paths([str(docs)], "default")
    assert win.statusBar().currentMessage() == "default: 1 could not be read."


def test_an_empty_base_says_what_to_drop_and_what_is_read(qtbot, make_window):
    win = make_window()
    with qtbot.waitSignal(win.documents_refreshed, timeout=10000):
        win.create_kb("empty")
        qtbot.waitUntil(lambda: win.kb_panel.current_kb() == "empty", timeout=5000)
        win.refresh_documents()
    text = win.kb_panel.stats_label.text()
    assert "empty is empty: drop files or folders" in text and "PDF, Word" in text and "by OCR" in text


def test_a_removed_file_stays_removed_after_a_restart_and_can_be_put_back(qtbot, make_window, make_lib, docs,
                                                                          monkeypatch, gui_settings):
    import dataclasses

    from desktop_kb.gui import removed_dialog

    lib = make_lib()
    win = make_window(lib)
    with qtbot.waitSignal(win.ingest_finished, timeout=30000):
        win.ingest_paths([str(docs)])
    notes = str((docs / "notes.txt").resolve())
    qtbot.waitUntil(lambda: notes in win.kb_panel.document_states(), timeout=5000)
    win.kb_panel.select_paths([notes])
    monkeypatch.setattr(kb_panel, "confirm", lambda *a: True)
    with qtbot.waitSignal(win.documents_refreshed, timeout=10000):
        qtbot.mouseClick(win.kb_panel.remove_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.statusBar().currentMessage() == "Removed 1 file.", timeout=5000)
    win.close()
    lib.close()
    # quit and start again on the same data folder: the start-up update re-scans the folder
    watching = gui_settings.replace(ingest=dataclasses.replace(gui_settings.ingest, watch=True))
    lib2 = make_lib(settings=watching)
    reports = []
    win2 = make_window(lib2)
    win2.ingest_finished.connect(reports.append)
    qtbot.waitUntil(lambda: bool(reports) or not win2.runner.running("ingest"), timeout=30000)
    qtbot.waitUntil(lambda: not win2.runner.running("ingest"), timeout=30000)
    assert win2.watching.folders("default")  # the start-up update ran over the folder
    if reports:  # the scan passed it over, and says nothing changed
        assert {Path(p).name for p in reports[-1].excluded} == {"notes.txt"} and not reports[-1].added
    assert {Path(d.path).name for d in lib2.documents("default")} == {"invoice.md"}
    # the Removed… list shows it; putting it back adds it again
    chosen = []

    def answer(dialog):
        assert [dialog.list.item(i).toolTip() for i in range(dialog.list.count())] == [notes]
        dialog.list.item(0).setSelected(True)
        chosen.append(dialog.chosen())
        return 1

    monkeypatch.setattr(removed_dialog.RemovedDialog, "exec", answer)
    win2.kb_panel.set_current_kb("default")
    with qtbot.waitSignal(win2.ingest_finished, timeout=30000):
        qtbot.mouseClick(win2.kb_panel.removed_btn, Qt.MouseButton.LeftButton)
    assert chosen == [[notes]]
    assert notes in {d.path for d in lib2.documents("default")} and lib2.excluded("default") == []
