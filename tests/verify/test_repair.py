"""Mechanical citation repairs (verify/repair.py) that need the claim checks: re-citing an
unsupported sentence to the passage that supports it."""

from __future__ import annotations

from desktop_kb.types import Chunk, Hit
from desktop_kb.verify.citations import validate
from desktop_kb.verify.repair import attach_citations, cite_by_support, recite_unsupported, repoint_citations

QUESTION = "How much are hotels reimbursed for business travellers?"


def _hit(i: int, text: str) -> Hit:
    return Hit(chunk=Chunk(chunk_id=f"c{i}", doc_id=f"d{i}", path=f"/docs/{i}.md", index=0, text=text,
                           heading_path=(), start=0, end=len(text)), kb="kb", score=1.0)


PASSAGES = [
    _hit(1, "Invoices must be paid within 30 days of receipt. Late payment costs a fee."),
    _hit(2, "Business trips need approval. Hotels are reimbursed up to 180 euros per night."),
    _hit(3, "The canteen opens at 11:30."),
]


def _supported(text: str) -> bool:
    return validate(text, PASSAGES, QUESTION).valid


def test_an_unsupported_sentence_is_recited_to_the_passage_that_supports_it():
    answer = "Travellers on business get their hotels reimbursed up to 180 euros a night [1]."
    check = validate(answer, PASSAGES, QUESTION)
    assert not check.valid and check.unsupported  # passage 1 is about invoices
    assert repoint_citations(answer, PASSAGES) == answer  # too few of its words in passage 2 to renumber it
    fixed = recite_unsupported(answer, [s for s, _ in check.unsupported], len(PASSAGES), _supported)
    assert fixed == "Travellers on business get their hotels reimbursed up to 180 euros a night [2]."
    assert validate(fixed, PASSAGES, QUESTION).valid


def test_a_sentence_no_passage_supports_is_not_recited():
    answer = "Hotels are reimbursed up to 250 euros per night [1]."  # no passage says 250
    check = validate(answer, PASSAGES, QUESTION)
    assert not check.valid
    assert recite_unsupported(answer, [s for s, _ in check.unsupported], len(PASSAGES), _supported) is None


def test_only_the_unsupported_sentence_changes():
    answer = ("Invoices must be paid within 30 days [1]. "
              "Business travellers get hotels reimbursed up to 180 euros per night [1].")
    check = validate(answer, PASSAGES, "When are invoices due, and how much are hotels reimbursed for business travellers?")
    assert [s for s, _ in check.unsupported] == ["Business travellers get hotels reimbursed up to 180 euros per night [1]."]
    fixed = recite_unsupported(answer, [s for s, _ in check.unsupported], len(PASSAGES), _supported)
    assert fixed == ("Invoices must be paid within 30 days [1]. "
                     "Business travellers get hotels reimbursed up to 180 euros per night [2].")


def test_an_uncited_answer_is_cited_where_the_claim_checks_pass_it():
    passages = [
        _hit(1, "Hypersensitivity is an immune response that damages the body's own tissues. It has four classes."),
        _hit(2, "The Golden Gate Bridge opened in 1937."),
    ]
    question = "What is the name for a response of the immune system that damages the body's native tissues?"
    answer = "The name is hypersensitivity. It has four classes."
    assert attach_citations(answer, passages) is None  # "name" and "hypersensitivity" only: too few words
    fixed = cite_by_support(answer, len(passages), lambda t: validate(t, passages, question).valid)
    assert fixed == "The name is hypersensitivity [1]. It has four classes [1]."
    assert validate(fixed, passages, question).valid


def test_an_uncited_answer_no_passage_supports_stays_uncited():
    question = "How much are hotels reimbursed for business travellers?"
    for answer in ("Hotels are reimbursed up to 250 euros per night.",  # no passage says 250
                   "Hotels are reimbursed up to 180 euros [2]."):  # cites already: not this repair's job
        assert cite_by_support(answer, len(PASSAGES), lambda t: validate(t, PASSAGES, question).valid) is None
