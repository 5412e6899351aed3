"""English answer spans for WikiQA's answering sentences, read by the app's own LLM judge.

WikiQA (``../shared/train/wikiqa_*.tsv.gz``) says which sentence of a Wikipedia summary answers a
question, not which words: the reader (training/reader.py) needs words. Each answering sentence is
put to the judge's span call as the app makes it (``verify.judge.judge_messages`` over the
sentence led by its title, ``LlamaCppGenerator.answer_span``: one prefill, greedy, the reply's first
line) and the reply is written down with its score. Which replies count as spans is
:func:`kept` (short, copied from the sentence, not the question's own words), applied where the
file is read (training/data.py), so the rule can change without asking the model again.

    python -m training.wikiqa_spans --model <models>/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \\
        --out training/.cache/wikiqa-spans.jsonl

Resumable: rows already in ``--out`` are not asked again. Greedy decoding, so a rerun with the
same model file writes the same replies. ~1.3 s a sentence on 2 cores (1,473 sentences).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FILES = ("wikiqa_train.tsv.gz", "wikiqa_dev.tsv.gz", "wikiqa_test.tsv.gz")
MAX_WORDS = 8
_WORD = re.compile(r"[\w$£€%.,'-]+")


def question_text(raw: str) -> str:
    """WikiQA's lower-case search query as a question (as training/data.py reads it)."""
    q = raw.strip()
    return q[0].upper() + q[1:] + ("" if q.endswith("?") else "?")


def answering(root: Path) -> Iterator[dict[str, str]]:
    """Every answering sentence of the three files: file, question id, title, question, sentence."""
    for name in FILES:
        with gzip.open(root / name, "rt", encoding="utf-8") as fh:
            for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                if r["Label"] == "1":
                    yield {"file": name, "qid": r["QuestionID"], "title": r["DocumentTitle"],
                           "question": question_text(r["Question"]), "sentence": r["Sentence"].strip()}


def key(row: dict[str, str]) -> str:
    return f"{row['qid']}|{row['sentence']}"


def kept(question: str, sentence: str, span: str, score: float) -> str:
    """The span to train and calibrate on, or "": the judge answered (score ≥ 0, not "none"), in
    at most ``MAX_WORDS`` words copied from the sentence (under 80% of its length), and it says a word
    the question does not."""
    span = span.strip().rstrip(".").strip()
    if score < 0 or not span or span.lower() == "none" or span not in sentence:
        return ""
    words = _WORD.findall(span.lower())
    if not words or len(words) > MAX_WORDS or len(span) >= 0.8 * len(sentence.rstrip(" .")):
        return ""
    asked = set(_WORD.findall(question.lower()))
    return span if any(w not in asked for w in words) else ""


def read(path: Path) -> dict[str, str]:
    """``key`` → the kept span ("" where none), from a file this script wrote."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out[r["key"]] = kept(r["question"], r["sentence"], r["span"], r["score"])
    return out


def asked(path: Path, field: str) -> set[str]:
    """The ``field`` of every row already written to ``path`` (what a resumed run does not ask again)."""
    if not path.is_file():
        return set()
    return {json.loads(line)[field] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def ask_judge(model: Path, rows: list[dict[str, str]], out: Path, unit: str,
              extra: Callable[[dict[str, str], str], dict[str, Any]] | None = None) -> None:
    """Each row's question to the judge's span call over its sentence led by its title, as the app
    makes it (``judge_messages``, ``answer_span``: greedy), appended to ``out`` as the row with the
    reply, its score, ``extra(row, reply)`` and the model's name; progress on stderr in ``unit``."""
    from desktop_kb.backends.llm_llamacpp import LlamaCppGenerator
    from desktop_kb.verify.judge import judge_messages
    from training.common import evidence_text

    gen = LlamaCppGenerator(model, model.stem)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        for i, r in enumerate(rows, 1):
            got = gen.answer_span(judge_messages(r["question"], evidence_text(r["title"], r["sentence"])))
            if got is None:
                raise SystemExit(f"{model} has no chat template")
            fh.write(json.dumps({**r, "span": got.span, "score": round(got.score, 3),
                                 **(extra(r, got.span) if extra else {}), "model": model.name},
                                ensure_ascii=False) + "\n")
            fh.flush()
            if i % 50 == 0 or i == len(rows):
                print(f"{i}/{len(rows)} {unit}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True, help="a GGUF chat model (the app's judge: Qwen2.5 1.5B)")
    ap.add_argument("--out", type=Path, default=ROOT / "training" / ".cache" / "wikiqa-spans.jsonl")
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    from training.common import shared_train

    done = asked(args.out, "key")
    todo = [{"key": key(r), **r} for r in answering(shared_train()) if key(r) not in done][:args.limit]
    ask_judge(args.model, todo, args.out, "sentences")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
