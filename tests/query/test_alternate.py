"""The question as the judge reads it over passages in another language (scripted model: plumbing)."""

from __future__ import annotations

from desktop_kb.query.alternate import judge_question
from desktop_kb.types import Chunk, Hit

PASSAGE = "潘皇后，名淑，会稽句章人，吴大帝孙权的皇后，是吴废帝孙亮之母。"


def _hit(text: str, heading: tuple[str, ...] = ()) -> Hit:
    return Hit(Chunk("c1", "d", "/潘淑.md", 0, text, heading, 0, len(text)), "kb", 0.5)


def test_the_search_translation_is_read_when_it_names_what_the_passage_names(scripted):
    gen = scripted(answers=["unused"])
    asked = judge_question("What did the empress do?", ["What did the empress do?", "皇后做了什么？"],
                           [_hit(PASSAGE)], gen, {})
    assert asked == "皇后做了什么？" and not gen.calls


def test_a_pinyin_name_is_translated_as_the_passage_writes_it(scripted):
    """The search translated "Pan Shu" as 潘书; the passage's heading writes 潘淑: the judge reads a
    translation made with 潘淑 in place of the pinyin, made once per answer."""
    gen = scripted(answers=["潘淑是哪里人？"])
    cache: dict[str, str] = {}
    queries = ["Where was Pan Shu from?", "潘书是从哪里来的？"]
    for _ in range(2):
        asked = judge_question("Where was Pan Shu from?", queries, [_hit(PASSAGE, ("潘淑",))], gen, cache)
        assert asked == "潘淑是哪里人？"
    assert len(gen.calls) == 1
    assert gen.calls[0]["messages"][-1]["content"].endswith("Where was 潘淑 from?")
    # the same question over an English passage is read as asked
    assert judge_question("Where was Pan Shu from?", queries, [_hit("Pan Shu was an empress.")], gen, cache) == \
        "Where was Pan Shu from?"
