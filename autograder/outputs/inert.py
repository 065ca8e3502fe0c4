"""Text from students made inert where the instructor reads it: a terminal, and a spreadsheet.

A terminal acts on control characters: C0 (ESC starts the sequences that move the cursor, recolour,
retitle the window or, on some terminals, write the clipboard; CR overwrites a line) and C1 (U+0080 to
U+009F; U+009B is a one-character CSI). It also lays text out by Unicode's format characters (category Cf):
the bidirectional controls U+202A to U+202E and U+2066 to U+2069 reorder what follows them on the line, so
that a file name can make a summary line read other than it is, and zero-width ones hide text. A file name,
an exception's text and a grade_id come from students, so everything the kit prints passes through
`terminal_text` (`say`): controls removed, format characters written as their escapes (`\u202e`).
`escaped` writes every character that is not printable so, for a name the summary must show as it is. A spreadsheet runs a CSV cell
that starts with `=`, `+`, `-` or `@` (after spaces, full-width forms too, and a tab, CR or NUL before them) as
a formula: `spreadsheet_cell`
does what OWASP's "CSV Injection" page advises. A reason or a note shown in a summary line or on a page
(the feedback page's note and check lines, the formgrader's, the class page) is first made `one_line`: no layout
or styling of its own (no line break; its controls, ESC's colour sequences among them, and its format characters,
which HTML lays out as a terminal does, written as their escapes), bounded, writable as UTF-8. The pages show the
student's code (`code_as_run`) and markdown and raw cells (`text_as_read`) with their format characters as escapes
too, the joiners and emoji selectors of prose aside. Each of these also writes as escapes the characters Unicode marks default-ignorable that
are not format characters (`hidden`): Python takes most of them in a name, and a page or a terminal draws them as
nothing or a blank, so that `self.bias\u034f` is another name that reads as `self.bias`.
"""
from __future__ import annotations

import html
import os
import re
import sys
import unicodedata
from typing import TextIO

# C0 but newline and tab (the kit's own layout), DEL, and C1.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")  # where a format character can be
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\0")  # OWASP's list, and ASVS 1.2.10's NUL
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?")


def escape(char: str) -> str:
    """One character as Python writes it in a string literal: \x1b, \u202e, \U000e0001."""
    return char.encode("unicode_escape").decode("ascii")


# Unicode's default-ignorable code points (DerivedCoreProperties.txt, Default_Ignorable_Code_Point) that are not format
# characters (Cf): the combining grapheme joiner U+034F, the Khmer inherent vowels U+17B4 and U+17B5, the Mongolian
# free variation selectors U+180B to U+180F, the variation selectors U+FE00 to U+FE0F and U+E0100 to U+E01EF (Mn),
# which Chromium and terminals draw at zero width; the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0 (Lo), drawn as
# a blank; and the code points Unicode keeps default-ignorable for later (U+2065, U+FFF0 to U+FFF8, U+E0000 to
# U+E0FFF, Cf tags among them). Python takes the Mn and Lo ones in a name (XID_Continue, kept by NFKC).
_IGNORABLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2065\u3164\ufe00-\ufe0f\uffa0\ufff0-\ufff8"
                        "\U000e0000-\U000e0fff]")


def hidden(char: str) -> bool:
    """Whether `char` is drawn as nothing or a blank, or lays out what is beside it: a format character (Cf) or
    another default-ignorable code point."""
    return unicodedata.category(char) == "Cf" or _IGNORABLE.match(char) is not None


def _format_escaped(match: re.Match) -> str:
    return escape(match[0]) if hidden(match[0]) else match[0]


def terminal_text(text: object) -> str:
    """`text` with every C0 control but newline and tab, DEL and every C1 control removed, and every `hidden`
    character (Cf: bidirectional controls, zero-width characters; the other default-ignorable ones) written as its
    escape."""
    return _NON_ASCII.sub(_format_escaped, _CONTROL.sub("", str(text)))


# Unicode's stream-safe text format (UAX #15) holds no more than 30 combining marks in a row; a browser lays out one
# character with many more in time that grows faster than their number (60,000 after one letter: 30 to 80 s of
# Chromium on a page).
MARKS_PER_CHARACTER = 30
# The emoji modifiers (skin tones, category Sk) extend the character before them as a combining mark does, and a long
# run of them after one letter costs a browser the same: 16,000 took Chromium 116 s. They count as marks.
_EMOJI_MODIFIERS = ("\U0001f3fb", "\U0001f3ff")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# The two joiners, zero-width non-joiner and joiner (U+200C, U+200D), are the format characters prose needs: they shape
# the letters beside them (Persian, Arabic, the Indic scripts) and join emoji (a woman and a laptop as one picture,
# U+1F469 U+200D U+1F4BB). They reorder nothing and hide no letter.
JOINERS = frozenset("\u200c\u200d")


