"""A course's life cycle (README: Instructors): from the demo class to a real one, regrading one student,
cleaning, resetting; the make targets that do it; and the progress bars of a run."""
from __future__ import annotations

import csv
import hashlib
import io
import os
import pty
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pytest

from autograder.assignment import find_assignment
from autograder.classroom.demo import TIMESTAMP
from autograder.classroom.lifecycle import DEMO_RECORD, backup_gradebook, demo_submissions, write_demo
from autograder.classroom.pool import run_pool
from autograder.classroom.progress import WAITING, Progress, waiting_text
from conftest import (
    ASSIGNMENT,
    NOTEBOOK,
    ROOT,
    course_copy,
    generate_gradebook,
    grade_class,
    release_notebook,
    solution_notebook,
    write_notebook,
)

STEM = Path(NOTEBOOK).stem
DEMO = {"ada", "grace", "alan", "edsger", "barbara", "linus", "donald", "ken", "blank"}


def make(course: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`make TARGET` in a course copy, with the kit's Makefile and its environment (.venv); no terminal."""
    for name in ("Makefile", "requirements.txt", "requirements-test.txt"):
        if not (course / name).exists():
            shutil.copy2(ROOT / name, course / name)
    if not (course / ".venv").exists():
        (course / ".venv").symlink_to(ROOT / ".venv")
    # -o: the kit's own .venv is used as it is, never rebuilt from the copy's requirements
    return subprocess.run(["make", "--no-print-directory", "-C", str(course), "-o", ".venv/.installed", *args],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900, env=env)


def gradebook(course: Path, db: str = "gradebook.db"):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{course / db}", "dl01")


def students_everywhere(course: Path) -> dict[str, set[str]]:
    """Who the gradebook, grades.csv, autograded/ and feedback/ hold (the formgrader reads the gradebook)."""
    with gradebook(course) as gb:
        book = {s.id for s in gb.students}
        submissions = {s.student_id for s in gb.assignment_submissions(ASSIGNMENT.name)}
    rows = list(csv.DictReader((course / "grades.csv").open())) if (course / "grades.csv").exists() else []
    return {"gradebook": book, "submissions": submissions, "grades.csv": {r["student_id"] for r in rows},
            "autograded": {p.name for p in (course / "autograded").glob("*")},
            "feedback": {p.name for p in (course / "feedback").glob("*") if not p.name.startswith("_")}}  # _static: assets


def csv_rows(course: Path) -> dict[str, dict]:
    return {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open())}


def csv_total(row: dict) -> float:
    """The points graded so far, as grades.csv gives them (raw_score)."""
    return float(row["raw_score"])


def graded_so_far(course: Path, student: str) -> float:
    """The points graded so far, as the gradebook holds them: nbgrader's score, but a hand grade flagged for review
    counted as its autograded score alone (export.so_far, the reckoning of grades.csv and the feedback page)."""
    from autograder.outputs.export import so_far

    with gradebook(course) as gb:
        return so_far(g for nb in gb.find_submission(ASSIGNMENT.name, student).notebooks for g in nb.grades)[0]


def copy_graded(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, symlinks=True)
    return dest


@pytest.fixture(scope="module")
def demo_graded(tmp_path_factory) -> Path:
    """A fresh course with the demo class graded (`make grade` on a fresh clone). Tests work on copies."""
    course = course_copy(tmp_path_factory.mktemp("demo"))
    run = grade_class(course)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "bundled demo class" in run.stdout
    assert students_everywhere(course)["gradebook"] == DEMO
    return course


def put_submission(course: Path, student: str, notebook: dict | str) -> None:
    path = course / "submitted" / student / ASSIGNMENT.name / NOTEBOOK
    if isinstance(notebook, str):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(notebook)
    else:
        write_notebook(notebook, path)


def give_manual_grades(course: Path, student: str) -> dict:
    """A grader's work in the formgrader, through nbgrader's API: a written answer, an override, a comment."""
    with gradebook(course) as gb:
        written = gb.find_grade("answer_zeroing", STEM, ASSIGNMENT.name, student)
        written.manual_score, written.needs_manual_grade = 1.5, False
        override = gb.find_grade("test_step", STEM, ASSIGNMENT.name, student)
        override.manual_score, override.extra_credit = 2.0, 0.5
        gb.find_comment("answer_zeroing", STEM, ASSIGNMENT.name, student).manual_comment = "Clear, and right."
        gb.db.commit()
    return manual_grades(course, student)


