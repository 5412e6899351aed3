"""Chat generation with a local GGUF model through llama-cpp-python (streaming, cancellable)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import Cancelled, GenerationError, ModelError, ModelNotInstalled
from ..progress import CancelToken
from ..protocols import ChatMessage
from ._common import missing_package

__all__ = ["GGUF_MAGIC", "LlamaCppGenerator"]

GGUF_MAGIC = b"GGUF"


class LlamaCppGenerator:
    """One GGUF model, loaded lazily on first use; one generation at a time per instance.

    The chat template comes from the GGUF metadata (Qwen2.5: ChatML, stops at ``<|im_end|>``).
    """

    def __init__(self, path: str | Path, model_id: str, n_ctx: int = 4096, n_threads: int = 2) -> None:
        self.path = Path(path)
        self.id = model_id
        self.n_ctx = int(n_ctx)
        self.n_threads = max(1, int(n_threads))
        self._llm: Any = None
        self._lock = threading.Lock()  # guards loading and generation (a llama context is not reentrant)

    # -- loading -----------------------------------------------------------------------------
    def _check_file(self) -> None:
        if not self.path.is_file():
            raise ModelNotInstalled(
                f"LLM model file not found: {self.path}",
                "Run `desktop-kb models install` to assemble the shipped model, or "
                "`desktop-kb models install --from FILE.gguf` to use a GGUF file you copied.",
            )
        with self.path.open("rb") as fh:
            if fh.read(4) != GGUF_MAGIC:
                raise ModelError(
                    f"{self.path} is not a GGUF model file.",
                    "Re-run `desktop-kb models install` (the file may be incomplete or damaged).",
                )

    def _load_locked(self) -> Any:
        if self._llm is not None:
            return self._llm
        self._check_file()
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise missing_package("llama-cpp-python", "desktop-kb[llm]", "The answer generator") from exc
        try:
            self._llm = Llama(
                model_path=str(self.path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(
                f"Cannot load the LLM {self.path.name}: {exc}",
                "The file may be damaged, or there is not enough memory; try a smaller model.",
            ) from exc
        return self._llm

    def load(self) -> None:
        """Load the model now (it is otherwise loaded on the first :meth:`chat`)."""
        with self._lock:
            self._load_locked()

    @property
    def loaded(self) -> bool:
        return self._llm is not None

    def close(self) -> None:
        """Free the model's memory; a later :meth:`chat` loads it again."""
        with self._lock:
            llm, self._llm = self._llm, None
            if llm is not None and hasattr(llm, "close"):
                llm.close()

    # -- Generator ---------------------------------------------------------------------------
    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_schema: dict[str, Any] | None = None,
        on_token: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> str:
        kwargs: dict[str, Any] = {
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "stream": True,
        }
        if json_schema is not None:
            # {"type": "json_schema", ...} is silently ignored by llama-cpp-python: use json_object.
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        pieces: list[str] = []
        with self._lock:
            if cancel is not None and cancel.cancelled:
                raise Cancelled()
            llm = self._load_locked()
            try:
                stream = llm.create_chat_completion(**kwargs)
            except (ValueError, RuntimeError) as exc:
                raise GenerationError(f"The LLM could not start: {exc}") from exc
            finish = None
            try:
                for chunk in stream:
                    choice = chunk["choices"][0]
                    finish = choice.get("finish_reason") or finish
                    piece = choice["delta"].get("content") or ""
                    if piece:
                        pieces.append(piece)
                        if on_token is not None:
                            on_token(piece)
                    if cancel is not None and cancel.cancelled:
                        raise Cancelled()
            except (ValueError, RuntimeError) as exc:
                if "context window" in str(exc):
                    raise GenerationError(
                        f"The prompt is too long for the LLM's context ({self.n_ctx} tokens): {exc}",
                        "Lower query.top_k or raise models.llm_context in the settings.",
                    ) from exc
                raise GenerationError(f"The LLM failed while answering: {exc}") from exc
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    close()  # stops llama.cpp's token loop at once
        if json_schema is not None and finish == "length":
            raise GenerationError(
                f"The LLM's JSON reply was cut off at {max_tokens} tokens, so it is not valid JSON.",
                "Raise max_tokens, or bound strings/arrays in the schema (maxLength, maxItems).",
            )
        return "".join(pieces)
