"""A grader failure is never a grade, and the grader uses only the ids its user namespace maps.

* uids.py reads the uid and gid maps: which ids a worker may draw in a machine's own namespace, in one of 65,536
  ids (rootless Podman's default) and in one of root alone;
* in such namespaces (made with machines/userns.py where this machine allows it), one notebook grades at full
  marks, or the grader refuses in one line;
* a grader that cannot start its sandbox, for `python -m autograder grade` and `make grade`, says so in one
  line, exits 3 and writes no score; a student the grader failed on has no score (gradebook, grades.csv,
  Canvas), never a zero; a class that failed whole for one grader-side reason stops before anything is written.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.sandbox import uids
from conftest import ASSIGNMENT, NOTEBOOK, ROOT, course_copy, grade_class
from machines import userns

HOST = "         0          0 4294967295\n"  # a machine's own namespace: every id
PODMAN = "         0       1000          1\n         1     100000      65536\n"  # rootless Podman's default
ROOT_ALONE = "         0       1000          1\n"


def test_a_machines_own_namespace_gives_the_ids_above_every_account():
    assert uids.grading_ranges(HOST, HOST) == [(1 << 20, 1 << 31)]


def test_a_namespace_of_65536_ids_gives_those_above_the_distributions_accounts():
    assert uids.parse_map(PODMAN) == [(0, 1), (1, 65537)]
    assert uids.grading_ranges(PODMAN, PODMAN) == [(60001, 65534)]


def test_an_id_must_be_mapped_as_a_uid_and_as_a_gid():
    fewer_groups = "0 1000 1\n1 100000 60100\n"
    assert uids.grading_ranges(PODMAN, fewer_groups) == [(60001, 60101)]
    assert uids.grading_ranges("0 0 1\n2000000 5000000 10\n", HOST) == [(2000000, 2000010)]


def test_root_alone_leaves_no_id_for_student_code():
    assert uids.grading_ranges(ROOT_ALONE, ROOT_ALONE) == []
    assert uids.grading_ranges("0 0 1\n1 100000 999\n", "0 0 1\n1 100000 999\n") == []  # accounts' ids only


WHY_NO_USERNS = userns.possible() if sys.platform == "linux" else "user namespaces are Linux's"


def grade_in_namespace(mapping: str, notebook: Path) -> subprocess.CompletedProcess:
    """`python -m autograder grade NOTEBOOK --json` in a new user namespace whose uid and gid maps are `mapping`."""
    return subprocess.run([sys.executable, str(ROOT / "machines" / "userns.py"), mapping, "--", sys.executable, "-m",
                           "autograder", "grade", str(notebook), "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.skipif(bool(WHY_NO_USERNS), reason=WHY_NO_USERNS)
def test_in_a_namespace_of_65536_ids_the_reference_gets_full_marks():
    done = grade_in_namespace(userns.PODMAN, ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["total"] == report["max"] == 18


@pytest.mark.skipif(bool(WHY_NO_USERNS), reason=WHY_NO_USERNS)
def test_in_a_namespace_of_root_alone_the_grader_refuses_in_one_line():
    done = grade_in_namespace(userns.ROOT_ALONE, ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK)
    assert done.returncode == 3 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "maps no id for student code" in done.stderr and "65,536" in done.stderr


def broken_course(tmp: Path) -> Path:
    """A course whose sandbox cannot start: the release's engine.py, which the worker imports first, is broken."""
    course = course_copy(tmp / "course")
    (course / "release" / ASSIGNMENT.name / "engine.py").write_text("def broken(:\n")
    return course


def assert_one_line_about_the_grader(stderr: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr[-3000:]
    assert "the sandbox worker could not start (SyntaxError" in lines[0]
    assert "Traceback" not in stderr and "numpy" not in stderr


def test_a_sandbox_that_cannot_start_gives_one_line_and_no_score(tmp_path):
    course = broken_course(tmp_path)
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK),
                           "--json"], cwd=course, capture_output=True, text=True, timeout=300)
    assert done.returncode == 3 and done.stdout == ""
    assert_one_line_about_the_grader(done.stderr)
    assert "the grader failed, not the notebook" in done.stderr and "make test" in done.stderr


def test_make_grade_stops_before_writing_anything_when_the_sandbox_cannot_start(tmp_path):
    course = broken_course(tmp_path)
    done = grade_class(course)
    assert done.returncode == 3
    assert_one_line_about_the_grader(done.stderr)
    assert "Not graded, nothing written" in done.stderr
    assert not [name for name in ("gradebook.db", "grades.csv", "feedback", "autograded", "submitted")
                if (course / name).exists()]


