"""Fonts: make Chinese UI text and documents render (no tofu boxes).

Font files shipped in ``resources/fonts/`` (``*.ttf``, ``*.otf``, ``*.ttc``) are registered with
Qt; then the application font gets a family list whose fallbacks cover Han script, so every
widget (labels, the answer view, the document viewer) can draw CJK characters. On Linux a system
CJK font (Debian ``fonts-noto-cjk`` or ``fonts-wqy-microhei``) works as well.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtGui import QFont, QFontDatabase, QFontInfo
from PySide6.QtWidgets import QApplication

__all__ = ["cjk_families", "font_dirs", "install_fonts"]

log = logging.getLogger(__name__)

# Preferred CJK families, best first (whichever are installed are used as fallbacks).
_PREFERRED = (
    "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei",
    "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB", "SimHei", "Droid Sans Fallback",
)


def font_dirs() -> list[Path]:
    """Where shipped font files are looked for: the repository's and the package's resources."""
    here = Path(__file__).resolve()
    return [here.parents[2] / "resources" / "fonts", here.parents[1] / "resources" / "fonts"]


def _load_shipped() -> list[str]:
    families: list[str] = []
    for folder in font_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() not in (".ttf", ".otf", ".ttc"):
                continue
            font_id = QFontDatabase.addApplicationFont(str(path))
            if font_id < 0:
                log.warning("could not load font %s", path)
                continue
            families.extend(QFontDatabase.applicationFontFamilies(font_id))
    return families


def cjk_families() -> list[str]:
    """Installed (or shipped) families that can draw Simplified Chinese, preferred ones first."""
    available = QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
    preferred = [f for f in _PREFERRED if f in available]
    return preferred + [f for f in available if f not in preferred]


def install_fonts(app: QApplication) -> list[str]:
    """Register shipped fonts and give the application font CJK fallbacks. Returns them."""
    shipped = _load_shipped()
    cjk = [f for f in shipped if f in QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)]
    cjk += [f for f in cjk_families() if f not in cjk]
    font = QFont(app.font())
    # the concrete default family first ("Sans Serif" is only an alias; listed as is, Qt would
    # take the first real family — the CJK one — for Latin text too)
    base = [QFontInfo(font).family()]
    # a system without fonts (a bare install): the shipped Latin font draws what the default cannot
    latin = [f for f in shipped if f not in cjk][:1]
    font.setFamilies(base + [f for f in latin + cjk[:2] if f not in base])
    app.setFont(font)
    if not cjk:
        log.warning("No Chinese font found: install fonts-noto-cjk or fonts-wqy-microhei, "
                    "or put a .ttf/.otf file in resources/fonts/.")
    return cjk
