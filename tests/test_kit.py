"""The student kit: the notebook, its release, the reference and the self-check."""
from __future__ import annotations

import filecmp
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import lesson_probes
import selfcheck
from autograder.mutate import Mutation, apply
from autograder.sandbox import program_from_notebook
from conftest import ASSIGNMENT, NOTEBOOK, ROOT, STUBS, course_copy, release_notebook, solution_notebook, write_notebook


# ----------------------------------------------------------------- the lesson's numbers


def test_parameter_counts_are_354_and_2410(sandbox, reference_program):
    assert sandbox.call(reference_program, lesson_probes.parameter_counts).value == [354, 2410]


@pytest.mark.parametrize("zeroed, second_output, second_loss", [(True, 0.908, 0.0085), (False, 3.668, 7.12)])
def test_worked_example(sandbox, reference_program, zeroed, second_output, second_loss):
    result = sandbox.call(reference_program, lesson_probes.worked_example, zero_between=zeroed).value
    first, after_one, after_two = result["losses"]
    assert first == pytest.approx(5.29)
    assert after_one == pytest.approx(0.2116)
    assert result["outputs"][2] == pytest.approx(second_output)
    assert after_two == pytest.approx(second_loss, abs=0.005)


def test_graph_has_18_nodes_and_1_under_no_grad(sandbox, reference_program):
    assert sandbox.call(reference_program, lesson_probes.graph_sizes).value == {"recorded": 18, "no_grad": 1, "equal": True}


def test_shared_parameter_is_listed_once_and_moved_once(sandbox, reference_program):
    assert sandbox.call(reference_program, lesson_probes.shared_weight).value == {"listed": 1, "moved": pytest.approx(0.1)}


# ---------------------------------------------------------------- the public checks


def test_reference_passes_every_public_check(sandbox, reference_program):
    for check in selfcheck.CHECKS:
        outcome = sandbox.call(reference_program, selfcheck.run_check, part=check.part, name=check.name)
        assert outcome.ok and outcome.value["passed"], (check.name, outcome)


def test_blank_release_fails_every_stub_check_naming_the_stub(sandbox):
    program = program_from_notebook(release_notebook())
    stub_of = {"parameters": "Module.parameters", "forward": "Linear.forward", "zero_grad": "SGD.zero_grad",
               "step": "SGD.step", "no_grad": "no_grad"}
    for check in selfcheck.CHECKS:
        outcome = sandbox.call(program, selfcheck.run_check, part=check.part, name=check.name)
        assert outcome.ok and not outcome.value["passed"], check.name
        message = outcome.value["message"]
        if check.part in stub_of:
            assert f"{stub_of[check.part]} is not written yet" in message, (check.name, message)
        else:
            assert any(f"{stub} is not written yet" in message for stub in STUBS), (check.name, message)


# ---------------------------------------------------------------- release and solutions


@pytest.mark.slow
def test_release_and_solutions_regenerate_to_the_committed_trees(tmp_path):
    course = course_copy(tmp_path)
    for tree in ("release", "solutions"):
        shutil.rmtree(course / tree)
    nbgrader = Path(sys.executable).parent / "nbgrader"
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    for command in ("generate_assignment", "generate_solution"):
        run = subprocess.run([str(nbgrader), command, ASSIGNMENT.name, "--force", "--log-level=ERROR"],
                             cwd=course, capture_output=True, text=True, env=env)
        assert run.returncode == 0, run.stderr
    for tree in ("release", "solutions"):
        ours, fresh = ROOT / tree / ASSIGNMENT.name, course / tree / ASSIGNMENT.name
        names = sorted(p.name for p in fresh.iterdir())
        assert names == sorted(p.name for p in ours.iterdir()), tree
        match, mismatch, errors = filecmp.cmpfiles(ours, fresh, names, shallow=False)
        assert not mismatch and not errors, f"{tree}: run `make release` and commit ({mismatch + errors})"


_REGION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", flags=re.S)


