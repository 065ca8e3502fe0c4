"""One notebook to grade, as it travels down the grading path: its content, or why it has none.

A value, not a step (docs/submission-path.md): validate.read_submission makes one from a file,
RunHiddenSuites from the notebook nbgrader read; suites.Grader fills in its checks' results and the
limits it hit; report.Report.from_submission turns it into the Report the student is shown.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import CheckResult


@dataclass
class Submission:
    """One notebook to grade: its content, or why it has none; the checks' results fill in as it is graded."""

    key: str
    notebook: dict | None = None
    error: str = ""
    results: dict[str, list[CheckResult]] = field(default_factory=dict)
    limits: list[str] = field(default_factory=list)
