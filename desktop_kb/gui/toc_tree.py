"""Each document's table of contents as a tree under it in the document list: expanding a document
loads its TOC in the background; clicking a section opens the viewer there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from ..ingest.toc import TocNode
from ..types import Citation
from .i18n import tr
from .kb_panel import DOC_ROLE, PATH_ROLE, STATE_ROLE
from .tasks import TaskRunner

__all__ = ["NODE_ROLE", "TocTree"]

NODE_ROLE = Qt.ItemDataRole.UserRole + 3  # a section item's TocNode
_PLACEHOLDER = "placeholder"


def _pages(node: TocNode) -> str:
    if not node.pages:
        return ""
    a, b = node.pages
    return tr("p. {n}", n=a) if a == b else tr("pp. {a}–{b}", a=a, b=b)


class TocTree(QObject):
    """``load(kb, doc_id)`` (a core function, no Qt) runs on ``runner``; a click on a section emits
    ``section_clicked`` with a Citation spanning it. It keeps no reference to the window (a Python
    cycle through Qt objects may be collected on a worker thread, which Qt does not survive)."""

    section_clicked = Signal(object)  # Citation

    def __init__(self, tree: QTreeWidget, current_kb: Callable[[], str | None], runner: TaskRunner,
                 load: Callable[[str, str], Any]) -> None:
        super().__init__(tree)
        self.tree = tree
        self.current_kb = current_kb
        self.runner = runner
        self.load = load
        tree.setRootIsDecorated(True)
        tree.itemExpanded.connect(self._expanded)
        tree.itemClicked.connect(self._clicked)

    def decorate(self, _kb: str = "") -> None:
        """Give every indexed document an (empty, lazily filled) expandable branch."""
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(0, STATE_ROLE) == "indexed" and item.childCount() == 0:
                child = QTreeWidgetItem([tr("Loading…")])
                child.setData(0, STATE_ROLE, _PLACEHOLDER)
                item.addChild(child)

    def _expanded(self, item: QTreeWidgetItem) -> None:
        if item.childCount() != 1 or item.child(0).data(0, STATE_ROLE) != _PLACEHOLDER:
            return
        kb, doc_id = self.current_kb(), item.data(0, DOC_ROLE)
        if not kb or not doc_id:
            return
        load, doc = self.load, str(doc_id)  # the worker's function holds no Qt object
        self.runner.run(lambda _ctx: load(kb, doc), "toc", finished=lambda toc: self._fill(item, toc),
                        failed=lambda _exc: self._fill(item, ()))

    def _fill(self, item: QTreeWidgetItem, toc: Any) -> None:
        try:
            item.takeChildren()
        except RuntimeError:  # the list was refreshed meanwhile: the item is gone
            return
        path, doc_id = str(item.data(0, PATH_ROLE)), str(item.data(0, DOC_ROLE))

        def add(parent: QTreeWidgetItem, nodes: Any) -> None:
            for node in nodes:
                child = QTreeWidgetItem([node.title, _pages(node), tr("~{n} tokens", n=node.tokens)])
                child.setData(0, NODE_ROLE, node)
                child.setData(0, PATH_ROLE, path)
                child.setData(0, DOC_ROLE, doc_id)
                child.setData(0, STATE_ROLE, "section")
                child.setToolTip(0, node.title)
                parent.addChild(child)
                add(child, node.children)

        add(item, toc)
        if not toc:
            item.addChild(QTreeWidgetItem([tr("(no sections)")]))

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        node = item.data(0, NODE_ROLE)
        kb = self.current_kb()
        if not isinstance(node, TocNode) or not kb:
            return
        self.section_clicked.emit(Citation(n=0, kb=kb, doc_id=str(item.data(0, DOC_ROLE)), path=str(item.data(0, PATH_ROLE)),
                                   pages=tuple(range(node.pages[0], node.pages[1] + 1)) if node.pages else (),
                                   heading_path=(node.title,), start=node.start, end=node.end))
