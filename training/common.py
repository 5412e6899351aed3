"""What every training module shares: where ``../shared/train`` is, and the evidence text the
verifier reads. It imports no other training module, so the span builders (``wikiqa_spans``,
``aligned_spans``, ``align_en``) and the example builder (``data``) all depend on it and never on
each other in a circle."""

from __future__ import annotations

import os
from pathlib import Path

from desktop_kb.verify.verifier import led_by

__all__ = ["ROOT", "evidence_text", "shared_train"]

ROOT = Path(__file__).resolve().parents[1]


def shared_train() -> Path:
    """The training data (``$DKB_TRAIN_DATA``, else ``../shared/train`` beside the project)."""
    return Path(os.environ.get("DKB_TRAIN_DATA", ROOT.parent / "shared" / "train"))


def evidence_text(title: str, text: str) -> str:
    """The evidence as the verifier reads it: the passage led by its title."""
    return led_by(title, text)
