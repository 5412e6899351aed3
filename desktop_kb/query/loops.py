"""Loops in a streamed answer, stopped as they start.

A small model summarising a long text can say one sentence again and again until its token budget
runs out (an overview of a 3-page invoice streamed the same sentence a dozen times for minutes).
:func:`guarded_chat` watches the stream: at the first sentence said a second time, or the same run
of words three times over, it stops the model (through a child of the caller's cancel token),
streams nothing more, and returns the text before the repeat.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import Cancelled
from ..progress import CancelToken
from ..protocols import ChatMessage, Generator

__all__ = ["LoopGuard", "Reply", "guarded_chat"]

_END = re.compile(r"[。！？；]+|[.!?;]+(?=\s)|\n+")  # a sentence is finished once the next has begun
_MARK = re.compile(r"\[\d+(?:\s*[,，-]\s*\d+)*\]")
_NOT_WORD = re.compile(r"[\W_]+")
_LETTERS = re.compile(r"[^\W\d_]")


def _norm(sentence: str) -> str:
    """A sentence as compared for repeats: no citation marks, case, spaces or punctuation."""
    return _NOT_WORD.sub("", _MARK.sub("", sentence)).lower()


@dataclass(frozen=True)
class Reply:
    text: str
    looped: bool  # the model repeated itself and was stopped; ``text`` ends before the repeat


class LoopGuard:
    """Fed the streamed pieces; :attr:`cut` is where the kept text ends once a loop is seen.

    A loop is a finished sentence (at least ``min_chars`` letters and digits once its marks,
    spaces and punctuation are gone) equal to an earlier one, or the text's tail made of the same
    ``period``-character run (8 to ``period_max``, with at least two different letters)
    ``repeats`` times over."""

    def __init__(self, *, min_chars: int = 12, period_max: int = 240, repeats: int = 3) -> None:
        self.min_chars, self.period_max, self.repeats = min_chars, period_max, repeats
        self.text = ""
        self.cut: int | None = None
        self._scanned = 0  # where the next unfinished sentence starts
        self._seen: set[str] = set()

    @property
    def looped(self) -> bool:
        return self.cut is not None

    def feed(self, piece: str) -> bool:
        """Adds ``piece``; True when the text now loops (then :attr:`cut` is set)."""
        if self.cut is not None:
            return True
        self.text += piece
        self.cut = self._sentence_repeat()
        if self.cut is None:
            self.cut = self._periodic_tail()
        return self.cut is not None

    def kept(self, text: str | None = None) -> str:
        """``text`` (default: what was fed) without the repeat and what followed it."""
        text = self.text if text is None else text
        return (text if self.cut is None else text[: self.cut]).rstrip()

    def echoing(self) -> bool:
        """The unfinished sentence so far begins like an earlier one (held back from the stream
        until it says something new, so a repeated sentence is never shown)."""
        key = _norm(self.text[self._scanned :])
        return len(key) >= self.min_chars and any(seen.startswith(key) for seen in self._seen)

    def _sentence_repeat(self) -> int | None:
        for m in _END.finditer(self.text, self._scanned):
            start, self._scanned = self._scanned, m.end()
            key = _norm(self.text[start : m.start()])
            if len(key) < self.min_chars:
                continue
            if key in self._seen:
                return start
            self._seen.add(key)
        return None

    def _periodic_tail(self) -> int | None:
        t = self.text
        for period in range(8, min(self.period_max, len(t) // self.repeats) + 1):
            unit = t[-period:]
            if t.endswith(unit * self.repeats) and len(set(_LETTERS.findall(unit.lower()))) >= 2:
                return len(t) - (self.repeats - 1) * period
        return None


def guarded_chat(generator: Generator, messages: Sequence[ChatMessage], *, max_tokens: int,
                 temperature: float = 0.0, on_token: Callable[[str], None] | None = None,
                 cancel: CancelToken | None = None) -> Reply:
    """The model's reply to ``messages``, stopped at the first loop (a sentence that begins like
    an earlier one is held back from ``on_token`` until it differs, so a repeat is never streamed). The caller's ``cancel`` still stops it with
    :class:`~desktop_kb.errors.Cancelled`."""
    guard = LoopGuard()
    stop = cancel.child() if cancel is not None else CancelToken()
    held: list[str] = []

    def watch(piece: str) -> None:
        if guard.looped:
            return
        if guard.feed(piece):
            stop.cancel()
            return
        held.append(piece)
        if on_token is not None and not guard.echoing():
            on_token("".join(held))
            held.clear()

    try:
        text = generator.chat(messages, max_tokens=max_tokens, temperature=temperature, on_token=watch,
                              cancel=stop)
    except Cancelled:
        if not stop.cancelled_here:
            raise
        text = guard.text
    if held and not guard.looped and on_token is not None:  # it ended like an earlier sentence began
        on_token("".join(held))
    if not guard.text:  # a generator that does not stream: the whole reply, read at once
        guard = LoopGuard()
        for piece in re.split(r"(?<=\s)", text):
            if guard.feed(piece):
                break
    return Reply(guard.kept(text).strip(), guard.looped)
