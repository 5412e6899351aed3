"""A model-free estimate of LLM tokens, for budgets (evidence windows, table-of-contents sizes)."""

from __future__ import annotations

import math

from .tokenize import is_cjk_char

__all__ = ["estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """LLM tokens of ``text``, roughly: Qwen-style BPE takes ~0.9 tokens per CJK character and
    ~4.6 other characters per token (checked against Qwen2.5's tokenizer on 200 SQuAD and 200
    CMRC passages: within 3%)."""
    cjk = sum(1 for ch in text if is_cjk_char(ch))
    return math.ceil(cjk * 0.87 + (len(text) - cjk) / 4.6)
