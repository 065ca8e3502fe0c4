"""Grader.settle: a part that reached a stub it took blank is graded again with the student's sound cells, and a
cell is sound once every part that grades it passed in full, lent or not; the pytest plugin grades as the grader.

A right step() under a right `with no_grad():` passes its parts only once no_grad is lent to them; the sgd cell is
then sound, and an exercise computed with the student's own SGD must be graded with it, never with the blank
stub (whose message would say the sgd cell's parts do not pass in full, when they do). Cells that each pass only with
the other lent (a cycle) are lent together, under pytest as in the grader.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from catalogue_bugs import BUGS, PARAMETERS, exercise_cell, module_cell, step, zero_grad
from nbformat.v4 import new_code_cell

from autograder.classroom.mutate import Mutation, apply
from conftest import ASSIGNMENT, FULL, ROOT, grade_json, scores, solution_notebook, write_notebook

pytestmark = pytest.mark.slow

STEP_UNDER_NO_GRAD = step("with no_grad():\n    for p in self.params:\n        p.data -= self.lr * p.grad")
# Exercise 2 by the student's own Linear and SGD.zero_grad(), stepping by hand (the cell comes before no_grad's,
# so it never calls step(): the notebook runs top to bottom).
SECOND_STEP_OWN_CLASSES = exercise_cell("exercise_second_step", """\
def second_step(zero_between):
    layer = Linear(2, 1, np.random.default_rng(0))
    layer.weight.data[...] = [[0.5, -1.0]]
    layer.bias.data[...] = [0.2]
    opt = SGD(layer.parameters(), lr=0.1)
    x = Tensor([[1.0, 2.0]])
    opt.zero_grad()
    for number in (1, 2):
        if number == 2 and zero_between:
            opt.zero_grad()
        ((layer(x) - 1.0) ** 2).sum().backward()
        for p in layer.parameters():
            p.data -= 0.1 * p.grad
    z = layer(x).data.item()
    return z, (z - 1.0) ** 2


z2_with_zero_grad, loss2_with_zero_grad = second_step(True)
z2_without_zero_grad, loss2_without_zero_grad = second_step(False)
""")

# A Linear.forward wrong the first time its cell loads in a session, right after (a count in the session's /tmp),
# and Exercise 1 counted through forward(): what pytest shows must be what the grader gave, part by part.
FORWARD_WRONG_FIRST = Mutation("linear", "Linear.forward", "", source="""\
import os as _os
_runs = int(open("/tmp/.runs").read()) if _os.path.exists("/tmp/.runs") else 0
open("/tmp/.runs", "w").write(str(_runs + 1))


