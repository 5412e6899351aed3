"""Builders for real document files (PDF, DOCX) that tests write into tmp_path."""

from __future__ import annotations

import hashlib
import struct
import zipfile
from pathlib import Path

# ----------------------------------------------------------------------------------- PDF builder

_PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")


def _rc4(key: bytes, data: bytes) -> bytes:
    s = list(range(256))
    j = 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) % 256
        s[i], s[j] = s[j], s[i]
    out = bytearray()
    i = j = 0
    for byte in data:
        i = (i + 1) % 256
        j = (j + s[i]) % 256
        s[i], s[j] = s[j], s[i]
        out.append(byte ^ s[(s[i] + s[j]) % 256])
    return bytes(out)


def make_pdf(pages: list[list[str]], *, password: str | None = None,
             outline: list[tuple[str, int, list]] | None = None) -> bytes:
    """A valid PDF with one Helvetica text line per string; an empty list is a page with no text.

    With ``password``, the file is encrypted with the standard security handler (RC4, 40 bits, R2).
    ``outline`` adds bookmarks: (title, 1-based page, children) items, nested.
    """
    n = len(pages)
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids ["
        + b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(n))
        + b"] /Count %d >>" % n,
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    }
    streams: dict[int, bytes] = {}
    for i, lines in enumerate(pages):
        page_num, content_num = 4 + 2 * i, 5 + 2 * i
        objects[page_num] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % content_num
        )
        body = b"".join(
            b"("
            + line.encode("cp1252").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
            + b") Tj T* "
            for line in lines
        )
        streams[content_num] = b"BT /F1 12 Tf 14 TL 72 720 Td " + body + b"ET" if lines else b""
    trailer_extra = b""
    key = b""
    if password is not None:
        file_id = hashlib.md5(b"desktop-kb-test").digest()
        user = (password.encode("latin-1") + _PAD)[:32]
        owner = ((password + "-owner").encode("latin-1") + _PAD)[:32]
        o_entry = _rc4(hashlib.md5(owner).digest()[:5], user)
        perms = struct.pack("<i", -44)
        key = hashlib.md5(user + o_entry + perms + file_id).digest()[:5]
        u_entry = _rc4(key, _PAD)
        enc_num = 4 + 2 * n
        objects[enc_num] = (
            b"<< /Filter /Standard /V 1 /R 2 /O <"
            + o_entry.hex().encode()
            + b"> /U <"
            + u_entry.hex().encode()
            + b"> /P -44 >>"
        )
        trailer_extra = b" /Encrypt %d 0 R /ID [<%s> <%s>]" % (
            enc_num,
            file_id.hex().encode(),
            file_id.hex().encode(),
        )
    if outline:
        _add_outline(objects, outline, n, max([*objects, *streams]) + 1)
    for num, data in streams.items():
        if key:
            data = _rc4(hashlib.md5(key + num.to_bytes(3, "little") + b"\0\0").digest()[:10], data)
        objects[num] = b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for num in sorted(objects):
        offsets[num] = len(out)
        out += b"%d 0 obj\n" % num + objects[num] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for num in range(1, size):
        out += b"%010d 00000 n \n" % offsets[num]
    out += (
        b"trailer\n<< /Size %d /Root 1 0 R" % size + trailer_extra + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    )
    return bytes(out)

def _add_outline(objects: dict[int, bytes], outline: list[tuple[str, int, list]], n_pages: int, root: int) -> None:
    """Bookmark objects from object number ``root`` on; the catalog points at them."""
    next_num = [root + 1]

    def items(entries: list[tuple[str, int, list]], parent: int) -> tuple[int, int, int]:
        nums = list(range(next_num[0], next_num[0] + len(entries)))
        next_num[0] += len(entries)
        count = len(entries)
        for i, (title, page, kids) in enumerate(entries):
            extra = b""
            if kids:
                first, last, k = items(kids, nums[i])
                extra = b" /First %d 0 R /Last %d 0 R /Count %d" % (first, last, k)
                count += k
            links = (b" /Prev %d 0 R" % nums[i - 1] if i else b"") + \
                (b" /Next %d 0 R" % nums[i + 1] if i + 1 < len(nums) else b"")
            objects[nums[i]] = (b"<< /Title (" + title.encode("cp1252") + b") /Parent %d 0 R" % parent + links
                                + b" /Dest [%d 0 R /Fit]" % (4 + 2 * (min(page, n_pages) - 1)) + extra + b" >>")
        return nums[0], nums[-1], count

    first, last, count = items(outline, root)
    objects[root] = b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (first, last, count)
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R /Outlines %d 0 R >>" % root


def make_docx(path: Path, paragraphs: list[tuple[str, str]]) -> Path:
    """A minimal DOCX: (style, text) paragraphs; style "Heading1" or "" (normal)."""
    ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    body = "".join(
        "<w:p>"
        + (f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else "")
        + f"<w:r><w:t>{text}</w:t></w:r></w:p>"
        for style, text in paragraphs
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/'
            'word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.'
            'document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.'
            'openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>',
        )
        zf.writestr(
            "_rels/.rels",
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
            'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
        )
        zf.writestr(
            "word/_rels/document.xml.rels",
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
            'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>',
        )
        zf.writestr(
            "word/styles.xml",
            f'<?xml version="1.0" encoding="UTF-8"?><w:styles {ns}><w:style w:type="paragraph" '
            'w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>',
        )
        zf.writestr(
            "word/document.xml",
            f'<?xml version="1.0" encoding="UTF-8"?><w:document {ns}><w:body>{body}</w:body></w:document>',
        )
    return path




def make_scan(lines: list[str], *, size: tuple[int, int] = (1654, 1169), font_size: int = 36):
    """A PIL image of a clean scan (~200 DPI) with ``lines`` typeset in Pillow's own Latin font."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=font_size)
    for i, line in enumerate(lines):
        draw.text((140, 160 + i * 90), line, font=font, fill="black")
    return img


def hash_data_dir(path: Path) -> Path:
    """A data folder whose settings pick the deterministic hash embedder (CLI plumbing tests)."""
    import json

    path.mkdir(parents=True, exist_ok=True)
    (path / "settings.json").write_text(json.dumps(
        {"models": {"embedder": {"backend": "hash", "id": "test/hash-embedder", "dim": 64}}}))
    return path

