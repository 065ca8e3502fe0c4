"""`make grade`: every submission of an assignment into gradebook.db, feedback/ and grades.csv.

nbgrader does the bookkeeping through its own converters and API: the gradebook, locked cells,
late penalties, feedback HTML and the CSV export. Its Execute step is replaced by RunHiddenSuites
(nbgrader_config.py), which grades each notebook in the sandbox and writes its report (notes
included) beside the autograded notebook. Grading runs in forked processes, one student at a time;
once no student is left to hand out, each process writes the feedback pages of the students it graded
(while the class's last submissions, a loop waiting out its limits, are still graded), and the pool
writes any page still missing or stale. The parent reads the reports from autograded/, records what
could not be graded, exports and sums up.
"""
from __future__ import annotations

import html
import logging
import os
import shutil
import sys
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from nbformat.warnings import DuplicateCellId, MissingIDFieldWarning
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps.api import NbGraderAPI
from nbgrader.converters import GenerateFeedback
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import temp_attrs
from sqlalchemy.exc import SAWarning
from traitlets import List, Unicode

from ..assignment import Assignment
from ..grading import ClassGrading, prepare_class
from ..intake.files import IntakeRules
from ..intake.student_ids import is_safe_student_id, unsafe_id_reason
from ..nbgrader_glue.late import late_by, set_due_date
from ..nbgrader_glue.preprocessors.run_hidden_suites import report_path
from ..nbgrader_glue.tuning import shared_url
from ..outputs.counts import counted, mean_points
from ..outputs.grader_failure import whole_class_failure
from ..outputs.inert import one_line, say
from ..report import Report
from ..sandbox.proof import Proof, prove_level
from ..sandbox.protocol import NotGraded
from ..settings import GraderSettings
from . import ledger
from .changes import Plan, plan_class, record_inputs
from .ledger import Inputs
from .lifecycle import (
    demo_submissions,
    export_grades,
    forget_stale_demo,
    keep_manual_marks,
    manual_marks,
    regrade_refusal,
    write_demo,
)
from .pool import run_pool
from .progress import Progress, one_step
from .student_autograde import autograder_for, failure


def collect_class(run: ClassRun) -> tuple[str, list[str]]:
    """Where this run's submissions come from, and what collecting them refused or kept (for the summary);
    fills submitted/ when it has to: from an LMS download, else with the demo class when it is empty."""
    api, assignment, submitted = run.api, run.assignment, run.submitted
    downloads = assignment.root / "downloaded" / assignment.name
    if (downloads / "archive").is_dir() and any((downloads / "archive").iterdir()):
        from ..intake.collect import LmsZipCollect  # only for an LMS download

        log = downloads / "collect.log"  # nbgrader's lines, one per file, would break into the progress bars
        handler = logging.FileHandler(log, mode="w", encoding="utf-8")
        handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
        logger = logging.getLogger("autograder.intake.collect")
        logger.handlers, logger.propagate, logger.level = [handler], False, logging.INFO
        app = LmsZipCollect(coursedir=api.coursedir, parent=api, log=logger)
        app.coursedir.assignment_id = assignment.name
        app.force = True
        try:
            app.start()
        finally:
            handler.close()
        return (f"the LMS download in {downloads.relative_to(assignment.root)}",
                app.collection.lines() + [f"Collect log: {log.relative_to(assignment.root)}"])
    return _local(assignment, submitted), []


def _local(assignment: Assignment, submitted: Path) -> str:
    """Where this run's submissions come from when there is no LMS download."""
    folders = [p for p in submitted.glob(f"*/{assignment.name}") if p.is_dir()] if submitted.is_dir() else []
    if not folders:
        write_demo(assignment, submitted)  # and records it: the only way a student is the demo's
        return "the bundled demo class (submitted/ was empty)"
    demo = demo_submissions(assignment, submitted)  # the kit's record, never a name, time stamp or content
    if len(demo) == len(folders):
        return "the bundled demo class (written earlier into submitted/)"
    if demo:
        return f"submitted/, {len(demo)} of them the bundled demo's ({', '.join(demo)}: `make new-class` removes them)"
    return "submitted/"


