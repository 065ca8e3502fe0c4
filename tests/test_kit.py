"""The student kit: the notebook, its release, the reference and the self-check."""
from __future__ import annotations

import ast
import copy
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path

import checks_shell
import lesson_probes
import nbformat
import notebook_checks
import pytest
from catalogue_bugs import BUGS, SGD_WITH_A_LINEAR
from nbclient import NotebookClient

from autograder.classroom.mutate import Mutation, apply
from autograder.sandbox import ipython_magics
from conftest import (
    ASSIGNMENT,
    FULL,
    NOTEBOOK,
    ROOT,
    STUBS,
    course_copy,
    grade_json,
    release_notebook,
    solution_notebook,
    write_notebook,
)

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


def test_the_public_checks_evaluate_a_cells_annotations_as_jupyter_does():
    """notebook_checks.py begins with `from __future__ import annotations`, which compile() passes on to the code it
    compiles unless told not to: a cell annotated with a name defined nowhere ran there and raises NameError in
    Jupyter (red-f8, pass 20: cell sgd's `def step(self) -> Optimiser`)."""
    names, errors = notebook_checks.run_cells([("c", "def f(x: int) -> Undefined:\n    pass")])
    assert "f" not in names and len(errors) == 1 and "NameError" in errors[0][0], errors


def _broken_notebook(path: Path) -> Path:
    """The reference with an infinite loop in step(), a KeyError in forward() and os._exit() in zero_grad()."""
    broken = apply(solution_notebook(), [Mutation("sgd", "step", "while True:\n    pass"),
                                         Mutation("linear", "forward", "raise KeyError('oops')"),
                                         Mutation("sgd", "zero_grad", "import os\nos._exit(3)")])
    return write_notebook(broken, path)


@pytest.mark.parametrize("platform, chosen, method", [
    ("linux", None, "fork"), ("darwin", None, "spawn"), ("win32", None, "spawn"), ("cygwin", None, "spawn"),
    ("darwin", "forkserver", "forkserver"), ("linux", "spawn", "spawn")])
def test_children_fork_only_on_linux_unless_told(monkeypatch, platform, chosen, method):
    """macOS has os.fork but fork is unsafe there (CPython spawns by default); Windows has none."""
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.delenv("NOTEBOOK_CHECKS_START", raising=False)
    if chosen:
        monkeypatch.setenv("NOTEBOOK_CHECKS_START", chosen)
    assert notebook_checks.start_method() == method


def _run_part_in(folder: Path, part: str, method: str, load_seconds: float, env: dict | None = None) -> dict:
    """run_part of the helper in `folder` (a copy of the student folder) in a new Python, LOAD_SECONDS set."""
    program = (f"import json, notebook_checks\nnotebook_checks.LOAD_SECONDS = {load_seconds}\n"
               f"print(json.dumps(notebook_checks.run_part({part!r}, method={method!r})))")
    run = subprocess.run([sys.executable, "-c", program], cwd=folder, capture_output=True, timeout=120,
                         env={**os.environ, **(env or {})})
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-2000:]
    return json.loads(run.stdout.decode().splitlines()[-1])


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_slow_start_up_is_not_charged_to_the_loading_limit(tmp_path, method):
    """A new Python importing NumPy on a slow laptop: start-up has its own bound (START_SECONDS), so an
    engine that takes longer to import than the whole loading limit still passes."""
    folder = Path(shutil.copytree(ROOT / "solutions" / ASSIGNMENT.name, tmp_path / "nb"))
    engine = folder / "engine.py"
    engine.write_text(engine.read_text() + "\nimport time\ntime.sleep(1.5)  # a slow start-up\n")
    results = _run_part_in(folder, "forward", method, load_seconds=1.0)
    assert all(passed for passed, _ in results.values()), results


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_child_prints_non_ascii_whatever_the_console_encoding(tmp_path, method):
    """Windows' console code pages cannot encode every character; the children write UTF-8 anyway."""
    printing = apply(solution_notebook(), [Mutation("linear", "forward", 'print("x → x @ W.T + b, ∑ ✓")\n'
                                                    "return x @ self.weight.T + self.bias")])
    folder = Path(shutil.copytree(ROOT / "solutions" / ASSIGNMENT.name, tmp_path / "nb"))
    write_notebook(printing, folder / NOTEBOOK)
    results = _run_part_in(folder, "forward", method, notebook_checks.LOAD_SECONDS, {"PYTHONIOENCODING": "ascii"})
    assert all(passed for passed, _ in results.values()), results


