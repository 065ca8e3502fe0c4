"""A Report: one submission's result, graded or not, its parts (grade cells) and the checks in each, and how
to show it.

Report is what grading one notebook gives back (grading.ClassGrading.grade_one), what RunHiddenSuites saves as
report.json beside the autograded notebook, and what `make grade`'s summary, the class page (`make class-page`) and
Gradescope's results.json are rendered from. A submission `make grade` could not grade ends with a report.json
too (Report.not_graded: the reason, and whether the grader, not the notebook, failed), which its feedback page
is rendered from. Every check carries a typed Status (passed, failed, not run) and a message saying why it
failed or was not run: no reader tells them apart by the message's words.

It is built from a graded Submission (Report.from_submission) and redacted before it leaves grade_one
(redaction.redact_report); this module only holds it, reads it back (Report.load: the one place a report.json
of another kind or version is refused) and renders it (JSON, the table of `python -m autograder grade`, a
grade cell's lines).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from .outputs.inert import notes_line

if TYPE_CHECKING:
    from .assignment import GradeCell
    from .submission import Submission


# What report.json says it is: a file of another kind, or of another version of the kit, is refused (Report.from_json).
KIND = "autograder report"
VERSION = 2


class ReportUnreadable(ValueError):
    """A report.json this kit does not read: not JSON, another kind or version, or a field missing or mistyped."""


class Status(str, Enum):
    """What became of one check."""

    PASSED = "passed"
    FAILED = "failed"  # the message names the cause
    NOT_RUN = "not run"  # skipped: an earlier check ran out of time, a budget was spent, the notebook was not graded


@dataclass
class CheckResult:
    name: str
    status: Status
    message: str = ""  # why it failed or was not run; "" when it passed

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED


@dataclass
class PartResult:
    grade_id: str
    max_score: float
    tests: list[CheckResult] = field(default_factory=list)

    @property
    def score(self) -> float:
        """Points in proportion to the checks passed; a part with no completed check scores 0."""
        if not self.tests:
            return 0.0
        return round(self.max_score * sum(t.passed for t in self.tests) / len(self.tests), 2)


@dataclass
class Report:
    parts: list[PartResult]
    error: str = ""  # why the notebook could not be graded at all
    limits: list[str] = field(default_factory=list)  # limits the submission hit: "time", "memory", "output"
    notes: list[str] = field(default_factory=list)  # what the student should know about the file (renamed, pasted cells)
    grader_fault: bool = False  # not graded because the grader failed on it, not the notebook: no score at all

    @property
    def total(self) -> float:
        return round(sum(p.score for p in self.parts), 2)

    @property
    def max(self) -> float:
        return sum(p.max_score for p in self.parts)

    @property
    def note(self) -> str:
        """The notes as the summary and the feedback page show them: one line, or "" when there is none."""
        return notes_line(self.notes)

    def to_json(self) -> dict:
        """report.json's content. The scores, the total and each check's "passed" follow from the checks, and are
        written for readers of the JSON (`python -m autograder grade --json`); from_json reads the checks alone."""
        data: dict[str, Any] = {
            "kind": KIND,
            "version": VERSION,
            "total": self.total,
            "max": self.max,
            "parts": [
                {"grade_id": p.grade_id, "score": p.score, "max_score": p.max_score,
                 "tests": [{"name": t.name, "status": t.status.value, "passed": t.passed, "message": t.message}
                           for t in p.tests]}
                for p in self.parts
            ],
        }
        if self.error:
            data["error"] = self.error
        if self.grader_fault:
            data["grader_fault"] = True
        if self.limits:
            data["limits"] = sorted(set(self.limits))
        if self.notes:
            data["notes"] = list(self.notes)
        return data

    @classmethod
    def from_json(cls, data: Any) -> "Report":
        """The report `to_json` gave (the scores follow from the checks again). ReportUnreadable for anything
        else: a report of another kind or version (an older kit's is graded again, changes.plan_class) included."""
        if not isinstance(data, dict) or data.get("kind") != KIND or data.get("version") != VERSION:
            found = (data.get("kind"), data.get("version")) if isinstance(data, dict) else (type(data).__name__, None)
            raise ReportUnreadable(f"not a report of this kit (kind {found[0]!r}, version {found[1]!r}; "
                                   f"it reads {KIND!r} version {VERSION})")
        try:
            parts = [PartResult(str(p["grade_id"]), float(p["max_score"]),
                                [CheckResult(str(t["name"]), Status(t["status"]), str(t["message"])) for t in p["tests"]])
                     for p in data["parts"]]
            return cls(parts, str(data.get("error", "")), [str(x) for x in data.get("limits", [])],
                       [str(x) for x in data.get("notes", [])], data.get("grader_fault") is True)
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportUnreadable(f"a field is missing or mistyped ({type(exc).__name__}: {exc})") from None

    @classmethod
    def from_submission(cls, grade_cells: Iterable[GradeCell], submission: Submission) -> "Report":
        """A part per grade cell with the checks the Grader ran for it (a notebook not graded: Report.not_graded).
        Not yet redacted: grade_one redacts it next."""
        if submission.error:
            return cls.not_graded(grade_cells, submission.error)
        parts = [PartResult(cell.grade_id, cell.points, [CheckResult(c.name, c.status, c.message)  # redacted apart
                                                         for c in submission.results.get(cell.grade_id, [])])
                 for cell in grade_cells]
        return cls(parts, limits=list(submission.limits))

    @classmethod
    def not_graded(cls, grade_cells: Iterable[GradeCell], reason: str, grader_fault: bool = False) -> "Report":
        """The report of a notebook not graded: each part's one check, "notebook", not run, with the reason;
        `grader_fault`: the grader failed on it, not the notebook (no score is given)."""
        parts = [PartResult(cell.grade_id, cell.points, [CheckResult("notebook", Status.NOT_RUN, reason)])
                 for cell in grade_cells]
        return cls(parts, error=reason, grader_fault=grader_fault)

    def save(self, path: Path) -> None:
        """Write the report to `path` as JSON (atomically: a reader sees the old file or the new one)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f".{path.name}.{os.getpid()}")
        scratch.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(scratch, path)

    @classmethod
    def load(cls, path: Path) -> "Report":
        """The report saved at `path`: OSError when there is none, ReportUnreadable when it is not one this kit reads."""
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ReportUnreadable(f"not JSON ({exc})") from None
        return cls.from_json(data)

    def to_table(self, verbose: bool = False) -> str:
        """One line a part with its first failing check, so a blank notebook's table fits on a screen;
        `verbose`: every check of every part, PASS or FAIL."""
        width = max([22, *(len(p.grade_id) + 2 for p in self.parts)])
        lines = [f"{'part':<{width}}{'score':>8}  checks"]
        hidden = 0
        for part in self.parts:
            passed = sum(t.passed for t in part.tests)
            failed = [t for t in part.tests if not t.passed]
            lines.append(f"{part.grade_id:<{width}}{part.score:>5g}/{part.max_score:<4g}{passed}/{len(part.tests)}")
            if verbose:
                lines += [f"    PASS {t.name}" if t.passed else f"    FAIL {t.name}: {t.message}" for t in part.tests]
            elif failed and not self.error:  # a notebook not graded says why once, below
                lines.append(f"    FAIL {failed[0].name}: {failed[0].message}")
                hidden += len(failed) - 1
        lines.append(f"{'total':<{width}}{self.total:>5g}/{self.max:g}")
        if self.error:
            lines.append(f"not graded: {self.error}")
        if hidden:
            lines.append(f"(each part shows its first failing check; {hidden} more failed: --verbose lists every check)")
        return "\n".join(lines)


def check_lines(part: PartResult) -> str:
    """The text a grade cell shows: one line per check."""
    return "".join(
        f"PASS {t.name}\n" if t.passed else f"FAIL {t.name}: {t.message}\n" for t in part.tests
    )