def manual_grades(course: Path, student: str, db: str = "gradebook.db") -> dict:
    with gradebook(course, db) as gb:
        written = gb.find_grade("answer_zeroing", STEM, ASSIGNMENT.name, student)
        override = gb.find_grade("test_step", STEM, ASSIGNMENT.name, student)
        comment = gb.find_comment("answer_zeroing", STEM, ASSIGNMENT.name, student)
        return {"written": written.manual_score, "override": (override.manual_score, override.extra_credit),
                "comment": comment.manual_comment, "score": gb.find_submission(ASSIGNMENT.name, student).score}


# ------------------------------------------------------------------ the demo class gives way to a real one


@pytest.mark.slow
def test_rm_submitted_then_a_real_class_leaves_no_demo_student_anywhere(demo_graded, tmp_path):
    """The instructor deletes the demo submissions and drops in real ones; one of them is called ada,
    as a demo student is, and one sent a file that is not a notebook. Output goes to a file: no bar."""
    course = copy_graded(demo_graded, tmp_path / "course")
    (course / "submitted" / ".demo-class").write_text("left by an older version of the kit\n")  # survives rm *
    for folder in (course / "submitted").glob("*"):
        if not folder.name.startswith("."):
            shutil.rmtree(folder)
    put_submission(course, "zoe", solution_notebook())
    put_submission(course, "yan", release_notebook())
    put_submission(course, "ada", solution_notebook())  # a real ada: written by her Jupyter, not by the kit
    put_submission(course, "xavier", '{"cells": [')
    out = tmp_path / "make-grade.txt"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    with out.open("w") as stdout:
        run = subprocess.run([sys.executable, "-m", "autograder", "class", "--assignment", ASSIGNMENT.name],
                             cwd=course, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, timeout=900)
    text = out.read_text()
    assert run.returncode == 0, text[-2000:] + run.stderr[-3000:]
    assert "bundled demo" not in text and f"submissions of {ASSIGNMENT.name} from submitted/;" in text, text[:500]
    assert "\r" not in text + run.stderr and "█" not in text + run.stderr and "it/s" not in text + run.stderr, \
        "a progress bar was drawn into a file"
    real = {"zoe", "yan", "ada", "xavier"}
    held = students_everywhere(course)
    assert held["gradebook"] == held["submissions"] == held["grades.csv"] == real, held
    assert held["feedback"] == real and held["autograded"] <= real, held
    with gradebook(course) as gb:
        assert gb.find_submission(ASSIGNMENT.name, "ada").score == gb.find_submission(ASSIGNMENT.name, "zoe").score
    assert re.search(r"Not graded: xavier: .*is not a readable notebook", text), text[-1500:]
    assert "is not a readable notebook" in (course / "feedback" / "xavier" / ASSIGNMENT.name / f"{STEM}.html").read_text()
    assert not (course / "submitted" / ".demo-class").exists()


def test_only_the_students_the_kit_wrote_are_demo_and_only_while_their_notebook_is_the_kits(tmp_path):
    """The mark is the kit's record beside submitted/, never a name, a time stamp or a notebook's bytes."""
    course = course_copy(tmp_path / "course")
    assignment = find_assignment(course, ASSIGNMENT.name)
    submitted = course / "submitted"
    assert write_demo(assignment, submitted) == sorted(DEMO) == demo_submissions(assignment, submitted)
    demo_ada = (submitted / "ada" / ASSIGNMENT.name / NOTEBOOK).read_bytes()
    put_submission(course, "zoe", demo_ada.decode())  # a real student who sent demo ada's bytes
    grace = submitted / "grace" / ASSIGNMENT.name / NOTEBOOK
    same = grace.read_bytes()
    grace.unlink()
    grace.write_bytes(same)  # the instructor put the real grace's notebook there: the same bytes, a new file
    (submitted / "alan" / ASSIGNMENT.name / "timestamp.txt").write_text("2026-11-21 08:00:00.000000 UTC\n")
    linus = submitted / "linus"
    shutil.copytree(linus, tmp_path / "linus")  # the demo's own file, mtime and all, reached through a link
    shutil.rmtree(linus)
    linus.symlink_to(tmp_path / "linus")
    assert demo_submissions(assignment, submitted) == sorted(DEMO - {"grace", "linus"})  # alan's time stamp: his
    (course / DEMO_RECORD).write_text("{not json")
    assert demo_submissions(assignment, submitted) == [], "an unreadable record makes no one demo"


