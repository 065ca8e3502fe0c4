"""`make grade`: every submission of an assignment into gradebook.db, feedback/ and grades.csv.

nbgrader does the bookkeeping through its own converters and API: the gradebook, locked cells,
late penalties, feedback HTML and the CSV export. Its Execute step is replaced by RunHiddenSuites
(nbgrader_config.py), which grades each notebook in the sandbox and writes its report (notes
included) beside the autograded notebook. grade_class is the run's sequence of steps, each in a module of
its own: who is in the class (students.py), who changed (changes.py), grading them in forked processes, one
student at a time, each ending with a report.json, graded or not (grade_students.py, not_graded.py), the
feedback pages (feedback_pages.py: each grading process writes its students' pages once no student is left
to hand out, and the pool then writes any page still missing or stale), grades.csv, and the summary
(summary.py), all read from the reports and the gradebook.
"""
from __future__ import annotations

import shutil
import sys
import warnings

from nbformat.warnings import DuplicateCellId, MissingIDFieldWarning
from sqlalchemy.exc import SAWarning

from ..assignment import Assignment
from ..outputs.counts import counted
from ..outputs.inert import say
from ..sandbox.proof import prove_level
from ..settings import GraderSettings
from .changes import Plan, graded_under_todays_late_policy, plan_class, record_inputs
from .class_run import ClassRun, Graded
from .feedback_pages import page_time, write_feedback
from .grade_students import enter_assignment, grade_students, take_unchanged
from .lifecycle import export_grades, settle_late_penalties
from .preview import previewed_reports
from .progress import one_step
from .students import in_gradebook, list_students, take_roll
from .summary import summarize

NOT_APPLIED = 4  # CONFIRM=yes, or `make regrade`, previewed a change of the course's side of grades rather than applying it


