"""One source for every page: each check's typed Status, report.json's kind and version, and a student not graded
known from their report alone (autograder/report.py, outputs/class_page.py, classroom/not_graded.py).

Nothing here reads a message's words or a feedback page to learn what happened: a check not run whose message
does not start with "not run:" is still not run, a failed check whose message does is still failed, and a student
not graded whose feedback page is gone is still listed, with the reason, on the class page.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory

from autograder.checks.parametrize import Check
from autograder.checks.suites import Runner, _result
from autograder.classroom.class_run import Graded
from autograder.classroom.not_graded import GRADER_FAULT_ADVICE, RESUBMIT_ADVICE, not_graded_page
from autograder.nbgrader_glue.preprocessors.run_hidden_suites import report_path
from autograder.outputs.class_page import ClassData, first_failures, gather, take_report
from autograder.report import KIND, VERSION, CheckResult, PartResult, Report, ReportUnreadable, Status, check_lines
from autograder.sandbox import NOT_RUN_AFTER_TIME_OUT, Outcome
from autograder.submission import Submission

CELLS = [SimpleNamespace(grade_id="test_a", points=2.0), SimpleNamespace(grade_id="test_b", points=1.0)]
LOOKS_SKIPPED = "not run: words a failure's message may hold as well"  # a failed check, whatever it says


def mixed_report() -> Report:
    return Report([PartResult("test_a", 2.0, [CheckResult("skipped", Status.NOT_RUN, "an earlier check looped"),
                                              CheckResult("wrong", Status.FAILED, LOOKS_SKIPPED),
                                              CheckResult("right", Status.PASSED)]),
                   PartResult("test_b", 1.0, [CheckResult("skipped", Status.NOT_RUN, "the budget was spent")])])


def test_a_check_not_run_is_known_by_its_status_not_its_words():
    report = mixed_report()
    assert first_failures(report) == {"test_a": LOOKS_SKIPPED}, "a not-run check names no cause; a failed one does"
    data = ClassData("a", [("test_a", 2.0), ("test_b", 1.0)], 3.0)
    take_report(data, "ada", report)
    assert data.messages == {LOOKS_SKIPPED: 1} and data.message_parts == {LOOKS_SKIPPED: {"test_a"}}
    take_report(data, "bob", Report.not_graded(CELLS, "it is not a readable notebook"))
    assert data.not_graded == {"bob": "it is not a readable notebook"} and data.messages == {LOOKS_SKIPPED: 1}
    assert report.parts[0].score == round(2.0 / 3, 2) and report.parts[1].score == 0  # only a pass scores
    assert check_lines(report.parts[1]) == "FAIL skipped: the budget was spent\n"  # the student's words stay


def test_status_goes_through_report_json(tmp_path):
    report = mixed_report()
    path = tmp_path / "report.json"
    report.save(path)
    data = json.loads(path.read_text())
    assert (data["kind"], data["version"]) == (KIND, VERSION)
    assert [(t["status"], t["passed"]) for t in data["parts"][0]["tests"]] == [
        ("not run", False), ("failed", False), ("passed", True)]
    again = Report.load(path)
    assert again == report


@pytest.mark.parametrize("content", [
    '{"total": 0, "max": 3, "parts": [{"grade_id": "test_a", "max_score": 2, "tests": '
    '[{"name": "x", "passed": false, "message": "not run: an earlier check of this part ran out of time"}]}]}',
    json.dumps({"kind": KIND, "version": VERSION + 1, "parts": []}),
    json.dumps({"kind": "something else", "version": VERSION, "parts": []}),
    json.dumps({"kind": KIND, "version": VERSION, "parts": [{"grade_id": "a", "max_score": 1,
                                                             "tests": [{"name": "x", "status": "skipped", "message": ""}]}]}),
    "[1, 2]",
    "{not json",
])
def test_a_report_json_of_another_kind_or_version_is_refused_in_one_place(tmp_path, content):
    """An older kit's report.json (no kind, a "passed" flag and words for a status) is refused, not guessed at:
    `make grade` grades that student again (changes.plan_class)."""
    path = tmp_path / "report.json"
    path.write_text(content)
    with pytest.raises(ReportUnreadable):
        Report.load(path)


def test_a_notebook_not_graded_has_a_report_with_the_reason_and_every_check_not_run():
    report = Report.from_submission(CELLS, Submission("ada/nb", error="it is not a readable notebook"))
    assert report.error == "it is not a readable notebook" and not report.grader_fault
    assert [[(t.name, t.status, t.message) for t in p.tests] for p in report.parts] == [
        [("notebook", Status.NOT_RUN, "it is not a readable notebook")]] * 2
    assert report.total == 0 and first_failures(report) == {}
    assert Report.from_json(Report.not_graded(CELLS, "the grader failed", True).to_json()).grader_fault


def runner_with(outcome: Outcome) -> Runner:
    runner = Runner(sandbox=None, cells=[], submission=Submission("ada/nb"))  # type: ignore[arg-type]  # never asked: the answer is there
    runner.memo[("probe", "[]")] = outcome
    return runner


def probe():
    """Stands for a probe: only its name keys the answer."""


CHECK = Check("test_it", lambda student, reference: student.run(probe), {})


def test_a_check_whose_answer_was_never_computed_is_not_run_whatever_its_words():
    """The sandbox marks a call it never made (Outcome.not_run); the check's status follows the mark alone."""
    result = _result(CHECK, runner_with(Outcome(False, reason="skipped, in any words", not_run=True)), None)
    assert result == CheckResult("test_it", Status.NOT_RUN, "skipped, in any words")
    result = _result(CHECK, runner_with(Outcome(False, reason=LOOKS_SKIPPED)), None)  # a loader may write these words
    assert result == CheckResult("test_it", Status.FAILED, LOOKS_SKIPPED)
    timed_out = runner_with(Outcome(True, value=1))
    timed_out.memo.clear()
    timed_out.timed_out = True
    assert _result(CHECK, timed_out, None) == CheckResult("test_it", Status.NOT_RUN, NOT_RUN_AFTER_TIME_OUT)
    assert _result(CHECK, runner_with(Outcome(True, value=1)), None) == CheckResult("test_it", Status.PASSED)


