"""Editing the tags or owner of selected documents from the document list (no re-embedding: the
core changes payloads only)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtWidgets import QInputDialog, QWidget

from ..ingest.manifest import DocumentRow
from .i18n import tr

__all__ = ["ask_metadata", "ask_text", "edit_metadata"]

# (parent, title, label, text) -> (text, ok); replaced in tests
AskText = Callable[[QWidget, str, str, str], tuple[str, bool]]


def ask_text(parent: QWidget, title: str, label: str, text: str) -> tuple[str, bool]:
    return QInputDialog.getText(parent, title, label, text=text)


def ask_metadata(parent: QWidget, field: str, rows: Sequence[DocumentRow], ask: AskText = ask_text,
                 ) -> dict[str, Any] | None:
    """The edit for ``rows`` ("tags": comma-separated, replacing; "owner"), or None if cancelled."""
    n = len(rows)
    if field == "tags":
        common = [t for t in (rows[0].tags if rows else ()) if all(t in r.tags for r in rows)]
        text, ok = ask(parent, tr("Edit tags"), tr("Tags of {n} files, separated by commas:", n=n), ", ".join(common))
        if not ok:
            return None
        wanted = [t.strip() for t in text.replace("，", ",").split(",") if t.strip()]
        return {"add": wanted, "remove": [t for t in common if t not in wanted]}  # others' own tags stay
    owners = {r.owner for r in rows}
    text, ok = ask(parent, tr("Set owner"), tr("Owner of {n} files (empty: none):", n=n),
                   owners.pop() if len(owners) == 1 else "")
    return {"owner": text.strip()} if ok else None


def edit_metadata(win: Any, kb: str, paths: list[str], field: str) -> Any:
    """Ask for new tags or an owner of ``paths`` in ``win`` and apply them in the background
    (``win.ask_text`` replaces the prompt in tests); returns the task, or None if cancelled."""
    rows = [r for r in win.lib.documents(kb) if r.path in set(paths)]
    edits = ask_metadata(win, field, rows, win.ask_text or ask_text) if rows else None
    if edits is None:
        return None
    lib = win.lib
    return win._run(lambda _ctx: lib.set_metadata(kb, paths, **edits), "metadata",
                    lambda _changed: win.refresh_documents())

