"""The pixels a browser decodes for the pictures of a cell's cleaned HTML (PageBudget's IMAGE_PIXELS), counted once
for each time the decoder goes over them: each frame of an animated GIF or PNG, and each ORDINARY_SCANS scans of a
JPEG (libjpeg decodes every scan of a progressive JPEG over the whole picture, and takes a scan repeated out of order
with a warning: 3,000 of a 4 Mpx one, 75 KB, held Chromium 12.4 s). So the budget bounds a picture's work, not only
its memory.

Read as the browser reads them, not as the sanitiser's allowlist spells them: each `<img>`'s `src` as an HTML parser
gives it (character references decoded), then as the URL parser and the fetch standard's data: URL processor read it
(C0 controls and spaces around it stripped, tabs and newlines inside dropped, the fragment cut off, the body
percent-decoded, then forgiving base64), and the picture's size from its own header, walked as the decoder walks it.
So no spelling of a URL the browser loads escapes the count, and a picture that cannot be read so counts as None:
the cell is shown as its text.
"""
from __future__ import annotations

import binascii
import re
import struct
from html.parser import HTMLParser
from urllib.parse import unquote_to_bytes

# The types the sanitiser keeps (SanitizeMarkdown.image_types), by the name picture_pixels reads them by.
_KINDS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif"}
# JPEG's start-of-frame markers (not DHT C4, JPG C8, DAC CC), which carry the picture's height and width.
_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
# Markers libjpeg reads as a length and that many bytes before the frame (DHT, DAC, DQT, DRI, DNL, APPn, COM).
_JPEG_SEGMENTS = {0xC4, 0xCC, 0xDB, 0xDD, 0xDC, *range(0xE0, 0xF0), 0xFE}
_JPEG_STANDALONE = {0x01, *range(0xD0, 0xD8)}  # TEM and RSTn: no length
_BASE64 = re.compile(r"[A-Za-z0-9+/]*")
# The scans a JPEG may have for the price of one pass over its pixels: libjpeg's own progressive script
# (jpeg_simple_progression) writes 10 for a colour picture, 6 for a grey one; a baseline JPEG has 1 to 4.
ORDINARY_SCANS = 10


def picture_pixels(kind: str, data: bytes) -> int | None:
    """Width x height of a PNG, JPEG or GIF as a browser decodes it (a GIF's canvas grown to its largest frame,
    as Chromium grows it; a JPEG's frame found as libjpeg finds it), times the passes its decoder makes over them
    (an animation's frames, a JPEG's scans by ORDINARY_SCANS); None when unreadable."""
    try:
        if kind == "png" and data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return width * height * _png_frames(data)
        if kind == "gif" and data[:4] == b"GIF8":
            return _gif_pixels(data)
        if kind == "jpeg" and data[:2] == b"\xff\xd8":
            return _jpeg_pixels(data)
    except (IndexError, ValueError, struct.error):  # cut short (ValueError: no next marker)
        return None
    return None


def _gif_pixels(data: bytes) -> int | None:
    """The canvas of a GIF: its logical screen, grown to hold every frame (image descriptor) it has."""
    width, height, packed = struct.unpack("<HHB", data[6:11])
    at = 13 + (3 << ((packed & 7) + 1) if packed & 0x80 else 0)
    frames = 0
    while data[at] != 0x3B:  # the trailer
        if data[at] == 0x2C:  # a frame: left, top, width, height, then its colours and its data's sub-blocks
            frames += 1
            left, top, frame_width, frame_height, packed = struct.unpack("<HHHHB", data[at + 1:at + 10])
            width, height = max(width, left + frame_width), max(height, top + frame_height)
            at += 10 + (3 << ((packed & 7) + 1) if packed & 0x80 else 0) + 1
        elif data[at] == 0x21:  # an extension: its label, then sub-blocks
            at += 2
        else:
            return None
        while data[at]:  # sub-blocks, each its size then that many bytes, to a size of 0
            at += 1 + data[at]
        at += 1
    return width * height * max(1, frames)


