"""The local API served for real (uvicorn on a free loopback port, in a thread) over a Library
with the real store and deterministic fake models (plumbing); the real-model tests build their own."""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.errors import Cancelled
from desktop_kb.library.kb import Library

sys.path.insert(0, str(Path(__file__).parent))

from api_helpers import ANSWER, write_docs


class SlowGenerator:
    """Streams a fixed answer word by word, ``delay_s`` apart; cancellable; JSON replies minimal."""

    id = "test/slow-generator"

    def __init__(self, text: str = ANSWER, delay_s: float = 0.0) -> None:
        self.text, self.delay_s = text, delay_s
        self.cancelled = threading.Event()
        self.answers = 0

    def chat(self, messages, *, max_tokens=512, temperature=0.0, json_schema=None, on_token=None, cancel=None) -> str:
        if json_schema is not None:
            props = json_schema.get("properties", {})
            latest = messages[-1]["content"].rsplit("Latest question: ", 1)[-1]  # a rewrite keeps the question
            return json.dumps({"decision": "reject", "message": "Not in the documents."} if "decision" in props
                              else {"query": latest} if "query" in props else {})
        self.answers += 1
        out = []
        for i, word in enumerate(self.text.split(" ")):
            if cancel is not None and cancel.cancelled:
                self.cancelled.set()
                raise Cancelled()
            time.sleep(self.delay_s)
            out.append(word if i == 0 else " " + word)
            if on_token is not None:
                on_token(out[-1])
        return "".join(out)


@dataclasses.dataclass
class Served:
    url: str
    token: str
    lib: Library
    gen: SlowGenerator
    data_dir: Path
    server: Any

    def headers(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.token}"}


@pytest.fixture
def serve(tmp_path: Path, settings) -> Iterator[Callable[..., Served]]:
    from desktop_kb.api.server import ServerThread
    from desktop_kb.api.tokens import TokenStore

    running: list[Served] = []

    def start(delay_s: float = 0.0, max_waiting: int = 4, text: str = ANSWER) -> Served:
        s = settings.replace(query=dataclasses.replace(settings.query, dense_threshold=0.0))
        gen = SlowGenerator(text, delay_s)
        lib = Library.open(s, embedder=HashEmbedder(), reranker=None, generator=gen)
        lib.ingest("docs", [write_docs(tmp_path / "docs")], tags=["finance"])
        server = ServerThread(lib, s.data_dir, "127.0.0.1", 0, max_waiting=max_waiting)
        server.start()
        _, token = TokenStore(s.data_dir).create(f"test-{len(running)}")
        served = Served(f"http://127.0.0.1:{server.port}", token, lib, gen, s.data_dir, server)
        running.append(served)
        return served

    yield start
    for s in running:
        s.server.stop()
        s.lib.close()