# `make grade` in a course copy with the grader failing (a RuntimeError, as a sandbox that stopped raises) on the
# students named in argv[2:], or on every student when argv[2] is "all".
FAILING = """
import sys
from pathlib import Path
from autograder.classroom import grade_students
from autograder.classroom.grade_class import grade_class
from autograder.assignment import find_assignment
from autograder.sandbox.protocol import NotGraded
from autograder.settings import GraderSettings, load_config
made = grade_students.autograder_for
def failing(*args, **kwargs):
    autograde = made(*args, **kwargs)
    def answer(student):
        if sys.argv[2] == "all" or student in sys.argv[2:]:
            return NotGraded(f"the grader failed on it (RuntimeError: the sandbox worker stopped on {student})",
                             grader_fault=True)
        return autograde(student)
    return answer
grade_students.autograder_for = failing
root = Path.cwd()
sys.exit(grade_class(find_assignment(root, sys.argv[1]), GraderSettings(config=load_config(root))))
"""


def grade_failing(course: Path, *failing: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # alembic
    return subprocess.run([sys.executable, "-c", FAILING, ASSIGNMENT.name, *failing], cwd=course, capture_output=True,
                          text=True, env=env, timeout=900)


@pytest.mark.slow  # grades a class through nbgrader
def test_a_student_the_grader_failed_on_has_no_score_anywhere(tmp_path):
    course = course_copy(tmp_path / "course")
    done = grade_failing(course, "alan")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Not graded: alan: the grader failed on it" in done.stdout and "no score written" in done.stdout
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grades = [g for nb in gb.find_submission(ASSIGNMENT.name, "alan").notebooks for g in nb.grades]
        assert grades and all(g.auto_score is None for g in grades)
        assert gb.find_submission(ASSIGNMENT.name, "ada").code_score == 18
    with open(course / "grades.csv", newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    parts = [cell.grade_id for cell in ASSIGNMENT.grade_cells]
    assert all(rows["alan"][column] == "" for column in [*parts, "auto_score", "manual_score", "raw_score", "score"])
    assert rows["ada"]["auto_score"] == "18"
    from autograder.outputs.lms import write_canvas_csv

    written = write_canvas_csv(course, ASSIGNMENT.name, tmp_path / "canvas.csv")
    with open(written.path, newline="") as handle:
        canvas = {row[0]: row[-1] for row in csv.reader(handle)}
    assert canvas["alan"] == "" and canvas["ada"] == "", "alan has no score; ada's written answers wait for a grader"
    assert "ada" in written.pending and "alan" not in written.pending, "no score is not a pending hand grade"
    page = (course / "feedback" / "alan" / ASSIGNMENT.name / NOTEBOOK).with_suffix(".html").read_text()
    assert "No score yet" in page and "Score: 0" not in page
    class_page = subprocess.run([sys.executable, "-m", "autograder", "class-page", "--to", str(tmp_path / "class.html")],
                                cwd=course, capture_output=True, text=True, timeout=300)
    assert class_page.returncode == 0, class_page.stderr[-2000:]
    summary = (tmp_path / "class.html").read_text()
    assert "9 students; mean autograded score" in summary and "1 could not be\ngraded" in summary  # alan: no 0 in the mean


@pytest.mark.slow  # grades a class through nbgrader
def test_a_class_that_failed_whole_for_one_grader_reason_stops_before_any_score(tmp_path):
    course = course_copy(tmp_path / "course")
    done = grade_failing(course, "all")
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Not graded, no score written" in lines[0], done.stderr[-3000:]
    assert "the sandbox worker stopped on <student>" in lines[0] and "python -m autograder grade" in lines[0]
    assert not (course / "grades.csv").exists() and not (course / "feedback").exists()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert not [s for s in gb.assignment_submissions(ASSIGNMENT.name)
                    if any(g.auto_score is not None for nb in s.notebooks for g in nb.grades)]


def test_a_class_of_one_letter_ids_that_failed_whole_for_one_reason_is_told_so():
    from autograder.outputs.grader_failure import whole_class_failure
    from autograder.sandbox.protocol import NotGraded

    answers = {student: NotGraded(f"the sandbox worker stopped on {student} (submitted/{student}/x)", grader_fault=True)
               for student in ("a", "b")}
    stopped = whole_class_failure(ASSIGNMENT, answers)
    assert "(the sandbox worker stopped on <student> (submitted/<student>/x))" in stopped, stopped
    assert whole_class_failure(ASSIGNMENT, {**answers, "c": None}) == ""
