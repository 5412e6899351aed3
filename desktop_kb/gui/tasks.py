"""Run core functions off the GUI thread.

A :class:`TaskRunner` owns a private QThreadPool. ``runner.run(fn)`` wraps ``fn(ctx)`` in a
QRunnable; ``ctx`` gives the function a progress callback, a token callback and the
:class:`~desktop_kb.progress.CancelToken` to pass to the core. Results, progress, tokens and
errors come back to the GUI thread **only** as signals of the handle's :class:`TaskSignals`
(a QObject created in the GUI thread, so the connections are queued):

    handle = runner.run(
        lambda ctx: lib.ingest(kb, paths, progress=ctx.progress, cancel=ctx.cancel), "ingest",
        progress=..., finished=...,  # the return value
        failed=...,                  # an exception (never Cancelled)
        cancelled=...)               # the core raised Cancelled
    handle.cancel()                  # sets the CancelToken

The slots are connected *before* the work starts: a signal emitted in the worker reaches only the
connections that exist at that moment, so connecting after ``run()`` could miss a fast result.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from ..errors import Cancelled
from ..progress import CancelToken, IngestProgress

__all__ = ["TaskContext", "TaskHandle", "TaskRunner", "TaskSignals"]

log = logging.getLogger(__name__)
_ids = itertools.count(1)


class TaskSignals(QObject):
    progress = Signal(object)  # IngestProgress (throttled)
    token = Signal(str)  # streamed LLM text
    restarted = Signal()  # the streamed text so far is void (e.g. a citation-correction retry)
    stage = Signal(str, int)  # what an answer is doing: (stage, count), see desktop_kb.types.STAGE_*
    finished = Signal(object)  # the function's return value
    failed = Signal(object)  # the exception (not Cancelled)
    cancelled = Signal()
    done = Signal()  # always emitted last, whatever happened


class TaskContext:
    """What the worker function gets: callbacks for the core plus the cancel token."""

    def __init__(self, handle: TaskHandle, throttle_s: float) -> None:
        self._handle = handle
        self._throttle = throttle_s
        self._last_emit = 0.0
        self._last_stage = ""
        self.cancel: CancelToken = handle.cancel_token

    def progress(self, p: IngestProgress) -> None:
        now = time.monotonic()
        if p.stage != self._last_stage or p.stage == "done" or now - self._last_emit >= self._throttle:
            self._last_emit, self._last_stage = now, p.stage
            self._handle.signals.progress.emit(p)

    def on_token(self, text: str) -> None:
        if text:
            self._handle.signals.token.emit(text)

    def on_restart(self) -> None:
        self._handle.signals.restarted.emit()

    def on_stage(self, stage: str, n: int = 0) -> None:
        self._handle.signals.stage.emit(stage, int(n))


class TaskHandle:
    """The GUI-side view of one task: its signals, its cancel token and its state."""

    def __init__(self, fn: Callable[[TaskContext], Any], name: str) -> None:
        self.id = next(_ids)
        self.name = name
        self.fn = fn
        self.signals = TaskSignals()
        self.cancel_token = CancelToken()
        self.running = True

    def cancel(self) -> None:
        self.cancel_token.cancel()

    @property
    def cancelled(self) -> bool:
        return self.cancel_token.cancelled

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<TaskHandle {self.id} {self.name} running={self.running}>"


class _Runnable(QRunnable):
    def __init__(self, handle: TaskHandle, throttle_s: float) -> None:
        super().__init__()
        self._handle = handle
        self._throttle = throttle_s

    def run(self) -> None:
        handle = self._handle
        signals = handle.signals
        try:
            ctx = TaskContext(handle, self._throttle)
            result = handle.fn(ctx)
        except Cancelled:
            signals.cancelled.emit()
        except BaseException as exc:  # every error goes back to the GUI as a signal
            log.debug("task %s failed", handle.name, exc_info=exc)
            signals.failed.emit(exc)
        else:
            signals.finished.emit(result)
        finally:
            signals.done.emit()


class TaskRunner(QObject):
    """Starts tasks on a private thread pool and keeps their handles alive until they end."""

    task_started = Signal(object)
    task_done = Signal(object)

    def __init__(self, parent: QObject | None = None, max_threads: int = 4, throttle_s: float = 0.05) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self.throttle_s = throttle_s
        self._handles: dict[int, TaskHandle] = {}
        # cleared by shutdown(): results still queued for a closed window are dropped
        self._live = threading.Event()
        self._live.set()

    def run(
        self,
        fn: Callable[[TaskContext], Any],
        name: str = "task",
        *,
        finished: Callable[..., Any] | None = None,
        failed: Callable[..., Any] | None = None,
        cancelled: Callable[..., Any] | None = None,
        progress: Callable[..., Any] | None = None,
        token: Callable[..., Any] | None = None,
        restarted: Callable[..., Any] | None = None,
        stage: Callable[..., Any] | None = None,
        done: Callable[..., Any] | None = None,
    ) -> TaskHandle:
        """Start ``fn(ctx)`` on the pool, with the given slots connected first."""
        handle = TaskHandle(fn, name)
        self._handles[handle.id] = handle
        sig = handle.signals
        live = self._live
        for signal, slot in ((sig.finished, finished), (sig.failed, failed), (sig.cancelled, cancelled),
                             (sig.progress, progress), (sig.token, token), (sig.restarted, restarted),
                             (sig.stage, stage), (sig.done, done)):
            if slot is not None:
                signal.connect(lambda *args, _slot=slot: _slot(*args) if live.is_set() else None)
        sig.done.connect(lambda h=handle: self._on_done(h) if live.is_set() else None)
        self.pool.start(_Runnable(handle, self.throttle_s))
        self.task_started.emit(handle)
        return handle

    def _on_done(self, handle: TaskHandle) -> None:
        handle.running = False
        self._handles.pop(handle.id, None)
        self.task_done.emit(handle)

    def running(self, name: str | None = None) -> list[TaskHandle]:
        return [h for h in self._handles.values() if name is None or h.name == name]

    def cancel_all(self) -> None:
        for h in list(self._handles.values()):
            h.cancel()

    def shutdown(self, msecs: int = 10_000) -> bool:
        """Cancel everything, wait for the workers, and drop whatever they still report."""
        self.cancel_all()
        finished = self.wait(msecs)
        self._live.clear()
        return finished

    def wait(self, msecs: int = 5000) -> bool:
        """Block until every task ended (only for shutdown and tests)."""
        return bool(self.pool.waitForDone(msecs))
