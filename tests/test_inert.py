"""What the instructor opens is inert: no terminal control in what the kit prints, no formula in its CSVs.

Escape sequences come in through a notebook's file name, its exceptions' text and its grade_ids; each
is tried where the kit prints it: `python -m autograder grade`'s table, the hidden suites under pytest
and the public checks under pytest (make grade's summary: tests/test_formgrader_browser.py, whose class
holds a folder named with one and this file's notebook with one in a grade_id). The grader writes a control it
keeps as its escape (`\\x1b`, as text); the public checks, standalone, remove it. A check's message with ANSI colours
is shown on the feedback and formgrader pages as text that styles nothing. The CSV files: tests/test_lms.py.
"""
from __future__ import annotations

import html
import io
import json
import shutil
import subprocess
import sys
import time
import unicodedata
from html.parser import HTMLParser

import notebook_checks
import pytest

from autograder.classroom.mutate import Mutation, apply
from autograder.outputs.inert import escape, escaped, notes_line, one_line, say, spreadsheet_cell, terminal_text
from conftest import ASSIGNMENT, NOTEBOOK, ROOT, release_notebook, solution_notebook

# An OSC that retitles the terminal window, a CSI that clears the screen, and C1's one-character CSI.
SEQUENCE = "\x1b]0;PWNED\x07\x1b[2J\x9b31m"
CONTROLS = [chr(c) for c in [*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0)]]
SEQUENCE_SHOWN = SEQUENCE.encode("unicode_escape").decode("ascii")  # as one_line writes it: \x1b]0;PWNED...


def test_terminal_text_strips_c0_and_c1_controls_and_keeps_the_text():
    assert terminal_text(f"a{SEQUENCE}b") == "a]0;PWNED[2J31mb"
    assert terminal_text("".join(CONTROLS)) == ""
    kept = "line one\n\tindented, é, → ü 日本 \u00a0"
    assert terminal_text(kept) == kept
    assert terminal_text(3.5) == "3.5"


def test_format_characters_are_escaped_where_a_terminal_shows_them():
    """Bidirectional controls reorder a line (a file name "x\u202egnp.exe" reads as "xexe.png"), zero-width ones hide
    text: every character of Unicode's category Cf is written as its escape, by say() too."""
    assert terminal_text("report\u202efdp.exe \u2066x\u2069") == "report\\u202efdp.exe \\u2066x\\u2069"
    formats = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    assert len(formats) > 150
    for char in formats:
        assert terminal_text(char) == char.encode("unicode_escape").decode("ascii"), hex(ord(char))
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    say("a\u202eb", out)
    out.seek(0)
    assert out.read() == "a\\u202eb\n"
    assert escaped("x\u202e\x1b\u2028 y") == "x\\u202e\\x1b\\u2028 y"


def test_a_reason_or_a_note_shown_on_a_page_is_laid_out_as_written():
    """The feedback page's note (the formgrader shows the same cell) and the class page's reasons are HTML, which
    lays out bidirectional controls as a terminal does: a file name in a note could reorder what the instructor
    reads there. one_line, which every reason and note passes through, writes each format character as its
    escape, and the note's cell shows that escape as text."""
    from nbconvert.filters.markdown import markdown2html

    from autograder.nbgrader_glue.preprocessors.add_grading_notes import note_markdown

    note = one_line("graded 'x\u202ebnpy.ipynb' as modules_and_sgd.ipynb (renamed)")
    assert note == "graded 'x\\u202ebnpy.ipynb' as modules_and_sgd.ipynb (renamed)"
    shown = html.unescape(markdown2html(note_markdown(note)))
    assert "\u202e" not in shown and "'x\\u202ebnpy.ipynb'" in shown, shown


def test_a_checks_message_shown_on_a_page_is_laid_out_as_written():
    """A check's line quotes the student's exception text ("Linear.forward raised ValueError: ..."), and the
    feedback and formgrader pages show it as HTML: the redaction every message passes writes format characters
    as escapes, so the student's text cannot reorder the grader's line."""
    from autograder.outputs.redaction import redactor

    line = redactor(ASSIGNMENT, 300)("Linear.forward raised ValueError: score 2/2 \u202e\u2066\u200b\n(line 2)")
    assert line == "Linear.forward raised ValueError: score 2/2 \\u202e\\u2066\\u200b (line 2)"


# A colour sequence that hides what follows it (white on white, nbconvert's ansi2html writes it as a style), and
# one that ansi2html writes as a class.
COLOURED = "\x1b[38;2;255;255;255;48;2;255;255;255mHIDDEN-TEXT\x1b[0m \x1b[31mRED-TEXT\x1b[0m"
COLOURED_SHOWN = COLOURED.replace("\x1b", "\\x1b")  # as one_line writes it: the escape, as text


