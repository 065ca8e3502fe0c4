"""A whole term as an instructor lives it, in order (the tests of the `term` course build on each other): grade, hand grade, export, grade again; a check fixed mid-term
(previewed, then applied); a late submission under the configured late policy.

Each `make grade` after the first grades only what changed (autograder/classroom/changes.py); a hand grade is flagged for
review only when its answer changed (SaveAutoGradesAtOnce); a regrade that changed suites would make is previewed
and applied only with CONFIRM=yes (autograder/classroom/preview.py)."""
from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from test_lifecycle import STEM, copy_graded, csv_rows, gradebook, make, put_submission

from autograder.classroom import ledger
from autograder.classroom.preview import read_table
from conftest import ASSIGNMENT, NOTEBOOK, course_copy, release_notebook, solution_notebook

pytestmark = pytest.mark.slow
WRITTEN = ("answer_zeroing", "answer_outside_graph", "answer_shared_weight")
CLASS = {"ada": solution_notebook, "bea": solution_notebook, "cy": release_notebook, "dee": solution_notebook}


def ok(run) -> str:
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mtimes(course: Path) -> dict[str, int]:
    """Every file grading writes for a student (autograded/, feedback/), by its modification time."""
    return {str(p.relative_to(course)): p.stat().st_mtime_ns for folder in ("autograded", "feedback")
            for p in (course / folder).rglob("*") if p.is_file() and "_static" not in p.parts}


def hand_grade(course: Path, student: str, points: float = 1.5) -> None:
    """The formgrader's work, through nbgrader's API: each written answer scored, one commented."""
    with gradebook(course) as gb:
        for name in WRITTEN:
            grade = gb.find_grade(name, STEM, ASSIGNMENT.name, student)
            grade.manual_score, grade.needs_manual_grade = points, False
        gb.find_comment("answer_zeroing", STEM, ASSIGNMENT.name, student).manual_comment = "Clear and right."
        gb.db.commit()


def flags(course: Path, student: str) -> dict[str, tuple[float | None, bool]]:
    with gradebook(course) as gb:
        return {name: (grade.manual_score, bool(grade.needs_manual_grade)) for name in WRITTEN
                for grade in [gb.find_grade(name, STEM, ASSIGNMENT.name, student)]}


def auto_scores(course: Path) -> dict[tuple[str, str], float]:
    with gradebook(course) as gb:
        return {(s.student.id, g.name): g.auto_score for s in gb.assignment_submissions(ASSIGNMENT.name)
                for nb in s.notebooks for g in nb.grades if g.cell.cell_type == "code"}


def canvas(course: Path) -> dict[str, str]:
    ok(make(course, "grades-lms"))
    with (course / "reports" / f"{ASSIGNMENT.name}-canvas.csv").open(newline="") as handle:
        return {row[0]: row[5] for row in list(csv.reader(handle))[2:]}


@pytest.fixture(scope="module")
def term(tmp_path_factory) -> Path:
    """A real class of four, graded once, ada and bea hand graded, exported."""
    course = course_copy(tmp_path_factory.mktemp("term"))
    for student, notebook in CLASS.items():
        put_submission(course, student, notebook())
    first = ok(make(course, "grade"))
    assert "Autograded in this run: 4; unchanged since their grade, so left as they were: 0" in first
    hand_grade(course, "ada")
    hand_grade(course, "bea", 2.0)
    ok(subprocess.run([str(course / ".venv" / "bin" / "nbgrader"), "export"], cwd=course, capture_output=True,
                      text=True, timeout=300))  # as the README says after hand grading
    return course


def test_a_second_make_grade_autogrades_no_one_and_keeps_every_hand_grade(term):
    before_csv, before_canvas, before_flags = csv_rows(term), canvas(term), flags(term, "ada")
    assert float(before_csv["ada"]["score"]) == 18 + 4.5 and before_canvas["ada"] == "22.5"
    assert before_canvas["dee"] == "", "dee's written answers are not graded yet: no early total"
    assert before_canvas["cy"] == "0", "cy answered nothing: nothing is left to grade by hand"
    written = mtimes(term)
    out = ok(make(term, "grade"))
    assert "Autograded in this run: 0; unchanged since their grade, so left as they were: 4" in out
    assert "Grading " not in out, "no submission was autograded again"
    assert flags(term, "ada") == before_flags == {name: (1.5, False) for name in WRITTEN}
    after = mtimes(term)
    assert {p for p in written if after.get(p) != written[p] and "/autograded/" in f"/{p}"} == set()
    assert csv_rows(term) == before_csv and canvas(term) == before_canvas
    # The hand grades reach each page: the pages of the hand-graded students (only theirs) were written again.
    rewritten = sorted({Path(p).parts[1] for p in after if p.startswith("feedback/") and after[p] != written.get(p)})
    assert rewritten == ["ada", "bea"]
    page = (term / "feedback" / "ada" / ASSIGNMENT.name / f"{STEM}.html").read_text()
    assert "Clear and right." in page and "not graded yet" not in page
    again = ok(make(term, "grade"))
    assert "Autograded in this run: 0" in again and mtimes(term) == after, "nothing changed: nothing written"


def test_a_changed_answer_flags_only_its_own_hand_grade(term, tmp_path):
    notebook = solution_notebook()
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "answer_zeroing":
            cell["source"] = "I changed my mind: gradients are zeroed because they add up."
    put_submission(term, "bea", notebook)
    out = ok(make(term, "grade"))
    assert "Autograded in this run: 1; unchanged since their grade, so left as they were: 3" in out
    assert flags(term, "bea") == {"answer_zeroing": (2.0, True), "answer_outside_graph": (2.0, False),
                                  "answer_shared_weight": (2.0, False)}
    assert flags(term, "ada") == {name: (1.5, False) for name in WRITTEN}