@pytest.mark.slow
def test_a_real_student_named_like_a_demo_one_with_the_demos_time_stamp_keeps_her_manual_grades(demo_graded, tmp_path):
    """Kits before took a row named ada whose submission carried the demo's time stamp for the demo's, and
    removed it at the next make grade, manual grades and all. timestamp.txt is hers to write: it marks nothing."""
    course = copy_graded(demo_graded, tmp_path / "course")
    for folder in (course / "submitted").iterdir():
        shutil.rmtree(folder)
    put_submission(course, "ada", solution_notebook())
    (course / "submitted" / "ada" / ASSIGNMENT.name / "timestamp.txt").write_text(TIMESTAMP + "\n")
    first = grade_class(course)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    assert "Removed the demo students no longer in submitted/" in first.stdout, first.stdout[-1500:]
    kept = give_manual_grades(course, "ada")
    again = grade_class(course)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    assert "Removed the demo" not in again.stdout and "bundled demo" not in again.stdout, again.stdout[-1500:]
    new = make(course, "new-class")
    assert new.returncode == 0 and "No demo student" in new.stdout, new.stdout + new.stderr
    assert manual_grades(course, "ada") == kept
    assert students_everywhere(course)["gradebook"] == {"ada"}
    assert (course / "submitted" / "ada" / ASSIGNMENT.name / NOTEBOOK).is_file()


@pytest.mark.slow
def test_make_new_class_removes_only_the_recorded_demo_and_never_a_row_with_manual_grades(demo_graded, tmp_path):
    """zoe sent a notebook byte for byte demo ada's; the real grace's notebook replaced the demo's, byte for
    byte the same; the demo's linus was graded by hand. new-class removes the six others, keeps these three."""
    course = copy_graded(demo_graded, tmp_path / "course")
    submitted = course / "submitted"
    demo_ada = (submitted / "ada" / ASSIGNMENT.name / NOTEBOOK).read_bytes()
    put_submission(course, "zoe", demo_ada.decode())
    grace = submitted / "grace" / ASSIGNMENT.name / NOTEBOOK
    real_grace = grace.read_bytes()
    grace.unlink()
    grace.write_bytes(real_grace)
    for student in ("zoe", "grace"):
        regrade = make(course, "regrade", f"STUDENT={student}")
        assert regrade.returncode == 0, regrade.stdout[-2000:] + regrade.stderr[-3000:]
    zoe, linus = give_manual_grades(course, "zoe"), give_manual_grades(course, "linus")
    run = make(course, "new-class")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Kept demo students linus" in run.stdout, run.stdout
    held = students_everywhere(course)
    real = {"zoe", "grace", "linus"}
    assert held == {key: real for key in held}, held
    assert {p.name for p in submitted.iterdir()} == real
    assert grace.read_bytes() == real_grace and (submitted / "zoe" / ASSIGNMENT.name / NOTEBOOK).read_bytes() == demo_ada
    assert manual_grades(course, "zoe") == zoe and manual_grades(course, "linus") == linus
    assert csv_total(csv_rows(course)["zoe"]) == pytest.approx(zoe["score"])
    again = make(course, "new-class")
    assert again.returncode == 0 and "No demo student" in again.stdout and "Kept demo students linus" in again.stdout


