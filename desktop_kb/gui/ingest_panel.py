"""Ingestion progress (files and chunks done, current file, ETA, Cancel) and the last run's result
with the files that failed and why."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..progress import IngestProgress
from ..types import IngestReport
from .core_messages import localize_pair
from .i18n import N_, tr, tr_n

__all__ = ["IngestPanel", "format_eta", "sync_summary"]


def changed_files(report: IngestReport) -> int:
    return len(report.added) + len(report.updated) + len(report.deleted)


def new_failures(report: IngestReport, known: Collection[str]) -> int:
    """The files that failed in this run and had not failed before (a file that still cannot be
    read is no news at every start-up)."""
    return sum(1 for f in report.failed if f.path not in known)


def sync_summary(report: IngestReport, known_failed: Collection[str] = ()) -> str:
    """A sync's outcome in one line: "work is up to date", "2 files changed, updated"."""
    n, failed = changed_files(report), new_failures(report, known_failed)
    if report.cancelled:
        return tr("Stopped bringing {kb} up to date; finished files stay indexed.", kb=report.kb)
    if not n and not failed:
        return tr("{kb} is up to date.", kb=report.kb)
    parts = []
    if n:
        parts.append(tr("{n} files changed, updated", n=n) if n != 1 else tr("1 file changed, updated"))
    if failed:
        parts.append(tr("{n} could not be read", n=failed))
    return f"{report.kb}: " + "; ".join(parts) + "."


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return tr("estimating…")
    s = round(seconds)
    if s < 60:
        return tr("about {n} s left", n=s)
    if s < 3600:
        return tr("about {m} min {s} s left", m=s // 60, s=s % 60)
    return tr("about {h} h {m} min left", h=s // 3600, m=(s % 3600) // 60)


_STAGES = {"discover": N_("finding files"), "convert": N_("reading"), "ocr": N_("reading by OCR"),
           "embed": N_("embedding"),
           "write": N_("saving"), "delete": N_("removing"), "done": N_("done")}


class IngestPanel(QWidget):
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ingestPanel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 6)
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold;")
        layout.addWidget(self.title)
        row = QHBoxLayout()
        self.bar = QProgressBar()
        self.bar.setObjectName("ingestProgress")
        self.bar.setTextVisible(True)
        row.addWidget(self.bar, 1)
        self.cancel_btn = QPushButton(tr("Cancel"))
        self.cancel_btn.setObjectName("ingestCancel")
        self.cancel_btn.clicked.connect(self._cancel)
        row.addWidget(self.cancel_btn)
        layout.addLayout(row)
        self.detail = QLabel()
        self.detail.setObjectName("ingestDetail")
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setWordWrap(True)
        layout.addWidget(self.detail)
        self.current = QLabel()
        self.current.setTextFormat(Qt.TextFormat.PlainText)
        self.current.setStyleSheet("color: #555;")
        layout.addWidget(self.current)
        self.failed_label = QLabel(tr("Files that could not be added:"))
        self.failed_label.setStyleSheet("color: #b00020;")
        layout.addWidget(self.failed_label)
        self.failed_list = QListWidget()
        self.failed_list.setObjectName("failedFiles")
        self.failed_list.setMaximumHeight(110)
        self.failed_list.setWordWrap(True)
        layout.addWidget(self.failed_list)
        self.skipped_label = QLabel(tr("Not read (file type):"))
        layout.addWidget(self.skipped_label)
        self.skipped_list = QListWidget()
        self.skipped_list.setObjectName("skippedFiles")
        self.skipped_list.setMaximumHeight(90)
        self.skipped_list.setWordWrap(True)
        layout.addWidget(self.skipped_list)
        buttons = QHBoxLayout()
        self.details_btn = QPushButton(tr("Details"))  # a finished ingest folds to its summary line
        self.details_btn.setObjectName("ingestDetails")
        self.details_btn.setCheckable(True)
        self.details_btn.toggled.connect(self._show_details)
        buttons.addWidget(self.details_btn)
        buttons.addStretch(1)
        self.dismiss_btn = QPushButton(tr("Dismiss"))
        self.dismiss_btn.clicked.connect(self.hide)
        buttons.addWidget(self.dismiss_btn)
        layout.addLayout(buttons)
        self.last_progress: IngestProgress | None = None
        self.sync = False
        self.known_failed: frozenset[str] = frozenset()
        self.hide()

    def start(self, kb: str, paths: list[str], *, reembed: bool = False, sync: bool = False,
              known_failed: Collection[str] = ()) -> None:
        """``sync``: bringing ``kb`` up to date with its folders; the panel stays hidden until a
        file is read, and says nothing at the end when nothing changed (``known_failed``: the
        files that could not be read before, not news when they still cannot)."""
        self.sync, self.known_failed = sync, frozenset(known_failed)
        self.title.setText(tr("Re-embedding {kb}", kb=kb) if reembed else
                           tr("Updating {kb}", kb=kb) if sync else tr("Adding to {kb}", kb=kb))
        self.bar.setRange(0, 0)  # busy until the files are counted
        self.detail.setText(tr("Looking for its files…") if reembed else tr(
            "Looking for files in {what}…", what=", ".join(Path(p).name for p in paths[:3]) + ("…" if len(paths) > 3 else "")))
        self.current.clear()
        self.failed_list.clear()
        self.failed_label.hide()
        self.failed_list.hide()
        self.skipped_list.clear()
        self.skipped_label.hide()
        self.skipped_list.hide()
        self.bar.show()
        self.current.show()
        self.details_btn.hide()
        self.details_btn.setChecked(False)
        self.dismiss_btn.hide()
        self.cancel_btn.setEnabled(True)
        self.cancel_btn.show()
        self.last_progress = None
        self.setVisible(not sync)

    def _cancel(self) -> None:
        self.cancel_btn.setEnabled(False)
        self.detail.setText(tr("Stopping after the current file…"))
        self.cancel_requested.emit()

    def on_progress(self, p: IngestProgress) -> None:
        self.last_progress = p
        if self.sync and not self.isVisible() and p.files_total and p.stage in ("convert", "ocr", "embed", "write"):
            self.show()  # a sync that reads files shows them being read
        if p.files_total:
            self.bar.setRange(0, p.files_total)
            self.bar.setValue(min(p.files_done, p.files_total))
            self.bar.setFormat(tr("{done} / {total} files", done=p.files_done, total=p.files_total))
        if not self.cancel_btn.isEnabled():
            return  # keep the "stopping" text
        eta = "" if p.stage == "done" else " · " + format_eta(p.eta_s)
        self.detail.setText(tr_n("{done} of 1 file · {chunks} chunks", "{done} of {n} files · {chunks} chunks",
                                 p.files_total, done=p.files_done, chunks=p.chunks_done) + eta)
        if p.stage == "ocr" and p.pages:
            self.current.setText(tr("reading by OCR, page {page} of {pages} ({eta}): {name}", page=p.page,
                                    pages=p.pages, eta=format_eta(p.eta_s), name=Path(p.current_file).name))
        elif p.current_file:
            self.current.setText(f"{tr(_STAGES.get(p.stage, p.stage))}: {Path(p.current_file).name}")

    def on_finished(self, report: IngestReport) -> None:
        if self.sync and not changed_files(report) and not new_failures(report, self.known_failed) \
                and not report.cancelled:
            self.hide()  # nothing changed: nothing to say here (the status bar says it is up to date)
            return
        self.cancel_btn.hide()
        total = len(report.added) + len(report.updated)
        self.bar.setRange(0, max(1, self.bar.maximum()))
        if not report.cancelled:
            self.bar.setValue(self.bar.maximum())
        head = tr("Cancelled — files finished so far stay indexed.") if report.cancelled else tr("Done.")
        self.detail.setText(head + " " + tr(
            "{added} added, {updated} updated, {unchanged} unchanged, {deleted} removed, {failed} failed, "
            "{chunks} chunks.", added=len(report.added), updated=len(report.updated),
            unchanged=len(report.unchanged), deleted=len(report.deleted), failed=len(report.failed),
            chunks=report.chunks))
        self.current.clear()
        self.failed_list.clear()
        for f in report.failed:
            error, hint = localize_pair(f.error, f.hint)
            name = Path(f.path).name  # said once: most of the core's reasons begin with it
            item = QListWidgetItem(error if error.startswith(name) else f"{name}: {error}")
            item.setToolTip(f"{f.path}\n{error}" + (f"\n{hint}" if hint else ""))
            self.failed_list.addItem(item)
        self.skipped_list.clear()
        for f in report.skipped:
            item = QListWidgetItem(" ".join(localize_pair(f.error, f.hint)).strip())
            item.setToolTip(f.path)
            self.skipped_list.addItem(item)
        if report.ocr:
            pages = sum(len(p) for _, p in report.ocr)
            self.current.setText(tr_n("Read by OCR: 1 file, {pages} pages.", "Read by OCR: {n} files, {pages} pages.",
                                      len(report.ocr), pages=pages))
        self.dismiss_btn.show()
        self._fold()
        if self.sync:
            self.title.setText(tr("Updated {kb}", kb=report.kb))
            self.detail.setText(sync_summary(report, self.known_failed))
            self.show()
            return
        self.title.setText(tr("Added to {kb}", kb=report.kb) if total or not report.failed else self.title.text())

    def _fold(self) -> None:
        """Done: the summary line stays; the bar goes, and the lists wait behind "Details"."""
        self.bar.hide()
        n = self.failed_list.count() + self.skipped_list.count()
        self.details_btn.setVisible(bool(n or self.current.text()))
        self.details_btn.setText(tr("Details ({n})", n=n) if n else tr("Details"))
        self._show_details(self.details_btn.isChecked())

    def _show_details(self, shown: bool) -> None:
        self.failed_label.setVisible(shown and self.failed_list.count() > 0)
        self.failed_list.setVisible(shown and self.failed_list.count() > 0)
        self.skipped_label.setVisible(shown and self.skipped_list.count() > 0)
        self.skipped_list.setVisible(shown and self.skipped_list.count() > 0)
        self.current.setVisible(shown or not self.details_btn.isVisible())

    def on_stopped(self, message: str) -> None:
        """The ingest task ended without a report (an error, shown elsewhere)."""
        self.cancel_btn.hide()
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.detail.setText(message)
        self.dismiss_btn.show()

    @property
    def finished(self) -> bool:
        """A summary is shown (no ingest running here)."""
        return self.dismiss_btn.isVisibleTo(self)

    def failed_items(self) -> list[str]:
        return [self.failed_list.item(i).text() for i in range(self.failed_list.count())]

    def skipped_items(self) -> list[str]:
        return [self.skipped_list.item(i).text() for i in range(self.skipped_list.count())]