def test_an_unreadable_resubmission_never_clears_the_review_of_a_changed_answer(term, tmp_path):
    """A graded, B resubmitted (flagged), a file that is not a notebook, B again: the hand grade of A is still
    flagged on B; answers the instructor graded as they are now are not. Then A again: nothing to review."""
    course = copy_graded(term, tmp_path / "course")  # the term's own course goes on unchanged
    graded = solution_notebook()
    changed = solution_notebook()
    for cell in changed["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "answer_zeroing":
            cell["source"] = "ANSWER B: no idea, copied nothing."
    review_b = {"answer_zeroing": (1.5, True), "answer_outside_graph": (1.5, False),
                "answer_shared_weight": (1.5, False)}
    put_submission(course, "ada", changed)
    ok(make(course, "grade"))
    assert flags(course, "ada") == review_b
    put_submission(course, "ada", "not json")
    ok(make(course, "grade"))
    assert flags(course, "ada") == {name: (1.5, True) for name in WRITTEN}, "every answer graded is gone"
    put_submission(course, "ada", changed)
    ok(make(course, "grade"))
    assert flags(course, "ada") == review_b, "B was never reviewed: A's grade of it is still to be reviewed"
    assert (csv_rows(course)["ada"]["manual_score"], csv_rows(course)["ada"]["score"]) == ("", ""), "not before review"
    put_submission(course, "ada", graded)
    ok(make(course, "grade"))
    assert flags(course, "ada") == {name: (1.5, False) for name in WRITTEN}, "the answers graded, as graded"
    assert csv_rows(course)["ada"]["manual_score"] == "4.5"


def without_test_cell(notebook: dict, grade_id: str = "test_exercise_count") -> dict:
    notebook["cells"] = [cell for cell in notebook["cells"]
                         if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") != grade_id]
    return notebook


def test_a_deleted_test_cell_is_the_suites_score_and_no_grader_failure(term, tmp_path):
    """A locked test cell deleted: the suites graded the student's code without it, so that part scores what they
    gave it, as on Gradescope (which reads the report alone): dee's right code keeps the point, and cy, who answered
    nothing, keeps her zero. Never a blank row: that is the grader's failure, which Canvas's import leaves without a
    grade (and Canvas leaves out of the student's total)."""
    course = copy_graded(term, tmp_path / "course")
    put_submission(course, "dee", without_test_cell(solution_notebook()))
    put_submission(course, "cy", without_test_cell(release_notebook()))
    assert "cells missing from the notebook: test_exercise_count" in ok(make(course, "grade"))
    rows = csv_rows(course)
    assert (rows["dee"]["test_exercise_count"], rows["dee"]["auto_score"]) == ("1", "18"), rows["dee"]
    assert (rows["cy"]["test_exercise_count"], rows["cy"]["auto_score"], rows["cy"]["score"]) == ("0", "0", "0")
    assert canvas(course)["cy"] == "0"


def test_a_deleted_answer_cell_flags_its_hand_grade(term, tmp_path):
    """A graded, then resubmitted without the cell of one written answer: that hand grade graded an answer that
    is gone, so it is flagged (no total before review); A again: nothing to review. Then without any grade cell:
    every hand grade is flagged."""
    course = copy_graded(term, tmp_path / "course")  # the term's own course goes on unchanged

    def without(drop) -> dict:
        notebook = solution_notebook()
        notebook["cells"] = [cell for cell in notebook["cells"]
                             if not drop(cell.get("metadata", {}).get("nbgrader", {}))]
        return notebook

    put_submission(course, "ada", without(lambda meta: meta.get("grade_id") == "answer_zeroing"))
    assert "cells missing from the notebook: answer_zeroing" in ok(make(course, "grade"))
    assert flags(course, "ada") == {"answer_zeroing": (1.5, True), "answer_outside_graph": (1.5, False),
                                    "answer_shared_weight": (1.5, False)}
    assert csv_rows(course)["ada"]["manual_score"] == "", "no full marks for an answer that is not there"
    put_submission(course, "ada", solution_notebook())
    ok(make(course, "grade"))
    assert flags(course, "ada") == {name: (1.5, False) for name in WRITTEN}, "the answers graded, as graded"
    assert csv_rows(course)["ada"]["manual_score"] == "4.5"
    put_submission(course, "ada", without(lambda meta: meta.get("grade")))
    ok(make(course, "grade"))
    assert flags(course, "ada") == {name: (1.5, True) for name in WRITTEN}, "no grade cell is saved: none is left"
    # and each part scores what the suites gave the code (none of it from the notebook before; never no score,
    # which is the grader's failure)
    report = json.loads((course / "autograded" / "ada" / ASSIGNMENT.name / "report.json").read_text())
    assert {part: score for (student, part), score in auto_scores(course).items() if student == "ada"} == {
        part["grade_id"]: part["score"] for part in report["parts"]}
    assert csv_rows(course)["ada"]["auto_score"] == "18"


def test_the_first_make_grade_after_an_upgrade_of_the_answers_checksums_keeps_every_hand_grade(term, tmp_path):
    """ada's grade as the kit before ANSWERS_FORMAT 2 recorded it (its inputs without a format and with a folder
    fingerprint of its own, her answers' checksums of the notebook as autograded): the next `make grade` grades her
    again, and every hand grade of hers stays as given, unflagged; the ledger then holds checksums of today's."""
    course = copy_graded(term, tmp_path / "course")
    notebook = nbformat.read(course / "submitted" / "ada" / ASSIGNMENT.name / NOTEBOOK, as_version=4)
    with gradebook(course) as gb:
        row = ledger.read(gb.db, ASSIGNMENT.name)["ada"]
        inputs = {key: value for key, value in json.loads(row["inputs"]).items() if key != "answers_format"}
        inputs["submission"] = "the folder's fingerprint as an older kit took it"
        older = {STEM: {grade_id: {"seen": checksum, "reviewed": None}
                        for grade_id, checksum in ledger.answer_checksums_v1(notebook).items()}}
        ledger.write(gb.db, ASSIGNMENT.name, "ada", "inputs", json.dumps(inputs))
        ledger.write_answers(gb.db, ASSIGNMENT.name, "ada", older)
        gb.db.commit()
    assert "Autograded in this run: 1; unchanged since their grade, so left as they were: 3" in ok(make(course, "grade"))
    assert flags(course, "ada") == {name: (1.5, False) for name in WRITTEN}
    assert csv_rows(course)["ada"]["manual_score"] == "4.5"
    with gradebook(course) as gb:
        answers = ledger.read_answers(gb.db, ASSIGNMENT.name, "ada")[STEM]
    assert all(answer["seen"].startswith(f"{ledger.ANSWERS_FORMAT}:") for answer in answers.values()), answers


def test_a_change_of_the_intakes_rules_is_previewed_and_applied_only_when_confirmed(term, tmp_path):
    """pass 13: ada's folder held helper.py; adding c.GraderSettings.submission_files = ["helper.py"] made her a new
    submission, autograded at once, unpreviewed. It is a change of settings for her alone (the others' folders read
    the same): previewed, her grade, autograded/ and pages as they were until CONFIRM=yes. The first make grade
    after the kit kept the intake's rules with each grade regrades no one."""
    course = copy_graded(term, tmp_path / "course")
    ada = course / "submitted" / "ada" / ASSIGNMENT.name
    (ada / "helper.py").write_text("SCALE = 1\n")
    assert "Autograded in this run: 1;" in ok(make(course, "grade")), "a new file in her folder: a new submission"
    with gradebook(course) as gb:  # the ledger as a kit before the intake's rules wrote it
        for student, row in ledger.read(gb.db, ASSIGNMENT.name).items():
            inputs = {key: value for key, value in json.loads(row["inputs"]).items() if key != "intake"}
            ledger.write(gb.db, ASSIGNMENT.name, student, "inputs", json.dumps(inputs))
        gb.db.commit()
    hand = flags(course, "ada")
    assert "Autograded in this run: 0; unchanged since their grade, so left as they were: 4" in ok(make(course, "grade"))
    assert flags(course, "ada") == hand == {name: (1.5, False) for name in WRITTEN}
    with gradebook(course) as gb:  # each row now says which rules its folder was read under
        rows = ledger.read(gb.db, ASSIGNMENT.name)
    assert all(ledger.Inputs.from_json(row["inputs"]).intake for row in rows.values()) and len(rows) == 4

    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + '\nc.GraderSettings.submission_files = ["helper.py"]\n')
    untouched, written = sha(course / "gradebook.db"), mtimes(course)
    out = ok(make(course, "grade"))
    assert "The settings changed since 1 student" in out and "previewing their regrade" in out, out
    assert "Regrade preview: 0 of 1 student would change; every score stays as it is." in out
    assert sha(course / "gradebook.db") == untouched and mtimes(course) == written, "a preview writes nothing"
    assert not (course / "autograded" / "ada" / ASSIGNMENT.name / "helper.py").exists()
    applied = ok(make(course, "grade", "CONFIRM=yes"))
    assert "Autograded in this run: 1; unchanged since their grade, so left as they were: 3" in applied
    assert (course / "autograded" / "ada" / ASSIGNMENT.name / "helper.py").read_text() == "SCALE = 1\n"
    assert flags(course, "ada") == hand
    assert "Autograded in this run: 0" in ok(make(course, "grade")), "applied: nothing is stale any more"
    (ada / "helper.py").write_text("SCALE = 2\n")  # read now: a change of her folder, a new submission
    assert "Autograded in this run: 1;" in ok(make(course, "grade"))


FIX = '''

def test_the_instructors_fix(student):
    assert False, "a check added mid-term"
'''


def test_a_fixed_check_is_previewed_and_applied_only_when_confirmed(term):
    suite = term / "autograder" / ASSIGNMENT.name / "test_forward.py"
    suite.write_text(suite.read_text() + FIX)
    untouched = {"gradebook.db": sha(term / "gradebook.db"), "grades.csv": sha(term / "grades.csv")}
    written, before = mtimes(term), auto_scores(term)
    out = ok(make(term, "grade"))
    assert "previewing their regrade" in out and "make grade CONFIRM=yes" in out
    table = read_table(term / "reports" / f"{ASSIGNMENT.name}-regrade-preview.csv")
    assert {(c.student, c.part) for c in table} == {(s, "test_forward") for s in ("ada", "bea", "dee")}, table
    assert all(c.first_changed_check == "test_the_instructors_fix (new check) fails" for c in table)
    assert all(f"  {c.student:<16}{c.part:<28}" in out for c in table)
    assert {"gradebook.db": sha(term / "gradebook.db"), "grades.csv": sha(term / "grades.csv")} == untouched
    assert mtimes(term) == written, "a preview writes nothing"
    assert ok(make(term, "preview")).count("would change") == 1
    assert ok(make(term, "grade", "CONFIRM=no")).count("previewing") == 1 and sha(term / "gradebook.db") == untouched["gradebook.db"]
    suite.write_text(suite.read_text() + "# edited after the preview\n")  # a change no preview showed
    unseen = make(term, "grade", "CONFIRM=yes")
    assert unseen.returncode != 0 and "no preview showed that of ada, bea, cy, dee " in unseen.stdout, unseen.stdout + unseen.stderr
    assert "Regrade preview: 3 of 4 students would change" in unseen.stdout
    assert sha(term / "gradebook.db") == untouched["gradebook.db"] and mtimes(term) == written, "previewed, not applied"

    hand = {s: flags(term, s) for s in ("ada", "bea")}
    applied = ok(make(term, "grade", "CONFIRM=yes"))
    assert "Autograded in this run: 4" in applied
    after = auto_scores(term)
    changed = {key for key in after if after[key] != before.get(key)}
    assert changed == {(c.student, c.part) for c in table}
    assert all(after[(c.student, c.part)] == float(c.new) for c in table)
    assert {s: flags(term, s) for s in ("ada", "bea")} == hand, "hand grades of unchanged answers stay unflagged"
    assert "Autograded in this run: 0" in ok(make(term, "grade")), "applied: nothing is stale any more"


INJECTED = '''
import sys
from autograder.classroom import grade_students as gs
real = gs.autograder_for
def faulty(*a, **k):
    inner = real(*a, **k)
    def autograde(student):  # a transient machine fault on bob's grading, in this run alone
        if student == "bob":
            return gs.NotGraded("the intake could not write its copy (No space left on device): the machine's fault",
                                grader_fault=True)
        return inner(student)
    return autograde
gs.autograder_for = faulty
from autograder.__main__ import main
raise SystemExit(main(sys.argv[1:]))
'''


def _ada_and_bob(tmp_path: Path) -> tuple[Path, Callable[..., subprocess.CompletedProcess]]:
    """A course copy with ada's and bob's right notebooks submitted, and how to run `class` in it: with a grader
    (("-m", "autograder"), or ("-c", INJECTED) for one that fails on bob) and more options."""
    root = course_copy(tmp_path)
    for student in ("ada", "bob"):
        path = root / "submitted" / student / ASSIGNMENT.name / NOTEBOOK
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbformat.from_dict(solution_notebook()), path)
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}

    def run(grader: tuple[str, str], *options: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *grader, "class", "--assignment", ASSIGNMENT.name, *options], cwd=root,
                              env=env, capture_output=True, text=True, timeout=110)

    return root, run


