"""The command line: ``desktop-kb`` and every sub-command.

Owns: the argument parser (:mod:`.parser`), the built-in commands (:mod:`.commands`: ingest, kb,
watch, search, models), ``ask`` / ``chat`` (:mod:`.ask`), ``eval`` (:mod:`.evaluate`), ``enrich``
(:mod:`.enrich`), ``demo`` (:mod:`.demo`) and the helpers they share (:mod:`.common`).
May import: :mod:`desktop_kb.library`, :mod:`desktop_kb.eval` and everything below them; never the GUI.
Errors become messages and exit codes in one place (:func:`.commands.main`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main", "utf8_streams"]


def utf8_streams() -> None:
    """Never fail to print: UTF-8 where a standard stream cannot encode Chinese.

    On Windows a pipe or a file gets the ANSI code page (cp1252 on most laptops), and printing a
    Chinese file name or answer raised ``UnicodeEncodeError``; a console window is unaffected
    (Python writes it as UTF-16). A stream that can write Chinese (UTF-8, or GBK on a Chinese
    Windows: the user's choice) keeps its encoding, with a ``?`` for a character it lacks (GBK has
    no "›", the heading separator)."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "ascii"
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None or encoding.lower().replace("-", "").replace("_", "") in ("utf8", "utf8sig"):
            continue
        try:
            "中文".encode(encoding)
        except (UnicodeEncodeError, LookupError):
            reconfigure(encoding="utf-8", errors="replace")
        else:
            reconfigure(errors="replace")


def main(argv: Sequence[str] | None = None) -> int:
    """The ``desktop-kb`` entry point (``desktop_kb.cli:main``)."""
    from .commands import main as run

    utf8_streams()
    return run(argv)
