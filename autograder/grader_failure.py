"""What one notebook's grade says when the grader, not the notebook, failed: one line, never a score.

`python -m autograder grade` prints it and exits non-zero; Gradescope's run_autograder writes it as the
output of a results.json that holds no score (gradescope.py). The reason is the failure itself (the sandbox
worker reports why it could not start: sandbox/worker.py), never a guess, and no traceback.
"""
from __future__ import annotations

from .inert import one_line

WHAT_TO_DO = "no score was given; `make test` shows what is wrong with the grader: fix it and grade again"


def failure_reason(exc: BaseException) -> str:
    """What failed, as the exception says it: one line."""
    return one_line(f"{type(exc).__name__}: {exc}", 300)


def grader_failure(exc: BaseException) -> str:
    """The instructor's one line for a grader that failed with `exc` while grading one notebook."""
    return f"the grader failed, not the notebook ({failure_reason(exc)}): {WHAT_TO_DO}"
