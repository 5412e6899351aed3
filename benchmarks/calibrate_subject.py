"""How often the named-subject rule (desktop_kb/verify/subject.py) stops a right answer, and how often
it can stop one about something else, on CMRC 2018 questions — text only, no model.

    .venv/bin/python benchmarks/calibrate_subject.py ../shared/eval/qa/cmrc2018_dev [--sample held|report] [--json]

For each answerable question of the sample: is its subject (a 《title》 or the name it opens with)
read at all; would the rule refuse an answer cited to the question's own article (a right answer
stopped: the lower the better); would it refuse an answer cited to any other article, as when the
article is taken out of the base (``eval answers --remove-articles``: the higher the better, an
upper bound on what the rule can do there). ``held`` is every question outside the ``eval answers
--limit 50`` sample (where the rule's wording was chosen), ``report`` that sample.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_kb.eval.datasets import load_qa, sample_ids  # noqa: E402
from desktop_kb.verify.subject import absent_subject, question_subjects  # noqa: E402


def measure(dataset: Path, sample: str) -> dict[str, object]:
    qa = load_qa(dataset)
    docs = {d.id: f"{d.title}\n{d.text}" for d in qa.corpus.values()}
    reported = set(sample_ids([it.id for it in qa.items], 50))
    items = [it for it in qa.items if it.answerable and (it.id in reported) == (sample == "report")]
    everything = "\n".join(docs.values())
    read = stopped_own = stopped_other = 0
    examples: list[dict[str, object]] = []
    for it in items:
        own = docs[it.context_id]
        read += bool(question_subjects(it.question))
        if absent_subject(it.question, [own]):
            stopped_own += 1
            examples.append({"id": it.id, "question": it.question, "subject": question_subjects(it.question)})
        stopped_other += bool(absent_subject(it.question, [everything.replace(own, "")]))
    n = len(items)
    return {"dataset": qa.name, "sample": sample, "answerable": n, "subject_read": read,
            "right_answer_stopped": round(stopped_own / n, 4) if n else None,
            "other_article_stopped": round(stopped_other / n, 4) if n else None, "stopped_examples": examples}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--sample", choices=("held", "report"), default="held")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = measure(args.dataset, args.sample)
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return
    print(f"{out['dataset']} ({out['sample']}): {out['answerable']} answerable, subject read for {out['subject_read']}; "
          f"right answers stopped {out['right_answer_stopped']:.1%}, answers from another article stopped "
          f"{out['other_article_stopped']:.1%}")
    for e in out["stopped_examples"]:  # type: ignore[union-attr]
        print(f"  stopped: {e['question']} {e['subject']}")


if __name__ == "__main__":
    main()
