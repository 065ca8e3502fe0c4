"""Which students a `make grade` grades: those whose grade's inputs changed since it was given.

A grade is a function of the student's submitted folder (as the intake sees it), the hidden suites, the reference and the settings that
can change a score (ledger.Inputs). `plan_class` sorts the class by comparing each student's inputs now with
those the ledger recorded when the grade was given:

* fresh: new, a changed submitted folder (read under the intake's rules its grade was given under:
  `folder_changed`), never recorded, or (nothing else changed) its answers' checksums
  recorded in another format (ledger.ANSWERS_FORMAT: the first `make grade` after an upgrade that changes it grades
  every student again, and keeps every hand grade of an unchanged answer unflagged: ledger.carried_over), or its
  report.json gone
  (`make clean-grading`), one this kit does not read (report.Report.load), or one that says the grader failed on
  it: graded, as the student's own input asks;
* stale: the same submission, but the suites, the reference or the settings (the intake's rules among them: what
  it takes of a folder) changed: a regrade would change grades the students have seen, so `make grade` previews
  it and applies it only with CONFIRM=yes (preview.py);
* unchanged: left alone, every row, flag, page and CSV cell of theirs; but a ledger row that holds other intake
  rules than today's, which read the folder the same (or none, or not all of today's: recorded by an older kit), gets today's
  (`Plan.rules_to_record`), so that the folder is read once, and a later change of them told from a change of it.

`FORCE=1` (`--force`) grades the unchanged students too; the stale ones are still previewed unless confirmed.
"""
from __future__ import annotations

import platform
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from ..assignment import Assignment
from ..checks.answer_cache import KIT, code_files
from ..intake.files import IntakeRules
from ..nbgrader_glue.late import due_date_in_force
from ..nbgrader_glue.preprocessors.run_hidden_suites import report_path
from ..report import Report, ReportUnreadable
from ..settings import GraderSettings
from . import ledger
from .ledger import Inputs

# The limits and budgets; autograde_seconds among them, as notebook_kb is: a student past it is not graded, and scores 0.
SCORE_SETTINGS = ("seconds", "memory_mb", "output_kb", "answer_kb", "notebook_kb", "budget_seconds", "budget_answers_mb",
                  "budget_memory_mb", "budget_processes", "budget_disk_mb", "message_chars", "message_budget",
                  "autograde_seconds")
# The intake's caps (IntakeRules; notebook_kb, a score setting too, is one of them): recorded with each grade as the
# rules its folder was read under (ledger.Inputs.intake); a change of them is a change of settings for each folder
# they read otherwise (folder_changed).
INTAKE_SETTINGS = ("submission_files", "submission_file_kb", "submission_files_total_kb", "submission_entries")
# The settings that never change a score (tests/test_grade_inputs.py holds every other one to SCORE_SETTINGS or
# INTAKE_SETTINGS): how the work is spread and confined, what the pages and exports show, the due date
# (course_inputs' own), and the time a feedback page may take (a page it stopped leaves the gradebook's scores as
# they are, and every run writes a missing page again, under the setting of the day).
NOT_SCORE_SETTINGS = ("jobs", "isolate", "gradescope_hidden_visibility", "part_titles", "canvas_column", "canvas_partial",
                      "canvas_roster", "canvas_folder_ids", "due_date", "page_seconds")
LATE_SECTIONS = ("AssignLatePenalties", "LatePenalty", "LateSubmissionPlugin")


def suite_files(assignment: Assignment) -> list[Path]:
    """The files a grade's "suites" fingerprint reads: the hidden suites and the kit's code that grades them (every
    module: the sandbox, the checks and their parametrisation, the scoring and the late penalty all change a score,
    so an upgrade of the kit is previewed as a fixed check is)."""
    return list(dict.fromkeys(code_files(assignment.suite_dir, KIT)))


def grader_fingerprint(assignment: Assignment) -> str:
    """The "suites" input of a grade: suite_files, and the Python and NumPy that run both the notebook and the
    reference (a new NumPy may round, warn or raise otherwise)."""
    import numpy

    return ledger.settings_fingerprint({"code": ledger.files_fingerprint(suite_files(assignment), assignment.root),
                                        "python": platform.python_version(), "numpy": numpy.__version__})


def course_inputs(assignment: Assignment, settings: GraderSettings, due_date: object) -> dict[str, str]:
    """The fingerprints of the course's side of every grade: suites, reference, settings (with the due date
    in force and the late penalty's configuration), and of those two alone ("late")."""
    config = settings.config
    values = {name: getattr(settings, name) for name in SCORE_SETTINGS}
    values["due_date"] = str(due_date or "")
    values["late"] = {section: dict(config[section]) for section in LATE_SECTIONS if section in config}
    reference = [assignment.root / "solutions" / assignment.name / assignment.notebook_name,
                 *code_files(assignment.source_dir, assignment.release_dir)]
    return {"suites": grader_fingerprint(assignment),
            "reference": ledger.files_fingerprint(reference, assignment.root),
            "settings": ledger.settings_fingerprint(values),
            "late": ledger.settings_fingerprint({"due_date": values["due_date"], "late": values["late"]})}


