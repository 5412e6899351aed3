"""Zip-based documents (DOCX, PPTX, XLSX, EPUB, OpenDocument) measured by what they unpack to,
before a converter reads them: a few hundred KB can hold gigabytes of text (a "zip bomb"), which
the file-size limit does not see."""

from __future__ import annotations

import zipfile
from pathlib import Path

from ..errors import UnsupportedFile

__all__ = ["MAX_UNPACKED_TEXT", "check_unpacked"]

MAX_UNPACKED_TEXT = 100 * 1024 * 1024  # the markup a converter reads whole (images are not counted)
_MARKUP = (".xml", ".rels", ".html", ".xhtml", ".htm", ".txt", ".json", ".opf", ".ncx", ".css")


def check_unpacked(path: Path, limit: int | None = None) -> None:
    """UnsupportedFile when the file's markup parts unpack to more than ``limit`` bytes (default
    ``MAX_UNPACKED_TEXT``; by the sizes its directory declares; a damaged zip is left to the
    converter to report)."""
    limit = MAX_UNPACKED_TEXT if limit is None else limit
    try:
        with zipfile.ZipFile(path) as zf:
            size = sum(i.file_size for i in zf.infolist() if i.filename.lower().endswith(_MARKUP))
    except (zipfile.BadZipFile, ValueError, EOFError, OSError):
        return
    if size > limit:
        raise UnsupportedFile(f"{path.name} unpacks to {size / 2**20:.0f} MB of text (limit {limit / 2**20:.0f} MB).",
                              "Split the document, or save it again from its application (a damaged or "
                              "deliberately inflated file can look like this).")
