"""grade_one: one notebook in, one Report out. Every way of grading calls it.

    validate (a file: validate.read_submission) → each part's program and its checks, the probes run in
    the sandbox and their answers compared with the reference's (suites.Grader) → the Report
    (report.Report.from_submission), redacted (redaction.redact_report)

`make grade` reaches it through nbgrader (RunHiddenSuites, inside Autograde, in a process of the pool),
`python -m autograder grade [--json]` and Gradescope's run_autograder through grade_paths. Each process
keeps one warm Grader per assignment (its two sandboxes), made on its first notebook; the settings and
the assignment are the ones the entry point built (prepare_class, before the pool forks), never read again.
"""
from __future__ import annotations

import atexit
import os
from pathlib import Path
from typing import Iterable

from .assignment import Assignment
from .pool import run_pool
from .progress import Progress
from .redaction import redact_report, redactor
from .report import Report
from .settings import GraderSettings
from .submission import Submission
from .suites import Grader, close_to_others, prepare_grading
from .validate import read_submission

_PREPARED: dict[Assignment, GraderSettings] = {}  # what prepare_class was given: inherited by the pool's processes
_GRADERS: dict[tuple[int, Assignment], Grader] = {}  # this process's warm Grader per assignment


def prepare_class(assignment: Assignment, settings: GraderSettings) -> None:
    """What every grading process needs, made once before the pool forks: the instructor's files closed
    to student code (when isolating), the suites, the reference's answers, the redactor, and these
    settings (the preprocessor's grade_one calls then use them, not settings of their own)."""
    if settings.isolate:
        close_to_others(assignment)
    prepare_grading(assignment, settings)
    redactor(assignment, settings.message_chars)
    _PREPARED[assignment] = settings


def warm_grader(assignment: Assignment, settings: GraderSettings) -> Grader:
    """This process's Grader for `assignment` (made on first use, closed at exit)."""
    key = (os.getpid(), assignment)
    if key not in _GRADERS:
        _GRADERS[key] = Grader(assignment, _PREPARED.get(assignment, settings))
        atexit.register(close_graders)
    return _GRADERS[key]


def close_graders() -> None:
    """Close this process's Graders (their sandboxes); warm_grader makes new ones if asked again."""
    for key in [k for k in _GRADERS if k[0] == os.getpid()]:
        _GRADERS.pop(key).close()


def grade_one(notebook: Path | str | dict | Submission, assignment: Assignment, settings: GraderSettings,
              key: str | None = None) -> Report:
    """Grade one notebook: a path (validated first: a file that is not a notebook gets a report with the
    reason), a notebook already read (nbgrader's, validated before nbgrader read it), or a Submission."""
    if isinstance(notebook, Submission):
        submission = notebook
    elif isinstance(notebook, (str, Path)):
        submission = read_submission(key or str(notebook), Path(notebook), settings.notebook_kb * 1024)
    else:
        submission = Submission(key or "notebook", notebook=notebook)
    grader = warm_grader(assignment, settings)
    if submission.notebook is not None:
        grader.grade(submission)
    report = Report.from_submission(grader.assignment.grade_cells, submission)
    redact_report(report, grader.assignment, grader.settings)  # the Grader's copies have read the files
    return report


def grade_submissions(assignment: Assignment, submissions: list[Submission],
                      settings: GraderSettings, progress: bool = False) -> dict[str, Report]:
    """grade_one on every submission; a report for each, by key.

    One submission is graded here, in this process. More are graded by the pool: `settings.jobs` + 1
    forked processes (jobs is one per core by default; one may be waiting out a time limit), each with
    its own warm Grader; what comes back to this process is each report.
    """
    prepare_class(assignment, settings)
    if len(submissions) <= 1:
        try:
            return {s.key: grade_one(s, assignment, settings) for s in submissions}
        finally:
            close_graders()
    jobs = settings.jobs or os.cpu_count() or 1
    reports = {}
    bar = Progress("grading", len(submissions), seconds=settings.seconds, name=lambda s: s.key) if progress else None
    try:
        for index, report in run_pool(submissions, lambda s: grade_one(s, assignment, settings), jobs + 1,
                                      bar, close_graders):
            reports[submissions[index].key] = report
    except RuntimeError as exc:
        raise RuntimeError(f"the hidden suites of {assignment.name} could not run: {exc}") from None
    finally:
        if bar:
            bar.close()
    return reports


def grade_paths(assignment: Assignment, paths: Iterable[Path], settings: GraderSettings) -> dict[str, Report]:
    """Grade notebooks on disk, keyed by their path as given (each validated by grade_one)."""
    paths = list(paths)
    if len(paths) == 1:  # `python -m autograder grade PATH`, Gradescope: here, in this process
        prepare_class(assignment, settings)
        try:
            return {str(paths[0]): grade_one(Path(paths[0]), assignment, settings, key=str(paths[0]))}
        finally:
            close_graders()
    submissions = [read_submission(str(p), Path(p), settings.notebook_kb * 1024) for p in paths]
    return grade_submissions(assignment, submissions, settings)
