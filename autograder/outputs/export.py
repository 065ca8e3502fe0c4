"""grades.csv with a column per autograded part, and the hand-graded points kept apart until graded.

`PartsCsvExportPlugin` is an nbgrader export plugin (nbgrader_config.py sets it as
`c.ExportApp.plugin_class`), so `make grade` and `nbgrader export` write the same file. One row per
student and assignment, written with the csv module (names with commas or quotes round-trip):

    assignment, duedate, timestamp, student_id, last_name, first_name, email,
    <one column per autograded part, e.g. test_forward, ...>,
    auto_score, max_auto_score,            the autograded points (of the parts' points, 18 here)
    manual_score, max_manual_score,        the hand-graded points: empty until every one is graded (of 6 here)
                                           and no hand grade waits for review
    raw_score,                             the points graded so far, before the penalty (`so_far`: a hand grade
                                           waiting for review counts as its autograded score alone)
    hours_late,                            past the due date (c.GraderSettings.due_date), 0 when on time
    late_submission_penalty,               nbgrader's, from the late policy (autograder/nbgrader_glue/late.py)
    score, max_score                       the total after the penalty: empty while manual_score is

A student the grader failed on (no autograded score in the gradebook) has every score column empty: never a zero.

A part is autograded when its grade cell is a code cell that is not also a solution cell (the hidden
suites' test cells); every other grade cell (the written answers) is graded by hand. A part an
instructor changed in the formgrader shows the changed score, as nbgrader counts it; while that hand grade is
flagged for review (the student's code changed since), the totals wait for the review as for a written answer.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin

from .inert import spreadsheet_cell

FIXED = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email"]
TOTALS = ["auto_score", "max_auto_score", "manual_score", "max_manual_score", "raw_score", "hours_late",
          "late_submission_penalty", "score", "max_score"]


def number(value: float) -> str:
    return f"{round(value, 4):g}"


def waits_for_grader(grade) -> bool:
    """Whether an nbgrader Grade's points wait for a grader: it needs one (`needs_manual_grade`: a written answer
    not graded yet, or a hand grade flagged for review, the answer changed since it was given) and has no
    autograded score of the answer as it is now."""
    return bool(grade.needs_manual_grade) and grade.auto_score is None


def grade_so_far(grade) -> tuple[float, float]:
    """(the points an nbgrader Grade counts for so far, the points of it that wait for a grader).

    A grade that needs a grader counts as its autograded score alone, a score of the answer as it is now: a
    written answer has none, so its points wait (`waits_for_grader`); an autograded part whose override waits for
    review counts the checks' score of the code now (the points are graded, the override is not)."""
    if waits_for_grader(grade):
        return 0.0, grade.max_score
    return (grade.auto_score if grade.needs_manual_grade else grade.score) or 0.0, 0.0


def so_far(grades) -> tuple[float, float]:
    """(points graded so far, points that wait for a grader) of these grades, before any late penalty: the one
    reckoning behind the feedback page's total, grades.csv's raw_score and the Canvas file's partial total
    (c.GraderSettings.canvas_partial), so that the three agree."""
    counted = [grade_so_far(grade) for grade in grades]
    return sum(points for points, _ in counted), sum(waiting for _, waiting in counted)


def graded_parts(assignment) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """(autograded parts, hand-graded parts) of a gradebook assignment: (grade id, points), notebook order."""
    auto: list[tuple[str, float]] = []
    manual: list[tuple[str, float]] = []
    for notebook in assignment.notebooks:
        solutions = {cell.name for cell in notebook.solution_cells}
        for cell in notebook.grade_cells:
            (auto if cell.cell_type == "code" and cell.name not in solutions else manual).append((cell.name, cell.max_score))
    return auto, manual


