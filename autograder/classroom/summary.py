"""`make grade`'s summary: what the run's reports (graded or not) and the gradebook say, in a few lines."""
from __future__ import annotations

from nbgrader.api import Gradebook, MissingEntry

from ..intake.student_ids import is_safe_student_id
from ..nbgrader_glue.late import late_by
from ..outputs.counts import counted, mean_points
from ..outputs.inert import quoted, say
from .class_run import ClassRun, Graded


def summarize(run: ClassRun, graded: Graded, students: list[str], refused: dict[str, str],
              collected: list[str]) -> None:
    """`make grade`'s summary: scores, each part's pass rate, limits hit, notes, who was not graded and why (their
    reports' reasons, and `refused`: the students whose ids were refused)."""
    assignment, coursedir, reports = run.assignment, run.coursedir, graded.reports
    problems, grader_faults = {**graded.not_graded(), **refused}, graded.grader_faults
    late: dict[str, tuple[float, float]] = {}  # student -> (seconds late, penalty)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        autograded = {}
        for student in (s for s in students if s not in grader_faults):  # no score: not in the mean
            try:
                submission = gb.find_submission(assignment.name, student)
            except Exception:  # no submission recorded (the summary names why): it counts as 0
                autograded[student] = 0.0
                continue
            autograded[student] = submission.code_score
            if submission.total_seconds_late > 0:
                late[student] = (submission.total_seconds_late, submission.late_submission_penalty or 0.0)
        due = None
        try:
            book = gb.find_assignment(assignment.name)
            due = book.duedate
            points = (f"{book.max_code_score:g} autograded points (the {book.max_written_score:g} points of written "
                      f"answers are graded in the formgrader)")
        except MissingEntry:  # a fresh course where no one was graded: nbgrader has not entered the assignment
            points = f"{sum(cell.points for cell in assignment.grade_cells):g} autograded points"
    say(f"\n{counted(len(students), 'submission')}, {len(students) - len(problems)} graded; "
        f"mean {mean_points(list(autograded.values()))} of {points}.")
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
    if due and not run.settings.due_date.strip():  # the kit's own, once written, is the gradebook's: say it stays
        say(f"Due date in force: {due:%Y-%m-%d %H:%M:%S} UTC, the gradebook's own (c.GraderSettings.due_date is empty: "
            "a date an earlier make grade wrote stays); to move it (a later date waives lateness), set "
            "c.GraderSettings.due_date: make grade previews the change.")
    for student, note in sorted(graded.notes.items()):
        say(f"Graded with a note: {student}: {note}")
    for student, reason in sorted(problems.items()):  # a folder refused for its id is named as its quoted escapes
        named = student if is_safe_student_id(student) else quoted(student)
        say(f"Not graded: {named}: {reason}" + (f" (the grader's failure: no score written; make regrade "
                                                    f"STUDENT={named} once it is fixed)" if student in grader_faults else ""))
    for line in collected:  # the LMS download's files not collected, and work kept over it
        say(line)
    say(f"Wrote {coursedir.db_url.replace('sqlite:///', '')}, grades.csv and feedback/<student>/{assignment.name}/.")