@dataclass
class Plan:
    """The class sorted by what changed (module doc); `inputs`: each student's inputs now."""

    fresh: list[str] = field(default_factory=list)
    stale: dict[str, list[str]] = field(default_factory=dict)  # student -> which of the course's inputs changed
    unchanged: list[str] = field(default_factory=list)
    inputs: dict[str, Inputs] = field(default_factory=dict)
    rules_to_record: list[str] = field(default_factory=list)  # unchanged, recorded under other intake rules or none
    # Last graded under today's due date and late policy: their late penalty may be worked out again from the hand
    # grades before anything is previewed (settle_late_penalties); a penalty the due date or policy moves is not.
    same_late: list[str] = field(default_factory=list)


def plan_class(assignment: Assignment, settings: GraderSettings, coursedir, submitted: Path,
               students: list[str], force: bool) -> Plan:
    """Sort `students` into fresh, stale and unchanged (module doc)."""
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        book = ledger.read(gb.db, assignment.name)
        gb.db.commit()
        try:
            graded = {s.student_id for s in gb.assignment_submissions(assignment.name)}
        except MissingEntry:
            graded = set()
        course = _course_now(gb, assignment, settings)
    plan = Plan()
    rules = IntakeRules.of(settings, assignment.notebook_name)
    for student in students:
        folder = (student, assignment.name)
        now = Inputs(ledger.folder_fingerprint(submitted, folder, rules), answers_format=ledger.ANSWERS_FORMAT,
                     intake=rules, **course)
        before = Inputs.from_json(book.get(student, {}).get("inputs"))
        plan.inputs[student] = now
        if _same_late(before, course):
            plan.same_late.append(student)
        outputs = _has_outcome(report_path(coursedir, student, assignment.name))
        if before is None or student not in graded or folder_changed(before, now, submitted, folder):
            plan.fresh.append(student)
        elif changed := before.course_changed(now):
            plan.stale[student] = changed
        else:
            current = outputs and before.answers_format == now.answers_format
            if force or not current:
                plan.fresh.append(student)
                continue
            plan.unchanged.append(student)
            if before.intake != now.intake:
                plan.rules_to_record.append(student)
    return plan


def graded_under_todays_late_policy(assignment: Assignment, settings: GraderSettings, coursedir,
                                    students: list[str]) -> list[str]:
    """Those of `students` whose grade the ledger records under today's due date in force and late policy: `make
    feedback` settles only their late penalties, a change of the others' being `make grade`'s to preview."""
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        book = ledger.read(gb.db, assignment.name)
        gb.db.commit()
        course = _course_now(gb, assignment, settings)
    return [s for s in students if _same_late(Inputs.from_json(book.get(s, {}).get("inputs")), course)]


def _course_now(gb: Gradebook, assignment: Assignment, settings: GraderSettings) -> dict[str, str]:
    return course_inputs(assignment, settings, due_date_in_force(gb, assignment.name, settings.due_date))


def _same_late(before: Inputs | None, course: dict[str, str]) -> bool:
    return before is not None and before.late == course["late"]


def folder_changed(before: Inputs, now: Inputs, submitted: Path, folder: tuple[str, ...]) -> bool:
    """Whether the student's folder changed since the grade `before`: read under the intake's rules that grade
    was given under, so that a change of the rules alone is a change of settings (Inputs.course_changed),
    previewed, and only for the folders the new rules read otherwise. A grade recorded by a kit that read folders
    otherwise (Inputs.reading: a row without its rules too, recorded by a kit older than any that records them)
    cannot be told from a new submission by reading the folder again: it is taken as unchanged, so that a
    fingerprint that differs is previewed as the kit's change."""
    if before.reading != now.reading:
        return False
    if before.intake is None or before.intake == now.intake:
        return before.submission != now.submission
    return before.submission != ledger.folder_fingerprint(submitted, folder, before.intake)


def _has_outcome(report: Path) -> bool:
    """Whether the student's report.json holds their outcome: graded, or not graded for a reason of their file."""
    try:
        return not Report.load(report).grader_fault
    except (OSError, ReportUnreadable):
        return False


def record_inputs(coursedir, assignment: str, inputs: dict[str, Inputs]) -> None:
    """What produced each of these students' grades, in the ledger, in one transaction."""
    if not inputs:
        return
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        for student, given in inputs.items():
            ledger.write(gb.db, assignment, student, "inputs", ledger.inputs_json(given))
        gb.db.commit()