def test_confirm_applies_no_score_to_a_student_the_preview_could_not_grade(tmp_path):
    """red-v6 V2 (pass 19): a preview whose grading of bob failed for the grader's reason showed "2 -> -" and
    "would not be graded"; CONFIRM=yes then applied a score for him that no preview showed (record_previewed recorded
    him as previewed). A preview records the students whose outcome it showed, as the ledger records a grade; and
    CONFIRM=yes applies the others' regrade, so that a grader that keeps failing on bob holds back no one else."""
    root, run = _ada_and_bob(tmp_path)

    kit, faulty = ("-m", "autograder"), ("-c", INJECTED)

    def test_forward() -> dict[str, str]:
        with (root / "grades.csv").open(newline="") as handle:
            return {row["student_id"]: row["test_forward"] for row in csv.DictReader(handle)}

    assert run(kit).returncode == 0
    suite = root / "autograder" / ASSIGNMENT.name / "test_forward.py"
    suite.write_text(suite.read_text() + "\n\ndef test_the_instructors_fix(student):\n    assert False\n")
    preview = run(faulty)
    assert "bob: would not be graded" in preview.stdout, preview.stdout + preview.stderr
    held = run(faulty, "--confirm", "yes")  # the grader fails on bob again
    assert "no preview showed that of bob " in held.stdout, "bob's regrade applied unseen:\n" + \
        (root / "grades.csv").read_text()
    assert held.returncode == 4 and test_forward() == {"ada": "1.92", "bob": "2"}, held.stdout + held.stderr
    shown = run(kit, "--confirm", "yes")  # the fault gone: bob's regrade is shown, not applied
    assert shown.returncode == 4 and "no preview showed that of bob " in shown.stdout
    assert "bob             test_forward" in shown.stdout and test_forward()["bob"] == "2"
    applied = run(kit, "--confirm", "yes")
    assert applied.returncode == 0 and test_forward() == {"ada": "1.92", "bob": "1.92"}, applied.stdout


def test_make_feedback_writes_again_only_the_pages_whose_grades_changed(term):
    hand_grade(term, "dee", 1.0)
    written = mtimes(term)
    out = ok(make(term, "feedback"))
    assert "Wrote 1 feedback page again (dee); 3 already showed their grades." in out, out
    after = mtimes(term)
    assert sorted({Path(p).parts[1] for p in after if after[p] != written.get(p)}) == ["dee"]
    assert "Clear and right." in (term / "feedback" / "dee" / ASSIGNMENT.name / f"{STEM}.html").read_text()
    assert csv_rows(term)["dee"]["manual_score"] == "3"


def test_a_late_submission_gets_the_configured_penalty_and_is_named(tmp_path):
    course = course_copy(tmp_path / "course")
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + late_policy("per_day"))
    put_submission(course, "ada", solution_notebook())
    put_submission(course, "lou", solution_notebook())
    folder = course / "submitted"
    (folder / "ada" / ASSIGNMENT.name / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC\n")
    (folder / "lou" / ASSIGNMENT.name / "timestamp.txt").write_text("2026-11-22 10:00:00.000000 UTC\n")
    out = ok(make(course, "grade"))
    assert "Late: lou, by 1 day 10 h (late penalty 3.6 points)" in out and "Late: ada" not in out
    rows = csv_rows(course)
    assert float(rows["lou"]["late_submission_penalty"]) == pytest.approx(18 * 0.10 * 2)
    assert float(rows["lou"]["hours_late"]) == pytest.approx(34.0167, abs=0.01)
    assert float(rows["ada"]["late_submission_penalty"]) == 0 and float(rows["ada"]["hours_late"]) == 0
    with gradebook(course) as gb:
        assert str(gb.find_assignment(ASSIGNMENT.name).duedate) == "2026-11-20 23:59:00"
    ok(make(course, "class-page"))
    page = (course / "reports" / f"{ASSIGNMENT.name}.html").read_text()
    assert '<ul id="late"><li>lou: by 1 day 10 h, late penalty 3.6 points</li></ul>' in page
    # A resubmission without a time stamp is on time, as a first one is: the gradebook's old time does not stay.
    (folder / "lou" / ASSIGNMENT.name / "timestamp.txt").unlink()
    assert "Late: lou" not in ok(make(course, "grade"))
    assert csv_rows(course)["lou"]["late_submission_penalty"] in ("0", "0.0") and csv_rows(course)["lou"]["timestamp"] == ""
    (folder / "lou" / ASSIGNMENT.name / "timestamp.txt").write_text("2026-11-22 10:00:00.000000 UTC\n")
    assert "Late: lou, by 1 day 10 h (late penalty 3.6 points)" in ok(make(course, "grade"))
    # The due date is a setting: moving it is a change of settings, previewed like a fixed check.
    config.write_text(config.read_text().replace("2026-11-20 23:59:00", "2026-11-23 23:59:00"))
    out = ok(make(course, "grade"))
    assert "previewing their regrade" in out
    [change] = read_table(course / "reports" / f"{ASSIGNMENT.name}-regrade-preview.csv")
    assert (change.student, change.part, change.old, change.new) == ("lou", "late penalty", "3.6", "0")


def late_policy(method: str) -> str:
    """The settings of a course due 2026-11-20 23:59 UTC whose late work loses 10 % a day by `method`."""
    return ('\nc.GraderSettings.due_date = "2026-11-20 23:59:00 UTC"\n'
            'c.AssignLatePenalties.plugin_class = "autograder.nbgrader_glue.late.LatePenalty"\n'
            f'c.LatePenalty.penalty_method = "{method}"\nc.LatePenalty.percent_per_day = 10\n')


def lou_late(tmp_path: Path, method: str = "per_day") -> Path:
    """A course under late_policy(method) whose one student, lou, handed in full marks on 2026-11-22 10:00 UTC
    (1 day 10 h late), graded once."""
    course = course_copy(tmp_path / "course")
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + late_policy(method))
    put_submission(course, "lou", solution_notebook())
    (course / "submitted" / "lou" / ASSIGNMENT.name / "timestamp.txt").write_text("2026-11-22 10:00:00 UTC\n")
    ok(make(course, "grade"))
    return course


