"""A second assignment, graded by the same engine: nothing in the grader is tied to the lesson.

tests/fixtures/tiny_course/ holds a tiny assignment (`tiny`: one stub, its hidden suite and probes, one written
answer). Each test grades it in a course folder made of the kit's grader without the lesson's suites
(autograder/ less autograder/dl01_6_3/), the kit's own nbgrader_config.py, and the fixture, with release/ and
solutions/ made by nbgrader as `make release` makes them: one notebook from the command line and under pytest, the demo class,
a class from submitted/ and from an LMS download (what `make grade ASSIGNMENT=tiny` runs), grades.csv, and the
Gradescope zip. docs/instructors.md ("A second assignment") lists what an assignment needs.
"""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from test_gradescope import grader_at, unpacked

from autograder.classroom.mutate import Mutation, apply
from bench.course import VENV_BIN, env
from conftest import ASSIGNMENT, ROOT, grade_class, grade_json, scores

FIXTURE = ROOT / "tests" / "fixtures" / "tiny_course"
NAME, NOTEBOOK = "tiny", "square.ipynb"
TIMESTAMP = "2026-11-20 12:00:00.000000 UTC\n"
ADDS = Mutation("square", "square", "return x + x")  # right for x = 2 alone: 1 check of 4


def test_the_grader_package_has_at_most_12_modules_at_its_top():
    top = sorted(path.name for path in (ROOT / "autograder").glob("*.py"))
    assert len(top) <= 12, top


def test_no_module_outside_the_lessons_folder_names_the_lesson_or_its_notebook():
    lesson = ASSIGNMENT.suite_dir
    naming = [path.relative_to(ROOT).as_posix() for path in sorted((ROOT / "autograder").rglob("*.py"))
              if lesson not in path.parents
              and (ASSIGNMENT.name in (text := path.read_text()) or Path(ASSIGNMENT.notebook_name).stem in text)]
    assert not naming, f"these name the lesson: {naming}"


