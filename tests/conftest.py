"""Shared fixtures: fresh settings per test, deterministic fakes for plumbing tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from desktop_kb.errors import Cancelled
from desktop_kb.progress import CancelToken
from desktop_kb.settings import Settings


@pytest.fixture(autouse=True)
def _own_models_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's models folder is its data folder's (never the developer's shared one); tests
    of the real models name their files explicitly."""
    monkeypatch.setenv("DESKTOP_KB_MODELS_DIR", str(tmp_path / "data" / "models"))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


class ScriptedGenerator:
    """A fake LLM for plumbing tests: JSON requests get ``json_replies`` in turn (or a default),
    chat requests get ``answers`` in turn, streamed word by word."""

    id = "test/scripted"

    def __init__(self, answers: Sequence[str] = ("The answer [1].",),
                 json_replies: Sequence[dict[str, Any] | str] = ()) -> None:
        self.answers = list(answers)
        self.json_replies = list(json_replies)
        self.calls: list[dict[str, Any]] = []

    def chat(self, messages, *, max_tokens=512, temperature=0.0, json_schema=None, on_token=None,
             cancel: CancelToken | None = None) -> str:
        self.calls.append({"messages": list(messages), "json_schema": json_schema})
        if json_schema is not None:
            reply = self.json_replies.pop(0) if self.json_replies else _default_json(json_schema, messages)
            return reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        text = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        out = []
        for piece in text.split(" "):
            if cancel is not None and cancel.cancelled:
                raise Cancelled()
            tok = piece if not out else " " + piece
            out.append(tok)
            if on_token is not None:
                on_token(tok)
        return "".join(out)


def _default_json(schema: dict[str, Any], messages: Sequence[dict[str, str]]) -> dict[str, Any]:
    props = schema.get("properties", {})
    if "decision" in props:
        return {"decision": "reject", "message": "Not in the documents."}
    if "query" in props:  # a rewrite that keeps the latest question as it is
        return {"query": messages[-1]["content"].rsplit("Latest question: ", 1)[-1]}
    return {}


@pytest.fixture
def scripted() -> Callable[..., ScriptedGenerator]:
    return ScriptedGenerator


@pytest.fixture(scope="session")
def shipped_llm() -> Path:
    """The shipped Qwen2.5-Coder-1.5B GGUF, assembled once into a shared cache (skip if absent)."""
    import os

    pytest.importorskip("llama_cpp")
    from desktop_kb.models.install import install_shipped, shipped_parts_installed
    from desktop_kb.models.registry import SHIPPED_LLMS

    model = SHIPPED_LLMS["qwen2.5-coder-1.5b-instruct-q4_k_m"]
    if not shipped_parts_installed(model):
        pytest.skip("the shipped LLM packages (desktop-kb[models]) are not installed")
    from desktop_kb.settings import default_data_dir

    # the same models folder `./run setup` fills (assembly is idempotent and verified)
    root = Path(os.environ["DESKTOP_KB_TEST_CACHE"]) if "DESKTOP_KB_TEST_CACHE" in os.environ else default_data_dir()
    (path,) = install_shipped(Settings(data_dir=root), (model.id,))
    return path


@pytest.fixture
def real_settings(tmp_path: Path, shipped_llm: Path) -> Settings:
    from real_models import real_settings_for

    return real_settings_for(tmp_path / "data", shipped_llm)
