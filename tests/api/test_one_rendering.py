"""One reading of an answer's citations below the API, MCP and ``ask --json``: the same values
under each one's documented names (library/sources.py)."""

from __future__ import annotations

from desktop_kb.api.service import answer_record
from desktop_kb.cli.ask import answer_json
from desktop_kb.library.sources import cited_sources
from desktop_kb.types import Answer, Chunk, Citation, Hit, SentenceVerdict

TEXT = "Hotels cost at most 120 euros a night. Meals are paid at 60 euros a day."


def _answer(verdicts=()):
    chunk = Chunk("c1", "d1", "/docs/policy.md", 0, TEXT, ("Travel", "Hotels"), 100, 100 + len(TEXT), (2,))
    cite = Citation(1, "kb", "d1", "/docs/policy.md", (2,), ("Travel", "Hotels"), 100, 100 + len(TEXT),
                    evidence=((100, 138),))
    return Answer("Hotel limit?", "At most 120 euros a night [1].", "answered", (cite,), (Hit(chunk, "kb", 0.9),),
                  verdicts=tuple(verdicts))


def test_the_api_and_the_command_line_give_the_same_citations():
    a = _answer()
    (api,), (cli,) = answer_record(a)["citations"], answer_json(a)["citations"]
    assert (api["file"], api["pages"], api["heading_path"]) == (cli["path"], cli["pages"], cli["heading_path"])
    assert api["passage"] == {"start": cli["start"], "end": cli["end"]}
    assert api["sentences"] == cli["evidence"] == [{"start": 100, "end": 138,
                                                    "text": "Hotels cost at most 120 euros a night."}]
    assert api["verdict"] == "supported" and api["quote"] is cli["quote"] is None


def test_the_verifiers_verdict_is_the_citations():
    v = SentenceVerdict("At most 120 euros a night [1].", (1,), 0.55, "uncertain")
    (source,) = cited_sources(_answer([v]))
    assert source.verdict == "uncertain" and answer_record(_answer([v]))["citations"][0]["verdict"] == "uncertain"
