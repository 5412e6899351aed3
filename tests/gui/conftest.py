"""GUI tests: the real main window, offscreen, on a Library with deterministic fakes."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("pytestqt")

sys.path.insert(0, str(Path(__file__).parent))

from gui_fakes import FakeGenerator, make_fake_ask, write_docs

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.library.kb import Library
from desktop_kb.settings import Settings


@pytest.fixture(autouse=True)
def _english_ui() -> Iterator[None]:
    from desktop_kb.gui.i18n import set_language

    set_language("en")
    yield
    set_language("en")


@pytest.fixture
def gui_settings(tmp_path: Path) -> Settings:
    s = Settings(data_dir=tmp_path / "data")
    # the hash embedder's cosines are meaningless: never refuse on a weak dense score; folder watch
    # only where a test turns it on (tests edit their folders)
    return s.replace(query=dataclasses.replace(s.query, dense_threshold=0.0),
                     ingest=dataclasses.replace(s.ingest, watch=False))


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write_docs(tmp_path / "docs")


@pytest.fixture
def make_lib(gui_settings: Settings) -> Iterator[Callable[..., Library]]:
    libs: list[Library] = []

    def make(embedder=None, generator: object = "fake", settings: Settings | None = None) -> Library:
        """generator=None: none injected (the real factory builds it from the settings)."""
        lib = Library.open(settings or gui_settings, embedder=embedder or HashEmbedder(), reranker=None,
                           generator=FakeGenerator() if generator == "fake" else generator)
        libs.append(lib)
        return lib

    yield make
    for lib in libs:
        lib.close()


@pytest.fixture
def make_window(qtbot, make_lib) -> Callable[..., object]:
    """A shown MainWindow on a fake-model Library; ask_fn="fake" injects the scripted ask."""
    from desktop_kb.gui.main_window import MainWindow

    def make(lib: Library | None = None, ask_fn: object = "fake", **kwargs: object) -> MainWindow:
        lib = lib or make_lib()
        if ask_fn == "fake":
            ask_fn = make_fake_ask(lib)
        win = MainWindow(lib, ask_fn=ask_fn, owns_library=False, **kwargs)  # type: ignore[arg-type]
        qtbot.addWidget(win)
        win.show()
        qtbot.waitUntil(lambda: not win.runner.running("refresh"), timeout=5000)
        return win

    return make
