"""red-v6 (pass 19): findings written as failing tests (REPORT ONLY: no fix on this branch)."""
from __future__ import annotations

import json

from test_hand_grades import course  # noqa: F401  (the fixture)

from autograder.classroom import ledger
from autograder.classroom.changes import course_inputs, folder_changed
from autograder.intake.files import IntakeRules
from autograder.settings import GraderSettings
from conftest import ASSIGNMENT, NOTEBOOK


def test_a_grade_recorded_before_the_intakes_rules_were_is_previewed_when_todays_reading_differs(tmp_path):
    """A ledger row a kit before Inputs.intake wrote (intake None) was read by a kit of reading "1" too: when
    today's reading ("2": BACKUP.IPYNB in any case) sees carl's untouched folder otherwise, he is taken for a new
    submission and graded at once, without a preview (red-t5's U1 for a row with no intake rules at all)."""
    folder = tmp_path / "submitted" / "carl" / "a"
    (folder / "work").mkdir(parents=True)
    (folder / "work" / "final.ipynb").write_text("{}")
    (folder / "BACKUP.IPYNB").write_text('{"cells": []}')
    rules = IntakeRules.of(GraderSettings(), NOTEBOOK)
    today = course_inputs(ASSIGNMENT, GraderSettings(), None)
    now = ledger.Inputs(ledger.folder_fingerprint(tmp_path / "submitted", ("carl", "a"), rules), intake=rules,
                        answers_format=ledger.ANSWERS_FORMAT, **today)
    recorded = {k: v for k, v in json.loads(ledger.inputs_json(now)).items() if k != "intake"}
    older = ledger.Inputs.from_json(json.dumps({**recorded, "submission": "read by reading 1"}))
    assert older is not None and older.intake is None
    assert not folder_changed(older, now, tmp_path / "submitted", ("carl", "a")), \
        "carl sent nothing: taken for a new submission, graded unseen"


def test_a_score_saved_from_a_stale_page_is_not_taken_as_given_on_the_answer_reviewed_before(course):  # noqa: F811
    """A score typed on a page showing answer A, saved after `make grade` regraded B, is kept flagged (red-r2) but
    the ledger still says the grade stands on Z, the answer the instructor reviewed before A: when the student sends
    Z back, the score meant for A stands on Z, unflagged (a hand grade kept unflagged on an answer it was not given
    on)."""
    import copy

    from test_hand_grades import answers_on_the_page, cell, grades, hand_grade, save_from_the_page, submit_and_grade

    from conftest import solution_notebook

    zed = solution_notebook()
    submit_and_grade(course, "red_v6_zed", zed)
    hand_grade(course, "red_v6_zed", ["answer_zeroing"], 1.5)  # reviewed on Z
    answer_a, answer_b = copy.deepcopy(zed), copy.deepcopy(zed)
    cell(answer_a, "answer_zeroing")["source"] = "Answer A."
    cell(answer_b, "answer_zeroing")["source"] = "Answer B."
    submit_and_grade(course, "red_v6_zed", answer_a)
    assert grades(course, "red_v6_zed", ["answer_zeroing"])["answer_zeroing"] == (1.5, None, True)
    page = answers_on_the_page(course, "red_v6_zed")  # the instructor opens A's page
    submit_and_grade(course, "red_v6_zed", answer_b)  # make grade, while the page is open
    assert save_from_the_page(course, "red_v6_zed", "answer_zeroing", page, 0.0), "saved, flagged"
    submit_and_grade(course, "red_v6_zed", zed)  # the student sends Z back
    assert grades(course, "red_v6_zed", ["answer_zeroing"])["answer_zeroing"] == (0.0, None, True), \
        "the 0 typed for answer A stands unflagged on Z"


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


def test_confirm_applies_no_score_to_a_student_the_preview_could_not_grade(tmp_path):
    """A preview whose grading of bob failed for the grader's reason showed "2 -> -" and "would not be graded";
    CONFIRM=yes then applied a score for him that no preview showed (record_previewed recorded him as previewed)."""
    import os
    import subprocess
    import sys

    import nbformat

    from conftest import course_copy, solution_notebook

    root = course_copy(tmp_path)
    for student in ("ada", "bob"):
        path = root / "submitted" / student / ASSIGNMENT.name / NOTEBOOK
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbformat.from_dict(solution_notebook()), path)
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True,
                              timeout=110)

    assert run("-m", "autograder", "class", "--assignment", ASSIGNMENT.name).returncode == 0
    suite = root / "autograder" / ASSIGNMENT.name / "test_forward.py"
    suite.write_text(suite.read_text() + "\n\ndef test_the_instructors_fix(student):\n    assert False\n")
    preview = run("-c", INJECTED, "class", "--assignment", ASSIGNMENT.name)
    assert "bob: would not be graded" in preview.stdout, preview.stdout + preview.stderr
    applied = run("-m", "autograder", "class", "--assignment", ASSIGNMENT.name, "--confirm", "yes")
    assert "no preview showed that of bob" in applied.stdout, "bob's regrade applied unseen:\n" + \
        (root / "grades.csv").read_text()
