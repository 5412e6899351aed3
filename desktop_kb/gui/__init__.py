"""The PySide6 desktop app. Only this package imports Qt; it uses the core through
:class:`desktop_kb.library.kb.Library`. Entry point: :func:`desktop_kb.gui.app.main`."""

from . import qtcompat as _qtcompat  # noqa: F401 - binding work-arounds, before any signal is emitted
