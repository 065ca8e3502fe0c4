"""What the student's text may make the pages typeset and highlight, for the whole notebook (SanitizeMarkdown).

Maths: MathJax typesets every expression on both pages, in the instructor's (and the student's) browser, and its
own limits (maxMacros, maxBuffer) hold each expression, not the page. A macro the student defines multiplies: three
levels of `\\def` made each 5-byte `$\\c$` typeset 1,000 glyphs, and 300 of them held Chromium 43 s. Even plain
`$xx$` costs about 1.5 ms an expression. So a cell of the student's that defines a macro, or whose maths would take
the notebook past `maths_marks` delimiters, is shown as its text (in a code block, which MathJax leaves alone).

Pictures: a browser decodes a picture to four bytes a pixel whatever its file's size, and a PNG's header may name
100,000 x 100,000 pixels over a few hundred bytes of compressed zeros (40 GB decoded). So the student's pictures
share IMAGE_PIXELS a notebook, read from each picture's own header as the browser reads the picture (pictures.py);
a cell past it, or with a picture whose size cannot be read, is shown as its text.

Highlighting: a fenced block the pages highlight costs the grading page about 40 µs a byte on every view (each token a
span), markdown about 13: so the notebook's fenced blocks share one HIGHLIGHT_CHARS, not one a cell (8 own cells of
16 KB cost 5.2 s a view through the markdown budget); the blocks past it are shown plain.
"""
from __future__ import annotations

import html
import re

from .pictures import pictures_pixels

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
# MathJax lays each level of an expression out as boxes inside boxes, and Chromium's renderer crashes (a sad tab, in
# under a second) laying out a few hundred: `x^{` 200 deep (801 characters), `\sqrt{` 220, `{` or `\left(` 600. A
# cell's maths may nest MATHS_DEPTH levels, counted over-approximately: groups, `\left`, environments, control
# words in a row (`\sqrt\sqrt x` nests without braces), and style switches; an honest answer nests a handful.
MATHS_DEPTH = 100
# The control words MathJax 2.7.9's TeX input (jax.js, the pinned jupyter-server-mathjax's) maps to SetStyle and
# SetSize: each pushes a style item that takes in the rest of its group as one more nested mstyle, so
# `\Large a\Large a` is two levels deep without a brace (600 crashed Chromium). A test reads the set from jax.js.
STYLE_SWITCHES = frozenset({"\\displaystyle", "\\textstyle", "\\scriptstyle", "\\scriptscriptstyle", "\\tiny",
                            "\\Tiny", "\\scriptsize", "\\small", "\\normalsize", "\\large", "\\Large",
                            "\\LARGE", "\\huge", "\\Huge"})
_NESTING = re.compile(r"\\(?:left|begin)(?![A-Za-z])|(?<!\\)\{|\\(?:right|end)(?![A-Za-z])|(?<!\\)\}"
                      r"|\\[A-Za-z]+|\\\\|\\[()\[\]]|[\s^_]+|.", re.DOTALL)
_EXPRESSION_ENDS = {"$", "\\(", "\\)", "\\[", "\\]"}  # a style switch lasts to its expression's end at most
# MathJax draws a rule, a space or a shift as long as its length says (`\\rule{1pt}{40000000pt}`, `\\lower`, `\\Space`,
# an mspace's height: each took both pages to Chromium's largest layout coordinate, 33,554,432 px, every later cell
# laid out at that one point), and the Safe extension bounds style lengths only. Every length MathJax reads is a
# literal: a number and a unit where its TeX parser reads a dimension (GetDimen: an argument in braces or brackets,
# after a control word, or after the dimension before it: `\\rule 1pt 4000000pt`), or a number with or without a unit
# where it reads a MathML length: an attribute's value (\\mmlToken's, \\enclose's and \\cancel's lists, quoted or
# not: `[height=4000000]`; unitless or % is of the font size), \\unicode's `[height,depth]` (em) and \\rule's
# `[raise]` (red-c17 X26-c17-1: `$\\unicode[4000000,0]{x41}$` stood the page 33,554,432 px tall). So each length in
# a cell's maths is at most MATHS_LENGTH_EM (1,600 px; 4,000 at \\Huge), and the notebook's MATHS_CHARS of maths draw
# a few million pixels at most.
MATHS_LENGTH_EM = 100
_EMS = {"em": 1, "ex": 0.5, "mu": 1 / 18, "pt": 1 / 10, "pc": 1.2, "px": 1 / 16, "mm": 0.3, "cm": 3, "in": 7.2,
        "%": 0.01, "": 1}  # each unit in em, rounded up (TeX's 10 pt font: 1 em = 10 pt; a browser's 16 px)
