"""OCR speed and accuracy: seconds per page and character error rate on pages made here.

    .venv/bin/python benchmarks/bench_ocr.py            # 3 English + 3 Chinese A4 pages at 200 DPI
    .venv/bin/python benchmarks/bench_ocr.py --pages 5 --json
    .venv/bin/python benchmarks/bench_ocr.py --file /work/shared/eval/files/markitdown/MEDRPT-2024-PAT-3847_medical_report_scan.pdf

Each page is a full A4 page of text (30 lines of SciFact / CMRC sentences from ../shared/eval,
else a built-in paragraph), rendered with Pillow's Latin font or a CJK font, saved as an image-only
PDF and read back through the real conversion (render at ``ingest.ocr_dpi``, OCR, layout). The
model load is timed separately. A turned page (90°) is timed too: it costs a second pass.
Progress goes to stderr; ``--json`` prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EVAL = Path(os.environ.get("DKB_EVAL_DATA", ROOT.parent / "shared" / "eval"))
FALLBACK_EN = ("Receipts must be submitted within thirty days of purchase, and travel costs are paid "
               "back at the end of each month after the finance office has checked them. ") * 40
FALLBACK_ZH = "发票必须在购买后三十天内提交，差旅费用在财务部门核对后于每月月底报销。" * 40
CJK_FONTS = [*sorted((ROOT / "resources" / "fonts").glob("*.tt[cf]")),
             Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
             Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")]


def _corpus_text(lang: str) -> str:
    path = EVAL / "retrieval" / ("scifact" if lang == "en" else "cmrc2018_dev") / "corpus.jsonl"
    if not path.exists():
        return FALLBACK_EN if lang == "en" else FALLBACK_ZH
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            out.append(json.loads(line)["text"])
            if sum(map(len, out)) > 40_000:
                break
    return " ".join(out)


def _wrap(text: str, font: Any, width: int, by_words: bool) -> list[str]:
    lines, current = [], ""
    units = text.split(" ") if by_words else list(text)
    sep = " " if by_words else ""
    for unit in units:
        trial = (current + sep + unit) if current else unit
        if font.getlength(trial) > width and current:
            lines.append(current)
            current = unit
        else:
            current = trial
    return lines + ([current] if current else [])


def make_pages(lang: str, n: int) -> list[tuple[Any, str]]:
    from PIL import Image, ImageDraw, ImageFont

    if lang == "en":
        font = ImageFont.load_default(size=30)
    else:
        path = next((f for f in CJK_FONTS if f.exists()), None)
        if path is None:
            return []
        font = ImageFont.truetype(str(path), 32)
    lines = _wrap(_corpus_text(lang), font, 1654 - 280, by_words=lang == "en")
    pages = []
    for i in range(n):
        chunk = lines[i * 30 : (i + 1) * 30]
        img = Image.new("RGB", (1654, 2339), "white")
        draw = ImageDraw.Draw(img)
        for j, line in enumerate(chunk):
            draw.text((140, 150 + j * 66), line, font=font, fill="black")
        pages.append((img, "\n".join(chunk)))
    return pages


def cer(got: str, want: str) -> float:
    from desktop_kb.eval.metrics import char_error_rate

    return char_error_rate(got, want, ignore_spaces=True)  # spacing aside: characters recognised


def _pdf(images: list[Any]) -> bytes:
    buf = io.BytesIO()
    images[0].save(buf, format="PDF", resolution=200.0, save_all=True, append_images=images[1:])
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--pages", type=int, default=3, help="pages per language")
    ap.add_argument("--file", help="also time this scanned PDF or image")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from desktop_kb.backends.ocr_rapid import RapidOcrEngine
    from desktop_kb.ingest.convert import convert
    from desktop_kb.ingest.ocr import OcrOptions

    engine = RapidOcrEngine(threads=args.threads)
    started = time.perf_counter()
    engine._get()
    result: dict[str, Any] = {"threads": args.threads, "cpus": os.cpu_count(),
                              "load_s": round(time.perf_counter() - started, 2),
                              "loadavg": [round(x, 2) for x in os.getloadavg()], "sets": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for lang in ("en", "zh"):
            pages = make_pages(lang, args.pages)
            if not pages:
                print(f"{lang}: no CJK font, skipped", file=sys.stderr)
                continue
            path = Path(tmp) / f"{lang}.pdf"
            path.write_bytes(_pdf([img for img, _ in pages]))
            t = time.perf_counter()
            doc = convert(path, ocr=OcrOptions(engine))
            seconds = time.perf_counter() - t
            rates = [cer(doc.markdown[p.start:p.end], want) for p, (_, want) in zip(doc.pages, pages, strict=True)]
            turned = Path(tmp) / f"{lang}-turned.png"
            pages[0][0].rotate(90, expand=True).save(turned)
            t = time.perf_counter()
            convert(turned, ocr=OcrOptions(engine))
            result["sets"][lang] = {"pages": len(pages), "s_per_page": round(seconds / len(pages), 2),
                                    "cer": round(sum(rates) / len(rates), 4),
                                    "turned_page_s": round(time.perf_counter() - t, 2)}
            print(f"{lang}: {result['sets'][lang]}", file=sys.stderr)
        if args.file:
            t = time.perf_counter()
            doc = convert(Path(args.file), ocr=OcrOptions(engine))
            n = max(len(doc.ocr), 1)
            result["file"] = {"path": args.file, "pages": len(doc.ocr),
                              "s_per_page": round((time.perf_counter() - t) / n, 2)}
    if args.json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
    else:
        print(f"model load {result['load_s']} s; load average {result['loadavg']}")
        for lang, r in result["sets"].items():
            print(f"  {lang}: {r['s_per_page']} s/page, CER {r['cer']:.1%} over {r['pages']} pages; "
                  f"a turned page {r['turned_page_s']} s")
        if "file" in result:
            print(f"  {result['file']['path']}: {result['file']['s_per_page']} s/page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
