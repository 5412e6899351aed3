"""The loop guard: a streamed answer that repeats itself is stopped and cut before the repeat."""

from __future__ import annotations

import pytest

from desktop_kb.errors import Cancelled
from desktop_kb.progress import CancelToken
from desktop_kb.query.loops import LoopGuard, guarded_chat

SAID = ("The customer information for Gabriel Diaz's claim is listed on the invoice, including his name, "
        "address, phone number, and email address. ")


def _feed(text: str, by: str = " ") -> LoopGuard:
    guard = LoopGuard()
    for i, piece in enumerate(text.split(by)):
        if guard.feed(piece if i == 0 else by + piece):
            break
    return guard


def test_a_sentence_said_again_is_cut_before_the_repeat() -> None:
    text = "The invoice is REPAIR-2022-INV-001 [1]. " + SAID * 12
    guard = _feed(text)
    assert guard.looped
    assert guard.kept() == ("The invoice is REPAIR-2022-INV-001 [1]. " + SAID).rstrip()


def test_the_same_sentence_with_another_mark_is_a_repeat() -> None:
    guard = _feed("Labor costs $300 for body work [1]. Paint costs $225 [2]. Labor costs $300 for body work [3]. More.")
    assert guard.looped and guard.kept() == "Labor costs $300 for body work [1]. Paint costs $225 [2]."


def test_a_chinese_sentence_said_again_is_cut() -> None:
    text = "住宿费每晚不超过五百元[1]。一线城市每晚不超过六百元[1]。" + "一线城市每晚不超过六百元[1]。" * 3
    guard = LoopGuard()
    for ch in text:
        if guard.feed(ch):
            break
    assert guard.kept() == "住宿费每晚不超过五百元[1]。一线城市每晚不超过六百元[1]。"


def test_a_run_of_words_repeated_without_a_full_stop_is_cut() -> None:
    text = "Parts: " + "bumper, grille, headlamp, " * 10
    guard = _feed(text)
    assert guard.looped
    assert guard.kept() == "Parts: bumper, grille, headlamp,"


@pytest.mark.parametrize("text", [
    "The total is $5,738.00 [1]. Body labor is $300.00 [1]. Paint labor is $225.00 [1].",
    "| Item | Cost |\n|------|------|\n| A | 1 |\n| B | 2 |",
    "Yes. Yes. Yes [1].",  # short sentences are not loops
    "员工出差住宿每晚不超过五百元，一线城市不超过六百元[1]。",
    "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20",
])
def test_ordinary_answers_are_not_loops(text: str) -> None:
    guard = _feed(text)
    assert not guard.looped and guard.kept() == text


class _Looping:
    """Streams one sentence forever (up to max_tokens pieces), as the small model did."""

    id = "test/looping"

    def __init__(self) -> None:
        self.pieces = 0

    def chat(self, messages, *, max_tokens=512, temperature=0.0, json_schema=None, on_token=None, cancel=None):
        out = ["Intro [1]."]
        if on_token is not None:
            on_token(out[0])
        for _ in range(max_tokens):
            for word in SAID.split(" "):
                if cancel is not None and cancel.cancelled:
                    raise Cancelled()
                self.pieces += 1
                out.append(" " + word)
                if on_token is not None:
                    on_token(" " + word)
        return "".join(out)


def test_guarded_chat_stops_the_model_and_streams_no_more() -> None:
    gen, streamed = _Looping(), []
    reply = guarded_chat(gen, [{"role": "user", "content": "overview"}], max_tokens=512, on_token=streamed.append)
    assert reply.looped
    assert reply.text == ("Intro [1]. " + SAID).strip()
    assert gen.pieces < 3 * len(SAID.split(" "))  # stopped during the second copy, not at max_tokens
    assert "".join(streamed).count("email address") == 1  # the repeat itself is never streamed whole


def test_the_callers_stop_still_raises() -> None:
    token = CancelToken()
    gen = _Looping()

    def stop_at_once(piece: str) -> None:
        token.cancel()

    with pytest.raises(Cancelled):
        guarded_chat(gen, [], max_tokens=5, on_token=stop_at_once, cancel=token)


def test_a_reply_that_did_not_stream_is_cut_too() -> None:
    class Whole:
        id = "test/whole"

        def chat(self, messages, **kwargs):
            return "Intro [1]. " + SAID * 4

    reply = guarded_chat(Whole(), [], max_tokens=100)
    assert reply.looped and reply.text == ("Intro [1]. " + SAID).strip()


def test_a_child_token_is_cancelled_with_its_parent_and_alone() -> None:
    parent = CancelToken()
    child = parent.child()
    child.cancel()
    assert child.cancelled and child.cancelled_here and not parent.cancelled
    other = parent.child()
    parent.cancel()
    assert other.cancelled and not other.cancelled_here