# step's broken notebook loops: its three 3 s time-outs, spawned and forked, leave it to make test
@pytest.mark.parametrize("part", ["forward", "zero_grad", pytest.param("step", marks=pytest.mark.slow), "parameters"])
def test_without_fork_the_spawn_path_gives_the_same_results(tmp_path, part):
    """Windows has no os.fork: the runner then spawns its children; forced here, the results are the same."""
    for notebook in (ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK, ROOT / "release" / ASSIGNMENT.name / NOTEBOOK,
                     _broken_notebook(tmp_path / NOTEBOOK)):
        assert notebook_checks.run_part(part, notebook, "spawn") == notebook_checks.run_part(part, notebook, "fork")


def test_a_loop_a_crash_or_an_exception_costs_only_the_checks_that_call_it(tmp_path):
    notebook = _broken_notebook(tmp_path / NOTEBOOK)
    results = {part: notebook_checks.run_part(part, notebook) for part in ("forward", "zero_grad", "step", "no_grad")}
    assert {m for _, m in results["forward"].values()} == {"Linear.forward raised KeyError: 'oops' (line 18 of its "
                                                          "cell)"}
    assert all("the process ended during this check (exit code 3)" in m for _, m in results["zero_grad"].values())
    step = [m for _, m in results["step"].values()]
    assert step[:3] == ["did not finish within 3 s (an infinite loop?)"] * 3
    assert step[3:] == ["not run: 3 checks of step ran out of time"] * (len(step) - 3)
    assert all(passed for passed, _ in results["no_grad"].values())


def _student_copy(edits: dict[str, str]) -> dict:
    """What a student saves: the released notebook (nbgrader's metadata and checksums) with every solution cell
    holding the reference's code, and the cells of `edits` (grade id -> text) so edited."""
    solved = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell.source for cell in solution_notebook().cells}
    notebook = release_notebook()
    for cell in notebook.cells:
        grading = cell.metadata.get("nbgrader", {})
        if grading.get("solution") or grading.get("grade_id") in edits:
            cell.source = edits.get(grading["grade_id"], solved[grading["grade_id"]])
    return notebook


def test_a_failing_check_names_a_given_cell_the_student_edited_which_the_grade_runs_as_released(tmp_path):
    """Red-h 14: a given (locked) cell edited (Sequential.forward without its return) fails the public lesson
    checks, where the grade runs the released copy and passes: each failing message says so first, by nbgrader's
    checksum of the cell; an unedited copy of the release passes everything and names no cell."""
    sequential = next(c.source for c in release_notebook().cells if c.metadata.get("nbgrader", {}).get("grade_id")
                      == "relu_sequential")
    without_return = sequential.replace("            x = layer(x)\n        return x", "            x = layer(x)")
    assert without_return != sequential
    edited = _student_copy({"relu_sequential": without_return})
    results = notebook_checks.run_part("lesson_numbers", write_notebook(edited, tmp_path / "edited" / NOTEBOOK))
    failing = [message for passed, message in results.values() if not passed]
    assert failing and all(m.startswith("you edited the given cell relu_sequential: the grade runs the released copy "
                                        "of it; ") and m.count("you edited") == 1 for m in failing), failing
    solved = write_notebook(_student_copy({}), tmp_path / "solved" / NOTEBOOK)
    assert all(passed for part in PARTS for passed, _ in notebook_checks.run_part(part, solved).values())


