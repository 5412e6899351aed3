"""Deterministic stand-ins for the GUI tests (models are fakes; store and manifests are real)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.errors import Cancelled
from desktop_kb.gui.demo import minimal_json
from desktop_kb.library.kb import Library
from desktop_kb.progress import CancelToken
from desktop_kb.types import STAGE_READING, Answer, Citation, FallbackDecision

ANSWER = "The invoice is due on March 15 [1]."
QUOTE = "due on March 15"

# The emoji before the passage is outside the BMP: Qt counts it as two positions, Python as one,
# so a viewer that mixes the two highlights the wrong characters.
INVOICE = """# Invoice 🧾 2024-031

## Payment

The invoice is due on March 15. Please pay by bank transfer to account 1234 and quote <b>INV-031</b>.

## 付款说明

发票的付款截止日期是三月十五日，请通过银行转账支付。
"""


def write_docs(folder: Path, extra: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "invoice.md").write_text(INVOICE, encoding="utf-8")
    (folder / "notes.txt").write_text("Meeting notes. The team agreed on the roadmap for next quarter.\n",
                                      encoding="utf-8")
    (folder / "empty.txt").write_text("   \n", encoding="utf-8")  # fails: no text to index
    for i in range(extra):
        (folder / f"memo-{i:02d}.txt").write_text(f"Memo {i}. Topic number {i} is discussed here in detail.\n",
                                                  encoding="utf-8")
    return folder


def _tokens(text: str) -> list[str]:
    words = text.split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)]


class FakeGenerator:
    """Streams a fixed answer token by token (cancellable between tokens); valid JSON for schemas."""

    id = "test/fake-generator"

    def __init__(self, text: str = ANSWER, delay_s: float = 0.0) -> None:
        self.text = text
        self.delay_s = delay_s
        self.calls: list[dict[str, Any]] = []

    def chat(self, messages: Sequence[dict[str, str]], *, max_tokens: int = 512, temperature: float = 0.0,
             json_schema: dict[str, Any] | None = None, on_token: Callable[[str], None] | None = None,
             cancel: CancelToken | None = None) -> str:
        self.calls.append({"messages": list(messages), "json_schema": json_schema})
        if json_schema is not None:
            props = json_schema.get("properties", {})
            if "decision" in props:  # the fallback judge: never refuse in plumbing tests
                return json.dumps({"decision": "reject", "message": "Not in the documents."})
            return json.dumps(minimal_json(json_schema))
        out = []
        for tok in _tokens(self.text):
            if cancel is not None:
                cancel.raise_if_cancelled()
            if self.delay_s:
                time.sleep(self.delay_s)
            out.append(tok)
            if on_token is not None:
                on_token(tok)
        return "".join(out)


class SlowEmbedder(HashEmbedder):
    """The hash embedder, slowed down so an ingest can be cancelled half way."""

    def __init__(self, delay_s: float = 0.25) -> None:
        super().__init__()
        self.delay_s = delay_s

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        time.sleep(self.delay_s)
        return super().embed_passages(texts)


def find_chunk(lib: Library, kb: str, words: str):  # type: ignore[no-untyped-def]
    """The indexed chunk whose text contains ``words``."""
    for hit in lib.search(words, kbs=[kb], top_k=20):
        if words in hit.chunk.text:
            return hit
    raise AssertionError(f"no indexed chunk contains {words!r}")


class FakeAsk:
    """A scripted ``ask_fn``: cites the real chunk that contains QUOTE, streams ANSWER with a delay
    per token, honours the cancel token, and records what it was called with."""

    def __init__(self, lib: Library, text: str = ANSWER, delay_s: float = 0.02,
                 error: BaseException | None = None, status: str = "answered",
                 problems: tuple[str, ...] = ()) -> None:
        self.lib, self.text, self.delay_s, self.error, self.status = lib, text, delay_s, error, status
        self.removed: tuple[tuple[str, str], ...] = ()
        self.problems = problems
        self.rerank_degraded = False
        self.reading_s = 0.0  # how long "reading the passages" (the LLM's prefill) takes
        self.calls: list[dict[str, Any]] = []
        self.tokens_sent: list[str] = []
        self.stopped_at: float | None = None
        self.finished = threading.Event()

    def __call__(self, question: str, kbs: list[str], history: list[tuple[str, str]],
                 on_token: Callable[[str], None], cancel: CancelToken,
                 on_restart: Callable[[], None] | None = None,
                 on_stage: Callable[[str, int], None] | None = None) -> Answer:
        self.calls.append({"question": question, "kbs": list(kbs), "history": list(history)})
        stage = on_stage or (lambda _s, _n: None)
        try:
            if self.error is not None:
                raise self.error
            hit = find_chunk(self.lib, kbs[0], QUOTE)
            c = hit.chunk
            md = self.lib.document_markdown(hit.kb, c.doc_id)
            at = md.index(QUOTE, c.start)
            cite = Citation(n=1, kb=hit.kb, doc_id=c.doc_id, path=c.path, pages=c.pages,
                            heading_path=c.heading_path, start=c.start, end=c.end, quote=QUOTE,
                            quote_start=at, quote_end=at + len(QUOTE),
                            evidence=((md.rindex("\n", 0, at) + 1, md.index(".", at) + 1),))
            stage(STAGE_READING, 1)
            time.sleep(self.reading_s)
            for tok in _tokens(self.text):
                if cancel.cancelled:
                    self.stopped_at = time.monotonic()
                    raise Cancelled()
                time.sleep(self.delay_s)
                self.tokens_sent.append(tok)
                on_token(tok)
            if self.status != "answered":  # refused / clarify: no citations, the passages found
                return Answer(question=question, text=self.text, status=self.status, passages=(hit,),
                              fallback=FallbackDecision("reject" if self.status == "refused" else "clarify",
                                                        self.text))
            return Answer(question=question, text=self.text, status="answered", citations=(cite,),
                          passages=(hit,), rerank_degraded=self.rerank_degraded, problems=self.problems,
                          removed=self.removed)
        finally:
            self.finished.set()


def make_fake_ask(lib: Library, **kwargs: Any) -> FakeAsk:
    return FakeAsk(lib, **kwargs)