class Linear(Module):
    def __init__(self, n_in: int, n_out: int, rng: np.random.Generator) -> None:
        bound = 1.0 / np.sqrt(n_in)
        self.weight = Parameter(rng.uniform(-bound, bound, size=(n_out, n_in)))
        self.bias = Parameter(rng.uniform(-bound, bound, size=(n_out,)))

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.weight.T + self.bias + (1.0 if _runs == 0 else 0.0)
""")
COUNT_THROUGH_FORWARD = exercise_cell("exercise_count", """\
_net = Sequential(Linear(64, 32, np.random.default_rng(0)), ReLU(), Linear(32, 10, np.random.default_rng(0)))
_net(Tensor(np.zeros((1, 64))))
count_64_32_10 = sum(p.data.size for p in _net.parameters())
""")


def test_a_cell_whose_parts_pass_once_lent_is_lent_in_turn(tmp_path):
    path = write_notebook(apply(solution_notebook(), [STEP_UNDER_NO_GRAD, SECOND_STEP_OWN_CLASSES]),
                          tmp_path / ASSIGNMENT.notebook_name)
    report, _ = grade_json(path)
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]]


def test_pytest_shows_each_part_as_the_grader_graded_it_in_one_session(tmp_path):
    path = write_notebook(apply(solution_notebook(), [FORWARD_WRONG_FIRST, COUNT_THROUGH_FORWARD]),
                          tmp_path / ASSIGNMENT.notebook_name)
    report, _ = grade_json(path)
    grader = {(p["grade_id"], t["name"]): t["passed"] for p in report["parts"] for t in p["tests"]}
    assert not all(grader.values()), "the notebook must lose checks in the grader for this test to say anything"
    assert checks_under_pytest(path) == grader


@pytest.mark.parametrize("entry", ["no-grad-reads-a-helper-of-cell-sgd", "step-under-no-grad-with-a-draft-in-cell-sgd"])
def test_pytest_lends_as_the_grader_cells_that_each_need_the_other_and_a_stub_a_draft_came_before(tmp_path, entry):
    """Catalogue entries the grader gives full marks (a cycle of two right cells, lent together; a draft of no_grad
    in the earlier cell sgd, which does not hide the blank stub): pytest passes every check too."""
    bug = next(bug for bug in BUGS if bug.id == entry)
    under_pytest = checks_under_pytest(write_notebook(apply(solution_notebook(), list(bug.mutations)),
                                                      tmp_path / ASSIGNMENT.notebook_name))
    assert len(under_pytest) > 100 and all(under_pytest.values()), [check for check, ok in under_pytest.items() if not ok]


def checks_under_pytest(path: Path) -> dict[tuple[str, str], bool]:
    """Whether each check passed under `pytest autograder/<assignment> --notebook PATH` (the plugin)."""
    checks = path.with_suffix(".checks.json")
    subprocess.run([sys.executable, "-m", "pytest", f"autograder/{ASSIGNMENT.name}", "--notebook", str(path), "-q",
                    "--checks-json", str(checks), "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, timeout=300)
    return {(c["part"], c["name"]): c["passed"] for c in json.loads(checks.read_text())["checks"]}


@pytest.mark.parametrize("pad", [lambda line: "    " + line, lambda line: (">>> " if line[:1].strip() else "... ") + line],
                         ids=["red-f8-indented", "red-f8-classic-prompts"])
def test_a_helper_in_a_cell_jupyter_dedents_or_unprompts_is_lent_as_in_a_plain_cell(tmp_path, pad):
    """red-f8 (pass 20): Jupyter runs cell module indented as a whole (IPython dedents it) or pasted with `>>>`/`...`
    prompts (IPython strips them), and so does the sandbox; zero_grad() calls zeros_for(), a helper below Module. The
    grader's reading of what the cell binds (read_as_python) saw no top-level zeros_for, so the sound cell module was
    never lent: 16/18, "NameError: name 'zeros_for' is not defined" (18/18 with the cell unindented)."""
    bug = next(bug for bug in BUGS if bug.id == "zero-grad-helper-in-module-cell")
    notebook = apply(solution_notebook(), list(bug.mutations))
    module = next(cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == "module")
    module.source = "\n".join(pad(line) if line.strip() else line for line in module.source.split("\n"))
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]]


def test_a_helper_a_cell_pushes_into_the_namespace_is_lent_as_in_a_plain_cell(tmp_path):
    """red pass 21 F2: cell module binds zeros_for through get_ipython().push() of a dict built as it runs, and
    zero_grad() calls it: Jupyter runs it whole; the grader's reading saw no line that binds zeros_for, so the sound
    cell module was never lent to the zero_grad part: 16/18, "NameError: name 'zeros_for' is not defined"."""
    notebook = apply(solution_notebook(), [
        module_cell(PARAMETERS, after="\n\ndef _made():\n    def zeros_for(p):\n        return np.zeros_like(p.data)\n"
                    "    return {'zeros_for': zeros_for}\n\n\nget_ipython().push(_made())\n"),
        zero_grad("for p in self.params:\n    p.grad = zeros_for(p)")])
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]]


def _cells(notebook):
    return {cell.metadata.get("nbgrader", {}).get("grade_id"): cell for cell in notebook.cells}


_MODULE_ZERO_GRAD = ("    def zero_grad(self) -> None:\n        for p in self.parameters():\n"
                     "            p.grad = np.zeros_like(p.data)\n\n")
# The same, with PyTorch's model.zero_grad() (a method the student's own cell module adds to Module) and no SGD.
_SECOND_STEP_MODEL_ZERO_GRAD = (SECOND_STEP_OWN_CLASSES.source.replace("    opt = SGD(layer.parameters(), lr=0.1)\n", "")
                                .replace("opt.zero_grad()", "layer.zero_grad()"))


@pytest.mark.parametrize("method, cell, old, new", [
    ("    def _affine(self, x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:\n        return x @ weight.T + bias\n\n",
     "linear", "return x @ self.weight.T + self.bias", "return self._affine(x, self.weight, self.bias)"),
    (_MODULE_ZERO_GRAD, "exercise_second_step", None, _SECOND_STEP_MODEL_ZERO_GRAD),
], ids=["red-b12-2-forward-calls-a-module-helper", "red-b12-2-exercise-calls-model-zero-grad"])
def test_a_method_the_students_cell_module_adds_to_module_is_lent_to_the_cells_that_call_it(tmp_path, method, cell,
                                                                                             old, new):
    """red-b12 2 (pass 22): Module gets a method in the student's cell module (its part passes in full): a helper that
    Linear.forward calls, or PyTorch's `model.zero_grad()` that Exercise 2 calls: right in Jupyter. The part that calls
    it takes cell module blank, so the call raises AttributeError ("'Linear' object has no attribute '_affine'"),
    which the lending never reads as a blank stub (only a NameError or a stub's "not written yet" is named blank:
    Runner.blank_named, own_name_named), so the sound cell is never lent: 16/18 (forward), 17/18 (Exercise 2)."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells["module"].source = cells["module"].source.replace("    def __call__(self, x: Tensor) -> Tensor:",
                                                            method + "    def __call__(self, x: Tensor) -> Tensor:")
    cells[cell].source = cells[cell].source.replace(old, new) if old else new
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]][:2]


