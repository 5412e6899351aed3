"""English answer spans for the aligned SQuAD questions that neither string nor meaning finds,
read by the app's own LLM judge and checked against the Chinese answer (data version 6).

``align_en.py`` recovers an English span for an aligned answerable question from its Chinese
answer by string (Latin letters, digits, names) or by meaning (the closest word run, 0.03 clear of
the others). What it leaves out is mostly the kind of answer those cannot pin: a common noun, an
abstract phrase, a clause ("festivals", "notorious intransigence") — the kind of bare right answer
the reader refuses in English (docs/history/meaning-check.md, session 26). Here each such question is put
to the judge's span call over its aligned English sentence, as the app makes it
(``verify.judge.judge_messages``, ``LlamaCppGenerator.answer_span``, greedy), and the reply is
written down with its cosine to the Chinese answer (the app's multilingual-e5, passage side).
:func:`kept` decides which replies count — the WikiQA rule (short, copied, not only the
question's words) and close in meaning to the known answer — where the file is read, so the rule
can change without asking the model again.

    python -m training.aligned_spans --model <models>/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf

Resumable: questions already in ``--out`` are not asked again. Training data only (the English
half of ``../shared/train``'s translated pair).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from training import wikiqa_spans

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "training" / ".cache" / "aligned-spans.jsonl"
SIM_FLOOR = 0.80  # cosine of the judge's span to the Chinese answer (multilingual-e5 passages)


def kept(row: dict[str, Any]) -> str:
    """The span to train on, or "": :func:`training.wikiqa_spans.kept`, whole words of the sentence
    (not "r" out of a word), and cosine ≥ SIM_FLOOR to the Chinese answer."""
    span = wikiqa_spans.kept(row["question"], row["sentence"], row["span"], row["score"])
    if not span or row["sim"] < SIM_FLOOR:
        return ""
    return span if re.search(rf"(?<!\w){re.escape(span)}(?!\w)", row["sentence"]) else ""


def read(path: Path) -> dict[str, str]:
    """English question id → the kept span ("" where none), from a file this script wrote."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["qid"]: kept(r) for r in rows}


def _cosine(embed_p: Any, a: str, b: str) -> float:
    if not a.strip():
        return 0.0
    va, vb = embed_p([a, b])
    return float(va @ vb)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True, help="a GGUF chat model (the app's judge: Qwen2.5 1.5B)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--limit", type=int, default=None, help="ask at most this many questions")
    args = ap.parse_args(argv)
    from desktop_kb.models.e5_onnx import e5_onnx_dir
    from desktop_kb.settings import load_settings
    from training.align_en import aligned_english, onnx_embedders
    from training.common import shared_train

    done = wikiqa_spans.asked(args.out, "qid")
    todo: list[dict[str, str]] = []

    def collect(q: dict, sentence: str, zh_answer: str) -> str:
        if q["id"] not in done:
            todo.append({"qid": q["id"], "title": q["title"].replace("_", " "), "question": q["question"],
                         "sentence": sentence, "zh_answer": zh_answer})
        return ""

    embed_q, embed_p = onnx_embedders(e5_onnx_dir(load_settings()))
    aligned_english(shared_train(), embed_q, embed_p, log=lambda m: print(m, file=sys.stderr), read=collect)
    todo = todo[:args.limit]
    print(f"{len(todo)} questions to ask ({len(done)} asked before)", file=sys.stderr)

    def sim(row: dict[str, str], reply: str) -> dict[str, float]:
        return {"sim": round(_cosine(embed_p, reply.strip().rstrip(".").strip(), row["zh_answer"]), 4)}

    wikiqa_spans.ask_judge(args.model, todo, args.out, "questions", sim)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
