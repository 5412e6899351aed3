"""training/aligned_spans.py: which of the judge's replies become English answer spans.

The rule only (the judge's replies are written by the real run, measured in docs/history/meaning-check.md);
how a kept span enters the aligned English set is tested in test_align_en.py."""

from __future__ import annotations

import json

from training import aligned_spans

SENTENCE = "Because of the British blockade, merchants turned to smuggling across the border."


def _row(span: str, score: float = 0.8, sim: float = 0.9, qid: str = "q1") -> dict:
    return {"qid": qid, "title": "Smuggling", "question": "What did merchants turn to because of the blockade?",
            "sentence": SENTENCE, "zh_answer": "走私", "span": span, "score": score, "sim": sim}


def test_a_reply_is_kept_when_the_wikiqa_rule_holds_and_it_means_the_chinese_answer():
    assert aligned_spans.kept(_row("smuggling.")) == "smuggling"
    assert aligned_spans.kept(_row("smuggling", sim=aligned_spans.SIM_FLOOR - 0.01)) == ""  # another answer
    assert aligned_spans.kept(_row("smuggling", score=-1.0)) == ""  # the judge did not answer
    assert aligned_spans.kept(_row("none")) == ""
    assert aligned_spans.kept(_row("contraband goods")) == ""  # not copied from the sentence
    assert aligned_spans.kept(_row("the blockade")) == ""  # only the question's words
    assert aligned_spans.kept(_row(SENTENCE)) == ""  # the whole sentence is no span
    assert aligned_spans.kept(_row("mugg")) == ""  # not whole words


def test_the_file_is_read_through_the_rule(tmp_path):
    path = tmp_path / "spans.jsonl"
    rows = [_row("smuggling", qid="a"), _row("smuggling", sim=0.5, qid="b")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")
    assert aligned_spans.read(path) == {"a": "smuggling", "b": ""}
