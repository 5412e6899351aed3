"""What the trained verifier reads of a cited claim: the claim without its marks, and the cited
passage's evidence (the sentences the word checks found supporting it), led by its heading.

The same texts are formed for training (``training/data.py`` builds its evidence the same way:
the supporting sentence, led by the passage's title), so what the verifier learned is what it sees.
"""

from __future__ import annotations

import re

from ..types import Citation, Hit

__all__ = ["claim_text", "evidence_of", "led_by"]

_MARKS = re.compile(r"\s*\[\d+(?:\s*[,，]\s*\d+)*\]")
MAX_EVIDENCE_CHARS = 1200


def claim_text(sentence: str) -> str:
    """The claim as the verifier reads it: the sentence without its ``[n]`` marks."""
    return " ".join(_MARKS.sub("", sentence).split())


def evidence_of(citation: Citation, passage: Hit) -> str:
    """The citation's evidence sentences (or its quote; else the passage's start), led by the
    passage's heading in parentheses, as training lays it out."""
    chunk = passage.chunk
    spans = list(citation.evidence)
    if not spans and citation.quote_start is not None and citation.quote_end is not None:
        spans = [(citation.quote_start, citation.quote_end)]
    parts = [chunk.text[max(0, s - chunk.start): max(0, e - chunk.start)] for s, e in sorted(spans)]
    text = " … ".join(p.strip() for p in parts if p.strip()) or chunk.text
    text = text[:MAX_EVIDENCE_CHARS]
    return led_by(chunk.heading_path[0] if chunk.heading_path else "", text)


def led_by(title: str, text: str) -> str:
    """``text`` led by what it is about: "(Title) text"."""
    return f"({title}) {text}" if title else text