def _png_frames(data: bytes) -> int:
    """The frames of an animated PNG (its acTL chunk's count, which must come before the first IDAT), else 1."""
    at = 8
    while at + 8 <= len(data):
        length, name = struct.unpack(">I4s", data[at:at + 8])
        if name == b"IDAT":
            break
        if name == b"acTL":
            return max(1, struct.unpack(">I", data[at + 8:at + 12])[0])
        at += 12 + length  # length, name, data, CRC
    return 1


def _jpeg_pixels(data: bytes) -> int | None:
    """A JPEG's frame (its first start-of-frame segment), the markers walked as libjpeg's read_markers walks them
    (jdmarker.c): next_marker skips any bytes to the next FF, then FF fill bytes, and takes a byte of 00 (a stuffed
    zero) for more data to skip, not a marker. Where libjpeg would stop with an error (a second SOI, SOS or EOI
    before a frame, a marker it does not know, a length shorter than itself), None."""
    at = 2
    while True:
        at = data.index(b"\xff", at) + 1
        while data[at] == 0xFF:
            at += 1
        marker = data[at]
        at += 1
        if marker == 0x00 or marker in _JPEG_STANDALONE:
            continue
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[at + 3:at + 7])
            # Every SOS marker after the frame, over-approximated: a scan's own data stuffs each FF with 00.
            scans = data.count(b"\xff\xda", at)
            return width * height * max(scans, ORDINARY_SCANS) // ORDINARY_SCANS
        if marker not in _JPEG_SEGMENTS:
            return None
        length = struct.unpack(">H", data[at:at + 2])[0]
        if length < 2:
            return None
        at += length


def data_url(src: str) -> tuple[str, bytes] | None:
    """The MIME type (lower case, without parameters) and bytes of an `src` a browser loads as a data: URL (WHATWG
    URL and fetch's data: URL processor); None for any other URL or one that processor fails on."""
    url = re.sub(r"[\t\n\r]", "", src.strip("".join(map(chr, range(0x21)))))
    if url[:5].lower() != "data:" or "," not in url:
        return None
    header, body = url[5:].split("#", 1)[0].split(",", 1)
    header = header.strip("\t\n\f\r ")
    data = unquote_to_bytes(body)
    encoded = re.search(r";[ ]*base64$", header, re.IGNORECASE)
    if encoded:
        header = header[:encoded.start()]
        decoded = _forgiving_base64(data.decode("latin-1"))
        if decoded is None:
            return None
        data = decoded
    return header.split(";", 1)[0].strip("\t\n\f\r ").lower(), data


def _forgiving_base64(text: str) -> bytes | None:
    """The fetch standard's forgiving-base64 decode: ASCII whitespace dropped, up to two `=` at the end when the
    length is a multiple of four; None on any other character or a length that leaves one odd character."""
    text = re.sub(r"[\t\n\f\r ]", "", text)
    if len(text) % 4 == 0 and text.endswith("="):
        text = text[:-2] if text.endswith("==") else text[:-1]
    if len(text) % 4 == 1 or not _BASE64.fullmatch(text):
        return None
    try:
        return binascii.a2b_base64(text + "=" * (-len(text) % 4))
    except binascii.Error:
        return None


class _Sources(HTMLParser):
    """Every `src` of an `<img>`, as an HTML parser reads it (character references decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.sources += [value or "" for name, value in attrs if name == "src"]


def pictures_pixels(cleaned: str, floor: int = 0) -> int | None:
    """The pixels of every picture in a cell's cleaned HTML, each counted where it is shown and as at least `floor`;
    None when one's size cannot be read (a picture not of a data: URL of PNG, JPEG or GIF among them)."""
    reader = _Sources()
    reader.feed(cleaned)
    reader.close()
    total = 0
    for src in reader.sources:
        picture = data_url(src)
        pixels = picture_pixels(_KINDS[picture[0]], picture[1]) if picture and picture[0] in _KINDS else None
        if pixels is None:
            return None
        total += max(pixels, floor)
    return total