def late_course(tmp_path: Path, method: str) -> Path:
    """lou_late, then hand graded (2 points a written answer, 6 in all) in the formgrader."""
    course = lou_late(tmp_path, method)
    hand_grade(course, "lou", 2.0)
    ok(make(course, "feedback"))  # as the README says after hand grading: pages and grades.csv written again
    return course


def test_a_late_submission_under_the_zero_policy_keeps_no_hand_graded_points(tmp_path):
    """X26-a17-1: penalty_method "zero" is "the whole score" (late.py), but nbgrader computes the penalty when it
    autogrades, from the points it has then (the autograded 18): the 6 points the instructor gives the written
    answers afterwards escape it, and grades.csv and the Canvas file give late work 6 of 24, not 0."""
    course = late_course(tmp_path, "zero")
    row = csv_rows(course)["lou"]
    assert float(row["hours_late"]) > 0 and row["manual_score"] == "6"
    assert float(row["score"]) == 0, f"late work under the zero policy scores {row['score']} (penalty {row['late_submission_penalty']})"


def test_a_late_penalty_is_the_same_whether_the_hand_grades_came_before_or_after_the_autograde(tmp_path):
    """X26-a17-2: per_day takes percent_per_day of the notebook's score (late.py); the penalty is computed from the
    points the gradebook has when nbgrader autogrades, so one late notebook, hand graded, is penalised 10 % a day of
    18 points (3.6) after its first `make grade` and of 24 (4.8) once graded again: `make grade FORCE=1` with no input
    changed moves lou's total from 20.4 to 19.2, unpreviewed, and the total depends on the order of the
    instructor's work rather than on the policy."""
    course = late_course(tmp_path, "per_day")
    before = csv_rows(course)["lou"]
    ok(make(course, "grade", "FORCE=1"))
    after = csv_rows(course)["lou"]
    assert after["score"] == before["score"], (before["score"], after["score"])


def test_confirm_applies_no_late_penalty_the_preview_did_not_show(tmp_path):
    """X26-a17-2 through CONFIRM=yes: a suite edited without changing any verdict is previewed ("every score stays as
    it is"); the instructor then hand grades lou's written answers; CONFIRM=yes regrades lou and nbgrader computes
    the penalty again from the points the gradebook has now, so the penalty and total move (3.6 -> 4.8), which no
    preview showed: the preview's inputs (submission, suites, reference, settings) leave out the hand grades the
    penalty is taken from."""
    course = lou_late(tmp_path)
    suite = course / "autograder" / ASSIGNMENT.name / "test_forward.py"
    suite.write_text(suite.read_text() + "\n# a comment: no verdict changes\n")
    out = ok(make(course, "grade"))
    assert "every score stays as it is" in out, out[-2000:]
    hand_grade(course, "lou", 2.0)
    ok(make(course, "feedback"))
    seen = csv_rows(course)["lou"]
    ok(make(course, "grade", "CONFIRM=yes"))
    applied = csv_rows(course)["lou"]
    assert (applied["late_submission_penalty"], applied["score"]) == (seen["late_submission_penalty"], seen["score"]), \
        (seen["late_submission_penalty"], seen["score"], applied["late_submission_penalty"], applied["score"])


def test_clearing_the_due_date_setting_is_previewed_or_said(tmp_path):
    """X26-a17-7: `make grade` writes c.GraderSettings.due_date into the gradebook's assignment (late.set_due_date), and
    an empty setting means "the gradebook's own due date (`nbgrader db assignment add --duedate`), else nothing is
    late" (docs/instructors.md). Once the kit has written one, clearing the setting (to waive lateness, or to go back to
    the gradebook's own) changes nothing and says nothing: the due date the kit wrote is now "the gradebook's own",
    the inputs compare equal, no preview, and lou stays late with her penalty."""
    course = lou_late(tmp_path)
    config = course / "nbgrader_config.py"
    assert float(csv_rows(course)["lou"]["late_submission_penalty"]) > 0
    config.write_text(config.read_text().replace('c.GraderSettings.due_date = "2026-11-20 23:59:00 UTC"\n', ""))
    out = ok(make(course, "grade"))
    assert "previewing their regrade" in out or "due date" in out.lower(), out[-1500:]

def fixed_check_after_hand_work(tmp_path: Path, **grade: float | bool) -> tuple[str, set, str, str]:
    """ada graded in full, her test_forward grade then given `grade`'s fields in the formgrader, and a check added
    to its suite: her test_forward in grades.csv before, the preview's (old, new) rows for it, grades.csv's after
    CONFIRM=yes, and the preview run's output."""
    course = course_copy(tmp_path / "course")
    put_submission(course, "ada", solution_notebook())
    ok(make(course, "grade"))
    with gradebook(course) as gb:
        row = gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "ada")
        for name, value in grade.items():
            setattr(row, name, value)
        gb.db.commit()
    ok(make(course, "feedback"))
    before = csv_rows(course)["ada"]["test_forward"]
    suite = course / "autograder" / ASSIGNMENT.name / "test_forward.py"
    suite.write_text(suite.read_text() + FIX)
    out = ok(make(course, "grade"))
    table = read_table(course / "reports" / f"{ASSIGNMENT.name}-regrade-preview.csv")
    ok(make(course, "grade", "CONFIRM=yes"))
    shown = {(c.old, c.new) for c in table if c.student == "ada" and c.part == "test_forward"}
    return before, shown, csv_rows(course)["ada"]["test_forward"], out


def test_a_fixed_checks_preview_shows_the_score_the_regrade_gives_a_part_scored_by_hand(tmp_path):
    """X26-a17-3: the preview compares autograded scores (preview._scores reads grade.auto_score), but a part the
    instructor scored by hand in the formgrader keeps that score through the regrade (grades.csv, the Canvas file):
    ada's test_forward (2 points), overridden to 1, is previewed as "2 -> 1.92" and stays 1 once applied, so the instructor
    confirms a change that never happens (and reads the override as lost)."""
    before, shown, after, out = fixed_check_after_hand_work(tmp_path, manual_score=1.0, needs_manual_grade=False)
    assert before == "1"
    assert shown <= {(before, after)}, (shown, before, after, out[-1500:])  # a score that stays has no row
    assert re.search(r"ada +test_forward +1 stays \(scored by hand; its checks would give 2 -> 1\.92\)", out), out[-1500:]


