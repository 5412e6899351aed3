"""Graded verdicts (verify/graded.py) and how the answer check acts on them: plumbing, with a
scripted verifier (the trained model's quality is tested in tests/models/test_cross_encoder.py
and measured by training/evaluate.py)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from desktop_kb.cli.ask import answer_json
from desktop_kb.types import Chunk, Hit
from desktop_kb.verify.answer_check import CheckOptions, check_answer
from desktop_kb.verify.citations import validate
from desktop_kb.verify.graded import Thresholds, cited_sentences, grade

TEXT = ("The committee met in Geneva. It was founded in 1946 by twelve states. Its first chair was "
        "Maria Ortiz. The budget grew every year.")
OPTIONS = CheckOptions(verify=True, thresholds=Thresholds(refuse_below=0.2, support_from=0.6))


def _hit() -> Hit:
    chunk = Chunk(chunk_id="c1", doc_id="d1", path="/docs/committee.md", index=0, text=TEXT,
                  heading_path=("Committee",), start=100, end=100 + len(TEXT))
    return Hit(chunk=chunk, score=1.0, kb="kb")


class ScriptedVerifier:
    """P(supported) by the claim's first word that is in ``by_word``; records what it read."""

    id = "test/scripted-verifier"

    def __init__(self, by_word: dict[str, float]) -> None:
        self.by_word = by_word
        self.read: list[tuple[str, str, str]] = []

    def verify(self, question, claims):
        self.read.extend((question, c, e) for c, e in claims)
        return [next((p for w, p in self.by_word.items() if w in c), 0.5) for c, _ in claims]


def _check(answer: str, verifier: ScriptedVerifier, question: str = "Who was the first chair, and when was it founded?"):
    hit = _hit()
    return check_answer(question, answer, [hit], lambda t: validate(t, [hit], question), options=OPTIONS,
                        verifier=verifier, scorer=None)


def test_the_verifier_reads_each_cited_sentence_with_its_evidence():
    v = ScriptedVerifier({"Ortiz": 0.9, "1946": 0.8})
    checked = _check("Its first chair was Maria Ortiz [1]. It was founded in 1946 [1].", v)
    assert checked.accepted and [x.verdict for x in checked.verdicts] == ["supported", "supported"]
    claims = [c for _, c, _ in v.read]
    assert claims == ["Its first chair was Maria Ortiz.", "It was founded in 1946."]
    evidence = v.read[0][2]
    assert evidence.startswith("(Committee) ") and "Maria Ortiz" in evidence and "Geneva" not in evidence


def test_an_unsupported_sentence_is_withheld_and_an_uncertain_one_marked():
    checked = _check("Its first chair was Maria Ortiz [1]. It was founded in 1946 [1].",
                     ScriptedVerifier({"Ortiz": 0.9, "1946": 0.05}))
    assert checked.accepted and checked.text == "Its first chair was Maria Ortiz [1]."
    assert checked.removed[0][0].startswith("It was founded in 1946") and "verifier 0.05" in checked.removed[0][1]
    assert [x.verdict for x in checked.verdicts] == ["supported"]
    marked = _check("Its first chair was Maria Ortiz [1].", ScriptedVerifier({"Ortiz": 0.4}))
    assert marked.accepted and [(x.verdict, x.score) for x in marked.verdicts] == [("uncertain", 0.4)]


def test_an_answer_with_nothing_supported_is_refused_and_kept_apart():
    checked = _check("Its first chair was Maria Ortiz [1].", ScriptedVerifier({"Ortiz": 0.1}))
    assert not checked.accepted and checked.withheld is not None
    assert checked.withheld.text == "Its first chair was Maria Ortiz [1]." and "verifier 0.10" in checked.problems[0]
    assert [x.verdict for x in checked.verdicts] == ["unsupported"]


def test_without_the_setting_the_verifier_is_not_asked():
    v = ScriptedVerifier({"Ortiz": 0.0})
    hit = _hit()
    question = "Who was the first chair?"
    checked = check_answer(question, "Its first chair was Maria Ortiz [1].", [hit], lambda t: validate(t, [hit], question),
                           options=dataclasses.replace(OPTIONS, verify=False, judge=False), verifier=v)
    assert checked.accepted and not checked.verdicts and v.read == []


def test_marks_after_the_full_stop_belong_to_their_sentence():
    assert cited_sentences("Maria Ortiz chaired it. [1] It was founded in 1946 [1][2].") == [
        ("Maria Ortiz chaired it. [1]", (1,)), ("It was founded in 1946 [1][2].", (1, 2))]


