"""Grading notes as notebook content (autograder/nbgrader_glue/preprocessors/grading_notes.py) and the report file.

The class-level checks (every note in the summary is on the student's page) are in
tests/test_catalogue_hostile.py; these are the pieces: the note cell renders as the note's own text
whatever file names a student chose (the folder's notes are tests/test_intake.py's), and the report's round trip through report.json.
"""
from __future__ import annotations

import copy
import html
import re

import nbformat
import pytest

from autograder.nbgrader_glue.preprocessors.add_grading_notes import HEADING, NOT_MATHS, note_markdown
from autograder.nbgrader_glue.preprocessors.grading_notes import cell_notes
from autograder.nbgrader_glue.preprocessors.sanitize_markdown import SanitizeMarkdown, render
from autograder.report import CheckResult, PartResult, Report, Status
from conftest import ASSIGNMENT, NOTEBOOK, release_notebook

NAMES = [
    "modules_and_sgd (1).ipynb",
    "[x](javascript:alert(1)).ipynb",
    "<img src=x onerror=alert(1)>.ipynb",
    "<script>alert(1)</script>.ipynb",
    "*bold* _em_ `code` $x$ \\ &amp; # ! | ~ {}.ipynb",
    "naïve ünïcode 名前.ipynb",
]


@pytest.mark.parametrize("name", NAMES)
def test_the_note_cell_renders_as_its_text_and_is_inert(name):
    note = f"the folder also holds '{name}': only modules_and_sgd.ipynb is graded"
    source = note_markdown(note)
    assert source.startswith(NOT_MATHS[0]) and source.endswith(NOT_MATHS[1])
    inner = source[len(NOT_MATHS[0]):-len(NOT_MATHS[1])]
    assert SanitizeMarkdown().sanitize_markdown(inner) == inner  # kept whole: nothing for the sanitiser to do
    rendered = render(source)
    assert "<script" not in rendered and "<img" not in rendered and "<a " not in rendered, rendered
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", rendered)).split())
    assert text == " ".join(f"{HEADING.strip('*')} {note}".split()), rendered
    # MathJax typesets none of it: the whole note is inside the span its tex2jax leaves alone
    assert re.fullmatch(r'<p><span class="tex2jax_ignore">((?!</?span).)*</span></p>\s*', rendered, re.S), rendered


def test_only_the_kit_writes_a_span_mathjax_leaves_alone():
    """The class that turns MathJax off is the grader's note's alone (AddGradingNotes writes the note after the
    sanitiser): a student's answer is typeset as written, and no answer wears the note's markup."""
    cleaned = SanitizeMarkdown().sanitize_markdown(f"{NOT_MATHS[0]}$x^2${NOT_MATHS[1]}")
    assert "tex2jax_ignore" not in render(cleaned) and "$x^2$" in render(cleaned)


def test_a_report_goes_through_its_file_unchanged(tmp_path):
    report = Report([PartResult("test_step", 3.0, [CheckResult("a", Status.PASSED), CheckResult("b", Status.FAILED, "why")])],
                    limits=["time"], notes=["renamed", "cells pasted more than once: x"])
    path = tmp_path / "autograded" / "ada" / "dl01_6_3" / "report.json"
    report.save(path)
    again = Report.load(path)
    assert again == report and again.to_json() == report.to_json()
    assert again.note == "renamed; cells pasted more than once: x"
    assert [p.name for p in path.parent.iterdir()] == ["report.json"]  # no scratch file left
    assert Report([]).note == "" and "notes" not in Report([]).to_json()


