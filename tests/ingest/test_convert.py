"""Tests for desktop_kb.ingest.convert: every file is generated in tmp_path (no fixtures on disk)."""

from __future__ import annotations

import csv
import os
import zipfile
from pathlib import Path

import pytest
from filemakers import make_docx, make_pdf

from desktop_kb.errors import CorruptFile, IngestError, NoExtractableText, PasswordProtected, UnsupportedFile
from desktop_kb.ingest import convert as convert_mod
from desktop_kb.ingest.convert import convert, decode_text
from desktop_kb.ingest.ocr import OcrOptions


def write(tmp_path: Path, name: str, data: bytes | str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode(encoding) if isinstance(data, str) else data)
    return path


# ----------------------------------------------------------------------------------- plain text


def test_markdown_is_returned_as_is(tmp_path: Path) -> None:
    text = "# Title\n\nSome *text* with [a link](http://example.com).\n"
    doc = convert(write(tmp_path, "notes.md", text))
    assert doc.markdown == text
    assert doc.title == "notes"
    assert doc.pages == ()


def test_txt_keeps_text_and_uses_stem_as_title(tmp_path: Path) -> None:
    doc = convert(write(tmp_path, "readme.txt", "first line\nsecond line\n"))
    assert doc.markdown.startswith("first line\nsecond line")
    assert not doc.markdown.startswith("#")
    assert doc.title == "readme"


def test_gbk_chinese_txt(tmp_path: Path) -> None:
    text = "第一章 总则\n本办法适用于全体员工。请假需提前三天申请。\n"
    assert convert(write(tmp_path, "handbook.txt", text, "gbk")).markdown.strip() == text.strip()


def test_short_gbk_text_is_not_taken_for_korean() -> None:
    assert decode_text("你好，世界".encode("gbk")) == "你好，世界"


def test_big5_and_gb18030(tmp_path: Path) -> None:
    big5 = "這是一個繁體中文的測試文件，用來檢查編碼偵測是否正確。"
    assert convert(write(tmp_path, "big5.txt", big5, "big5")).markdown == big5
    gb = "数据中心的温度应保持在二十度左右。"
    assert convert(write(tmp_path, "gb.log", gb, "gb18030")).markdown == gb


def test_utf8_with_late_non_ascii(tmp_path: Path) -> None:
    text = ("plain ascii line\n" * 7000) + "café 中文 naïve\n"
    assert len(text.encode("utf-8").split("é".encode())[0]) > 100_000
    doc = convert(write(tmp_path, "late.txt", text))
    assert doc.markdown == text


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be-bom", "utf-8-sig", "utf-32"])
def test_bom_encodings(tmp_path: Path, encoding: str) -> None:
    text = "Héllo 世界\nline two\n"
    data = b"\xfe\xff" + text.encode("utf-16-be") if encoding == "utf-16-be-bom" else text.encode(encoding)
    doc = convert(write(tmp_path, "bom.txt", data))
    assert doc.markdown.strip() == text.strip()
    assert "\ufeff" not in doc.markdown


def test_utf16_without_bom(tmp_path: Path) -> None:
    text = "Hello world, this is plain text.\n"
    assert convert(write(tmp_path, "u16.txt", text.encode("utf-16-le"))).markdown.strip() == text.strip()


def test_text_with_nuls_between_words_is_not_taken_for_utf16(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFile, match="binary"):  # was decoded to '敨汬o潷汲d…'
        convert(write(tmp_path, "nul.txt", b"hello\0world\0" * 100))
    assert convert(write(tmp_path, "u16.txt", "Hello world, 你好世界 1.".encode("utf-16-le") * 20)).markdown.startswith(
        "Hello world, 你好世界")


def test_binary_file_named_txt_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "photo.txt", os.urandom(4096) + b"\x00\x01\x02")
    with pytest.raises(UnsupportedFile, match=r"photo\.txt is not a text file \(binary content\)"):
        convert(path)


def test_binary_without_nul_bytes_is_refused(tmp_path: Path) -> None:
    data = bytes(b for b in os.urandom(8192) if b) or b"\x01" * 100
    with pytest.raises(UnsupportedFile, match="binary"):
        convert(write(tmp_path, "noise.log", data))


@pytest.mark.parametrize(("name", "data"), [("empty.txt", b""), ("blank.md", b" \n\n\t \n"), ("e.pdf", b"")])
def test_empty_file(tmp_path: Path, name: str, data: bytes) -> None:
    with pytest.raises(NoExtractableText, match="is empty"):
        convert(write(tmp_path, name, data))