RESUBMIT_ADVICE = "Score: 0. Submit the notebook file itself, saved from Jupyter."
GRADER_FAULT_ADVICE = ("No score yet. The grader failed on this submission, not your notebook: your instructor "
                       "will grade it again (make regrade).")


def _record_unreadable(api: NbGraderAPI, assignment: Assignment, student: str, reason: str,
                       grader_fault: bool = False, write_page: bool = True) -> None:
    """A submission not graded: zero in the gradebook, or no score at all when the grader failed on it (never a
    zero: grades.csv and the Canvas file leave it blank), and (`write_page`) a feedback page with the reason and
    what to do (resubmit, when the file is the student's problem; nothing, when the grader failed on it)."""
    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        gb.update_or_create_student(student)
        submission = gb.update_or_create_submission(assignment.name, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                grade.auto_score = None if grader_fault else 0
                grade.needs_manual_grade = False
        gb.db.commit()
    if not write_page:
        return
    # An earlier run's autograded copy would otherwise come back as this student's feedback page.
    shutil.rmtree(api.coursedir.format_path(api.coursedir.autograded_directory, student, assignment.name),
                  ignore_errors=True)
    folder = assignment.root / "feedback" / student / assignment.name
    folder.mkdir(parents=True, exist_ok=True)
    page = Path(assignment.notebook_name).with_suffix(".html").name
    (folder / page).write_text(
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{assignment.name}</title></head><body><main>"
        f"<h1>{html.escape(assignment.name)}: not graded</h1><p>{html.escape(reason)}</p>"
        f"<p>{GRADER_FAULT_ADVICE if grader_fault else RESUBMIT_ADVICE}</p></main></body></html>\n"
    )


class GenerateFeedbackFor(GenerateFeedback):
    """nbgrader's generate_feedback for the listed students only: one process's share of the class.

    One converter writes all of its share's pages, so its HTML exporter (templates) is built once.
    """

    students = List(Unicode(), help="The students to write feedback for.")

    def init_notebooks(self) -> None:
        super().init_notebooks()
        wanted = set(self.students)
        self.assignments: dict = {path: found for path, found in self.assignments.items() if Path(path).parent.name in wanted}


def _feedback_writer(assignment: Assignment, config):
    """What each feedback process runs: nbgrader's generate_feedback on its share of the class."""

    def feedback(students: list[str]) -> None:
        coursedir = CourseDirectory(config=config)
        # Some pages are written while the class's last submissions are still graded: wait for their writes.
        coursedir.db_url, coursedir.assignment_id = shared_url(coursedir.db_url), assignment.name
        app = GenerateFeedbackFor(coursedir=coursedir, config=config, students=students)
        app.force = True
        app.start()  # nbgrader writes every page it can, then raises if one failed

    return feedback


@dataclass
class ClassRun:
    """One `make grade` (or `make regrade`) run: the course as the entry point configured it, once."""

    assignment: Assignment
    settings: GraderSettings
    coursedir: CourseDirectory
    api: NbGraderAPI
    submitted: Path
    preview: bool = False  # grading into a scratch copy of the gradebook (preview.py): no page, no ledger
    proof: Proof = Proof()  # the isolation level grading was proven at (sandbox/proof.py), before anything was written

    @classmethod
    def open(cls, assignment: Assignment, settings: GraderSettings, preview: bool = False) -> ClassRun:
        config = settings.config  # nbgrader_config.py as the entry point read it, once
        coursedir = CourseDirectory(config=config)
        return cls(assignment, settings, coursedir, NbGraderAPI(coursedir=coursedir, config=config),
                   assignment.root / coursedir.submitted_directory, preview)

    @property
    def jobs(self) -> int:
        return self.settings.jobs or os.cpu_count() or 1

    def feedback_page(self, student: str) -> Path:
        return (self.assignment.root / "feedback" / student / self.assignment.name
                / Path(self.assignment.notebook_name).with_suffix(".html").name)


@dataclass
class Graded:
    """What grading the class gave: each graded student's Report, and the students the summary names."""

    reports: dict[str, Report] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # not graded, and why
    grader_faults: set[str] = field(default_factory=set)  # of those, the ones the grader failed on: no score at all
    stopped: str = ""  # the whole class failed for one grader-side reason: why, and nothing was written
    notes: dict[str, str] = field(default_factory=dict)  # graded, with something the student and the instructor should know
    marks_put_back: bool = False  # grading changed manual grades and they were put back: every page is written again
    inputs: dict[str, Inputs] = field(default_factory=dict)  # what produced each grade given in this run (the ledger's)
    unchanged: list[str] = field(default_factory=list)  # not graded again: nothing their grade depends on changed
    attempted: int = 0  # students autograded in this run


def grade_class(assignment: Assignment, settings: GraderSettings, only: list[str] | None = None,
                force: bool = False, confirm: bool = False, preview: bool = False) -> int:
    """Grade the class (or `only` these students of submitted/: `make regrade STUDENT=...`); 0 when done.

    collect → sort the students by what changed since their grade (changes.plan_class) → a preview, when the
    course's side of some grades changed and `confirm` is not given (or `preview` asks for one), and stop there
    → enter the assignment in the gradebook → grade the new and changed (the pool, which writes their feedback
    pages at its end) → the pages whose grades changed (the pool again) → grades.csv → the summary.
    `force`: the unchanged students are graded again too."""
    _quiet_nbgrader_warnings()
    run = ClassRun.open(assignment, settings)
    run.proof = prove_level(assignment, settings, run.jobs + 1)  # a grader that cannot grade writes nothing
    if run.proof.refusal:
        say(f"Not graded, nothing written: {run.proof.refusal}", sys.stderr)
        return 3
    if only:
        refusal = regrade_refusal(assignment, run.submitted, only)  # a folder directly under submitted/, never a path
        if refusal:
            say(f"regrade: {refusal}", sys.stderr)
            return 2
        origin, collected = "submitted/ (regrading " + ", ".join(only) + ")", []
    else:
        origin, collected = one_step("collect", lambda: collect_class(run))
    forget_demo_leftovers(run)
    students, refused = list_students(run, only)
    plan = plan_class(assignment, settings, run.coursedir, run.submitted, students, force or bool(only))
    if only:  # the instructor named them: graded now, whatever changed
        plan.fresh, plan.stale = sorted([*plan.fresh, *plan.stale]), {}
    if plan.stale and (preview or not confirm):
        return preview_class(run, plan, origin)
    if preview:
        say("Nothing to preview: no grade was given under other suites, reference or settings than today's.")
        return 0
    graded = Graded()
    to_grade = sorted([*plan.fresh, *plan.stale])
    if to_grade:
        if not enter_assignment(run):
            return 1
        graded = grade_students(run, to_grade, origin, plan.inputs)
        if graded.stopped:
            say(f"Not graded, no score written: {graded.stopped}", sys.stderr)
            return 3
        record_inputs(run.coursedir, assignment.name, graded.inputs)
    take_unchanged(run, plan, graded)
    write_feedback(run, graded)
    one_step("export", lambda: export_grades(assignment, run.coursedir), unit="file")
    summarize(run, graded, sorted([*students, *refused]), {**graded.problems, **refused}, collected)
    return 0


def refresh_feedback(assignment: Assignment, settings: GraderSettings) -> int:
    """`make feedback`: the pages whose grades or comments changed since they were written (hand grading),
    and grades.csv, without grading anyone."""
    _quiet_nbgrader_warnings()
    run = ClassRun.open(assignment, settings)
    students, _ = list_students(run, None)
    graded = Graded()
    take_unchanged(run, Plan(unchanged=students), graded)
    before = {s: _page_time(run, s) for s in graded.reports}
    write_feedback(run, graded)
    export_grades(assignment, run.coursedir)
    rewritten = sorted(s for s in graded.reports if _page_time(run, s) != before[s])
    say(f"Wrote {counted(len(rewritten), 'feedback page')} again" + (f" ({', '.join(rewritten)})" if rewritten else "")
        + f"; {len(graded.reports) - len(rewritten)} already showed their grades. Wrote grades.csv.")
    return 0


def _page_time(run: ClassRun, student: str) -> int | None:
    try:
        return run.feedback_page(student).stat().st_mtime_ns
    except OSError:
        return None


def preview_class(run: ClassRun, plan: Plan, origin: str) -> int:
    """Grade the stale students into a scratch copy of the gradebook (preview.py), print who would change and
    write the table to reports/; nothing else is written."""
    from .preview import compare, copy_gradebook, scratch_config, write_table

    assignment, students = run.assignment, sorted(plan.stale)
    what = sorted({name for names in plan.stale.values() for name in names})
    say(f"The {' and '.join(what)} changed since {counted(len(students), 'student')} were graded: "
        f"previewing their regrade (nothing is written to the gradebook, feedback/ or grades.csv).")
    folder = assignment.root / ".grading" / "preview"
    config = scratch_config(run.settings.config, folder)
    try:
        copy_gradebook(run.coursedir.db_url, config.CourseDirectory.db_url)
        scratch = ClassRun.open(assignment, GraderSettings(config=config), preview=True)
        scratch.proof = run.proof
        if not enter_assignment(scratch):
            return 1
        graded = grade_students(scratch, students, origin)
        if graded.stopped:
            say(f"Not previewed, nothing written: {graded.stopped}", sys.stderr)
            return 3
        changes = compare(run.coursedir, scratch.coursedir, assignment.name, students)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    table = write_table(changes, assignment.root / "reports" / f"{assignment.name}-regrade-preview.csv")
    changed = sorted({change.student for change in changes})
    say(f"\nRegrade preview: {len(changed)} of {counted(len(students), 'student')} would change"
        + (":" if changes else "; every score stays as it is."))
    for change in changes:
        say(change.line())
    for student, reason in sorted(graded.problems.items()):
        say(f"  {student}: would not be graded: {reason}")
    say(f"Wrote {table.relative_to(assignment.root)}. Nothing else was written: `make grade CONFIRM=yes` applies "
        f"it (hand grades stay, unflagged where the answer is unchanged).")
    if plan.fresh:
        say(f"{counted(len(plan.fresh), 'new or changed submission')} ({', '.join(plan.fresh)}) will be graded then too.")
    return 0


def _quiet_nbgrader_warnings() -> None:
    warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader's own session noise
    for noise in (DuplicateCellId, MissingIDFieldWarning):  # nbformat repairs these itself; the notes say so
        warnings.filterwarnings("ignore", category=noise)


def forget_demo_leftovers(run: ClassRun) -> None:
    """The demo class leaves nothing behind: its students no longer in submitted/ leave the gradebook,
    autograded/ and feedback/ (a row with manual grades stays, and is named)."""
    forgotten = forget_stale_demo(run.assignment, run.coursedir, run.submitted)
    if forgotten.removed:
        say(f"Removed the demo students no longer in submitted/ from the gradebook, autograded/ and feedback/: "
            f"{', '.join(forgotten.removed)}.")
    if forgotten.kept:
        say(f"Kept the gradebook rows of {', '.join(forgotten.kept)}, no longer the demo's: they hold manual grades "
            f"(only make reset-gradebook removes those).")


def list_students(run: ClassRun, only: list[str] | None) -> tuple[list[str], dict[str, str]]:
    """The students to grade, and those refused for their id (with why)."""
    name = run.assignment.name
    students = sorted(only or (p.parent.name for p in run.submitted.glob(f"*/{name}") if p.is_dir()))
    # The one place students enter the gradebook: an id outside the safe alphabet never does, so no page,
    # CSV or terminal of the instructor's shows it (docs/security.md, "What the instructor opens").
    refused = {student: unsafe_id_reason(student) for student in students if not is_safe_student_id(student)}
    return [student for student in students if student not in refused], refused


def enter_assignment(run: ClassRun) -> bool:
    """The gradebook learns the assignment's cells and its due date (c.GraderSettings.due_date); False, with
    nbgrader's log said, when it cannot."""
    # The gradebook learns the assignment's cells from source/; the release it writes goes to a
    # scratch folder so that grading never touches the committed release/.
    with temp_attrs(run.coursedir, release_directory=".grading/release"):
        result = run.api.generate_assignment(run.assignment.name, force=True)
    if not result["success"]:
        say(result.get("log", "") + result.get("error", ""), sys.stderr)
        return False
    with Gradebook(run.coursedir.db_url, run.coursedir.course_id) as gb:
        set_due_date(gb, run.assignment.name, run.settings.due_date)
    return True


def take_unchanged(run: ClassRun, plan: Plan, graded: Graded) -> None:
    """The students not graded again: their report (for the summary and their page) or why they were not graded."""
    for student in plan.unchanged:
        problem = plan.problem(student)
        if problem:
            graded.problems[student] = problem
            graded.unchanged.append(student)
            continue
        try:
            graded.reports[student] = Report.load(report_path(run.coursedir, student, run.assignment.name))
        except (OSError, ValueError, TypeError, KeyError):  # refresh_feedback: not graded yet
            continue
        graded.unchanged.append(student)
        if graded.reports[student].note:
            graded.notes[student] = graded.reports[student].note


def grade_students(run: ClassRun, students: list[str], origin: str, inputs: dict[str, Inputs] | None = None) -> Graded:
    """nbgrader's autograde for each student, in the pool; a student it could not grade gets a zero and a
    page that says why. Manual grades in the gradebook stay as they were. `inputs`: what each grade is made
    of (changes.Plan), kept in Graded.inputs for those graded, or not graded for a reason of their own file."""
    inputs = inputs or {}
    assignment, settings = run.assignment, run.settings
    say(f"Grading {counted(len(students), 'submission')} of {assignment.name} from {origin}; "
        f"each submission isolated by: {run.proof.level}" + (f" ({run.proof.processes} grading processes: one id "
        "each, as many as are mapped)" if run.proof.processes < run.jobs + 1 else "") + ".")
    grading = ClassGrading(prepare_class(assignment, settings))  # inherited by the pool's processes
    autograde = autograder_for(grading, settings.config, run.submitted, IntakeRules.of(settings, assignment.notebook_name))
    with Gradebook(run.coursedir.db_url, run.coursedir.course_id) as gb:  # in order, so grades.csv lists them so
        for student in sorted(set(students) - {s.id for s in gb.students}):
            gb.add_student(student)
    marks = manual_marks(run.coursedir, assignment.name, students)  # nbgrader keeps them; checked after grading
    graded = Graded(attempted=len(students))
    answers = _autograde_all(run, students, autograde, grading.close)
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
            graded.problems[student] = one_line(answer.reason)
            if answer.grader_fault:
                graded.grader_faults.add(student)
            try:
                _record_unreadable(run.api, assignment, student, graded.problems[student],
                                   grader_fault=answer.grader_fault, write_page=not run.preview)
            except Exception as exc:  # the others are still recorded; the summary names this one
                say(f"Could not record {student}'s grading failure in the gradebook: {failure(exc)}.")
                continue
            if not answer.grader_fault and student in inputs:  # the student's file: the same file, the same reason
                graded.inputs[student] = replace(inputs[student], problem=graded.problems[student])
            continue
        if student in inputs:
            graded.inputs[student] = inputs[student]
        if graded.reports[student].note:  # also the first cell of its autograded notebook (AddGradingNotes)
            graded.notes[student] = graded.reports[student].note
    grading.close()
    if keep_manual_marks(run.coursedir, assignment.name, marks):
        say("Grading changed manual grades in the gradebook: they were put back.")
        graded.marks_put_back = True
    return graded


def _autograde_all(run: ClassRun, students: list[str], autograde: Callable[[str], NotGraded | None],
                   close: Callable[[], None]) -> dict[str, NotGraded | None]:
    """Each student's answer from a grading process, in the students' order.

    Each grading process takes the next student, runs nbgrader's autograde on the submission (the
    checks run inside it, in that process's warm sandboxes) and says whether it was graded. A student
    nbgrader could not record is tried once more here, alone, before it counts as not graded.
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
                _feedback_writer(run.assignment, run.settings.config)(graded_here)
        except Exception:  # the page is missing or stale, and write_feedback writes it again
            pass

    with Progress("grading", len(students), seconds=run.settings.seconds) as bar:
        try:  # one process more than cores (one waiting out a time limit leaves its core to another), as ids allow
            for index, answer in run_pool(students, grade, run.proof.processes or run.jobs + 1, bar, finish):
                answers[students[index]] = answer
        except RuntimeError as exc:
            say(f"A grading process failed ({exc}): the students it left are graded here, one by one.")
    for student in students:  # one the pool lost, or that failed for the grader's reason: once more, here
        answer = answers[student] if student in answers else NotGraded("", grader_fault=True)
        answers[student] = autograde(student) if answer is not None and answer.grader_fault else answer
    return {student: answers[student] for student in students}


def write_feedback(run: ClassRun, graded: Graded) -> None:
    """nbgrader's feedback page for every student whose page does not show their grades as the gradebook has
    them now: graded since the page was written (and not by the grading process right after), or hand graded
    since (ledger.grades_fingerprint), each process of the pool writing a share of them; a student whose page
    nbgrader could not write becomes not graded, with that reason. Each page then current is recorded."""
    shown = _page_fingerprints(run, list(graded.reports))
    current = {s for s in graded.reports if s not in graded.problems and not graded.marks_put_back
               and _page_is_current(run, s, s not in graded.unchanged or shown[s][0] == shown[s][1])}
    students = [s for s in graded.reports if s not in graded.problems and s not in current]
    jobs = run.jobs
    shares = [share for share in (students[i::jobs] for i in range(jobs)) if share]
    started = time.time() - 1  # a page counts as written this run from here (mtime granularity)

    def missing() -> list[str]:
        return [s for s in students if not run.feedback_page(s).exists()]

    def written() -> int:
        pages = (run.feedback_page(s) for s in students)
        return sum(1 for p in pages if p.exists() and p.stat().st_mtime >= started)

    writer = _feedback_writer(run.assignment, run.settings.config)
    try:
        with Progress("feedback", len(students), unit="page", count=written) as bar:
            list(run_pool(shares, writer, jobs, bar))
    except RuntimeError as exc:  # the pages it did not write are tried again, one student a process
        say(f"nbgrader could not write every feedback page ({one_line(str(exc))}): trying those students one by one.")
        try:
            list(run_pool([[student] for student in missing()], writer, jobs))
        except RuntimeError:  # the pages still missing are named below, student by student
            pass
    for student in missing():
        graded.problems[student] = "nbgrader could not write its feedback page"
    graded.notes = {s: n for s, n in graded.notes.items() if s not in graded.problems}
    _record_pages(run, {s: now for s in [*current, *students] if s not in graded.problems and (now := shown[s][1])})


def _page_fingerprints(run: ClassRun, students: list[str]) -> dict[str, tuple[str | None, str | None]]:
    """{student: (what their page was recorded to show, what the gradebook holds now)}."""
    name = run.assignment.name
    with Gradebook(run.coursedir.db_url, run.coursedir.course_id) as gb:
        recorded = ledger.read(gb.db, name)
        gb.db.commit()
        shown = {}
        for student in students:
            try:
                now: str | None = ledger.grades_fingerprint(gb.find_submission(name, student))
            except MissingEntry:
                now = None
            shown[student] = (recorded.get(student, {}).get("page"), now)
    return shown


def _record_pages(run: ClassRun, pages: dict[str, str]) -> None:
    """The grades each of these pages shows, in the ledger."""
    if not pages:
        return
    with Gradebook(run.coursedir.db_url, run.coursedir.course_id) as gb:
        for student, fingerprint in pages.items():
            ledger.write(gb.db, run.assignment.name, student, "page", fingerprint)
        gb.db.commit()


def _page_is_current(run: ClassRun, student: str, grades_shown: bool) -> bool:
    """Whether the student's page was written after their report.json and shows the gradebook's grades."""
    try:
        page = run.feedback_page(student).stat().st_mtime_ns
        return grades_shown and page >= report_path(run.coursedir, student, run.assignment.name).stat().st_mtime_ns
    except OSError:
        return False


def summarize(run: ClassRun, graded: Graded, students: list[str], problems: dict[str, str],
              collected: list[str]) -> None:
    """`make grade`'s summary: scores, each part's pass rate, limits hit, notes, who was not graded and why."""
    assignment, coursedir, reports = run.assignment, run.coursedir, graded.reports
    late: dict[str, tuple[float, float]] = {}  # student -> (seconds late, penalty)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        autograded = {}
        for student in (s for s in students if s not in graded.grader_faults):  # no score: not in the mean
            try:
                submission = gb.find_submission(assignment.name, student)
            except Exception:  # no submission recorded (the summary names why): it counts as 0
                autograded[student] = 0.0
                continue
            autograded[student] = submission.code_score
            if submission.total_seconds_late > 0:
                late[student] = (submission.total_seconds_late, submission.late_submission_penalty or 0.0)
        book = gb.find_assignment(assignment.name)
        auto_max, written_max = book.max_code_score, book.max_written_score
    say(f"\n{counted(len(students), 'submission')}, {len(students) - len(problems)} graded; "
        f"mean {mean_points(list(autograded.values()))} of {auto_max:g} "
        f"autograded points (the {written_max:g} points of written answers are graded in the formgrader).")
    say(f"Autograded in this run: {graded.attempted}; unchanged since their grade, so left as they were: "
        f"{len(graded.unchanged)}" + (" (make grade FORCE=1 grades them again)." if graded.unchanged else "."))
    say("Pass rate per part (full marks on the part):")
    for cell in assignment.grade_cells:
        full = sum(1 for r in reports.values() for p in r.parts if p.grade_id == cell.grade_id and p.score == p.max_score)
        say(f"  {cell.grade_id:<28}{full}/{len(students)}  {run.settings.title(cell.grade_id)}")
    limited = {s: sorted(set(r.limits)) for s, r in reports.items() if r.limits}
    if limited:
        say("Hit a limit: " + ", ".join(f"{s} ({'/'.join(names)})" for s, names in sorted(limited.items())))
    for student, (seconds, penalty) in sorted(late.items()):
        say(f"Late: {student}, by {late_by(seconds)} (late penalty {penalty:g} points)")
    for student, note in sorted(graded.notes.items()):
        say(f"Graded with a note: {student}: {note}")
    for student, reason in sorted(problems.items()):
        say(f"Not graded: {student}: {reason}" + (f" (the grader's failure: no score written; make regrade "
                                                    f"STUDENT={student} once it is fixed)" if student in graded.grader_faults else ""))
    for line in collected:  # the LMS download's files not collected, and work kept over it
        say(line)
    say(f"Wrote {coursedir.db_url.replace('sqlite:///', '')}, grades.csv and feedback/<student>/{assignment.name}/.")
