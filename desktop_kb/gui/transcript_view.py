"""Keeping the reader's place in the transcript while its width changes.

Opening a footnote shows the viewer beside the transcript, which narrows: its text reflows longer
and the scroll bar keeps its pixel value, so the answer whose footnote was clicked slid out of
view. The place is a text position and its height in the viewport (the clicked footnote's, else
the first line shown), put back at the same height once the transcript has laid itself out again.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QTextBrowser

__all__ = ["Place", "place_at", "restore_place"]


@dataclass(frozen=True)
class Place:
    position: int  # in the document
    y: int  # its top in the viewport, in pixels


def place_at(browser: QTextBrowser, point: QPoint | None = None) -> Place:
    """The text at ``point`` of the viewport (the top-left corner by default) and its height there."""
    viewport = browser.viewport()
    if point is None or not viewport.rect().contains(point):
        point = QPoint(4, 4)
    cursor = browser.cursorForPosition(point)
    return Place(cursor.position(), browser.cursorRect(cursor).top())


def restore_place(browser: QTextBrowser, place: Place) -> None:
    """Scroll so that the text of ``place`` is at its height again."""
    cursor = QTextCursor(browser.document())
    cursor.setPosition(min(place.position, max(0, browser.document().characterCount() - 1)))
    bar = browser.verticalScrollBar()
    bar.setValue(bar.value() + browser.cursorRect(cursor).top() - place.y)
