"""What the student's text may make the pages typeset and highlight, for the whole notebook (SanitizeMarkdown).

Maths: MathJax typesets every expression on both pages, in the instructor's (and the student's) browser, and its
own limits (maxMacros, maxBuffer) hold each expression, not the page. A macro the student defines multiplies: three
levels of `\\def` made each 5-byte `$\\c$` typeset 1,000 glyphs, and 300 of them held Chromium 43 s. Even plain
`$xx$` costs about 1.5 ms an expression. So a cell of the student's that defines a macro, or whose maths would take
the notebook past `maths_marks` delimiters, is shown as its text (in a code block, which MathJax leaves alone).

Pictures: a browser decodes a picture to four bytes a pixel whatever its file's size, and a PNG's header may name
100,000 x 100,000 pixels over a few hundred bytes of compressed zeros (40 GB decoded). So the student's pictures
share IMAGE_PIXELS a notebook, read from each picture's own header; a cell past it, or with a picture whose size
cannot be read, is shown as its text.

Highlighting: a fenced block the pages highlight costs the grading page about 40 µs a byte on every view (each token a
span), markdown about 13: so the notebook's fenced blocks share one HIGHLIGHT_CHARS, not one a cell (8 own cells of
16 KB cost 5.2 s a view through the markdown budget); the blocks past it are shown plain.
"""
from __future__ import annotations

import base64
import binascii
import html
import re
import struct

# A code cell's source is highlighted up to HIGHLIGHT_CHARS (templates/readable/code_cell.j2); the student's fenced
# blocks in markdown all together get as much.
HIGHLIGHT_CHARS = 16384
# About 500 expressions (each `$...$` is two marks): under a second of typesetting; an honest notebook's answers hold
# a few dozen (the release's own maths is not counted).
MATHS_MARKS = 1000
# MathJax lays a display expression out in time that grows about with the square of its size (one of 16 KB in each
# of three answers: 52 to 68 s; 8 KB: 15 to 17 s): a cell's maths, from its first mark or closing delimiter to its
# last (to the cell's end when it has one alone), may span MATHS_SPAN characters, and the notebook's cells MATHS_CHARS
# together (at worst about 10 s of typesetting). Whole cells: a `$$` block keeps blank lines in one paragraph.
MATHS_SPAN = 8192
MATHS_CHARS = 16384
_SPAN_MARK = re.compile(r"\$\$|\$|\\[()\[\]]|\\(?:begin|end)\{")

# What makes MathJax 2 (TeX-AMS-MML_HTMLorMML-full, its newcommand, AMSmath and begingroup extensions, `\require`)
# define a control sequence or environment for the rest of the page; `\let\a\b` too, which a definition can then
# build on. A TeX control sequence is a backslash and letters, so `\left` is not `\let`.
DEFINITION = re.compile(r"\\(?:[gex]?def|(?:re)?newcommand|providecommand|(?:re)?newenvironment|let|global"
                        r"|DeclareMathOperator|require)(?![A-Za-z])")
# Where tex2jax starts or ends an expression (inline and display, with processEscapes and processEnvironments).
MARK = re.compile(r"\$\$|\$|\\\(|\\\[|\\begin\{")
_TAG = re.compile(r"<[^>]*>")
# About 200 MB decoded: a phone's photo is 12 to 48 megapixels, a plot a fraction of one.
IMAGE_PIXELS = 50_000_000
# A picture the sanitiser kept: an inline data: URL of PNG, JPEG or GIF (nh3 quotes every attribute with ").
_PICTURE = re.compile(r'<img\b[^>]*?\bsrc="data:image/(png|jpeg|gif);base64,([A-Za-z0-9+/=\s]*)"', re.IGNORECASE)
# JPEG's start-of-frame markers (not DHT C4, JPG C8, DAC CC), which carry the picture's height and width.
_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def typeset_text(cleaned: str) -> str:
    """The text a page shows of a cell's cleaned HTML, its character references decoded: where MathJax finds maths.
    Tags are taken out whole (over-approximated: code blocks, which MathJax skips, count too)."""
    return html.unescape(_TAG.sub("", cleaned))


