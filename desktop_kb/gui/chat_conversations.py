"""The chat's conversation management: the side list filled from the store, open, new, rename,
delete with Undo, export as Markdown (a mixin of :class:`desktop_kb.gui.chat.ChatWidget`, which
holds the store, the open conversation and the list widget)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import errors
from .conversation_export import conversation_markdown
from .conversations import Conversation
from .file_dialogs import save_file_name
from .i18n import tr

__all__ = ["ConversationActions"]


class ConversationActions:
    """Needs from the widget: ``store``, ``kbs``, ``conversation``, ``conv_list``, ``status``,
    ``input``, ``busy``, ``stop()``, ``render()`` (chat.py, which mixes this in)."""

    store: Any
    kbs: list[str]
    conversation: Conversation
    conv_list: Any
    status: Any
    input: Any
    _deleted: Conversation | None
    _editing: int | None

    def _fill_list(self, saved: list[Conversation] | None = None) -> None:
        if saved is None:
            saved = self.store.load(self.kbs) if self.kbs else []
        self.conv_list.fill(saved, self.conversation.id)

    def open_conversation(self, conv_id: str) -> bool:
        if conv_id == self.conversation.id:
            return True
        found = self.store.get(self.kbs, conv_id)
        if found is None:
            return False
        self.stop()
        self.conversation = found
        self._editing = None
        self._fill_list()
        self.render()
        return True

    def rename_conversation(self, conv_id: str, name: str) -> None:
        stored = self.store.rename(self.kbs, conv_id, name)
        if conv_id == self.conversation.id:
            self.conversation.name = stored
        self._fill_list()

    def delete_conversation(self, conv_id: str) -> None:
        if conv_id == self.conversation.id:
            self.stop()
        self._deleted = self.store.delete(self.kbs, conv_id)
        if conv_id == self.conversation.id:  # a new, empty one in its place (Undo opens it again)
            self.conversation = Conversation(kbs=tuple(self.kbs))
            self.render()
        self._fill_list()
        if self._deleted is not None:
            self.conv_list.deleted()

    def undo_delete(self) -> None:
        if self._deleted is None:
            return
        back, self._deleted = self._deleted, None
        self.store.restore(back)
        if not self.conversation.turns and not self.busy:  # it was the one open: open it again
            self.conversation = back
            self.render()
        self._fill_list()

    def _export_dialog(self, conv_id: str) -> None:
        conv = self.store.get(self.kbs, conv_id)
        if conv is None:
            return
        name = "".join(ch if ch.isalnum() or ch in " -_" else "_" for ch in conv.title)[:60].strip() or "conversation"
        path = save_file_name(self, tr("Export as Markdown…"), f"{name}.md", "Markdown (*.md)")
        if path:
            self._write_export(conv, Path(path))

    def export_conversation(self, conv_id: str, path: Path) -> bool:
        conv = self.store.get(self.kbs, conv_id)
        return conv is not None and self._write_export(conv, path)

    def _write_export(self, conv: Conversation, path: Path) -> bool:
        try:
            path.write_text(conversation_markdown(conv, self.document_text), encoding="utf-8")
        except OSError as exc:
            errors.show_error(self.window(), exc)
            return False
        self.status.setText(tr("Saved {path}", path=str(path)))
        return True

    def new_conversation(self) -> None:
        self.stop()
        self.conversation = Conversation(kbs=tuple(self.kbs))
        self._editing = None
        self._fill_list()
        self.status.clear()
        self.render()
        self.input.setFocus()