@pytest.mark.parametrize("where, name, cell, old, new", [
    ("module", "from contextlib import contextmanager", "no_grad", "@contextlib.contextmanager", "@contextmanager"),
    ("linear", "from numpy import zeros_like", "sgd", "p.grad = np.zeros_like(p.data)", "p.grad = zeros_like(p.data)"),
    ("module", "import math, itertools", "sgd", "self.params = list(params)", "self.params = list(itertools.chain(params))"),
    ("module", "ZERO, ONE = 0.0, 1.0", "sgd", "p.grad = np.zeros_like(p.data)", "p.grad = np.full_like(p.data, ZERO)"),
], ids=["red-b12-3-contextmanager", "red-b12-3-zeros-like", "red-b12-3-second-import", "red-b12-3-unpacked"])
def test_a_name_a_from_import_in_another_students_cell_binds_is_lent(tmp_path, where, name, cell, old, new):
    """red-b12 3 (pass 22): the student's imports at the top of an earlier solution cell (`from contextlib import
    contextmanager` in cell module, used by no_grad's decorator; a constant unpacked at the top of cell module): right
    in Jupyter. The part takes that cell blank, and suites._binds (top_level) reads `import X`, `X = `, `def X`,
    `... as X` as binding X, never `from M import X`, `import M, X` or `A, X = ...`, so the NameError is not named blank
    and the sound cell is never lent: 15/18 (no_grad), 16/18 (zero_grad), 13/18 (SGD.__init__: SGD's parts)."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells[where].source = f"{name}\n\n\n" + cells[where].source
    assert old in cells[cell].source
    cells[cell].source = cells[cell].source.replace(old, new)
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]][:2]



_ZEROS = "_zeros = np.zeros_like"


@pytest.mark.parametrize("helper", [
    f"if hasattr(np, 'zeros_like'):\n    {_ZEROS}\n",
    f"try:\n    {_ZEROS}\nexcept AttributeError:  # a very old NumPy\n    _zeros = None\n",
    "for _zeros in (np.zeros_like,):\n    pass\n",
    "import contextlib\nwith contextlib.nullcontext(np.zeros_like) as _zeros:\n    pass\n",
    "print('helper:', (_zeros := np.zeros_like).__name__)\n",
    "def _setup() -> None:\n    global _zeros\n    _zeros = np.zeros_like\n\n\n_setup()\n",
    "from numpy import (\n    zeros_like as _zeros,\n)\n",
], ids=["red-b13-1-if", "red-b13-1-try", "red-b13-1-for-target", "red-b13-1-with-as", "red-b13-1-walrus",
        "red-b13-1-global-in-a-function", "red-b13-1-import-in-brackets-over-lines"])
def test_a_helper_another_students_cell_binds_at_the_top_level_in_a_compound_statement_is_lent(tmp_path, helper):
    """red-b13 1 (pass 23): the student's cell module binds a helper `_zeros` at the top level of the notebook's
    namespace, but inside an if or try block, or as a for, with or walrus target; zero_grad() (cell sgd) calls it:
    right in Jupyter (test_lesson_numbers, which runs the whole notebook, gives 3/3). suites._binds (top_level) reads
    only a line at column 0 that is an assignment, def, class or import, so the NameError is not named blank, cell
    module (sound) is never lent, and test_zero_grad gives 0/2: 16/18. The plain `_zeros = np.zeros_like` is lent
    (18/18), and so is any of these once the cell holds the word get_ipython in a comment (_binds_at_run_time)."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells["module"].source = f"{helper}\n\n" + cells["module"].source
    old = "p.grad = np.zeros_like(p.data)"
    assert old in cells["sgd"].source
    cells["sgd"].source = cells["sgd"].source.replace(old, "p.grad = _zeros(p.data)")
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]][:2]


