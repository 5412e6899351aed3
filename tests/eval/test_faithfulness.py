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


def _two_questions(tmp_path):
    import json

    (tmp_path / "contexts.jsonl").write_text(json.dumps(
        {"_id": "c1", "title": "Contract", "text": "The contract was drafted in March. It was signed by Ms. Lin "
         "and approved by Mr. Park. The board met twice."}) + "\n" + json.dumps(
        {"_id": "c2", "title": "Travel", "text": "Hotels are reimbursed up to 180 euros."}) + "\n", encoding="utf-8")
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"id": "q1", "question": "Who approved the contract?", "answers": ["Mr. Park"], "context_id": "c1",
         "answerable": True},
        {"id": "q2", "question": "Who signed the contract?", "answers": ["Ms. Lin"], "context_id": "c1",
         "answerable": True},
        {"id": "q3", "question": "Who rejected the contract?", "answers": [], "context_id": "c1",
         "answerable": False, "plausible_answers": ["the board"]},
    ]) + "\n", encoding="utf-8")
    return load_qa(tmp_path)


def test_the_hard_kinds_bind_another_questions_answer_from_the_same_passage(tmp_path):
    ds = _two_questions(tmp_path)
    claims = {(c.item_id, c.kind): c for c in build_claims(ds)}
    assert claims[("q1", "short_right")].answer == "Mr. Park [1]."
    assert claims[("q1", "short_wrong")].answer == "Ms. Lin [1]."
    assert claims[("q1", "in_passage_swap")].answer == "It was signed by Ms. Lin and approved by Ms. Lin [1]."
    assert claims[("q1", "swapped_roles")].answer == "It was signed by Mr. Park and approved by Ms. Lin [1]."
    assert claims[("q2", "short_wrong")].answer == "Mr. Park [1]."
    # an unanswerable question's plausible answer counts as another question's answer too
    assert ("q3", "short_right") not in claims
    assert all(c.faithful == (c.kind in ("short_right",)) for k, c in claims.items() if k[1] in
               ("short_right", "short_wrong", "in_passage_swap", "swapped_roles"))


def test_the_set_is_written_as_eval_claims_records(tmp_path):
    from desktop_kb.eval.claims import load_records
    from desktop_kb.eval.faithfulness import to_records

    ds = _two_questions(tmp_path)
    claims = build_claims(ds)
    path = tmp_path / "claims.jsonl"
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in to_records(claims, ds)), encoding="utf-8")
    records = load_records(path)
    assert len(records) == len(claims)
    swap = next(r for r in records if r.id == "q1:in_passage_swap")
    assert swap.expect == "reject" and swap.passages[0][0] == "Contract" and len(swap.passages) == 2
    assert next(r for r in records if r.id == "q1:verbatim").expect == "accept"