@pytest.mark.slow
def test_regrade_one_student_rewrites_their_feedback_and_csv_and_keeps_manual_grades(demo_graded, tmp_path):
    """`make regrade STUDENT=zoe` after a late resubmission: her autograde again (nbgrader's, with the
    hidden checks inside), her page and grades.csv row written again; her manual grades and every other
    student's page and row untouched."""
    course = copy_graded(demo_graded, tmp_path / "course")
    put_submission(course, "zoe", release_notebook())  # on time, and blank
    first = make(course, "regrade", "STUDENT=zoe")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    kept = give_manual_grades(course, "zoe")
    pages = {p.parent.parent.name: p.stat().st_mtime_ns for p in (course / "feedback").glob(f"*/*/{STEM}.html")}
    before = csv_rows(course)
    time.sleep(0.05)
    put_submission(course, "zoe", solution_notebook())  # her late, finished notebook
    (course / "submitted" / "zoe" / ASSIGNMENT.name / "timestamp.txt").write_text("2026-11-22 09:00:00.000000 UTC\n")
    run = make(course, "regrade", "STUDENT=zoe")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "Grading 1 submission of" in run.stdout and "regrading zoe" in run.stdout
    after = {p.parent.parent.name: p.stat().st_mtime_ns for p in (course / "feedback").glob(f"*/*/{STEM}.html")}
    assert [s for s in after if after[s] != pages[s]] == ["zoe"]
    kept_now = manual_grades(course, "zoe")
    assert {k: v for k, v in kept_now.items() if k != "score"} == {k: v for k, v in kept.items() if k != "score"}
    assert kept_now["score"] > kept["score"], "her late submission is graded"
    rows = csv_rows(course)
    # her written answer and the test_step override, given to the blank notebook, wait for review: not counted
    so_far = graded_so_far(course, "zoe")
    assert csv_total(rows["zoe"]) == pytest.approx(so_far) and so_far < kept_now["score"], (so_far, kept_now)
    assert {s: r for s, r in rows.items() if s != "zoe"} == {s: r for s, r in before.items() if s != "zoe"}
    missing = make(course, "regrade")
    assert missing.returncode != 0 and "STUDENT=" in missing.stderr
    nobody = make(course, "regrade", "STUDENT=nobody")
    assert nobody.returncode != 0 and "no submission of nobody" in nobody.stderr


@pytest.mark.slow
def test_regrading_one_student_previews_a_changed_check_as_make_grade_does(tmp_path):
    """A check added after ada and bob were graded: `make regrade STUDENT=ada` (a student asking for a regrade) applied
    it to ada alone, unseen, and the preview then named only bob (pass 14). It previews her, and CONFIRM=yes applies."""
    course = course_copy(tmp_path / "course")
    for student in ("ada", "bob"):
        put_submission(course, student, solution_notebook())
    assert make(course, "grade").returncode == 0
    suite = course / "autograder" / ASSIGNMENT.name / "test_forward.py"
    suite.write_text(suite.read_text() + '\n\ndef test_the_instructors_fix(student):\n    assert False, "mid-term"\n')
    book = hashlib.sha256((course / "gradebook.db").read_bytes()).hexdigest()
    run = make(course, "regrade", "STUDENT=ada")
    assert run.returncode != 0, "the regrade asked for was not done"
    assert "previewing their regrade" in run.stdout and "make regrade STUDENT=<student> CONFIRM=yes" in run.stdout
    assert hashlib.sha256((course / "gradebook.db").read_bytes()).hexdigest() == book, "a preview writes no grade"
    assert csv_rows(course)["ada"]["test_forward"] == "2"
    applied = make(course, "regrade", "STUDENT=ada", "CONFIRM=yes")
    assert applied.returncode == 0 and "Grading 1 submission of" in applied.stdout, applied.stdout[-2000:]
    rows = csv_rows(course)
    assert float(rows["ada"]["test_forward"]) < 2 and rows["bob"]["test_forward"] == "2"
    assert "bob " in make(course, "preview").stdout, "bob, still under the old check, is previewed"

# write_feedback in a course copy (its own autograder package and nbgrader_config.py): the pages it writes again.
REWRITE = """
import sys
from autograder.assignment import find_assignment
from autograder.classroom.class_run import ClassRun, Graded
from autograder.classroom.feedback_pages import write_feedback
from autograder.report import Report
from autograder.settings import GraderSettings, load_config
from pathlib import Path
root = Path.cwd()
run = ClassRun.open(find_assignment(root, sys.argv[1]), GraderSettings(config=load_config(root)))
graded = Graded(reports={s: Report(parts=[]) for s in sys.argv[2:]})
write_feedback(run, graded)
"""


