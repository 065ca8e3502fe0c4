"""Course copies for the bench: the kit's course as a clone holds it, a stock-nbgrader twin, and a class.

Nothing here touches the repository: every course is a copy in a temporary folder.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent  # the repository (an nbgrader course directory)
ASSIGNMENT = "dl01_6_3"
NOTEBOOK = "modules_and_sgd.ipynb"
VENV_BIN = Path(sys.executable).parent
TIMESTAMP = "2026-11-20 12:00:00.000000 UTC"

# The demo class's kinds of student (autograder/classroom/demo.py): the reference, the bugs, the infinite loop.
CORRECT = "ada"
LOOP = "donald"


def env() -> dict:
    """The environment every nbgrader command needs: the venv's bin first (nbgrader runs `alembic`)."""
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def copy_course(dest: Path) -> Path:
    """A fresh course directory, what a clone holds: no gradebook, no submissions (the tests use it too)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("source", "release", "solutions", "autograder", "nbgrader_config.py"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def roster(n: int) -> list[tuple[str, str]]:
    """(student id, kind) for a class of n: two in three correct, the demo bugs in turn, one infinite loop."""
    from autograder.classroom.demo import ROSTER

    bugs = [kind for kind in ROSTER if kind not in (CORRECT, LOOP)]
    people = []
    for i in range(n):
        if i == n // 2:
            kind = LOOP
        elif i % 3 == 2:
            kind = bugs[(i // 3) % len(bugs)]
        else:
            kind = CORRECT
        people.append((f"s{i:04d}_{kind}", kind))
    return people


def notebooks_by_kind() -> dict[str, str]:
    """Each kind's submitted notebook, as the JSON text a student's Jupyter would save."""
    from autograder.classroom.demo import ROSTER
    from autograder.classroom.mutate import apply

    reference = nbformat.read(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK, as_version=4)
    return {kind: json.dumps(apply(reference, mutations), indent=1) + "\n" for kind, (_, mutations) in ROSTER.items()}


def write_class(course: Path, people: list[tuple[str, str]], texts: dict[str, str]) -> None:
    """submitted/<student>/<assignment>/<notebook> and timestamp.txt for everyone in `people`."""
    for student, kind in people:
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        (folder / NOTEBOOK).write_text(texts[kind])
        (folder / "timestamp.txt").write_text(TIMESTAMP + "\n")


# ------------------------------------------------------------------------ the stock twin

STOCK_CELL = 'from stock_checks import {runner}\n{runner}("{grade_id}", globals())'
DEMO_CELL = "# demo cell: not run when grading (the kit's grader leaves demo cells out too)"


def default_cell_timeout(course: Path) -> int:
    """The kit's per-check limit (c.GraderSettings.seconds), rounded up to whole seconds for Execute."""
    match = re.search(r"^c\.GraderSettings\.seconds\s*=\s*([0-9.]+)", (course / "nbgrader_config.py").read_text(), re.M)
    return max(1, math.ceil(float(match.group(1)) if match else 3.0))


def make_stock_course(dest: Path, cell_timeout: int | None = None, runner: str = "run_suite") -> Path:
    """A copy of the course graded the stock way: nbgrader's Execute, the hidden checks in the grade cells.

    * nbgrader_config.py: the kit's `c.Autograde.*_preprocessors` lists are removed, so nbgrader uses
      its default steps (sanitizing as shipped, then Execute, ...). Execute's per-cell timeout is set (default: the kit's
      per-check limit, GraderSettings.seconds, rounded up; nbgrader's own default is 30 s).
    * source notebook: each grade cell runs the hidden suite of its part in the kernel with `runner`
      (bench/stock_checks.py, copied into the source folder: `run_suite` calls the checks directly,
      `run_suite_under_pytest` through pytest.main); cells tagged `demo` become a comment,
      because the kit's grader never runs them. nbgrader restores every locked cell of a submission
      from the gradebook's copy, so the submissions themselves are the kit's, byte for byte.
    * `nbgrader generate_assignment` records that notebook in the stock gradebook (prepare_gradebook).
    """
    copy_course(dest)
    config = dest / "nbgrader_config.py"
    text = config.read_text()
    stock = re.sub(r"^c\.Autograde\.\w+_preprocessors\s*=\s*\[.*?\]\s*$", "", text, flags=re.S | re.M)
    if stock == text or re.search(r"^c\.Autograde\.\w+_preprocessors", stock, re.M):
        raise RuntimeError("could not find the kit's autograde_preprocessors in nbgrader_config.py")
    timeout = cell_timeout or default_cell_timeout(dest)
    stock += f"\n# make bench: stock nbgrader's kernel executor, with the kit's time limit per cell.\nc.Execute.timeout = {timeout}\n"
    config.write_text(stock)

    source_dir = dest / "source" / ASSIGNMENT
    adapter = (Path(__file__).parent / "stock_checks.py").read_text()
    adapter = adapter.replace('SUITES = ""', f"SUITES = {str(dest / 'autograder' / ASSIGNMENT)!r}", 1)
    adapter = adapter.replace('REFERENCE = ""', f"REFERENCE = {str(dest / 'solutions' / ASSIGNMENT / NOTEBOOK)!r}", 1)
    adapter = adapter.replace('KIT = ""', f"KIT = {str(dest)!r}", 1)
    (source_dir / "stock_checks.py").write_text(adapter)

    notebook = nbformat.read(source_dir / NOTEBOOK, as_version=4)
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code":
            continue
        if meta.get("grade") and not meta.get("solution"):
            cell.source = STOCK_CELL.format(runner=runner, grade_id=meta["grade_id"])
        elif "demo" in cell.metadata.get("tags", []):
            cell.source = DEMO_CELL
    nbformat.write(notebook, source_dir / NOTEBOOK)

    return prepare_gradebook(dest)


def prepare_gradebook(course: Path) -> Path:
    """`nbgrader generate_assignment`: gradebook.db with the assignment's cells, as before any regrade.

    Both sides start from this state (untimed). Creating gradebook.db runs `alembic`, which costs a few
    seconds once per course; the kit would otherwise pay it inside its first timed run, stock nbgrader
    before its `autograde` (which refuses an assignment the gradebook does not know).
    """
    run = subprocess.run([str(VENV_BIN / "nbgrader"), "generate_assignment", ASSIGNMENT, "--force", "--log-level=ERROR"],
                         cwd=course, env=env(), capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"nbgrader generate_assignment failed in {course}:\n{run.stderr[-3000:]}")
    return course


# ------------------------------------------------------------------------ scores


def gradebook_scores(course: Path) -> dict[str, dict[str, float]]:
    """{student: {grade_id: score}} of the autograded cells, read through nbgrader's Gradebook API."""
    from nbgrader.api import Gradebook

    path = course / "gradebook.db"
    if not path.exists():
        return {}
    scores: dict[str, dict[str, float]] = {}
    with Gradebook(f"sqlite:///{path}") as gb:
        for submission in gb.assignment_submissions(ASSIGNMENT):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.cell_type == "code":
                        scores.setdefault(submission.student_id, {})[grade.name] = grade.score
    return scores


def full_marks(course: Path) -> dict[str, float]:
    """{grade_id: points} of the autograded cells, from the source notebook."""
    from autograder.assignment import Assignment

    return {cell.grade_id: cell.points for cell in Assignment(course, ASSIGNMENT).grade_cells}
