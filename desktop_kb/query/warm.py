"""Work done once, ahead of the first question, so that it is as fast as the ones after it.

The answer model is loaded, the fixed system prompts of every answer and of the answerability
judge are prefilled (their states kept in the backend's prefix cache), and the claim checks'
common-word lists are read. Without this the first question pays for all of it: on 2 cores ~390
system-prompt tokens at ~32 tokens/s, the model load, and 1–2 s for the word list. The app runs
it in the background when it opens.
"""

from __future__ import annotations

from ..progress import CancelToken
from ..protocols import Generator, Warmable
from ..text.common_words import common_chinese, common_english
from ..verify.judge import JUDGE_SYSTEM
from .prompts import ANSWER_SYSTEM

__all__ = ["warm_up"]


def warm_up(generator: Generator, *, judge: bool, cancel: CancelToken | None = None) -> int:
    """Prepare ``generator`` (and the claim checks) for questions; returns the system-prompt
    tokens prefilled now (0 when the backend cannot keep them, or had them already)."""
    common_english()  # cached for the process
    common_chinese()
    if not isinstance(generator, Warmable):
        return 0
    return generator.warm([ANSWER_SYSTEM, *([JUDGE_SYSTEM] if judge else [])], cancel=cancel)