def picture_pixels(kind: str, data: bytes) -> int | None:
    """Width x height of a PNG, JPEG or GIF as a browser decodes it (a GIF's canvas grown to its largest frame,
    as Chromium grows it; a JPEG's frame past fill bytes and standalone markers, as libjpeg reads it); None when
    unreadable."""
    try:
        if kind == "png" and data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return width * height
        if kind == "gif" and data[:4] == b"GIF8":
            return _gif_pixels(data)
        if kind == "jpeg" and data[:2] == b"\xff\xd8":
            return _jpeg_pixels(data)
    except (IndexError, struct.error):
        return None
    return None


def _gif_pixels(data: bytes) -> int | None:
    """The canvas of a GIF: its logical screen, grown to hold every frame (image descriptor) it has."""
    width, height, packed = struct.unpack("<HHB", data[6:11])
    at = 13 + (3 << ((packed & 7) + 1) if packed & 0x80 else 0)
    while data[at] != 0x3B:  # the trailer
        if data[at] == 0x2C:  # a frame: left, top, width, height, then its colours and its data's sub-blocks
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
    return width * height


_JPEG_STANDALONE = {0x01, *range(0xD0, 0xD9)}  # markers without a length (TEM, RSTn, SOI)


def _jpeg_pixels(data: bytes) -> int | None:
    """A JPEG's frame (its first start-of-frame segment), walked as libjpeg walks the markers."""
    at = 2
    while data[at] == 0xFF:
        while data[at + 1] == 0xFF:  # fill bytes before a marker
            at += 1
        marker = data[at + 1]
        if marker in _JPEG_STANDALONE:
            at += 2
            continue
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width * height
        at += 2 + struct.unpack(">H", data[at + 2:at + 4])[0]
    return None


def pictures_pixels(cleaned: str) -> int | None:
    """The pixels of every picture in a cell's cleaned HTML, each counted where it is shown; None when one's size
    cannot be read."""
    total = 0
    for kind, text in _PICTURE.findall(cleaned):
        try:
            pixels = picture_pixels(kind.lower(), base64.b64decode("".join(text.split())))
        except (binascii.Error, ValueError):
            pixels = None
        if pixels is None:
            return None
        total += pixels
    return total


def _maths_span(text: str) -> int:
    """The characters of `text` from its first delimiter of maths (an opening or a closing one) to its last, or to
    its end when it has one alone: at least the maths MathJax may find there."""
    marks = list(_SPAN_MARK.finditer(text))
    if not marks:
        return 0
    return (len(text) if len(marks) == 1 else marks[-1].end()) - marks[0].start()


class PageBudget:
    """What is left, for one notebook, of the maths and the highlighted fenced code its student's cells may put on
    the pages."""

    def __init__(self, maths_marks: int = MATHS_MARKS, highlight_chars: int = HIGHLIGHT_CHARS,
                 pixels: int = IMAGE_PIXELS) -> None:
        self.maths_marks = maths_marks
        self.maths_chars = MATHS_CHARS
        self.highlight_chars = highlight_chars
        self.pixels = pixels

    def shows(self, source: str, cleaned: str | None) -> bool:
        """Whether a cell of `source` (`cleaned`: its cleaned HTML) may be shown as it renders, spending its pictures'
        pixels and its maths marks if so."""
        pixels = pictures_pixels(cleaned) if cleaned is not None else 0
        if pixels is None or pixels > self.pixels or not self.takes_maths(source, cleaned):
            return False
        self.pixels -= pixels
        return True

    def takes_maths(self, source: str, cleaned: str | None) -> bool:
        """Whether a cell of `source` (`cleaned`: its cleaned HTML) may be typeset, spending its marks and maths
        characters if so: no definition of a macro, its maths within MATHS_SPAN, and within what is left of the
        notebook's marks and characters."""
        texts = [source] + ([typeset_text(cleaned)] if cleaned is not None else [])
        if any(DEFINITION.search(text) for text in texts):
            return False
        marks = max(len(MARK.findall(text)) for text in texts)
        chars = max(_maths_span(text) for text in texts)
        if marks > self.maths_marks or chars > min(self.maths_chars, MATHS_SPAN):
            return False
        self.maths_marks -= marks
        self.maths_chars -= chars
        return True

    def spend_highlighting(self, chars: int) -> None:
        self.highlight_chars = max(0, self.highlight_chars - chars)