# The emoji presentation selectors: VS15 and VS16 (U+FE0E, U+FE0F) after a symbol or a punctuation mark (U+2764, U+203C)
# choose whether it is drawn as text or as an emoji, and before the keycap U+20E3 they make one ("#\ufe0f\u20e3"). No
# name holds them there (neither a symbol, a punctuation mark but a connector, nor U+20E3 continues a name), so prose
# keeps them.
_EMOJI_STYLES = "\ufe0e\ufe0f"
_KEYCAP = "\u20e3"


def _styles_emoji(run: str, at: int) -> bool:
    """Whether run[at] is an emoji presentation selector after a symbol or a punctuation mark, or before a keycap."""
    if run[at] not in _EMOJI_STYLES:
        return False
    before = unicodedata.category(run[at - 1]) if at else ""
    return before[:1] == "S" or (before[:1] == "P" and before != "Pc") or run[at + 1: at + 2] == _KEYCAP


def _extends(char: str) -> bool:
    """Whether `char` extends the character before it: a combining mark or an emoji modifier."""
    return unicodedata.category(char)[0] == "M" or _EMOJI_MODIFIERS[0] <= char <= _EMOJI_MODIFIERS[1]


def _run_shown(run: str, prose: bool) -> str:
    """`run` with the combining marks (and emoji modifiers) past MARKS_PER_CHARACTER after one character, and every
    `hidden` character written as their escapes; in `prose`, the JOINERS and the emoji presentation selectors stay."""
    shown, marks = [], 0
    for at, char in enumerate(run):
        marks = marks + 1 if _extends(char) else 0
        kept = prose and (char in JOINERS or _styles_emoji(run, at))
        shown.append(escape(char) if marks > MARKS_PER_CHARACTER or (hidden(char) and not kept) else char)
    return "".join(shown)


def code_as_run(text: str) -> str:
    """Code as a page shows it: the combining marks past MARKS_PER_CHARACTER after one character, and every `hidden`
    character written as its escape, as the terminal writes it. A bidirectional control in a string or a comment
    (U+2067) otherwise reorders the line shown, so that code Python runs one way reads another (Trojan Source,
    CVE-2021-42574); a zero-width one (the joiners too, in a string) hides text; and a default-ignorable mark or
    filler in a name (U+034F, U+FE00, U+3164) makes it another name that reads as the first (CVE-2021-42694's kin)."""
    return _NON_ASCII_RUN.sub(lambda match: _run_shown(match[0], prose=False), text)


# A character reference as the HTML standard (and `html.unescape`) reads one in text: a number, or a name, its `;` left
# out for the few names a browser decodes without one (`&shy`). A number of more than 8 digits past its zeros names no
# character (past U+10FFFF: U+FFFD), so no more are read (`int` of 5,000 digits raises). Possessive and bounded: linear.
_REFERENCE = re.compile(r"&(?:#0*+([0-9]{1,8}+)|#[xX]0*+([0-9a-fA-F]{1,8}+)|[^\t\n\f <&#;]{1,32}+);?")


def _reference_read(match: re.Match) -> str:
    """A character reference as the characters it names when `text_as_read` would write one as its escape or count it
    as a mark, else as written. Only characters past ASCII are put in its place, so none is markup (`&nvlt;`, `<`
    and a mark, stays a reference: it brings one mark at most)."""
    reference, tail = match[0], ""
    if match[1] or match[2]:
        named = html.unescape(f"&#{match[1] or 'x' + match[2]};")
    else:  # a name without its `;` decodes before the text after it (`&shyness`): that text stays the text's own
        read = html.unescape(reference)
        tail = reference[len(reference) - len(os.path.commonprefix([read[::-1], reference[::-1]])):]
        named = read[:len(read) - len(tail)]
    if named and min(named) > "\x7f" and any(hidden(char) or _extends(char) for char in named):
        return named + tail
    return reference


def text_as_read(text: str) -> str:
    """A student's markdown or raw cell as the pages show it: as `code_as_run`, but keeping the JOINERS and the emoji
    presentation selectors (a heart drawn as an emoji, U+2764 U+FE0F). The code spans
    and fenced blocks of a written answer are code an instructor reads (and may copy to run), and its prose is what
    they grade by hand: a bidirectional control (U+202E, U+2067; the marks U+200E, U+200F and U+061C move numbers
    and signs, "3 - 1" read as "1 - 3") reorders either up to the end of its paragraph, and a zero-width space or a
    soft hyphen hides text from a search. The cell is HTML to the browser, which decodes a character reference after
    the kit reads the text: so a reference to such a character (`&#x202E;`, `&rlm;`, 8,000 `&#127995;` after one
    letter) is read as the character it names first (red-c17 X26-c17-6)."""
    return _NON_ASCII_RUN.sub(lambda match: _run_shown(match[0], prose=True), _REFERENCE.sub(_reference_read, text))


def escaped(text: str) -> str:
    """`text` with every character that is not printable (controls, format characters, separators but the
    space) written as its escape, for a name shown as it is."""
    return "".join(c if c.isprintable() else escape(c) for c in text)