def test_a_name_a_star_import_of_another_students_cell_binds_is_lent(tmp_path):
    """red-b13 1 (pass 23), the star import: cell module opens with `from numpy import *` and zero_grad() writes
    `zeros_like(p.data)`: right in Jupyter (test_lesson_numbers 3/3). `import *` is neither a statement _binds reads as
    binding zeros_like nor a word of _RUN_TIME_BINDING, so the NameError is not named blank: test_zero_grad 0/2, 16/18.
    (Run from a venv reached through a link, red-b13 5 fails this notebook's module cell as well.)"""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells["module"].source = "from numpy import *\n\n\n" + cells["module"].source
    old = "p.grad = np.zeros_like(p.data)"
    assert old in cells["sgd"].source
    cells["sgd"].source = cells["sgd"].source.replace(old, "p.grad = zeros_like(p.data)")
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]][:2]


@pytest.mark.parametrize("imported, old, new", [
    ("from collections.abc import Iterator", "    def zero_grad(self) -> None:\n",
     "    def __iter__(self) -> Iterator[Parameter]:\n        return iter(self.params)\n\n    def zero_grad(self) -> None:\n"),
    ("import contextlib", "    def zero_grad(self) -> None:\n",
     "    @contextlib.contextmanager\n    def frozen(self):\n        yield self\n\n    def zero_grad(self) -> None:\n"),
], ids=["red-b13-6-iterator", "red-b13-6-contextlib"])
def test_a_name_a_released_cell_below_imports_but_the_student_imported_above_is_lent(tmp_path, imported, old, new):
    """red-b13 6 (pass 23): the student imports `Iterator` (or `contextlib`) at the top of cell module and class SGD
    uses it as it is made (an annotation `-> Iterator[Parameter]`, a decorator `@contextlib.contextmanager`): right in
    Jupyter (test_lesson_numbers 3/3). test_zero_grad and test_step take cell module blank: "SGD raised NameError: name
    'Iterator' is not defined". The released cell no_grad (below) imports that name too, so it is in defining_cells,
    and Runner.own_name_named returns early for such a name: the student's cell module, which binds it at the top level
    (a plain import _binds reads), is never named blank nor lent: 0/2 and 0/3, 13/18."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells["module"].source = f"{imported}\n\n\n" + cells["module"].source
    assert old in cells["sgd"].source
    cells["sgd"].source = cells["sgd"].source.replace(old, new)
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]][:2]


@pytest.mark.parametrize("first", ["import math\n", "%matplotlib inline\n"],
                         ids=["red-b13-2-below-an-import", "red-b13-2-below-a-magic"])
def test_a_future_import_below_a_cells_first_statement_holds_for_the_cells_below_in_every_part(tmp_path, first):
    """red-b13 2 (pass 23): IPython compiles a cell statement by statement, so `from __future__ import annotations`
    after `import math` in cell module is no syntax error there, and its compiler keeps the flag for every cell
    below (cell_runner does the same): SGD's method annotated `-> SGD` is a string, right in Jupyter (test_lesson_numbers
    3/3). A part that takes cell module blank puts only the future imports the student's copy *opens with* above the
    stub (program._futures), so in test_zero_grad and test_step class SGD is made with the annotation evaluated:
    "NameError: name 'SGD' is not defined", 0/2 and 0/3: 13/18. With the import first in the cell the same code is 18/18."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells["module"].source = f"{first}from __future__ import annotations\n\n" + cells["module"].source
    old = "    def zero_grad(self) -> None:\n"
    assert old in cells["sgd"].source
    cells["sgd"].source = cells["sgd"].source.replace(
        old, "    def copy(self) -> SGD:\n        return SGD(self.params, self.lr)\n\n" + old)
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]][:2]