def test_one_line_writes_every_control_as_its_escape():
    """A reason, a note or a check's message is shown in a terminal and on pages that read ANSI colours: a control
    the line keeps is written as its escape (one that is whitespace to str.split is a space, as a line break is)."""
    for char in CONTROLS:
        assert one_line(f"a{char}b") in ("a b", f"a{escape(char)}b"), hex(ord(char))
    assert one_line(SEQUENCE) == SEQUENCE_SHOWN == "\\x1b]0;PWNED\\x07\\x1b[2J\\x9b31m"
    assert one_line(COLOURED) == COLOURED_SHOWN


class _Styled(HTMLParser):
    """The attributes of the elements around each piece of text holding `mark`."""

    VOID = {"br", "hr", "img", "input", "link", "meta", "area", "base", "col", "embed", "source", "track", "wbr"}

    def __init__(self, mark: str) -> None:
        super().__init__()
        self.mark, self.open, self.around = mark, [], []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.open.append(dict(attrs))

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.open:
            self.open.pop()

    def handle_data(self, data):
        if self.mark in data:
            self.around.append(list(self.open))


def assert_unstyled(page: str, *marks: str) -> None:
    """Each mark is on `page` as text, in no element with a style or an ANSI colour class of nbconvert's."""
    for mark in marks:
        parser = _Styled(mark)
        parser.feed(page)
        assert parser.around, f"{mark} is not on the page"
        for attrs in (a for around in parser.around for a in around):
            assert "style" not in attrs and "ansi-" not in attrs.get("class", ""), (mark, attrs)