def test_a_sentence_citing_two_passages_takes_its_best():
    hits = [_hit(), _hit()]
    question = "Who was the first chair?"
    v = validate("Its first chair was Maria Ortiz [1][2].", hits, question)

    class Two:
        id = "two"

        def verify(self, question, claims):
            return [0.1, 0.7][: len(claims)]

    (verdict,) = grade(question, "Its first chair was Maria Ortiz [1][2].", v.citations, hits, Two(), OPTIONS.thresholds)
    assert verdict.citations == (1, 2) and verdict.score == pytest.approx(0.7) and verdict.verdict == "supported"


def test_thresholds_come_from_the_settings_else_the_model():
    from desktop_kb.settings import QuerySettings

    class Model:
        calibration: ClassVar[dict[str, float]] = {"refuse_below": 0.11, "support_from": 0.66}

    q = dataclasses.replace(QuerySettings(), verifier=True)
    assert CheckOptions.of(q, calibrated_thresholds=Thresholds.of_model(Model())).thresholds == Thresholds(0.11, 0.66)
    q = dataclasses.replace(q, verifier_support_from=0.8)
    assert CheckOptions.of(q, calibrated_thresholds=Thresholds.of_model(Model())).thresholds == Thresholds(0.11, 0.8)
    assert Thresholds.of_model(object()) is None


def test_ask_json_carries_the_verdicts():
    from desktop_kb.types import Answer, SentenceVerdict

    a = Answer(question="q", text="x [1].", status="answered",
               verdicts=(SentenceVerdict("x [1].", (1,), 0.42, "uncertain"),))
    assert answer_json(a)["verdicts"] == [{"sentence": "x [1].", "citations": [1], "score": 0.42, "verdict": "uncertain"}]


def test_the_app_marks_an_uncertain_sentence():
    pytest.importorskip("PySide6")
    from desktop_kb.gui.chat_render import turn_notes
    from desktop_kb.gui.conversations import Turn
    from desktop_kb.types import Answer, SentenceVerdict

    turn = Turn(question="q")
    turn.apply_answer(Answer(question="q", text="Maria Ortiz [1].", status="answered",
                             verdicts=(SentenceVerdict("Maria Ortiz [1].", (1,), 0.4, "uncertain"),)))
    assert any(n.startswith("Uncertain") and "Maria Ortiz [1]." in n for n in turn_notes(turn))
    assert Turn.from_json(turn.to_json()).uncertain == ["Maria Ortiz [1]."]


class YesNo:
    """A scripted judge: log-odds of yes; records how often it was asked."""

    def __init__(self, score: float) -> None:
        self.score, self.calls = score, 0

    def yes_no(self, messages, *, cancel=None):
        self.calls += 1
        return self.score


def _judged(answer: str, verifier: ScriptedVerifier, judge: YesNo, *, on: bool = True):
    hit = _hit()
    question = "Who was the first chair?"
    options = dataclasses.replace(OPTIONS, judge=True, judge_uncertain=on, threshold=0.0)
    return check_answer(question, answer, [hit], lambda t: validate(t, [hit], question), options=options,
                        verifier=verifier, scorer=judge)


def test_the_judge_decides_only_what_the_verifier_is_unsure_of():
    answer = "Its first chair was Maria Ortiz [1]."
    sure = YesNo(-5.0)
    assert _judged(answer, ScriptedVerifier({"Ortiz": 0.9}), sure).accepted and sure.calls == 0
    assert not _judged(answer, ScriptedVerifier({"Ortiz": 0.1}), sure).accepted and sure.calls == 0
    no = YesNo(-5.0)
    refused = _judged(answer, ScriptedVerifier({"Ortiz": 0.4}), no)
    assert no.calls == 1 and not refused.accepted and refused.judge_score == -5.0
    assert refused.withheld is not None and refused.withheld.text == answer
    yes = YesNo(5.0)
    kept = _judged(answer, ScriptedVerifier({"Ortiz": 0.4}), yes)
    assert yes.calls == 1 and kept.accepted and [(v.verdict, v.score) for v in kept.verdicts] == [("supported", 0.4)]
    off = YesNo(-5.0)  # without the setting the uncertain sentence stays, marked, and no LLM is asked
    marked = _judged(answer, ScriptedVerifier({"Ortiz": 0.4}), off, on=False)
    assert off.calls == 0 and marked.accepted and marked.verdicts[0].verdict == "uncertain"