def test_the_public_checks_read_ipython_syntax_as_jupyter_and_the_grade_do(tmp_path):
    """A right cell sgd under `%%time`, with `TIMED = %time ...`, help and a `!` command in it: Jupyter runs it and
    the grade gives it full marks (tests/test_sandbox.py); the public checks dropped a `%%` cell whole ("the
    notebook defines no SGD") and stopped at `x = %time`, a syntax error in plain Python."""
    sgd = next(c.source for c in solution_notebook().cells if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    cell = "%%time\n" + sgd + "\nTIMED = %time SGD\nnp.zeros_like?\nfiles = !true\n"
    path = write_notebook(_student_copy({"sgd": cell}), tmp_path / NOTEBOOK)
    assert all(passed for passed, _ in notebook_checks.run_part("step", path).values())


def test_the_public_checks_run_no_shell_command_as_the_grade_runs_none(tmp_path, monkeypatch):
    """Red-b16 X25-b16-6: the grade's shell runs no shell command and none of the magics that run one (ipython_shell.py);
    the public checks (IPython's own shell) ran each, once per part. A magic the grade runs still runs (%%writefile)."""
    made = tmp_path / "made"
    commands = {"bang": "!touch {}", "bangbang": "!!touch {}", "assigned": "files = !touch {}", "sx": "%sx touch {}",
                "system": "%system touch {}", "pip": "%pip --log {} --version", "bash": "%%bash\ntouch {}\n",
                "script": "%%script sh\ntouch {}\n", "getoutput": "get_ipython().getoutput('touch {}')"}
    cells = [(name, command.format(made / name)) for name, command in commands.items()]
    cells += [("cd", f"%cd {tmp_path}"), ("written", f"%%writefile {made / 'written'}\nx = 1\n")]
    made.mkdir()
    monkeypatch.chdir(made)  # and back after the test, should %cd move it
    names, errors = notebook_checks.run_cells(cells)
    assert not errors and names["files"] == [] and Path.cwd() == made, errors
    assert [p.name for p in made.iterdir()] == ["written"]


def test_the_public_checks_run_the_magics_the_grade_runs():
    """The public checks' shell (checks_shell.py, released: the student's folder holds no autograder/) runs the
    magics the grade's sandbox shell runs (ipython_magics.py), by IPython's names (an alias as its target)."""
    aliases = {alias for alias, name in ipython_magics.ALIASES.items() if name in ipython_magics.CELL_MAGICS}
    assert checks_shell.LINE_MAGICS == ipython_magics.LINE_MAGICS
    assert checks_shell.CELL_MAGICS == ipython_magics.CELL_MAGICS | aliases


def test_the_edited_given_cell_note_leads_only_the_checks_that_cell_can_explain(tmp_path):
    """Red-s2 2e: a comment added to the given cell relu_sequential (its code the release's) and a real bug,
    forward() without its bias: the forward checks, which read no name that cell binds and fail on their own
    asserts, name forward alone; a lesson check that builds a Sequential still carries the note."""
    sequential = next(c.source for c in release_notebook().cells if c.metadata.get("nbgrader", {}).get("grade_id")
                      == "relu_sequential")
    forward = next(c.source for c in solution_notebook().cells if c.metadata.get("nbgrader", {}).get("grade_id")
                   == "linear")
    no_bias = forward.replace("x @ self.weight.T + self.bias", "x @ self.weight.T")
    assert no_bias != forward
    edited = _student_copy({"relu_sequential": sequential + "  # max(x, 0)", "linear": no_bias})
    path = write_notebook(edited, tmp_path / NOTEBOOK)
    forward_failing = [m for passed, m in notebook_checks.run_part("forward", path).values() if not passed]
    assert forward_failing and not any("you edited" in m for m in forward_failing), forward_failing
    lesson = notebook_checks.run_part("lesson_numbers", path)
    assert lesson["test_network_records_18_nodes_and_1_under_no_grad"][1].startswith(
        "you edited the given cell relu_sequential"), lesson


def test_the_grade_and_the_public_checks_name_the_same_class_of_two_a_later_cell_defines_again(tmp_path):
    """Module and an older Linear (no bias) both defined again at the end of cell sgd: the lesson checks of the grade
    and the student's own name the same copy in their note, Module, the first in causes.HOMES (both read the cells
    with facts.defined_in; the grade named Linear, the first by its letters)."""
    module = "class Module(Module):\n    def __call__(self, x):\n        return self.forward(x)\n\n\nclass Linear("
    sgd = SGD_WITH_A_LINEAR.replace("class Linear(", module)
    assert sgd.count("class Module(") == 1
    path = write_notebook(_student_copy({"sgd": sgd}), tmp_path / NOTEBOOK)
    public = [m for passed, m in notebook_checks.run_part("lesson_numbers", path).values() if not passed]
    report, _ = grade_json(path)
    graded = [t["message"] for p in report["parts"] if p["grade_id"] == "test_lesson_numbers" for t in p["tests"]
              if not t["passed"]]
    for messages in (public, graded):
        named = {name for m in messages for name in re.findall(r"the (\w+) in use is the one cell sgd defines", m)}
        assert messages and named == {"Module"}, messages


def test_release_holds_no_grader_machinery():
    folder = ROOT / "release" / ASSIGNMENT.name
    assert not {"sandbox.py", "selfcheck.py", "test_selfcheck.py"} & {p.name for p in folder.iterdir()}
    for path in folder.glob("*.py"):
        text = path.read_text()
        assert path.name == "engine.py" or len(text.splitlines()) <= 200, path.name
        assert not re.search(r"setuid|setgid|setrlimit|unshare|prctl|subreaper|waitpid|os\.kill", text), path.name


class _Renamed(ast.NodeTransformer):
    """A function's code with every name it uses renamed in the order it first appears: what is left is its logic."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg, node.annotation = self.names.setdefault(node.arg, f"n{len(self.names)}"), None
        return node

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.setdefault(node.id, f"n{len(self.names)}")
        return node


def _logic(folder: Path) -> dict[str, str]:
    """{a function's logic (_Renamed, its docstring and decorators left out): where it stands} for a folder's modules."""
    found = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                code = copy.deepcopy(node)  # the walk goes on into the original
                function = ast.FunctionDef("", code.args, code.body[ast.get_docstring(code) is not None:], [], None)
                found[ast.dump(_Renamed().visit(ast.fix_missing_locations(function)))] = f"{path.name}:{node.name}"
    return found


def test_the_hidden_suites_write_no_rule_of_the_released_modules_again():
    """A rule the public checks and the grade both apply (what a parameters() keeps between calls, say) has one
    home, the released module (source/): the probes import it in the sandbox, which has the release on its path.
    A copy in the hidden suites, with other names, could drift from it and make the grade say another cause."""
    hidden, released = _logic(ASSIGNMENT.suite_dir), _logic(ASSIGNMENT.source_dir)
    assert not [(hidden[logic], released[logic]) for logic in hidden.keys() & released.keys()]


def test_no_released_file_holds_an_exercise_answer_in_clear():
    """Issue 28: the student's folder says whether an exercise's answer is right (answers.py: salted hashes) but
    holds neither answer, nor the arithmetic that gives it for the exercise's own numbers."""
    folder = ROOT / "release" / ASSIGNMENT.name
    text = "\n".join(p.read_text() for p in folder.iterdir() if p.is_file())
    answers = ["2410", "0.908", "0.0085", "3.668", "7.118", "7.12", "32 * (64 + 1)", "(64 + 1) * 32"]
    assert not [answer for answer in answers if answer in text]


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
    # The exercises are answered here, so the demonstrations after them show what they keep back until then.
    assert "from the model: 2410   from the formula: 2410" in text and "result: z=0.908" in text, text[:3000]


def _run_in_jupyter(notebook: dict, folder: Path, demos: bool = True) -> list:
    """Execute `notebook` in a Jupyter kernel in a copy of the student folder, going on past errors, with
    `print("kernel usable")` appended; its code cells, outputs and timing filled in."""
    folder = shutil.copytree(ROOT / "solutions" / ASSIGNMENT.name, folder)
    notebook = nbformat.from_dict(notebook)
    notebook.cells = [c for c in notebook.cells if demos or "demo" not in c.metadata.get("tags", [])]
    notebook.cells.append(nbformat.v4.new_code_cell('print("kernel usable")'))
    nbformat.write(notebook, folder / NOTEBOOK)
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return [c for c in notebook.cells if c.cell_type == "code"]


def _cell(cells: list, grade_id: str):
    return next(c for c in cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _text(cell) -> str:
    return "".join(o.get("text", "") + "".join(o.get("traceback", [])) for o in cell.outputs)


def _seconds(cell) -> float:
    timing = cell.metadata.execution
    started, ended = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                      for k in ("iopub.execute_input", "shell.execute_reply"))
    return (ended - started).total_seconds()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_loop_in_a_stub_fails_its_test_cell_within_the_bound_and_the_kernel_goes_on(tmp_path, monkeypatch, method):
    """The notebook's test cells run their part in a child, as pytest does: a loop in step() fails the
    test_step cell within the README's bound (three checks of 3 s, then the part stops) and every later cell
    runs. The demonstrations are left out: they call step() in the kernel itself, as the student's own code."""
    monkeypatch.setenv("NOTEBOOK_CHECKS_START", method)  # the kernel's environment: each start path forced
    looping = apply(solution_notebook(), [Mutation("sgd", "step", "while True:\n    pass")])
    cells = _run_in_jupyter(looping, tmp_path / "nb", demos=False)
    step = _cell(cells, "test_step")
    assert "did not finish within 3 s (an infinite loop?)" in _text(step), _text(step)
    assert "not run: 3 checks of step ran out of time" in _text(step)
    bound = notebook_checks.TIMEOUTS * notebook_checks.CHECK_SECONDS + notebook_checks.LOAD_SECONDS
    assert _seconds(step) < bound, _seconds(step)
    assert "FAIL" not in _text(_cell(cells, "test_no_grad")) and "PASS" in _text(_cell(cells, "test_no_grad"))
    assert _text(cells[-1]) == "kernel usable\n"


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_an_exercise_cell_that_raised_is_named_in_its_test_cell(tmp_path, monkeypatch, method):
    """The blank release in Jupyter: the exercise cell ran and raised NotImplementedError, so its test cell
    says that cell is not written yet (not "run the cells above"), and each stub's test cell names the stub."""
    monkeypatch.setenv("NOTEBOOK_CHECKS_START", method)
    cells = _run_in_jupyter(release_notebook(), tmp_path / "nb", demos=False)
    assert ("FAIL test_count_64_32_10_is_the_number_of_parameters: the notebook defines no count_64_32_10 (because "
            "the cell that sets it is not written yet") in _text(_cell(cells, "test_exercise_count"))
    for part, stub in STUB_OF.items():
        assert f"{stub} is not written yet" in _text(_cell(cells, f"test_{part}")), part
    assert _text(cells[-1]) == "kernel usable\n"


@pytest.mark.slow
def test_a_no_grad_that_never_restores_does_not_fail_the_lesson_numbers_cell(tmp_path):
    """A broken no_grad() in a demonstration leaves Tensor.recording off in the kernel; the later checks
    start from the engine's own state, so the lesson-numbers cell passes (as under pytest and the grader)
    and only the no_grad cell names the bug."""
    broken = apply(solution_notebook(), [Mutation("no_grad", "no_grad", "Tensor.recording = False\nyield")])
    cells = _run_in_jupyter(broken, tmp_path / "nb")
    assert "FAIL test_records_again_after_the_block: after a no_grad() block operations still record nothing" in _text(
        _cell(cells, "test_no_grad"))
    lesson = _text(_cell(cells, "test_lesson_numbers"))
    assert "FAIL" not in lesson and lesson.count("PASS") == len(public_checks("lesson_numbers")), lesson
    assert _text(cells[-1]) == "kernel usable\n"


@pytest.mark.slow
def test_a_generator_from_parameters_runs_every_cell_and_the_demos_keep_the_exercise_answers(tmp_path):
    """Issue 31: parameters() as a generator is accepted, so every cell of the notebook works with it (the
    counts and the shared weight, which list() what it returns). Issue 28: with the exercises not done, the
    demonstrations after them print neither exercise's answer; the reference's (answers done) prints them."""
    generator = next(bug for bug in BUGS if bug.id == "parameters-generator")
    notebook = apply(solution_notebook(), list(generator.mutations))
    blank = {c.metadata["nbgrader"]["grade_id"]: c.source for c in release_notebook().cells
             if c.metadata.get("nbgrader", {}).get("grade_id") in EXERCISE_CELL}
    notebook = _fill_stubs(notebook, blank)
    cells = _run_in_jupyter(notebook, tmp_path / "nb")
    errors = {c.metadata.get("nbgrader", {}).get("grade_id"): _text(c)[-300:] for c in cells
              if any(o.get("output_type") == "error" for o in c.outputs)}
    assert set(errors) == set(EXERCISE_CELL) | {f"test_{e}" for e in EXERCISE_CELL}, errors
    counts = _text(_cell(cells, "demo_count_parameters"))
    assert "from the model: 354   from the formula: 354" in counts and "64-32-10" not in counts.splitlines()[-1]
    shared = _text(_cell(cells, "demo_shared_weight"))
    assert "parameters() returns 3 objects; the shared weight appears 1 time(s)" in shared
    worked = _text(_cell(cells, "demo_worked_example"))
    assert "step 2" not in worked and "result" not in worked and "once your Exercise 2 answers pass" in worked
    for answer in ("2410", "0.908", "3.668", "7.118", "0.008464"):
        assert answer not in "".join(_text(c) for c in cells), answer
    assert _text(cells[-1]) == "kernel usable\n"


# ------------------------------------------------------------------------ self-check


def _self_check(folder: Path, *args: str, python: str = sys.executable) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "pytest", *args], cwd=folder, capture_output=True, text=True, timeout=300)


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
    _fails_readably_then_passes(release_copy, sys.executable)