@pytest.mark.slow  # nbgrader makes its gradebook with alembic: about 10 s
def test_a_student_not_graded_is_on_the_class_page_from_the_report_alone(tmp_path, monkeypatch):
    """No feedback page anywhere: the class page lists the student not graded with the report's reason, counts the
    failed check whose message starts with "not run:", and leaves out the check not run."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    coursedir = CourseDirectory(root=str(tmp_path), db_url=f"sqlite:///{tmp_path / 'gradebook.db'}")
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        gb.add_assignment("a")
        gb.add_notebook("nb", "a")
        for cell in CELLS:
            gb.add_grade_cell(cell.grade_id, "nb", "a", max_score=cell.points, cell_type="code")
        for student in ("ada", "bob", "cy"):
            gb.add_student(student)
            submission = gb.add_submission("a", student)
            for grade in submission.notebooks[0].grades:
                grade.auto_score = None if student == "cy" else 0  # cy: the grader failed on it, no score
        gb.db.commit()
    reason = "it is a symbolic link, not a file"
    reports = {"ada": mixed_report(), "bob": Report.not_graded(CELLS, reason),
               "cy": Report.not_graded(CELLS, "the grader failed on it (RuntimeError: x)", grader_fault=True)}
    for student, report in reports.items():
        report.save(report_path(coursedir, student, "a"))
    assert not (tmp_path / "feedback").exists()
    data = gather(SimpleNamespace(name="a"), coursedir)
    assert data.not_graded == {"bob": reason, "cy": "the grader failed on it (RuntimeError: x)"}
    assert data.messages == {LOOKS_SKIPPED: 1}
    assert set(data.scores) == {"ada", "bob"}, "a student the grader failed on has no score, not a zero"


def test_the_page_of_a_student_not_graded_is_rendered_from_the_report():
    page = not_graded_page("dl01_6_3", Report.not_graded(CELLS, "it is <not> a notebook"))
    assert "dl01_6_3: not graded" in page and "it is &lt;not&gt; a notebook" in page and RESUBMIT_ADVICE in page
    page = not_graded_page("dl01_6_3", Report.not_graded(CELLS, "the grader failed", grader_fault=True))
    assert GRADER_FAULT_ADVICE in page and "Score: 0" not in page


def test_the_summary_names_the_students_not_graded_from_their_reports():
    graded = Graded(reports={"ada": mixed_report(), "bob": Report.not_graded(CELLS, "not a notebook"),
                             "cy": Report.not_graded(CELLS, "the grader failed", grader_fault=True)},
                    problems={"dee": "nbgrader could not write its feedback page"})
    graded.reports["dee"] = mixed_report()
    assert graded.not_graded() == {"bob": "not a notebook", "cy": "the grader failed",
                                   "dee": "nbgrader could not write its feedback page"}
    assert graded.grader_faults == {"cy"} and graded.with_grades() == ["ada"]


def test_only_a_report_with_the_students_outcome_leaves_them_unchanged(tmp_path):
    """changes.plan_class grades a student again when their report.json is gone, is one this kit does not read, or
    says the grader failed on them; a report of theirs, graded or not graded for their own file, stands."""
    from autograder.classroom.changes import _has_outcome

    path = tmp_path / "report.json"
    assert not _has_outcome(path)
    for report, stands in ((mixed_report(), True), (Report.not_graded(CELLS, "not a notebook"), True),
                           (Report.not_graded(CELLS, "the grader failed", grader_fault=True), False)):
        report.save(path)
        assert _has_outcome(path) is stands, report
    path.write_text('{"total": 0, "max": 0, "parts": []}')  # an older kit's
    assert not _has_outcome(path)
