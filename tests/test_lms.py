"""The LMS round trip: Canvas and Moodle downloads through zip_collect, grades.csv, and Canvas's import CSV."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.intake.collect import slug
from conftest import ASSIGNMENT, FULL, NOTEBOOK, course_copy

pytestmark = pytest.mark.slow
VENV_BIN = Path(sys.executable).parent
COLLECT = """
import sys
from pathlib import Path
root = Path.cwd()
sys.path.insert(0, str(root))
from autograder.assignment import find_assignment
from autograder.classroom.class_run import ClassRun
from autograder.classroom.students import collect_class
from autograder.settings import GraderSettings, load_config
print(collect_class(ClassRun.open(find_assignment(root, sys.argv[1]), GraderSettings(config=load_config(root)))))
"""
CANVAS = {  # file name in the download -> the student id it must give
    "smithjohn_12345_6789012_modules_and_sgd.ipynb": "smithjohn_12345",
    "obrienann_LATE_23456_7890123_modules_and_sgd-1.ipynb": "obrienann_23456",
}
MOODLE_FOLDERS = {
    "John Smith_12345_assignsubmission_file_/modules_and_sgd.ipynb": "johnsmith_12345",
    "Ana María López_23456_assignsubmission_file_/modules_and_sgd.ipynb": "anamarialopez_23456",
}
MOODLE_FLAT = {"Kim Lee_34567_assignsubmission_file_modules_and_sgd.ipynb": "kimlee_34567"}


def env() -> dict:
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}


def collect(tmp_path: Path, files: dict[str, str], as_zip: bool) -> Path:
    """A fresh course with `files` as an LMS download (loose or zipped), after make grade's collect step."""
    course = course_copy(tmp_path / "course")
    archive = course / "downloaded" / ASSIGNMENT.name / "archive"
    archive.mkdir(parents=True)
    contents = {}
    if as_zip:
        with zipfile.ZipFile(archive / "submissions.zip", "w") as bundle:
            for name in files:
                contents[name] = f'{{"student file": "{name}"}}'
                bundle.writestr(name, contents[name])
    else:
        for name in files:
            contents[name] = f'{{"student file": "{name}"}}'
            (archive / name).parent.mkdir(parents=True, exist_ok=True)
            (archive / name).write_text(contents[name])
    done = subprocess.run([sys.executable, "-c", COLLECT, ASSIGNMENT.name], cwd=course, env=env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "the LMS download" in done.stdout
    for name, student in files.items():
        folder = course / "submitted" / student / ASSIGNMENT.name
        assert (folder / NOTEBOOK).read_text() == contents[name], (name, sorted(p.name for p in folder.iterdir()))
    students = sorted(p.name for p in (course / "submitted").iterdir() if p.is_dir())
    assert students == sorted(files.values())
    return course


@pytest.mark.parametrize("as_zip", [False, True], ids=["folder", "zip"])
def test_canvas_names(tmp_path, as_zip):
    collect(tmp_path, CANVAS, as_zip)


@pytest.mark.parametrize("as_zip", [False, True], ids=["folder", "zip"])
def test_moodle_names(tmp_path, as_zip):
    collect(tmp_path, {**MOODLE_FOLDERS, **MOODLE_FLAT}, as_zip)


def test_slug():
    assert slug("Ana María López") == "anamarialopez" and slug("O'Brien, Jr.") == "obrienjr"


# ------------------------------------------------------------------------ grades.csv and the LMS file

LAST, FIRST = 'O"Brien, Jr.', 'Ann, "Annie"'
AUTO = sum(FULL.values())  # the autograded points
MANUAL = sum(float(c.metadata.nbgrader["points"]) for c in ASSIGNMENT.source.cells
             if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "markdown")


def make_gradebook(course: Path) -> None:
    """A gradebook of the assignment's cells with three students: hand grading done, pending, no submission."""
    import nbformat
    from nbgrader.api import Gradebook

    source = nbformat.read(ASSIGNMENT.source_dir / NOTEBOOK, as_version=4)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "dl01") as gb:
        gb.add_assignment(ASSIGNMENT.name)
        stem = Path(NOTEBOOK).stem
        gb.add_notebook(stem, ASSIGNMENT.name)
        for cell in source.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution"):
                gb.add_solution_cell(meta["grade_id"], stem, ASSIGNMENT.name)
            if meta.get("grade"):
                gb.add_grade_cell(meta["grade_id"], stem, ASSIGNMENT.name, max_score=meta["points"],
                                  cell_type=cell.cell_type)
        # the ids a Canvas download gave (collect.collected_ids): their endings are Canvas user ids
        record = course / "downloaded" / ASSIGNMENT.name / "collected.json"
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"obrienann_23456": {}, "smithjohn_12345": {}}))
        gb.add_student("obrienann_23456", last_name=LAST, first_name=FIRST, email="ann@example.org")
        gb.add_student("smithjohn_12345")
        gb.add_student("nobody")
        for student, graded in (("obrienann_23456", True), ("smithjohn_12345", False)):
            submission = gb.add_submission(ASSIGNMENT.name, student)
            for grade in submission.notebooks[0].grades:
                if grade.cell.cell_type == "code":
                    grade.auto_score, grade.needs_manual_grade = grade.max_score / 2, False
                elif graded:
                    grade.manual_score, grade.needs_manual_grade = 1.5, False
        gb.db.commit()


