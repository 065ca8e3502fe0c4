"""What the grade makes of the saved notebook's cells, read from nbgrader's metadata as the release wrote it: which
cells run as code (graded_as_code), which given cells you edited (edited_given), and the names a cell binds
(bound_by), and what the grade runs in place of what Jupyter runs (grade_note). Standard library only.
"""
from __future__ import annotations

import ast
import hashlib


def _grading(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _checksum(cell: dict, cell_type: str) -> str:
    """nbgrader's checksum of a locked cell, as if its type were `cell_type`."""
    grading = _grading(cell)
    facts = ["".join(cell.get("source", "")), cell_type, *(str(bool(grading.get(k))) for k in (
        "grade", "solution", "locked")), str(grading.get("grade_id"))]
    return hashlib.md5("".join(facts).encode()).hexdigest()


def edited_given(cell: dict) -> bool:
    """Whether a cell of the saved notebook is a given one (locked) whose text or type is not the released one, by
    nbgrader's checksum of it: the grade runs the released copy (notebook_checks.load notes it)."""
    checksum = _grading(cell).get("checksum")  # none in a copy nbgrader did not release (the solutions)
    return bool(_grading(cell).get("locked") and checksum) and _checksum(cell, cell.get("cell_type", "")) != checksum


def graded_as_code(cell: dict) -> bool:
    """Whether the grade runs a saved cell as code. nbgrader's autograde gives every cell of the release its
    released type back: an answer cell made markdown or raw runs as code (nbgrader puts autograded answers, a
    solution that is not a grade, in code cells only), and so does a given cell whose checksum says it was code."""
    grading = _grading(cell)
    return cell.get("cell_type") == "code" or bool(grading.get("solution") and not grading.get("grade")) or bool(
        grading.get("locked") and grading.get("checksum") == _checksum(cell, "code"))


def grade_note(cell: dict) -> str:
    """What the grade runs in place of what Jupyter runs, for a cell you changed: the released copy of a given cell
    you edited, or an answer cell you made markdown or raw run as code ("" for any other cell)."""
    name, kind = _grading(cell).get("grade_id"), cell.get("cell_type")
    if edited_given(cell):
        return f"you edited the given cell {name}: the grade runs the released copy of it"
    if kind == "code" or not graded_as_code(cell):
        return ""
    return (f"cell {name} is a {kind} cell in your notebook, and the grade runs it as code, as the release has it: "
            "make it a code cell again (keep notes in a cell of your own)")


def bound_by(source: str) -> frozenset | None:
    """The names a cell binds at its top level (classes, functions, imports, assignments): a check that reads none
    of them does not run that cell's code. None when it is not plain Python (every check may depend on it)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        else:
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return frozenset(names)