def _fails_readably_then_passes(release_copy: Path, python: str) -> None:
    """pytest in the student folder fails every stub by name on the blank release, passes on the reference."""
    blank = _self_check(release_copy, python=python)
    assert blank.returncode == 1
    for stub in STUBS:
        assert f"{stub} is not written yet: replace `raise NotImplementedError()`" in blank.stdout, stub
    assert "Traceback" not in blank.stdout and "engine.py" not in blank.stdout
    notebook = json.loads((release_copy / NOTEBOOK).read_text())
    write_notebook(_fill_stubs(notebook, _solution_cells()), release_copy / NOTEBOOK)
    filled = _self_check(release_copy, python=python)
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


# ------------------------------------------------------------------ the student's own Python

STUDENT_README = (ROOT / "release" / ASSIGNMENT.name / "README.md").read_text()
OFFLINE = ("NewConnectionError", "Temporary failure in name resolution", "Network is unreachable")


def _interpreter(version: str) -> str | None:
    """A Python `version` (e.g. "3.9") on this machine: on PATH, or one that pyenv keeps."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [shutil.which(f"python{version}")] + sorted(str(p) for p in pyenv.glob(f"{version}.*/bin/python{version}"))
    for candidate in filter(None, candidates):
        run = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True)
        if run.returncode == 0 and run.stdout.strip() == version:  # a pyenv shim may name one it cannot run
            return candidate
    return None


def _third_party_imports() -> set[str]:
    """The modules outside the standard library that the student folder's notebook and files import."""
    folder = ROOT / "release" / ASSIGNMENT.name
    sources = [p.read_text() for p in folder.glob("*.py")] + [
        c.source for c in nbformat.read(folder / NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    found = {(node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
             for tree in map(ast.parse, sources) for node in ast.walk(tree)
             if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "level", 0) == 0
             for alias in node.names}
    return found - set(sys.stdlib_module_names) - {p.stem for p in folder.glob("*.py")}


SET_UP = re.search(r"## Set up \(once\).*?```sh\n(.*?)```", STUDENT_README, flags=re.S).group(1).splitlines()


def test_the_student_install_line_installs_what_the_notebook_imports_and_jupyter():
    # the public checks read cells with IPython's shell and the notebook with nbformat's schema: Jupyter's notebook
    # installs both
    jupyters = {"IPython", "traitlets", "nbformat"}
    assert _third_party_imports() == {"numpy", "pytest", "matplotlib"} | jupyters
    install = next(line for line in SET_UP if "pip install" in line).split("pip install ")[1].split()
    assert set(install) == _third_party_imports() - jupyters | {"notebook"}  # and Jupyter's notebook, to open it


def _served(url: str, seconds: float = 60) -> dict:
    """The JSON a Jupyter server answers at `url`, asked again while it refuses (it logs its address a moment
    before it listens)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=seconds) as answer:
                return json.load(answer)
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.mark.slow
def test_the_student_readme_set_up_word_for_word_opens_the_notebook_and_runs_pytest(release_copy, tmp_path):
    """The README's set-up lines, taken at their word on a Python with nothing installed (`python3` is the
    interpreter this venv was made from): the venv they make, with only what they install, serves the notebook
    in Jupyter, and its pytest runs the self-check on the blank release and on the reference."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(Path(sys._base_executable).resolve())
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "BROWSER": "true"}
    *install, open_line = SET_UP
    for line in install:
        run = subprocess.run(line, shell=True, cwd=release_copy, env=env, capture_output=True, text=True, timeout=900)
        if run.returncode and any(sign in run.stdout + run.stderr for sign in OFFLINE):
            pytest.skip(f"PyPI is out of reach: {line!r} did not install")
        assert run.returncode == 0, f"{line}\n{run.stderr[-2000:]}"
    root = " --allow-root" if os.geteuid() == 0 else ""  # Jupyter refuses root without it; a student is not root
    server = subprocess.Popen(f"exec {open_line}{root}", shell=True, cwd=release_copy, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        log, url = "", None
        while url is None and server.poll() is None:
            log += server.stdout.readline()
            url = re.search(r"(http://127\.0\.0\.1:\d+)/\S*\?token=(\w+)", log)
        assert url, log[-2000:]
        assert _served(f"{url[1]}/api/contents/{NOTEBOOK}?token={url[2]}")["type"] == "notebook"
    finally:
        server.kill()
        server.wait()
    _fails_readably_then_passes(release_copy, str(release_copy / ".venv" / "bin" / "python"))


@pytest.mark.slow
def test_self_check_on_the_oldest_python_the_student_readme_claims(release_copy, tmp_path):
    """The README's "Python 3.x or newer", taken at its word: a fresh venv of that Python with what the set-up
    line installs for the checks (all but Jupyter's notebook, which pip resolves for minutes on an old Python
    from this machine's local index) runs the self-check on the blank release and on the reference."""
    oldest = re.search(r"Python (3\.\d+) or newer", STUDENT_README).group(1)
    install = [name for name in next(line for line in SET_UP if "pip install" in line).split("pip install ")[1].split()
               if name != "notebook"]
    python = _interpreter(oldest)
    if python is None:
        pytest.skip(f"no Python {oldest} here (PATH, pyenv): the oldest Python the student README claims is untried")
    venv = tmp_path / "student-venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *install],
                         capture_output=True, text=True, timeout=600)
    if pip.returncode and any(sign in pip.stdout + pip.stderr for sign in OFFLINE):
        pytest.skip(f"PyPI is out of reach: {' '.join(install)} not installed for Python {oldest}")
    assert pip.returncode == 0, pip.stderr[-2000:]
    _fails_readably_then_passes(release_copy, str(venv / "bin" / "python"))


