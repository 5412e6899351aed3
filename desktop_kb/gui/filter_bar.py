"""The filter bar above the chat: tag, folder, file type, owner and a modified-date range. Every search of
an answer (each rewritten query, each knowledge base) gets the filter, and the answer says which
filter it was made with."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QDate, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..ingest.manifest import DocumentRow
from ..protocols import SearchFilter
from .i18n import tr

__all__ = ["FilterBar", "FilterSpec"]


@dataclass(frozen=True)
class FilterSpec:
    """What the user chose (immutable: read by the answer worker while the bar may change)."""

    tag: str = ""
    folder: str = ""
    ext: str = ""
    owner: str = ""
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    @property
    def empty(self) -> bool:
        return self == FilterSpec()

    def to_filter(self, rows: Iterable[DocumentRow]) -> SearchFilter | None:
        """The SearchFilter; a file type becomes the ids of the documents of that type in ``rows``
        (none of that type: a filter nothing matches, never no filter)."""
        if self.empty:
            return None
        doc_ids: tuple[str, ...] = ()
        if self.ext:
            doc_ids = tuple(sorted({r.doc_id for r in rows if Path(r.path).suffix.lower() == self.ext})) or ("-",)

        def stamp(d: dt.date | None, end: bool) -> int | None:
            if d is None:
                return None
            moment = dt.datetime.combine(d, dt.time.max if end else dt.time.min)
            return int(moment.timestamp())

        return SearchFilter(tags=(self.tag,) if self.tag else (), folders=(self.folder,) if self.folder else (),
                            owners=(self.owner,) if self.owner else (), doc_ids=doc_ids, mtime_from=stamp(self.date_from, False),
                            mtime_to=stamp(self.date_to, True))

    def describe(self) -> str:
        parts = [tr("tag {tag}", tag=self.tag)] if self.tag else []
        if self.folder:
            parts.append(tr("folder {folder}", folder=Path(self.folder).name or self.folder))
        if self.ext:
            parts.append(self.ext)
        if self.owner:
            parts.append(tr("owner {owner}", owner=self.owner))
        if self.date_from or self.date_to:
            parts.append(tr("modified {start}–{end}", start=str(self.date_from or "…"), end=str(self.date_to or "…")))
        return " · ".join(parts)


class FilterBar(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("filterBar")
        # never widen the window: on a narrow one (the passage viewer open beside the chat) the
        # bar wraps onto a second line instead of squeezing its fields to "any t", "modif"
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._rows = QVBoxLayout(self)
        self._rows.setContentsMargins(0, 0, 0, 0)
        self._rows.setSpacing(2)
        self.tag = self._combo(tr("any tag"))
        self.folder = self._combo(tr("any folder"))
        self.ext = self._combo(tr("any type"))
        self.owner = self._combo(tr("any owner"))
        self.dated = QCheckBox(tr("modified"))
        self.date_from = QDateEdit(QDate.currentDate().addYears(-1))
        self.date_to = QDateEdit(QDate.currentDate())
        for w in (self.date_from, self.date_to):
            w.setCalendarPopup(True)
            w.setDisplayFormat("yyyy-MM-dd")
            w.setEnabled(False)
            w.dateChanged.connect(lambda _d: self.changed.emit())
        self.dated.toggled.connect(self._on_dated)
        self.clear_btn = QPushButton(tr("Clear"))
        self.clear_btn.clicked.connect(self.clear)
        # what stays together on a line, in order; lines fill up to the bar's width
        self._groups: list[list[QWidget]] = [[QLabel(tr("Only:")), self.tag], [self.folder], [self.ext], [self.owner],
                                             [self.dated, self.date_from, QLabel("–"), self.date_to], [self.clear_btn]]
        self._lines: list[list[int]] = []
        self._place(10_000)

    @property
    def wrapped(self) -> bool:
        return len(self._lines) > 1

    def _lines_for(self, width: int) -> list[list[int]]:
        gap = max(self._rows.spacing(), 12)  # a line's own spacing (the style's) plus margin to spare
        lines: list[list[int]] = [[]]
        used = 0
        for i, group in enumerate(self._groups):
            need = sum(w.minimumSizeHint().width() + gap for w in group)
            if lines[-1] and used + need > width:
                lines.append([])
                used = 0
            lines[-1].append(i)
            used += need
        return lines

    def _place(self, width: int) -> None:
        """The groups on as few lines as the width allows (one on a wide window)."""
        lines = self._lines_for(width)
        if lines == self._lines:
            return
        self._lines = lines
        while self._rows.count():
            row = self._rows.takeAt(0).layout()
            while row is not None and row.count():
                row.takeAt(0)
        for line in lines:
            row = QHBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            for i in line:
                for w in self._groups[i]:
                    row.addWidget(w)
            row.addStretch(1)
            self._rows.addLayout(row)
        self.updateGeometry()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._place(event.size().width())
        super().resizeEvent(event)

    def _combo(self, anything: str) -> QComboBox:
        combo = QComboBox()
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(8)
        combo.addItem(anything, "")
        combo.currentIndexChanged.connect(lambda _i: self.changed.emit())
        return combo

    def _on_dated(self, on: bool) -> None:
        self.date_from.setEnabled(on)
        self.date_to.setEnabled(on)
        self.changed.emit()

    def set_documents(self, rows: Sequence[DocumentRow]) -> None:
        """Offer the tags, folders and file types of ``rows``; a choice still present is kept."""
        self._fill(self.tag, sorted({t for r in rows for t in r.tags}), str)
        self._fill(self.folder, sorted({r.folder for r in rows}), lambda f: Path(f).name or f)
        self._fill(self.ext, sorted({Path(r.path).suffix.lower() for r in rows if Path(r.path).suffix}), str)
        self._fill(self.owner, sorted({r.owner for r in rows if r.owner}), str)

    def _fill(self, combo: QComboBox, values: list[str], label: object) -> None:
        current = combo.currentData()
        combo.blockSignals(True)
        while combo.count() > 1:
            combo.removeItem(1)
        for v in values:
            combo.addItem(label(v), v)  # type: ignore[operator]
            combo.setItemData(combo.count() - 1, v, 3)  # tooltip: the full value
        index = combo.findData(current)
        combo.setCurrentIndex(max(index, 0))
        combo.blockSignals(False)
        if combo.currentData() != current:
            self.changed.emit()

    def spec(self) -> FilterSpec:
        on = self.dated.isChecked()
        return FilterSpec(tag=self.tag.currentData() or "", folder=self.folder.currentData() or "",
                          ext=self.ext.currentData() or "", owner=self.owner.currentData() or "",
                          date_from=self.date_from.date().toPython() if on else None,  # type: ignore[arg-type]
                          date_to=self.date_to.date().toPython() if on else None)  # type: ignore[arg-type]

    def clear(self) -> None:
        for combo in (self.tag, self.folder, self.ext, self.owner):
            combo.setCurrentIndex(0)
        self.dated.setChecked(False)
