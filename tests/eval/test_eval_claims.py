"""`desktop-kb eval claims`: the answer check on given answers. Bad records are refused with the
line named (no traceback); the records go through the product's own check (plumbing here, with a
scripted judge; the real LLM's verdicts are in tests/verify/test_meaning_real.py)."""

from __future__ import annotations

import json

import pytest

from desktop_kb.cli import main
from desktop_kb.errors import ConfigError
from desktop_kb.eval.claims import load_records, run_claims
from desktop_kb.verify.answer_check import CheckOptions

PASSAGE = {"title": "Contract", "text": "The contract was signed by Ms. Lin and approved by Mr. Park in 2021."}


def _write(path, records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize(("record", "message"), [
    ("{not json", "line 2 is not valid JSON"),
    ('["a list"]', "line 2: each line must be a JSON object"),
    ({"id": "b", "question": "Who?", "answer": "Mr. Park [1].", "passages": []}, "line 2: \"passages\""),
    ({"id": "b", "question": "Who?", "answer": "Mr. Park [1].", "passages": [{"title": "x"}]},
     "line 2: passage 1 must be an object with a non-empty \"text\""),
    ({"id": "b", "answer": "Mr. Park [1].", "passages": [PASSAGE]}, "line 2: \"question\" must be a non-empty string"),
    ({"id": "b", "question": "Who?", "answer": 3, "passages": [PASSAGE]}, "line 2: \"answer\""),
    ({"id": "b", "question": "Who?", "answer": "x [1]", "passages": [PASSAGE], "expect": "maybe"}, "\"expect\""),
    ({"id": "a", "question": "Who?", "answer": "x [1]", "passages": [PASSAGE]}, "the id 'a' was used before"),
    ({"question": "Who?", "answer": "x [1]", "passages": [PASSAGE]}, "line 2: \"id\""),
])
def test_bad_records_name_their_line(tmp_path, record, message):
    good = {"id": "a", "question": "Who approved it?", "answer": "Mr. Park [1].", "passages": [PASSAGE]}
    path = _write(tmp_path / "c.jsonl", [good, record])
    with pytest.raises(ConfigError) as err:
        load_records(path)
    assert message in err.value.message


def test_the_command_reports_a_bad_file_without_a_traceback(tmp_path, capsys):
    path = _write(tmp_path / "c.jsonl", ["{broken"])
    code = main(["--data-dir", str(tmp_path / "data"), "eval", "claims", str(path), "--json"])
    out = capsys.readouterr()
    assert code == 2 and out.out == ""
    assert "line 1 is not valid JSON" in out.err and "Traceback" not in out.err
    code = main(["--data-dir", str(tmp_path / "data"), "eval", "claims", str(tmp_path / "missing.jsonl")])
    assert code == 2 and "not found" in capsys.readouterr().err


class Judge:
    """Says yes unless the answer names Ms. Lin (a scripted stand-in for the LLM)."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def yes_no(self, messages, *, cancel=None):
        self.prompts.append(messages[-1]["content"])
        return -3.0 if "Ms. Lin" in messages[-1]["content"].split("Answer:")[-1] else 2.0


def test_records_go_through_the_whole_check(tmp_path):
    path = _write(tmp_path / "c.jsonl", [
        {"id": "right", "question": "Who approved the contract?", "answer": "Mr. Park approved it [1].",
         "passages": [PASSAGE], "kind": "short_right", "expect": "accept"},
        {"id": "bound", "question": "Who approved the contract?", "answer": "Ms. Lin [1].",
         "passages": [PASSAGE], "kind": "short_wrong", "expect": "reject"},
        {"id": "figure", "question": "When was it approved?", "answer": "It was approved in 2019 [1].",
         "passages": [PASSAGE], "kind": "changed_number", "expect": "reject"},
        {"id": "bad-n", "question": "Who approved the contract?", "answer": "Mr. Park [3].",
         "passages": [PASSAGE], "kind": "wrong_passage", "expect": "reject"},
    ])
    judge = Judge()
    report = run_claims(load_records(path), options=CheckOptions(), scorer=judge)
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["right"]["accepted"] and by_id["right"]["judge_score"] == 2.0
    assert not by_id["bound"]["accepted"] and by_id["bound"]["judge_score"] == -3.0
    reason = by_id["bound"]["reasons"][0]
    # what the passage says, not the withheld draft quoted as if it were the passage's claim
    assert "does not state the answer to \u201cWho approved the contract?\u201d" in reason
    assert "approved by Mr. Park" in reason and "\u201cMs. Lin\u201d" not in reason
    # the word and figure checks stop these before the judge is asked
    assert not by_id["figure"]["accepted"] and by_id["figure"]["judge_score"] is None
    assert "2021" in by_id["figure"]["reasons"][0] or "2019" in by_id["figure"]["reasons"][0]
    assert not by_id["bad-n"]["accepted"] and "[3] does not exist" in by_id["bad-n"]["reasons"][0]
    assert len(judge.prompts) == 2  # one judging call per answer that passed the word checks
    assert "Answer: <<<Mr. Park approved it.>>>" in judge.prompts[0]
    assert report["kinds"]["short_wrong"]["accept_rate"] == 0.0
    assert report["kinds"]["short_right"]["as_expected_rate"] == 1.0
    assert report["timings_ms"]["judged"] == 2