def test_generate_assignment_runs_nbgrader_s_own_steps_then_records_the_release():
    """nbgrader_config.py spells out GenerateAssignment's list to add RecordRelease last: the steps before it must stay
    nbgrader's own, in its order (a newer nbgrader that adds one would otherwise lose it here without a word)."""
    from nbgrader.converters.generate_assignment import GenerateAssignment

    from autograder.settings import load_config

    ours = list(load_config(ROOT).GenerateAssignment.preprocessors)
    theirs = [f"nbgrader.preprocessors.{step.__name__}" for step in GenerateAssignment().preprocessors]
    assert ours == [*theirs, "autograder.nbgrader_glue.preprocessors.record_release.RecordRelease"]


def test_the_public_checks_shell_is_the_one_ipythons_get_ipython_returns():
    """red-b18 X27-b18-5: in Jupyter and in the grade (ipython_display.install: `IPython`'s stand-in answers
    get_ipython with the sandbox's shell) `from IPython import get_ipython` gives the notebook's shell, as the builtin
    does. The public checks make their ChecksShell with its constructor, not as IPython's instance, so IPython's own
    get_ipython() returns None there: a cell `get_ipython().run_line_magic("load_ext", "autoreload")` after that
    import raises AttributeError in the public checks alone, and every name its cell binds after it is missing (the
    public checks fail parts the grade passes). The shell's class name differs too (ChecksShell against Jupyter's and
    the grade's ZMQInteractiveShell, which notebooks test to know they run in Jupyter)."""
    cells = [("a", 'from IPython import get_ipython\nget_ipython().run_line_magic("load_ext", "autoreload")\n'
                   'get_ipython().run_line_magic("autoreload", "2")\nBOUND = 1'),
             ("b", "IN_JUPYTER = type(get_ipython()).__name__ == 'ZMQInteractiveShell'")]
    names, errors = notebook_checks.run_cells(cells)
    assert not errors and names.get("BOUND") == 1, errors
    assert names["IN_JUPYTER"] is True