RACED = '''
import sys
from autograder.classroom import preview
real = preview.compare
def raced(before, live, scratch, *rest):
    # What a second run does when its own preview starts now (the formgrader's Autograde button, `make regrade
    # STUDENT=...`, another terminal's `make preview`): preview_class takes a scratch folder, configures it and
    # copies the live gradebook there (scratch_folder, scratch_config, copy_gradebook).
    config = preview.scratch_config(_config, preview.scratch_folder(_root))
    preview.copy_gradebook(live.db_url, config.CourseDirectory.db_url)
    return real(before, live, scratch, *rest)
from autograder.classroom import grade_class as gc
real_preview = gc.preview_class
def remember(run, plan, origin, apply):
    global _config, _root
    _config, _root = run.settings.config, run.assignment.root
    return real_preview(run, plan, origin, apply)
gc.preview_class = remember
preview.compare = raced
from autograder.__main__ import main
raise SystemExit(main(sys.argv[1:]))
'''


def test_a_preview_another_run_starts_meanwhile_never_lets_confirm_apply_an_unseen_change(tmp_path):
    """X26-a17-4: every run's preview graded into the one folder .grading/preview (grade_class.preview_class), with no
    lock between runs (each now takes a folder of its own: preview.scratch_folder). A second preview that starts
    while `make grade`'s is grading (the formgrader's Autograde button on one student, which runs `regrade STUDENT`
    and previews a stale one; `make preview` in another terminal) emptied that folder and copied the live gradebook
    into it: the first run then compared the live gradebook with a copy of itself, prints "every score stays as it is", records its students as previewed, and `make grade CONFIRM=yes`
    applies ada's 2 -> 1.92 that no preview showed."""
    root = course_copy(tmp_path)
    put_submission(root, "ada", solution_notebook())
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}

    def run(grader: tuple[str, str], *options: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *grader, "class", "--assignment", ASSIGNMENT.name, *options], cwd=root,
                              env=env, capture_output=True, text=True, timeout=110)

    def test_forward() -> str:
        with (root / "grades.csv").open(newline="") as handle:
            return {row["student_id"]: row["test_forward"] for row in csv.DictReader(handle)}["ada"]

    assert run(("-m", "autograder")).returncode == 0 and test_forward() == "2"
    suite = root / "autograder" / ASSIGNMENT.name / "test_forward.py"
    suite.write_text(suite.read_text() + FIX)
    shown = run(("-c", RACED))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    told_nothing_changes = "every score stays as it is" in shown.stdout
    applied = run(("-m", "autograder"), "--confirm", "yes")
    assert not (told_nothing_changes and test_forward() == "1.92"), \
        "the preview said every score stays, and CONFIRM=yes changed ada's test_forward:\n" + shown.stdout + applied.stdout


def test_make_feedback_writes_the_hand_grades_into_the_page_of_a_student_whose_folder_is_gone(tmp_path):
    """X26-a17-6: `make feedback` (and `make grade`) list the students from submitted/ (students.list_students), so a
    real student whose folder is no longer there (moved to an archive after grading; a real student is never removed
    for it, and stays in the gradebook, grades.csv and the Canvas file) never has the page rewritten: the hand grade
    and comment given since reach grades.csv but not the page the student reads."""
    import shutil

    course = course_copy(tmp_path / "course")
    put_submission(course, "ada", solution_notebook())
    ok(make(course, "grade"))
    shutil.rmtree(course / "submitted" / "ada")
    hand_grade(course, "ada", 2.0)
    out = ok(make(course, "feedback"))
    assert csv_rows(course)["ada"]["manual_score"] == "6"
    page = (course / "feedback" / "ada" / ASSIGNMENT.name / f"{STEM}.html").read_text()
    assert "Clear and right." in page, out


def test_the_page_grades_csv_and_the_canvas_file_count_the_same_points_graded_so_far(tmp_path):
    """X26-a17-5: a hand grade flagged for review (the student rewrote the answer after it was graded) counts as its
    autograded score alone (none for a written answer) on the page, in grades.csv's raw_score and in the Canvas
    file's partial total (export.so_far). The page's numerator was nbgrader's notebook score, which still counted the
    flagged manual score: "Score: 24 / 22 graded so far", more than all the points graded so far."""
    import re

    course = course_copy(tmp_path / "course")
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.GraderSettings.canvas_partial = True\n")
    put_submission(course, "bea", solution_notebook())
    ok(make(course, "grade"))
    hand_grade(course, "bea", 2.0)
    changed = solution_notebook()
    for cell in changed["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "answer_zeroing":
            cell["source"] = "I changed my mind: gradients are zeroed because they add up."
    put_submission(course, "bea", changed)
    ok(make(course, "grade"))
    page = (course / "feedback" / "bea" / ASSIGNMENT.name / f"{STEM}.html").read_text()
    text = " ".join(re.sub(r"<[^>]+>", "", page).split())
    shown = re.search(r"Score: ([\d.]+) / ([\d.]+) graded so far; ([\d.]+) more points not graded yet", text)
    assert shown and tuple(map(float, shown.groups())) == (22, 22, 2), shown and shown.group(0)
    row = csv_rows(course)["bea"]
    assert (row["raw_score"], row["score"]) == ("22", ""), row
    assert float(canvas(course)["bea"]) == 22


def test_make_grade_writes_the_page_of_a_student_whose_folder_is_gone_and_names_them(tmp_path):
    """X26-a17-6 through `make grade` (the README: "make feedback (or the next make grade)"): a graded student whose
    submitted/ folder is gone is not graded again, and their page follows the gradebook's hand grades; the run names
    them. `make feedback` names a graded student whose page it cannot write, and why."""
    import shutil

    course = course_copy(tmp_path / "course")
    put_submission(course, "ada", solution_notebook())
    put_submission(course, "bea", solution_notebook())
    ok(make(course, "grade"))
    shutil.rmtree(course / "submitted" / "ada")
    hand_grade(course, "ada", 2.0)
    out = ok(make(course, "grade"))
    assert "no folder in submitted/ now: ada" in out, out[-2000:]
    assert "Clear and right." in (course / "feedback" / "ada" / ASSIGNMENT.name / f"{STEM}.html").read_text()
    assert csv_rows(course)["ada"]["manual_score"] == "6"
    (course / "autograded" / "bea" / ASSIGNMENT.name / "report.json").unlink()
    out = ok(make(course, "feedback"))
    assert "No feedback page for bea: no readable report.json" in out, out[-2000:]


def test_a_due_date_moved_in_the_gradebook_is_previewed_before_any_penalty_moves(tmp_path):
    """red-b18 X27-b18-3: with c.GraderSettings.due_date empty the due date in force is the gradebook's own
    (docs/instructors.md; `nbgrader db assignment add --duedate` or the formgrader moves it), and `make grade` previews a
    change of it (changes.course_inputs: due_date). But grade_class settles the late penalties (settle_late_penalties)
    BEFORE plan_class and the preview: lou's penalty moves 3.6 -> 0 in the live gradebook at once, the line says the
    hand grades moved it ("from the points graded now, hand grades included"), and the preview's scratch copy starts
    from the moved penalty, so no preview ever shows it and a plain `make grade` (no CONFIRM) has applied it."""
    course = lou_late(tmp_path)
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text().replace('c.GraderSettings.due_date = "2026-11-20 23:59:00 UTC"\n', ""))
    with gradebook(course) as gb:  # the instructor waives lateness in the gradebook (the setting is empty)
        gb.update_or_create_assignment(ASSIGNMENT.name, duedate=datetime(2026, 11, 30, 23, 59))
        assert gb.find_submission(ASSIGNMENT.name, "lou").late_submission_penalty == pytest.approx(3.6)
    out = make(course, "grade")
    with gradebook(course) as gb:
        penalty = gb.find_submission(ASSIGNMENT.name, "lou").late_submission_penalty
    assert penalty == pytest.approx(3.6), f"applied before any preview or CONFIRM: penalty {penalty}; {out.stdout[-1200:]}"


