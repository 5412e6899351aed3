"""Draw the desktop-kb app icon with Pillow: resources/icons/desktop-kb.{png,ico,icns} (+ a matching
desktop-kb.svg, which the GUI uses as its window icon). Idempotent; existing files are kept unless
``--force`` is given.

    python packaging/make_icons.py [--force]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ICONS = ROOT / "resources" / "icons"

SVG = """<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">
  <rect x="8" y="8" width="240" height="240" rx="48" fill="#1f5fbf"/>
  <path d="M64 40 H152 L192 80 V216 H64 Z" fill="#ffffff"/>
  <path d="M152 40 V80 H192 Z" fill="#c9d8f2"/>
  <rect x="84" y="100" width="88" height="10" rx="5" fill="#9bb3dd"/>
  <rect x="84" y="124" width="88" height="10" rx="5" fill="#9bb3dd"/>
  <rect x="84" y="148" width="56" height="10" rx="5" fill="#9bb3dd"/>
  <circle cx="178" cy="182" r="40" fill="#f29d1f" stroke="#ffffff" stroke-width="8"/>
  <text x="178" y="199" font-family="DejaVu Sans, Arial, sans-serif" font-size="48" font-weight="bold"
        text-anchor="middle" fill="#ffffff">?</text>
</svg>
"""


def draw(size: int = 1024):  # type: ignore[no-untyped-def]
    from PIL import Image, ImageDraw, ImageFont

    s = size / 256.0
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)

    def box(x0: float, y0: float, x1: float, y1: float) -> tuple[int, int, int, int]:
        return (round(x0 * s), round(y0 * s), round(x1 * s), round(y1 * s))

    d.rounded_rectangle(box(8, 8, 248, 248), radius=round(48 * s), fill="#1f5fbf")
    d.polygon([(64 * s, 40 * s), (152 * s, 40 * s), (192 * s, 80 * s), (192 * s, 216 * s), (64 * s, 216 * s)],
              fill="#ffffff")
    d.polygon([(152 * s, 40 * s), (152 * s, 80 * s), (192 * s, 80 * s)], fill="#c9d8f2")
    for y, w in ((100, 88), (124, 88), (148, 56)):
        d.rounded_rectangle(box(84, y, 84 + w, y + 10), radius=round(5 * s), fill="#9bb3dd")
    d.ellipse(box(134, 138, 222, 226), fill="#ffffff")
    d.ellipse(box(142, 146, 214, 218), fill="#f29d1f")
    font = None
    for name in ("DejaVuSans-Bold.ttf", "Arial Bold.ttf", "arialbd.ttf"):
        try:
            font = ImageFont.truetype(name, round(48 * s))
            break
        except OSError:
            continue
    if font is None:
        font = ImageFont.load_default(size=round(48 * s))
    d.text((178 * s, 182 * s), "?", fill="#ffffff", font=font, anchor="mm")
    return img


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--force", action="store_true", help="overwrite existing icon files")
    args = p.parse_args(argv)
    ICONS.mkdir(parents=True, exist_ok=True)
    big = draw(1024)
    targets = {
        "desktop-kb.png": lambda path: big.resize((256, 256), resample=1).save(path),
        "desktop-kb-512.png": lambda path: big.resize((512, 512), resample=1).save(path),
        "desktop-kb.ico": lambda path: big.save(path, sizes=[(16, 16), (24, 24), (32, 32), (48, 48), (64, 64),
                                                            (128, 128), (256, 256)]),
        "desktop-kb.icns": lambda path: big.save(path),
        "desktop-kb.svg": lambda path: path.write_text(SVG, encoding="utf-8"),
    }
    for name, write in targets.items():
        path = ICONS / name
        if path.exists() and not args.force:
            continue
        write(path)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
