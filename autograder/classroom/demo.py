"""The demo class `make grade` grades when there are no submissions: one of each kind of student.

The kinds (ROSTER) are the lesson's: the reference with one of its bugs each. Another assignment, whose
reference lacks a cell they rewrite, gets the kinds every assignment has: its reference (`ada`) and its blank
release (`blank`).
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.utils import is_solution

from ..assignment import Assignment
from .mutate import Mutation, apply

# Fixed, so two runs give the same gradebook. Never a sign of the demo: timestamp.txt is the student's to write.
TIMESTAMP = "2026-11-20 12:00:00.000000 UTC"
MARKER = ".demo-class"  # a dotfile older versions left in submitted/ (it survived rm -rf submitted/*): removed
# when found. Which students are the demo's is lifecycle.DEMO_RECORD, written by lifecycle.write_demo alone.

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


# The demo students' written answers (graded by hand in the formgrader): what students write, of varied
# quality, some of it wrong; never the model answer or the rubric. A student missing here leaves a question blank.
ANSWERS: dict[str, dict[str, str]] = {
    "ada": {
        "answer_zeroing": (
            "backward() adds into .grad instead of overwriting it. That is on purpose: a tensor used twice, "
            "like a shared weight or x in x * x, gets a contribution from each use and the sum is its gradient. "
            "But it also means a second backward() adds onto the old gradient. In the worked example the second "
            "step then uses the stale gradient plus the new one, the output overshoots to 3.668 and the loss goes "
            "up to about 7.1 instead of down. So we call zero_grad() before each backward()."),
        "answer_outside_graph": (
            "The update is not part of the model we differentiate, so it should not be recorded. With "
            "`p = p - lr * p.grad` we get a new Tensor: the layer still holds the old Parameter, so the model never "
            "changes. If we stored the new tensor in the model instead, each step would hang the graph on the last "
            "one and it would keep growing (more memory, and backward goes through old updates)."),
        "answer_shared_weight": (
            "Without removing repeats the shared weight is found once through each layer, so it is in the list "
            "twice. Its grad is right (backward adds both uses), but step() subtracts lr * grad once per entry, "
            "so it moves twice as far. Keeping a set of id(p) fixes it. We compare by identity because two "
            "different Parameters can hold the same numbers and both need training."),
    },
    "grace": {
        "answer_zeroing": ("Gradients add up between backward passes so they have to be reset, otherwise the loss "
                           "jumps around."),
        "answer_outside_graph": ("Because doing it with tensors would build a graph and use more memory."),
        "answer_shared_weight": ("It would be listed twice and then step() updates it twice."),
    },
    "alan": {
        "answer_zeroing": ("backward() overwrites .grad each time, so zero_grad() is just for safety, to start "
                           "from a clean state."),
        "answer_outside_graph": ("p = p - lr * p.grad is fine mathematically, it computes the same numbers. "
                                 "p.data is only faster because NumPy does it in place."),
    },
    "edsger": {
        "answer_zeroing": ("Each closure does `+=` into grad, because a value used in several places needs the "
                           "sum of its contributions. Without zero_grad the next step uses old gradients too, "
                           "computed at old weights, so training goes wrong."),
        "answer_outside_graph": ("The update is not something we want gradients of. Done with Tensor ops it makes "
                                 "a new node each step and the graph grows."),
        "answer_shared_weight": ("If the list has it twice the count of parameters is wrong. I would remove "
                                 "duplicates by checking if two parameters have equal values."),
    },
    "barbara": {
        "answer_zeroing": "The gradients accumulate, so we have to zero them every step.",
        "answer_shared_weight": ("The weight is listed twice so step() moves it twice as far. I think the grad is "
                                 "also doubled, so really four times? Dedup with a set of ids."),
    },
    "linus": {
        "answer_zeroing": ("Because of the chain rule the gradients from different layers get multiplied together, "
                           "so they have to be reset to 0 first."),
        "answer_outside_graph": ("The optimizer's list and the model share the same Parameter objects; a new tensor "
                                 "breaks that, so the model stops learning. In place keeps the link."),
        "answer_shared_weight": "Listed once per layer. Use `is` to check if it is already in the list.",
    },
    "donald": {
        "answer_zeroing": "So that the gradient does not grow forever.",
    },
    "ken": {
        "answer_outside_graph": "TODO",
        "answer_shared_weight": ("parameters() would return the weight two times and the optimizer would apply the "
                                 "update two times. Deduplicate with id()."),
    },
}


def with_answers(notebook: NotebookNode, release: NotebookNode, answers: dict[str, str]) -> NotebookNode:
    """`notebook` with its written-answer cells holding `answers` (the release's blank cell where none)."""
    blank = {cell.metadata.nbgrader.grade_id: cell.source for cell in release.cells
             if cell.cell_type == "markdown" and is_solution(cell)}
    for cell in notebook.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "markdown" and grade_id in blank:
            cell.source = answers.get(grade_id, blank[grade_id])
    return notebook


def roster_for(reference: NotebookNode) -> dict[str, tuple[str, list[Mutation]]]:
    """ROSTER when `reference` holds every cell it rewrites (the lesson); else its students who rewrite none."""
    cells = {cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in reference.cells}
    if all(m.cell in cells for _, mutations in ROSTER.values() for m in mutations):
        return ROSTER
    return {student: kind for student, kind in ROSTER.items() if not kind[1]}


def write_demo_class(assignment: Assignment, submitted: Path) -> list[str]:
    """Write the roster (roster_for), plus the untouched release as student `blank`, into submitted/. Records
    nothing: a course's demo class is written by lifecycle.write_demo, which records it."""
    reference = nbformat.read(assignment.root / "solutions" / assignment.name / assignment.notebook_name, 4)
    release = nbformat.read(assignment.root / "release" / assignment.name / assignment.notebook_name, 4)
    notebooks = {student: with_answers(apply(reference, mutations), release, ANSWERS.get(student, {}))
                 for student, (_, mutations) in roster_for(reference).items()}
    notebooks["blank"] = release
    for student, notebook in notebooks.items():
        folder = submitted / student / assignment.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / assignment.notebook_name).write_text(json.dumps(notebook, indent=1) + "\n")
        (folder / "timestamp.txt").write_text(TIMESTAMP + "\n")
    return sorted(notebooks)
