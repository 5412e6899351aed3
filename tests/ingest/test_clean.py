"""Tests for desktop_kb.ingest.clean."""

from __future__ import annotations

from desktop_kb.ingest.clean import clean, clean_text
from desktop_kb.types import ConvertedDocument, Page


def paged(parts: list[str]) -> ConvertedDocument:
    """A document whose pages are ``parts`` joined by blank lines (as convert() builds them)."""
    pages, pos = [], 0
    for number, part in enumerate(parts, start=1):
        pages.append(Page(number, pos, pos + len(part)))
        pos += len(part) + 2
    return ConvertedDocument("\n\n".join(parts), tuple(pages), "t", ("a warning",))


# ---------------------------------------------------------------------------------------- links


def test_links_become_their_text() -> None:
    text = 'See [the guide](https://example.com/guide "Guide") and [Microsoft](https://en.wikipedia.org/wiki/Foo_(bar)).'
    assert clean_text(text) == "See the guide and Microsoft."


def test_link_with_angle_target_and_multiline_label() -> None:
    assert clean_text("Go [here](<a b.html>) now") == "Go here now"
    assert clean_text("[**Auto\nGen**](/autogen/) rocks") == "**Auto\nGen** rocks"


def test_images() -> None:
    text = (
        "Logo: ![](data:image/png;base64,iVBORw0KGgo=) end\n"
        "![image1.png](media/image1.png)\n"
        "![A bar chart of sales by quarter](chart.png)\n"
        "[![Build](badge.svg)](https://ci)"
    )
    assert clean_text(text).split("\n") == ["Logo: end", "", "A bar chart of sales by quarter", "Build"]


def test_anchor_links_vanish() -> None:
    assert clean_text("## Install [¶](#install)") == "## Install"


def test_navigation_runs_are_dropped() -> None:
    text = "\n".join(
        [
            "# Handbook",
            "* [Home](/)",
            "* [About us](/about)",
            "",
            "* [Contact](/contact)",
            "[Jobs](/jobs) | [Press](/press)",
            "Holidays are booked in the [HR portal](https://hr) before March.",
            "- [Only](/a)",
            "- [Two](/b)",
            "Closing text.",
        ]
    )
    assert clean_text(text).split("\n") == [
        "# Handbook",
        "Holidays are booked in the HR portal before March.",
        "- Only",
        "- Two",
        "Closing text.",
    ]


def test_html_comments_removed() -> None:
    assert clean_text("before <!-- hidden\nnote --> after\n<!-- x -->") == "before after"


# ----------------------------------------------------------------------------------- characters


def test_cjk_punctuation_and_fullwidth_kept() -> None:
    text = "「请假」需提前三天申请。是吗？是！注意；逗号，ＡＢＣ１２３"
    assert clean_text(text) == text


def test_special_spaces_invisible_and_control_chars() -> None:
    text = "a\u00a0b\u3000c\u200bd\ufeffe\u00adf\x07g\x00h\u200di\tj"
    assert clean_text(text) == "a b cdefgh\u200di j"


def test_nfc() -> None:
    assert clean_text("Cafe\u0301") == "Café"


def test_whitespace_and_line_endings() -> None:
    text = "\r\n\r\nline  one \t\r\n\r\n\r\n\r\n    indented   text  \rlast\u2028line\n\n\n"
    assert clean_text(text) == "line one\n\n    indented text\nlast\nline"


def test_headings_and_tables_kept() -> None:
    text = "# Title\n\n## Sub  heading\n\n|  a  |  b |\n| --- | --- |\n| [x](u) | y |"
    assert clean_text(text) == "# Title\n\n## Sub heading\n\n| a | b |\n| --- | --- |\n| x | y |"


def test_code_fences_untouched() -> None:
    text = "text  [l](u)\n```python\nx  =  [a](b)  \n<!-- keep -->\n```\nafter  [m](v)"
    assert clean_text(text) == "text l\n```python\nx  =  [a](b)\n<!-- keep -->\n```\nafter m"


# ---------------------------------------------------------------------------------------- pages


def test_page_spans_exact_after_cleaning() -> None:
    parts = [
        "Page  one [link](http://a)\r\n\r\n\r\n\r\nmore one  ",
        "<!-- c -->\n* [Home](/)\n* [News](/n)\n* [Help](/h)\nPage two text。",
        "   \n\u200b\n",
        "# Page four\u00a0title\n\nbody four",
    ]
    doc = clean(paged(parts))
    spans = {p.number: doc.markdown[p.start : p.end] for p in doc.pages}
    assert spans == {
        1: "Page one link\n\nmore one",
        2: "Page two text。",
        3: "",  # a page that became empty keeps a zero-length span
        4: "# Page four title\n\nbody four",
    }
    for page, part in zip(doc.pages, parts, strict=True):
        assert doc.markdown[page.start : page.end] == clean_text(part)
    assert doc.markdown == "Page one link\n\nmore one\n\nPage two text。\n\n# Page four title\n\nbody four"
    assert doc.title == "t" and doc.warnings == ("a warning",)


def test_text_outside_pages_is_kept_outside_spans() -> None:
    doc = ConvertedDocument("intro  text\n\nP1\n\nP2\n\noutro", (Page(1, 13, 15), Page(2, 17, 19)))
    cleaned = clean(doc)
    assert cleaned.markdown == "intro text\n\nP1\n\nP2\n\noutro"
    assert [cleaned.markdown[p.start : p.end] for p in cleaned.pages] == ["P1", "P2"]


def test_document_without_pages() -> None:
    doc = clean(ConvertedDocument("a  b\n\n\n\nc", (), "x"))
    assert doc.markdown == "a b\n\nc"
    assert doc.pages == ()
    assert doc.title == "x"


def test_clean_is_idempotent() -> None:
    parts = ["# T\n\n[a](b)  c", "![](x.png)\n\nd\u3000e"]
    once = clean(paged(parts))
    assert clean(once) == once