# ------------------------------------------------------------------------------------------- CSV


def test_shift_jis_csv(tmp_path: Path) -> None:
    text = "名前,年齢,住所\n佐藤太郎,30,東京\n三木英子,25,大阪\n髙橋淳,35,名古屋\n"
    doc = convert(write(tmp_path, "people.csv", text, "cp932"))
    lines = doc.markdown.splitlines()
    assert lines[0] == "| 名前 | 年齢 | 住所 |"
    assert lines[1] == "| --- | --- | --- |"
    assert "| 髙橋淳 | 35 | 名古屋 |" in lines


def test_csv_quoting_pipes_and_ragged_rows(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([["a", "b", "c"], ["x|y", "multi\nline", "z"], ["only one"]])
    lines = convert(path).markdown.splitlines()
    assert lines == [
        "| a | b | c |",
        "| --- | --- | --- |",
        "| x\\|y | multi line | z |",
        "| only one |  |  |",
    ]


def test_semicolon_csv(tmp_path: Path) -> None:
    doc = convert(write(tmp_path, "eu.csv", "name;price\nBrot;2,50\nKäse;4,10\n", "cp1252"))
    assert "| Käse | 4,10 |" in doc.markdown


# ------------------------------------------------------------------------------------------- PDF


def test_pdf_pages_have_exact_spans(tmp_path: Path) -> None:
    pages = [["Page one alpha", "second line of one"], ["Page two bravo"], ["Page three charlie", "end"]]
    doc = convert(write(tmp_path, "report.pdf", make_pdf(pages)))
    assert [p.number for p in doc.pages] == [1, 2, 3]
    texts = [doc.markdown[p.start : p.end] for p in doc.pages]
    assert texts == ["Page one alpha\nsecond line of one", "Page two bravo", "Page three charlie\nend"]
    assert doc.markdown == "\n\n".join(texts)
    assert "\r" not in doc.markdown
    assert doc.title == "report"
    assert doc.warnings == ()


def test_pdf_with_a_blank_page_warns(tmp_path: Path) -> None:
    doc = convert(write(tmp_path, "gaps.pdf", make_pdf([["first"], [], ["third"]])))
    spans = {p.number: doc.markdown[p.start : p.end] for p in doc.pages}
    assert spans == {1: "first", 2: "", 3: "third"}
    assert len(doc.warnings) == 1 and "pages 2" in doc.warnings[0]


def test_scanned_like_pdf_has_no_text(tmp_path: Path) -> None:
    with pytest.raises(NoExtractableText, match=r"no extractable text \(scanned or empty PDF\?\)"):
        convert(write(tmp_path, "scan.pdf", make_pdf([[], []])))


def test_encrypted_pdf(tmp_path: Path) -> None:
    path = write(tmp_path, "secret.pdf", make_pdf([["Top secret plan"], ["Second page"]], password="s3cret"))
    with pytest.raises(PasswordProtected, match=r"secret\.pdf is password-protected"):
        convert(path)
    with pytest.raises(PasswordProtected, match="password-protected"):
        convert(path, pdf_password="wrong")
    doc = convert(path, pdf_password="s3cret")
    assert [doc.markdown[p.start : p.end] for p in doc.pages] == ["Top secret plan", "Second page"]


def test_corrupt_pdf(tmp_path: Path) -> None:
    with pytest.raises(CorruptFile, match=r"broken\.pdf"):
        convert(write(tmp_path, "broken.pdf", b"%PDF-1.4\n" + os.urandom(500)))


# ---------------------------------------------------------------------------------- Office & co


def test_docx(tmp_path: Path) -> None:
    path = make_docx(
        tmp_path / "policy.docx", [("Heading1", "Leave policy"), ("", "Annual leave is 25 days.")]
    )
    doc = convert(path)
    assert "# Leave policy" in doc.markdown
    assert "Annual leave is 25 days." in doc.markdown
    assert doc.title == "policy"


def test_random_bytes_named_docx_is_corrupt(tmp_path: Path) -> None:
    with pytest.raises(CorruptFile, match=r"report\.docx is damaged or not a real DOCX file"):
        convert(write(tmp_path, "report.docx", os.urandom(2048)))


def test_truncated_zip_named_docx_is_corrupt(tmp_path: Path) -> None:
    # markitdown alone returns this as plain text ("PK\x03\x04garbage").
    with pytest.raises(CorruptFile, match="DOCX"):
        convert(write(tmp_path, "cut.docx", b"PK\x03\x04garbage"))


def test_zip_that_is_not_an_office_file(tmp_path: Path) -> None:
    path = tmp_path / "fake.xlsx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("hello.txt", "hello")
    with pytest.raises(CorruptFile, match="not a real XLSX file"):
        convert(path)


def test_encrypted_office_file(tmp_path: Path) -> None:
    # Password-protected DOCX/XLSX/PPTX are OLE compound files, not zips.
    with pytest.raises(PasswordProtected, match=r"locked\.xlsx is password-protected"):
        convert(write(tmp_path, "locked.xlsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600))


def test_pptx_slides_become_pages(tmp_path: Path) -> None:
    from pptx import Presentation

    prs = Presentation()
    for title, body in [("Kickoff", "alpha body"), ("Budget", "bravo body"), ("Next steps", "charlie body")]:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    path = tmp_path / "deck.pptx"
    prs.save(str(path))
    doc = convert(path)
    assert "Slide number" not in doc.markdown
    assert [p.number for p in doc.pages] == [1, 2, 3]
    spans = [doc.markdown[p.start : p.end] for p in doc.pages]
    for span, (title, body) in zip(
        spans, [("Kickoff", "alpha"), ("Budget", "bravo"), ("Next steps", "charlie")], strict=True
    ):
        assert span.startswith(f"# {title}")
        assert body in span
    assert "bravo" not in spans[0] and "alpha" not in spans[1]


def test_xlsx_sheets_without_pandas_noise(tmp_path: Path) -> None:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Staff"
    ws.append(["Name", "Room", None])
    ws.append(["Ann", None, "x"])
    ws.append([None, None, None])
    ws.append(["Bob", "B12", "y"])
    wb.create_sheet("Costs").append(["Item", "EUR"])
    path = tmp_path / "book.xlsx"
    wb.save(path)
    doc = convert(path)
    assert "## Staff" in doc.markdown and "## Costs" in doc.markdown
    assert "| Bob | B12 | y |" in doc.markdown
    assert "NaN" not in doc.markdown and "Unnamed" not in doc.markdown


def test_html_title_and_text(tmp_path: Path) -> None:
    html = "<html><head><title>Team page</title></head><body><h1>Welcome</h1><p>Hello team.</p></body></html>"
    doc = convert(write(tmp_path, "team.html", html))
    assert doc.title == "Team page"
    assert "# Welcome" in doc.markdown and "Hello team." in doc.markdown


# ------------------------------------------------------------------------------------ refusals


def test_a_zip_that_unpacks_to_too_much_text_is_refused_before_it_is_read(tmp_path, monkeypatch) -> None:
    from desktop_kb.ingest import zipcheck

    monkeypatch.setattr(zipcheck, "MAX_UNPACKED_TEXT", 1024 * 1024)
    plain = make_docx(tmp_path / "plain.docx", [("", "A. " * 400_000)])  # 1.2 MB of XML
    path = tmp_path / "inflated.docx"
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            out.writestr(info.filename, src.read(info))
    assert path.stat().st_size < 100_000  # what the file-size limit sees
    with pytest.raises(UnsupportedFile, match=r"inflated\.docx unpacks to 1 MB of text \(limit 1 MB\)"):
        convert(path)
    monkeypatch.setattr(zipcheck, "MAX_UNPACKED_TEXT", 10 * 1024 * 1024)
    assert "A. A." in convert(path).markdown  # under the limit it is read as before


def test_random_bytes_named_html_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFile, match="binary"):
        convert(write(tmp_path, "page.html", os.urandom(3000)))


def test_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFile, match=r"archive\.7z"):
        convert(write(tmp_path, "archive.7z", b"7z\xbc\xaf"))


def test_too_large(tmp_path: Path) -> None:
    path = write(tmp_path, "big.txt", "x" * 3 * 1024 * 1024)
    with pytest.raises(UnsupportedFile, match=r"big\.txt is too large \(3 MB; limit 1 MB\)"):
        convert(path, max_bytes=1024 * 1024)


def test_missing_file_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"gone\.docx"):
        convert(tmp_path / "gone.docx")