def test_a_name_error_of_the_graded_cell_is_not_blamed_on_an_unsound_cell_that_calls_globals(tmp_path):
    """red-b13 3 (pass 23): zero_grad() writes `zeros_like(p.data)` (no `np.`: the student's own slip), and cell module,
    whose parameters() lists a shared weight twice (its own part 2.5/3), prints `len(globals())` while it loads.
    _binds_at_run_time reads `globals(` as "may bind names as it runs", so test_zero_grad says "(your cell module may
    bind zeros_like as it runs, and it is blank in this part: ... not all of cell module's do)": the student is sent
    to cell module, which binds no zeros_like (test_lesson_numbers, the whole notebook, says the plain NameError), and
    never lent (not sound), so no lent run ever shows the cell binds nothing. The message must name the slip alone."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells["module"].source = 'print("names so far:", len(globals()))\n\n' + cells["module"].source.replace(
        "if id(p) not in seen:", "if True:")
    old = "p.grad = np.zeros_like(p.data)"
    assert old in cells["sgd"].source and "if True:" in cells["module"].source
    cells["sgd"].source = cells["sgd"].source.replace(old, "p.grad = zeros_like(p.data)")
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report)["test_zero_grad"] == 0
    zero_grad = next(part for part in report["parts"] if part["grade_id"] == "test_zero_grad")
    messages = [t["message"] for t in zero_grad["tests"] if not t["passed"]]
    assert all("name 'zeros_like' is not defined" in m and "cell module" not in m for m in messages), messages[:2]


def test_an_attribute_error_of_the_graded_cell_is_not_blamed_on_an_unsound_cell_that_sets_that_name_elsewhere(tmp_path):
    """red-b13 3b (pass 23): parameters() reads `item.params` for a sub-module (the student's slip: SGD's attribute
    name), and step() in cell sgd is wrong (its part 0.56/3). B12-2's _defines_attribute finds `self.params = ` in the
    student's cell sgd, an attribute of SGD objects, and test_parameters says "'Module' object has no attribute
    'params' (your cell sgd defines params, and it is blank in this part: ... not all of cell sgd's do)": the student is
    sent to cell sgd, which gives no Module anything, and since cell sgd is not sound no lent run ever shows otherwise
    (with a right step() the cell is lent and the message is Python's alone). The message must name the slip alone."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    for cell, old, new in (("module", "candidates = item.parameters()", "candidates = item.params"),
                           ("sgd", "p.data -= self.lr * p.grad", "p.data += self.lr * p.grad")):
        assert old in cells[cell].source
        cells[cell].source = cells[cell].source.replace(old, new)
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report)["test_parameters"] < FULL["test_parameters"]
    parameters = next(part for part in report["parts"] if part["grade_id"] == "test_parameters")
    messages = [t["message"] for t in parameters["tests"] if not t["passed"] and "params" in t["message"]]
    assert messages and all("cell sgd" not in m for m in messages), messages[:2]


def test_a_lent_cell_that_defines_the_graded_cells_class_again_grades_the_same_whether_lent_or_not(tmp_path):
    """red-b13 4 (pass 23): step() in cell sgd adds lr * grad (wrong: test_step, right below cell sgd, fails in
    Jupyter), and cell no_grad, right in its own part, ends with a second, right copy of class SGD. Plain, the part
    gives 0.56/3 (the part runs the no_grad stub, never the student's copy). Wrapped in `with no_grad():`, the same
    wrong update reaches the blank no_grad, the part lends cell no_grad (sound), and that cell's SGD replaces the graded
    cell's: test_step 3/3, 18/18. (The same right copy in a cell the student added below test_step is held
    too: red-a16 X25-a16-1.) One notebook's code, one grade: whether step() happens to call no_grad
    must not decide whether another solution cell's SGD is graded in its place."""
    graded = {}
    for under_no_grad in (False, True):
        notebook = solution_notebook()
        cells = _cells(notebook)
        right_sgd = cells["sgd"].source.replace("from collections.abc import Iterable\n", "")
        old = "            p.data -= self.lr * p.grad"
        assert old in cells["sgd"].source
        wrong = ("            with no_grad():\n                p.data += self.lr * p.grad" if under_no_grad
                 else "            p.data += self.lr * p.grad")
        cells["sgd"].source = cells["sgd"].source.replace(old, wrong)
        cells["no_grad"].source += "\n\n" + right_sgd
        report, _ = grade_json(write_notebook(notebook, tmp_path / str(under_no_grad) / ASSIGNMENT.notebook_name))
        graded[under_no_grad] = scores(report)["test_step"]
    assert graded[True] == graded[False], graded

@pytest.mark.parametrize("no_grad_cell", ["# no_grad is written above, with SGD (step() uses it)\n", None],
                         ids=["red-b12-4-emptied", "red-b12-4-deleted"])
