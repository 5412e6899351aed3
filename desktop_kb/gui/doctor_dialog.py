"""Help → Check this computer: ``desktop-kb doctor`` in a worker, its report in a dialog with Copy
(what a bug report pastes). The report is the core's (library/doctor.py), in English."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from .i18n import tr

__all__ = ["DoctorDialog", "check_computer"]


class DoctorDialog(QDialog):
    def __init__(self, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName("doctorDialog")
        self.setWindowTitle(tr("Check this computer"))
        self.resize(760, 460)
        layout = QVBoxLayout(self)
        self.verdict = QLabel(tr("Measuring this computer: the answer model and the embedder run once (under a minute)…"))
        self.verdict.setWordWrap(True)
        layout.addWidget(self.verdict)
        self.report = QPlainTextEdit()
        self.report.setReadOnly(True)
        self.report.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout.addWidget(self.report, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_btn = buttons.addButton(tr("Copy"), QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_btn.setEnabled(False)
        self.copy_btn.clicked.connect(lambda: QApplication.clipboard().setText(self.report.toPlainText()))
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def show_report(self, report: Any) -> None:
        self.verdict.setText(report.verdict)
        self.report.setPlainText(report.text())
        self.copy_btn.setEnabled(True)


def check_computer(win: Any) -> DoctorDialog:
    """Open the dialog and run the doctor on ``win``'s task runner; the report fills it when done."""
    from ..library.doctor import run_doctor

    dialog = DoctorDialog(win)
    settings = win.settings
    handle = win.runner.run(lambda ctx: run_doctor(settings, cancel=ctx.cancel), "doctor",
                            finished=dialog.show_report, failed=lambda exc: (dialog.reject(), win.show_error(exc)))
    dialog.rejected.connect(handle.cancel)
    dialog.show()
    return dialog