def test_release_contains_nothing_from_inside_a_solution_region():
    """Every line that the source holds only inside solution regions is absent from release/."""
    source_files = [p for p in ASSIGNMENT.source_dir.iterdir() if p.is_file() and p.suffix != ".ipynb"]
    cells = [cell.source for cell in ASSIGNMENT.source.cells]
    outside = "\n".join([_REGION.sub("", text) for text in cells] + [p.read_text() for p in source_files])
    secret = {line.strip() for text in cells for region in _REGION.findall(text) for line in region.splitlines()
              if len(line.strip()) > 8 and line.strip() not in outside}
    assert len(secret) >= 15  # the five stubs and three model answers
    released = "\n".join(p.read_text() for p in (ROOT / "release" / ASSIGNMENT.name).iterdir() if p.is_file())
    assert not sorted(line for line in secret if line in released)


# ------------------------------------------------------------------------ the notebook


@pytest.mark.slow
def test_reference_notebook_runs_top_to_bottom_quickly_and_learns_the_moons(tmp_path):
    folder = shutil.copytree(ROOT / "solutions" / ASSIGNMENT.name, tmp_path / "nb")
    notebook = nbformat.read(folder / NOTEBOOK, as_version=4)
    started = time.monotonic()
    NotebookClient(notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    seconds = time.monotonic() - started
    assert seconds < 60
    text = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs)
    accuracy = float(re.search(r"training accuracy[^\d]*([\d.]+)\s*%", text, flags=re.I).group(1))
    assert accuracy >= 95.0, text[-500:]


# ------------------------------------------------------------------------ self-check


def _self_check(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=folder, capture_output=True,
                          text=True, timeout=300)


def _fill_stubs(notebook: dict, cells: dict[str, str]) -> dict:
    for cell in notebook["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in cells:
            cell["source"] = cells[grade_id]
    return notebook


def _solution_cells(notebook: dict | None = None) -> dict[str, str]:
    """The code solution cells of `notebook` (the reference by default), by grade_id."""
    return {c["metadata"]["nbgrader"]["grade_id"]: c["source"] for c in (notebook or solution_notebook())["cells"]
            if c["metadata"].get("nbgrader", {}).get("solution") and c["cell_type"] == "code"}


@pytest.fixture
def release_copy(tmp_path) -> Path:
    return Path(shutil.copytree(ROOT / "release" / ASSIGNMENT.name, tmp_path / ASSIGNMENT.name))


def test_self_check_in_a_release_copy_fails_readably_then_passes_with_the_reference_bodies(release_copy):
    blank = _self_check(release_copy)
    assert blank.returncode == 1
    for stub in STUBS:
        assert f"{stub} is not written yet: replace `raise NotImplementedError()`" in blank.stdout, stub
    assert "Traceback" not in blank.stdout and "engine.py" not in blank.stdout
    notebook = json.loads((release_copy / NOTEBOOK).read_text())
    write_notebook(_fill_stubs(notebook, _solution_cells()), release_copy / NOTEBOOK)
    filled = _self_check(release_copy)
    assert filled.returncode == 0, filled.stdout[-3000:]
    assert f"{len(selfcheck.CHECKS)} passed" in filled.stdout


def test_self_check_runs_one_part_by_marker(release_copy):
    run = _self_check(release_copy, "-m", "no_grad")
    part = [c for c in selfcheck.CHECKS if c.part == "no_grad"]
    assert f"{len(part)} failed, {len(selfcheck.CHECKS) - len(part)} deselected" in run.stdout


def test_a_loop_or_an_exception_in_one_stub_leaves_the_other_checks_reporting(release_copy):
    broken = apply(solution_notebook(), [Mutation("sgd", "step", "while True:\n    pass"),
                                         Mutation("linear", "forward", "raise KeyError('oops')")])
    cells = _solution_cells(broken)
    notebook = json.loads((release_copy / NOTEBOOK).read_text())
    write_notebook(_fill_stubs(notebook, cells), release_copy / NOTEBOOK)
    run = _self_check(release_copy)
    assert "Linear.forward raised KeyError: 'oops'" in run.stdout
    assert "did not finish within" in run.stdout
    for part in ("parameters", "zero_grad", "no_grad"):
        assert f"test_public_check[{part}:" not in run.stdout, part  # every check of these parts passed