def test_a_late_policy_changed_in_the_config_is_previewed_before_any_penalty_moves(tmp_path):
    """red-b18 X27-b18-6: the late policy's configuration is an input `make grade` previews (changes.course_inputs:
    "late", LATE_SECTIONS), but grade_class settles the penalties with the new configuration BEFORE plan_class and the
    preview (settle_late_penalties uses settings.config): percent_per_day 10 -> 50 moves lou's penalty 3.6 -> 18 in the
    live gradebook at once, said as "worked out again from the points graded now, hand grades included", and the
    preview that follows shows "every score stays as it is". (`make feedback` applies it with no preview at all.)"""
    course = lou_late(tmp_path)
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text().replace("percent_per_day = 10\n", "percent_per_day = 50\n"))
    out = make(course, "grade")
    with gradebook(course) as gb:
        penalty = gb.find_submission(ASSIGNMENT.name, "lou").late_submission_penalty
    assert penalty == pytest.approx(3.6), f"applied before any preview or CONFIRM: penalty {penalty}; {out.stdout[-1200:]}"


def test_a_fixed_checks_preview_shows_the_score_in_force_of_a_part_given_extra_credit(tmp_path):
    """red-b18 X27-b18-4: the preview compares "the score in force, the same one grades.csv shows" (fix-preview), but
    preview._standing reads manual_score or auto_score and leaves out the part's extra credit, which nbgrader's
    Grade.score (grades.csv, the Canvas file) adds and a regrade keeps: ada's test_forward (2 points autograded, +1
    extra credit in the formgrader) shows 3 in grades.csv; the preview's row says 2 -> 1.92, and CONFIRM gives 2.92."""
    before, shown, after, out = fixed_check_after_hand_work(tmp_path, extra_credit=1.0)
    assert before == "3"
    assert shown == {(before, after)}, (shown, before, after, out[-1500:])


def test_make_feedback_applies_no_late_policy_change_the_preview_did_not_show(tmp_path):
    """fix-settle (X27-b18-6's `make feedback` side): the late policy changed in the config moves no penalty through
    `make feedback`, which previews nothing; it names the move it leaves to `make grade`'s preview."""
    course = lou_late(tmp_path)
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text().replace("percent_per_day = 10\n", "percent_per_day = 50\n"))
    out = ok(make(course, "feedback"))
    with gradebook(course) as gb:
        penalty = gb.find_submission(ASSIGNMENT.name, "lou").late_submission_penalty
    assert penalty == pytest.approx(3.6), out
    assert "Late penalty left as graded, until `make grade` previews" in out and "lou 3.6 -> 18" in out, out


# Stands in for what differs between any two runs of a student's code that reads the clock, os.urandom, `secrets` or
# its (random) uid: the apply run's worker environment carries one more variable. A real class: `if
# secrets.randbelow(2): <wrong forward>` gives the preview's run and CONFIRM's run independent outcomes.
SECOND_RUN = '''
import sys
import autograder.sandbox as sandbox
sandbox._ENVIRONMENT["KIT_SECOND_RUN"] = "1"
from autograder.__main__ import main
raise SystemExit(main(sys.argv[1:]))
'''
SWAYING = '''

import os as _os
if _os.environ.get("KIT_SECOND_RUN"):  # in a class: `import secrets` and `if secrets.randbelow(2):`
    Linear.forward = lambda self, x: x
'''


def test_confirm_applies_no_score_other_than_the_one_its_preview_showed(tmp_path):
    """red-c20 X29-c20-1 (pass 29): CONFIRM=yes grades the previewed students again and applies what that second run
    gives, checking only that their inputs are those the preview graded (preview.previewed_reports). A student whose code
    answers differently from run to run (the clock, `secrets`) is shown "every score stays as it is" and then has
    test_forward taken from 2 to 0 by CONFIRM=yes, a change no preview showed. Applying a regrade should apply the
    scores the preview showed, or hold back (and name) a student whose regrade came out otherwise."""
    root = course_copy(tmp_path)
    notebook = solution_notebook()
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear":
            cell["source"] = "".join(cell["source"]) + SWAYING
    put_submission(root, "ada", notebook)
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}

    def run(grader: tuple[str, ...], *options: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *grader, "class", "--assignment", ASSIGNMENT.name, *options], cwd=root,
                              env=env, capture_output=True, text=True, timeout=110)

    def test_forward() -> str:
        with (root / "grades.csv").open(newline="") as handle:
            return {row["student_id"]: row["test_forward"] for row in csv.DictReader(handle)}["ada"]

    first = run(("-m", "autograder"))
    assert first.returncode == 0 and test_forward() == "2", first.stdout + first.stderr
    suite = root / "autograder" / ASSIGNMENT.name / "test_step.py"
    suite.write_text(suite.read_text() + "\n\ndef test_the_instructors_fix(student):\n    assert True\n")
    preview = run(("-m", "autograder"))
    assert "Regrade preview: 0 of 1 student would change; every score stays as it is." in preview.stdout, \
        preview.stdout + preview.stderr
    applied = run(("-c", SECOND_RUN), "--confirm", "yes")
    assert test_forward() == "2", ("CONFIRM=yes applied a test_forward score no preview showed "
                                   f"(2 -> {test_forward()}):\n{applied.stdout}")


def test_a_fixed_checks_preview_shows_the_points_so_far_it_moves_of_an_override_waiting_for_review(tmp_path):
    """red-c20 X29-c20-2 (pass 29): ada's test_forward (2 points) overridden to 1; she then changes her code, so the
    override waits for review and the part counts its autograded score so far (export.grade_so_far: grades.csv's
    raw_score, the feedback page's total, the Canvas file's partial total). A check fixed mid-term is previewed as
    "ada test_forward 1 stays (scored by hand ...)", with no row in the preview's table, yet CONFIRM=yes moves her
    points so far (raw_score) from 2 to 1.92 there: a change of what the page and the LMS export show that the preview
    said would not happen."""
    course = course_copy(tmp_path / "course")
    put_submission(course, "ada", solution_notebook())
    ok(make(course, "grade"))
    with gradebook(course) as gb:
        grade = gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "ada")
        grade.manual_score, grade.needs_manual_grade = 1.0, False
        gb.db.commit()
    changed = solution_notebook()
    for cell in changed["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear":
            cell["source"] = "".join(cell["source"]) + "\n# tidied up\n"
    put_submission(course, "ada", changed)
    ok(make(course, "grade"))
    with gradebook(course) as gb:
        assert gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "ada").needs_manual_grade, "the override waits"
    before = csv_rows(course)["ada"]["raw_score"]
    suite = course / "autograder" / ASSIGNMENT.name / "test_forward.py"
    suite.write_text(suite.read_text() + FIX)
    out = ok(make(course, "grade"))
    table = read_table(course / "reports" / f"{ASSIGNMENT.name}-regrade-preview.csv")
    ok(make(course, "grade", "CONFIRM=yes"))
    after = csv_rows(course)["ada"]["raw_score"]
    shown = [c for c in table if c.student == "ada"]
    assert after == before or shown, (f"ada's points so far moved {before} -> {after} and the preview showed no "
                                      f"change of hers:\n{out[-1500:]}")