class _Raising:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def convert_local(self, path: str) -> None:
        raise self.exc


def _conversion_error(inner: Exception) -> Exception:
    from markitdown import FailedConversionAttempt, FileConversionException

    return FileConversionException(attempts=[FailedConversionAttempt(object(), (type(inner), inner, None))])


def _missing_dependency() -> Exception:
    from markitdown import MissingDependencyException

    return MissingDependencyException("install markitdown[outlook]")


@pytest.mark.parametrize(
    ("exc", "expected", "message"),
    [
        (RuntimeError("boom"), CorruptFile, r"Could not read page\.html: boom"),
        (_conversion_error(type("PDFPasswordIncorrect", (Exception,), {})()), PasswordProtected, "password"),
        (_conversion_error(ValueError("Package not found at x")), CorruptFile, "damaged or not a real HTML"),
        (_conversion_error(KeyError("weird")), CorruptFile, r"Could not read page\.html: KeyError"),
        (_conversion_error(_missing_dependency()), UnsupportedFile, r"page\.html cannot be read: a component"),
    ],
)
def test_markitdown_errors_are_mapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: Exception, expected: type, message: str
) -> None:
    monkeypatch.setattr(convert_mod, "_markitdown", lambda: _Raising(exc))
    with pytest.raises(expected, match=message):
        convert(write(tmp_path, "page.html", "<p>hi</p>"))