def grade_class(assignment: Assignment, settings: GraderSettings, only: list[str] | None = None,
                force: bool = False, confirm: bool = False, preview: bool = False) -> int:
    """Grade the class (or `only` these students of submitted/, unchanged too: `make regrade STUDENT=...`); 0 when done,
    NOT_APPLIED when `only` names a student whose regrade was previewed instead, or `confirm` was given for a regrade
    no preview showed under today's inputs (preview.previewed_reports): those students are previewed, and left as they
    were, the other students graded.

    take the roll (collect, or the students `only` names; `preview` collects nothing) → sort the students by what changed since their grade
    (changes.plan_class) → a preview, when the course's side of some grades changed and `confirm` is not given (or
    `preview` asks for one), and stop there → enter the assignment in the gradebook → grade the new and changed
    (the pool, which writes their feedback pages at its end; each ends with a report.json, graded or not) → the
    pages whose grades changed (the pool again) → grades.csv → the summary.
    `force`: the unchanged students are graded again too."""
    _quiet_nbgrader_warnings()
    run = ClassRun.open(assignment, settings)
    run.proof = prove_level(assignment, settings, run.jobs + 1)  # a grader that cannot grade writes nothing
    if run.proof.refusal:
        say(f"Not graded, nothing written: {run.proof.refusal}", sys.stderr)
        return 3
    roll = take_roll(run, only, collect=not preview)  # make preview writes no submitted/ folder (preview.py)
    if roll.refusal:
        say(f"regrade: {roll.refusal}", sys.stderr)
        return 2
    # Named students are graded again even when unchanged; one whose grade the changed suites, reference or settings
    # would change is previewed as in make grade, so that no regrade of one student applies a change unseen.
    plan = plan_class(assignment, settings, run.coursedir, run.submitted, roll.students, force or bool(only))
    if not preview:  # before anything is compared or graded: a regrade starts from the penalty in force; but a
        # penalty a new due date or late policy moves is the preview's to show and CONFIRM's to apply
        settle_late_penalties(assignment, run.coursedir, settings.config, plan.same_late, held=[])
    # What CONFIRM=yes applies: the reports previews gave under today's inputs, read once (red-a22 X31-a22-1: not
    # after the held students' preview records theirs); the students with none are held, whatever the reason.
    replay = previewed_reports(assignment.root, assignment.name, {s: plan.inputs[s] for s in plan.stale}) if confirm else {}
    unseen = sorted(set(plan.stale) - set(replay)) if confirm else []
    if unseen and not preview:
        say(f"CONFIRM=yes applies only a regrade a preview showed, and no preview showed that of {', '.join(unseen)} "
            "under today's suites, reference and settings: previewing it now; run the same command again to apply it.")
    if plan.stale and (preview or not confirm or unseen) and only:  # not what was asked: not a success
        return preview_class(run, plan, roll.origin, "make regrade STUDENT=<student> CONFIRM=yes") or NOT_APPLIED
    if plan.stale and (preview or not confirm):
        return preview_class(run, plan, roll.origin, "make grade CONFIRM=yes") or (NOT_APPLIED if confirm else 0)
    if preview:
        say("Nothing to preview: no grade was given under other suites, reference or settings than today's.")
        return 0
    # CONFIRM=yes: the unseen are previewed and left as they were, the rest applied; so that one student whose
    # preview the grader keeps failing on (previewed again each time: preview_class) holds back no one else. A
    # preview the grader failed on whole says so, and the others are still graded (a machine that cannot grade
    # stops that too: grade_students).
    held = Plan(stale={student: plan.stale.pop(student) for student in unseen}, inputs=plan.inputs)
    if held.stale:
        previewed = preview_class(run, held, roll.origin, "make grade CONFIRM=yes")
        if not (plan.stale or plan.fresh):
            return previewed or NOT_APPLIED
    graded = Graded()
    to_grade = sorted([*plan.fresh, *plan.stale])
    if to_grade:
        if not enter_assignment(run):
            return 1
        # The previewed students get the checks' reports their preview gave, not a second run of their code, which
        # may answer otherwise (the clock, `secrets`): CONFIRM=yes applies the outcome the preview showed.
        graded = grade_students(run, to_grade, roll.origin, plan.inputs, replay)
        if graded.stopped:
            say(f"Not graded, no score written: {graded.stopped}", sys.stderr)
            return 3
        record_inputs(run.coursedir, assignment.name, graded.inputs)
    record_inputs(run.coursedir, assignment.name, {student: plan.inputs[student] for student in plan.rules_to_record})
    take_unchanged(run, Plan(unchanged=[*plan.unchanged, *held.stale]), graded)
    write_feedback(run, graded)
    gone = [s for s in in_gradebook(run) if not (run.submitted / s / assignment.name).is_dir()]
    if gone:  # graded, their folder gone since: not graded again, their page still follows the gradebook
        rewritten, kept = follow_gradebook(run, gone)
        say(f"Kept as graded, no folder in submitted/ now: {', '.join(gone)} (their feedback pages follow the "
            f"gradebook; {counted(len(rewritten), 'page')} written again).")
        say_left_out(run, gone, kept)
    one_step("export", lambda: export_grades(assignment, run.coursedir), unit="file")
    summarize(run, graded, sorted([*roll.students, *roll.refused]), roll.refused, roll.collected)
    if held.stale:
        say(f"Previewed, left as they were: {', '.join(sorted(held.stale))}; run the same command again to apply it.")
    return NOT_APPLIED if held.stale else 0


def refresh_feedback(assignment: Assignment, settings: GraderSettings) -> int:
    """`make feedback`: the pages whose grades or comments changed since they were written (hand grading), of
    every student the gradebook holds a submission of (students.in_gradebook: one whose submitted/ folder is gone
    too), and grades.csv, without grading anyone. A student left out is named, with why."""
    _quiet_nbgrader_warnings()
    run = ClassRun.open(assignment, settings)
    students = in_gradebook(run)
    same = graded_under_todays_late_policy(assignment, settings, run.coursedir, students)
    settle_late_penalties(assignment, run.coursedir, settings.config, same, [s for s in students if s not in same])
    rewritten, graded = follow_gradebook(run, students)
    export_grades(assignment, run.coursedir)
    with_grades = graded.with_grades()
    say(f"Wrote {counted(len(rewritten), 'feedback page')} again" + (f" ({', '.join(rewritten)})" if rewritten else "")
        + f"; {len(with_grades) - len(rewritten)} already showed their grades. Wrote grades.csv.")
    say_left_out(run, students, graded)
    waiting, _ = list_students(run, None)
    waiting = [s for s in waiting if s not in students]
    if waiting:
        say(f"Not graded yet, so no page: {', '.join(waiting)} (make grade grades them).")
    return 0


