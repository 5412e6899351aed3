"""A reader: the same e5 encoder with a span head — where in the evidence does the answer to the
question stand (or nowhere)? Made for #41's binding decision; shipped in desktop_kb/resources/models/e5-reader, off by default (docs/answer-check.md).

The verifier (``training/train.py``) reads (question, claim, evidence) and says yes or no; it has
not learned *which* words of a sentence answer the question (a bare wrong answer from the same
sentence scores like the right one). A reader is made to: trained to point at the answer's first and
last token, or at ``<s>`` when the evidence does not hold it (SQuAD 2.0's way). A claim is then
scored by how much of the reader's answer probability falls on spans the claim says.

    .venv/bin/python -m training.reader train --out training/runs/rd1 --steps 600
    .venv/bin/python -m training.reader evaluate --run training/runs/rd1 --json

Examples come from the cached verify examples of :func:`training.data.build` (``../shared/train``
only, the same article split): a short right answer with its evidence is a span to find; an
adversarial unanswerable question over its nearest sentence and a question over the sentence
nearest it that does not answer it (``off_passage``) point at ``<s>``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_kb.backends.reader_e5 import claim_mass, squeeze

ROOT = Path(__file__).resolve().parents[1]
SPAN_KINDS = ("short_right",)
NULL_KINDS = ("unanswerable", "off_passage")


@dataclass(frozen=True)
class ReaderExample:
    question: str
    text: str  # the evidence, led by the title
    answer: str  # "" where the evidence does not answer the question
    lang: str
    kind: str


def examples(split: str, cache: Path, seed: int = 13, files: Sequence[str] | None = None) -> list[ReaderExample]:
    from training.data import build

    out = []
    for e in build(split, seed=seed, files=files, cache=cache):
        if e.task != "verify" or e.kind not in (*SPAN_KINDS, *NULL_KINDS):
            continue
        answer = e.claim.strip().rstrip("。.") if e.kind in SPAN_KINDS else ""  # the claim is a sentence
        if answer and answer not in e.text:
            continue
        out.append(ReaderExample(e.question, e.text, answer, e.lang, e.kind))
    return out


@dataclass(frozen=True)
class Encoded:
    ids: list[int]
    start: int  # passage's first token in ``ids``
    pieces: list[str]  # the prepared text of each passage token
    target: tuple[int, int]  # (0, 0): no answer


def encode(tok: Any, question: str, text: str, answer: str = "", max_tokens: int = 192) -> Encoded:
    """The app's reader input (:func:`desktop_kb.backends.reader_e5.encode_reader`) and where the
    answer's first and last token stand in it."""
    from desktop_kb.backends.reader_e5 import encode_reader

    row = encode_reader(tok, question, text, max_tokens)
    target = (0, 0)
    if answer:
        a = tok.prepare(answer).lstrip("\u2581")
        at = row.prepared.find(a) if a else -1
        if at >= 0:
            s = next((k for k, (x, y) in enumerate(row.offsets) if x <= at < y), None)
            e = next((k for k, (x, y) in enumerate(row.offsets) if x < at + len(a) <= y), None)
            if s is not None and e is not None and e >= s:
                target = (row.start + s, row.start + e)
    return Encoded(row.ids, row.start, row.pieces, target)