def test_confirm_replays_the_previewed_students_when_it_previews_a_held_back_one_first(tmp_path):
    """red-a22 X31-a22-1 (pass 31): ada's regrade is previewed alone (`make regrade STUDENT=ada`), bob's not. `make
    grade CONFIRM=yes` holds bob back and previews him first (preview_class -> record_previewed), which rewrites
    .grading/previewed-<assignment>.json with bob alone; only then does grade_class read previewed_reports for ada,
    finds no record of hers, and runs her checks again: the very X29-c20-1 outcome (a score no preview showed)."""
    root = course_copy(tmp_path)
    notebook = solution_notebook()
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear":
            cell["source"] = "".join(cell["source"]) + SWAYING
    put_submission(root, "ada", notebook)
    put_submission(root, "bob", solution_notebook())
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}

    def run(grader: tuple[str, ...], *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *grader, *args[:1], "--assignment", ASSIGNMENT.name, *args[1:]],
                              cwd=root, env=env, capture_output=True, text=True, timeout=110)

    def test_forward() -> str:
        with (root / "grades.csv").open(newline="") as handle:
            return {row["student_id"]: row["test_forward"] for row in csv.DictReader(handle)}["ada"]

    first = run(("-m", "autograder"), "class")
    assert first.returncode == 0 and test_forward() == "2", first.stdout + first.stderr
    suite = root / "autograder" / ASSIGNMENT.name / "test_step.py"
    suite.write_text(suite.read_text() + "\n\ndef test_the_instructors_fix(student):\n    assert True\n")
    preview = run(("-m", "autograder"), "regrade", "ada")
    assert "Regrade preview: 0 of 1 student would change" in preview.stdout, preview.stdout + preview.stderr
    applied = run(("-c", SECOND_RUN), "class", "--confirm", "yes")
    assert "bob" in applied.stdout, applied.stdout + applied.stderr
    assert test_forward() == "2", ("CONFIRM=yes applied a test_forward score to ada no preview showed "
                                   f"(2 -> {test_forward()}):\n{applied.stdout}")


def test_a_preview_that_could_not_grade_a_student_leaves_no_earlier_outcome_of_his_for_confirm_to_apply(tmp_path):
    """red-b23 X32-b23-2 (pass 32): record_previewed now adds to the record (7352abd), and it is given only the students
    whose outcome the preview showed (Graded.inputs: never one the grader failed on). So a second preview under the
    same inputs that could not grade bob ("2 -> -", "would not be graded") keeps the first preview's outcome of his,
    and CONFIRM=yes applies that report, which the table the instructor last read did not show; before 7352abd the
    record was rewritten and bob was held (red-v6 V2's rule: apply only what the preview showed). The record should
    keep only the students this preview did not take up (`make regrade STUDENT=x`), not the ones it failed on."""
    from autograder.classroom.preview import previewed_reports, record_previewed
    from autograder.report import Report

    given = ledger.Inputs(submission="s" * 64, suites="t" * 64, reference="r" * 64, settings="c" * 64,
                          answers_format="2")
    record_previewed(tmp_path, ASSIGNMENT.name, {"bob": given}, {"bob": Report(parts=[])})  # first preview: shown
    assert set(previewed_reports(tmp_path, ASSIGNMENT.name, {"bob": given})) == {"bob"}
    record_previewed(tmp_path, ASSIGNMENT.name, {}, {})  # second preview, same inputs: the grader failed on bob
    assert previewed_reports(tmp_path, ASSIGNMENT.name, {"bob": given}) == {}, \
        "CONFIRM=yes applies an outcome the latest preview of bob did not show"


def test_a_regrade_that_flags_an_override_shows_the_points_so_far_it_moves_even_when_the_checks_score_stays(tmp_path):
    """red-b24 X33-b24-1 (pass 33): preview.compare looks at a part's points so far (export.grade_so_far) only when its
    autograded score changed (`elif old_auto != new_auto`). A regrade can move the review flag of a hand grade without
    moving its autograded score: cy answered nothing (every check 0), and the instructor gave her test_forward 1 point
    by hand. A setting lowered mid-term (notebook_kb) makes her file not graded: every autograded score stays 0, but
    her override is flagged (its answer is gone: not_graded.record_not_graded), so it counts as its checks' 0 so far.
    The preview says "every score stays as it is", and CONFIRM=yes moves her points so far (grades.csv's raw_score,
    the page's total, the Canvas file's partial total) from 1 to 0 and flags the override: a change it did not show."""
    course = course_copy(tmp_path / "course")
    put_submission(course, "cy", release_notebook())
    ok(make(course, "grade"))
    with gradebook(course) as gb:
        grade = gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "cy")
        assert grade.auto_score == 0
        grade.manual_score, grade.needs_manual_grade = 1.0, False
        gb.db.commit()
    ok(make(course, "feedback"))
    before = csv_rows(course)["cy"]["raw_score"]
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.GraderSettings.notebook_kb = 4\n")
    out = ok(make(course, "grade"))
    table = read_table(course / "reports" / f"{ASSIGNMENT.name}-regrade-preview.csv")
    ok(make(course, "grade", "CONFIRM=yes"))
    after = csv_rows(course)["cy"]["raw_score"]
    with gradebook(course) as gb:
        flagged = gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "cy").needs_manual_grade
    assert after == before or [c for c in table if c.student == "cy"], (
        f"cy's points so far moved {before} -> {after} (her override flagged: {flagged}) and the preview showed no "
        f"change of hers:\n{out[-1500:]}")


def test_a_regrade_that_moves_a_written_answers_points_so_far_shows_it_in_the_preview(tmp_path):
    """red-b24 X33-b24-2 (pass 33): preview.compare walks only the autograded parts (`graded_parts(...)[0]`), so no
    change of a written answer's grade is ever previewed. ada's three written answers are scored 1.5 each by hand; a
    setting lowered mid-term (notebook_kb) makes her file not graded, which flags each of them for review (its answer
    is gone: not_graded.record_not_graded) and gives it an autograded 0, so each counts 0 so far (grades.csv's
    raw_score, the page's total, the Canvas file's partial total). The preview lists her autograded parts' moves only
    (18 points) and ends "hand grades stay, unflagged where the answer is unchanged"; CONFIRM=yes takes 22.5 points
    off her raw_score, the 4.5 of her written answers among them, and flags them: a change it did not show."""
    course = course_copy(tmp_path / "course")
    put_submission(course, "ada", solution_notebook())
    ok(make(course, "grade"))
    hand_grade(course, "ada")
    ok(make(course, "feedback"))
    before = csv_rows(course)["ada"]["raw_score"]
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.GraderSettings.notebook_kb = 4\n")
    out = ok(make(course, "grade"))
    table = read_table(course / "reports" / f"{ASSIGNMENT.name}-regrade-preview.csv")
    shown = sum(float(c.new) - float(c.old) for c in table if c.student == "ada" and c.part != "late penalty"
                and c.new != "-" and c.old != "-")
    ok(make(course, "grade", "CONFIRM=yes"))
    after = csv_rows(course)["ada"]["raw_score"]
    assert {name: flagged for name, (_, flagged) in flags(course, "ada").items()} == dict.fromkeys(WRITTEN, True)
    assert {c.part.removesuffix(" so far") for c in table if c.student == "ada"} >= set(WRITTEN), (
        f"ada's raw_score moved {before} -> {after}, the preview's rows of hers add up to {shown:+g} and name none of "
        f"her written answers:\n{out[-2500:]}")


def test_a_preview_never_says_an_override_waits_for_review_when_the_regrade_clears_its_flag(tmp_path):
    """red-b24 X33-b24-3 (pass 33): preview.Kept's line for a hand score whose points so far move says it "stays,
    waiting for your review (scored by hand, the code changed since; counted so far as its checks' score: a -> b)",
    whatever the regrade does to the flag. ada's test_forward (2 by her checks) is overridden to 1; a setting lowered
    mid-term (notebook_kb) leaves her file not graded, which flags the override (its answer is gone); raised again,
    the regrade grades the same file, so the override stands on the answer it was given on and its flag is cleared
    (ledger.needs_review). The preview of that regrade says the override waits for review, that her code changed, and
    that it counts 2 so far, beside a row "so far 0 -> 1": after CONFIRM=yes it waits for nothing and counts 1."""
    course = course_copy(tmp_path / "course")
    put_submission(course, "ada", solution_notebook())
    ok(make(course, "grade"))
    with gradebook(course) as gb:
        grade = gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "ada")
        grade.manual_score, grade.needs_manual_grade = 1.0, False
        gb.db.commit()
    config = course / "nbgrader_config.py"
    settings = config.read_text()
    config.write_text(settings + "\nc.GraderSettings.notebook_kb = 4\n")
    ok(make(course, "grade"))
    ok(make(course, "grade", "CONFIRM=yes"))
    with gradebook(course) as gb:
        assert gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "ada").needs_manual_grade, "its answer is gone"
    config.write_text(settings)
    out = ok(make(course, "grade"))
    ok(make(course, "grade", "CONFIRM=yes"))
    with gradebook(course) as gb:
        assert not gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "ada").needs_manual_grade, "the same answer"
    line = next(line for line in out.splitlines() if re.search(r"ada +test_forward +1 stays", line))
    assert "waiting for your review" not in line and "the code changed" not in line, (line, out[-2000:])