def follow_gradebook(run: ClassRun, students: list[str]) -> tuple[list[str], Graded]:
    """The pages of these students, graded earlier and not graded again, written again where they no longer show
    the gradebook's grades: (the students whose page was written, what their reports and pages gave)."""
    graded = Graded()
    take_unchanged(run, Plan(unchanged=students), graded)
    with_grades = graded.with_grades()
    before = {s: page_time(run, s) for s in with_grades}
    write_feedback(run, graded)
    return sorted(s for s in with_grades if page_time(run, s) != before[s]), graded


def say_left_out(run: ClassRun, students: list[str], graded: Graded) -> None:
    """A line for each of these students whose page `follow_gradebook` could not write, and why."""
    name = run.assignment.name
    for student in (s for s in students if s not in graded.reports):
        again = (f"make regrade STUDENT={student} grades it again" if (run.submitted / student / name).is_dir()
                 else "and no folder in submitted/ to grade it again from")
        say(f"No feedback page for {student}: no readable report.json in autograded/{student}/{name}/ to write it "
            f"from ({again}).")
    for student, reason in sorted(graded.problems.items()):
        say(f"No feedback page for {student}: {reason}.")


def preview_class(run: ClassRun, plan: Plan, origin: str, apply: str) -> int:
    """Grade the stale students into a scratch copy of the gradebook (preview.py), print who would change and
    write the table to reports/; nothing else is written. `apply`: the command that applies it."""
    from .preview import (
        compare,
        copy_gradebook,
        record_previewed,
        scratch_config,
        scratch_folder,
        standings,
        write_table,
    )

    assignment, students = run.assignment, sorted(plan.stale)
    what = sorted({name for names in plan.stale.values() for name in names})
    say(f"The {' and '.join(what)} changed since {counted(len(students), 'student')} were graded: "
        f"previewing their regrade (nothing is written to the gradebook, feedback/ or grades.csv).")
    folder = scratch_folder(assignment.root)
    try:
        config = scratch_config(run.settings.config, folder)
        copy_gradebook(run.coursedir.db_url, config.CourseDirectory.db_url)
        scratch = ClassRun.open(assignment, GraderSettings(config=config), preview=True)
        scratch.proof = run.proof
        before = standings(scratch.coursedir, assignment.name, students)  # what the preview starts from, and shows
        if not enter_assignment(scratch):
            return 1
        # Graded.inputs: the students whose outcome the preview showed (graded, or not graded for their file's own
        # reason), as the ledger records a grade; one the grader failed on showed none, and is previewed again.
        graded = grade_students(scratch, students, origin, plan.inputs)
        if graded.stopped:
            say(f"Not previewed, nothing written: {graded.stopped}", sys.stderr)
            return 3
        # One the grader failed on showed no outcome, so CONFIRM=yes holds him, his grades as they are: what the
        # scratch run recorded of him (no score at all) is no change to show.
        held = graded.grader_faults
        compared = compare({s: b for s, b in before.items() if s not in held}, run.coursedir, scratch.coursedir,
                           assignment.name)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    record_previewed(assignment.root, assignment.name, graded.inputs, graded.reports)
    table = write_table(compared.changes, assignment.root / "reports" / f"{assignment.name}-regrade-preview.csv")
    changed = compared.students()
    say(f"\nRegrade preview: {len(changed)} of {counted(len(students), 'student')} would change"
        + (":" if changed else "; every score stays as it is."))
    for line in compared.lines():
        say(line)
    for student, reason in sorted(graded.not_graded().items()):
        say(f"  {student}: would not be graded: {reason}"
            + ("; held: CONFIRM=yes leaves their grades as they are, and previews them again" if student in held else ""))
    say(f"Wrote {table.relative_to(assignment.root)}. Nothing else was written: `{apply}` applies "
        f"it (hand grades stay, unflagged where the answer is unchanged).")
    if plan.fresh:
        say(f"{counted(len(plan.fresh), 'new or changed submission')} ({', '.join(plan.fresh)}) will be graded then too.")
    return 0


def _quiet_nbgrader_warnings() -> None:
    warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader's own session noise
    for noise in (DuplicateCellId, MissingIDFieldWarning):  # nbformat repairs these itself; the notes say so
        warnings.filterwarnings("ignore", category=noise)
