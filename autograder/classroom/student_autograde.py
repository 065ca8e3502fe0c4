"""What a grading process does for one student of a class: nbgrader's autograde, with the checks inline.

classroom.grade_students hands students to the pool (pool.run_pool); each pool process calls the function
autograder_for made for it. Only plain data goes back: nothing when the student is graded (the report
is in the gradebook and in report.json beside the autograded notebook), or why the student was not.
"""
from __future__ import annotations

from pathlib import Path

from nbgrader.apps.api import NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import capture_log
from traitlets import List, Unicode

from ..assignment import Assignment
from ..intake.files import STAGING, IntakeRules, take_submission
from ..intake.validate import submission_problem, timestamp_problem
from ..nbgrader_glue.preprocessors.grading_notes import INTAKE_NOTES
from ..nbgrader_glue.preprocessors.run_hidden_suites import report_path
from ..nbgrader_glue.tuning import shared_url
from ..outputs.inert import one_line


def failure(exc: BaseException) -> str:
    """What the grader says when it failed on one student's submission (the class goes on)."""
    return one_line(f"the grader failed on it ({type(exc).__name__}: {exc})", 200)


class StagedAutograde(Autograde):
    """nbgrader's autograde of the intake's copy (autograder/intake/files.py): the course's submitted_directory is the
    kit's staging folder for this converter, and each notebook's resources carry the intake's notes, which
    FindGradingNotes adds to its own."""

    intake_notes = List(Unicode(), help="What the intake noted about this student's folder.")

    def init_single_notebook_resources(self, notebook_filename: str) -> dict:
        resources = super().init_single_notebook_resources(notebook_filename)
        resources[INTAKE_NOTES] = list(self.intake_notes)
        return resources


def autograder_for(assignment: Assignment, config, submitted: Path, rules: IntakeRules):
    """What each grading process runs for one student: nbgrader's autograde, with the checks inline.

    Each process makes one Autograde converter (as NbGraderAPI.autograde would for every student)
    and runs it once per student. Returns plain data for the parent: nothing when it is graded (the
    report, notes included, is in the gradebook and in report.json beside the autograded notebook,
    where RunHiddenSuites wrote it), or why it was not graded. nbgrader reads only what the intake copied from
    submitted/<student>/<assignment>/ into the kit's staging folder (take_submission, within `rules`); a
    notebook that fails validation (submission_problem) never reaches nbgrader, and whatever else goes wrong with one student is that
    student's reason: it never ends the process, nor the parent, which tries such a student once more.
    """
    converters: list[Autograde] = []

    def autograde(student: str) -> dict:
        try:
            return autograde_one(student)
        except Exception as exc:
            return {"problem": failure(exc), "retry": True}

    def autograde_one(student: str) -> dict:
        staged = assignment.root / STAGING / student / assignment.name  # nbgrader's layout, the kit's folder
        intake = take_submission(submitted, (student, assignment.name), staged, rules)
        if intake.notebook is None:
            return {"problem": intake.reason}
        problem = submission_problem(intake.notebook, rules.notebook_bytes)  # checked, not read: nbgrader reads it
        if problem:
            return {"problem": problem}
        stamp = timestamp_problem(staged)  # nor a time stamp it cannot read
        if stamp:
            return {"problem": stamp}
        if not converters:  # one per process, made after the fork
            coursedir = CourseDirectory(config=config)
            coursedir.db_url, coursedir.assignment_id = shared_url(coursedir.db_url), assignment.name
            coursedir.submitted_directory = str(STAGING)
            converter = StagedAutograde(coursedir=coursedir, parent=NbGraderAPI(coursedir=coursedir, config=config))
            converter.force = converter.create_student = True
            converters.append(converter)
        converters[0].coursedir.student_id = student
        converters[0].intake_notes = intake.notes
        result = capture_log(converters[0])  # with --force: autograded/<student>/<assignment>/ written afresh
        if not result["success"] or not report_path(converters[0].coursedir, student, assignment.name).is_file():
            last = (result.get("error") or "").strip().splitlines()
            return {"problem": "nbgrader could not autograde it" + (f": {last[-1]}" if last else ""), "retry": True}
        return {}

    return autograde