def _tensors(rows: Sequence[Encoded], pad: int, device: str) -> tuple[Any, Any, Any]:
    import torch

    width = max(len(r.ids) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    allowed = torch.zeros((len(rows), width), dtype=torch.bool)
    for i, r in enumerate(rows):
        ids[i, :len(r.ids)] = torch.tensor(r.ids)
        allowed[i, 0] = True
        allowed[i, r.start:r.start + len(r.pieces)] = True
    return ids.to(device), (ids != pad).long().to(device), allowed.to(device)


def build_model(init_from: Path | None) -> Any:
    from torch import nn

    from training.model import CrossEncoder, load_e5

    class Reader(CrossEncoder):
        def __init__(self) -> None:
            super().__init__(load_e5())
            self.span = nn.Linear(self.head.in_features, 2)
            nn.init.normal_(self.span.weight, std=0.02)
            nn.init.zeros_(self.span.bias)

        def spans(self, ids: Any, mask: Any, allowed: Any) -> tuple[Any, Any]:
            x = self.emb_ln(self.word(ids) + self.pos[: ids.shape[1]])
            add = (1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0
            for layer in self.layers:
                x = layer(x, add)
            logits = self.span(x).masked_fill(~allowed[:, :, None], -1e4)
            return logits[..., 0], logits[..., 1]

    model = Reader()
    if init_from is not None:  # a cross-encoder's weights, or a shipped reader's (its span head too)
        import numpy as np
        import torch

        from desktop_kb.models.cross_encoder import load_weights

        tensors = load_weights(init_from)[0]
        model.load_tensors(tensors)
        if "span.w" in tensors:
            model.span.weight.data = torch.from_numpy(np.array(tensors["span.w"], np.float32))
            model.span.bias.data = torch.from_numpy(np.array(tensors["span.b"], np.float32))
    return model


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("train")
    tr.add_argument("--out", required=True, type=Path)
    tr.add_argument("--steps", type=int, default=600)
    tr.add_argument("--batch", type=int, default=16)
    tr.add_argument("--max-tokens", type=int, default=160)
    tr.add_argument("--lr", type=float, default=8e-5)
    tr.add_argument("--warmup", type=int, default=40)
    tr.add_argument("--freeze-layers", type=int, default=4)
    tr.add_argument("--en-repeat", type=int, default=3)
    tr.add_argument("--null-share", type=float, default=0.35, help="share of examples that point at <s>")
    tr.add_argument("--limit", type=int, default=0, help="only N examples (a smoke run)")
    tr.add_argument("--init-from", type=Path, help="shipped cross-encoder weights to start from (default: the "
                    "app's own, desktop_kb/resources/models/e5-cross-encoder, where it has them; else e5's)")
    tr.add_argument("--files", nargs="*", help="only these ../shared/train files (a smoke run)")
    tr.add_argument("--seed", type=int, default=13)
    tr.add_argument("--save-every", type=int, default=50)
    tr.add_argument("--device", default="cpu")
    tr.add_argument("--cache", type=Path, default=ROOT / "training" / ".cache")
    ev = sub.add_parser("evaluate")
    ev.add_argument("--run", type=Path, help="a training run (the reader in PyTorch)")
    ev.add_argument("--onnx", type=Path, help="or a built reader folder (the reader as the app runs it)")
    ev.add_argument("--limit", type=int, default=0, help="held-out examples (0: all)")
    ev.add_argument("--cache", type=Path, default=ROOT / "training" / ".cache")
    ev.add_argument("--halves", nargs="*", default=["calibrate", "report"], help="faithfulness halves to score")
    ev.add_argument("--per-kind", type=int, default=150, help="held-out claims a kind and language")
    ev.add_argument("--verifier", type=Path, help="a built cross-encoder folder: its verify logits beside")
    ev.add_argument("--json", action="store_true")
    return ap.parse_args(argv)


def _init_from(folder: Path | None) -> Path | None:
    from desktop_kb.models.cross_encoder import WEIGHTS_FILE, shipped_weights_dir

    if folder is None and (shipped_weights_dir() / WEIGHTS_FILE).is_file():
        return shipped_weights_dir()
    return folder


def _train_set(args: argparse.Namespace) -> list[ReaderExample]:
    rng = random.Random(args.seed)
    rows = examples("train", args.cache, args.seed, args.files)
    spans = [r for r in rows if r.answer]
    spans += [r for r in spans if r.lang == "en"] * (args.en_repeat - 1)
    nulls = [r for r in rows if not r.answer]
    want = int(len(spans) * args.null_share / (1 - args.null_share))
    out = spans + rng.sample(nulls, min(want, len(nulls)))
    rng.shuffle(out)
    return out[: args.limit] if args.limit else out


def train(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    from training.data import DATA_VERSION
    from training.train import Cursor, _commit, fit, resume, tokenizer_for

    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    rows = _train_set(args)
    tok = tokenizer_for(args.out / "tokenizer")
    ckpt_path = args.out / "checkpoint.pt"
    model = build_model(None if ckpt_path.is_file() else _init_from(args.init_from))
    for layer in model.layers[: args.freeze_layers]:
        layer.requires_grad_(False)
    model.to(args.device)
    opt = torch.optim.AdamW(model.trainable(), lr=args.lr, weight_decay=0.01)
    cursor = Cursor({"verify": rows, "rerank": []}, args.seed, 0.0)
    step, meta = 0, {"args": {k: str(v) for k, v in vars(args).items()}, "commit": _commit(),
                     "examples": len(rows), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                     "data_version": DATA_VERSION, "device": args.device}
    saved = resume(ckpt_path, model, opt, cursor, args.device, "reader")
    if saved is not None:
        step, meta = saved[0], {**saved[1], "resumed_at": saved[0], "resumed_with": meta["args"]}

    def loss_of(batch: list[ReaderExample]) -> Any:
        enc = [encode(tok, r.question, r.text, r.answer, args.max_tokens) for r in batch]
        ids, mask, allowed = _tensors(enc, tok.pad, args.device)
        start, end = model.spans(ids, mask, allowed)
        gold = torch.tensor([e.target for e in enc], device=args.device)
        return (F.cross_entropy(start, gold[:, 0]) + F.cross_entropy(end, gold[:, 1])) / 2

    step = fit(args, model, opt, cursor, step, meta, loss_of, log_every=10, tag="reader")
    return {"out": str(args.out), "step": step, "meta": meta}


class ReaderScorer:
    """A trained run's reader on the CPU: answer spans, and how much of them a claim says."""

    def __init__(self, run: Path, max_tokens: int = 256) -> None:
        import torch

        from training.train import tokenizer_for

        self.tok = tokenizer_for(run / "tokenizer")
        self.model = build_model(None)
        self.model.load_state_dict(torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=False)["model"],
                                   strict=False)
        self.model.eval()
        self.max_tokens = max_tokens

    def spans(self, question: str, text: str, top: int = 20) -> tuple[float, list[tuple[float, str]]]:
        """P(no answer here) and the ``top`` likeliest spans (probability, prepared text)."""
        import torch

        from desktop_kb.backends.reader_e5 import read_spans

        enc = encode(self.tok, question, text, "", self.max_tokens)
        ids, mask, allowed = _tensors([enc], self.tok.pad, "cpu")
        with torch.no_grad():
            start, end = (t[0].numpy() for t in self.model.spans(ids, mask, allowed))
        return read_spans(start, end, enc.start, enc.pieces, top)


class OnnxReaderScorer:
    """A built reader folder (``desktop-kb models install``, or ``build_cross_encoder`` of exported
    weights) as the app runs it: what the shipped calibration is drawn from."""

    def __init__(self, folder: Path) -> None:
        from desktop_kb.backends.reader_e5 import E5Reader

        self.reader = E5Reader(folder)

    def spans(self, question: str, text: str, top: int = 20) -> tuple[float, list[tuple[float, str]]]:
        null, spans = self.reader.spans(question, [text])[0]
        return null, spans[:top]


def _f1(a: str, b: str) -> float:
    x, y = squeeze(a), squeeze(b)
    if not x or not y:
        return float(x == y)
    common = sum(min(x.count(ch), y.count(ch)) for ch in set(x))
    return 0.0 if not common else 2 * common / (len(x) + len(y))


def _claim_rows(reader: Any, lang: str, which: str, verifier: Any) -> dict[str, Any]:
    from training.evaluate import BOUND, OFF, RIGHT, auc, report_claims

    totals: dict[str, int] = {}
    claims = report_claims(lang, which=which, totals=totals)
    read = [reader.spans(q, e) for _, q, _, e in claims]
    texts = [re.sub(r"\s*\[\d+\]", "", c) for _, _, c, _ in claims]
    scores = [claim_mass(c, spans) for c, (_, spans) in zip(texts, read, strict=True)]
    logits = [0.0] * len(claims)
    if verifier is not None:
        from desktop_kb.backends.cross_encoder_e5 import VERIFY, verify_pair

        logits = verifier([(VERIFY, *verify_pair(q, c, e)) for _, q, c, e in claims])
    by: dict[str, list[float]] = {}
    for (kind, *_), s in zip(claims, scores, strict=True):
        by.setdefault(kind, []).append(s)
    right = [s for k in RIGHT for s in by.get(k, [])]
    return {"claims": {k: len(v) for k, v in sorted(by.items())}, "totals": totals,
            "auc_right_vs_bound": auc(right, [s for k in BOUND for s in by.get(k, [])]),
            "auc_right_vs_off": auc(right, [s for k in OFF for s in by.get(k, [])]),
            "records": [{"kind": k, "claim": c, "mass": round(s, 5), "null": round(r[0], 5), "verifier": round(v, 4),
                         "spans": [[round(p, 5), piece] for p, piece in r[1]]}
                        for (k, *_), c, s, r, v in zip(claims, texts, scores, read, logits, strict=True)]}


def _heldout_claims(reader: Any, cache: Path, per_kind: int, verifier: Any) -> list[dict[str, Any]]:
    """Held-out verify examples of the kinds the report halves have, with the reader's reading:
    what the reader's thresholds are calibrated on (never the eval sets)."""
    from training.data import build
    from training.evaluate import BOUND, OFF, RIGHT

    taken: dict[tuple[str, str], int] = {}
    rows = []
    for e in build("heldout", cache=cache):
        key = (e.kind, e.lang)
        if e.task == "verify" and e.kind in (*RIGHT, *BOUND, *OFF) and taken.get(key, 0) < per_kind:
            taken[key] = taken.get(key, 0) + 1
            rows.append(e)
    logits = [0.0] * len(rows)
    if verifier is not None:
        from desktop_kb.backends.cross_encoder_e5 import VERIFY, verify_pair

        logits = verifier([(VERIFY, *verify_pair(e.question, e.claim, e.text)) for e in rows])
    out = []
    for e, v in zip(rows, logits, strict=True):
        null, spans = reader.spans(e.question, e.text)
        out.append({"kind": e.kind, "lang": e.lang, "claim": e.claim, "mass": round(claim_mass(e.claim, spans), 5),
                    "null": round(null, 5), "verifier": round(v, 4), "spans": [[round(p, 5), t] for p, t in spans]})
    return out


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    from training.evaluate import SETS, auc, onnx_scorer

    if (args.run is None) == (args.onnx is None):
        raise SystemExit("evaluate: give --run or --onnx")
    reader: Any = ReaderScorer(args.run) if args.run else OnnxReaderScorer(args.onnx)
    out: dict[str, Any] = {"heldout": {}}
    held = examples("heldout", args.cache)
    held = held[: args.limit] if args.limit else held
    for lang in ("en", "zh"):
        rows = [r for r in held if r.lang == lang]
        got = [reader.spans(r.question, r.text, top=1) for r in rows]
        pos = [(r, g) for r, g in zip(rows, got, strict=True) if r.answer]
        neg = [g for r, g in zip(rows, got, strict=True) if not r.answer]
        out["heldout"][lang] = {"answerable": len(pos), "unanswerable": len(neg),
                                "f1": sum(_f1(r.answer, g[1][0][1]) for r, g in pos) / max(1, len(pos)),
                                "auc_answer_here": auc([1 - g[0] for _, g in pos], [1 - g[0] for g in neg])}
        print(f"[reader] held-out {lang}: {out['heldout'][lang]}", file=sys.stderr)
    verifier = onnx_scorer(args.verifier) if args.verifier else None
    out["heldout_claims"] = _heldout_claims(reader, args.cache, args.per_kind, verifier)
    for which in args.halves:
        for lang in SETS:
            out[f"{which}_{lang}"] = _claim_rows(reader, lang, which, verifier)
            shown = {k: v for k, v in out[f"{which}_{lang}"].items() if k != "records"}
            print(f"[reader] {which} {lang}: {shown}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    if args.cmd == "train":
        result = train(args)
    else:
        result = evaluate(args)
    if getattr(args, "json", True):
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