def test_the_public_checks_run_xdel_as_jupyter_and_the_grade_do():
    """red-b18 X27-b18-7: %xdel is one of the magics the public checks run "as IPython runs them" (checks_shell.py,
    LINE_MAGICS), but IPython's del_var reads the shell's last_execution_result, which is None in a shell whose
    run_cell never ran (runner.py only transforms cells): `%xdel Q` (and get_ipython().del_var) raise AttributeError
    ('NoneType' object has no attribute 'result') in the public checks alone, and the rest of the cell is lost. In
    Jupyter and in the grade (ipython_names.xdel) Q is deleted and the cell goes on."""
    names, errors = notebook_checks.run_cells([("a", "Q = 1\n%xdel Q\nget_ipython().del_var('R', by_name=True)\n"
                                                     "GONE = 'Q' not in globals()")])
    assert not errors and names.get("GONE") is True, errors


@pytest.mark.parametrize("field, value", [("tags", "mine"), ("id", "sgd cell")])
def test_a_notebook_the_grade_refuses_as_invalid_does_not_pass_every_public_check(tmp_path, field, value):
    """red-c24 X33-c24-1: cell sgd's tags typed as a string in Jupyter's metadata editor ("mine", not ["mine"]), or
    an id with a space: nbformat's schema refuses it, so the grade does not grade the notebook (0/18, "not a valid
    nbformat 4 notebook ... (at cell 20/...)"), yet the public checks read the raw JSON and every one passes. The
    student's self-check must fail on what the grade refuses, naming the cell."""
    notebook = _student_copy({})
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    (cell.metadata if field == "tags" else cell)[field] = value
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    public = notebook_checks.run_part("step", path)
    if report["total"] < report["max"]:
        failed = [message for passed, message in public.values() if not passed]
        assert failed, f"every public check of step passes; the grade: {report['total']}/{report['max']}"
        assert all("cell 20" in m or "cell sgd" in m for m in failed), failed


