"""Turn one file into Markdown with page spans (stage 1 of ingestion).

* plain text (.md .txt .rst .log …): robust decoding (BOM → strict UTF-8 → charset-normalizer),
  binary content is refused;
* CSV/TSV: decoded the same way and rendered as a Markdown table here;
* PDF: pypdfium2 page by page, so every page gets an exact span in the Markdown; scanned pages
  are read by OCR (:mod:`.pdf`, :mod:`.ocr`);
* images (.png .jpg .tif …): OCR, one page per image or TIFF frame (:mod:`.images`);
* OpenDocument (.odt .ods .odp): odfpy (:mod:`.odf`);
* PPTX: markitdown, with its ``<!-- Slide number: N -->`` markers turned into page spans;
* everything else markitdown knows (DOCX, XLSX, XLS, HTML, EPUB, IPYNB, XML, MSG): markitdown.

Every failure is an :class:`~desktop_kb.errors.IngestError` whose message names the file.
"""

from __future__ import annotations

import csv
import io
import re
import threading
import unicodedata
import zipfile
from pathlib import Path
from typing import Any

from ..errors import (
    CorruptFile,
    DesktopKBError,
    IngestError,
    NoExtractableText,
    PasswordProtected,
    UnsupportedFile,
)
from ..types import ConvertedDocument, Page
from .images import IMAGE_EXTENSIONS, convert_image
from .ocr import OcrOptions
from .odf import ODF_EXTENSIONS, convert_odf
from .pdf import convert_pdf, join_pages
from .zipcheck import check_unpacked

__all__ = ["DEFAULT_MAX_BYTES", "SUPPORTED_EXTENSIONS", "convert", "decode_text", "unsupported_reason"]

DEFAULT_MAX_BYTES = 200 * 1024 * 1024

_TEXT_EXTS = frozenset({".md", ".markdown", ".txt", ".text", ".rst", ".log", ".json"})
_CSV_EXTS = frozenset({".csv", ".tsv"})
_MARKUP_EXTS = frozenset({".html", ".htm", ".xhtml", ".xml"})
_ZIP_EXTS = {".docx": "DOCX", ".pptx": "PPTX", ".xlsx": "XLSX", ".epub": "EPUB"}
# The part each zip-based format must contain (markitdown reads any other zip as an archive listing).
_ZIP_MAIN_PART = {
    ".docx": "word/document.xml",
    ".pptx": "ppt/presentation.xml",
    ".xlsx": "xl/workbook.xml",
    ".epub": "META-INF/container.xml",
}
_OLE_MAGIC = b"\xd0\xcf\x11\xe0"
_MARKITDOWN_EXTS = frozenset(
    {".docx", ".pptx", ".xlsx", ".xls", ".html", ".htm", ".xhtml", ".epub", ".ipynb", ".xml", ".msg"}
)
SUPPORTED_EXTENSIONS = frozenset(
    _TEXT_EXTS | _CSV_EXTS | _MARKITDOWN_EXTS | IMAGE_EXTENSIONS | ODF_EXTENSIONS | {".pdf"}
)
# Formats we do not read, with what the user can do about them.
_LEGACY = {".doc": ".docx", ".ppt": ".pptx", ".rtf": ".docx", ".wps": ".docx", ".pages": ".docx",
           ".key": ".pptx", ".numbers": ".xlsx", ".et": ".xlsx", ".dps": ".pptx"}
_ARCHIVES = frozenset({".zip", ".7z", ".rar", ".tar", ".gz", ".tgz", ".bz2", ".xz"})

