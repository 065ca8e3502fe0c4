"""What a grading process does for one student of a class: nbgrader's autograde, with the checks inline.

classroom.grade_students hands students to the pool (pool.run_pool); each pool process calls the function
autograder_for made for it, before the pool forked, with the class's grading (grading.ClassGrading), which
nbgrader's passes carry to RunHiddenSuites in their resources. Only plain data goes back: None when the student
is graded (the report is in the gradebook and in report.json beside the autograded notebook), or why the student
was not (protocol.NotGraded).
"""
from __future__ import annotations

import os
import traceback
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.apps.api import NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import capture_log
from traitlets import Instance, List, Unicode

from ..grading import ClassGrading
from ..intake.files import STAGING, IntakeRules, take_submission
from ..intake.submitted_folders import submitted_lock
from ..intake.validate import submission_problem, timestamp_problem
from ..nbgrader_glue.preprocessors.grading_notes import INTAKE_NOTES
from ..nbgrader_glue.preprocessors.run_hidden_suites import GRADING_RESOURCE, report_path
from ..nbgrader_glue.tuning import shared_url, tune_nbgrader
from ..outputs.inert import one_line
from ..sandbox.protocol import NotGraded


def failure(exc: BaseException) -> str:
    """What the grader says when it failed on one student's submission (the class goes on)."""
    return one_line(f"the grader failed on it ({type(exc).__name__}: {exc})", 200)


def too_slow(seconds: float) -> NotGraded:
    """Why a student is not graded whose autograde took longer than c.GraderSettings.autograde_seconds (the
    notebook's own reason: the same file takes as long again)."""
    return NotGraded(f"nbgrader's autograde of it took more than {seconds:g} s of CPU time "
                     "(c.GraderSettings.autograde_seconds)")


class StagedAutograde(Autograde):
    """nbgrader's autograde of the intake's copy (autograder/intake/files.py): the course's submitted_directory is the
    kit's staging folder for this converter, and each notebook's resources carry the intake's notes, which
    FindGradingNotes adds to its own, and the class's grading, which RunHiddenSuites grades with."""

    intake_notes = List(Unicode(), help="What the intake noted about this student's folder.")
    grading = Instance(ClassGrading, allow_none=True, help="The class prepared before the pool forked.")
    failure: BaseException | None = None  # what stopped the notebook's passes: nbgrader logs it, then raises its own

    def init_single_notebook_resources(self, notebook_filename: str) -> dict:
        resources = super().init_single_notebook_resources(notebook_filename)
        resources[INTAKE_NOTES] = list(self.intake_notes)
        resources[GRADING_RESOURCE] = self.grading
        return resources

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        super().init_assignment(assignment_id, student_id)
        # Without a timestamp.txt nbgrader keeps the gradebook's time of an earlier submission, so a lateness would
        # outlive the folder that had it. No time stamp is on time (nbgrader_glue/late.py), whatever came before.
        if self.coursedir.get_existing_timestamp(self._format_source(assignment_id, student_id)) is None:
            with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
                gb.find_submission(assignment_id, student_id).timestamp = None
                gb.db.commit()

    def convert_single_notebook(self, notebook_filename: str) -> None:
        try:
            super().convert_single_notebook(notebook_filename)
        except Exception as exc:
            self.failure = exc
            raise


def nbgrader_failure(exc: BaseException | None, error: str) -> str:
    """Why nbgrader could not autograde a notebook: the exception that stopped its passes (`exc`), with the step
    and the cell it stopped on and the exception it replaced (nbgrader's CheckCellMetadata says only "the nbgrader
    metadata may be corrupted"), else the last line of nbgrader's own `error` ("see the above traceback")."""
    if exc is None:
        last = error.strip().splitlines()
        return "nbgrader could not autograde it" + (f": {last[-1]}" if last else "")
    where = ""
    for frame, _ in traceback.walk_tb(exc.__traceback__):  # the innermost preprocess_cell: step and cell
        step, index = frame.f_locals.get("self"), frame.f_locals.get("cell_index")
        if frame.f_code.co_name == "preprocess_cell" and isinstance(index, int):
            where = f" ({type(step).__name__}, on cell {index + 1} of the notebook)"
    inner = exc.__cause__ or exc.__context__
    return f"nbgrader could not autograde it{where}: {_first_line(exc)}" + (f" ({_first_line(inner)})" if inner else "")


def _first_line(exc: BaseException) -> str:
    """The exception's kind and the first line of what it says (nbformat's goes on with its schema and the cell)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def autograder_for(grading: ClassGrading, config, submitted: Path, rules: IntakeRules):
    """What each grading process runs for one student: nbgrader's autograde, with the checks inline.

    Each process makes one Autograde converter (as NbGraderAPI.autograde would for every student)
    and runs it once per student. Returns plain data for the parent: None when it is graded (the
    report, notes included, is in the gradebook and in report.json beside the autograded notebook,
    where RunHiddenSuites wrote it), or why it was not graded. nbgrader reads only what the intake copied from
    submitted/<student>/<assignment>/ into the kit's staging folder (take_submission, within `rules`); a
    notebook that fails validation (submission_problem) never reaches nbgrader, and whatever else goes wrong with one student is that
    student's reason: it never ends the process, nor the parent, which tries such a student once more.
    This process, and those it forks, run nbgrader tuned (tuning.tune_nbgrader).
    """
    tune_nbgrader()
    assignment = grading.prepared.assignment
    converters: list[StagedAutograde] = []

    def autograde(student: str) -> NotGraded | None:
        try:
            return autograde_one(student)
        except Exception as exc:
            return NotGraded(failure(exc), grader_fault=True)

    def autograde_one(student: str) -> NotGraded | None:
        staged = assignment.root / STAGING / student / assignment.name  # nbgrader's layout, the kit's folder
        with submitted_lock(submitted):  # no collection writes submitted/ while it is read
            intake = take_submission(submitted, (student, assignment.name), staged, rules)
        if intake.notebook is None:
            if not os.path.lexists(submitted / student / assignment.name):  # removed while this run read it: not theirs
                return NotGraded(f"its folder was removed while it was read ({intake.reason})", grader_fault=True)
            return NotGraded(intake.reason)
        problem = submission_problem(intake.notebook, rules.notebook_bytes)  # checked, not read: nbgrader reads it
        if problem:
            return NotGraded(problem)
        stamp = timestamp_problem(staged)  # nor a time stamp it cannot read
        if stamp:
            return NotGraded(stamp)
        if not converters:  # one per process, made after the fork
            coursedir = CourseDirectory(config=config)
            coursedir.db_url, coursedir.assignment_id = shared_url(coursedir.db_url), assignment.name
            coursedir.submitted_directory = str(STAGING)
            converter = StagedAutograde(coursedir=coursedir, parent=NbGraderAPI(coursedir=coursedir, config=config))
            converter.force = converter.create_student = True
            converter.grading = grading
            converters.append(converter)
        converters[0].coursedir.student_id = student
        converters[0].intake_notes = intake.notes
        converters[0].failure = None
        result = capture_log(converters[0])  # with --force: autograded/<student>/<assignment>/ written afresh
        if not result["success"] or not report_path(converters[0].coursedir, student, assignment.name).is_file():
            return NotGraded(nbgrader_failure(converters[0].failure, result.get("error") or ""), grader_fault=True)
        return None

    return autograde