# A number as MathJax may read it: GetDimen takes a decimal comma (`4000000,5pt`), \\unicode two numbers and a comma
# (`4000000,0`), and \\unicode, `\\\\[..]` and \\enclose drop every space first (`4 000 000pt`). One comma at most: so
# possessive, and linear over any run of digits, spaces or commas.
_NUMBER = r"[-+]?\s*+[.,]?\d[\d. ]*+(?:,[\d. ]*+)?"
# A tag ends at the next `<` or `>` (linear over `<a <a ...`).
_UNIT = "em|ex|mu|pt|pc|px|mm|cm|in|%"
_LENGTHS = re.compile(rf"(?:[{{\[=\"',:}}\]]|\\[A-Za-z]++)\s*+((?:{_NUMBER}\s*+(?:{_UNIT}|(?=[\"']))\s*+)++)")
_LENGTH = re.compile(rf"({_NUMBER})\s*+({_UNIT}|)")
_BRACKETED_LENGTH = re.compile(rf"\\(?:unicode|rule)\s*+\[\s*+({_NUMBER})")
# \\cancel's list comes first, in brackets: an honest `\\cancel{2}` is no list.
_ATTRIBUTE_LISTS = re.compile(r"\\(?:mmlToken|enclose|cancelto)(?![A-Za-z])|\\[bx]?cancel\s*+\[")
_ATTRIBUTE_VALUE = re.compile(rf"[=:]\s*+[\"']?\s*+({_NUMBER})")
_DECIMAL = re.compile(r"\d+\.?\d*|\.\d+")
_OPEN_TAG = re.compile(r"<[^<>]*>")

# What makes MathJax 2 (TeX-AMS-MML_HTMLorMML-full, its newcommand, AMSmath and begingroup extensions, `\require`)
# define a control sequence or environment for the rest of the page; `\let\a\b` too, which a definition can then
# build on. A TeX control sequence is a backslash and letters, so `\left` is not `\let`.
DEFINITION = re.compile(r"\\(?:[gex]?def|(?:re)?newcommand|providecommand|(?:re)?newenvironment|let|global"
                        r"|DeclareMathOperator|require)(?![A-Za-z])")
# Where tex2jax starts or ends an expression (inline and display, with processEscapes and processEnvironments): all
# it starts one at under the pages' configuration (templates/readable/mathjax.html.j2, processRefs off).
MARK = re.compile(r"\$\$|\$|\\\(|\\\[|\\begin\{")
_TAG = re.compile(r"<[^>]*>")
# About 200 MB decoded: a phone's photo is 12 to 48 megapixels, a plot a fraction of one.
IMAGE_PIXELS = 50_000_000
# The pages draw a picture of a rendered cell at most PICTURE_HEIGHT px tall (templates/readable/readable.css), and
# each picture costs at least PICTURE_FLOOR pixels of IMAGE_PIXELS: so a notebook shows at most 5,000 pictures, 7.5
# million px tall all together, far within Chromium's layout (33,554,432 px), however tall each says it is.
PICTURE_HEIGHT = 1500
PICTURE_FLOOR = 10_000


