"""Variants of the answerability judge, on the same answers: ``separate``, its own prompt reading
each cited sentence with one neighbour either side (the product until session 10); ``tight``,
the cited sentences alone (the product since: verify/judge.py); ``follow_up``, the yes/no asked
as the next turn of the answer's own conversation (:func:`follow_up_messages`: the model's
context still holds the passages and its answer, so only that turn is prefilled). Measured in
session 10 (docs/history/benchmarks-log.md): the follow-up is ~0.5 s faster than ``separate`` but separates
answers from SQuAD 2.0's adversarial questions far worse (AUC 0.63 vs 0.88: a model asked about
its own answer says yes); ``tight`` separates them at least as well (0.89 vs 0.85) in less than
half the time.

    .venv/bin/python benchmarks/compare_judges.py --data-dir D --skip 50 --limit 100 --json
    .venv/bin/python benchmarks/compare_judges.py ... --judges separate,tight

Questions of each shared QA set outside the ``eval answers --limit SKIP`` sample (so that run is
not scored on what sets a threshold), up to ``--limit`` of them, are answered by the product with
the judge off (``Library.ask``: retrieval, generation, claim checks). Each answer that stands
(status answered, with citations) is scored by every judge asked for; the follow-up, when asked
for, goes first, while the model's context holds the answer's conversation as it would in the
app. Labels come from gold data, never from the judge or the claim checks: an unanswerable SQuAD 2.0
question should be withheld ("negative"); an answerable one whose answer contains a gold answer
should pass ("positive"); an answerable one answered wrongly is counted apart ("wrong").
Printed per set and judge: AUC positive vs negative, the share of positives passed and of
negatives stopped per threshold, and the judge's time. Progress on stderr; ``--json`` prints one
JSON document on stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibrate_judge import auc  # noqa: E402  (the same AUC as the judge's calibration)

EVAL = Path(os.environ.get("DKB_EVAL_DATA", ROOT.parent / "shared" / "eval"))
DEFAULT_SETS = [EVAL / "qa" / "squad2_dev", EVAL / "qa" / "cmrc2018_dev"]
THRESHOLDS = (-3.0, -2.0, -1.5, -1.0, -0.6, -0.3, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
JUDGES = ("separate", "tight", "follow_up")
FOLLOW_UP = (
    "Check your answer against the passages. Does it answer exactly this question: \"{question}\"? "
    "It does not if the passages are about a different name, date, number, place, an opposite word, "
    "or a negation of what the question asks. Reply Yes or No."
)


def follow_up_messages(answer_messages: list[dict[str, str]], answer: str, question: str) -> list[dict[str, str]]:
    """The answer's conversation, its final text, and the yes/no question about it."""
    ask = FOLLOW_UP.format(question=" ".join(question.split()).replace('"', "'"))
    return [*answer_messages, {"role": "assistant", "content": answer}, {"role": "user", "content": ask}]


def judge_prompt(name: str, answer_messages: list[dict[str, str]], ans: Any, question: str) -> list[dict[str, str]]:
    from desktop_kb.verify.judge import judge_messages, judge_text

    if name == "follow_up":
        return follow_up_messages(answer_messages, ans.text, question)
    # the yes/no form of the judge (the answer shown; the product's span judge is not a yes/no)
    return judge_messages(question, judge_text(ans.citations, ans.passages, around=0 if name == "tight" else 1),
                          ans.text)