@pytest.mark.slow
def test_the_feedback_pass_writes_only_the_pages_not_written_since_their_grading(demo_graded, tmp_path):
    """The grading processes write their students' pages once the class's queue is empty (while its last
    submissions are graded); the feedback pass after them writes only a page older than its student's
    report.json."""
    course = copy_graded(demo_graded, tmp_path / "course")
    pages = {p.parent.parent.name: p for p in (course / "feedback").glob(f"*/*/{STEM}.html")}
    graded = sorted(pages)
    assert {"ada", "grace", "donald"} <= set(graded)

    def report(student: str) -> Path:
        return course / "autograded" / student / ASSIGNMENT.name / "report.json"

    assert all(pages[s].stat().st_mtime_ns >= report(s).stat().st_mtime_ns for s in graded), \
        "make grade wrote each page after grading its student"

    def rewritten() -> list[str]:
        before = {s: pages[s].stat().st_mtime_ns for s in graded}
        time.sleep(0.05)
        run = subprocess.run([sys.executable, "-c", REWRITE, ASSIGNMENT.name, *graded], cwd=course,
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-3000:]
        return [s for s in graded if pages[s].stat().st_mtime_ns != before[s]]

    os.utime(report("ada"))  # ada graded again after her page was written
    assert rewritten() == ["ada"]
    assert rewritten() == []


@pytest.mark.slow
def test_regrade_takes_only_a_student_folder_directly_under_submitted(tmp_path):
    """`STUDENT=../source` regraded the source notebook away and `STUDENT='ada;touch X;:'` ran the shell
    command: a name reaches the grader as typed (never through make's expansion or the shell) and must
    be a real folder directly under submitted/."""
    course = course_copy(tmp_path / "course")
    put_submission(course, "ada", solution_notebook())
    source = course / "source" / ASSIGNMENT.name / NOTEBOOK
    before = source.read_bytes()
    outside = tmp_path / "outside"
    write_notebook(solution_notebook(), outside / ASSIGNMENT.name / NOTEBOOK)
    (course / "submitted" / "mallory").symlink_to(outside)
    (course / "submitted" / "eve").mkdir()
    (course / "submitted" / "eve" / ASSIGNMENT.name).symlink_to(source.parent)
    for student in ("../source", "/etc", "ada/b", ".", "mallory", "eve", "ada;touch X;:", "$(shell touch Y)", "--help"):
        run = make(course, "regrade", f"STUDENT={student}")
        said = [line for line in run.stderr.splitlines() if line.startswith("regrade: ")]
        assert run.returncode != 0 and len(said) == 1, (student, run.stdout, run.stderr)
    assert not [p for p in (course, tmp_path) for name in ("X", "Y") if (p / name).exists()], "a command ran"
    assert source.read_bytes() == before
    assert not (course / "autograded").exists() and not (course / "gradebook.db").exists(), "nothing was graded"