def grade_rows(gradebook: Gradebook, assignments: list[str] | None = None,
               students: list[str] | None = None) -> tuple[list[str], list[dict]]:
    """(column names, one dict per student and assignment) as grades.csv holds them."""
    rows, part_columns = [], []
    for assignment in gradebook.assignments:
        if assignments and assignment.name not in assignments:
            continue
        auto, manual = graded_parts(assignment)
        part_columns += [name for name, _ in auto if name not in part_columns]
        max_auto, max_manual = sum(p for _, p in auto), sum(p for _, p in manual)
        for student in gradebook.students:
            if students and student.id not in students:
                continue
            row = {"assignment": assignment.name, "duedate": assignment.duedate or "", "student_id": student.id,
                   "last_name": student.last_name or "", "first_name": student.first_name or "",
                   "email": student.email or "", "max_auto_score": number(max_auto),
                   "max_manual_score": number(max_manual), "max_score": number(max_auto + max_manual)}
            try:
                submission = gradebook.find_submission(assignment.name, student.id)
            except MissingEntry:  # nothing submitted: zero, and nothing left to grade by hand
                row.update({name: "0" for name, _ in auto})
                row.update(timestamp="", auto_score="0", manual_score="0", raw_score="0", hours_late="0",
                           late_submission_penalty="0", score="0")
                rows.append(row)
                continue
            grades = {grade.name: grade for notebook in submission.notebooks for grade in notebook.grades}
            if any(name in grades and grades[name].auto_score is None and grades[name].manual_score is None for name, _ in auto):
                # The grader failed on it (classroom/not_graded.py records no score): blank, never a zero; the summary says why.
                row.update({name: "" for name in [*(n for n, _ in auto), "auto_score", "manual_score", "raw_score",
                                                  "hours_late", "late_submission_penalty", "score"]})
                row.update(timestamp=str(submission.timestamp or ""))
                rows.append(row)
                continue
            auto_names = {name for name, _ in auto}
            auto_score = 0.0
            for name, _ in auto:
                score = grades[name].score if name in grades else 0.0
                row[name] = number(score)
                auto_score += score
            manual_grades = [g for n, g in grades.items() if n not in auto_names]
            # Final only once nothing waits for a grader: a written answer not graded, or any hand grade flagged for
            # review, an override or extra credit on an autograded part whose code changed too (an autograded part
            # with a score of its own is never flagged: nbgrader and SaveAutoGradesAtOnce flag hand grades only).
            complete = not any(g.needs_manual_grade for g in grades.values())
            manual_score = sum(g.score for g in manual_grades)
            penalty = submission.late_submission_penalty or 0.0
            row.update(timestamp=str(submission.timestamp or ""), auto_score=number(auto_score),
                       manual_score=number(manual_score) if complete else "",
                       raw_score=number(so_far(grades.values())[0]), hours_late=number(submission.total_seconds_late / 3600),
                       late_submission_penalty=number(penalty),
                       score=number(max(0.0, auto_score + manual_score - penalty)) if complete else "")
            rows.append(row)
    return FIXED + part_columns + TOTALS, rows


def write_grades_csv(gradebook: Gradebook, dest: Path | str, assignments: list[str] | None = None,
                     students: list[str] | None = None) -> Path:
    columns, rows = grade_rows(gradebook, assignments, students)
    dest = Path(dest)
    partial = dest.with_name(dest.name + ".partial")
    with partial.open("w", newline="", encoding="utf-8") as handle:
        # RFC 4180's CRLF: with it the csv module quotes a cell holding a CR (with "\n" alone it does not, and a
        # name with a CR in it would start a row of its own in a spreadsheet).
        writer = csv.DictWriter(handle, fieldnames=columns, restval="", extrasaction="ignore", lineterminator="\r\n")
        writer.writeheader()
        writer.writerows({name: spreadsheet_cell(value) for name, value in row.items()} for row in rows)
    os.replace(partial, dest)
    return dest


class PartsCsvExportPlugin(ExportPlugin):
    """grades.csv with one column per autograded part and the manual points apart (module docstring)."""

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", dest)
        write_grades_csv(gradebook, dest, [str(a) for a in self.assignment] or None,
                         [str(s) for s in self.student] or None)