def test_markitdown_unsupported_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from markitdown import UnsupportedFormatException

    monkeypatch.setattr(convert_mod, "_markitdown", lambda: _Raising(UnsupportedFormatException("no")))
    with pytest.raises(UnsupportedFile, match=r"odd\.xml"):
        convert(write(tmp_path, "odd.xml", "<a/>"))


# ---------------------------------------------------------------------------- real sample files

EVAL = Path("/work/shared/eval/files")


@pytest.fixture(scope="module")
def real_ocr():
    from desktop_kb.backends.ocr_rapid import RapidOcrEngine

    return RapidOcrEngine(threads=2)


def _manifest_rows() -> list[dict[str, str]]:
    if not (EVAL / "MANIFEST.tsv").exists():
        return []
    with (EVAL / "MANIFEST.tsv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The xlrd engine is deprecated")
@pytest.mark.skipif(not (EVAL / "MANIFEST.tsv").exists(), reason="shared eval files are absent")
@pytest.mark.parametrize("row", _manifest_rows(), ids=lambda r: r["file"])
def test_real_files(row: dict[str, str], real_ocr) -> None:
    path = EVAL / row["file"]
    if path.suffix.lower() not in convert_mod.SUPPORTED_EXTENSIONS:
        with pytest.raises(UnsupportedFile):
            convert(path)
        return
    if "scan" in row["file"].lower() or path.suffix.lower() == ".jpg":
        without = (NoExtractableText, "no extractable text") if path.suffix == ".pdf" else (UnsupportedFile, "OCR")
        with pytest.raises(without[0], match=without[1]):
            convert(path)  # without OCR
        doc = convert(path, ocr=OcrOptions(real_ocr))  # with OCR: the scanned report and the photo
        assert doc.ocr and [p.number for p in doc.ocr] == [p.number for p in doc.pages]
        words = {"scan": ("Patient", "Hypertension", "Medical"), ".jpg": ("AutoGen", "Abstract", "agents")}
        want = words["scan" if "scan" in row["file"].lower() else ".jpg"]
        assert all(w.lower() in doc.markdown.lower() for w in want), doc.markdown[:500]
        return
    doc = convert(path)
    if row["snippet_in_markitdown_output"] != "yes":  # the snippet is markitdown link syntax, not text
        assert doc.markdown.strip()
        return
    if row["file"].endswith(".pdf"):  # pdfium's layout differs from markitdown's tables: compare words
        flat = " ".join(doc.markdown.split())
        assert all(word in flat for word in row["expected"].split())
    else:
        assert row["expected"] in doc.markdown
    for page in doc.pages:
        assert 0 <= page.start <= page.end <= len(doc.markdown)


# ---------------------------------------------------------------------------- OpenDocument, skipped types


def _odf_text(path: Path) -> Path:
    from odf import table, text
    from odf.opendocument import OpenDocumentText

    doc = OpenDocumentText()
    doc.text.addElement(text.H(outlinelevel=1, text="Expense policy"))
    doc.text.addElement(text.P(text="Receipts are due within 30 days."))
    items = text.List()
    for label in ("Taxis", "Trains"):
        item = text.ListItem()
        item.addElement(text.P(text=label))
        items.addElement(item)
    doc.text.addElement(items)
    t = table.Table(name="Rates")
    for row_values in (("Item", "Rate"), ("Hotel", "120 EUR")):
        row = table.TableRow()
        for v in row_values:
            cell = table.TableCell()
            cell.addElement(text.P(text=v))
            row.addElement(cell)
        t.addElement(row)
    doc.text.addElement(t)
    doc.save(str(path))
    return path