def nbgrader(course: Path, *args: str) -> None:
    run = subprocess.run([str(VENV_BIN / "nbgrader"), *args, "--log-level=ERROR"], cwd=course, env=env(),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The fixture as a course folder: the kit's grader less the lesson's suites, the kit's nbgrader_config.py,
    requirements.txt and root conftest.py, the fixture's source/ and hidden suite; release/ and solutions/ as `make release`
    makes them."""
    course = tmp_path_factory.mktemp("tiny_course")
    shutil.copytree(ROOT / "autograder", course / "autograder",
                    ignore=shutil.ignore_patterns("__pycache__", ASSIGNMENT.name))
    for name in ("nbgrader_config.py", "requirements.txt", "conftest.py"):  # settings, pins, the pytest guard
        shutil.copy2(ROOT / name, course)
    shutil.copytree(FIXTURE, course, dirs_exist_ok=True)
    nbgrader(course, "generate_assignment", NAME, "--force")
    nbgrader(course, "generate_solution", NAME, "--force")
    return course


def notebook(course: Path, tree: str) -> dict:
    return nbformat.read(course / tree / NAME / NOTEBOOK, as_version=4)


def submit(course: Path, student: str, nb: dict) -> None:
    folder = course / "submitted" / student / NAME
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text(json.dumps(nb, indent=1))
    (folder / "timestamp.txt").write_text(TIMESTAMP)


@pytest.mark.slow
def test_nbgrader_makes_the_release_and_the_reference_from_the_fixtures_source(course):
    cells = {cell.metadata.nbgrader.grade_id: cell.source
             for cell in notebook(course, "release").cells if "nbgrader" in cell.metadata}
    assert "raise NotImplementedError()" in cells["square"] and "x * x" not in cells["square"]
    assert cells["answer_sign"] == "YOUR ANSWER HERE"
    assert "return x * x" in notebook(course, "solutions").cells[1].source


@pytest.mark.slow
def test_the_reference_scores_full_marks_and_the_blank_release_zero(course):
    reference, _ = grade_json(course / "solutions" / NAME / NOTEBOOK, course)
    assert scores(reference) == {"test_square": 2.0} and reference["max"] == 2
    blank, _ = grade_json(course / "release" / NAME / NOTEBOOK, course)
    assert scores(blank) == {"test_square": 0.0}
    messages = [test["message"] for test in blank["parts"][0]["tests"]]
    assert len(messages) == 4 and all("NotImplementedError" in message for message in messages), messages


@pytest.mark.slow
def test_pytest_runs_the_hidden_suite_as_the_grader_does(course, tmp_path):
    for tree, passed in (("solutions", True), ("release", False)):
        report = tmp_path / f"{tree}.json"
        run = subprocess.run([sys.executable, "-m", "pytest", f"autograder/{NAME}", "--notebook", f"{tree}/{NAME}/{NOTEBOOK}",
                              "-q", "-p", "no:cacheprovider", "--checks-json", str(report)],
                             cwd=course, capture_output=True, text=True, timeout=300)
        assert run.returncode == (0 if passed else 1), run.stdout[-3000:] + run.stderr[-2000:]
        checks = [(c["name"], c["passed"], c["message"]) for c in json.loads(report.read_text())["checks"]]
        graded, _ = grade_json(course / tree / NAME / NOTEBOOK, course)
        assert checks == [(t["name"], t["passed"], t["message"]) for t in graded["parts"][0]["tests"]]
        assert len(checks) == 4 and all(check[1] == passed for check in checks), checks


def lms_download(course: Path) -> None:
    """Canvas's download: smithjohn's blank first upload, then the reference as Canvas's renumbered copy."""
    archive = course / "downloaded" / NAME / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as bundle:
        bundle.writestr(zipfile.ZipInfo("smithjohn_12345_6789012_square.ipynb", (2026, 11, 20, 10, 0, 0)),
                        json.dumps(notebook(course, "release")))
        bundle.writestr(zipfile.ZipInfo("smithjohn_12345_6789013_square-1.ipynb", (2026, 11, 20, 11, 0, 0)),
                        json.dumps(notebook(course, "solutions")))


@pytest.mark.slow
def test_a_class_is_graded_from_the_demo_then_from_submitted_and_an_lms_download_into_grades_csv(course):
    run = grade_class(course, assignment=NAME)  # submitted/ is empty: the demo class, the assignment's kinds
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "from the bundled demo class" in run.stdout, run.stdout[-3000:]
    assert gradebook_scores_of(course) == {"ada": 2.0, "blank": 0.0}
    removed = subprocess.run([sys.executable, "-m", "autograder", "new-class", "--assignment", NAME], cwd=course,
                             capture_output=True, text=True, timeout=300)
    assert "Removed the demo class (ada, blank)" in removed.stdout, removed.stdout + removed.stderr

    reference = notebook(course, "solutions")
    submit(course, "ada", reference)
    submit(course, "blank", notebook(course, "release"))
    submit(course, "bob", apply(reference, [ADDS]))
    lms_download(course)  # `make grade` collects it into submitted/ beside them
    run = grade_class(course, assignment=NAME)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "4 submissions, 4 graded" in run.stdout, run.stdout[-3000:]
    assert (course / "submitted" / "smithjohn_12345" / NAME / NOTEBOOK).is_file()  # the renumbered copy, renamed
    assert "Collected the newest of several files: smithjohn_12345" in run.stdout, run.stdout[-3000:]
    assert gradebook_scores_of(course) == {"ada": 2.0, "blank": 0.0, "bob": 0.5, "smithjohn_12345": 2.0}

    with (course / "grades.csv").open(newline="") as file:
        rows = {row["student_id"]: row for row in csv.DictReader(file)}
    assert {s: row["test_square"] for s, row in rows.items()} == {"ada": "2", "blank": "0", "bob": "0.5",
                                                                  "smithjohn_12345": "2"}
    assert all(row["assignment"] == NAME and row["max_auto_score"] == "2" and row["max_manual_score"] == "1"
               for row in rows.values()), rows
    # The total waits for the written answer's hand grade; nbgrader gives an answer left blank 0 by itself.
    assert {s: row["score"] for s, row in rows.items()} == {"ada": "", "blank": "0", "bob": "", "smithjohn_12345": ""}
    for student in rows:
        assert (course / "feedback" / student / NAME / "square.html").is_file(), student


def gradebook_scores_of(course: Path) -> dict[str, float]:
    """Each student's score on the tiny assignment's one autograded part, from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {submission.student_id: submission.code_score for submission in gb.assignment_submissions(NAME)}


@pytest.mark.slow
def test_the_gradescope_zip_of_the_course_grades_the_reference_full_and_the_blank_zero(course, tmp_path):
    autograder_zip = tmp_path / "gradescope.zip"  # `make gradescope` in the course: its own grader builds it
    built = subprocess.run([sys.executable, "-m", "autograder", "gradescope-zip", "--assignment", NAME, "--to",
                            str(autograder_zip)],
                           cwd=course, env=env(), capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    with zipfile.ZipFile(autograder_zip) as archive:
        names = archive.namelist()
    assert f"autograder/{NAME}/test_square.py" in names and not any(ASSIGNMENT.name in name for name in names)
    home = unpacked(autograder_zip)
    try:
        grade = grader_at(home)
        for tree, score in (("solutions", 2.0), ("release", 0.0)):
            results, _ = grade({NOTEBOOK: json.dumps(notebook(course, tree))})
            assert results.get("score") == score, results
    finally:
        shutil.rmtree(home, ignore_errors=True)