def test_a_no_grad_the_graded_cell_defines_itself_is_not_replaced_by_the_release_stub(tmp_path, no_grad_cell):
    """red-b12 4 (pass 22): the student wrote no_grad at the top of cell sgd, where step() uses it under `with
    no_grad():`, and emptied (or deleted) cell no_grad: in Jupyter no_grad is the student's everywhere below, and every
    test cell prints PASS (test_lesson_numbers gives 3/3). test_step runs the release's cell no_grad after the student's
    cell sgd, so the blank stub replaces the no_grad of the very cell the part grades: test_step 0/3, "no_grad is blank
    in this part: a part runs your other cells only once their own parts pass in full" (12/18). Whatever the no_grad
    part gives a no_grad out of its cell, step() is right and its part must say so."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells["sgd"].source = cells["no_grad"].source + "\n\n" + cells["sgd"].source.replace(
        "        for p in self.params:\n            # In place on the array: the same object keeps living in the model "
        "and in this list.\n            p.data -= self.lr * p.grad",
        "        with no_grad():\n            for p in self.params:\n                p.data -= self.lr * p.grad")
    assert "with no_grad():" in cells["sgd"].source
    if no_grad_cell is None:
        notebook.cells.remove(cells["no_grad"])
    else:
        cells["no_grad"].source = no_grad_cell
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    step = next(part for part in report["parts"] if part["grade_id"] == "test_step")
    assert step["score"] == FULL["test_step"], [t["message"] for t in step["tests"] if not t["passed"]][:2]
    assert scores(report)["test_lesson_numbers"] == FULL["test_lesson_numbers"]  # the notebook as Jupyter runs it


def test_a_default_argument_the_students_cell_linear_gives_is_lent_to_the_exercise_that_relies_on_it(tmp_path):
    """red-b12 2c (pass 22): the student's cell linear gives Linear.__init__ a default `rng=None` (a fresh generator)
    and Exercise 1 counts `Sequential(Linear(64, 32), ReLU(), Linear(32, 10)).parameters()`: right in Jupyter. The
    exercise part takes cell linear blank, whose __init__ needs rng: TypeError ("Linear.__init__() missing 1 required
    positional argument: 'rng'"), never read as a blank stub, so the sound cell is never lent: 17/18."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    signature = "def __init__(self, n_in: int, n_out: int, rng: np.random.Generator) -> None:"
    assert signature in cells["linear"].source
    cells["linear"].source = cells["linear"].source.replace(
        signature, "def __init__(self, n_in: int, n_out: int, rng: np.random.Generator | None = None) -> None:").replace(
        "        bound = 1.0 / np.sqrt(n_in)\n",
        "        rng = rng if rng is not None else np.random.default_rng()\n        bound = 1.0 / np.sqrt(n_in)\n", 1)
    cells["exercise_count"].source = ("count_64_32_10 = sum(p.data.size for p in "
                                      "Sequential(Linear(64, 32), ReLU(), Linear(32, 10)).parameters())\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]][:2]


def test_an_exercise_that_calls_the_students_right_linear_wrongly_costs_its_own_part_with_pythons_words(tmp_path):
    """red-b12 2c's other side: the student's Linear needs rng (as released) and Exercise 1 leaves it out. The part
    names cell linear blank (the released Linear's TypeError), lends it, sound, and the call fails the same way: the
    exercise's own part alone is lost, and its message is the student's TypeError, not a blank cell."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells["exercise_count"].source = ("count_64_32_10 = sum(p.data.size for p in "
                                      "Sequential(Linear(64, 32), ReLU(), Linear(32, 10)).parameters())\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == {**FULL, "test_exercise_count": 0}
    messages = [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]]
    assert all("missing 1 required positional argument: 'rng'" in m and "blank" not in m for m in messages), messages


_PATCHED_IN_NO_GRAD = """


def _step(self) -> None:
    for p in self.params:
        p.data -= self.lr * p.grad


def _zero_grad(self) -> None:
    for p in self.params:
        p.grad = np.zeros_like(p.data)


SGD.step, SGD.zero_grad = _step, _zero_grad
"""
# The same right methods in a class of cell no_grad's own, written into whatever dict holds an SGD (the names _holding
# keeps while the lent cell runs, put back after it).
_HELD_REWRITTEN_IN_NO_GRAD = _PATCHED_IN_NO_GRAD.replace("SGD.step, SGD.zero_grad = _step, _zero_grad\n", """\
class _RightSGD:
    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr

    step, zero_grad = _step, _zero_grad


for _held in [value for value in globals().values() if isinstance(value, dict) and "SGD" in value]:
    _held["SGD"] = _RightSGD
""")



def test_a_cell_the_student_added_below_the_graded_cells_test_does_not_patch_the_class_it_grades(tmp_path):
    """red-a16 X25-a16-1 (pass 25): X24-b15-2 without any lending. Cell sgd's step() moves up the gradient (`+=`); a
    cell the student added right below test_step sets a right step on SGD (`SGD.step = _right_step`). Jupyter runs
    test_step before that cell: 0/3, 15/18 (nbclient, allow_errors). An added cell runs in every part, where it stands,
    and the checks run after the whole program: _holding holds the graded cell's names and class only around a LENT
    cell, so the patch stands and test_step is 3/3, 18/18. The docs' rule ("as at the test cell right below the graded
    one in Jupyter": a right SGD copied below never stands in for a wrong one in cell sgd) holds for a lent cell only."""
    notebook = solution_notebook()
    cells = notebook.cells
    at = next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    cells[at].source = cells[at].source.replace("p.data -= self.lr * p.grad", "p.data += self.lr * p.grad")
    added = ("def _right_step(self):\n    for p in self.params:\n        p.data -= self.lr * p.grad\n\n\n"
             "SGD.step = _right_step\n")
    cells.insert(at + 3, new_code_cell(added))  # below test_zero_grad and test_step
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report)["test_step"] < FULL["test_step"] / 2, scores(report)


def test_a_fix_the_student_added_between_the_graded_cell_and_its_test_cell_counts_as_in_jupyter(tmp_path):
    """The boundary of X25-a16-1's rule is the part's test cell, not the graded cell (suites._held_below): the same
    `SGD.step = _right_step` in a cell added right below cell sgd, above test_zero_grad and test_step, runs before both
    test cells in Jupyter: 18/18 (nbclient, allow_errors), and so in the grade."""
    notebook = solution_notebook()
    cells = notebook.cells
    at = next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    cells[at].source = cells[at].source.replace("p.data -= self.lr * p.grad", "p.data += self.lr * p.grad")
    cells.insert(at + 1, new_code_cell("def _right_step(self):\n    for p in self.params:\n        p.data -= self.lr * "
                                       "p.grad\n\n\nSGD.step = _right_step\n"))
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report) == FULL, scores(report)



