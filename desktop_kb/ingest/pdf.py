"""PDF → Markdown with one exact span per page (pypdfium2), scanned pages read by OCR.

A page whose text layer is empty or nearly so is rendered (``OcrOptions.dpi``) and recognised
when OCR is on; ``mode="force"`` reads every page by OCR. At most ``max_pages`` pages per file are
recognised; the rest are left out with a warning, so a 600-page scan is indexed partly rather than
for an hour.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from ..errors import CorruptFile, ModelError, NoExtractableText, PasswordProtected
from ..types import ConvertedDocument, OcrPage, Page
from .ocr import OcrOptions, PageCounter, needs_ocr, page_text

__all__ = ["convert_pdf", "join_pages"]

_pdfium_lock = threading.Lock()  # PDFium is not thread-safe
T = TypeVar("T")


def convert_pdf(path: Path, password: str | None, ocr: OcrOptions | None = None) -> ConvertedDocument:
    name = path.name
    scanned: list[OcrPage] = []
    skipped: list[int] = []
    unavailable = ""  # OCR could not start: the text layer is kept, and the user told
    with _pdfium_lock, path.open("rb") as fh:
        pdf = _open(fh, name, password)
        try:
            texts = [_with_page(pdf, i, _text_layer) for i in range(len(pdf))]  # type: ignore[arg-type]
            outline = _outline(pdf)
            if ocr is not None and ocr.enabled:
                todo = [i for i, t in enumerate(texts) if ocr.mode == "force" or needs_ocr(t)]
                counter = PageCounter(ocr, len(todo))
                for index in todo:
                    if counter.full:
                        skipped.append(index + 1)
                        continue
                    if unavailable:
                        skipped.append(index + 1)
                        continue
                    try:
                        read = counter.read(index + 1, _with_page(pdf, index, lambda p: _render(p, ocr.dpi)))
                    except ModelError as exc:
                        if any(not needs_ocr(t) for t in texts):  # other pages have text: keep those
                            unavailable = exc.message
                            skipped.append(index + 1)
                            continue
                        raise
                    scanned.append(read)
                    texts[index] = page_text(read) or ("" if ocr.mode == "force" else texts[index])
        finally:
            pdf.close()
    if not any(texts):
        if scanned:
            raise NoExtractableText(f"{name}: no text was recognised on its scanned pages.",
                                    "The scan may be blank, too faint or too small to read.")
        raise NoExtractableText(f"{name} has no extractable text (scanned or empty PDF?).", _ocr_hint(ocr))
    markdown, pages = join_pages(list(enumerate(texts, start=1)))
    warnings = _warnings(name, pages, skipped, ocr)
    if unavailable:
        warnings = (f"{name}: pages {', '.join(map(str, skipped[:10]))} were not read by OCR: {unavailable}",)
    return ConvertedDocument(markdown, pages, path.stem, warnings, tuple(scanned), outline)


def _outline(pdf: object, limit: int = 2000) -> tuple[tuple[int, str, int], ...]:
    """The bookmarks that point at a page: (level from 1, title, page number). A damaged outline
    is no reason to fail the file: it is then left out."""
    out: list[tuple[int, str, int]] = []
    try:
        for bookmark in pdf.get_toc():  # type: ignore[attr-defined]
            dest = bookmark.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join((bookmark.get_title() or "").split())
            if index is not None and title:
                out.append((bookmark.level + 1, title[:200], index + 1))
            if len(out) >= limit:
                break
    except Exception:  # pypdfium2 raises its own errors on broken outlines
        return ()
    return tuple(out)


def _open(fh: object, name: str, password: str | None) -> object:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        return pdfium.PdfDocument(fh, password=password)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            detail = "the password is wrong" if password else "no password was given"
            raise PasswordProtected(f"{name} is password-protected ({detail}).") from None
        if code == pdfium_c.FPDF_ERR_SECURITY:
            raise PasswordProtected(
                f"{name} is password-protected with an encryption method that cannot be opened."
            ) from None
        raise CorruptFile(f"{name} is damaged or not a real PDF file.") from None


def _with_page(pdf: object, index: int, fn: Callable[[object], T]) -> T:
    page = pdf[index]  # type: ignore[index]
    try:
        return fn(page)
    finally:
        page.close()


def _text_layer(page: object) -> str:
    textpage = page.get_textpage()  # type: ignore[attr-defined]
    try:
        return _page_text(textpage.get_text_bounded())
    finally:
        textpage.close()


def _render(page: object, dpi: int) -> np.ndarray:
    bitmap = page.render(scale=dpi / 72.0, rev_byteorder=True)  # type: ignore[attr-defined]
    try:
        return np.array(bitmap.to_pil().convert("RGB"))
    finally:
        bitmap.close()


def _warnings(name: str, pages: tuple[Page, ...], skipped: list[int], ocr: OcrOptions | None) -> tuple[str, ...]:
    out = []
    if skipped:
        cap = ocr.max_pages if ocr is not None else 0
        out.append(f"{name} was indexed partly: only the first {cap} scanned pages were read by OCR "
                   f"({len(skipped)} more were left out; see the OCR page limit in the settings).")
    empty = [p.number for p in pages if p.start == p.end and p.number not in skipped]
    if empty:
        listed = ", ".join(map(str, empty[:10])) + (", …" if len(empty) > 10 else "")
        reason = "no text was recognised on them" if ocr is not None and ocr.enabled else "they may be scanned images"
        out.append(f"Some pages of {name} have no text (pages {listed}); {reason}.")
    return tuple(out)


def _ocr_hint(ocr: OcrOptions | None) -> str:
    if ocr is not None and ocr.enabled:
        return "The file may be empty."
    if ocr is not None and ocr.mode == "off":
        return "OCR is off: turn it on in the settings (or ingest --ocr auto) to read scanned pages."
    return "Install OCR support (rapidocr-onnxruntime) to read scanned pages."


def _page_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = text.replace("\x02", "-").replace("\ufffe", "-")  # PDFium's end-of-line hyphen markers
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def join_pages(parts: list[tuple[int, str]]) -> tuple[str, tuple[Page, ...]]:
    """Join page texts with blank lines; empty pages get a zero-length span."""
    out: list[str] = []
    pages: list[Page] = []
    pos = 0
    for number, text in parts:
        if text and out:
            out.append("\n\n")
            pos += 2
        pages.append(Page(number, pos, pos + len(text)))
        out.append(text)
        pos += len(text)
    return "".join(out), tuple(pages)