def run_set(settings: Any, dataset: Path, skip: int, limit: int, per_item: Any,
            judges: tuple[str, ...] = JUDGES) -> list[dict[str, Any]]:
    from bench_answer import Spy

    from desktop_kb.eval.answers import score_answer
    from desktop_kb.eval.corpus import LogProgress, prepare_kb
    from desktop_kb.eval.datasets import load_qa, sample_ids
    from desktop_kb.library.factory import build_generator
    from desktop_kb.library.kb import Library

    ds = load_qa(str(dataset))
    ids = [it.id for it in ds.items]
    held_out = set(sample_ids(ids, skip))
    wanted = [i for i in sample_ids(ids, skip + limit) if i not in held_out][:limit]
    items = [it for it in ds.items if it.id in set(wanted)]
    spy = Spy(build_generator(settings))
    rows: list[dict[str, Any]] = []
    with Library.open(settings, generator=spy) as lib:
        prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, progress=LogProgress(f"ingest {ds.name}"))
        spy.inner.load()
        for n, item in enumerate(items, 1):
            spy.calls.clear()
            ans = lib.ask(item.question, kbs=[prep.name])
            score = score_answer(item, ans, prep.doc_id)
            label = ("negative" if not item.answerable else "positive" if score.contains_gold else "wrong")
            row: dict[str, Any] = {"set": ds.name, "id": item.id, "status": ans.status, "label": label}
            prompts = [c["messages"] for c in spy.calls if not c["json"] and not c.get("judge")]
            if ans.status == "answered" and ans.citations and prompts:
                for name in sorted(judges, key=lambda j: j != "follow_up"):
                    t0 = time.perf_counter()
                    row[name] = round(spy.inner.yes_no(judge_prompt(name, prompts[0], ans, item.question)), 4)
                    row[f"{name}_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            rows.append(row)
            if per_item is not None:
                per_item.write(json.dumps(row, ensure_ascii=False) + "\n")
                per_item.flush()
            scores = " ".join(f"{j} {row.get(j)}" for j in judges)
            print(f"{ds.name} {n}/{len(items)}: {ans.status} {label} {scores}", file=sys.stderr, flush=True)
    spy.close()
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    judges = [j for j in JUDGES if any(j in r for r in rows)]
    scored = [r for r in rows if all(j in r for j in judges) and judges]
    out: dict[str, Any] = {"questions": len(rows), "scored": len(scored),
                           "labels": {k: sum(r["label"] == k for r in scored) for k in ("positive", "negative", "wrong")}}
    for name in judges:
        pos = [r[name] for r in scored if r["label"] == "positive"]
        neg = [r[name] for r in scored if r["label"] == "negative"]
        wrong = [r[name] for r in scored if r["label"] == "wrong"]
        out[name] = {
            "auc_positive_vs_negative": auc(pos, neg),
            "auc_positive_vs_wrong": auc(pos, wrong),
            "ms_p50": statistics.median(r[f"{name}_ms"] for r in scored) if scored else None,
            "thresholds": [{"threshold": t,
                            "positive_passed": round(sum(s >= t for s in pos) / len(pos), 3) if pos else None,
                            "negative_stopped": round(sum(s < t for s in neg) / len(neg), 3) if neg else None,
                            "wrong_stopped": round(sum(s < t for s in wrong) / len(wrong), 3) if wrong else None}
                           for t in THRESHOLDS],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", action="append", type=Path, help="QA folder (repeatable); default SQuAD + CMRC")
    ap.add_argument("--data-dir", type=Path, help="data folder (eval knowledge bases are cached)")
    ap.add_argument("--skip", type=int, default=50, help="leave out the `eval answers --limit SKIP` sample")
    ap.add_argument("--limit", type=int, default=100, help="questions per set")
    ap.add_argument("--judges", default=",".join(JUDGES), help=f"comma-separated, of {', '.join(JUDGES)}")
    ap.add_argument("--per-item", type=Path, help="also write one JSON line per question")
    ap.add_argument("--summarise", type=Path, help="only summarise an earlier --per-item file")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    if args.summarise:
        rows = [json.loads(line) for line in args.summarise.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        from desktop_kb.settings import load_settings

        settings = load_settings(args.data_dir)
        settings = dataclasses.replace(settings, query=dataclasses.replace(settings.query, judge=False))
        per_item = args.per_item.open("w", encoding="utf-8") if args.per_item else None
        rows = []
        load_before = list(os.getloadavg())
        for ds in args.dataset or DEFAULT_SETS:
            rows += run_set(settings, ds, args.skip, args.limit, per_item, tuple(args.judges.split(",")))
        if per_item is not None:
            per_item.close()
        print(f"load average {load_before} -> {list(os.getloadavg())}", file=sys.stderr)
    result = {name: summarise([r for r in rows if r["set"] == name]) for name in dict.fromkeys(r["set"] for r in rows)}
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        for name, res in result.items():
            print(f"{name}: {res['scored']} answers scored of {res['questions']}, labels {res['labels']}")
            for judge in (j for j in JUDGES if j in res):
                r = res[judge]
                print(f"  {judge}: AUC pos/neg {r['auc_positive_vs_negative']}, pos/wrong {r['auc_positive_vs_wrong']}, "
                      f"p50 {r['ms_p50']} ms")
                for t in r["thresholds"]:
                    print(f"    >= {t['threshold']:+.1f}: positives passed {t['positive_passed']}, negatives stopped "
                          f"{t['negative_stopped']}, wrong stopped {t['wrong_stopped']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
