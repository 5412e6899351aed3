"""Section, whole-document and library questions (query/scope.py, query/sections.py): scripted LLM,
real store, the real tables of contents."""

from __future__ import annotations

import dataclasses

import pytest

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.library.kb import Library
from desktop_kb.query.scope import scope_cue

PARA = "This paragraph explains the {t} topic in some detail so that the section has a real size. " * 5

REPORT = (
    "# Annual report\n\nOverview of the year.\n\n"
    "## 1 Revenue\n\n" + PARA.format(t="revenue") + "\n\n"
    "## 2 Costs\n\n" + PARA.format(t="costs") + "\n\n### 2.1 Staff\n\nStaff costs rose by 4 percent in 2024.\n\n"
    + PARA.format(t="staff") + "\n\n"
    "## 3 Outlook\n\nNext year looks steady.\n"
)
ZH = ("# 年度报告\n\n## 第一章 收入\n\n今年收入增长了百分之五，主要来自新产品。\n\n"
      "## 第二章 成本\n\n今年成本下降了百分之三，主要是因为能源价格降低。\n\n## 第三章 展望\n\n明年预计保持稳定。\n")


@pytest.fixture
def docs(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "report.md").write_text(REPORT, encoding="utf-8")
    (d / "年度报告.md").write_text(ZH, encoding="utf-8")
    (d / "invoices.md").write_text("# Invoices\n\nInvoices must be paid within 30 days.\n", encoding="utf-8")
    (d / "travel.md").write_text("# Travel\n\nTravel invoices are checked by finance.\n", encoding="utf-8")
    return d


def _lib(settings, gen, **query):
    s = settings.replace(chunk=dataclasses.replace(settings.chunk, size=300, overlap=30),
                         query=dataclasses.replace(settings.query, dense_threshold=0.0, **query))
    return Library.open(s, embedder=HashEmbedder(), reranker=None, generator=gen)


def _prompt(gen, k=-1):
    return [c for c in gen.calls if c["json_schema"] is None][k]["messages"][-1]["content"]


def test_scope_cues_are_cheap_patterns():
    assert scope_cue("Summarise section 2 of the report") == "section"
    assert scope_cue("总结一下第三章") == "section"
    assert scope_cue("What does chapter iv say?") == "section"
    assert scope_cue("Give me an overview of the report") == "document"
    assert scope_cue("list the obligations in this contract") == "document"
    assert scope_cue("概括这份合同") == "document"
    assert scope_cue("Which of my documents talk about invoices?") == "library"
    assert scope_cue("哪些文档提到了发票？") == "library"
    for pointed in ("When must invoices be paid?", "How much did staff costs rise?", "发票多久内必须支付？"):
        assert scope_cue(pointed) is None
    # yes/no questions are pointed, and judged: as a "document" question an audit's "Summarise: do
    # employees need a doctor's note …?" was answered "Yes" (the passage: not required) unjudged
    for yes_no in ("Summarise: do employees need a doctor's note for a two-day absence?",
                   "Does the travel policy list the hotel allowance per night?", "报销是否需要发票？", "差旅政策里有住宿标准吗？"):
        assert scope_cue(yes_no) is None, yes_no
    assert scope_cue("总结采购制度第三条") == "section"
    assert scope_cue("第三章讲了什么？") == "section" and scope_cue("总结一下这份报告说了什么") == "document"


def test_chinese_enumerated_sections_are_numbered():
    from desktop_kb.query.scope import _node_number

    for title in ("三、付款", "（三）付款", "第三条 付款", "第三章 付款", "3. Payment", "III. Payment"):
        assert _node_number(title) == "3", title
    assert _node_number("付款") is None


def test_summarise_section_2_cites_its_chunks_in_reading_order_and_no_others(settings, docs, scripted):
    gen = scripted(answers=["Staff costs rose by 4 percent in 2024 [3]."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [docs])
        doc_id = lib.doc_id_of("kb", docs / "report.md")
        section = next(n for n in lib.document_toc("kb", doc_id)[0].children if n.title == "2 Costs")
        a = lib.ask("Summarise section 2 of the report", kbs=["kb"])
    assert [h.chunk.chunk_id for h in a.passages] == list(section.chunk_ids)  # all of it, in order, only it
    assert len(a.passages) >= 3
    assert a.scope == "section “2 Costs” of report.md"
    assert a.status == "answered" and {c.n for c in a.citations} == {3}
    prompt = _prompt(gen)
    assert "revenue topic" not in prompt and "costs topic" in prompt and "Staff costs rose" in prompt


def test_chinese_chapter_question_finds_the_chapter(settings, docs, scripted):
    gen = scripted(answers=["今年成本下降了百分之三 [1]。"])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [docs])
        a = lib.ask("总结一下年度报告的第二章", kbs=["kb"])
    assert a.scope.startswith("section “第二章 成本”")
    assert all("第二章 成本" in h.chunk.heading_path for h in a.passages)


def test_a_section_larger_than_the_budget_goes_map_reduce(settings, docs, scripted):
    gen = scripted(answers=["Costs are explained [1].", "Staff costs rose by 4 percent in 2024 [3].",
                            "More detail [4].", "Staff costs rose by 4 percent in 2024 [3]."])
    stages: list[tuple[str, int]] = []
    with _lib(settings, gen, section_tokens=120) as lib:
        lib.ingest("kb", [docs])
        a = lib.ask("Summarise section 2 of the report", kbs=["kb"], on_stage=lambda s, n: stages.append((s, n)))
    chats = [c for c in gen.calls if c["json_schema"] is None]
    parts = len(chats) - 1
    assert parts >= 2 and ("parts", parts) in stages and ("part", 2) in stages
    # each part numbers its passages globally; the last call combines the partial answers
    assert "[1] (" in chats[0]["messages"][-1]["content"]
    assert "[1] (" not in chats[1]["messages"][-1]["content"] and "part 2 of" in chats[1]["messages"][-1]["content"]
    assert "Partial answer 1" in chats[-1]["messages"][-1]["content"]
    assert a.status == "answered" and a.citations[0].n == 3


def test_library_question_gets_one_passage_per_document(settings, docs, scripted):
    gen = scripted(answers=["invoices.md says invoices must be paid within 30 days [1]; travel.md says travel "
                            "invoices are checked by finance [2]."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [docs])
        a = lib.ask("Which of my documents talk about invoices?", kbs=["kb"])
    paths = [h.chunk.path for h in a.passages]
    assert len(paths) == len(set(paths)) >= 2  # one passage per document
    assert {"invoices.md", "travel.md"} <= {p.rsplit("/", 1)[-1] for p in paths}  # (hash vectors: order is noise)
    assert a.scope == "the library"


def test_pointed_questions_never_look_at_tables_of_contents(settings, docs, scripted, monkeypatch):
    gen = scripted(answers=["Invoices must be paid within 30 days [1]."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [docs])
        monkeypatch.setattr(lib, "document_toc", lambda *a: pytest.fail("TOC read for a pointed question"))
        a = lib.ask("When must invoices be paid?", kbs=["kb"])
    assert a.scope == "" and a.status == "answered"


def test_a_named_section_is_preferred_to_the_document_it_is_in(settings, docs, scripted):
    gen = scripted(answers=["Staff costs rose by 4 percent in 2024 [3]."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [docs])
        a = lib.ask("Give me an overview of the costs in the annual report", kbs=["kb"])
    assert a.scope == "section “2 Costs” of report.md"  # named without its number, deeper than the report
