"""autograder/nbgrader_glue/exporters.py against nbconvert's stock NotebookExporter, and the kit's at-once gradebook steps
(autograder/nbgrader_glue/gradebook_lookups.py) against nbgrader's own, in nbgrader's Autograde as `make grade` runs it.

The demo class is autograded twice in one course copy, once per exporter (or per set of steps), with the hidden
suites replaced by a fixed outcome (the exporter is under test, not the suites): the autograded notebooks must be
the same bytes and the gradebook rows the same values. A notebook a preprocessor made invalid must be refused by
both, before the gradebook is written.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from nbformat.v4 import new_output
from nbgrader.apps.api import NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import capture_log

from autograder.assignment import find_assignment
from autograder.classroom.demo import write_demo_class
from autograder.nbgrader_glue.preprocessors.grading_notes import METADATA_KEY
from autograder.nbgrader_glue.preprocessors.run_hidden_suites import write_grade_cells
from autograder.report import CheckResult, PartResult, Report, Status
from autograder.settings import load_config
from conftest import course_copy, generate_gradebook

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's session noise, as make grade

SUITES = "autograder.nbgrader_glue.preprocessors.run_hidden_suites.RunHiddenSuites"
STOCK = "nbconvert.exporters.NotebookExporter"


class FixedOutcome(NbGraderPreprocessor):
    """RunHiddenSuites with an outcome fixed by the grade id (full marks, or none), without the sandbox."""

    def preprocess(self, nb, resources):
        nb.metadata.pop(METADATA_KEY, None)
        parts = [PartResult(cell.metadata.nbgrader["grade_id"], float(cell.metadata.nbgrader["points"]),
                            [CheckResult("check", Status.PASSED if len(cell.metadata.nbgrader["grade_id"]) % 2 == 0 else Status.FAILED,
                                         "a message")])
                 for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade")]
        write_grade_cells(nb, Report(parts))
        return nb, resources


class BreakNotebook(NbGraderPreprocessor):
    """Leaves the notebook invalid: an output nbformat's schema does not know."""

    def preprocess(self, nb, resources):
        output = new_output("stream", name="stdout", text="")
        output["output_type"] = "not_an_output"
        next(cell for cell in nb.cells if cell.cell_type == "code").outputs.append(output)
        return nb, resources


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course copy with the demo class submitted and its gradebook made by generate_assignment."""
    root = generate_gradebook(course_copy(tmp_path_factory.mktemp("exporters") / "course"))
    students = write_demo_class(find_assignment(root), root / "submitted")
    (root / "students.txt").write_text("\n".join(students))
    return root


# The kit's steps and the nbgrader steps they stand for.
AT_ONCE = {"autograder.nbgrader_glue.preprocessors.overwrite_cells_at_once.OverwriteCellsAtOnce": "nbgrader.preprocessors.OverwriteCells",
           "autograder.nbgrader_glue.preprocessors.save_auto_grades_at_once.SaveAutoGradesAtOnce": "nbgrader.preprocessors.SaveAutoGrades"}


def autograde(course: Path, student: str, exporter: str, after_suites: list | None = None,
              last: list | None = None, nbgraders_own: bool = False) -> dict:
    """nbgrader's Autograde on one student, as student_autograde runs it, with `exporter` and extra preprocessors
    (and with `nbgraders_own`, nbgrader's steps in place of the kit's at-once ones)."""
    config = load_config(course)
    if nbgraders_own:
        for pass_ in ("sanitize_preprocessors", "autograde_preprocessors"):
            setattr(config.Autograde, pass_, [AT_ONCE.get(step, step) for step in getattr(config.Autograde, pass_)])
    steps = list(config.Autograde.autograde_preprocessors)
    at = steps.index(SUITES)
    config.Autograde.autograde_preprocessors = [*steps[:at], FixedOutcome, *(after_suites or []), *steps[at + 1:],
                                                *(last or [])]
    config.Autograde.exporter_class = exporter
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id, coursedir.student_id = "dl01_6_3", student
    converter = Autograde(coursedir=coursedir, parent=NbGraderAPI(coursedir=coursedir, config=config))
    converter.force = converter.create_student = True
    return capture_log(converter)


def rows(course: Path, student: str) -> list:
    """The student's grades and comments in gradebook.db, by cell name."""
    with sqlite3.connect(course / "gradebook.db") as db:
        return db.execute(
            "select c.name, g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade, n.late_submission_penalty, "
            "m.auto_comment from grade g join base_cell c on g.cell_id = c.id join submitted_notebook n on g.notebook_id = n.id "
            "join submitted_assignment s on n.assignment_id = s.id left join comment m on m.notebook_id = n.id "
            "and m.cell_id = g.cell_id where s.student_id = ? order by 1", (student,)).fetchall()


def comments(course: Path, student: str) -> list:
    """The student's comments in gradebook.db, by cell name and kind."""
    with sqlite3.connect(course / "gradebook.db") as db:
        return db.execute(
            "select c.name, c.type, m.auto_comment, m.manual_comment from comment m join base_cell c on m.cell_id = c.id "
            "join submitted_notebook n on m.notebook_id = n.id join submitted_assignment s on n.assignment_id = s.id "
            "where s.student_id = ? order by 1, 2", (student,)).fetchall()


