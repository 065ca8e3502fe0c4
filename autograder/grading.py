"""ClassGrading.grade_one: one notebook in, one Report out. Every way of grading calls it.

    validate (a file: validate.read_submission) → each part's program and its checks, the probes run in
    the sandbox and their answers compared with the reference's (suites.Grader) → the Report
    (report.Report.from_submission), redacted (redaction.redact_report)

First, once for a class, prepare_class makes its PreparedClass (suites.py): the settings and the
assignment the entry point built, the suites, the reference's answers and the redactor, with the
instructor's files closed to student code; a ClassGrading holds it, with the warm Grader (two sandboxes)
of each process that grades. `make grade` makes it before the pool forks and hands it to nbgrader in each
pass's resources, where RunHiddenSuites (inside Autograde, in a process of the pool) finds it;
`python -m autograder grade [--json]` and Gradescope's run_autograder go through grade_path.
"""
from __future__ import annotations

import os
import weakref
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


def prepare_class(assignment: Assignment, settings: GraderSettings) -> PreparedClass:
    """What every grading process of the class needs, made once, before the pool forks (its processes
    inherit it): the instructor's files closed to student code (when isolating), the suites, the
    reference's answers and the redactor, with these settings and this assignment."""
    if settings.isolate:
        close_to_others(assignment)
    return PreparedClass(assignment, settings, load_suites(assignment), class_answers(assignment, settings),
                         redactor(assignment, settings.message_chars))


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


class ClassGrading:
    """One class's grading: its PreparedClass, and the warm Grader (its two sandboxes) of the process that grades.

    Made once for a class, before the pool forks, and inherited by its processes: each makes its own Grader on
    its first notebook (one inherited from the parent is the parent's, left alone) and closes it with close(),
    or at exit. nbgrader's passes carry it in their resources (run_hidden_suites.GRADING_RESOURCE, put there by
    classroom.student_autograde.StagedAutograde), where RunHiddenSuites finds it.
    """

    def __init__(self, prepared: PreparedClass, student_box: Sandbox | None = None) -> None:
        """`student_box`: the submission's sandbox, started by the caller for this process's Grader."""
        self.prepared = prepared
        self._student_box = student_box
        self._grader: Grader | None = None
        self._pid = 0  # the process self._grader belongs to
        self._closing: weakref.finalize | None = None  # closes it when this goes, or at exit

    def __deepcopy__(self, memo: dict) -> ClassGrading:
        """Itself: nbconvert deep-copies each pass's resources, and the grading is shared, not the pass's data."""
        return self

    def grader(self) -> Grader:
        """This process's Grader (made on first use; closed by close(), else when this goes or at exit)."""
        if self._grader is None or self._pid != os.getpid():
            self._grader, self._pid = Grader(self.prepared, self._student_box), os.getpid()
            self._student_box = None  # started for one Grader
            self._closing = weakref.finalize(self, _close_in, self._grader, self._pid)
        return self._grader

    def close(self) -> None:
        """Close this process's Grader (its sandboxes); grader() makes a new one if asked again."""
        if self._closing is not None:
            self._closing()  # once; never the parent's Grader, inherited through a fork
        self._grader = self._closing = None

    def grade_one(self, notebook: Path | Submission) -> Report:
        """Grade one notebook of the class: a file (validated first: one that is not a notebook gets a report
        with the reason, keyed by its path), or a Submission already read (nbgrader's notebook, validated
        before nbgrader read it)."""
        settings = self.prepared.settings
        if isinstance(notebook, Submission):
            submission = notebook
        else:
            submission = read_submission(str(notebook), notebook, settings.notebook_kb * 1024)
        if submission.notebook is not None:
            self.grader().grade(submission)
        report = Report.from_submission(self.prepared.assignment.grade_cells, submission)
        redact_report(report, self.prepared.redactor, settings)
        return report


def _close_in(grader: Grader, pid: int) -> None:
    """Close `grader` if this is the process that made it."""
    if os.getpid() == pid:
        grader.close()


def grade_path(assignment: Assignment, path: Path, settings: GraderSettings, student_box: Sandbox | None = None) -> Report:
    """`python -m autograder grade PATH` and Gradescope: one notebook on disk, graded here, in this process.
    The submission's sandbox boots (Python, numpy, the probes, then the submission's session) while the class
    is prepared: a student who waits for the result waits for the longer of the two, not for both.
    `student_box`: that sandbox, started by the caller (sandbox.policy.start_student_sandbox); by default here."""
    student_box = student_box or start_student_sandbox(assignment, settings)
    grading = ClassGrading(prepare_class(assignment, settings), student_box)
    try:
        return grading.grade_one(path)
    finally:
        grading.close()


def grade_submissions(assignment: Assignment, submissions: list[Submission],
                      settings: GraderSettings) -> dict[str, Report]:
    """grade_one on every submission, in the pool, without nbgrader's bookkeeping; a report for each, by key
    (the kit's tests grade their catalogues so, in one batch).

    `settings.jobs` + 1 forked processes (jobs is one per core by default; one may be waiting out a time
    limit), each with its own warm Grader of the class prepared here; what comes back is each report.
    """
    from .classroom.pool import run_pool  # here: multiprocessing and the progress bar cost a one-notebook grade 30 ms

    grading = ClassGrading(prepare_class(assignment, settings))
    jobs = settings.jobs or os.cpu_count() or 1
    reports = {}
    try:
        for index, report in run_pool(submissions, grading.grade_one, jobs + 1, None, grading.close):
            reports[submissions[index].key] = report
    except RuntimeError as exc:
        raise RuntimeError(f"the hidden suites of {assignment.name} could not run: {exc}") from None
    return reports