@pytest.mark.parametrize("patched", [False, True], ids=["plain", "host-patches-sgd"])
def test_a_cell_lent_as_the_host_of_a_merged_cell_is_held_as_a_lent_cell_is(tmp_path, patched):
    """red-a16 X25-a16-4 (pass 25): cell linear deleted and its code written in cell exercise_second_step (below
    test_step), which hosts it (suites.hosts); cell sgd's step() moves up the gradient under `with no_grad():`. The
    step part reaches the blank no_grad, so Grader.settle lends the sound cells, linear among them, and taken() brings
    its host along, but _holding holds only around the cells in `lent`, never a host: a host that sets a right step on
    SGD (`SGD.step = _right_step`) makes test_step 3/3 (0.56/3 without that line). Jupyter: test_step fails (0/3), and
    a lent cell no_grad doing the same is held (X24-b15-2)."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    cells["sgd"].source = cells["sgd"].source.replace(
        "        for p in self.params:\n            # In place", "        with no_grad():\n          for p in self.params:\n"
        "            # In place").replace("p.data -= self.lr * p.grad", "  p.data += self.lr * p.grad")
    patch = "\n\ndef _right_step(self):\n    for p in self.params:\n        p.data -= self.lr * p.grad\n\n\nSGD.step = _right_step\n"
    cells["exercise_second_step"].source = (cells["linear"].source + (patch if patched else "")
                                            + "\n\nraise NotImplementedError()\n")
    notebook.cells.remove(cells["linear"])
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report)["test_step"] < FULL["test_step"] / 2, scores(report)


@pytest.mark.parametrize("patch", [_PATCHED_IN_NO_GRAD, _HELD_REWRITTEN_IN_NO_GRAD],
                         ids=["methods-patched", "held-names-rewritten"])
def test_a_lent_cell_that_patches_the_graded_cells_class_grades_the_same_whether_lent_or_not(tmp_path, patch):
    """red-b15 X24-b15-2 (pass 24): the red-b13 4 rule (a lent cell gives the part nothing of what the graded cell's
    task names) holds for a name bound again (suites._holding puts SGD back), not for the class object it names. Cell
    sgd's zero_grad() and step() do nothing but open `with no_grad(): pass`; cell no_grad, right in its own part, ends
    with `SGD.step, SGD.zero_grad = _step, _zero_grad` (right ones). The empty methods reach the blank no_grad, the parts
    lend cell no_grad (sound), it runs below cell sgd and patches the very class the part grades: test_zero_grad 2/2,
    test_step 3/3, 18/18. In Jupyter both test cells (right below cell sgd) fail (13/18); the same empty methods without
    `with no_grad():` get 0.83/2 and 0.38/3 (a wrong step() with `+=`: 0.56/3 plain, 3/3 under no_grad). So too a
    class of cell no_grad's own written into the dict that holds SGD while the lent cell runs (held-names-rewritten):
    the names are put back from a dict the lent cell can reach. Whether an empty method opens no_grad() must not decide
    whether another solution cell's code is graded in its place."""
    graded = {}
    for under_no_grad in (False, True):
        notebook = solution_notebook()
        cells = _cells(notebook)
        body = "        with no_grad():\n            pass\n" if under_no_grad else "        pass\n"
        text = cells["sgd"].source
        cells["sgd"].source = (text[:text.index("    def zero_grad")] + f"    def zero_grad(self) -> None:\n{body}\n"
                               f"    def step(self) -> None:\n{body}")
        cells["no_grad"].source += patch
        report, _ = grade_json(write_notebook(notebook, tmp_path / str(under_no_grad) / ASSIGNMENT.notebook_name))
        graded[under_no_grad] = {part: scores(report)[part] for part in ("test_zero_grad", "test_step")}
    assert all(score < FULL[part] for part, score in graded[False].items()), graded  # the graded cell does nothing
    assert graded[True] == graded[False], graded