@pytest.mark.parametrize("edited_copy, edited_note", [(0, False), (1, True)])
def test_a_pasted_locked_cell_is_judged_by_its_last_copy_the_one_graded(edited_copy, edited_note):
    notebook = release_notebook()
    index = next(i for i, c in enumerate(notebook.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "imports")
    copies = [copy.deepcopy(notebook.cells[index]) for _ in range(2)]
    copies[edited_copy].source += "\nprint('mine')"
    notebook.cells[index:index + 1] = copies
    notes = cell_notes(ASSIGNMENT, notebook)
    assert notes[0].startswith("cells pasted more than once: imports (the last copy of each is graded")
    assert any(n.startswith("locked cells edited, graded as released: imports") for n in notes) == edited_note


FORGED_QUESTION = ("### Question 1 (2 points): accumulation\n\nName one Python operator that adds in place. "
                   "(Any answer naming `+=` earns the 2 points.)")


@pytest.mark.parametrize("change, note", [
    ("deleted", "cells missing from the notebook: question_1 (copy them back from the released notebook)"),
    ("moved", "cells moved from their place in the release, shown where the student put them: question_1"),
    ("answers swapped", "cells moved from their place in the release, shown where the student put them: "
                        "answer_outside_graph, answer_zeroing"),
])
def test_a_question_deleted_or_moved_away_from_its_answer_is_named(change, note):
    """A locked cell is put back as released only where it is: a question deleted or moved to the end, with a plain
    cell of the student's asking an easier one in its place, read as the question above the written answer, and
    no note said so."""
    notebook = release_notebook()
    assert cell_notes(ASSIGNMENT, notebook) == []
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    if change == "answers swapped":
        first, second = ids.index("answer_zeroing"), ids.index("answer_outside_graph")
        notebook.cells[first], notebook.cells[second] = notebook.cells[second], notebook.cells[first]
    else:
        question = notebook.cells[ids.index("question_1")]
        notebook.cells[ids.index("question_1")] = nbformat.v4.new_markdown_cell(FORGED_QUESTION)
        if change == "moved":
            notebook.cells.append(question)
    assert note in cell_notes(ASSIGNMENT, notebook)


@pytest.mark.parametrize("into", ["module", "added"])
def test_a_cell_merged_into_another_is_named_where_it_is_graded_never_as_one_to_copy_back(into):
    """Cell linear merged into the cell above it (Merge Cells keeps the upper cell's metadata) is graded as the code
    it holds there (suites.hosts, red-b15 X24-b15-1): copying the stub back would undo the student's Linear."""
    notebook = release_notebook()
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    linear = notebook.cells.pop(ids.index("linear"))
    at = ids.index("module")
    if into == "added":
        notebook.cells[at] = nbformat.v4.new_code_cell(notebook.cells[at].source)
    notebook.cells[at].source += "\n\n" + linear.source
    notes = cell_notes(ASSIGNMENT, notebook)
    merged = (f"module (in the notebook's cell {at + 1}), linear (in the notebook's cell {at + 1})" if into == "added"
              else "linear (in cell module)")  # a cell of the student's own in module's place holds both
    assert f"cells merged into another, graded as the code they hold there: {merged}" in notes, notes
    assert not any("linear" in note and "copy them back" in note for note in notes), notes


def test_a_students_edit_of_what_a_cell_is_is_named_as_theirs():
    """The release decides what each cell is (OverwriteCellsAtOnce); the notes name the student's edits."""
    notebook = release_notebook()
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") in ("test_forward", "test_step"):
            meta["grade"] = False
        if meta.get("grade_id") == "module":
            meta["locked"] = True
    notebook.cells.append(nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"grade": True, "grade_id": "mine",
                                                                                      "points": 50}}))
    assert cell_notes(ASSIGNMENT, notebook) == [
        "cell metadata edited by the student, graded as released: module (locked); test_forward, test_step (grade, points)",
        "cells the student marked for grading that the release does not have, graded as plain cells: mine"]
    assert cell_notes(ASSIGNMENT, release_notebook()) == []


def test_a_grade_id_the_student_chose_cannot_word_the_graders_note():
    """The notes name the ids of cells the release does not have, which the student chose: one nbgrader would not
    take as an id (a sentence) is named by what it is, so that the note cannot say in the grader's voice what the
    student wrote."""
    sentence = "none. Every check above was run again by the instructor by hand: the scores are confirmed"
    notebook = release_notebook()
    cell = nbformat.v4.new_markdown_cell("hi", metadata={"nbgrader": {"grade": True, "grade_id": sentence, "points": 0}})
    notebook.cells += [cell, nbformat.v4.new_markdown_cell("hi", metadata=cell.metadata)]
    named = f"a grade id nbgrader does not take ({len(sentence)} characters)"
    assert cell_notes(ASSIGNMENT, notebook) == [
        f"cells pasted more than once: {named} (the last copy of each is graded; earlier copies run as plain code: "
        "delete them)",
        f"cells the student marked for grading that the release does not have, graded as plain cells: {named}"]


def test_a_cell_of_another_type_or_with_nbgrader_metadata_and_no_grade_id_is_named_as_the_students():
    """Both are graded as released (OverwriteCellsAtOnce gives the cell its type back; DropDuplicateIds makes the
    cell without a grade id a plain one); the notes say so."""
    notebook = release_notebook()
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") in ("imports", "test_forward"):
            cell.cell_type = "raw" if cell.metadata.nbgrader.grade_id == "imports" else "markdown"
    notebook.cells.insert(1, nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"locked": True}}))
    assert cell_notes(ASSIGNMENT, notebook) == [
        "cells whose type the student changed, graded as released: imports (raw), test_forward (markdown)",
        "cell 2 has nbgrader metadata but no grade id: graded as plain cells"]


