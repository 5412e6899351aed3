"""The chat: question box, streamed Markdown answers with clickable ``[n]`` footnotes, sources
under each answer, status lines, Stop, and conversations saved per knowledge base.

The answer comes from an *ask function* run on the task runner:

    ask_fn(question, kbs, history, on_token, cancel, on_restart, on_stage) -> desktop_kb.types.Answer

(by default ``Library.ask``). Tokens stream in through the task's ``token`` signal; ``on_restart``
means "the text streamed so far is void" (a citation-correction retry streams again);
``on_stage(stage, n)`` says what the answer is doing (searching, reading n passages, checking),
shown in the status line until the first token streams.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from ..errors import DesktopKBError
from ..progress import CancelToken
from ..types import (
    STAGE_ALTERNATE,
    STAGE_CHECKING,
    STAGE_PART,
    STAGE_PARTS,
    STAGE_READING,
    STAGE_REWRITING,
    Answer,
    Citation,
)
from . import errors
from .chat_conversations import ConversationActions
from .chat_render import citation_label, citing_sentence, parse_action_href, transcript_html, turn_html
from .conversation_export import DocumentText, answer_markdown
from .conversation_list import ConversationList
from .conversations import Conversation, ConversationStore, Turn
from .i18n import tr
from .markdown import cite_href, parse_cite_href
from .question_edit import QuestionEdit
from .tasks import TaskHandle, TaskRunner
from .transcript_view import Place, place_at

__all__ = ["AskFn", "ChatWidget", "QuestionEdit", "citation_label", "citing_sentence"]

AskFn = Callable[[str, list[str], list[tuple[str, str]], Callable[[str], None], CancelToken, Callable[[], None],
                  Callable[[str, int], None]], Answer]


class ChatWidget(ConversationActions, QWidget):
    citation_clicked = Signal(object, str)  # Citation, the answer sentence that cites it
    answer_finished = Signal(object)  # Turn
    busy_changed = Signal(bool)

    def __init__(self, runner: TaskRunner, ask_fn: AskFn | None, store: ConversationStore, *,
                 history_turns: int = 4, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chat")
        self.runner = runner
        self.ask_fn = ask_fn
        self.store = store
        self.history_turns = history_turns
        self.kbs: list[str] = []
        self.conversation = Conversation(kbs=())
        self._handle: TaskHandle | None = None
        self._turn: Turn | None = None
        self._parts = 0  # how many parts a section answer reads (map-reduce)
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(40)
        self._render_timer.timeout.connect(self.render)
        self.models_dir: Path | None = None
        self.reembed: Callable[[str], object] | None = None  # the window's re-embed action (error dialogs offer it)
        self.filter_label: Callable[[], str] | None = None  # what the next answer is filtered by
        self.document_text: DocumentText | None = None  # a document's Markdown, for quotes in exports
        self._deleted: Conversation | None = None  # the last deleted conversation (Undo)
        self._editing: int | None = None  # the turn an edited question replaces
        self._started = 0.0

        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(splitter)
        self.conv_list = ConversationList()
        self.conv_list.picked.connect(self.open_conversation)
        self.conv_list.new_requested.connect(self.new_conversation)
        self.conv_list.rename_requested.connect(self.rename_conversation)
        self.conv_list.delete_requested.connect(self.delete_conversation)
        self.conv_list.undo_requested.connect(self.undo_delete)
        self.conv_list.export_requested.connect(self._export_dialog)
        self.new_btn = self.conv_list.new_btn
        splitter.addWidget(self.conv_list)
        main = QWidget()
        splitter.addWidget(main)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([200, 700])
        layout = QVBoxLayout(main)
        layout.setContentsMargins(6, 6, 6, 6)
        self.kbs_label = QLabel()
        self.kbs_label.setTextFormat(Qt.TextFormat.PlainText)
        self.kbs_label.setStyleSheet("font-weight: bold;")
        layout.addWidget(self.kbs_label)

        self.transcript = QTextBrowser()
        self.click_place: Place | None = None
        self.transcript.setObjectName("transcript")
        self.transcript.setOpenLinks(False)
        self.transcript.setOpenExternalLinks(False)
        self.transcript.anchorClicked.connect(self._on_anchor)
        self.transcript.highlighted.connect(self._on_hover)  # a footnote under the mouse names its source
        self.transcript.document().setDefaultStyleSheet(
            "a { color: #1a5fb4; } pre { background-color: #f4f4f4; } code { background-color: #f0f0f0; }")
        layout.addWidget(self.transcript, 1)

        self.status = QLabel()
        self.status.setObjectName("chatStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.setStyleSheet("color: #555;")
        layout.addWidget(self.status)

        row = QHBoxLayout()
        self.input = QuestionEdit()
        self.input.submitted.connect(self.submit)
        row.addWidget(self.input, 1)
        buttons = QVBoxLayout()
        self.ask_btn = QPushButton(tr("Ask"))
        self.ask_btn.setObjectName("askButton")
        self.ask_btn.setDefault(True)
        self.ask_btn.clicked.connect(self.submit)
        self.stop_btn = QPushButton(tr("Stop"))
        self.stop_btn.setObjectName("stopButton")
        self.stop_btn.setToolTip(tr("Stop the answer (Esc)"))
        self.stop_btn.clicked.connect(self.stop)
        self.stop_btn.setEnabled(False)
        buttons.addWidget(self.ask_btn)
        buttons.addWidget(self.stop_btn)
        row.addLayout(buttons)
        layout.addLayout(row)
        self.render()

    # -- knowledge bases and conversations ---------------------------------------------------------
    def set_kbs(self, kbs: Sequence[str]) -> None:
        kbs = list(kbs)
        if sorted(kbs) == sorted(self.kbs):
            return
        self.stop()
        self.kbs = kbs
        self.kbs_label.setText(tr("Asking: {kbs}", kbs=", ".join(kbs)) if kbs else tr("No knowledge base selected"))
        saved = self.store.load(kbs) if kbs else []
        self.conversation = saved[0] if saved else Conversation(kbs=tuple(kbs))
        self._editing = None  # an edit belonged to the conversation that was open
        self._fill_list(saved)
        self.render()

    # -- asking ------------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self._handle is not None

    def submit(self) -> None:
        question = self.input.toPlainText().strip()
        if question and self.ask(question):
            self.input.clear()

    def ask(self, question: str) -> bool:
        """Start answering ``question``; False when it cannot start now."""
        if self.busy:
            return False
        if not self.kbs:
            self.status.setText(tr("Add documents first: drop a folder on the window."))
            return False
        if self.ask_fn is None:
            return False
        if self._editing is not None:  # an edited question replaces its turn and those after it
            del self.conversation.turns[self._editing:]
            self._editing = None
        history = self.conversation.history(self.history_turns)
        kbs = list(self.kbs)
        turn = Turn(question=question, filter=self.filter_label() if self.filter_label else "")
        self.conversation.turns.append(turn)
        self._turn = turn
        ask_fn = self.ask_fn
        handle: TaskHandle | None = None

        def mine(slot: Callable[..., None]) -> Callable[..., None]:
            return lambda *args: slot(handle, *args)  # type: ignore[arg-type]

        handle = self.runner.run(
            lambda ctx: ask_fn(question, kbs, history, ctx.on_token, ctx.cancel, ctx.on_restart, ctx.on_stage), "ask",
            token=mine(self._on_token), restarted=mine(self._on_restart), stage=mine(self._on_stage),
            finished=mine(self._on_answer),
            failed=mine(self._on_failed), cancelled=mine(self._on_cancelled))
        self._handle = handle
        self._started = time.monotonic()
        self.status.setText(tr("Searching your documents…"))
        self._set_busy(True)
        self.render()
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())  # the new question in view, wherever the reader had scrolled to
        return True

    def stop(self) -> None:
        """Cancel the answer being generated; the UI is free again at once."""
        handle, turn = self._handle, self._turn
        if handle is None:
            return
        handle.cancel()
        self._handle = None
        self._turn = None
        if turn is not None and not turn.finished:
            turn.status = "stopped"
            self._save()
        self.status.setText(tr("Stopped."))
        self._set_busy(False)
        self.render()

    def _set_busy(self, busy: bool) -> None:
        self.stop_btn.setEnabled(busy)
        self.ask_btn.setEnabled(not busy)
        self.conv_list.setEnabled(not busy)
        self.busy_changed.emit(busy)

    def _on_token(self, handle: TaskHandle, text: str) -> None:
        if handle is not self._handle or self._turn is None:
            return  # a stopped answer's late tokens
        if not self._turn.answer:
            self.status.setText(tr("Writing the answer…"))
        self._turn.answer += text
        if not self._render_timer.isActive():
            self._render_timer.start()

    def _on_stage(self, handle: TaskHandle, stage: str, n: int) -> None:
        if handle is not self._handle or self._turn is None:
            return
        if stage == STAGE_PARTS:
            self._parts = n
            text = tr("Reading part {k} of {n}…", k=1, n=n)
        elif stage == STAGE_PART:
            text = tr("Reading part {k} of {n}…", k=n, n=self._parts)
        elif stage == STAGE_READING:
            text = tr("Reading {n} passages…", n=n) if n != 1 else tr("Reading 1 passage…")
        elif stage == STAGE_CHECKING:
            text = tr("Checking the citations…")
        elif stage == STAGE_REWRITING:
            text = tr("Understanding the follow-up question…")
        elif stage == STAGE_ALTERNATE:
            text = tr("The first draft did not check out: answering from passage [{n}] alone…", n=n)
        else:
            text = tr("Searching your documents…")
        self.status.setText(text)

    def _on_restart(self, handle: TaskHandle) -> None:
        if handle is not self._handle or self._turn is None:
            return
        self._turn.answer = ""
        self.status.setText(tr("Checking the citations and writing the answer again…"))
        self.render()

    def _finish(self, handle: TaskHandle) -> Turn | None:
        if handle is not self._handle:
            return None
        turn = self._turn
        self._handle = None
        self._turn = None
        self._set_busy(False)
        return turn

    def _on_answer(self, handle: TaskHandle, answer: Answer) -> None:
        turn = self._finish(handle)
        if turn is None:
            return
        turn.apply_answer(answer)
        turn.seconds = round(time.monotonic() - self._started, 1)
        self.status.setText("")
        self._save()
        self.render()
        self.answer_finished.emit(turn)

    def _on_failed(self, handle: TaskHandle, exc: BaseException) -> None:
        turn = self._finish(handle)
        if turn is None:
            return
        turn.status = "failed"
        self.conversation.turns.remove(turn)  # nothing worth keeping; the question goes back in the box
        if not self.input.toPlainText().strip():
            self.input.setPlainText(turn.question)
        self.status.setText(tr("The question could not be answered."))
        self.render()
        errors.show_error(self.window(), exc, models_dir=self.models_dir, reembed=self.reembed)

    def _on_cancelled(self, handle: TaskHandle) -> None:
        turn = self._finish(handle)
        if turn is not None:
            turn.status = "stopped"
            self.status.setText(tr("Stopped."))
            self._save()
            self.render()

    def _save(self) -> None:
        if not self.conversation.kbs:
            self.conversation.kbs = tuple(self.kbs)
        try:
            self.store.save(self.conversation)
        except (OSError, DesktopKBError) as exc:  # a full disk: said, and the app goes on
            errors.show_error(self.window(), exc)
            return
        self._fill_list()

    # -- rendering ---------------------------------------------------------------------------------
    def turn_html(self, index: int, turn: Turn) -> str:
        return turn_html(index, turn)

    def render(self) -> None:
        self._render_timer.stop()
        bar = self.transcript.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        old = bar.value()
        self.transcript.setHtml(transcript_html(self.conversation.turns))
        bar.setValue(bar.maximum() if at_bottom else old)

    def _on_anchor(self, url: QUrl) -> None:
        href = url.toString()
        action = parse_action_href(href)
        if action is not None:
            self.turn_action(*action)
            return
        parsed = parse_cite_href(href) or parse_cite_href(href, "passage")
        if parsed is None:
            return  # only footnotes and passages are links; nothing else is opened
        n, index = parsed
        turns = self.conversation.turns
        if not turns:
            return
        turn = turns[index] if index is not None and 0 <= index < len(turns) else turns[-1]
        if href.startswith("passage:"):
            cite = next((p for p in turn.passages if p.n == n), None)
        else:
            cite = turn.citation(n)
        if cite is not None:
            # where the footnote was clicked: kept in view when the viewer opens beside the transcript
            self.click_place = place_at(self.transcript, self.transcript.viewport().mapFromGlobal(QCursor.pos()))
            self.citation_clicked.emit(cite, citing_sentence(turn.answer, n))

    def _on_hover(self, url: QUrl) -> None:
        parsed = parse_cite_href(url.toString())
        turns = self.conversation.turns
        if parsed is None or not turns:
            QToolTip.hideText()
            return
        n, index = parsed
        turn = turns[index] if index is not None and 0 <= index < len(turns) else turns[-1]
        cite = turn.citation(n)
        if cite is not None:
            QToolTip.showText(QCursor.pos(), f"[{n}] {citation_label(cite)}", self.transcript)

    def turn_action(self, action: str, index: int) -> None:
        """A finished answer's links: copy it with its sources, ask again, edit the question."""
        turns = self.conversation.turns
        if self.busy or not 0 <= index < len(turns):
            return
        turn = turns[index]
        if action == "copy":
            QApplication.clipboard().setText(answer_markdown(turn, self.document_text))
            self.status.setText(tr("Answer and sources copied."))
        elif action == "again":
            gone = turns[index:]
            del turns[index:]
            if not self.ask(turn.question):
                turns.extend(gone)  # it could not start: nothing is lost
        elif action == "edit":
            self._editing = index
            self.input.setPlainText(turn.question)
            self.input.setFocus()
            self.status.setText(tr("Edit the question and ask again: the answer and those after it are replaced."))

    def open_citation(self, n: int, turn_index: int = -1) -> Citation | None:
        """Open footnote ``n`` of a turn (the last by default) as if its link was clicked."""
        turns = self.conversation.turns
        if not turns:
            return None
        idx = turn_index % len(turns)
        self._on_anchor(QUrl(cite_href(n, idx)))
        return turns[idx].citation(n)

    def answer_html(self) -> str:
        return self.transcript.toHtml()
