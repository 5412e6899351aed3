"""Images (photos and scans of documents) → Markdown by OCR, one page per image or TIFF frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import CorruptFile, NoExtractableText, UnsupportedFile
from ..types import ConvertedDocument, OcrPage
from .ocr import OcrOptions, PageCounter, page_text
from .pdf import join_pages

__all__ = ["IMAGE_EXTENSIONS", "convert_image"]

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp"})
MAX_PIXELS = 80_000_000  # larger images are refused (decompression bombs)


def convert_image(path: Path, ocr: OcrOptions | None) -> ConvertedDocument:
    name = path.name
    if ocr is None or not ocr.enabled:
        why = "OCR is off" if ocr is not None and ocr.mode == "off" else "OCR is not installed"
        raise UnsupportedFile(f"{name}: images are read by OCR, and {why}.",
                              "Turn OCR on in the settings (or ingest --ocr auto).")
    from PIL import Image, ImageSequence, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            if img.width * img.height > MAX_PIXELS:
                raise UnsupportedFile(f"{name} is too large an image ({img.width}×{img.height} pixels).",
                                      "Scan it at a lower resolution (300 DPI is plenty).")
            frames = getattr(img, "n_frames", 1)
            counter = PageCounter(ocr, frames)
            read: list[OcrPage] = []
            for number, frame in enumerate(ImageSequence.Iterator(img), start=1):
                if counter.full:
                    break
                read.append(counter.read(number, np.array(frame.convert("RGB"))))
    except (PermissionError, FileNotFoundError):
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError, SyntaxError, ValueError, OSError) as exc:
        raise CorruptFile(f"{name} is damaged or not a real image file.") from exc  # PIL: truncated data
    markdown, pages = join_pages([(p.number, page_text(p)) for p in read])
    if not markdown.strip():
        raise NoExtractableText(f"{name}: no text was recognised in the image.",
                                "The image may hold no text, or be too faint or small to read.")
    warnings: tuple[str, ...] = ()
    if len(read) < frames:
        warnings = (f"{name} was indexed partly: only the first {len(read)} of its {frames} pages were "
                    "read by OCR (see the OCR page limit in the settings).",)
    return ConvertedDocument(markdown, pages, path.stem, warnings, tuple(read))
