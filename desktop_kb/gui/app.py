"""Entry point of the desktop app: ``desktop-kb-gui [--data-dir DIR] [--lang en|zh] [--screenshot DIR]``.

``--screenshot DIR`` runs a scripted scenario (sample documents, an English and a Chinese question,
an open footnote, a PDF page view, the first-run dialog) and saves PNG screenshots into DIR.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from ..errors import DesktopKBError
from ..settings import Settings, default_data_dir, load_settings
from . import errors
from .fonts import install_fonts
from .i18n import set_language, tr
from .state import remembered_data_dir

__all__ = ["create_app", "main"]

log = logging.getLogger(__name__)
ICONS = Path(__file__).resolve().parents[2] / "resources" / "icons"


def create_app(argv: Sequence[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(list(argv) if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("desktop-kb")
    app.setOrganizationName("desktop-kb")
    app.setApplicationDisplayName("desktop-kb")
    app.setDesktopFileName("desktop-kb")
    for name in ("desktop-kb-512.png", "desktop-kb.png", "desktop-kb.svg"):  # PNG needs no SVG plugin
        if (ICONS / name).is_file():
            app.setWindowIcon(QIcon(str(ICONS / name)))
            break
    install_fonts(app)
    return app


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="desktop-kb-gui", description="desktop-kb: answers from your own documents.")
    p.add_argument("--data-dir", help="where knowledge bases, models and settings live")
    p.add_argument("--lang", choices=["en", "zh"], help="UI language (default: the settings' language)")
    p.add_argument("--screenshot", metavar="DIR", help="run a scripted demo and save PNG screenshots into DIR")
    p.add_argument("--fake-models", action="store_true",
                   help="with --screenshot: use deterministic fake models even if real ones are installed")
    p.add_argument("--no-preload", action="store_true", help="do not load the models at start")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from ..backends._common import private_process

    private_process()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app = create_app()

    if args.screenshot:
        from .screenshot import run_screenshots

        return run_screenshots(app, Path(args.screenshot), data_dir=args.data_dir, fake=args.fake_models)

    data_dir = args.data_dir or (None if os.environ.get("DESKTOP_KB_DATA_DIR") else remembered_data_dir())
    try:
        settings = load_settings(data_dir)
    except DesktopKBError as exc:
        set_language(args.lang or "en")
        errors.show_error(None, exc, title=tr("Settings file problem"), modal=True)
        settings = Settings(data_dir=default_data_dir(data_dir))
    set_language(args.lang or settings.language)

    from ..library.kb import Library
    from .main_window import MainWindow

    try:
        library = Library.open(settings)
    except (DesktopKBError, OSError) as exc:
        errors.show_error(None, exc, modal=True)
        return 2
    window = MainWindow(library, preload=not args.no_preload)

    def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        log.error("uncaught exception", exc_info=(kind, exc, tb))
        errors.show_error(window, exc, models_dir=window.settings.models_dir)

    sys.excepthook = excepthook
    window.show()
    try:
        return int(app.exec())
    finally:
        window.shutdown()  # also when the event loop was quit without closing the window


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
