"""A Report: one submission's result, its parts (grade cells) and the checks in each, and how to show it.

Report is what grading one notebook gives back (grading.grade_one), what RunHiddenSuites saves as
report.json beside the autograded notebook, and what the class page (`make class-page`) and Gradescope's
results.json are read from. It is built from a graded Submission (Report.from_submission) and
redacted before it leaves grade_one (redaction.redact_report); this module only holds it and renders
it (JSON, the table of `python -m autograder grade`, a grade cell's lines).
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .outputs.inert import one_line

if TYPE_CHECKING:
    from .assignment import GradeCell
    from .submission import Submission


@dataclass
class CheckResult:
    name: str
    passed: bool
    message: str = ""


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

    @property
    def total(self) -> float:
        return round(sum(p.score for p in self.parts), 2)

    @property
    def max(self) -> float:
        return sum(p.max_score for p in self.parts)

    @property
    def note(self) -> str:
        """The notes as the summary and the feedback page show them: one line, or "" when there is none."""
        return one_line("; ".join(self.notes)) if self.notes else ""

    def to_json(self) -> dict:
        data = {
            "total": self.total,
            "max": self.max,
            "parts": [
                {"grade_id": p.grade_id, "score": p.score, "max_score": p.max_score,
                 "tests": [asdict(t) for t in p.tests]}
                for p in self.parts
            ],
        }
        if self.error:
            data["error"] = self.error
        if self.limits:
            data["limits"] = sorted(set(self.limits))
        if self.notes:
            data["notes"] = list(self.notes)
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Report":
        """The report `to_json` gave (the scores follow from the checks again)."""
        parts = [PartResult(p["grade_id"], float(p["max_score"]), [CheckResult(**t) for t in p["tests"]])
                 for p in data["parts"]]
        return cls(parts, data.get("error", ""), list(data.get("limits", [])), list(data.get("notes", [])))

    @classmethod
    def from_submission(cls, grade_cells: Iterable[GradeCell], submission: Submission) -> "Report":
        """A part per grade cell with the checks the Grader ran for it (a notebook not graded fails each
        part's one check, "notebook", with the reason). Not yet redacted: grade_one redacts it next."""
        parts = []
        for cell in grade_cells:
            checks = submission.results.get(cell.grade_id, [])
            if submission.error:
                checks = [CheckResult("notebook", False, submission.error)]
            parts.append(PartResult(cell.grade_id, cell.points,
                                    [CheckResult(c.name, c.passed, c.message) for c in checks]))
        return cls(parts, error=submission.error, limits=list(submission.limits))

    def save(self, path: Path) -> None:
        """Write the report to `path` as JSON (atomically: a reader sees the old file or the new one)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f".{path.name}.{os.getpid()}")
        scratch.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(scratch, path)

    @classmethod
    def load(cls, path: Path) -> "Report":
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))

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
