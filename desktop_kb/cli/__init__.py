"""The command line: ``desktop-kb`` and every sub-command.

Owns: the argument parser (:mod:`.parser`), the built-in commands (:mod:`.commands`: ingest, kb,
watch, search, models), ``ask`` / ``chat`` (:mod:`.ask`), ``eval`` (:mod:`.evaluate`), ``enrich``
(:mod:`.enrich`), ``demo`` (:mod:`.demo`) and the helpers they share (:mod:`.common`).
May import: :mod:`desktop_kb.library`, :mod:`desktop_kb.eval` and everything below them; never the GUI.
Errors become messages and exit codes in one place (:func:`.commands.main`).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """The ``desktop-kb`` entry point (``desktop_kb.cli:main``)."""
    from .commands import main as run

    return run(argv)