def autograded(course: Path, student: str) -> Path:
    return course / "autograded" / student / "dl01_6_3" / "modules_and_sgd.ipynb"


def test_the_autograded_notebooks_and_gradebook_rows_are_stocks(course):
    exporter = "autograder.nbgrader_glue.exporters.ValidateOnceExporter"
    assert load_config(course).Autograde.exporter_class == exporter  # what make grade runs
    for student in (course / "students.txt").read_text().split():
        outcome = {}
        for name in (STOCK, exporter):
            result = autograde(course, student, name)
            assert result["success"], (student, name, result.get("error"))
            outcome[name] = autograded(course, student).read_bytes(), rows(course, student)
        assert outcome[exporter][0] == outcome[STOCK][0], student
        assert outcome[exporter][1] == outcome[STOCK][1] and outcome[STOCK][1], student


@pytest.mark.parametrize("where, said", [("after_suites", "before SaveAutoGrades"), ("last", "after the preprocessors")])
def test_a_notebook_made_invalid_is_refused_and_never_scored(course, where, said):
    """Invalid before SaveAutoGrades: refused before any score is written. Invalid at the end: refused, and no
    autograded notebook is left. Stock nbgrader refuses the same notebooks."""
    student = "ada"
    for exporter in (STOCK, "autograder.nbgrader_glue.exporters.ValidateOnceExporter"):
        with sqlite3.connect(course / "gradebook.db") as db:  # scores of an earlier run out of the way
            db.execute("update grade set auto_score = null where notebook_id in (select n.id from submitted_notebook n "
                       "join submitted_assignment s on n.assignment_id = s.id where s.student_id = ?)", (student,))
        result = autograde(course, student, exporter, **{where: [BreakNotebook]})
        assert not result["success"], exporter
        assert not autograded(course, student).exists(), exporter
        if where == "after_suites":
            assert all(row[1] is None for row in rows(course, student)), exporter
        if exporter != STOCK:
            assert f"Notebook is invalid {said}" in result["log"], result["log"]
            assert "not_an_output" in result["log"], result["log"]  # the schema's own message


def test_the_at_once_steps_write_what_nbgraders_own_write(course):
    """OverwriteCellsAtOnce and SaveAutoGradesAtOnce against OverwriteCells and SaveAutoGrades: the same autograded
    notebook and the same grades and comments, for every demo student; on a regrade too, with a grader's manual
    score and comment in the gradebook (kept, and the grade marked for review)."""
    exporter = load_config(course).Autograde.exporter_class
    assert set(AT_ONCE) <= {*load_config(course).Autograde.sanitize_preprocessors,
                            *load_config(course).Autograde.autograde_preprocessors}  # what make grade runs
    for student in (course / "students.txt").read_text().split():
        outcome = {}
        for own in (True, False):
            result = autograde(course, student, exporter, nbgraders_own=own)
            assert result["success"], (student, own, result.get("error"))
            outcome[own] = autograded(course, student).read_bytes(), rows(course, student), comments(course, student)
        assert outcome[False] == outcome[True] and outcome[True][1] and outcome[True][2], student
    student = "ada"
    with sqlite3.connect(course / "gradebook.db") as db:
        db.execute("update grade set manual_score = 0.5 where notebook_id in (select n.id from submitted_notebook n join "
                   "submitted_assignment s on n.assignment_id = s.id where s.student_id = ?)", (student,))
        db.execute("update comment set manual_comment = 'see me' where notebook_id in (select n.id from "
                   "submitted_notebook n join submitted_assignment s on n.assignment_id = s.id where s.student_id = ?)",
                   (student,))
    regraded = {}
    for own in (True, False):
        assert autograde(course, student, exporter, nbgraders_own=own)["success"]
        regraded[own] = rows(course, student), comments(course, student)
    assert regraded[False] == regraded[True]
    assert all(row[2] == 0.5 and row[4] for row in regraded[False][0]), regraded[False][0]
    assert all(row[3] == "see me" for row in regraded[False][1]), regraded[False][1]


def test_save_auto_grades_at_once_writes_a_notebook_whole_or_not_at_all(course, monkeypatch):
    """A SaveAutoGradesAtOnce that fails after some grades writes none of them (nbgrader's own commits each)."""
    import nbgrader.preprocessors.saveautogrades as save

    student = "grace"
    with sqlite3.connect(course / "gradebook.db") as db:
        db.execute("update grade set auto_score = null where notebook_id in (select n.id from submitted_notebook n "
                   "join submitted_assignment s on n.assignment_id = s.id where s.student_id = ?)", (student,))
    determine, seen = save.utils.determine_grade, []

    def fail_on_the_third(cell, log=None):
        seen.append(cell)
        if len(seen) == 3:
            raise RuntimeError("the third grade fails")
        return determine(cell, log)

    monkeypatch.setattr(save.utils, "determine_grade", fail_on_the_third)
    result = autograde(course, student, load_config(course).Autograde.exporter_class)
    assert not result["success"] and len(seen) == 3
    assert rows(course, student) and all(row[1] is None for row in rows(course, student))
