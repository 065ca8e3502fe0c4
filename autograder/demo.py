"""The demo class `make grade` grades when there are no submissions: one of each kind of student."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat

from .assignment import Assignment
from .mutate import Mutation, apply

TIMESTAMP = "2026-11-20 12:00:00.000000 UTC"  # fixed, so two runs give the same gradebook
MARKER = ".demo-class"  # left in submitted/ so later runs still say what they are grading

# student id -> (what the submission is, the mutations of the reference that make it)
ROSTER: dict[str, tuple[str, list[Mutation]]] = {
    "ada": ("the reference solution", []),
    "grace": ("zero_grad() that does nothing", [Mutation("sgd", "zero_grad", "pass")]),
    "alan": ("step() written with tensor operations",
             [Mutation("sgd", "step", "for p in self.params:\n    p = p - self.lr * p.grad")]),
    "edsger": ("forward() with the weight used as (in, out)",
               [Mutation("linear", "forward", "return x @ self.weight + self.bias")]),
    "barbara": ("parameters() that lists a shared weight twice",
                [Mutation("module", "parameters", """\
found = []
for value in vars(self).values():
    for item in (value if isinstance(value, list) else [value]):
        if isinstance(item, Parameter):
            found.append(item)
        elif isinstance(item, Module):
            found.extend(item.parameters())
return found""")]),
    "linus": ("no_grad() that switches recording back on instead of restoring it",
              [Mutation("no_grad", "no_grad", "Tensor.recording = False\ntry:\n    yield\nfinally:\n    Tensor.recording = True")]),
    "donald": ("an infinite loop in step()", [Mutation("sgd", "step", "while True:\n    pass")]),
    "ken": ("a crash: os._exit() inside parameters()", [Mutation("module", "parameters", "import os\nos._exit(1)")]),
}


def write_demo_class(assignment: Assignment, submitted: Path) -> list[str]:
    """Write the roster, plus the untouched release as student `blank`, into submitted/."""
    reference = nbformat.read(assignment.root / "solutions" / assignment.name / assignment.notebook_name, 4)
    release = nbformat.read(assignment.root / "release" / assignment.name / assignment.notebook_name, 4)
    notebooks = {student: apply(reference, mutations) for student, (_, mutations) in ROSTER.items()}
    notebooks["blank"] = release
    for student, notebook in notebooks.items():
        folder = submitted / student / assignment.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / assignment.notebook_name).write_text(json.dumps(notebook, indent=1) + "\n")
        (folder / "timestamp.txt").write_text(TIMESTAMP + "\n")
    (submitted / MARKER).write_text("written by `make grade` because submitted/ was empty\n")
    return sorted(notebooks)