@pytest.mark.slow
def test_clean_grading_keeps_the_gradebook_and_only_a_confirmed_reset_gradebook_removes_it(demo_graded, tmp_path):
    course = copy_graded(demo_graded, tmp_path / "course")
    kept = give_manual_grades(course, "ada")
    (course / "reports").mkdir()
    (course / "reports" / "class.html").write_text("<p>report</p>")
    run = make(course, "clean-grading")
    assert run.returncode == 0, run.stdout + run.stderr
    for gone in ("autograded", "feedback", "grades.csv", "reports", ".grading"):
        assert not (course / gone).exists(), gone
    assert (course / "submitted").is_dir() and manual_grades(course, "ada") == kept
    # no terminal to ask on: refused unless make's command line says CONFIRM=yes (the environment does not count)
    for refused in (make(course, "reset-gradebook"), make(course, "reset-gradebook", "CONFIRM=no"),
                    make(course, "reset-gradebook", env={**os.environ, "CONFIRM": "yes"})):
        said = [line for line in refused.stderr.splitlines() if not line.startswith("make")]
        assert refused.returncode != 0 and len(said) == 1 and "CONFIRM=yes" in said[0], refused.stderr
    assert manual_grades(course, "ada") == kept and not list(course.glob("gradebook-*.db"))
    # A running formgrader keeps one Gradebook (one connection) for the server's life (nbgrader's BaseHandler).
    formgrader = gradebook(course)
    assert formgrader.find_submission(ASSIGNMENT.name, "ada").id
    reset = make(course, "reset-gradebook", "CONFIRM=yes")
    assert reset.returncode == 0, reset.stdout + reset.stderr
    assert rows_in(course / "gradebook.db") == 0 and (course / "submitted").is_dir()
    [copy] = course.glob("gradebook-*.db")
    assert re.fullmatch(r"gradebook-\d{4}-\d\d-\d\dT\d{4}\.db", copy.name) and copy.name in reset.stdout
    assert manual_grades(course, "ada", copy.name) == kept, "the dated copy holds the manual grades"
    again = grade_class(course)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    with gradebook(course) as now:
        [notebook] = now.find_submission(ASSIGNMENT.name, "ada").notebooks
        new_id = notebook.id  # what a grading page's URL names
    # The formgrader's own lookup for a grading page (nbgrader's SubmissionHandler: else 404 "Invalid submission").
    assert formgrader.find_submission_notebook_by_id(new_id).student.id == "ada", "the running formgrader sees it"
    formgrader.close()


def rows_in(database: Path) -> int:
    """Every row of every table but SQLite's and alembic's (the schema nbgrader made stays)."""
    with closing(sqlite3.connect(database)) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%' AND name != 'alembic_version'")]
        return sum(db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] for table in tables)


def test_a_dated_copy_of_the_gradebook_never_overwrites_an_earlier_one(tmp_path):
    db = tmp_path / "gradebook.db"
    with sqlite3.connect(db) as live:
        live.execute("CREATE TABLE grade (score REAL)")
        live.execute("INSERT INTO grade VALUES (1.5)")
    live.close()
    at = datetime(2026, 12, 1, 9, 30)
    first = backup_gradebook(tmp_path, at)
    assert first.name == "gradebook-2026-12-01T0930.db"
    assert first.stat().st_mode & 0o777 == 0o600  # every student's grades: closed to others from the start
    kept = hashlib.sha256(first.read_bytes()).hexdigest()
    with sqlite3.connect(db) as live:
        live.execute("INSERT INTO grade VALUES (2.0)")
    live.close()
    second = backup_gradebook(tmp_path, at)
    assert second.name == "gradebook-2026-12-01T0930-2.db"
    assert hashlib.sha256(first.read_bytes()).hexdigest() == kept, "the first copy was written over"
    with sqlite3.connect(second) as copy:
        assert [row[0] for row in copy.execute("SELECT score FROM grade")] == [1.5, 2.0]
    copy.close()
    db.write_bytes(b"not a database SQLite can read")
    assert backup_gradebook(tmp_path, at).read_bytes() == db.read_bytes()  # -3: the bytes, as they are
    (tmp_path / "empty").mkdir()
    assert backup_gradebook(tmp_path / "empty", at) is None


def reset_on_a_terminal(course: Path, answer: str) -> subprocess.CompletedProcess:
    """`python -m autograder reset-gradebook` with a terminal on stdin that has `answer` typed into it."""
    typing, terminal = pty.openpty()
    try:
        os.write(typing, answer.encode())
        return subprocess.run([sys.executable, "-m", "autograder", "reset-gradebook"], cwd=course, stdin=terminal,
                              capture_output=True, text=True, timeout=300)
    finally:
        os.close(terminal)
        os.close(typing)


@pytest.mark.slow
def test_reset_gradebook_on_a_terminal_asks_and_goes_on_only_at_yes(tmp_path):
    course = course_copy(tmp_path / "course")
    sqlite3.connect(course / "gradebook.db").close()
    no = reset_on_a_terminal(course, "no\n")
    assert no.returncode != 0 and "Type yes" in no.stdout and "Nothing removed" in no.stdout, no.stdout + no.stderr
    assert (course / "gradebook.db").exists() and not list(course.glob("gradebook-*.db"))
    yes = reset_on_a_terminal(course, "yes\n")
    assert yes.returncode == 0, yes.stdout + yes.stderr
    assert rows_in(course / "gradebook.db") == 0 and len(list(course.glob("gradebook-*.db"))) == 1


