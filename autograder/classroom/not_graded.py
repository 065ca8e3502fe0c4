"""A submission `make grade` could not grade: its record in the gradebook, its report.json and its feedback page.

The Report (report.Report.not_graded) is the one source: it holds the reason and whether the grader, not the
notebook, failed; the gradebook's scores, the page the student reads, `make grade`'s summary and the class page
all follow from it, and nothing reads the page back.
"""
from __future__ import annotations

import html
import shutil

from nbgrader.api import Gradebook

from ..nbgrader_glue.late import settle_penalties
from ..nbgrader_glue.preprocessors.run_hidden_suites import report_path
from ..report import Report
from . import ledger
from .class_run import ClassRun

RESUBMIT_ADVICE = "Score: 0. Submit the notebook file itself, saved from Jupyter."
GRADER_FAULT_ADVICE = ("No score yet. The grader failed on this submission, not your notebook: your instructor "
                       "will grade it again (make regrade).")


def record_not_graded(run: ClassRun, student: str, report: Report) -> None:
    """Zero in the gradebook, or no score at all when the grader failed on it (never a zero: grades.csv and the
    Canvas file leave it blank); the report saved as the student's report.json; and (not in a preview) a
    feedback page with the reason and what to do (resubmit, when the file is the student's problem; nothing,
    when the grader failed on it).

    A hand grade (a manual score or extra credit) stays. When the file is the student's problem, the answers it graded are gone: it is flagged
    for review, and the ledger records that no answer is shown, keeping the one it was reviewed on (a grade
    confirmed now stands on no answer). When the grader failed, nothing is known of the answers: the flag and
    the ledger stay as they were.

    The late penalty (not when the grader failed: no score at all) is worked out again from the points left, the
    hand grades (late.settle_penalties), as nbgrader's AssignLatePenalties does for a file it grades and never runs
    for one it does not: here, the one place a preview's scratch run and CONFIRM=yes both take, so that CONFIRM
    applies the penalty the preview showed, and no later `make feedback` moves it unseen."""
    assignment = run.assignment
    with Gradebook(run.coursedir.db_url, run.coursedir.course_id) as gb:
        gb.update_or_create_student(student)
        submission = gb.update_or_create_submission(assignment.name, student)
        book = ledger.read_answers(gb.db, assignment.name, student)
        for notebook in submission.notebooks:
            answers = book.setdefault(notebook.name, {})
            for grade in notebook.grades:
                grade.auto_score = None if report.grader_fault else 0
                if not ledger.hand_graded(grade):
                    grade.needs_manual_grade = False
                if report.grader_fault:
                    continue  # nothing is known of the answer: a hand grade keeps its flag
                answers[grade.name] = ledger.answer_gone(grade, answers.get(grade.name))
        if not report.grader_fault:
            ledger.write_answers(gb.db, assignment.name, student, book)
        gb.db.commit()  # the scores written, which the penalty reads back (nbgrader's notebook score)
        if not report.grader_fault:
            settle_penalties(gb, assignment.name, run.settings.config, [student])
            gb.db.commit()
    # An earlier run's autograded copy would otherwise come back as this student's feedback page.
    folder = report_path(run.coursedir, student, assignment.name).parent
    shutil.rmtree(folder, ignore_errors=True)
    report.save(folder / "report.json")
    if run.preview:  # a preview writes no page
        return
    page = run.feedback_page(student)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(not_graded_page(assignment.name, report), encoding="utf-8")


def not_graded_page(assignment: str, report: Report) -> str:
    """The feedback page of a submission not graded: the report's reason, and what to do."""
    advice = GRADER_FAULT_ADVICE if report.grader_fault else RESUBMIT_ADVICE
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(assignment)}</title></head>"
            f"<body><main><h1>{html.escape(assignment)}: not graded</h1><p>{html.escape(report.error)}</p>"
            f"<p>{advice}</p></main></body></html>\n")