_BOMS = (  # UTF-32 first: its LE BOM starts with the UTF-16 LE BOM
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
# Control bytes that never occur in text (tab, LF, VT, FF, CR and ESC are allowed).
_CONTROL_BYTES = bytes([*range(0x01, 0x09), *range(0x0E, 0x1B), 0x1C, 0x1D, 0x1E, 0x1F, 0x7F])
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
# Among near-equal charset-normalizer guesses, prefer the encodings our users most likely have.
_ENCODING_PREFERENCE = ("gb18030", "utf_8", "cp1252", "cp932", "shift_jis", "big5", "euc_jp", "cp949")
_GB2312_ONLY = re.compile(rb"(?:[\x00-\x7f]|[\xa1-\xf7][\xa1-\xfe])*")
_LATIN_PUNCT = frozenset("‘’‚“”„–—…•·«»‹›°§©®™€£¢¡¿±×÷")
_SLIDE_MARKER = re.compile(r"[ \t]*<!-- Slide number: (\d+) -->[ \t]*\n?")

_md_lock = threading.Lock()
_md_instance: Any = None


def unsupported_reason(path: Path | str) -> tuple[str, str]:
    """(message, hint) for a file whose type is not read."""
    name, ext = Path(path).name, Path(path).suffix.lower()
    if ext in _LEGACY:
        return (f"{name}: {ext} files are not read.",
                f"Open it in its application and save it as {_LEGACY[ext]}, then add it again.")
    if ext in _ARCHIVES:
        return f"{name}: archives are not opened.", "Extract it into a folder and add that folder."
    if ext in SUPPORTED_EXTENSIONS:
        return (f"{name}: {ext} files are turned off in the settings.",
                f"Add {ext} to the file types in the settings to read them.")
    kind = f"{ext} files" if ext else "Files without an extension"
    return f"{name}: {kind} are not supported.", UnsupportedFile.default_hint


def convert(
    path: Path, *, pdf_password: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
    ocr: OcrOptions | None = None,
) -> ConvertedDocument:
    """Convert ``path`` to Markdown; raise an :class:`IngestError` subclass when that is impossible.
    ``ocr`` reads scanned PDF pages and images (None: OCR is not available)."""
    path = Path(path)
    name = path.name
    ext = path.suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        raise UnsupportedFile(*unsupported_reason(path))
    try:
        size = path.stat().st_size
        if size > max_bytes:
            mb, limit = size / 2**20, max_bytes / 2**20
            raise UnsupportedFile(f"{name} is too large ({mb:.0f} MB; limit {limit:.0f} MB).")
        if size == 0:
            raise NoExtractableText(f"{name} is empty.")
        if ext in _ZIP_EXTS or ext in ODF_EXTENSIONS:
            check_unpacked(path)
        if ext in _MARKUP_EXTS:  # random bytes named .html: markitdown would index them as mojibake
            decode_text(path.read_bytes()[:1_000_000], name)
        if ext == ".pdf":
            doc = convert_pdf(path, pdf_password, ocr)
        elif ext in IMAGE_EXTENSIONS:
            doc = convert_image(path, ocr)
        elif ext in ODF_EXTENSIONS:
            doc = convert_odf(path)
        elif ext in _TEXT_EXTS:
            doc = ConvertedDocument(decode_text(path.read_bytes(), name), title=path.stem)
        elif ext in _CSV_EXTS:
            doc = ConvertedDocument(
                _csv_to_markdown(decode_text(path.read_bytes(), name), ext), title=path.stem
            )
        else:
            doc = _convert_markitdown(path, ext)
    except DesktopKBError:  # ours already say what went wrong (or that the user cancelled)
        raise
    except MemoryError:
        raise CorruptFile(
            f"Could not read {name}: not enough memory.", "Close other programs and retry."
        ) from None
    except OSError as exc:
        raise CorruptFile(
            f"Could not read {name}: {exc.strerror or exc}",
            "Check that the file exists and that you can open it.",
        ) from exc
    except Exception as exc:  # never let a library error escape
        raise CorruptFile(f"Could not read {name}: {_reason(exc)}") from exc
    if not doc.markdown.strip():
        raise NoExtractableText(f"{name} is empty.")
    return doc


# --------------------------------------------------------------------------------------- plain text


def decode_text(data: bytes, name: str = "The file") -> str:
    """Decode text of unknown encoding; raise UnsupportedFile for binary content."""
    if not data.strip():
        raise NoExtractableText(f"{name} is empty.")
    binary = UnsupportedFile(f"{name} is not a text file (binary content).")
    text = next(
        (data[len(b) :].decode(enc, errors="replace") for b, enc in _BOMS if data.startswith(b)), None
    )
    if text is None:
        text = _decode_without_bom(data)
    if text is None:
        raise binary
    head = text[:1_000_000]
    if "\x00" in head or len(_CONTROL_CHARS.findall(head)) > 0.05 * max(len(head), 1):
        raise binary
    return text


def _decode_without_bom(data: bytes) -> str | None:
    """NUL bytes → UTF-16 or binary; many control bytes → binary; then strict UTF-8; then a guess."""
    if b"\x00" in data:
        return _decode_utf16_without_bom(data)
    if len(data) - len(data.translate(None, _CONTROL_BYTES)) > 0.02 * len(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _decode_guess(data)


def _decode_utf16_without_bom(data: bytes) -> str | None:
    sample = data[:8192]
    half = max(len(sample) // 2, 1)
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if odd > 0.3 * half and even < 0.05 * half:
        encoding = "utf-16-le"
    elif even > 0.3 * half and odd < 0.05 * half:
        encoding = "utf-16-be"
    else:
        return None
    printable = range(0x20, 0x7F)
    if sum(a in printable and b in printable for a, b in zip(sample[0::2], sample[1::2], strict=False)) > half // 2:
        return None  # mostly two letters a unit: text with NULs between words, not UTF-16
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        return None


def _decode_guess(data: bytes) -> str | None:
    """Best decoding of non-UTF-8 bytes: charset-normalizer, corrected for short CJK and Latin texts."""
    import charset_normalizer

    results = [
        r for r in charset_normalizer.from_bytes(data) if not r.encoding.startswith(("utf_16", "utf_32"))
    ]
    chaos = {r.encoding: r.chaos for r in results}
    # Simplified Chinese is almost always within GB2312 (both bytes >= 0xA1); charset-normalizer often
    # calls short such texts Korean or Japanese. Take GB unless another guess is clearly less chaotic.
    gb = chaos.get("gb18030")
    if gb is not None and _GB2312_ONLY.fullmatch(data) and all(c >= gb - 0.01 for c in chaos.values()):
        return data.decode("gb18030", errors="replace")
    latin = _decode_latin(data)
    if latin is not None:
        return latin
    if not results:
        return None
    best = results[0]
    # Near-equal guesses (common for short texts): break the tie by our users' likely encodings.
    ties = [r for r in results if r.chaos <= best.chaos + 0.005 and r.coherence >= best.coherence - 0.02]

    def rank(r: Any) -> tuple[int, int]:
        pref = _ENCODING_PREFERENCE.index(r.encoding) if r.encoding in _ENCODING_PREFERENCE else 99
        return pref, results.index(r)

    return data.decode(min(ties, key=rank).encoding, errors="replace")


def _decode_latin(data: bytes) -> str | None:
    """cp1252 text when it reads as mostly-ASCII Western text (charset-normalizer misses short ones)."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    letters = foreign = punct = 0
    for ch in set(text) if len(text) > 1_000_000 else text:
        if ch.isascii():
            letters += ch.isalpha()
        elif ch in _LATIN_PUNCT:
            punct += 1
        elif ch.isalpha() and "LATIN" in unicodedata.name(ch, ""):
            letters += 1
            foreign += 1
        else:
            return None
    if foreign + punct == 0 or foreign > max(0.3 * letters, 2) or punct > max(foreign, 3) * 2:
        return None
    return text


def _csv_to_markdown(text: str, ext: str) -> str:
    sample = text[:20_000]
    delimiter = "\t" if ext == ".tsv" else ","
    if ext != ".tsv":
        try:
            delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
        except csv.Error:
            pass
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if any(c.strip() for c in row)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)

    def line(row: list[str]) -> str:
        cells = [" ".join(c.split()).replace("|", "\\|") for c in row] + [""] * (width - len(row))
        return "| " + " | ".join(cells) + " |"

    return "\n".join([line(rows[0]), "| " + " | ".join(["---"] * width) + " |", *map(line, rows[1:])])


# -------------------------------------------------------------------------------------- markitdown


def _markitdown() -> Any:
    global _md_instance
    with _md_lock:
        if _md_instance is None:
            from markitdown import MarkItDown

            _md_instance = MarkItDown(enable_plugins=False)
        return _md_instance


def _convert_markitdown(path: Path, ext: str) -> ConvertedDocument:
    name = path.name
    kind = _ZIP_EXTS.get(ext)
    if kind is not None:
        if _starts_with(path, _OLE_MAGIC) and ext != ".epub":  # encrypted Office files are OLE containers
            raise PasswordProtected(f"{name} is password-protected.", "Remove the password and add it again.")
        # Checked here: markitdown reads a broken zip as plain text (returning its garbage) and any
        # other zip as an archive listing.
        if not _zip_has(path, _ZIP_MAIN_PART[ext]):
            raise CorruptFile(f"{name} is damaged or not a real {kind} file.")
    elif ext == ".msg" and not _starts_with(path, _OLE_MAGIC):
        raise CorruptFile(f"{name} is damaged or not a real Outlook message.")
    from markitdown import FileConversionException, MissingDependencyException, UnsupportedFormatException

    try:
        result = _markitdown().convert_local(str(path))
    except UnsupportedFormatException:
        raise UnsupportedFile(f"{name}: this kind of file is not supported.") from None
    except MissingDependencyException as exc:
        raise UnsupportedFile(
            f"{name} cannot be read: a needed component is missing ({_reason(exc)})."
        ) from None
    except FileConversionException as exc:
        raise _map_conversion_error(name, ext, exc) from exc
    markdown = result.markdown or ""
    title = (result.title or "").strip() if ext in (".html", ".htm", ".xhtml", ".epub") else ""
    if ext == ".pptx":
        markdown, pages = _slides_to_pages(markdown)
        return ConvertedDocument(markdown, pages, path.stem)
    if ext in (".xlsx", ".xls"):
        markdown = _tidy_sheet_tables(markdown)
    return ConvertedDocument(markdown.strip("\n"), (), title or path.stem)


def _starts_with(path: Path, magic: bytes) -> bool:
    with path.open("rb") as fh:
        return fh.read(len(magic)) == magic


def _zip_has(path: Path, member: str) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            return member in zf.namelist()
    except (zipfile.BadZipFile, ValueError, EOFError):
        return False


_PANDAS_BLANK = re.compile(r"(?<=\|) (?:NaN|Unnamed: \d+) (?=\|)")
_EMPTY_ROW = re.compile(r"^\|(?:[ \t]*\|)+[ \t]*(?:\n|$)", re.MULTILINE)


def _tidy_sheet_tables(markdown: str) -> str:
    """Blank pandas' ``NaN`` / ``Unnamed: N`` cells and drop rows left with no value."""
    markdown = _PANDAS_BLANK.sub("  ", markdown)
    markdown = _PANDAS_BLANK.sub("  ", markdown)  # adjacent cells share a pipe: second pass
    return _EMPTY_ROW.sub("", markdown)


def _map_conversion_error(name: str, ext: str, exc: Exception) -> IngestError:
    from markitdown import MissingDependencyException

    details = [str(exc)]
    for attempt in getattr(exc, "attempts", None) or []:
        info = getattr(attempt, "exc_info", None)
        if info and info[1] is not None:
            if isinstance(info[1], MissingDependencyException):
                return UnsupportedFile(
                    f"{name} cannot be read: a component needed for {ext} files is not installed.",
                    "Reinstall desktop_kb with all of its file-format extras.",
                )
            details.append(f"{type(info[1]).__name__}: {info[1]}")
    blob = " ".join(details).lower()
    if "password" in blob or "encrypt" in blob:
        return PasswordProtected(f"{name} is password-protected.")
    if any(k in blob for k in ("badzipfile", "not a zip file", "package not found", "zipfile")):
        kind = _ZIP_EXTS.get(ext, ext.lstrip(".").upper())
        return CorruptFile(f"{name} is damaged or not a real {kind} file.")
    reason = details[-1] if len(details) > 1 else details[0]
    return CorruptFile(f"Could not read {name}: {_shorten(reason)}")


def _slides_to_pages(markdown: str) -> tuple[str, tuple[Page, ...]]:
    """Drop markitdown's slide markers and give each slide a page span."""
    pieces = _SLIDE_MARKER.split(markdown)
    preamble = pieces[0].strip("\n")
    parts = [(int(pieces[i]), pieces[i + 1].strip("\n")) for i in range(1, len(pieces) - 1, 2)]
    if not parts:
        return preamble, ()
    if preamble:  # text before the first marker (not seen in practice) goes to the first slide
        parts[0] = (parts[0][0], (preamble + "\n\n" + parts[0][1]).strip("\n"))
    return join_pages(parts)


def _reason(exc: BaseException) -> str:
    return _shorten(str(exc) or type(exc).__name__)


def _shorten(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
