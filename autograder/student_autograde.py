"""What a grading process does for one student of a class: nbgrader's autograde, with the checks inline.

classroom.grade_class hands students to the pool (pool.run_pool); each pool process calls the function
autograder_for made for it. Only plain data goes back: nothing when the student is graded (the report
is in the gradebook and in report.json beside the autograded notebook), or why the student was not.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from nbgrader.apps.api import NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import capture_log

from .assignment import Assignment
from .inert import one_line
from .preprocessors.run_hidden_suites import report_path
from .tuning import shared_url
from .validate import find_notebook, submission_problem, timestamp_problem


def failure(exc: BaseException) -> str:
    """What the grader says when it failed on one student's submission (the class goes on)."""
    return one_line(f"the grader failed on it ({type(exc).__name__}: {exc})", 200)


def notebook_to_grade(assignment: Assignment, folder: Path) -> tuple[Path | None, str]:
    """The student's notebook, where nbgrader grades it (`folder`/<the assignment's notebook name>), or None
    and the reason there is none. Which notebook is validate.find_notebook's rule, Gradescope's too; one found
    under another name (or deeper) is copied to that name, beside the original (FindGradingNotes,
    autograder/preprocessors/grading_notes.py, notes it from the folder as it stands)."""
    expected = folder / assignment.notebook_name
    found, reason = find_notebook(folder, assignment.notebook_name)
    if found is None or found == expected:
        return found, reason
    try:
        shutil.copyfile(found, expected)
    except OSError as error:
        return None, (f"no {assignment.notebook_name} in the submission (found '{found.relative_to(folder)}'; "
                      f"it could not be copied: {error.strerror})")
    return expected, ""


def autograder_for(assignment: Assignment, config, submitted: Path, max_bytes: int):
    """What each grading process runs for one student: nbgrader's autograde, with the checks inline.

    Each process makes one Autograde converter (as NbGraderAPI.autograde would for every student)
    and runs it once per student. Returns plain data for the parent: nothing when it is graded (the
    report, notes included, is in the gradebook and in report.json beside the autograded notebook,
    where RunHiddenSuites wrote it), or why it was not graded. A notebook that fails validation
    (submission_problem) never reaches nbgrader, and whatever else goes wrong with one student is that
    student's reason: it never ends the process, nor the parent, which tries such a student once more.
    """
    converters: list[Autograde] = []

    def autograde(student: str) -> dict:
        try:
            return autograde_one(student)
        except Exception as exc:
            return {"problem": failure(exc), "retry": True}

    def autograde_one(student: str) -> dict:
        path, reason = notebook_to_grade(assignment, submitted / student / assignment.name)
        if path is None:
            return {"problem": reason}
        problem = submission_problem(path, max_bytes)  # checked, not read: nbgrader reads it, and never a malformed file
        if problem:
            return {"problem": problem}
        stamp = timestamp_problem(path.parent)  # nor a time stamp it cannot read
        if stamp:
            return {"problem": stamp}
        if not converters:  # one per process, made after the fork
            coursedir = CourseDirectory(config=config)
            coursedir.db_url, coursedir.assignment_id = shared_url(coursedir.db_url), assignment.name
            converter = Autograde(coursedir=coursedir, parent=NbGraderAPI(coursedir=coursedir, config=config))
            converter.force = converter.create_student = True
            converters.append(converter)
        converters[0].coursedir.student_id = student
        result = capture_log(converters[0])  # with --force: autograded/<student>/<assignment>/ written afresh
        if not result["success"] or not report_path(converters[0].coursedir, student, assignment.name).is_file():
            last = (result.get("error") or "").strip().splitlines()
            return {"problem": "nbgrader could not autograde it" + (f": {last[-1]}" if last else ""), "retry": True}
        return {}

    return autograde
