"""A graded notebook: parts (grade cells), the checks in each, and how to show them.

Everything a student can read goes through `Redactor` first, so no line of the hidden suites can
reach feedback, JSON or the summary, however a submission tries to smuggle it out.
"""
from __future__ import annotations

import io
import tokenize
from dataclasses import asdict, dataclass, field
from pathlib import Path


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

    @property
    def total(self) -> float:
        return round(sum(p.score for p in self.parts), 2)

    @property
    def max(self) -> float:
        return sum(p.max_score for p in self.parts)

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
        return data

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