def typeset_text(cleaned: str) -> str:
    """The text a page shows of a cell's cleaned HTML, its character references decoded: where MathJax finds maths.
    Tags are taken out whole (over-approximated: code blocks, which MathJax skips, count too)."""
    return html.unescape(_TAG.sub("", cleaned))


def _maths_span(text: str) -> int:
    """The characters of `text` from its first delimiter of maths (an opening or a closing one) to its last, or to
    its end when it has one alone: at least the maths MathJax may find there."""
    marks = list(_SPAN_MARK.finditer(text))
    if not marks:
        return 0
    return (len(text) if len(marks) == 1 else marks[-1].end()) - marks[0].start()


def _largest(number: str) -> float:
    """The largest value MathJax may read in `number` (_NUMBER): its spaces dropped, a comma the decimal point
    (GetDimen's) or between two numbers (\\unicode's `height,depth`), each read up to a second point, as a MathML
    length's value is (`4000000.5.5`)."""
    digits = re.sub(r"[-+\s]", "", number)
    readings = (_DECIMAL.match(reading) for reading in (digits.replace(",", ".", 1), *digits.split(",")))
    return max((float(reading[0]) for reading in readings if reading), default=0)


def _longest_length(text: str) -> float:
    """The longest length, in em, that `text` may have MathJax draw (MATHS_LENGTH_EM), over-approximated outside HTML
    tags (a picture's width and height are the page's to bound: readable.css): any number and unit after a brace, a
    bracket, a control word, an attribute's `=`, `:` or quote, or another such length; and any number, whatever
    follows it, in \\unicode's or \\rule's brackets or, in a text with an attribute list, after a `=` or `:`."""
    text = _OPEN_TAG.sub("", text)
    lengths = [length for run in _LENGTHS.findall(text) for length in _LENGTH.findall(run)]
    unitless = _BRACKETED_LENGTH.findall(text)
    if _ATTRIBUTE_LISTS.search(text):
        unitless += _ATTRIBUTE_VALUE.findall(text)
    return max((_largest(number) * _EMS[unit] for number, unit in lengths + [(n, "") for n in unitless]), default=0)


def _maths_depth(text: str) -> int:
    """How deep `text` nests, as MathJax would lay it out at worst (MATHS_DEPTH). Linear."""
    deepest = depth = run = 0
    switched = [0]  # style switches met in each open group: each holds the rest of its group one level deeper
    for token in _NESTING.finditer(text):
        item = token.group()
        if item in ("{", "\\left", "\\begin"):
            depth, run = depth + 1, 0
            switched.append(0)
        elif item in ("}", "\\right", "\\end"):
            depth, run = max(0, depth - 1 - (switched.pop() if len(switched) > 1 else 0)), 0
        elif item in _EXPRESSION_ENDS:
            depth, run, switched = depth - sum(switched), 0, [0] * len(switched)
        elif item in STYLE_SWITCHES:
            depth, run = depth + 1, 0
            switched[-1] += 1
        elif item.startswith("\\") and len(item) > 1:
            run += 1
        elif not item.isspace() and item not in "^_":
            run = 0
        deepest = max(deepest, depth + run)
    return deepest


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
        pixels = pictures_pixels(cleaned, PICTURE_FLOOR) if cleaned is not None else 0
        if pixels is None or pixels > self.pixels or not self.takes_maths(source, cleaned):
            return False
        self.pixels -= pixels
        return True

    def takes_maths(self, source: str, cleaned: str | None) -> bool:
        """Whether a cell of `source` (`cleaned`: its cleaned HTML) may be typeset, spending its marks and maths
        characters if so: no definition of a macro, its maths within MATHS_SPAN, MATHS_DEPTH and MATHS_LENGTH_EM, and within what is left of the
        notebook's marks and characters."""
        texts = [source] + ([typeset_text(cleaned)] if cleaned is not None else [])
        if any(DEFINITION.search(text) or _maths_depth(text) > MATHS_DEPTH or _longest_length(text) > MATHS_LENGTH_EM
               for text in texts):
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
