"""training/wikiqa_spans.py: which of the judge's replies become English bare right answers, and
how training/data.py turns a WikiQA answering sentence with a kept span into one (files the test
writes; the LLM is not run)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

pytest.importorskip("torch")  # the training package's environment (./run test installs it)

SENTENCE = "The black-and-white series originally ran from October 15, 1951, to May 6, 1957, on CBS."


def test_a_reply_is_kept_only_short_copied_and_saying_more_than_the_question():
    from training.wikiqa_spans import kept

    q = "How long was I Love Lucy on the air?"
    assert kept(q, SENTENCE, "October 15, 1951, to May 6, 1957.", 2.1) == "October 15, 1951, to May 6, 1957"
    assert kept(q, SENTENCE, "none", 0.5) == ""  # the judge's refusal
    assert kept(q, SENTENCE, "October 15, 1951", -0.3) == ""  # the judge leaned to "none"
    assert kept(q, SENTENCE, "six years", 2.0) == ""  # not copied from the sentence
    assert kept(q, SENTENCE, SENTENCE, 3.0) == ""  # the whole sentence is no span
    assert kept(q, SENTENCE, "The black-and-white series originally ran from October 15, 1951, to May", 3.0) == ""  # > 8 words
    assert kept("Which network aired the series on CBS?", SENTENCE, "CBS", 2.0) == ""  # only the question's words


def test_an_answering_sentence_with_a_kept_span_gives_a_bare_right_answer(tmp_path: Path):
    from training.data import _wikiqa
    from training.wikiqa_spans import key, question_text

    path = tmp_path / "wikiqa_train.tsv.gz"
    head = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
    rows = [("Q1", "how long was i love lucy on the air", "I Love Lucy", SENTENCE, "1"),
            ("Q1", "how long was i love lucy on the air", "I Love Lucy", "It starred Lucille Ball.", "0")]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(head + "".join(f"{q}\t{text}\tD1\t{t}\t{q}-{i}\t{s}\t{lab}\n"
                                for i, (q, text, t, s, lab) in enumerate(rows)))
    row = {"qid": "Q1", "sentence": SENTENCE}
    assert question_text("how long was i love lucy on the air") == "How long was i love lucy on the air?"
    spans = {key(row): "October 15, 1951, to May 6, 1957"}
    got = [e for split in ("train", "heldout") for e in _wikiqa(path, split, random.Random(1), spans=spans)]
    bare = [e for e in got if e.kind == "short_right"]
    assert len(bare) == 1 and bare[0].claim == spans[key(row)] and bare[0].label == 1 and bare[0].lang == "en"
    assert SENTENCE in bare[0].text and bare[0].question.endswith("?")
    assert [e.kind for e in got if e.kind == "wikiqa"] == ["wikiqa", "wikiqa"]  # the sentences as before
    plain = [e for split in ("train", "heldout") for e in _wikiqa(path, split, random.Random(1))]
    assert not any(e.kind == "short_right" for e in plain)  # no spans file: no bare answers


def test_the_spans_file_is_read_through_the_keep_rule(tmp_path: Path):
    from training.wikiqa_spans import read

    f = tmp_path / "spans.jsonl"
    recs = [{"key": "Q1|a", "question": "When did it open?", "sentence": "It opened in 1937.", "span": "1937",
             "score": 1.5},
            {"key": "Q2|b", "question": "Who?", "sentence": "Nobody knows.", "span": "none", "score": -1.0}]
    f.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    assert read(f) == {"Q1|a": "1937", "Q2|b": ""}
