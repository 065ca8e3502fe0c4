"""Grading the class's students: the assignment entered in the gradebook, nbgrader's autograde for each student in
the pool (the checks run inside it), and every student's Report, graded or not; the unchanged students' read back.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

from nbgrader.api import Gradebook
from nbgrader.utils import temp_attrs

from ..grading import ClassGrading, PreparedClass, prepare_class
from ..intake.files import IntakeRules
from ..nbgrader_glue.late import set_due_date
from ..nbgrader_glue.preprocessors.run_hidden_suites import report_path
from ..outputs.counts import counted
from ..outputs.grader_failure import whole_class_failure
from ..outputs.inert import one_line, say
from ..report import Report, ReportUnreadable
from ..sandbox.protocol import NotGraded
from ..submission import Submission
from .changes import Plan
from .class_run import ClassRun, Graded
from .feedback_pages import feedback_writer
from .ledger import Inputs
from .not_graded import record_not_graded
from .pool import run_pool
from .progress import Progress
from .student_autograde import autograder_for, failure, too_slow


def enter_assignment(run: ClassRun) -> bool:
    """The gradebook learns the assignment's cells and its due date (c.GraderSettings.due_date); False, with
    nbgrader's log said, when it cannot."""
    # The gradebook learns the assignment's cells from source/; the release it writes goes to a scratch folder of
    # this run's own, so that grading never touches the committed release/, nor a release another run (a second
    # terminal, the formgrader's Autograde button) is writing at the same moment: generate_assignment's force
    # removes the folder it writes to first.
    root = Path(run.coursedir.root)
    (root / ".grading").mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="release-", dir=root / ".grading"))
    try:
        with temp_attrs(run.coursedir, release_directory=str(folder.relative_to(root))):
            result = run.api.generate_assignment(run.assignment.name, force=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if not result["success"]:
        say(result.get("log", "") + result.get("error", ""), sys.stderr)
        return False
    with Gradebook(run.coursedir.db_url, run.coursedir.course_id) as gb:
        set_due_date(gb, run.assignment.name, run.settings.due_date)
    return True


def take_unchanged(run: ClassRun, plan: Plan, graded: Graded) -> None:
    """The students not graded again: their report, graded or not (for the summary and their page)."""
    for student in plan.unchanged:
        try:
            report = Report.load(report_path(run.coursedir, student, run.assignment.name))
        except (OSError, ReportUnreadable):  # refresh_feedback: not graded yet
            continue
        graded.reports[student] = report
        graded.unchanged.append(student)
        if report.note:
            graded.notes[student] = report.note


class Replayed(ClassGrading):
    """The class's grading, in which a student with a graded report of `reports` (a preview's:
    preview.previewed_reports) gets that report rather than a run of the checks, so that nbgrader's autograde
    applies the outcome shown."""

    def __init__(self, prepared: PreparedClass, reports: dict[str, Report]) -> None:
        super().__init__(prepared)
        self.reports = reports

    def grade_one(self, notebook: Path | Submission) -> Report:
        student = notebook.key.split("/")[0] if isinstance(notebook, Submission) else None
        if student in self.reports:
            return Report.from_json(self.reports[student].to_json())  # a copy: RunHiddenSuites adds the notes
        return super().grade_one(notebook)


def grade_students(run: ClassRun, students: list[str], origin: str, inputs: dict[str, Inputs] | None = None,
                   replay: dict[str, Report] | None = None) -> Graded:
    """nbgrader's autograde for each student, in the pool; a student it could not grade gets a report that says
    why (Report.not_graded) and what follows from it (not_graded.record_not_graded). Manual grades in the
    gradebook stay as they were. `inputs`: what each grade is made of (changes.Plan), kept in Graded.inputs for
    those graded, or not graded for a reason of their own file. `replay`: the reports a preview gave, applied as
    they are: a graded one through nbgrader's autograde (Replayed), one not graded (for its file's own reason: a
    grader's failure is never recorded as previewed) not graded again, for the same reason."""
    inputs, replay = inputs or {}, replay or {}
    previewed_not_graded = {s: NotGraded(replay[s].error) for s in students if s in replay and replay[s].error}
    assignment, settings = run.assignment, run.settings
    say(f"Grading {counted(len(students), 'submission')} of {assignment.name} from {origin}; "
        f"each submission isolated by: {run.proof.level}" + (f" ({run.proof.processes} grading processes: one id "
        "each, as many as are mapped)" if run.proof.processes < run.jobs + 1 else "") + ".")
    grading = Replayed(prepare_class(assignment, settings), replay)  # inherited by the pool's processes
    autograde = autograder_for(grading, settings.config, run.submitted, IntakeRules.of(settings, assignment.notebook_name))
    with Gradebook(run.coursedir.db_url, run.coursedir.course_id) as gb:  # in order, so grades.csv lists them so
        for student in sorted(set(students) - {s.id for s in gb.students}):
            gb.add_student(student)
    graded = Graded(attempted=len(students))
    to_grade = [s for s in students if s not in previewed_not_graded]
    answers = _autograde_all(run, to_grade, autograde, grading.close) if to_grade else {}
    answers = {student: previewed_not_graded[student] if student in previewed_not_graded else answers[student]
               for student in students}
    graded.stopped = whole_class_failure(assignment, answers)
    if graded.stopped:
        grading.close()
        return graded
    for student, answer in answers.items():
        if answer is None:
            try:  # what RunHiddenSuites wrote beside the autograded notebook
                graded.reports[student] = Report.load(report_path(run.coursedir, student, assignment.name))
            except Exception as exc:
                answer = NotGraded(f"the grader could not read its report ({type(exc).__name__}: {exc})", True)
        if answer is not None:
            report = Report.not_graded(assignment.grade_cells, one_line(answer.reason), answer.grader_fault)
            graded.reports[student] = report
            try:
                record_not_graded(run, student, report)
            except Exception as exc:  # the others are still recorded; the summary names this one
                say(f"Could not record {student}'s grading failure in the gradebook: {failure(exc)}.")
                continue
            if not report.grader_fault and student in inputs:  # the student's file: the same file, the same reason
                graded.inputs[student] = inputs[student]
            continue
        if student in inputs:
            graded.inputs[student] = inputs[student]
        if graded.reports[student].note:  # also the first cell of its autograded notebook (AddGradingNotes)
            graded.notes[student] = graded.reports[student].note
    grading.close()
    return graded


def _autograde_all(run: ClassRun, students: list[str], autograde: Callable[[str], NotGraded | None],
                   close: Callable[[], None]) -> dict[str, NotGraded | None]:
    """Each student's answer from a grading process, in the students' order.

    Each grading process takes the next student, runs nbgrader's autograde on the submission (the
    checks run inside it, in that process's warm sandboxes) and says whether it was graded: in a child of the
    process, each student within `c.GraderSettings.autograde_seconds` of the child's CPU time (pool.run_pool), so
    that a slow path of nbgrader or nbformat on one notebook stops that student alone (not graded, with that
    reason). A student nbgrader could not record is tried once more, alone in a grading process of its own within
    the same bound, before it counts as not graded.
    """
    answers: dict[str, NotGraded | None] = {}
    graded_here: list[str] = []  # by this grading process (each has its own list after the fork)

    def grade(student: str) -> NotGraded | None:
        answer = autograde(student)
        if answer is None:
            graded_here.append(student)
        return answer

    def finish() -> None:
        """No student is left to hand out: this process writes its students' feedback pages now, while
        the class's last submissions (a loop waiting out its limits) are still graded. write_feedback
        writes whatever is missing after that, and says what failed. `close`: this process's Grader."""
        close()
        try:
            if graded_here and not run.preview:  # a preview writes no page
                feedback_writer(run.assignment, run.settings)(graded_here)
        except Exception:  # the page is missing or stale, and write_feedback writes it again
            pass

    seconds = run.settings.autograde_seconds
    with Progress("grading", len(students), seconds=run.settings.seconds) as bar:
        try:  # one process more than cores (one waiting out a time limit leaves its core to another), as ids allow
            for index, answer in run_pool(students, grade, run.proof.processes or run.jobs + 1, bar, finish,
                                          seconds, lambda _: too_slow(seconds)):
                answers[students[index]] = answer
        except RuntimeError as exc:
            say(f"A grading process failed ({exc}): the students it left are graded again, one by one.")
    # One the pool lost, or that failed for the grader's reason: once more, alone in a grading process of its own,
    # within the same bound (never in this process, where nothing would bound it).
    lost = NotGraded("the grading process ended before it was graded", grader_fault=True)
    again = [s for s in students if (answer := answers.get(s, lost)) is not None and answer.grader_fault]
    if again:
        try:
            for index, answer in run_pool(again, autograde, 1, None, close, seconds, lambda _: too_slow(seconds)):
                answers[again[index]] = answer
        except RuntimeError as exc:
            say(f"A grading process failed again ({exc}): the students it left are not graded.")
    return {student: answers.get(student, lost) for student in students}
