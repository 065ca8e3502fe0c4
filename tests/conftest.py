"""Shared fixtures for the kit's own tests: paths, notebooks, and a sandboxed runner."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.assignment import find_assignment  # noqa: E402
from bench.course import copy_course  # noqa: E402
from autograder.sandbox import Sandbox, program_from_notebook  # noqa: E402

ASSIGNMENT = find_assignment(ROOT, "dl01_6_3")
sys.path.insert(0, str(ASSIGNMENT.source_dir))  # the public checks' runner, importable as `notebook_checks`
NOTEBOOK = ASSIGNMENT.notebook_name
STUBS = ["Module.parameters", "Linear.forward", "SGD.zero_grad", "SGD.step", "no_grad"]


def release_notebook() -> dict:
    return nbformat.read(ROOT / "release" / ASSIGNMENT.name / NOTEBOOK, as_version=4)


def solution_notebook() -> dict:
    return nbformat.read(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK, as_version=4)


FULL = {cell.grade_id: cell.points for cell in ASSIGNMENT.grade_cells}  # every autograded part, at full marks


def grade_json(path: Path, course: Path = ROOT) -> tuple[dict, subprocess.CompletedProcess]:
    """`python -m autograder grade PATH --json` with the grader of `course`, as an instructor runs it."""
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", str(path), "--json"],
                         cwd=course, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout), run


def grade_class(course: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    """`python -m autograder class` in `course`: what `make grade` runs."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # alembic
    return subprocess.run([sys.executable, "-m", "autograder", "class", "--assignment", ASSIGNMENT.name],
                          cwd=course, capture_output=True, text=True, env=env, timeout=timeout)


def scores(report: dict) -> dict[str, float]:
    return {p["grade_id"]: p["score"] for p in report["parts"]}


def write_notebook(notebook: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1))
    return path


def course_copy(tmp: Path) -> Path:
    """A fresh course directory: what a clone holds, without gradebook or submissions."""
    return copy_course(tmp)


@pytest.fixture(scope="session")
def sandbox():
    """A sandbox whose calls may name the kit's lesson probes."""
    with Sandbox(modules={"lesson_probes": ROOT / "tests" / "lesson_probes.py"},
                 path=[ASSIGNMENT.source_dir]) as box:
        yield box


@pytest.fixture(scope="session")
def catalogue_reports() -> dict[str, dict]:
    """Every entry of the single-fault catalogue (tests/catalogue_bugs.py) graded in one run of the hidden
    suites, as `make grade` grades a class: each entry's report (to_json). Shared by the tests that read it."""
    from autograder.mutate import apply
    from autograder.settings import GraderSettings, load_config
    from autograder.grading import grade_submissions
    from autograder.report import Submission
    from catalogue_bugs import BUGS

    reference = solution_notebook()
    submissions = [Submission(bug.id, notebook=apply(reference, list(bug.mutations))) for bug in BUGS]
    reports = grade_submissions(ASSIGNMENT, submissions, GraderSettings(config=load_config(ROOT)))
    return {key: report.to_json() for key, report in reports.items()}


@pytest.fixture(scope="session")
def catalogue_public_results(tmp_path_factory) -> dict[str, dict[str, dict[str, tuple[bool, str]]]]:
    """Every entry of the catalogue through the student's own checks: {entry: {part: {check: (passed,
    message)}}}, by the student's runner (notebook_checks.run_part, a child per part) on the entry's notebook
    saved in a folder of its own. Shared by the tests that read it."""
    import notebook_checks
    from autograder.mutate import apply
    from catalogue_bugs import BUGS

    folder = tmp_path_factory.mktemp("public")
    parts = [grade_id[len("test_"):] for grade_id in FULL]
    results = {}
    for bug in BUGS:
        path = write_notebook(apply(solution_notebook(), list(bug.mutations)), folder / bug.id / NOTEBOOK)
        results[bug.id] = {part: notebook_checks.run_part(part, path) for part in parts}
    return results


@pytest.fixture(scope="session")
def reference_program():
    return program_from_notebook(solution_notebook(), ASSIGNMENT.source, solution_notebook())