def test_a_preview_shows_no_change_of_a_student_it_could_not_grade(tmp_path):
    """red-b25 X34-b25-1 (pass 34): the grader fails on bob in the preview's scratch run (the machine's fault:
    not_graded.record_not_graded gives every part of his no score). preview.compare reads that scratch gradebook as
    his regrade, so the preview's table and terminal show "bob test_forward 2 -> -" (and every other part of his
    going to no score) and count him among the students who "would change"; CONFIRM=yes never applies that (he has
    no previewed outcome: grade_class holds him, his grades left as they were), so the preview shows the instructor
    a loss of all his points that no command will ever make."""
    root, run = _ada_and_bob(tmp_path)

    assert run(("-m", "autograder")).returncode == 0
    suite = root / "autograder" / ASSIGNMENT.name / "test_forward.py"
    suite.write_text(suite.read_text() + "\n\ndef test_the_instructors_fix(student):\n    assert False\n")
    preview = run(("-c", INJECTED))
    assert "bob: would not be graded" in preview.stdout, preview.stdout + preview.stderr
    table = read_table(root / "reports" / f"{ASSIGNMENT.name}-regrade-preview.csv")
    held = run(("-c", INJECTED), "--confirm", "yes")
    with (root / "grades.csv").open(newline="") as handle:
        bob = next(row for row in csv.DictReader(handle) if row["student_id"] == "bob")
    assert held.returncode == 4 and bob["test_forward"] == "2", held.stdout + held.stderr
    shown = [c for c in table if c.student == "bob"]
    assert not shown, (f"the preview showed {len(shown)} changes of bob's ({shown[0]}) that CONFIRM=yes never "
                       f"applies (grades.csv after it: test_forward {bob['test_forward']}, raw_score "
                       f"{bob['raw_score']}):\n{preview.stdout[-2000:]}")


def test_a_preview_says_a_regrade_flags_an_extra_credit_for_review(tmp_path):
    """red-b25 X34-b25-2 (pass 34): extra credit is a hand grade (ledger.hand_graded), which a regrade that leaves the
    file not graded flags for review (not_graded.record_not_graded, ledger.answer_gone), so it counts only its
    checks' score so far. preview.Part.hand is `manual_score is not None` alone, so compare never emits its Kept line:
    ada's test_forward (2 by her checks, +1 extra credit) under a lowered notebook_kb is previewed as "3 -> 1" and
    "so far 3 -> 0" with no word of a review; CONFIRM=yes flags the extra credit for review, and only the
    instructor's review counts it again."""
    course = course_copy(tmp_path / "course")
    put_submission(course, "ada", solution_notebook())
    ok(make(course, "grade"))
    with gradebook(course) as gb:
        gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "ada").extra_credit = 1.0
        gb.db.commit()
    ok(make(course, "feedback"))
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.GraderSettings.notebook_kb = 4\n")
    out = ok(make(course, "grade"))
    ok(make(course, "grade", "CONFIRM=yes"))
    with gradebook(course) as gb:
        grade = gb.find_grade("test_forward", STEM, ASSIGNMENT.name, "ada")
        flagged, extra = grade.needs_manual_grade, grade.extra_credit
    assert flagged and extra == 1.0, (flagged, extra)
    lines = [line for line in out.splitlines() if re.search(r"ada +test_forward\b", line)]
    assert any("review" in line for line in lines), (
        f"CONFIRM=yes flagged ada's test_forward extra credit for review; the preview's lines of it say nothing of "
        f"a review: {lines}")


def test_a_preview_never_says_every_score_stays_when_confirm_takes_a_students_score_away(tmp_path):
    """red-b25 X34-b25-3 (pass 34): the preview's header counts a student as changing only for a Change row; a
    regrade that raises the review flag of a hand grade whose points so far stay (a hand 0: cy answered nothing and
    her written answers were scored 0) has only Kept lines. Under a lowered notebook_kb her file is not graded, so
    every written answer is flagged (its answer is gone): the preview says "0 of 1 student would change; every score
    stays as it is.", and CONFIRM=yes blanks her score in grades.csv (the score column and manual_score: a grade
    waiting for review is not final) and takes her total out of the Canvas file."""
    course = course_copy(tmp_path / "course")
    put_submission(course, "cy", release_notebook())
    ok(make(course, "grade"))
    hand_grade(course, "cy", 0.0)
    ok(make(course, "feedback"))
    before = csv_rows(course)["cy"]["score"]
    assert before == "0", before
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.GraderSettings.notebook_kb = 4\n")
    out = ok(make(course, "grade"))
    ok(make(course, "grade", "CONFIRM=yes"))
    after = csv_rows(course)["cy"]["score"]
    assert after == before or "every score stays as it is" not in out, (
        f"cy's score in grades.csv moved {before!r} -> {after!r} after a preview that said:\n{out[-1500:]}")


def test_a_regrade_that_leaves_a_late_file_not_graded_moves_no_penalty_its_preview_did_not_show(tmp_path):
    """red-b25 X34-b25-4 (pass 34): a regrade that leaves a late file not graded (a lowered notebook_kb) sets its
    parts to 0 (not_graded.record_not_graded) but leaves its late penalty as worked out from its earlier score: the
    preview shows no "late penalty" row and CONFIRM=yes keeps lou's 4.8 (20 % of 24) on a notebook whose score is 6
    now. The next `make feedback` (or `make grade`) then settles it to 1.2, a move of the regrade's that no preview
    showed, and says the hand grades moved it."""
    course = late_course(tmp_path, "per_day")
    assert csv_rows(course)["lou"]["late_submission_penalty"] == "4.8"
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.GraderSettings.notebook_kb = 4\n")
    out = ok(make(course, "grade"))
    table = read_table(course / "reports" / f"{ASSIGNMENT.name}-regrade-preview.csv")
    ok(make(course, "grade", "CONFIRM=yes"))
    applied = csv_rows(course)["lou"]["late_submission_penalty"]
    settled = ok(make(course, "feedback"))
    after = csv_rows(course)["lou"]["late_submission_penalty"]
    shown = [(c.old, c.new) for c in table if c.student == "lou" and c.part == "late penalty"]
    assert after == applied or shown == [("4.8", after)], (
        f"lou's late penalty: previewed {shown}, {applied} after CONFIRM=yes, {after} after the next make feedback, "
        f"which said: {[line for line in settled.splitlines() if 'penalty' in line.lower()]}\n{out[-1500:]}")


def test_a_regrade_naming_a_student_twice_grades_them_once(tmp_path):
    """red-b26 (pass 35, minor): `python -m autograder regrade --assignment dl01_6_3 -- ada ada ada` graded ada three
    times in one run (measured: "3 submissions, 3 graded", every pass rate "1/3", which reads as two students failing
    every part; ada's grade was right, 18). The roll names each student once, in the order given."""
    from autograder.assignment import find_assignment
    from autograder.classroom.class_run import ClassRun
    from autograder.classroom.students import take_roll
    from autograder.settings import GraderSettings, load_config

    course = course_copy(tmp_path / "course")
    put_submission(course, "bob", "{}")
    put_submission(course, "ada", "{}")
    run = ClassRun.open(find_assignment(course, ASSIGNMENT.name), GraderSettings(config=load_config(course)))
    roll = take_roll(run, ["bob", "ada", "bob", "ada", "ada"])
    assert roll.students == ["ada", "bob"], roll.students
    assert roll.origin == "submitted/ (regrading bob, ada)", roll.origin