def test_opendocument_text_sheets_and_slides(tmp_path: Path) -> None:
    from odf import draw, table, text
    from odf.opendocument import OpenDocumentPresentation, OpenDocumentSpreadsheet
    from odf.style import MasterPage, PageLayout

    odt = convert(_odf_text(tmp_path / "policy.odt"))
    assert odt.markdown.startswith("# Expense policy\n\nReceipts are due within 30 days.")
    assert "- Taxis\n- Trains" in odt.markdown and "| Hotel | 120 EUR |" in odt.markdown

    ods = OpenDocumentSpreadsheet()
    for name, value in (("Budget", "4200"), ("Staff", "Ana")):
        sheet = table.Table(name=name)
        row = table.TableRow()
        for v in ("Key", value):
            cell = table.TableCell(numbercolumnsrepeated=1)
            cell.addElement(text.P(text=v))
            row.addElement(cell)
        row.addElement(table.TableCell(numbercolumnsrepeated=1000))  # the run-length blank tail
        sheet.addElement(row)
        sheet.addElement(table.TableRow(numberrowsrepeated=1_000_000))  # blank rows to the end
        ods.spreadsheet.addElement(sheet)
    ods.save(str(tmp_path / "book.ods"))
    sheets = convert(tmp_path / "book.ods")
    assert sheets.markdown == "## Budget\n\n| Key | 4200 |\n| --- | --- |\n\n## Staff\n\n| Key | Ana |\n| --- | --- |"

    odp = OpenDocumentPresentation()
    layout = PageLayout(name="L")
    odp.automaticstyles.addElement(layout)
    master = MasterPage(name="M", pagelayoutname=layout)
    odp.masterstyles.addElement(master)
    for title in ("Quarterly review", "Next steps"):
        page = draw.Page(masterpagename=master)
        frame = draw.Frame(width="20cm", height="3cm", x="1cm", y="1cm")
        box = draw.TextBox()
        box.addElement(text.P(text=title))
        frame.addElement(box)
        page.addElement(frame)
        odp.presentation.addElement(page)
    odp.save(str(tmp_path / "deck.odp"))
    slides = convert(tmp_path / "deck.odp")
    assert [slides.markdown[p.start:p.end] for p in slides.pages] == ["Quarterly review", "Next steps"]


def test_broken_opendocument_is_reported(tmp_path: Path) -> None:
    (tmp_path / "x.odt").write_bytes(os.urandom(500))
    with pytest.raises(CorruptFile, match="not a real OpenDocument"):
        convert(tmp_path / "x.odt")
    with zipfile.ZipFile(tmp_path / "locked.odt", "w") as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        zf.writestr("content.xml", "<garbage/>")
        zf.writestr("META-INF/manifest.xml", '<manifest:encryption-data manifest:checksum="x"/>')
    with pytest.raises(PasswordProtected):
        convert(tmp_path / "locked.odt")


def test_unread_types_are_listed_as_skipped_with_the_reason(settings, tmp_path: Path) -> None:
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.library.kb import Library

    d = tmp_path / "folder"
    d.mkdir()
    (d / "notes.md").write_text("# Notes\n\nThe kick-off is on Monday.\n", encoding="utf-8")
    for name in ("old.doc", "slides.ppt", "bundle.zip", "tool.exe"):
        (d / name).write_bytes(b"\0" * 64)
    (d / ".hidden.doc").write_bytes(b"\0")  # hidden files stay out of the report
    with Library.open(settings.replace(extensions=(".md",)), embedder=HashEmbedder(), reranker=None) as lib:
        (d / "data.json").write_text("{}", encoding="utf-8")
        report = lib.ingest("kb", [d])
    skipped = {Path(f.path).name: (f.error, f.hint) for f in report.skipped}
    assert set(skipped) == {"old.doc", "slides.ppt", "bundle.zip", "tool.exe", "data.json"}
    assert "save it as .docx" in skipped["old.doc"][1] and "save it as .pptx" in skipped["slides.ppt"][1]
    assert "archives are not opened" in skipped["bundle.zip"][0]
    assert "turned off in the settings" in skipped["data.json"][0]
    assert report.to_json()["skipped"][0]["reason"]