def graded_pages(message: str) -> dict[str, str]:
    """The released notebook's feedback page and formgrader page, each grade cell's check failing with
    `message` (the first part with a check passed too: its lines are a stream, the others' an error's traceback)."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    from autograder.classroom.feedback_pages import GenerateFeedbackFor
    from autograder.nbgrader_glue.formgrader_pages import kit_exporter
    from autograder.nbgrader_glue.preprocessors.run_hidden_suites import write_grade_cells
    from autograder.outputs.feedback import FeedbackExporter
    from autograder.report import CheckResult, PartResult, Report, Status
    from autograder.settings import load_config

    parts = [PartResult(cell.grade_id, cell.points, [CheckResult("test_a", Status.FAILED, message)])
             for cell in ASSIGNMENT.grade_cells]
    parts[0].tests.append(CheckResult("test_b", Status.PASSED))
    notebook = release_notebook()
    write_grade_cells(notebook, Report(parts))
    scores = {part.grade_id: part.score for part in parts}
    for cell in notebook.cells:  # what GetGrades would read from a gradebook
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader.score = scores.get(grade_id, 0.0)
    resources = {"nbgrader": {"notebook": "modules_and_sgd", "score": 1, "max_score": 24, "late_penalty": 0}}
    config = GenerateFeedbackFor(config=load_config(ROOT)).config  # the templates' folders, nbgrader's CSS
    feedback = FeedbackExporter(config=config).from_notebook_node(notebook, resources=resources)[0]
    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": ASSIGNMENT.name, "notebook_id": "modules_and_sgd", "submission_id": "x", "index": 0,
                 "total": 1, "base_url": "", "student": "mallory", "last_name": None, "first_name": None,
                 "notebook_path": f"/autograded/mallory/{ASSIGNMENT.name}/{NOTEBOOK}"}
    formgrader = kit_exporter(HTMLExporter(config=config)).from_notebook_node(notebook, resources=resources)[0]
    return {"feedback": feedback, "formgrader": formgrader}


def test_a_checks_message_colours_nothing_on_the_pages():
    """A check's line quotes the student's exception text: an ANSI colour sequence in it (white on white hides
    what follows on a page that reads ANSI colours) is shown as its escape, as text, and styles nothing on the
    feedback page or the formgrader's. The pages never read output text for ANSI colours, so a sequence that
    reached them raw would style nothing either."""
    from autograder.outputs.redaction import redactor

    redacted = redactor(ASSIGNMENT, 300)(f"Linear.forward raised ValueError: {COLOURED}")
    assert redacted == f"Linear.forward raised ValueError: {COLOURED_SHOWN}"
    for name, page in graded_pages(redacted).items():
        assert_unstyled(page, "HIDDEN-TEXT", "RED-TEXT")
        assert html.escape(redacted, quote=False) in page, name
    for name, page in graded_pages(f"raised ValueError: {COLOURED}").items():
        assert_unstyled(page, "HIDDEN-TEXT", "RED-TEXT")
        assert "rgb(255,255,255)" not in page, name


def test_the_public_checks_strip_the_same_characters():
    """notebook_checks.py stays standalone (students run it), so it keeps its own copy of the rule."""
    every = "".join(chr(c) for c in [*range(0x3000), 0x3164, 0xfe0f, 0xfeff, 0xff9f, 0xffa0, 0xfff9, 0x110bd, 0xe0001,
                                     0xe0100, 0xe01ef, 0xe0fff])
    assert notebook_checks.printable(every) == terminal_text(every)


@pytest.mark.parametrize("cell, written", [
    ("=1+2", "'=1+2"), ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"), ("-2+3", "'-2+3"), ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
    ("\t=1", "'\t=1"), ("\r=1", "'\r=1"), ("\0=1", "'\0=1"), ("-", "'-"),
    (" =1+2", "' =1+2"), ("\u3000=1+2", "'\u3000=1+2"), ("\uff1d1+2", "'\uff1d1+2"), ("\uff0bcmd", "'\uff0bcmd"),
    ("-1.5", "-1.5"), ("-3", "-3"), (" -3", " -3"), ("-2e-05", "-2e-05"), ("16", "16"), ("0", "0"),  # numbers stay numbers
    ("smithjohn_12345", "smithjohn_12345"), ("O'Brien, Jr.", "O'Brien, Jr."), ("", ""), ("a=1", "a=1"),
])
def test_a_cell_a_spreadsheet_would_run_gets_a_quote(cell, written):
    assert spreadsheet_cell(cell) == written


def boom_notebook() -> dict:
    """The reference whose Linear.forward raises an exception with SEQUENCE in its text."""
    return apply(solution_notebook(), [Mutation("linear", "Linear.forward", f"raise RuntimeError({SEQUENCE!r})")])


def assert_inert(output: str, *shown: str) -> None:
    assert not set(output) & set(CONTROLS), repr(output[-1500:])
    for text in shown:
        assert text in output, (text, output[-1500:])


@pytest.mark.slow
def test_grades_table_prints_no_escape_sequence_from_a_file_name_or_an_exception(tmp_path):
    path = tmp_path / f"mallory{SEQUENCE}.ipynb"
    path.write_text(json.dumps(boom_notebook()))
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", str(path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert_inert(run.stdout, f"raised RuntimeError: {SEQUENCE_SHOWN}")


def hostile_grade_id_notebook() -> dict:
    """The reference with SEQUENCE in a grade_id, which the reason it is not graded names (its points are text)."""
    nb = solution_notebook()
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "linear")
    cell.metadata.nbgrader.update(grade_id=f"linear{SEQUENCE}", points="all of them")
    return nb


@pytest.mark.slow
def test_grades_table_prints_no_escape_sequence_from_a_grade_id(tmp_path):
    path = tmp_path / NOTEBOOK
    path.write_text(json.dumps(hostile_grade_id_notebook()))
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", str(path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert_inert(run.stdout, "not graded:", f"linear{SEQUENCE_SHOWN}")


@pytest.mark.slow
def test_pytest_prints_no_escape_sequence_from_the_hidden_suites_or_the_public_checks(tmp_path):
    path = tmp_path / f"mallory{SEQUENCE}.ipynb"
    path.write_text(json.dumps(boom_notebook()))
    hidden = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"autograder/{ASSIGNMENT.name}",
                             "--notebook", str(path), "-k", "forward"], cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
    assert hidden.returncode == 1, hidden.stdout[-2000:] + hidden.stderr[-2000:]
    assert_inert(hidden.stdout, f"raised RuntimeError: {SEQUENCE_SHOWN}")

    release = shutil.copytree(ROOT / "release" / ASSIGNMENT.name, tmp_path / "release")
    (release / NOTEBOOK).write_text(json.dumps(boom_notebook()))
    public = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "forward"],
                            cwd=release, capture_output=True, text=True, timeout=600)
    assert public.returncode == 1, public.stdout[-2000:] + public.stderr[-2000:]
    assert_inert(public.stdout, "raised RuntimeError: ]0;PWNED[2J31m")


def test_code_shows_its_format_characters_and_at_most_30_marks_a_character():
    """red-d12 F4/F5 (pass 22): a page shows code with its bidirectional controls and zero-width characters as their
    escapes, and the combining marks past 30 after one character as theirs (a browser took 30 to 80 s over 60,000);
    30 marks stay as they are."""
    from autograder.outputs.inert import code_as_run

    assert code_as_run("a = 1  # \u2067x\u200b\u200d") == "a = 1  # \\u2067x\\u200b\\u200d"
    assert code_as_run("é" + "\u0301" * 30) == "é" + "\u0301" * 30
    start = time.monotonic()
    assert len(code_as_run(("a" + "\u0301" * 40) * 25_000)) == 25_000 * (31 + 60)
    assert time.monotonic() - start < 5  # one pass


def test_a_written_answer_shows_its_format_characters_but_the_joiners():
    """A written answer's code spans and fenced blocks, and its prose, are laid out by the same bidirectional controls
    as code (the marks U+200E, U+200F, U+061C too: an RLM before "3 - 1" shows "1 - 3"), and a zero-width space or a
    soft hyphen hides text: each is written as its escape, as in code. The joiners shape Persian and the Indic scripts
    and join emoji, and reorder nothing: they stay. The marks past 30 after one character are escapes, as in code."""
    from autograder.outputs.inert import text_as_read

    answer = "`x = 1  # \u2067` \u200f3 - 1 \u202eab\u202c \u2066\u2069 zero\u200b\xadgrad \u061c \U000e0041 \ufeff"
    assert text_as_read(answer) == ("`x = 1  # \\u2067` \\u200f3 - 1 \\u202eab\\u202c \\u2066\\u2069 zero\\u200b\\xadgrad "
                                    "\\u061c \\U000e0041 \\ufeff")
    honest = "می\u200cخواهم \u0915\u094d\u200d\u0937 \U0001f469\u200d\U0001f4bb Übung é"
    assert text_as_read(honest) == honest
    assert text_as_read("a" + "\u0301" * 32 + " ä") == "a" + "\u0301" * 30 + "\\u0301" * 2 + " ä"
    start = time.monotonic()
    assert len(text_as_read("a\u202e" * 100_000)) == 100_000 * 7
    assert time.monotonic() - start < 5  # one pass


def test_a_character_reference_is_read_as_the_browser_decodes_it_only_where_it_names_what_is_escaped():
    """A markdown or raw cell is HTML to the browser, which decodes `&#x202E;` after the kit reads the text
    (red-c17 X26-c17-6): a reference to a format character or a mark is read as it; every other stays as written (it
    may be markup, `&lt;`, or code, `&eacute;`), and no number is read past what names a character."""
    from autograder.outputs.inert import text_as_read

    assert text_as_read("&#x202E;3 &#8238 &#X0202e; &rlm;1 &shyness &zwj;") == "\\u202e3 \\u202e \\u202e \\u200f1 \\xadness \u200d"
    kept = "&lt;b&gt; &amp;#x202E; &#x26;#x202E; &eacute; &nvlt; &#123456789; &#000; &#xFFFF;"
    assert text_as_read(kept) == kept
    assert text_as_read("a" + "&#769;" * 32) == "a" + "\u0301" * 30 + "\\u0301" * 2
    start = time.monotonic()
    for text in ["&#" + "1" * 100_000, "&#" + "0" * 100_000 + "1;", "&shy" * 30_000, "a" + "&#127995;" * 15_000]:
        text_as_read(text)
    assert time.monotonic() - start < 5  # linear, and an `int` of 100,000 digits is never read


def test_a_quoted_name_keeps_latin1_letters_and_escapes_every_other_character_past_ascii():
    """Übung.ipynb reads as written; a quote-like character (U+2019, U+A78C, a letter drawn as an apostrophe) and
    × are escapes, and a name's own backslash before 'xdc' stays two backslashes, never turned into a letter."""
    from autograder.outputs.inert import quoted
    assert quoted("Übung née.ipynb") == "'Übung née.ipynb'"
    assert quoted("x\u2019 \ua78c \u00d7.ipynb") == "'x\\u2019 \\ua78c \\xd7.ipynb'"
    assert quoted("a\\xdc") == "'a\\\\xdc'"


