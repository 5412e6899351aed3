"""The warm-up before the first question: which system prompts it prefills (plumbing; the real
llama.cpp backend is tested in tests/backends/test_backend_llm.py)."""

from __future__ import annotations

import dataclasses

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.library.kb import Library
from desktop_kb.query.prompts import ANSWER_SYSTEM
from desktop_kb.query.warm import warm_up
from desktop_kb.verify.judge import JUDGE_SYSTEM


class Recorder:
    id = "recorder"

    def __init__(self) -> None:
        self.warmed: list[list[str]] = []

    def chat(self, messages, **kw):  # type: ignore[no-untyped-def]
        return ""

    def warm(self, systems, *, cancel=None):  # type: ignore[no-untyped-def]
        self.warmed.append(list(systems))
        return 7 * len(systems)


class NoWarm:
    id = "plain"

    def chat(self, messages, **kw):  # type: ignore[no-untyped-def]
        return ""


def test_warm_up_prefills_the_answer_and_judge_system_prompts() -> None:
    rec = Recorder()
    assert warm_up(rec, judge=True) == 14 and rec.warmed == [[ANSWER_SYSTEM, JUDGE_SYSTEM]]
    assert warm_up(rec, judge=False) == 7 and rec.warmed[-1] == [ANSWER_SYSTEM]
    assert warm_up(NoWarm(), judge=True) == 0  # a backend without a prefix cache: nothing to do


def test_library_warm_up_follows_the_judge_setting(settings) -> None:
    for judge, expected in ((True, [ANSWER_SYSTEM, JUDGE_SYSTEM]), (False, [ANSWER_SYSTEM])):
        s = settings.replace(query=dataclasses.replace(settings.query, judge=judge))
        rec = Recorder()
        with Library.open(s, embedder=HashEmbedder(), reranker=None, generator=rec) as lib:
            lib.warm_up()
        assert rec.warmed == [expected]
