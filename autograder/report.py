"""A graded notebook: parts (grade cells), the checks in each, and how to show them.

Everything a student can read goes through `Redactor` first, so no line of the hidden suites can
reach feedback, JSON or the summary, however a submission tries to smuggle it out.
"""
from __future__ import annotations

import io
import json
import os
import tokenize
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Submission:
    """One notebook to grade: its content, or why it has none; the checks' results fill in as it is graded."""

    key: str
    notebook: dict | None = None
    error: str = ""
    results: dict[str, list["CheckResult"]] = field(default_factory=dict)
    limits: list[str] = field(default_factory=list)


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


def counted(n: int, noun: str) -> str:
    """'1 submission', '9 submissions': a count with its noun (nouns that take an s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def mean_points(scores: list[float]) -> str:
    """The class's mean score as every page and the summary show it: two decimals, halves rounded up.

    Computed in decimal from each score to 4 places (as grades.csv holds it), so the gradebook's floats
    and the CSV's text give the same figure."""
    from decimal import ROUND_HALF_UP, Decimal

    if not scores:
        return "0.00"
    total = sum((Decimal(repr(round(float(score), 4))) for score in scores), Decimal(0))
    return str((total / len(scores)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def one_line(text: str, limit: int = 300) -> str:
    """A reason or a note as the summary and a page show it: one line, bounded, and writable as UTF-8."""
    text = " ".join(str(text).split()).encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_lines(part: PartResult) -> str:
    """The text a grade cell shows: one line per check."""
    return "".join(
        f"PASS {t.name}\n" if t.passed else f"FAIL {t.name}: {t.message}\n" for t in part.tests
    )


def hidden_code_lines(suite_dir: Path, public_dir: Path, shortest: int = 24) -> set[str]:
    """The code only the hidden suites hold, as runs of tokens between string literals and comments.

    The messages the suites write for students are string literals and may be shown, and so may
    code that also stands in the assignment's own files (`public_dir`: a student's notebook holds
    `out = model(x)` too); every other run of the suites' code, `shortest` characters or more, must
    never be shown.
    """
    public = _squash(" ".join(p.read_text(errors="replace") for p in public_dir.iterdir() if p.is_file()))
    runs: set[str] = set()
    skipped = (tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
    for path in sorted(suite_dir.glob("*.py")):
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text()).readline))
        except (tokenize.TokenError, SyntaxError):
            continue
        run: list[str] = []
        line = 0
        for tok in tokens + [None]:
            breaks = tok is None or tok.type in skipped or tok.start[0] != line
            if breaks and len("".join(run)) >= shortest and "".join(run) not in public:
                runs.add(" ".join(run))
            if breaks:
                run = []
            if tok is not None and tok.type not in skipped and tok.string.strip():
                run.append(tok.string)
                line = tok.start[0]
    return runs


def _squash(text: str) -> str:
    return "".join(text.split())


class Redactor:
    """Makes a message safe to show: one line, at most `chars` long, and free of hidden suite code."""

    def __init__(self, suite_dir: Path, public_dir: Path, chars: int = 300) -> None:
        self.code = {_squash(line) for line in hidden_code_lines(suite_dir, public_dir)}
        self.chars = chars

    def __call__(self, message: str) -> str:
        if not message:  # a passed check says nothing
            return message
        line = " ".join(message.split())
        squashed = _squash(line)
        if any(code in squashed for code in self.code):
            return "[message withheld: it quoted the grader's hidden files]"
        return line if len(line) <= self.chars else line[: self.chars - 1] + "…"


def redactor(assignment, chars: int) -> Redactor:
    """The assignment's Redactor (made once for a class, before the pool forks: grading.prepare_class)."""
    return Redactor(assignment.suite_dir, assignment.source_dir, chars)


def build_report(assignment, submission: Submission, settings, redact: Redactor) -> Report:
    """The submission's report (the last step of grading.grade_one), every message redacted (by the class's
    `redact`) and cut to length.

    Student code controls much of a message (its exceptions' text, the values it returns), so a
    submission's messages together may carry `settings.message_budget` characters; past that they
    are withheld, and the summary names the budget.
    """
    left, parts, limits = settings.message_budget, [], list(submission.limits)
    for cell in assignment.grade_cells:
        checks = submission.results.get(cell.grade_id, [])
        if submission.error:
            checks = [CheckResult("notebook", False, submission.error)]
        shown = []
        for check in checks:
            message = redact(check.message)
            if len(message) > left:
                message = f"(message withheld: this submission's messages used their {settings.message_budget} characters)"
                limits.append("message budget")
            else:
                left -= len(message)
            shown.append(CheckResult(check.name, check.passed, message))
        parts.append(PartResult(cell.grade_id, cell.points, shown))
    return Report(parts, error=redact(submission.error), limits=limits)
