"""The student kit: the notebook, its release, the reference and the self-check."""
from __future__ import annotations

import filecmp
import json
import os
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
import notebook_checks
from autograder.mutate import Mutation, apply
from conftest import (ASSIGNMENT, FULL, NOTEBOOK, ROOT, STUBS, course_copy, solution_notebook,
                      write_notebook)

PARTS = [grade_id[len("test_"):] for grade_id in FULL]  # a part per grade cell: test_<part>.py holds its checks
STUB_OF = {"parameters": "Module.parameters", "forward": "Linear.forward", "zero_grad": "SGD.zero_grad",
           "step": "SGD.step", "no_grad": "no_grad"}
EXERCISE_CELL = {"exercise_count": "exercise_count", "exercise_second_step": "exercise_second_step"}


def public_checks(part: str | None = None) -> list[str]:
    """The names of the public checks (of one part), as pytest reports them."""
    return [name for p in ([part] if part else PARTS) for name, _ in notebook_checks.checks(p)]


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


def test_every_grade_cell_has_a_public_check_file_and_its_test_cell_runs_it():
    files = sorted(p.stem[len("test_"):] for p in ASSIGNMENT.source_dir.glob("test_*.py"))
    assert files == sorted(PARTS)
    markers = (ASSIGNMENT.source_dir / "pytest.ini").read_text()
    cells = {c.metadata["nbgrader"]["grade_id"]: c.source for c in ASSIGNMENT.source.cells
             if c.metadata.get("nbgrader", {}).get("grade_id") in FULL}
    for part in PARTS:
        assert f"\n    {part}: " in markers, part
        assert cells[f"test_{part}"] == f'from notebook_checks import check\ncheck("{part}", globals())', part
        assert public_checks(part), part


def test_reference_passes_every_public_check():
    for part in PARTS:
        results = notebook_checks.run_part(part, ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK)
        assert all(passed for passed, _ in results.values()), (part, results)


def test_blank_release_fails_every_check_naming_the_stub_or_the_exercise():
    for part in PARTS:
        results = notebook_checks.run_part(part, ROOT / "release" / ASSIGNMENT.name / NOTEBOOK)
        for name, (passed, message) in results.items():
            assert not passed, name
            if part in STUB_OF:
                assert f"{STUB_OF[part]} is not written yet" in message, (name, message)
            elif part in EXERCISE_CELL:
                assert f"because cell {EXERCISE_CELL[part]} is not written yet" in message, (name, message)
            else:
                assert any(f"{stub} is not written yet" in message for stub in STUBS), (name, message)


def test_the_notebook_test_cells_run_the_same_checks_on_the_kernels_names(capsys):
    names, errors = notebook_checks.load(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK)
    assert not errors
    for part in PARTS:
        notebook_checks.check(part, names)
    assert capsys.readouterr().out.splitlines() == [f"PASS {name}" for name in public_checks()]
    blank, _ = notebook_checks.load(ROOT / "release" / ASSIGNMENT.name / NOTEBOOK)
    with pytest.raises(AssertionError, match="5 of 5 checks of step failed"):
        notebook_checks.check("step", blank)
    assert "FAIL test_adds_no_graph_nodes: SGD.step is not written yet" in capsys.readouterr().out


def _broken_notebook(path: Path) -> Path:
    """The reference with an infinite loop in step(), a KeyError in forward() and os._exit() in zero_grad()."""
    broken = apply(solution_notebook(), [Mutation("sgd", "step", "while True:\n    pass"),
                                         Mutation("linear", "forward", "raise KeyError('oops')"),
                                         Mutation("sgd", "zero_grad", "import os\nos._exit(3)")])
    return write_notebook(broken, path)


@pytest.mark.parametrize("part", ["forward", "zero_grad", "step", "parameters"])
def test_without_fork_the_spawn_path_gives_the_same_results(tmp_path, part):
    """Windows has no os.fork: the runner then spawns its children; forced here, the results are the same."""
    for notebook in (ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK, ROOT / "release" / ASSIGNMENT.name / NOTEBOOK,
                     _broken_notebook(tmp_path / NOTEBOOK)):
        assert notebook_checks.run_part(part, notebook, "spawn") == notebook_checks.run_part(part, notebook, "fork")


def test_a_loop_a_crash_or_an_exception_costs_only_the_checks_that_call_it(tmp_path):
    notebook = _broken_notebook(tmp_path / NOTEBOOK)
    results = {part: notebook_checks.run_part(part, notebook) for part in ("forward", "zero_grad", "step", "no_grad")}
    assert {m for _, m in results["forward"].values()} == {"Linear.forward raised KeyError: 'oops'"}
    assert all("the process ended during this check (exit code 3)" in m for _, m in results["zero_grad"].values())
    step = [m for _, m in results["step"].values()]
    assert step[:3] == ["did not finish within 3 s (an infinite loop?)"] * 3
    assert step[3:] == ["not run: 3 checks of step ran out of time"] * (len(step) - 3)
    assert all(passed for passed, _ in results["no_grad"].values())


def test_release_holds_no_grader_machinery():
    folder = ROOT / "release" / ASSIGNMENT.name
    assert not {"sandbox.py", "selfcheck.py", "test_selfcheck.py"} & {p.name for p in folder.iterdir()}
    for path in folder.glob("*.py"):
        text = path.read_text()
        assert path.name == "engine.py" or len(text.splitlines()) <= 175, path.name
        assert not re.search(r"setuid|setgid|setrlimit|unshare|prctl|subreaper|waitpid|os\.kill", text), path.name


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
    assert f"{len(public_checks())} passed" in filled.stdout


def test_self_check_runs_one_part_by_marker(release_copy):
    run = _self_check(release_copy, "-m", "no_grad")
    part = public_checks("no_grad")
    assert f"{len(part)} failed, {len(public_checks()) - len(part)} deselected" in run.stdout


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
        assert f"FAILED test_{part}.py::" not in run.stdout, part  # every check of these parts passed


def test_self_check_without_fork_passes_the_reference(release_copy):
    """pytest as on Windows (children spawned, not forked): the same checks pass on the reference bodies."""
    notebook = json.loads((release_copy / NOTEBOOK).read_text())
    write_notebook(_fill_stubs(notebook, _solution_cells()), release_copy / NOTEBOOK)
    run = subprocess.run([sys.executable, "-m", "pytest"], cwd=release_copy, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "NOTEBOOK_CHECKS_START": "spawn"})
    assert run.returncode == 0 and f"{len(public_checks())} passed" in run.stdout, run.stdout[-3000:]
