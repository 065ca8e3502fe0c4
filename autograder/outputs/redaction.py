"""What of a Report a student may read: every message redacted, cut to length, within a budget.

Everything a student can read goes through `Redactor` first, so no line of the hidden suites can
reach feedback, JSON or the summary, however a submission tries to smuggle it out. grading.ClassGrading.grade_one
redacts each Report (redact_report) before it leaves; the pytest plugin redacts each failed check's
line with the same Redactor.
"""
from __future__ import annotations

import functools
import io
import sys
import tokenize
from pathlib import Path
from typing import TYPE_CHECKING

from .inert import one_line

if TYPE_CHECKING:
    from ..assignment import Assignment
    from ..report import Report
    from ..settings import GraderSettings

WITHHELD_CODE = "[message withheld: it quoted the grader's hidden files]"


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
        for tok in [*tokens, None]:
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
    """Makes a message safe to show: one line, at most `chars` long, and free of hidden suite code.

    The hidden code is read on the first message there is (about 0.15 s): a submission that passes every
    check says nothing, and one notebook graded while a student waits should not pay for it then."""

    def __init__(self, suite_dir: Path, public_dir: Path, chars: int = 300) -> None:
        self.suite_dir, self.public_dir, self.chars = suite_dir, public_dir, chars

    @functools.cached_property
    def code(self) -> set[str]:
        return {_squash(line) for line in hidden_code_lines(self.suite_dir, self.public_dir)}

    def __call__(self, message: str) -> str:
        if not message:  # a passed check says nothing
            return message
        line = one_line(message, sys.maxsize)  # format characters escaped: the pages lay them out (cut below)
        squashed = _squash(line)
        if any(code in squashed for code in self.code):
            return WITHHELD_CODE
        return line if len(line) <= self.chars else line[: self.chars - 1] + "…"


def redactor(assignment: Assignment, chars: int) -> Redactor:
    """The assignment's Redactor (made once for a class, before the pool forks: grading.prepare_class)."""
    return Redactor(assignment.suite_dir, assignment.source_dir, chars)


def redact_report(report: Report, redact: Redactor, settings: GraderSettings) -> None:
    """Redact `report` in place (the last step of grading.ClassGrading.grade_one, before anything reads it): every
    message redacted and cut to length, the reason it was not graded too.

    Student code controls much of a message (its exceptions' text, the values it returns), so a
    submission's messages together may carry `settings.message_budget` characters; past that they
    are withheld, and the report's limits name the budget. `redact`: the class's Redactor.
    """
    left = settings.message_budget
    for part in report.parts:
        for check in part.tests:
            message = redact(check.message)
            if len(message) > left:
                message = f"(message withheld: this submission's messages used their {settings.message_budget} characters)"
                report.limits.append("message budget")
            else:
                left -= len(message)
            check.message = message
    report.error = redact(report.error)
