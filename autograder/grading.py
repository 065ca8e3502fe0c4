"""grade_one: one notebook in, one Report out. Every way of grading calls it.

    validate (a file: validate.read_submission) → each part's program and its checks, the probes run in
    the sandbox and their answers compared with the reference's (suites.Grader) → the Report
    (report.Report.from_submission), redacted (redaction.redact_report)

First, once for a class, prepare_class makes its PreparedClass (suites.py): the settings and the
assignment the entry point built, the suites, the reference's answers and the redactor, with the
instructor's files closed to student code. `make grade` makes it before the pool forks, and reaches
grade_one through nbgrader (RunHiddenSuites, inside Autograde, in a process of the pool), which finds the
class in prepared_class; `python -m autograder grade [--json]` and Gradescope's run_autograder go through
grade_path. Each process keeps one warm Grader per prepared class (its two sandboxes), made on its first
notebook.
"""
from __future__ import annotations

import atexit
import os
from pathlib import Path

from .assignment import Assignment
from .checks.answer_cache import cache_key, keep_answers, read_answers, shipped_answers
from .checks.suites import Grader, PreparedClass, load_suites, reference_answers
from .intake.validate import read_submission
from .outputs.redaction import redact_report, redactor
from .report import Report
from .sandbox import Sandbox
from .sandbox.policy import close_to_others, start_student_sandbox
from .settings import GraderSettings
from .submission import Submission

# The class prepare_class made last for each assignment, in this process or in the one the pool forked it
# from: nbgrader makes RunHiddenSuites itself, for every notebook, so it finds the class here.
_PREPARED: dict[Assignment, PreparedClass] = {}
_GRADERS: dict[tuple[int, PreparedClass], Grader] = {}  # this process's warm Grader per prepared class


def prepare_class(assignment: Assignment, settings: GraderSettings) -> PreparedClass:
    """What every grading process of the class needs, made once, before the pool forks (its processes
    inherit it): the instructor's files closed to student code (when isolating), the suites, the
    reference's answers and the redactor, with these settings and this assignment."""
    if settings.isolate:
        close_to_others(assignment)
    prepared = PreparedClass(assignment, settings, load_suites(assignment), class_answers(assignment, settings),
                             redactor(assignment, settings.message_chars))
    _PREPARED[assignment] = prepared
    return prepared


def class_answers(assignment: Assignment, settings: GraderSettings) -> dict:
    """The reference's answers to every hidden case: kept ones, else computed and kept (answer_cache.py); in a
    course without its reference (the Gradescope image), the ones it was shipped with."""
    if not assignment.has_reference:
        return shipped_answers(assignment, settings.limits)
    key = cache_key(assignment, settings.limits)
    answers = read_answers(assignment, key)
    if answers is None:
        answers = reference_answers(assignment, settings)
        keep_answers(assignment, key, answers)
    return answers


def prepared_class(assignment: Assignment) -> PreparedClass | None:
    """The class prepare_class made for `assignment` in this process or before it was forked; None when
    none was (nbgrader running RunHiddenSuites on its own, as the formgrader's autograde button does)."""
    return _PREPARED.get(assignment)


def warm_grader(prepared: PreparedClass, student_box: Sandbox | None = None) -> Grader:
    """This process's Grader of `prepared` (made on first use, with `student_box` if one was started for it;
    closed at exit)."""
    key = (os.getpid(), prepared)
    if key not in _GRADERS:
        _GRADERS[key] = Grader(prepared, student_box)
        atexit.register(close_graders)
    return _GRADERS[key]


def close_graders() -> None:
    """Close this process's Graders (their sandboxes); warm_grader makes new ones if asked again."""
    for key in [k for k in _GRADERS if k[0] == os.getpid()]:
        _GRADERS.pop(key).close()


def grade_one(notebook: Path | Submission, prepared: PreparedClass) -> Report:
    """Grade one notebook of the prepared class: a file (validated first: one that is not a notebook gets
    a report with the reason, keyed by its path), or a Submission already read (nbgrader's notebook,
    validated before nbgrader read it)."""
    settings = prepared.settings
    if isinstance(notebook, Submission):
        submission = notebook
    else:
        submission = read_submission(str(notebook), notebook, settings.notebook_kb * 1024)
    if submission.notebook is not None:
        warm_grader(prepared).grade(submission)
    report = Report.from_submission(prepared.assignment.grade_cells, submission)
    redact_report(report, prepared.redactor, settings)
    return report


def grade_path(assignment: Assignment, path: Path, settings: GraderSettings, student_box: Sandbox | None = None) -> Report:
    """`python -m autograder grade PATH` and Gradescope: one notebook on disk, graded here, in this process.
    The submission's sandbox boots (Python, numpy, the probes, then the submission's session) while the class
    is prepared: a student who waits for the result waits for the longer of the two, not for both.
    `student_box`: that sandbox, started by the caller (sandbox.policy.start_student_sandbox); by default here."""
    student_box = student_box or start_student_sandbox(assignment, settings)
    prepared = prepare_class(assignment, settings)
    warm_grader(prepared, student_box)
    try:
        return grade_one(path, prepared)
    finally:
        close_graders()


def grade_submissions(assignment: Assignment, submissions: list[Submission],
                      settings: GraderSettings) -> dict[str, Report]:
    """grade_one on every submission, in the pool, without nbgrader's bookkeeping; a report for each, by key
    (the kit's tests grade their catalogues so, in one batch).

    `settings.jobs` + 1 forked processes (jobs is one per core by default; one may be waiting out a time
    limit), each with its own warm Grader of the class prepared here; what comes back is each report.
    """
    from .classroom.pool import run_pool  # here: multiprocessing and the progress bar cost a one-notebook grade 30 ms

    prepared = prepare_class(assignment, settings)
    jobs = settings.jobs or os.cpu_count() or 1
    reports = {}
    try:
        for index, report in run_pool(submissions, lambda s: grade_one(s, prepared), jobs + 1, None, close_graders):
            reports[submissions[index].key] = report
    except RuntimeError as exc:
        raise RuntimeError(f"the hidden suites of {assignment.name} could not run: {exc}") from None
    return reports
