"""The main window: knowledge bases and documents on the left, the chat in the middle, the
footnote viewer on the right. Drop files or folders anywhere to add them.

The window is put together from modules of its own: ``window_menus`` (actions and menus),
``window_kbs`` (the knowledge bases and their documents), ``window_ingest`` (adding documents);
the last two are mixins of this class, so none of them keeps a reference back to the window.

Every Library call runs on the task runner (the Library serialises store access internally);
results and errors come back as signals; errors are shown only through ``gui.errors``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QByteArray, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ..errors import DesktopKBError
from ..library.kb import Library
from ..settings import Settings
from ..types import Citation
from . import errors
from .chat import AskFn, ChatWidget
from .conversations import ConversationStore
from .doc_metadata import edit_metadata
from .enriching import Enriching
from .filter_bar import FilterBar, FilterSpec
from .i18n import tr
from .ingest_panel import IngestPanel
from .kb_panel import KBPanel
from .local_api import LocalApi
from .menu_entry import offer_menu_entry
from .settings_dialog import SettingsDialog
from .state import GuiState, remember_data_dir
from .tasks import TaskHandle, TaskRunner
from .toc_tree import TocTree
from .transcript_view import place_at, restore_place
from .viewer import ViewerPane
from .watching import Watching
from .window_ingest import DEFAULT_KB, IngestWiring, local_paths
from .window_kbs import KBWiring
from .window_menus import build_actions

__all__ = ["DEFAULT_KB", "MainWindow", "local_paths"]

log = logging.getLogger(__name__)
LibraryFactory = Callable[[Settings], Library]


class MainWindow(KBWiring, IngestWiring, QMainWindow):
    kbs_refreshed = Signal(list)  # knowledge base names, after each refresh
    documents_refreshed = Signal(str)  # the knowledge base whose documents were just listed
    ingest_finished = Signal(object)  # IngestReport, or None when it ended without one
    viewer_opened = Signal(object)  # Citation
    settings_applied = Signal(object)  # Settings

    def __init__(
        self,
        library: Library,
        *,
        ask_fn: AskFn | None = None,
        library_factory: LibraryFactory | None = None,
        runner: TaskRunner | None = None,
        preload: bool = False,
        owns_library: bool = True,
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.lib = library
        self.settings = library.settings
        self.library_factory = library_factory or (lambda s: Library.open(s))
        self.owns_library = owns_library
        self.runner = runner or TaskRunner(self)
        self.state = GuiState(self.settings.data_dir)
        self.conversations = ConversationStore(self.settings.data_dir)
        self._ingest: TaskHandle | None = None
        self._ingest_queue: list[tuple[str, list[str] | None, bool]] = []  # (kb, paths, sync); None: re-embed kb
        self.damaged: set[str] = set()  # knowledge bases kb check found damaged: read-only until repaired
        self._refresh_gen = 0
        self._docs_gen = 0
        self._view_gen = 0
        self._select_after_refresh: str | None = None
        self._check_after_refresh: list[str] | None = None
        self._pending_settings: Settings | None = None
        self.restart_needed = False
        self._shut_down = False

        self.setWindowTitle(tr("desktop-kb — answers from your documents"))
        self.setAcceptDrops(True)
        self._build_layout(ask_fn or self._library_ask)
        self._update_model_label()

        build_actions(self)
        self._connect()
        self._restore_state()
        # started from the AppImage: offer a menu entry once, after the window is up
        QTimer.singleShot(800, self, self._offer_menu_entry)
        self._doc_refresh_timer = QTimer(self)
        self._doc_refresh_timer.setSingleShot(True)
        self._doc_refresh_timer.setInterval(800)
        self._doc_refresh_timer.timeout.connect(self.refresh_documents)
        self.refresh()
        self.local_api = LocalApi()  # "let other apps on this computer ask" (off by default)
        self.local_api.apply(self.settings, self.lib)
        if preload:
            self.preload_models()

    # -- setup ---------------------------------------------------------------------------------
    def _build_layout(self, ask_fn: AskFn) -> None:
        """The three panes (knowledge bases and ingest; filters and chat; the viewer) and the
        status bar's labels."""
        self.kb_panel = KBPanel()
        self.ingest_panel = IngestPanel()
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.kb_panel, 1)
        left_layout.addWidget(self.ingest_panel)
        self.chat = ChatWidget(self.runner, ask_fn, self.conversations,
                               history_turns=self.settings.query.history_turns)
        self.chat.models_dir = self.settings.models_dir
        self.chat.reembed = self.reembed_kb
        self.chat.document_text = lambda kb, doc_id: self.lib.document_markdown(kb, doc_id)  # quotes in exports
        self.filter_bar = FilterBar()
        self._filter_spec = FilterSpec()
        self.ask_text: Any = None  # tests replace the text prompt of the metadata edit
        self.filter_bar.changed.connect(self._on_filter_changed)
        self.chat.filter_label = lambda: self._filter_spec.describe()
        middle = QWidget()
        middle_layout = QVBoxLayout(middle)
        middle_layout.setContentsMargins(0, 0, 0, 0)
        middle_layout.addWidget(self.filter_bar)
        middle_layout.addWidget(self.chat, 1)
        self.viewer = ViewerPane()
        self.viewer.hide()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(left)
        self.splitter.addWidget(middle)
        self.splitter.addWidget(self.viewer)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 1)
        self.splitter.setChildrenCollapsible(False)
        self.setCentralWidget(self.splitter)
        self.model_label = QLabel()
        self.statusBar().addPermanentWidget(self.model_label)
        self.ranking_label = QLabel()  # quiet and permanent: how passages are ranked
        self.ranking_label.setObjectName("rankingLabel")
        self.ranking_label.setStyleSheet("color: #777;")
        self.statusBar().addPermanentWidget(self.ranking_label)

    def _connect(self) -> None:
        p = self.kb_panel
        p.create_requested.connect(self.create_kb)
        p.rename_requested.connect(self.rename_kb)
        p.delete_requested.connect(self.delete_kb)
        p.check_requested.connect(self.check_kb)
        p.current_changed.connect(lambda _name: self.refresh_documents())
        p.selection_changed.connect(self._on_selection)
        p.add_folder_requested.connect(self.add_folder_dialog)
        p.add_files_requested.connect(self.add_files_dialog)
        p.remove_files_requested.connect(self.remove_files)
        p.removed_requested.connect(self.show_removed)
        p.metadata_requested.connect(lambda kb, paths, field: edit_metadata(self, kb, paths, field))
        self.ingest_panel.cancel_requested.connect(self.cancel_ingest)
        self.chat.citation_clicked.connect(self.open_citation)
        self.chat.busy_changed.connect(lambda _b: self._update_busy())
        self.viewer.closed.connect(self._on_viewer_closed)
        self.runner.task_done.connect(lambda _h: self._maybe_apply_settings())
        self.toc_tree = TocTree(self.kb_panel.docs, self.kb_panel.current_kb, self.runner, self.lib.document_toc)
        self.toc_tree.section_clicked.connect(self.open_citation)
        self.documents_refreshed.connect(self.toc_tree.decorate)
        self.enriching = Enriching(self.lib, self.runner, self)
        self.enriching.message.connect(self._show_enrich_status)
        self.enriching.finished.connect(self._on_enriched)
        self.watching = Watching(self.lib, self)
        self.watching.changed.connect(lambda kb, paths: None if self._shut_down or not paths
                                      else self.sync_paths(paths, kb))

    def _restore_state(self) -> None:
        geometry = self.state.get("geometry")
        if isinstance(geometry, str) and geometry:
            self.restoreGeometry(QByteArray.fromHex(geometry.encode()))
        else:
            self.resize(1280, 800)
        sizes = self.state.get("splitter")
        if isinstance(sizes, list) and len(sizes) == 3 and all(isinstance(s, int) for s in sizes):
            self.splitter.setSizes([sizes[0], sizes[1], 0])
        else:
            self.splitter.setSizes([330, 900, 0])
        self._select_after_refresh = self.state.get("current_kb")

    def save_state(self) -> None:
        sizes = self.splitter.sizes()
        self.state.set(geometry=bytes(self.saveGeometry().toHex()).decode(), splitter=sizes,
                       checked_kbs=self.kb_panel.checked_kbs(), current_kb=self.kb_panel.current_kb())
        self.state.save()

    def _update_model_label(self) -> None:
        m = self.settings.models
        self.model_label.setText(tr("Models: {emb} · {llm}", emb=m.embedder.id, llm=m.llm.id or "—"))

    # -- background helpers --------------------------------------------------------------------------
    def _run(self, fn: Callable[[Any], Any], name: str, on_done: Callable[[Any], None] | None = None,
             on_error: Callable[[BaseException], None] | None = None) -> TaskHandle:
        return self.runner.run(fn, name, finished=on_done, failed=on_error or self.show_error)

    def _offer_menu_entry(self) -> None:
        if self.isVisible() and not self._shut_down:
            offer_menu_entry(self, self.state)

    def show_error(self, exc: BaseException) -> None:
        errors.show_error(self, exc, models_dir=self.settings.models_dir, reembed=self.reembed_kb)

    def _on_filter_changed(self) -> None:
        self._filter_spec = self.filter_bar.spec()  # immutable: the answer worker reads it

    def _library_ask(self, question: str, kbs: list[str], history: list[tuple[str, str]],
                     on_token: Callable[[str], None], cancel: Any, on_restart: Callable[[], None],
                     on_stage: Callable[[str, int], None] | None = None) -> Any:
        spec = self._filter_spec
        rows = [r for kb in kbs for r in self.lib.documents(kb)] if spec.ext else []
        return self.lib.ask(question, kbs=kbs, flt=spec.to_filter(rows), history=history, on_token=on_token,
                            on_restart=on_restart, cancel=cancel, on_stage=on_stage)

    def _show_enrich_status(self, text: str) -> None:
        self.statusBar().showMessage(text, 10000)

    def _on_enriched(self, kb: str) -> None:
        if kb == self.kb_panel.current_kb():
            self.refresh_documents()

    def show_ranking(self, has_reranker: bool) -> None:
        """The status bar says how passages are ranked; without a reranker that is the normal
        hybrid ranking, said once here rather than on every answer."""
        if has_reranker:
            self.ranking_label.setText(tr("Ranking: hybrid search + reranker"))
            self.ranking_label.setToolTip("")
        else:
            self.ranking_label.setText(tr("Ranking: hybrid search"))
            self.ranking_label.setToolTip(tr(
                "Passages are ranked by meaning and by keywords together. A reranker model, if you "
                "install one (see the README), reorders them more finely."))

    def preload_models(self) -> TaskHandle:
        """Load the models and prefill the fixed system prompts in the background
        (``Library.warm_up``), so the first question is as fast as later ones and a missing model
        is reported at start (the first-run dialog)."""
        lib = self.lib

        def load(ctx: Any) -> bool:
            lib.warm_up(cancel=ctx.cancel)
            return lib.reranker is not None

        def loaded(has_reranker: Any) -> None:
            self.show_ranking(bool(has_reranker))

        return self._run(load, "preload", loaded)

    # -- footnotes -------------------------------------------------------------------------------------
    def open_citation(self, citation: Citation, context: str = "") -> TaskHandle:
        """Show a cited passage in the viewer; ``context`` (the citing sentence) picks the PDF page
        when the citation has no quote."""
        self._view_gen += 1
        gen = self._view_gen
        lib = self.lib

        def shown(loaded: Any) -> None:
            if gen != self._view_gen:
                return
            text, ocr = loaded
            if not self.viewer.isVisible():
                total = sum(self.splitter.sizes()) or self.width()
                left = self.splitter.sizes()[0] or 330
                place = self.chat.click_place or place_at(self.chat.transcript)
                self.chat.click_place = None  # one click's place, not a later opening's (the contents tree)
                self.viewer.show()
                rest = max(0, total - left)
                self.splitter.setSizes([left, rest * 52 // 100, rest * 48 // 100])
                # the transcript narrows and reflows: the answer read stays where it was
                QTimer.singleShot(0, self, lambda: restore_place(self.chat.transcript, place))
            self.viewer.show_citation(citation, str(text), context, ocr)
            self.viewer_opened.emit(citation)

        def load(_ctx: Any) -> tuple[str, Any]:
            return lib.document_markdown(citation.kb, citation.doc_id), lib.document_ocr(citation.kb, citation.doc_id)

        return self._run(load, "document", shown)

    def _close_viewer_for(self, kb: str) -> None:
        if self.viewer.isVisible() and self.viewer.citation is not None and self.viewer.citation.kb == kb:
            self.viewer.close_viewer()

    def _on_viewer_closed(self) -> None:
        sizes = self.splitter.sizes()
        self.splitter.setSizes([sizes[0], sizes[1] + sizes[2], 0])

    # -- settings --------------------------------------------------------------------------------------
    def open_settings(self) -> SettingsDialog:
        dlg = SettingsDialog(self.settings, self.runner, self)
        dlg.saved.connect(self.apply_settings)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.open()
        return dlg

    def apply_settings(self, new: Settings) -> None:
        """Use saved settings: a new Library is opened once no work is running. A new data folder,
        store or language needs a restart."""
        old = self.settings
        if (new.data_dir != old.data_dir or new.store != old.store or new.language != old.language):
            self.restart_needed = True
            remember_data_dir(new.data_dir)
            errors.show_info(self, tr("Settings saved"),
                             tr("Restart desktop-kb to use the new data folder, store or language."))
            if new.data_dir != old.data_dir:
                return  # keep working on the current folder until the restart
        self._pending_settings = new
        self._maybe_apply_settings()

    def _maybe_apply_settings(self) -> None:
        new = self._pending_settings
        if new is None or self.runner.running():
            return  # applied when the last task ends
        self._pending_settings = None
        keep_store = new.data_dir == self.settings.data_dir and new.store == self.settings.store
        try:
            if self.owns_library:
                self.lib.close()
            self.lib = self.library_factory(new if keep_store else self.settings)
        except DesktopKBError as exc:
            self.show_error(exc)
            return
        self.settings = self.lib.settings
        self.chat.history_turns = self.settings.query.history_turns
        self.owns_library = True
        self._update_model_label()
        self.refresh()
        self.local_api.apply(self.settings, self.lib)  # on the new Library
        self.settings_applied.emit(self.settings)

    def about(self) -> None:
        errors.show_info(self, tr("About desktop-kb"), tr(
            "desktop-kb answers questions from your own documents, offline. "
            "Every claim is cited; click a footnote to see the passage.\n\nData folder: {path}",
            path=str(self.settings.data_dir)))

    # -- closing ---------------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Save the window state, stop every task and release the Library (once)."""
        if self._shut_down:
            return
        self._shut_down = True
        self.save_state()
        self.chat.stop()
        self.local_api.stop()
        self.watching.stop()
        self._ingest_queue.clear()
        self.runner.shutdown(10_000)  # the core stops at its next cancel check
        if self.owns_library:
            self.lib.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)
