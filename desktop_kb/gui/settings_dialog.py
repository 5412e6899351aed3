"""Settings: data folder, language, model files (with a load check), chunking, retrieval and
generation limits, optional Qdrant server. Saved with :func:`desktop_kb.settings.save_settings`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..errors import DesktopKBError
from ..library.factory import EMBEDDER_BACKENDS, LLM_BACKENDS, RERANKER_BACKENDS
from ..settings import ModelSpec, Settings, save_settings
from . import errors
from .file_dialogs import existing_directory, open_file_name
from .i18n import tr
from .tasks import TaskContext, TaskRunner

__all__ = ["SettingsDialog", "check_models"]



def check_models(settings: Settings, ctx: TaskContext | None = None) -> list[tuple[str, str, str]]:
    """Load each configured model once (``desktop_kb.library.model_status``): [(role, mark, message)] with
    mark "ok", "failed" or "off". Runs in a worker; slow for the LLM."""
    from ..library.model_status import model_status

    if ctx is not None:
        ctx.cancel.raise_if_cancelled()
    out = []
    for st in model_status(settings, check_load=True):
        if st.loadable is True:
            mark = "ok"
        elif st.loadable is False or (not st.installed and st.role not in ("reranker", "verifier", "reader")):
            mark = "failed"
        else:
            mark = "off"  # reranker or verifier turned off or not installed: answers still work
        out.append((st.role, mark, f"{st.message} ({st.path})" if st.path and mark == "failed" else st.message))
    return out


class _PathEdit(QWidget):
    def __init__(self, text: str, *, folder: bool, filter: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit(text)
        self.edit.setPlaceholderText(tr("(default)"))
        row.addWidget(self.edit, 1)
        btn = QPushButton(tr("Browse…"))
        btn.clicked.connect(self._browse)
        row.addWidget(btn)
        self._folder = folder
        self._filter = filter

    def _browse(self) -> None:
        start = self.edit.text() or str(Path.home())
        if self._folder:
            path = existing_directory(self, tr("Choose a folder"), start)
        else:
            path = open_file_name(self, tr("Choose a file"), start, self._filter)
        if path:
            self.edit.setText(path)

    def text(self) -> str:
        return self.edit.text().strip()


class SettingsDialog(QDialog):
    saved = Signal(object)  # the new Settings

    def __init__(self, settings: Settings, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle(tr("Settings"))
        self.settings = settings
        self.runner = runner
        self.check_results: list[tuple[str, str, str]] | None = None
        self.tabs = tabs = QTabWidget()
        tabs.addTab(self._general_tab(settings), tr("General"))
        tabs.addTab(self._models_tab(settings), tr("Models"))
        tabs.addTab(self._search_tab(settings), tr("Indexing and search"))

        layout = QVBoxLayout(self)
        layout.addWidget(tabs)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(620, 520)

    def _general_tab(self, settings: Settings) -> QWidget:
        st = settings.store
        general = QWidget()
        f = QFormLayout(general)
        self.data_dir = _PathEdit(str(settings.data_dir), folder=True)
        f.addRow(tr("Data folder:"), self.data_dir)
        self.language = QComboBox()
        self.language.addItem("English", "en")
        self.language.addItem("中文", "zh")
        self.language.setCurrentIndex(max(0, self.language.findData(settings.language)))
        f.addRow(tr("Language:"), self.language)
        self.qdrant_url = QLineEdit(st.url)
        self.qdrant_url.setPlaceholderText(tr("empty = built-in store (recommended)"))
        f.addRow(tr("Qdrant server URL:"), self.qdrant_url)
        self.qdrant_key = QLineEdit(st.api_key)
        self.qdrant_key.setEchoMode(QLineEdit.EchoMode.Password)
        f.addRow(tr("Qdrant API key:"), self.qdrant_key)
        note = QLabel(tr("A new data folder, language or store is used after a restart."))
        note.setWordWrap(True)
        note.setStyleSheet("color: #666;")
        f.addRow(note)
        self.api_enabled = QCheckBox(tr("Let other apps on this computer ask"))
        self.api_enabled.setChecked(settings.api.enabled)
        f.addRow(self.api_enabled)
        self.api_port = self._spin(1024, 65535, settings.api.port)
        tokens = QPushButton(tr("API tokens…"))
        tokens.clicked.connect(self.open_tokens)
        row = QHBoxLayout()
        row.addWidget(self.api_port)
        row.addWidget(tokens)
        f.addRow(tr("API port (127.0.0.1):"), row)
        return general

    def open_tokens(self) -> QDialog:
        from .local_api import TokenDialog

        dlg = TokenDialog(self.settings.data_dir, self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.open()
        return dlg

    def _models_tab(self, settings: Settings) -> QWidget:
        m = settings.models
        models = QWidget()
        f = QFormLayout(models)
        self.emb_backend = self._combo(EMBEDDER_BACKENDS, m.embedder.backend)
        self.emb_id = QLineEdit(m.embedder.id)
        self.emb_path = _PathEdit(m.embedder.path, folder=True)
        f.addRow(tr("Embedder backend:"), self.emb_backend)
        f.addRow(tr("Embedder model id:"), self.emb_id)
        f.addRow(tr("Embedder folder:"), self.emb_path)
        self.rr_backend = self._combo(RERANKER_BACKENDS, m.reranker.backend)
        self.rr_id = QLineEdit(m.reranker.id)
        self.rr_path = _PathEdit(m.reranker.path, folder=True)
        f.addRow(tr("Reranker backend:"), self.rr_backend)
        f.addRow(tr("Reranker model id:"), self.rr_id)
        f.addRow(tr("Reranker folder:"), self.rr_path)
        from ..library.model_status import reranker_status

        rr = reranker_status(settings)
        self.reranker_in_use = rr.installed and rr.loadable is not False
        self.rr_state = QLabel(tr("In use: {model}", model=rr.id) if self.reranker_in_use else tr(
            "In use: none — answers are ranked by hybrid search (BM25 and e5-small) without a reranker. "
            "desktop-kb's own cross-encoder is off by default: it does not yet measurably improve the ranking."))
        self.rr_state.setObjectName("rerankerInUse")
        self.rr_state.setWordWrap(True)
        self.rr_state.setTextFormat(Qt.TextFormat.PlainText)
        self.rr_state.setStyleSheet("color: #555;")
        f.addRow(self.rr_state)
        self.llm_backend = self._combo(LLM_BACKENDS, m.llm.backend)
        self.llm_id = QLineEdit(m.llm.id)
        self.llm_path = _PathEdit(m.llm.path, folder=False, filter="GGUF (*.gguf)")
        f.addRow(tr("LLM backend:"), self.llm_backend)
        f.addRow(tr("LLM model id:"), self.llm_id)
        f.addRow(tr("LLM file (.gguf):"), self.llm_path)
        self.threads = self._spin(1, 128, m.threads)
        f.addRow(tr("CPU threads:"), self.threads)
        self.llm_context = self._spin(512, 131072, m.llm_context, step=512)
        f.addRow(tr("LLM context size (tokens):"), self.llm_context)
        self.check_btn = QPushButton(tr("Check that the models load"))
        self.check_btn.clicked.connect(self.check)
        f.addRow(self.check_btn)
        self.check_label = QLabel(tr("Models folder: {path}", path=str(settings.models_dir)))
        self.check_label.setObjectName("modelCheck")
        self.check_label.setWordWrap(True)
        self.check_label.setTextFormat(Qt.TextFormat.PlainText)
        self.check_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        f.addRow(self.check_label)
        return models

    def _search_tab(self, settings: Settings) -> QWidget:
        c, q = settings.chunk, settings.query
        search = QWidget()
        f = QFormLayout(search)
        self.chunk_size = self._spin(100, 10000, c.size, step=50)
        self.chunk_overlap = self._spin(0, 5000, c.overlap, step=10)
        f.addRow(tr("Chunk size (characters):"), self.chunk_size)
        f.addRow(tr("Chunk overlap (characters):"), self.chunk_overlap)
        self.recall = self._spin(1, 500, q.recall)
        self.top_k = self._spin(1, 50, q.top_k)
        f.addRow(tr("Recall (passages retrieved):"), self.recall)
        f.addRow(tr("Top-k (passages given to the LLM):"), self.top_k)
        self.rerank_threshold = QDoubleSpinBox()
        self.rerank_threshold.setRange(0.0, 1.0)
        self.rerank_threshold.setSingleStep(0.05)
        self.rerank_threshold.setDecimals(2)
        self.rerank_threshold.setValue(q.rerank_threshold)
        f.addRow(tr("Rerank threshold:"), self.rerank_threshold)
        f.setRowVisible(self.rerank_threshold, self.reranker_in_use)  # no reranker: its threshold means nothing
        self.max_answer_tokens = self._spin(32, 8192, q.max_answer_tokens, step=32)
        f.addRow(tr("Longest answer (tokens):"), self.max_answer_tokens)
        warn = QLabel(tr("Changing the chunk size re-indexes every file of a knowledge base the next time "
                         "documents are added to it."))
        warn.setWordWrap(True)
        warn.setStyleSheet("color: #666;")
        f.addRow(warn)
        return search

    @staticmethod
    def _combo(choices: tuple[str, ...], current: str) -> QComboBox:
        box = QComboBox()
        box.addItems(list(choices))
        if current not in choices:
            box.addItem(current)
        box.setCurrentText(current)
        return box

    @staticmethod
    def _spin(lo: int, hi: int, value: int, step: int = 1) -> QSpinBox:
        box = QSpinBox()
        box.setRange(lo, hi)
        box.setSingleStep(step)
        box.setValue(value)
        return box

    def build_settings(self) -> Settings:
        s = self.settings
        m = s.models
        models = dataclasses.replace(
            m,
            embedder=ModelSpec(self.emb_id.text().strip(), self.emb_backend.currentText(), self.emb_path.text(),
                               m.embedder.dim if self.emb_id.text().strip() == m.embedder.id else 0),
            reranker=ModelSpec(self.rr_id.text().strip(), self.rr_backend.currentText(), self.rr_path.text()),
            llm=ModelSpec(self.llm_id.text().strip(), self.llm_backend.currentText(), self.llm_path.text()),
            threads=self.threads.value(), llm_context=self.llm_context.value(),
        )
        data_dir = Path(self.data_dir.text()).expanduser() if self.data_dir.text() else s.data_dir
        return s.replace(
            data_dir=data_dir, language=str(self.language.currentData()), models=models,
            chunk=dataclasses.replace(s.chunk, size=self.chunk_size.value(), overlap=self.chunk_overlap.value()),
            query=dataclasses.replace(s.query, recall=self.recall.value(), top_k=self.top_k.value(),
                                      rerank_threshold=round(self.rerank_threshold.value(), 3),
                                      max_answer_tokens=self.max_answer_tokens.value()),
            store=dataclasses.replace(s.store, url=self.qdrant_url.text().strip(),
                                      api_key=self.qdrant_key.text()),
            api=dataclasses.replace(s.api, enabled=self.api_enabled.isChecked(), port=self.api_port.value()),
        )

    def save(self) -> bool:
        try:
            new = self.build_settings()
            save_settings(new)
        except (DesktopKBError, OSError) as exc:
            errors.show_error(self, exc, title=tr("Settings not saved"))
            return False
        self.settings = new
        self.saved.emit(new)
        self.accept()
        return True

    def check(self) -> None:
        try:
            candidate = self.build_settings()
        except DesktopKBError as exc:
            errors.show_error(self, exc)
            return
        self.check_btn.setEnabled(False)
        self.check_label.setText(tr("Loading the models… (this can take a minute)"))
        self.runner.run(lambda ctx: check_models(candidate, ctx), "check-models", finished=self._on_checked,
                        failed=self._on_check_failed)

    def _on_check_failed(self, exc: BaseException) -> None:
        self.check_btn.setEnabled(True)
        errors.show_error(self, exc)

    def _on_checked(self, results: Any) -> None:
        self.check_results = list(results)
        names = {"embedder": tr("Embedder"), "reranker": tr("Reranker"), "verifier": tr("Verifier"), "reader": tr("Reader"), "llm": tr("LLM"),
                 "small_llm": tr("Small LLM")}
        marks = {"ok": "✔", "failed": "✘", "off": "–"}
        self.check_label.setText("\n".join(
            f"{marks[mark]} {names.get(role, role)}: {msg}" for role, mark, msg in self.check_results))
        self.check_btn.setEnabled(True)