def _public_checks_fail_where_the_grade_does(path: Path, part: str, cell: str) -> None:
    """The grade takes points from `part` of the notebook at `path`, and every public check of it that fails names
    `cell` (at least one fails)."""
    report, _ = grade_json(path)
    graded = next(p for p in report["parts"] if p["grade_id"] == f"test_{part}")
    assert graded["score"] < graded["max_score"], (graded, report["total"])
    failed = [message for passed, message in notebook_checks.run_part(part, path).values() if not passed]
    assert failed and all(cell in message for message in failed), (graded["score"], failed)


def test_a_given_cell_edited_to_hold_what_an_answer_needs_does_not_pass_every_public_check(tmp_path):
    """red-c24 X33-c24-2: `import math` added to the given cell imports (its editable flag is only metadata; VS Code
    or a text editor ignores it), and Linear.forward using math. The public checks run the edited given cell as
    Jupyter does, and put the "you edited the given cell imports" note only in front of a failure: `pytest` in the
    student's folder reports every check passed (36 passed) and says nothing; the grade runs the released copy of
    imports, so forward raises NameError (13.55/18: test_forward 0/2, test_lesson_numbers 0.55/3). A check of
    forward must fail (or say the grade runs the released imports) where the grade fails it."""
    imports = next(c.source for c in release_notebook().cells if c.metadata.get("nbgrader", {}).get("grade_id")
                   == "imports")
    linear = next(c.source for c in solution_notebook().cells if c.metadata.get("nbgrader", {}).get("grade_id")
                  == "linear")
    uses_math = linear.replace("x @ self.weight.T + self.bias", "x @ self.weight.T + self.bias * math.cos(0.0)")
    assert uses_math != linear
    path = write_notebook(_student_copy({"imports": "import math\n\n" + imports, "linear": uses_math}),
                          tmp_path / NOTEBOOK)
    _public_checks_fail_where_the_grade_does(path, "forward", "imports")


