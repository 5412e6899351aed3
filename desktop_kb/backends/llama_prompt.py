"""Prompt tokens and a system-prompt prefix cache for llama.cpp (used by :mod:`.llm_llamacpp`).

The chat is rendered with the model's own GGUF chat template and tokenised here, so the backend
knows how many tokens a prompt has, and can keep the model state right after each system prompt
(the fixed part of every answer, rewrite and fallback prompt). A prompt whose system prompt is
cached prefills only what follows it, even when another prompt ran in between.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["ChatTemplate", "PrefixCache", "log_odds"]


class ChatTemplate:
    """The GGUF chat template of one loaded model (``None`` from :meth:`of` when it has none)."""

    def __init__(self, llm: Any, template: str) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self._llm = llm
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        text = llm._model.token_get_text
        self.eos = text(eos_id) if eos_id != -1 else ""
        bos = text(bos_id) if bos_id != -1 else ""
        self._full = Jinja2ChatFormatter(template=template, eos_token=self.eos, bos_token=bos)
        self._prefix = Jinja2ChatFormatter(template=template, eos_token=self.eos, bos_token=bos,
                                           add_generation_prompt=False)

    @classmethod
    def of(cls, llm: Any) -> ChatTemplate | None:
        template = (getattr(llm, "metadata", None) or {}).get("tokenizer.chat_template")
        if not template or getattr(llm, "chat_format", None) != "chat_template.default":
            return None
        try:
            return cls(llm, template)
        except Exception:  # an unusual template: llama-cpp-python's own chat path is used instead
            return None

    def _tokens(self, text: str) -> list[int]:
        # as llama-cpp-python's chat handler does: the template adds the special tokens itself
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def prompt(self, messages: Sequence[dict[str, str]]) -> list[int]:
        return self._tokens(self._full(messages=list(messages)).prompt)

    def system_prefix(self, messages: Sequence[dict[str, str]], prompt: Sequence[int]) -> list[int] | None:
        """The tokens of the leading system message, when they are a prefix of ``prompt``."""
        if not messages or messages[0]["role"] != "system" or len(messages) < 2:
            return None
        prefix = self._tokens(self._prefix(messages=list(messages[:1])).prompt)
        return prefix if 0 < len(prefix) < len(prompt) and list(prompt[:len(prefix)]) == prefix else None


class PrefixCache:
    """Model states right after each recent system prompt (a few; oldest dropped first).

    A state holds the KV cache of the prefix only (a few MB for a 1.5B model); the logits rows
    that llama-cpp-python copies with it are trimmed to one, as nothing here reads them.
    """

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self._states: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        self.hits = 0

    def clear(self) -> None:
        self._states.clear()

    def __len__(self) -> int:
        return len(self._states)

    def prepare(self, llm: Any, prefix: Sequence[int]) -> int:
        """Leave ``llm`` holding ``prefix`` evaluated; the tokens already there are returned
        (0 when the prefix had to be prefilled now, which is then saved for next time)."""
        key = tuple(prefix)
        n = len(key)
        if llm.n_tokens >= n and tuple(llm.input_ids[:n]) == key:
            return n  # still in the context: llama-cpp-python reuses it by itself
        state = self._states.get(key)
        if state is not None:
            self._states.move_to_end(key)
            llm.load_state(state)
            self.hits += 1
            return n
        llm.reset()
        llm.eval(list(key))
        state = llm.save_state()
        state.scores = state.scores[-1:].copy()  # broadcast back on load; keeps a state small
        self._states[key] = state
        while len(self._states) > self.capacity:
            self._states.popitem(last=False)
        return 0


def log_odds(logits: Any, yes: Sequence[int], no: Sequence[int]) -> float:
    """log P(any of ``yes``) − log P(any of ``no``) under the softmax of ``logits`` (its
    normaliser cancels out)."""
    row = np.asarray(logits, dtype=np.float64)
    return float(np.logaddexp.reduce(row[list(yes)]) - np.logaddexp.reduce(row[list(no)]))