def test_a_refused_folder_name_cannot_write_lines_of_the_summary():
    """red-d13 X23-2 (pass 23): `make grade`'s summary names a folder of submitted/ refused for its id as
    `Not graded: <the folder's name>: '<ascii()>' is not a safe student id`, the name itself through `say`
    (terminal_text), which keeps a line break. A folder named with line breaks writes lines of its own that read as
    the summary's: here a late penalty for ada and `Not graded: bob`, neither of them true (docs/security.md: the
    summary names it "escapes visible")."""
    from test_catalogue_hostile import fresh_course

    from conftest import grade_class

    course = fresh_course()
    name = "zz: x\nLate: ada, by 9 days, 4 hours (late penalty 6 points)\nNot graded: bob: the notebook is empty\nzz"
    try:
        folder = course / "submitted" / name / ASSIGNMENT.name
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_text(json.dumps(solution_notebook(), indent=1))
        (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC\n")
        run = grade_class(course)
    finally:
        shutil.rmtree(course, ignore_errors=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    forged = [line for line in run.stdout.splitlines() if line.startswith(("Late: ada", "Not graded: bob"))]
    assert forged == [], run.stdout[-1500:]


# Characters Python takes in a name (XID_Continue, kept by NFKC) that a page or terminal draws as nothing (the combining
# grapheme joiner U+034F, the Khmer inherent vowels U+17B4 and U+17B5, the Mongolian free variation selectors, the
# variation selectors U+FE00 to U+FE0F and U+E0100 to U+E01EF) or as a blank (the Hangul fillers U+115F, U+1160,
# U+3164, U+FFA0): Unicode's default-ignorable code points that are not format characters (Cf).
INVISIBLE_IN_NAMES = "\u034f\u17b4\u17b5\u180b\u180c\u180d\ufe00\ufe0f\U000e0100\U000e01ef\u115f\u1160\u3164\uffa0"


@pytest.mark.parametrize("char", list(INVISIBLE_IN_NAMES), ids=[f"U+{ord(c):04X}" for c in INVISIBLE_IN_NAMES])
def test_a_name_that_differs_by_an_invisible_character_reads_otherwise_on_the_pages_and_in_the_messages(char):
    """red-d15 X24-d15-3 (pass 24): Trojan Source by an invisible identifier (CVE-2021-42694's kin). `return x @
    self.weight.T + self.bias\\u034f` is a name Python reads as another than `self.bias` (the checks fail: 'Linear' object
    has no attribute 'bias\\u034f'), but the pages show the code as `self.bias` (Chromium lays U+034F, U+17B4, U+FE00,
    U+E0100 and U+180B out at zero width on the feedback page: the line is as wide as the lesson's) and the message as
    "'Linear' object has no attribute 'bias'": an instructor judging a regrade request reads the lesson's code and a
    grader that cannot find an attribute the code sets. code_as_run and one_line write only format characters (Cf) and
    the marks past 30 as escapes; these are Mn and Lo."""
    from autograder.outputs.inert import code_as_run

    name = f"self.bias{char}"
    assert f"bias{char}".isidentifier() and f"bias{char}" != "bias"  # Python runs it as another name
    assert char not in code_as_run(f"return x @ self.weight.T + {name}"), "the page shows the code as self.bias"
    assert char not in one_line(f"'Linear' object has no attribute 'bias{char}'"), "the message reads as 'bias'"
    assert char not in terminal_text(f"'Linear' object has no attribute 'bias{char}'"), "the terminal reads 'bias'"


def test_a_written_answer_keeps_the_emoji_selectors_but_not_an_invisible_name():
    """fix of X24-d15-3: prose keeps VS16 and VS15 where they choose how a symbol is drawn (a red heart, a double
    exclamation mark, a keycap), where no name can hold them; after a letter (a code span's `self.bias\\ufe0f`, another
    name to Python) they are escapes, as the other default-ignorable characters are, and the code shows every one."""
    from autograder.outputs.inert import code_as_run, text_as_read

    honest = "I \u2764\ufe0f it \u203c\ufe0f #\ufe0f\u20e3 \u2600\ufe0e \U0001f44d\U0001f3fd"
    assert text_as_read(honest) == honest
    assert text_as_read("`self.bias\ufe0f` and \u3164 and \ufe0f") == "`self.bias\\ufe0f` and \\u3164 and \\ufe0f"
    assert code_as_run("s = '\u2764\ufe0f'") == "s = '\u2764\\ufe0f'"


def test_every_note_keeps_its_share_of_the_line_however_long_another_is():
    """Report.note and Gradescope's output: the short notes whole, the long ones cut to equal shares of what is left,
    within the limit (a long note of the student's making hid "cells missing", red-c17 X26-c17-4)."""
    notes = ["cells pasted more than once: " + ", ".join(f"text_{n}" for n in range(80)), "cells missing: question_1",
             "the folder also holds " + "x" * 5000, "locked cells edited: question_2"]
    line = notes_line(notes)
    assert len(line) <= 300 and line.count("; ") == 3
    assert "cells missing: question_1; " in line and line.endswith("; locked cells edited: question_2")
    first, _, third, _ = line.split("; ")
    assert first.startswith("cells pasted more than once: text_0") and third.startswith("the folder also holds xx")
    assert abs(len(first) - len(third)) <= 1 and first.endswith("…")
    assert notes_line([]) == "" and notes_line(["\x1b[31m a \n b"]) == one_line("\x1b[31m a \n b")