def test_grades_csv_has_parts_and_keeps_manual_points_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", env()["PATH"])  # nbgrader runs the venv's `alembic` to make gradebook.db
    course = course_copy(tmp_path / "course")
    make_gradebook(course)
    done = subprocess.run([str(VENV_BIN / "nbgrader"), "export"], cwd=course, env=env(), capture_output=True,
                          text=True, timeout=300)  # what the README tells instructors to run after hand grading
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with (course / "grades.csv").open(newline="") as handle:
        reader = csv.DictReader(handle)
        parts = [c.grade_id for c in ASSIGNMENT.grade_cells]
        for column in ["student_id", "last_name", "first_name", *parts, "auto_score", "max_auto_score",
                       "manual_score", "max_manual_score", "score", "max_score"]:
            assert column in reader.fieldnames, column
        rows = {row["student_id"]: row for row in reader}
    ann, john, nobody = rows["obrienann_23456"], rows["smithjohn_12345"], rows["nobody"]
    assert (ann["last_name"], ann["first_name"]) == (LAST, FIRST)  # commas and quotes survive
    for row in (ann, john):
        assert float(row["auto_score"]) == AUTO / 2 and float(row["max_auto_score"]) == AUTO
        assert all(float(row[c.grade_id]) == c.points / 2 for c in ASSIGNMENT.grade_cells)
        assert float(row["max_manual_score"]) == MANUAL == 6 and float(row["max_score"]) == AUTO + MANUAL
    assert float(ann["manual_score"]) == 4.5 and float(ann["score"]) == AUTO / 2 + 4.5
    assert float(john["raw_score"]) == AUTO / 2  # nbgrader's meaning: what is graded so far
    assert john["manual_score"] == "" and john["score"] == "", "hand-graded points are not in yet"
    assert float(nobody["score"]) == 0 and float(nobody["auto_score"]) == 0

    done = subprocess.run([sys.executable, "-m", "autograder", "grades-lms", "--to", "lms.csv"], cwd=course, env=env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of them have written answers not graded yet" in done.stdout
    with (course / "lms.csv").open(newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ASSIGNMENT.name]
    assert table[1][0] == "Points Possible" and float(table[1][5]) == AUTO + MANUAL
    rows = {row[0]: row for row in table[2:]}
    assert rows[f"{LAST}, {FIRST}"][1:4] == ["23456", "", ""] and float(rows[f"{LAST}, {FIRST}"][5]) == AUTO / 2 + 4.5
    assert rows["smithjohn_12345"][1:] == ["12345", "", "", "", ""], "blank until hand-graded: no early grade"
    assert rows["nobody"][1:] == ["", "", "nobody", "", "0"]
    assert "1 rows carry no Canvas user id (nobody)" in done.stdout
    assert "makes it a new assignment" in done.stdout  # the bare assignment id: Canvas matches no column by it

    # Named as Canvas's own export names the assignment, the import fills that assignment; Canvas's export
    # also gives the user id of a student known by login; partial totals only when asked for.
    (course / "canvas-export.csv").write_text("Student,ID,SIS User ID,SIS Login ID,Section,Modules and SGD (424242)\n"
                                             "    Points Possible,,,,,24\nNobody Known,777,,nobody,A,\n")
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + '\nc.GraderSettings.canvas_column = "Modules and SGD (424242)"\n'
                      'c.GraderSettings.canvas_roster = "canvas-export.csv"\nc.GraderSettings.canvas_partial = True\n')
    done = subprocess.run([sys.executable, "-m", "autograder", "grades-lms", "--to", "lms.csv"], cwd=course, env=env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "'Modules and SGD (424242)'" in done.stdout, done.stdout + done.stderr
    assert "points graded so far" in done.stdout and "no Canvas user id" not in done.stdout
    with (course / "lms.csv").open(newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0][-1] == "Modules and SGD (424242)"
    rows = {row[0]: row for row in table[2:]}
    assert rows["nobody"][1:4] == ["777", "", "nobody"] and float(rows["smithjohn_12345"][5]) == AUTO / 2


def test_make_grades_lms_without_a_gradebook_says_so(tmp_path):
    course = course_copy(tmp_path / "course")
    done = subprocess.run([sys.executable, "-m", "autograder", "grades-lms"], cwd=course, env=env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1 and "run `make grade` first" in done.stderr


FORMULAS = {  # student id: (last name, first name, email), each a cell a spreadsheet would run
    "=1+2": ("+cmd|' /C calc'!A0", "@SUM(A1:A9)", "-2+3"),
    "@x": ("\t=HYPERLINK(\"http://example.org\")", "\r=1", "=x"),
}


def test_no_cell_of_grades_csv_or_the_canvas_csv_is_a_formula(tmp_path, monkeypatch):
    """Ids and names put in the gradebook through nbgrader's API (make grade refuses such ids: test_formgrader_browser)
    reach both files as text with a leading quote, as OWASP advises; the scores stay numbers."""
    from nbgrader.api import Gradebook

    from autograder.outputs.inert import spreadsheet_cell

    monkeypatch.setenv("PATH", env()["PATH"])
    course = course_copy(tmp_path / "course")
    make_gradebook(course)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "dl01") as gb:
        for student, (last, first, email) in FORMULAS.items():
            gb.add_student(student, last_name=last, first_name=first, email=email)
    for command in ([str(VENV_BIN / "nbgrader"), "export"],
                    [sys.executable, "-m", "autograder", "grades-lms", "--to", "lms.csv"]):
        done = subprocess.run(command, cwd=course, env=env(), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    for name in ("grades.csv", "lms.csv"):
        with (course / name).open(newline="") as handle:
            cells = [cell for row in csv.reader(handle) for cell in row]
        assert [c for c in cells if spreadsheet_cell(c) != c] == [], f"{name} holds a formula"
        texts = [*FORMULAS, *(v for values in FORMULAS.values() for v in values)] if name == "grades.csv" else \
            ["=1+2", "@x", f"{FORMULAS['=1+2'][0]}, {FORMULAS['=1+2'][1]}"]  # Canvas: "Last, First" or the id
        for text in texts:
            assert "'" + text in cells, (name, text)
    with (course / "grades.csv").open(newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert rows["'=1+2"]["score"] == "0" and float(rows["obrienann_23456"]["auto_score"]) == AUTO / 2


def test_a_partial_total_of_a_late_submission_takes_off_the_late_penalty():
    """canvas_partial exports the points graded so far of a student whose written answers wait for the instructor:
    for a late submission, after its late penalty, as the total will be (red-q4, pass 18: grades.csv's raw_score,
    nbgrader's sum of the grades before the penalty, went to Canvas as it was)."""
    from autograder.outputs.lms import canvas_rows
    row = {"assignment": ASSIGNMENT.name, "student_id": "latelaura", "last_name": "", "first_name": "",
           "max_score": "24", "auto_score": "18", "manual_score": "", "raw_score": "18", "hours_late": "30",
           "late_submission_penalty": "9", "score": ""}  # as grade_rows writes a late student's row before hand grading
    table = canvas_rows([row], ASSIGNMENT.name, partial=True)
    assert table.pending == ["latelaura"]
    assert float(table.rows[-1][-1]) == 18 - 9, table.rows[-1]
