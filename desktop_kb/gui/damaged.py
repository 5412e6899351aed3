"""A damaged knowledge base: what ``kb check`` finds, shown instead of a bare error, with a Repair
action (``Library.repair_kb`` in a worker). Offered when a base fails to open and from the
knowledge-base list's context menu ("Check and repair…"). Until it is repaired nothing is written
to it by this dialog; the rest of the app goes on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from ..library.check import Health, RepairReport, describe
from .i18n import tr

__all__ = ["DamagedDialog"]


class DamagedDialog(QMessageBox):
    """The check's report; "Repair" calls ``repair()``, which runs the repair in a worker (the
    window then shows :meth:`repaired_text` of its report)."""

    def __init__(self, parent: QWidget | None, health: Health, repair: Callable[[], Any]) -> None:
        super().__init__(parent)
        self.setObjectName("damagedDialog")
        self.setIcon(QMessageBox.Icon.Warning if not health.ok else QMessageBox.Icon.Information)
        self.setWindowTitle(tr("Knowledge base {kb}", kb=health.kb))
        self.setText(tr("{kb} is damaged.", kb=health.kb) if not health.ok else tr("{kb} has no problems.", kb=health.kb))
        self.setInformativeText(describe(health))
        self.repair_btn: QPushButton | None = None
        if not health.ok:
            self.repair_btn = self.addButton(tr("Repair"), QMessageBox.ButtonRole.AcceptRole)
            self.repair_btn.setObjectName("repairButton")
            self.repair_btn.clicked.connect(lambda: repair())
        self.addButton(QMessageBox.StandardButton.Close)

    @staticmethod
    def repaired_text(report: RepairReport) -> str:
        lines = [f"- {d}" for d in report.done] or [tr("Nothing could be rebuilt.")]
        lines += [f"- {tr('not repaired')}: {p.message}" for p in report.not_repaired]
        return "\n".join(lines)