def test_a_stub_replaces_only_what_the_students_copy_binds_as_it_runs(tmp_path):
    """red-b15 X24-b15-3 (pass 24): red-b12 4's notebook (no_grad written atop cell sgd, step() under `with no_grad():`)
    whose cell no_grad holds a draft of no_grad below a first line that raises (NameError): in Jupyter the cell stops
    at line 1, its draft never binds no_grad, cell sgd's stays, and every test cell passes (18/18 in Jupyter Run All;
    test_lesson_numbers 3/3 here too). part_program reads what the student's copy binds from its text (_binds finds
    `def no_grad`), so the blank stub replaces cell sgd's no_grad in test_step: 0/3, "no_grad is blank in this part: a
    part runs your other cells only once their own parts pass in full, and not all of cell no_grad's do" (12/18 with
    test_no_grad's 0). step() is right and runs right in the notebook; its part must say so."""
    notebook = solution_notebook()
    cells = _cells(notebook)
    old = ("        for p in self.params:\n            # In place on the array: the same object keeps living in the model "
           "and in this list.\n            p.data -= self.lr * p.grad")
    assert old in cells["sgd"].source
    cells["sgd"].source = cells["no_grad"].source + "\n\n" + cells["sgd"].source.replace(
        old, "        with no_grad():\n            for p in self.params:\n                p.data -= self.lr * p.grad")
    cells["no_grad"].source = ("print(no_grad_helper)  # a draft below: no_grad is written in cell sgd\n\n\n"
                               + cells["no_grad"].source.replace("Tensor.recording = False", "Tensor.recording = True"))
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    assert scores(report)["test_lesson_numbers"] == FULL["test_lesson_numbers"]  # the notebook as Jupyter runs it
    step = next(part for part in report["parts"] if part["grade_id"] == "test_step")
    assert step["score"] == FULL["test_step"], [t["message"] for t in step["tests"] if not t["passed"]][:2]


def test_a_lent_cell_below_an_exercise_gives_it_none_of_its_answers(tmp_path):
    """red-b15 X24-b15-6 (pass 24): Exercise 1's cell assigns a wrong count (`count_64_32_10 = 0`) and cell no_grad,
    right in its own part, ends with the right one. Plain, test_exercise_count is 0/1, as in Jupyter (its test cell
    stands right below the exercise). Let the exercise's cell also call a layer first (`Linear(2, 1, rng)(x)`): the
    part reaches the blank Linear.forward, lends every sound cell (sound_cells: cells below the exercise too), and cell
    no_grad runs below the exercise. _holding keeps only the names the graded cell's release copy binds, and an
    exercise's (`raise NotImplementedError()` under comments) binds none: the lent cell's count replaces the student's,
    1/1. A wrong answer must not turn right because its cell happened to call forward()."""
    graded = {}
    for calls_forward in (False, True):
        notebook = solution_notebook()
        cells = _cells(notebook)
        cells["exercise_count"].source = ("_ = Linear(2, 1, np.random.default_rng(0))(Tensor(np.zeros((1, 2))))\n"
                                          if calls_forward else "") + "count_64_32_10 = 0\n"
        cells["no_grad"].source += "\n\ncount_64_32_10 = 32 * (64 + 1) + 10 * (32 + 1)\n"
        report, _ = grade_json(write_notebook(notebook, tmp_path / str(calls_forward) / ASSIGNMENT.notebook_name))
        graded[calls_forward] = scores(report)["test_exercise_count"]
    assert graded == {False: 0, True: 0}, graded