def test_a_cell_the_grade_stops_at_its_3_s_does_not_pass_every_public_check(tmp_path):
    """red-c24 X33-c24-3: cell sgd that first spends 4 s of CPU (a student's own sanity run at its top), then defines
    SGD as the reference does. The grade gives each cell of loading 3 s of CPU (GraderSettings.seconds) and stops it
    there: "cell sgd did not finish within 3 s of CPU time (an infinite loop?)", zero_grad, step and lesson_numbers
    0 (10/18). The public checks give loading the whole notebook LOAD_SECONDS (10 s) of wall-clock time, so every
    check passes (36 passed), in Jupyter's test cells too (their kernel ran the cell long ago)."""
    sgd = next(c.source for c in solution_notebook().cells if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    busy = "import time\n\nstarted = time.process_time()\nwhile time.process_time() - started < 4:\n    pass\n\n"
    path = write_notebook(_student_copy({"sgd": busy + sgd}), tmp_path / NOTEBOOK)
    _public_checks_fail_where_the_grade_does(path, "step", "cell sgd")


def test_a_capture_cell_run_again_by_a_spawned_child_is_not_named_cell_in(tmp_path, monkeypatch):
    """red-c24 X33-c24-4: cell linear under `%%capture` (to hide its output), with forward leaving out the bias, in
    Jupyter where the checks' child is spawned (macOS, Windows: forced here). The child runs the kernel's cells again,
    named "In[n]"; %%capture runs its body through run_cell, which CellCompiler names "<cell In, by run_cell>"
    (checks_shell.CELL_FILE reads `\\w+`, so the "[n]" is lost), and facts.defined_in reads that as a cell "In". Every
    failing check of test_forward and test_lesson_numbers then begins "the Linear in use is the one cell In defines
    again, which replaces cell linear's: remove that copy from cell In": a cell the notebook does not have, and
    advice to remove the student's only Linear. pytest (the saved notebook) names no copy, as the grade."""
    monkeypatch.setenv("NOTEBOOK_CHECKS_START", "spawn")
    no_bias = apply(solution_notebook(), [Mutation("linear", "forward", "return x @ self.weight.T")])
    cell = _cell(no_bias.cells, "linear")
    cell.source = "%%capture\n" + cell.source
    cells = _run_in_jupyter(no_bias, tmp_path / "nb", demos=False)
    forward = _text(_cell(cells, "test_forward"))
    assert "FAIL test_computes_x_times_weight_transposed_plus_bias" in forward, forward
    assert "cell In" not in forward, forward


def test_the_public_checks_take_the_grades_cpu_limit_and_schema_words(tmp_path):
    """fix-public: the released runner stops a cell at the grade's c.GraderSettings.seconds (the student's folder
    holds no copy of the course's config, so this keeps the two equal: X33-c24-3), and cells.schema_reason words a
    notebook nbformat's schema refuses as the grade's intake does (X33-c24-1)."""
    import cells
    import runner

    from autograder.intake import validate
    from autograder.settings import GraderSettings, load_config

    assert runner.CHECK_SECONDS == notebook_checks.CHECK_SECONDS == GraderSettings(config=load_config(ROOT)).seconds
    notebook = _student_copy({})
    notebook.cells[19].metadata["tags"] = "mine"
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    assert cells.schema_reason(path) == validate.validate_notebook(path) is not None
