"""The values one `make grade` run hands from step to step: the course as opened once (ClassRun), and what
grading the class gave (Graded: every student's Report, graded or not, and what the summary names besides).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.apps.api import NbGraderAPI
from nbgrader.coursedir import CourseDirectory

from ..assignment import Assignment
from ..report import Report
from ..sandbox.proof import Proof
from ..settings import GraderSettings
from .ledger import Inputs


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
    """What grading the class gave: each student's Report, graded or not (Report.error says why not), and the
    students the summary names besides."""

    reports: dict[str, Report] = field(default_factory=dict)  # graded or not in this run, or unchanged and read back
    problems: dict[str, str] = field(default_factory=dict)  # graded, but what had to follow failed (its page): why
    stopped: str = ""  # the whole class failed for one grader-side reason: why, and nothing was written
    notes: dict[str, str] = field(default_factory=dict)  # graded, with something the student and the instructor should know
    inputs: dict[str, Inputs] = field(default_factory=dict)  # what produced each grade given in this run (the ledger's)
    unchanged: list[str] = field(default_factory=list)  # not graded again: nothing their grade depends on changed
    attempted: int = 0  # students autograded in this run

    def not_graded(self) -> dict[str, str]:
        """Every student not graded, and why: its report's reason, or what failed after it was graded."""
        return {**{s: r.error for s, r in self.reports.items() if r.error}, **self.problems}

    def with_grades(self) -> list[str]:
        """The students graded, whose feedback page is nbgrader's."""
        return [s for s, r in self.reports.items() if not r.error and s not in self.problems]

    @property
    def grader_faults(self) -> set[str]:
        """The students not graded because the grader failed on them: no score at all, never a zero."""
        return {s for s, r in self.reports.items() if r.grader_fault}
