"""The faithfulness set built from the shared QA gold data (../shared/eval/qa/), scored with the
product's claim checks and the targets of the faithfulness issue. No LLM: seconds per set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop_kb.eval.datasets import load_qa
from desktop_kb.eval.faithfulness import build_claims, score_claims

SHARED = Path(os.environ.get("DESKTOP_KB_SHARED_EVAL", Path(__file__).resolve().parents[3] / "shared" / "eval"))
TARGETS = {"verbatim": 0.97, "paraphrased": 0.90, "changed_number": 0.95, "swapped_answer": 0.90,
           "negated": 0.90, "wrong_passage": 0.99}


@pytest.mark.parametrize("name", ["squad2_dev", "cmrc2018_dev"])
def test_claim_checks_meet_the_faithfulness_targets(name):
    root = SHARED / "qa" / name
    if not root.is_dir():
        pytest.skip(f"shared evaluation data not found at {root}")
    ds = load_qa(root)
    claims = build_claims(ds)
    report = score_claims(claims, ds)
    kinds = report["kinds"]
    assert kinds["verbatim"]["claims"] >= 150 and kinds["changed_number"]["claims"] >= 50
    for kind, target in TARGETS.items():
        rate = kinds[kind].get("accept_rate", kinds[kind].get("reject_rate"))
        assert rate >= target, (kind, rate, report["misjudged"].get(kind, [])[:3])


def test_the_set_is_built_from_gold_data_not_from_the_checker(tmp_path):
    import json

    (tmp_path / "contexts.jsonl").write_text(json.dumps(
        {"_id": "c1", "title": "Leave", "text": "Employees get 25 days of paid leave per year. Managers approve it."})
        + "\n" + json.dumps({"_id": "c2", "title": "Travel", "text": "Hotels are reimbursed up to 180 euros."}) + "\n",
        encoding="utf-8")
    (tmp_path / "items.jsonl").write_text(json.dumps(
        {"id": "q1", "question": "How many days of paid leave do employees get?", "answers": ["25 days"],
         "context_id": "c1", "answerable": True}) + "\n", encoding="utf-8")
    claims = {c.kind: c for c in build_claims(load_qa(tmp_path))}
    assert claims["verbatim"].answer == "Employees get 25 days of paid leave per year [1]."
    assert claims["changed_number"].answer == "Employees get 32 days of paid leave per year [1]."
    assert "negated" not in claims  # no auxiliary verb to negate in that sentence
    assert claims["wrong_passage"].answer.endswith("[2].") and claims["wrong_passage"].context_ids == ("c1", "c2")
    assert claims["paraphrased"].answer == "25 days — days of paid leave do employees get [1]."
