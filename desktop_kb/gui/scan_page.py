"""The page view of a scanned page or photo: the image the right way up, with the cited passage's
recognised lines marked (their boxes come from OCR, in fractions of the upright page)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QImageReader, QPainter, QTransform

from ..ingest.images import IMAGE_EXTENSIONS
from ..ingest.ocr import lines_in
from ..types import Citation, OcrPage

__all__ = ["best_scan_page", "is_image", "load_scan", "paint_scan", "scan_boxes"]


def scan_boxes(pages: Sequence[OcrPage], citation: Citation, page: int, passage: QColor, evidence: QColor,
               ) -> list[tuple[tuple[float, float, float, float], QColor]]:
    """Boxes of the lines on ``page`` (1-based) inside the cited passage; lines inside an evidence
    span get the stronger colour."""
    out = []
    for number, _rotation, line in lines_in(pages, citation.start, citation.end):
        if number != page:
            continue
        strong = any(line.start < e and line.end > s for s, e in citation.evidence)
        out.append(((line.x, line.y, line.w, line.h), evidence if strong else passage))
    return out


def best_scan_page(pages: Sequence[OcrPage], citation: Citation) -> int | None:
    """The scanned page (1-based) holding the evidence lines, else most of the passage's lines."""
    lines = lines_in(pages, citation.start, citation.end)
    strong = [n for n, _, ln in lines if any(ln.start < e and ln.end > s for s, e in citation.evidence)]
    numbers = strong or [n for n, _, _ in lines]
    return max(set(numbers), key=numbers.count) if numbers else None


def load_scan(path: str, page: int) -> QImage | None:
    """Page ``page`` (1-based) of an image file (a TIFF frame)."""
    reader = QImageReader(path)
    reader.setAutoTransform(True)
    if page > 1 and not reader.jumpToImage(page - 1):
        return None
    image = reader.read()
    if image.isNull():
        return None
    return image


def paint_scan(image: QImage, rotation: int, boxes: Sequence[tuple[tuple[float, float, float, float], QColor]],
               width: int) -> QImage:
    """``image`` turned ``rotation`` degrees counter-clockwise (as OCR read it), ``width`` pixels
    wide (never enlarged), boxes marked."""
    upright = image.transformed(QTransform().rotate(-rotation)) if rotation % 360 else image
    if upright.width() > width:
        upright = upright.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
    out = QImage(upright.size(), QImage.Format.Format_ARGB32)
    out.fill(QColor("white"))
    painter = QPainter(out)
    painter.drawImage(0, 0, upright)
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
    w, h = upright.width(), upright.height()
    for (x, y, bw, bh), colour in boxes:
        painter.fillRect(QRectF(x * w - 2, y * h - 2, bw * w + 4, bh * h + 4), colour)
    painter.end()
    return out


def is_image(path: str) -> bool:
    return Path(path).suffix.lower() in IMAGE_EXTENSIONS