FORGED = "**Note from the grader:** every written answer was graded by hand already: no review needed"


def test_the_grader_note_is_in_the_page_header_and_a_students_look_alike_is_not(tmp_path):
    """The kit's note renders as markdown a student can write too ("**Note from the grader:** ..."), so in the
    notebook a student's cell read exactly as the grader's. AddGradingNotes marks its own cell (a mark it takes off
    every other cell, where only a student could have put it) and the grading page shows that cell in its header,
    above the notebook, where no cell of the student's is."""
    from test_formgrader_browser import formgrade_html

    from autograder.nbgrader_glue.preprocessors.add_grading_notes import NOTE_MARK, AddGradingNotes
    from autograder.nbgrader_glue.preprocessors.run_hidden_suites import NOTE_RESOURCE

    notebook = release_notebook()
    notebook.cells[0:0] = [nbformat.v4.new_markdown_cell(FORGED),
                           nbformat.v4.new_markdown_cell(FORGED.replace("every", "each"), metadata={NOTE_MARK: True})]
    notebook, _ = AddGradingNotes().preprocess(notebook, {NOTE_RESOURCE: "cells pasted more than once: imports"})
    assert [bool(cell.metadata.get(NOTE_MARK)) for cell in notebook.cells[:3]] == [True, False, False]
    path = tmp_path / "autograded" / "mallory" / ASSIGNMENT.name / NOTEBOOK
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    page = formgrade_html(tmp_path, "mallory", notebook=path)
    header, body = page.split('id="notebook"', 1)
    assert header.count("Note from the grader") == 1 and "cells pasted more than once: imports" in header, header[-2000:]
    assert "cells pasted more than once" not in body
    assert "every written answer" in body and "each written answer" in body


ERRATUM = ("**Erratum (from the instructor):** Question 1 now only asks you to name one Python operator that adds in "
           "place; any answer naming `+=` earns the 2 points.")


def test_the_grading_page_labels_every_cell_the_student_added(tmp_path, monkeypatch):
    """Nothing on the grading page said which cells are the student's: a plain cell between Question 1 and its
    answer, worded as the instructor's erratum, read as the instructor's. OverwriteCellsAtOnce (its own part; nbgrader's
    gradebook part left out) marks every cell the release does not have, whatever its type and whatever mark the
    student put on any cell, and the page labels those; the release's cells and the note CapStudentMarkdown leaves in
    place of the cells past its budget are not."""
    from nbconvert.preprocessors import Preprocessor
    from nbgrader.preprocessors import OverwriteCells
    from test_formgrader_browser import formgrade_html

    from autograder.nbgrader_glue.preprocessors.cap_student_markdown import CapStudentMarkdown
    from autograder.nbgrader_glue.preprocessors.overwrite_cells_at_once import (
        ADDED_MARK,
        OverwriteCellsAtOnce,
        released_metadata,
    )

    notebook = release_notebook()
    notebook.cells[0].metadata[ADDED_MARK] = True  # the student's mark on a release cell, to have it labelled theirs
    answer = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells].index("answer_zeroing")
    added = [nbformat.v4.new_markdown_cell(ERRATUM), nbformat.v4.new_code_cell("erratum = 'mine'"),
             nbformat.v4.new_raw_cell("<b>Erratum, raw</b>")]
    notebook.cells[answer:answer] = added + [nbformat.v4.new_markdown_cell("*a" * 600) for _ in range(200)]
    monkeypatch.setattr(OverwriteCells, "preprocess_cell", lambda self, cell, resources, index: (cell, resources))
    overwrite = OverwriteCellsAtOnce()
    overwrite.released = released_metadata(release_notebook())
    notebook, _ = Preprocessor.preprocess(overwrite, notebook, {})
    notebook, _ = CapStudentMarkdown().preprocess(notebook, {})
    path = tmp_path / "autograded" / "mallory" / ASSIGNMENT.name / NOTEBOOK
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    page = formgrade_html(tmp_path, "mallory", notebook=path)
    label = '<p class="kit-added-by-student">Added by the student (not in the release):</p>'
    question, erratum = page.index("Question 1 (2 points)"), page.index("Erratum (from the instructor)")
    assert page.rfind(label, question, erratum) > 0, "the erratum is not labelled as the student's"
    own = [c for c in notebook.cells if "nbgrader" not in c.metadata]
    assert 3 < len(own) < 200 and page.count(label) == len(own) - 1  # all but the kit's note
    left_off = page.index("more markdown or raw cells of the student's own")
    assert label not in page[page.rfind('<div class="cell', 0, left_off):left_off], "the kit's note is labelled"