# ------------------------------------------------------------------------------------------- Makefile


def phony_targets() -> list[str]:
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    return [t for line in re.findall(r"^\.PHONY:(.*)$", text, re.M) for t in line.split()]


def test_every_declared_target_has_a_recipe_and_make_help_lists_it():
    text = (ROOT / "Makefile").read_text()
    targets = phony_targets()
    assert {"new-class", "regrade", "clean-grading", "reset-gradebook"} <= set(targets)
    for target in targets:
        rule = re.search(rf"^{re.escape(target)}:(?! export ).*\n((?:\t.*\n)*)", text, re.M)  # not a variable of it
        assert rule and rule.group(1).strip(), f"make {target} is declared but has no recipe"
    shown = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "help"], capture_output=True, text=True)
    for target in targets:
        if target != "help":
            assert re.search(rf"^make {re.escape(target)}\b", shown.stdout, re.M), f"make help does not list {target}"
    assert re.search(r"^make reset-gradebook\b.*manual grades", shown.stdout, re.M | re.I)


# ------------------------------------------------------------------------------------------- progress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_waiting_text_names_the_submissions_running_past_the_time_limit():
    running = [("grace", 9.0), ("donald", 1.0), ("ada", 5.0)]
    assert waiting_text(running, now=6.0, seconds=3.0) == f"donald: {WAITING}"
    assert waiting_text(running, now=9.5, seconds=3.0) == f"donald, ada: {WAITING}"
    assert waiting_text(running, now=3.0, seconds=3.0) == ""
    assert waiting_text(running, now=99.0, seconds=None) == ""


def test_a_bar_says_who_is_waiting_out_a_time_limit_with_a_fake_clock():
    now = [100.0]
    screen = FakeTerminal()
    bar = Progress("grading", 3, seconds=3.0, clock=lambda: now[0], file=screen, warm_up=5.0)
    bar.started(1, "ada")
    bar.started(2, "bob")
    now[0] += 1
    bar.finished(2)
    now[0] += 2.5
    bar.tick()
    assert WAITING not in screen.getvalue(), "a process's first submission also starts its sandboxes"
    now[0] += 5
    bar.tick()
    assert f"ada: {WAITING}" in screen.getvalue().split("\r")[-1], screen.getvalue()[-200:]
    bar.started(2, "cy")  # slot 2 is warm: its next submission is named after the time limit alone
    now[0] += 3.5
    bar.tick()
    assert f"ada, cy: {WAITING}" in screen.getvalue().split("\r")[-1], screen.getvalue()[-200:]
    bar.finished(2)
    assert f"ada: {WAITING}" in screen.getvalue().split("\r")[-1], screen.getvalue()[-200:]  # the line drawn last
    assert "bob" not in screen.getvalue()
    bar.finished(1)
    bar.close()
    assert "3/3" in screen.getvalue()


def test_run_pool_drives_the_bar_from_the_parent_and_names_a_slow_item():
    screen = FakeTerminal()
    bar = Progress("grading", 3, seconds=0.3, file=screen, warm_up=0.0)
    answers = sorted(run_pool(["quick", "slow", "brisk"], lambda item: (time.sleep(1.5 if item == "slow" else 0), item)[1],
                              3, bar))
    bar.close()
    assert answers == [(0, "quick"), (1, "slow"), (2, "brisk")]
    assert f"slow: {WAITING}" in screen.getvalue() and f"quick: {WAITING}" not in screen.getvalue()
    assert "3/3" in screen.getvalue()


def test_a_bar_draws_nothing_when_output_is_not_a_terminal():
    screen = io.StringIO()
    bar = Progress("grading", 2, seconds=0.0, file=screen)
    bar.started(1, "ada")
    bar.tick()
    bar.finished(1)
    bar.close()
    assert screen.getvalue() == ""