def quoted(name: str, limit: int | None = None) -> str:
    """A name a student chose (a file's, a folder's, a grade_id), in quotes no character of it closes: as Python's
    ascii() writes it as a literal (a quote in it escaped, or the other quote used; every character past ASCII as its
    escape). Between bare quotes, a name holding one (`x.ipynb' as ... (renamed); the instructor checked ...; 'y.ipynb`)
    ended them and went on as the kit's own words; and Unicode draws many characters as quotes without their being
    one (typographic and low-9 quotes, primes, apostrophe letters of other scripts, ornaments, full-width forms), which
    no list of them kept up with: so none past ASCII is shown as itself. What is shown stays within `limit`
    characters, quotes and escapes counted (an escape takes up to 10: red-c22 X31-c22-1, a name of Greek letters cut to
    100 of them took 600 and pushed the reason after it out of its line): past it, the name is cut and the kit's own
    `…` ends it inside the quotes. The letters of Latin-1 (À to ÿ but × and ÷), which no font draws as a quote, stay
    themselves, so Übung.ipynb reads as it is written."""
    name = str(name)
    whole = _latin1_letters(ascii(name))
    if limit is None or len(whole) <= limit:
        return whole
    low, high = 0, len(name)  # the longest start of the name that fits with its `…` (found by halving: few ascii())
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if len(_latin1_letters(ascii(name[:middle]))) < limit else (low, middle - 1)
    cut = _latin1_letters(ascii(name[:low]))
    return cut[:-1] + "…" + cut[-1]


# An escape \xNN that ascii() wrote (an odd run of backslashes before it: an even one is the name's own backslashes).
_LATIN1_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\x([c-f][0-9a-f])")


def _latin1_letters(literal: str) -> str:
    """`literal` (ascii()'s) with its escapes of Latin-1's letters (U+00C0 to U+00FF but × and ÷) written as the
    letters."""
    return _LATIN1_ESCAPE.sub(lambda m: m.group(1) + (chr(int(m.group(2), 16)) if m.group(2) not in ("d7", "f7")
                                                      else "\\x" + m.group(2)), literal)


def say(text: object, file: TextIO | None = None) -> None:
    """Print `text` as terminal_text, flushed; a character the terminal's encoding lacks (a file name that is
    not UTF-8) is written as its backslash escape rather than stopping the summary."""
    file = file or sys.stdout
    encoding = file.encoding or "utf-8"
    print(terminal_text(text).encode(encoding, "backslashreplace").decode(encoding), file=file, flush=True)


def spreadsheet_cell(value: object) -> str:
    """A CSV cell no spreadsheet reads as a formula: one that would be is prefixed with a `'` (OWASP),
    which spreadsheets show as text and do not run; a number, negative ones included, stays a number."""
    text = str(value)
    # As a spreadsheet may read it: past leading spaces, and with a full-width `＝` or `＋` as the ASCII sign.
    read = unicodedata.normalize("NFKC", text).lstrip(" \u3000\xa0")
    if (text.startswith(_FORMULA_START) or read.startswith(_FORMULA_START)) and not _NUMBER.fullmatch(read):
        return "'" + text
    return text


def notes_line(notes: list[str], limit: int = 300) -> str:
    """Several notes as one line (one_line's each) of at most `limit` characters: the first (the one that matters
    most: grading_notes puts a cell missing first) up to half of it, then each other note its share of what is left,
    the shorter ones whole and the rest cut to equal shares; what they leave goes back to the first. Cut as one line,
    the notes a student makes long (a copy of every locked text cell pasted at the top, 300 notebooks beside the
    graded one, many notes of edited cells) pushed the others off, "cells missing from the notebook: question_1" among
    them (red-c17 X26-c17-4, red-c18 X27-c18-1)."""
    lines = [one_line(note, limit) for note in notes]
    if not lines:
        return ""
    room = limit - 2 * (len(lines) - 1)  # less the "; " between them
    shares = [min(len(lines[0]), room // 2 if len(lines) > 1 else room)]
    left = room - shares[0]
    rest = sorted(range(1, len(lines)), key=lambda at: len(lines[at]))
    shares += [0] * len(rest)
    for done, at in enumerate(rest):
        shares[at] = min(len(lines[at]), max(left // (len(rest) - done), 2))
        left -= shares[at]
    shares[0] = min(len(lines[0]), shares[0] + max(left, 0))
    return "; ".join(line if len(line) <= share else line[:share - 1] + "…" for line, share in zip(lines, shares))


def one_line(text: object, limit: int = 300) -> str:
    """A reason or a note as the summary and a page show it: one line, its controls (C0, DEL, C1) and `hidden`
    characters (format characters, the other default-ignorable ones) written as their escapes (`\\x1b[31m` shows as those characters and colours nothing, in a
    terminal or through a page's ANSI filter), bounded, and writable as UTF-8."""
    line = " ".join(str(text).split()).encode("utf-8", "backslashreplace").decode()
    line = _NON_ASCII.sub(_format_escaped, _CONTROL.sub(lambda match: escape(match[0]), line))
    return line if len(line) <= limit else line[: limit - 1] + "…"