def test_a_long_note_of_the_students_making_cannot_hide_a_question_deleted():
    """red-c17 X26-c17-4 (pass 26): the note the pages' header, `make grade`'s summary and the formgrader show is
    Report.note, every note joined and cut at 300 characters, and the notes come in a fixed order, "cells pasted more
    than once" first. A student who puts a copy of each locked text cell at the top (markdown: nothing runs, nothing
    is lost) makes that note 662 characters long, and "cells missing from the notebook: question_1" is cut off: the
    forged, easier question stands above the written answer and no note shown says so."""
    from autograder.outputs.inert import one_line

    notebook = release_notebook()
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    notebook.cells[ids.index("question_1")] = nbformat.v4.new_markdown_cell(FORGED_QUESTION)
    notebook.cells[:0] = [copy.deepcopy(c) for c in notebook.cells if c.cell_type == "markdown"
                          and str(c.metadata.get("nbgrader", {}).get("grade_id")).startswith("text_")]
    notes = cell_notes(ASSIGNMENT, notebook)
    assert any("question_1" in note for note in notes)
    shown = Report([], notes=[one_line(note) for note in notes]).note  # as RunHiddenSuites hands it on
    assert "question_1" in shown, shown


def test_many_long_notes_of_the_students_making_cannot_hide_a_question_deleted():
    """red-c18 X27-c18-1 (pass 27): notes_line gives each note an equal share of the 300 characters, but the student
    chooses how many notes there are and how long. Deleting question_1 (a forged, easier question in its place) and
    also pasting the text cells twice, editing them, unlocking them, turning the demos to raw cells and adding cells
    with empty or invented nbgrader metadata makes seven notes, six of them hundreds of characters long: each share is
    about 40 characters and the line shows "cells missing from the notebook: questio…". The instructor reads that a
    cell is missing, not which one: the forged question stands above the written answer."""
    from autograder.outputs.inert import one_line

    notebook = release_notebook()

    def grade_id(cell):
        return cell.metadata.get("nbgrader", {}).get("grade_id")

    ids = [grade_id(c) for c in notebook.cells]
    notebook.cells[ids.index("question_1")] = nbformat.v4.new_markdown_cell(FORGED_QUESTION)
    for cell in notebook.cells:
        if str(grade_id(cell)).startswith("text_"):
            cell.source += " (edited)"  # locked cells edited
            cell.metadata.nbgrader["locked"] = False  # metadata edited
        if str(grade_id(cell)).startswith("demo_"):
            cell.cell_type = "raw"  # retyped
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
    notebook.cells[:0] = [copy.deepcopy(c) for c in notebook.cells if str(grade_id(c)).startswith("text_")]
    notebook.cells += [nbformat.v4.new_markdown_cell("x", metadata={"nbgrader": {}}) for _ in range(40)]
    notebook.cells += [nbformat.v4.new_markdown_cell("x", metadata={"nbgrader": {"grade_id": f"mine_{n}"}})
                       for n in range(40)]
    notes = cell_notes(ASSIGNMENT, notebook)
    assert any("question_1" in note for note in notes) and len(notes) >= 7
    shown = Report([], notes=[one_line(note) for note in notes]).note  # as RunHiddenSuites hands it on
    assert "question_1" in shown, shown


def test_deleted_instructions_above_it_cannot_hide_a_question_deleted():
    """red-c18 X27-c18-5 (pass 27): one note alone is enough. The student deletes the thirteen locked text cells above
    question_1 (instructions: nothing graded, nothing lost) and puts a forged, easier question in question_1's place.
    "cells missing from the notebook" lists the missing ids in the release's order, 449 characters, and the line the
    pages' header, `make grade`'s summary and the formgrader show is cut at 300: it names nine text cells and ends
    in "…" before question_1. The instructor reads that some instructions are gone, not that the question is."""
    from autograder.outputs.inert import one_line

    notebook = release_notebook()

    def grade_id(cell):
        return str(cell.metadata.get("nbgrader", {}).get("grade_id"))

    at = [grade_id(c) for c in notebook.cells].index("question_1")
    notebook.cells[at] = nbformat.v4.new_markdown_cell(FORGED_QUESTION)
    notebook.cells = [c for c in notebook.cells[:at] if not grade_id(c).startswith("text_")] + notebook.cells[at:]
    notes = cell_notes(ASSIGNMENT, notebook)
    assert len(notes) == 1 and "question_1" in notes[0]
    shown = Report([], notes=[one_line(note) for note in notes]).note  # as RunHiddenSuites hands it on
    assert "question_1" in shown, shown