def test_a_demo_class_written_beside_another_assignments_real_students_never_removes_their_grades(tmp_path, monkeypatch):
    """red-c12 R4: the course already holds a real student `ada` (a login) of another assignment: their gradebook row,
    autograded/ada/<other>/ and feedback/ada/<other>/, their folder submitted/ada/<other>/. `make grade` of this
    assignment before any of its submissions arrived writes the demo class (submitted/*/<this> is empty), into
    submitted/ada/ too; `make new-class` then removes the demo. Only demo students are ever removed (lifecycle.py):
    the real ada's other assignment keeps its gradebook rows and its autograded/ and feedback/ folders."""
    from nbgrader.coursedir import CourseDirectory

    from autograder.classroom.lifecycle import new_class
    from autograder.settings import load_config

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # alembic
    course = course_copy(tmp_path / "course")
    other = "week0"
    (course / "submitted" / "ada" / other).mkdir(parents=True)
    (course / "submitted" / "ada" / other / "work.ipynb").write_text("{}")
    for folder in ("autograded", "feedback"):
        (course / folder / "ada" / other).mkdir(parents=True)
        (course / folder / "ada" / other / "page.html").write_text("ada's")
    with gradebook(course) as gb:
        gb.add_assignment(other)
        gb.add_student("ada")
        gb.add_submission(other, "ada")
    assignment = find_assignment(course, ASSIGNMENT.name)
    assert "ada" in write_demo(assignment, course / "submitted")
    coursedir = CourseDirectory(config=load_config(course), root=str(course))
    new_class(assignment, coursedir)
    with gradebook(course) as gb:
        assert {s.student_id for s in gb.assignment_submissions(other)} == {"ada"}, "the real ada's grades were removed"
    for folder in ("autograded", "feedback"):
        assert (course / folder / "ada" / other / "page.html").exists(), f"{folder}/ada/{other} was removed"


def test_make_grade_writes_no_demo_class_beside_another_assignments_real_students(tmp_path):
    """red-c12 R4: submitted/ holds another assignment's real `ada` (a login) and nothing of this one yet: make grade's
    collect step writes no demo class (its ids are theirs to have), and its first line says why nothing is graded."""
    from autograder.classroom.class_run import ClassRun
    from autograder.classroom.students import collect_class
    from autograder.settings import GraderSettings, load_config

    course = course_copy(tmp_path / "course")
    (course / "submitted" / "ada" / "week0").mkdir(parents=True)
    (course / "submitted" / "ada" / "week0" / "work.ipynb").write_text("{}")
    run = ClassRun.open(find_assignment(course, ASSIGNMENT.name), GraderSettings(config=load_config(course)))
    origin, _ = collect_class(run)
    assert sorted(p.relative_to(course / "submitted").as_posix() for p in (course / "submitted").glob("*/*")) == [
        "ada/week0"], origin
    assert not (course / DEMO_RECORD).exists()
    assert origin.startswith(f"submitted/, which holds no {ASSIGNMENT.name} submission yet (only ada/week0"), origin
    shutil.rmtree(course / "submitted" / "ada")  # an empty submitted/: the demo class, as on a fresh clone
    assert collect_class(run)[0] == "the bundled demo class (submitted/ was empty)"


def test_entering_the_assignment_leaves_the_release_another_run_is_writing_as_it_was(tmp_path):
    """Two runs at once (a second terminal, the formgrader's Autograde button) each enter the assignment in the
    gradebook through nbgrader's generate_assignment, whose force removes the folder it writes its release to
    first: a folder the runs shared lost the other run's release while it was being written. Each run writes a
    folder of its own, and removes it."""
    course = course_copy(tmp_path)
    other = course / ".grading" / "release" / ASSIGNMENT.name / "being-written.txt"
    other.parent.mkdir(parents=True)
    other.write_text("another run's")
    generate_gradebook(course)
    assert other.read_text() == "another run's"
    assert [p.name for p in (course / ".grading").iterdir()] == ["release"], "the run's own release is removed"
    with closing(sqlite3.connect(course / "gradebook.db")) as db:
        assert db.execute("select count(*) from grade_cells").fetchone()[0] > 0, "the cells are entered"
