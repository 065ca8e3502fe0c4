"""What the grader says when it, not the notebook, failed: one line, never a score.

`python -m autograder grade` prints it and exits 3; Gradescope's run_autograder writes it as the output of a
results.json that holds no score (gradescope/run.py); `make grade` stops with it, before any score is written,
when the whole class failed for one grader-side reason (classroom/grade_students.py). The reason is the failure itself (the
sandbox worker reports why it could not start: sandbox/worker.py), never a guess, and no traceback.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .inert import one_line

if TYPE_CHECKING:
    from ..assignment import Assignment
    from ..sandbox.protocol import NotGraded

WHAT_TO_DO = "no score was given; `make test` shows what is wrong with the grader: fix it and grade again"


def failure_reason(exc: BaseException) -> str:
    """What failed, as the exception says it: one line."""
    return one_line(f"{type(exc).__name__}: {exc}", 300)


def grader_failure(exc: BaseException) -> str:
    """The instructor's one line for a grader that failed with `exc` while grading one notebook."""
    return f"the grader failed, not the notebook ({failure_reason(exc)}): {WHAT_TO_DO}"


def whole_class_failure(assignment: Assignment, answers: dict[str, NotGraded | None]) -> str:
    """Why every student of the class failed for one grader-side reason (a student's own name taken out of
    it), with what to do; "" when some student was graded (None) or failed for a reason of their own."""
    reasons = {_without(student, one_line(answer.reason))
               for student, answer in answers.items() if answer is not None and answer.grader_fault}
    if not answers or len(reasons) != 1 or not all(answer is not None and answer.grader_fault
                                                   for answer in answers.values()):
        return ""
    return (f"the grader failed on every submission for the same reason ({reasons.pop()}): see it for one with "
            f".venv/bin/python -m autograder grade submitted/<student>/{assignment.name}/{assignment.notebook_name}, "
            "fix it and grade again")


def _without(student: str, reason: str) -> str:
    """`reason` with `student` taken out where it stands as a whole id (a word or a path's part), so that an id
    such as "a" leaves the words that hold the letter alone."""
    return re.sub(rf"(?<![\w.-]){re.escape(student)}(?![\w-])", "<student>", reason)
