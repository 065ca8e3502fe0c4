"""The class's feedback pages: nbgrader's generate_feedback for the students graded, each page written again only
when it does not show the student's grades as the gradebook has them now (ledger.grades_fingerprint), and each
within `c.GraderSettings.page_seconds` of CPU time (cpu_bound.py): a page that takes longer is not written, and
its student is named as not graded, with that reason.

A student not graded has the page not_graded.py renders from their report, never nbgrader's.
"""
from __future__ import annotations

import contextlib
import shutil
import time
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import GenerateFeedback, NbGraderException
from nbgrader.coursedir import CourseDirectory
from traitlets import Float, List, Unicode

from ..assignment import Assignment
from ..nbgrader_glue.preprocessors.run_hidden_suites import report_path
from ..nbgrader_glue.tuning import shared_url
from ..outputs.inert import one_line, say
from ..settings import GraderSettings
from . import ledger
from .class_run import ClassRun, Graded
from .cpu_bound import each_within
from .pool import run_pool
from .progress import Progress


class GenerateFeedbackFor(GenerateFeedback):
    """nbgrader's generate_feedback for the listed students only: one process's share of the class.

    One converter writes all of its share's pages, so its HTML exporter (templates) is built once; it writes them
    in a child, one after the other, each within `page_seconds` of CPU time (cpu_bound.each_within). A page past
    it is not written (nothing of it is left in feedback/) and its student is in `too_slow`.
    """

    students = List(Unicode(), help="The students to write feedback for.")
    page_seconds = Float(GraderSettings.page_seconds.default_value, help="CPU seconds one student's page may take.")
    too_slow = List(Unicode(), help="The students whose page took longer than page_seconds: not written.")

    def init_notebooks(self) -> None:
        super().init_notebooks()
        wanted = set(self.students)
        self.assignments: dict = {path: found for path, found in self.assignments.items() if Path(path).parent.name in wanted}

    def convert_notebooks(self) -> None:
        """nbgrader's conversion of each student's folder in turn, in a child; raises, as nbgrader does, once every
        page it could write is written, when one failed."""
        everyone = self.assignments

        def convert(folder: str) -> None:
            self.assignments = {folder: everyone[folder]}
            super(GenerateFeedbackFor, self).convert_notebooks()

        stopped, succeeded = each_within(sorted(everyone), convert, self.page_seconds)
        self.assignments = everyone
        for folder in map(Path, stopped):  # stopped anywhere, even as its page was written: nothing of it stays
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(self._format_dest(folder.name, folder.parent.name))
        self.too_slow = [Path(folder).parent.name for folder in stopped]
        if not succeeded:
            raise NbGraderException("nbgrader could not write every feedback page: its log above says why")


def too_slow_reason(seconds: float) -> str:
    """Why a student graded has no feedback page, when it took too long to write."""
    return f"writing the feedback page took more than {seconds:g} s of CPU time (c.GraderSettings.page_seconds)"


def feedback_writer(assignment: Assignment, settings: GraderSettings):
    """What each feedback process runs: nbgrader's generate_feedback on its share of the class; returns the
    students whose page took too long, with that reason."""
    config = settings.config

    def feedback(students: list[str]) -> dict[str, str]:
        coursedir = CourseDirectory(config=config)
        # Some pages are written while the class's last submissions are still graded: wait for their writes.
        coursedir.db_url, coursedir.assignment_id = shared_url(coursedir.db_url), assignment.name
        app = GenerateFeedbackFor(coursedir=coursedir, config=config, students=students,
                                  page_seconds=settings.page_seconds)
        app.force = True
        app.start()  # nbgrader writes every page it can, then raises if one failed
        return {student: too_slow_reason(settings.page_seconds) for student in app.too_slow}

    return feedback


def write_feedback(run: ClassRun, graded: Graded) -> None:
    """nbgrader's feedback page for every student whose page does not show their grades as the gradebook has
    them now: graded since the page was written (and not by the grading process right after), or hand graded
    since (ledger.grades_fingerprint), each process of the pool writing a share of them; a student whose page
    nbgrader could not write, or which took too long, becomes not graded, with that reason. Each page then current
    is recorded."""
    with_grades = graded.with_grades()
    shown = _page_fingerprints(run, with_grades)
    current = {s for s in with_grades
               if _page_is_current(run, s, s not in graded.unchanged or shown[s][0] == shown[s][1])}
    students = [s for s in with_grades if s not in current]
    jobs = run.jobs
    shares = [share for share in (students[i::jobs] for i in range(jobs)) if share]
    started = time.time() - 1  # a page counts as written this run from here (mtime granularity)

    def missing() -> list[str]:
        return [s for s in students if not run.feedback_page(s).exists()]

    def written() -> int:
        pages = (run.feedback_page(s) for s in students)
        return sum(1 for p in pages if p.exists() and p.stat().st_mtime >= started)

    writer, too_slow = feedback_writer(run.assignment, run.settings), {}

    def write(items: list[list[str]], bar: Progress | None = None) -> None:
        for _, slow in run_pool(items, writer, jobs, bar):
            too_slow.update(slow)

    try:
        with Progress("feedback", len(students), unit="page", count=written) as bar:
            write(shares, bar)
    except RuntimeError as exc:  # the pages it did not write are tried again, one student a process
        say(f"nbgrader could not write every feedback page ({one_line(str(exc))}): trying those students one by one.")
        try:
            write([[student] for student in missing() if student not in too_slow])
        except RuntimeError:  # the pages still missing are named below, student by student
            pass
    for student in missing():
        graded.problems[student] = too_slow.get(student, "nbgrader could not write its feedback page")
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


def page_time(run: ClassRun, student: str) -> int | None:
    """When the student's page was last written (None: it has none)."""
    try:
        return run.feedback_page(student).stat().st_mtime_ns
    except OSError:
        return None
