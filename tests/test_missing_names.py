"""A name the checks did not find is explained by the cell that defines it in the released notebook, whichever
cell failed first as the notebook loaded (autograder/checks/suites.py, Runner.explain; where each name comes from:
autograder/sandbox/program.py, defining_cells). The catalogue holds the same rule on graded notebooks
(tests/catalogue_bugs.py: linear-renamed, module-renamed, step-name-error-and-a-failing-cell).
"""
from __future__ import annotations

import pytest

from autograder.checks.suites import BLANK_HERE, Runner
from autograder.sandbox import NOT_WRITTEN, Cell, Outcome
from autograder.sandbox.program import defining_cells
from autograder.submission import Submission
from conftest import ASSIGNMENT

DEFINED_BY = defining_cells(ASSIGNMENT.source, ASSIGNMENT.release)
SCRATCH = "cell module: raised NameError: name 'layer' is not defined (line 25)"  # a failure of its own, first
DENSE = ("linear", "class Dense(Module):\n    pass\n")


def explain(reason: str, load_errors: list[str], cells=(DENSE,), borrowed: frozenset[str] = frozenset(),
            own_copies: dict[str, str] | None = None) -> str:
    runner = Runner(None, [Cell(*cell) for cell in cells], Submission("ada/nb"),  # type: ignore[arg-type]  # never run
                    borrowed=borrowed, defined_by=DEFINED_BY, own_copies=own_copies)
    return runner.explain(Outcome(False, reason=reason, load_errors=load_errors))


def test_each_name_comes_from_its_released_cell_and_no_name_only_the_answer_key_binds_is_told():
    assert {name: DEFINED_BY.get(name) for name in ("Linear", "Sequential", "SGD", "count_64_32_10", "np")} == {
        "Linear": "linear", "Sequential": "relu_sequential", "SGD": "sgd", "count_64_32_10": "exercise_count",
        "np": "imports"}
    assert "w1" not in DEFINED_BY  # a step of the reference's Exercise 2, which its released cell does not name
    assert "lr" not in DEFINED_BY  # a demonstration's (the checks run none)


def test_a_cell_that_loaded_without_the_name_is_the_cause_not_the_first_cell_that_failed():
    assert explain("raised KeyError: 'Linear'", [SCRATCH]) == (
        "raised KeyError: 'Linear' (because cell linear defines no Linear)")


def test_the_defining_cell_that_failed_is_followed_to_the_name_it_did_not_find():
    errors = [SCRATCH, "cell linear: raised NameError: name 'Module' is not defined (line 1)",
              "cell relu_sequential: raised NameError: name 'Module' is not defined (line 1)"]
    module = ("module", "class Layer:\n    pass\n")
    assert explain("raised KeyError: 'Sequential'", errors[1:], [module]) == (
        "raised KeyError: 'Sequential' (because cell module defines no Module)")
    failed_first = ("module", "print(layer.parameters())\n\nclass Module:\n    pass\n")
    assert explain("raised KeyError: 'Linear'", errors[:2], [failed_first]) == (
        f"raised KeyError: 'Linear' (because {SCRATCH})")  # the module cell failed before it defined Module


def test_a_name_no_released_cell_defines_is_the_raising_codes_alone():
    reason = "SGD.step raised NameError: name 'lr' is not defined (line 29 of its cell)"
    assert explain(reason, [SCRATCH]) == reason
    assert explain("raised KeyError: 'w1'", [SCRATCH]) == "raised KeyError: 'w1'"


def test_a_stub_borrowed_from_the_release_is_never_the_cause():
    stub_error = "cell exercise_count: raised NotImplementedError (line 2)"
    assert explain("raised KeyError: 'count_64_32_10'", [stub_error], borrowed=frozenset({"exercise_count"})) == (
        "raised KeyError: 'count_64_32_10'")
    assert explain("raised KeyError: 'count_64_32_10'", [stub_error]) == (
        f"raised KeyError: 'count_64_32_10' (because {stub_error})")  # the student's own cell


def test_a_cell_that_binds_the_name_yet_lost_it_is_named_by_no_guess():
    assert explain("raised KeyError: 'Linear'", [SCRATCH], [("linear", "if False:\n    class Linear: pass")]) == (
        "raised KeyError: 'Linear'")


def test_a_name_of_the_students_own_in_a_cell_the_part_took_blank_names_that_cell():
    """A helper the student wrote below Module and called from zero_grad: the zero_grad part runs the released
    module cell, so the name is not found; the message names the student's cell that defines it as blank in this
    part (Grader.settle grades the part again with it once it is sound). Not for a name no cell of theirs binds."""
    reason = "SGD.zero_grad raised NameError: name 'zeros_for' is not defined (line 19 of its cell)"
    own = {"module": "class Module:\n    pass\n\n\ndef zeros_for(p):\n    return p\n"}
    assert explain(reason, [], [("sgd", "")], frozenset({"module"}), own) == (
        f"{reason} (your cell module defines zeros_for, and it {BLANK_HERE}, and not all of cell module's do)")
    assert explain(reason.replace("zeros_for", "zeros_of"), [], [("sgd", "")], frozenset({"module"}), own) == (
        reason.replace("zeros_for", "zeros_of"))
    local = {"module": "class Module:\n    def parameters(self):\n        zeros_for = set()\n"}  # a method's own
    assert explain(reason, [], [("sgd", "")], frozenset({"module"}), local) == reason


def test_a_name_the_students_cell_may_bind_as_it_runs_names_that_cell_as_blank():
    """red pass 21 F2: a helper the module cell binds through get_ipython().push() (of a dict it builds as it runs),
    which Jupyter runs as any binding, and zero_grad calls: no line of the cell binds zeros_for, so the message named
    no cell and the sound cell module was never lent (16/18). A copy that may bind names as it runs is named, and the
    lent run shows what it bound (Grader.settle keeps that grading only when it passes as many checks)."""
    reason = "SGD.zero_grad raised NameError: name 'zeros_for' is not defined (line 19 of its cell)"
    pushed = {"module": "class Module:\n    pass\n\n\ndef _made():\n    return {'zeros_for': lambda p: p}\n\n\n"
                        "get_ipython().push(_made())\n"}
    assert explain(reason, [], [("sgd", "")], frozenset({"module"}), pushed) == (
        f"{reason} (your cell module may bind zeros_for as it runs, and it {BLANK_HERE}, and not all of cell module's do)")
    for plain in ("class Module:\n    def parameters(self):\n        return list(vars(self).values())\n",
                  "if __name__ == '__main__':\n    executed = globals\n"):
        assert explain(reason, [], [("sgd", "")], frozenset({"module"}), {"module": plain}) == reason


def test_a_stub_the_part_took_blank_is_named_with_its_cell_whose_parts_do_not_all_pass():
    """Exercise 2 replayed with the student's classes reaches the blank SGD.zero_grad first; the part of cell sgd
    that fails may be another (test_step), so the message names the cell, not the stub's own part."""
    reason = f"SGD.zero_grad {NOT_WRITTEN}"
    assert explain(reason, [], [("exercise_second_step", "")], frozenset({"sgd"})) == (
        f"SGD.zero_grad {BLANK_HERE}, and not all of cell sgd's do")


def test_a_reason_that_repeats_a_stubs_name_searches_the_students_cell_for_it_once(monkeypatch):
    """The student's cell is searched (suites._binds) once per name, not once per time a reason or load error names
    it: a failed check's one-line reason repeats "Linear is not written yet" six times, its load error three, over a
    cell of 2 MB, for every failed check of the part (red-p2 pass 16, #2: 15 s of the grader's own CPU time against
    the notebook's 0.3 s)."""
    from autograder.checks import suites

    searched = []
    binds = suites._binds
    monkeypatch.setattr(suites, "_binds", lambda text, name: searched.append(name) or binds(text, name))
    phrase = f"Linear {NOT_WRITTEN} "
    runner = Runner(None, [Cell("sgd", "class SGD:\n    pass\n" + " " * 1000)], Submission("x.ipynb"),
                    fresh=False, borrowed=frozenset({"linear"}), one_cell=True, defined_by={"Linear": "linear"})
    outcome = Outcome(False, reason=f"SGD.step raised ValueError: {phrase * 6}",
                      load_errors=[f"cell sgd: raised ValueError: {phrase * 3}"])
    for _ in range(20):  # twenty failed checks of the part
        runner.explain(outcome)
    assert searched.count("Linear") <= 1


def test_a_stub_is_blank_in_the_part_unless_a_cell_run_after_its_own_binds_the_name_again():
    """The part runs the notebook's cells in order: a draft of no_grad in cell sgd, above the released stub's cell,
    is replaced by the stub, which is what step() under `with no_grad():` called (red-s2 pass 16, #0); a cell the
    student added below it binds the name last, so the stub is not what the part called."""
    reason = f"no_grad {NOT_WRITTEN}"
    draft = ("sgd", "@contextlib.contextmanager\ndef no_grad():\n    yield\n\n\nclass SGD:\n    pass\n")
    stub = ("no_grad", "def no_grad():\n    raise NotImplementedError()\n")
    assert explain(reason, [], [draft, stub], frozenset({"no_grad"})) == (
        f"no_grad {BLANK_HERE}, and not all of cell no_grad's do")
    assert explain(reason, [], [stub, ("40", draft[1])], frozenset({"no_grad"})) == reason
    local = ("40", "def recorded(model, x, quiet=True):\n    if not quiet:\n        no_grad = contextlib.nullcontext\n"
                   "    with no_grad():\n        return model(x)\n")  # a local of a function binds no notebook name
    assert explain(reason, [], [stub, local], frozenset({"no_grad"})) == (
        f"no_grad {BLANK_HERE}, and not all of cell no_grad's do")


def test_an_attribute_the_students_cell_the_part_took_blank_gives_names_that_cell():
    """red-b12 2 (pass 22): a method the student's cell module adds to Module (Linear.forward calls self._affine), a
    class attribute of SGD that no_grad reads, an attribute Module.__init__ sets: the part that takes that cell blank
    reaches an object without it (AttributeError), and the message names the student's cell that gives it as blank in
    this part (Grader.settle lends it once sound). Not an attribute no cell of theirs gives (a typo of the part's own)."""
    reason = "Linear.forward raised AttributeError: 'Linear' object has no attribute '_affine' (line 19 of its cell)"
    own = {"module": "class Module:\n    def _affine(self, x, w, b):\n        return x @ w.T + b\n"}
    assert explain(reason, [], [("linear", "")], frozenset({"module"}), own) == (
        f"{reason} (your cell module defines _affine, and it {BLANK_HERE}, and not all of cell module's do)")
    assert explain(reason.replace("_affine", "_afine"), [], [("linear", "")], frozenset({"module"}), own) == (
        reason.replace("_affine", "_afine"))
    typed = "no_grad raised AttributeError: type object 'SGD' has no attribute 'enabled' (line 4 of its cell)"
    for sgd in ("class SGD:\n    enabled = True\n", "class SGD:\n    def __init__(self):\n        SGD.enabled = True\n"):
        assert explain(typed, [], [("no_grad", "")], frozenset({"sgd"}), {"sgd": sgd}).endswith(
            f"(your cell sgd defines enabled, and it {BLANK_HERE}, and not all of cell sgd's do)")


def test_a_call_of_a_stub_the_part_took_blank_that_raised_a_type_error_names_its_cell():
    """red-b12 2c (pass 22): the student's Linear takes a default rng, and Exercise 1 relies on it; the part runs the
    released Linear, whose signature is the release's: the TypeError names cell linear as blank in this part. Not a
    call of a class of the part's own cell, nor of one the part took from the student."""
    error = ("cell exercise_count: raised TypeError: Linear.__init__() missing 1 required positional argument: 'rng' "
             "(line 1)")
    cells = [("linear", "class Linear:\n    pass\n"), ("exercise_count", "")]
    assert explain("raised KeyError: 'count_64_32_10'", [error], cells, frozenset({"linear"})) == (
        f"raised KeyError: 'count_64_32_10' (because {error} (Linear {BLANK_HERE}, and not all of cell linear's do))")
    assert explain("raised KeyError: 'count_64_32_10'", [error], cells) == (
        f"raised KeyError: 'count_64_32_10' (because {error})")


@pytest.mark.parametrize("helper", [
    "if hasattr(np, 'zeros_like'):\n    _zeros = np.zeros_like\n",
    "try:\n    _zeros = np.zeros_like\nexcept AttributeError:\n    _zeros = None\n",
    "for _zeros in (np.zeros_like,):\n    pass\n",
    "with contextlib.nullcontext(np.zeros_like) as _zeros:\n    pass\n",
    "print((_zeros := np.zeros_like).__name__)\n",
    "def _setup():\n    global _zeros\n    _zeros = np.zeros_like\n\n\n_setup()\n",
    "from helpers import *\n",
    "from numpy import (\n    zeros_like as _zeros,\n)\n",
], ids=["red-b13-1-if", "red-b13-1-try", "red-b13-1-for-target", "red-b13-1-with-as", "red-b13-1-walrus",
        "red-b13-1-global-in-a-function", "red-b13-1-star-import",
        "red-b13-1-import-in-brackets-over-lines"])
def test_a_helper_a_borrowed_cell_binds_in_a_compound_statement_at_the_top_level_is_named_blank(helper):
    """red-b13 1 (pass 23): a name the student's own copy of a borrowed cell binds in the notebook's namespace, in an
    if or try block at the top level or as a for, with or walrus target, is that cell's (Jupyter binds it as it binds
    `_zeros = ...`): the reason must name the cell blank, so the sound cell is lent (tests/test_lend.py grades it)."""
    reason = "SGD.zero_grad raised NameError: name '_zeros' is not defined (line 19 of its cell)"
    told = explain(reason, [], cells=[("module", "class Module:\n    pass\n"), ("sgd", "class SGD:\n    pass\n")],
                   borrowed=frozenset({"module"}), own_copies={"module": helper + "\n\nclass Module:\n    pass\n"})
    assert BLANK_HERE in told, told


def test_a_name_a_released_cell_below_imports_too_names_the_students_cell_that_imported_it():
    """red-b13 6 (pass 23): the student imports Iterator atop cell module, and the released cell no_grad (below SGD)
    imports it too: a NameError for it in a part that took cell module blank names the student's cell module (so
    the sound cell is lent), not only no_grad's stub, which binds it and so is no cause. The student's copy of the
    released cell that defines the name is not named: its stub runs in the part and binds the name itself."""
    reason = "SGD raised NameError: name 'Iterator' is not defined (line 7 of its cell)"
    own = {"module": "from collections.abc import Iterator\n\n\nclass Module:\n    pass\n",
           "no_grad": "import contextlib\nfrom collections.abc import Iterator\n"}
    cells = [("sgd", "class SGD:\n    pass\n"), ("no_grad", "from collections.abc import Iterator\n")]
    assert explain(reason, [], cells, frozenset({"module", "no_grad"}), own) == (
        f"{reason} (your cell module defines Iterator, and it {BLANK_HERE}, and not all of cell module's do)")
    assert explain(reason, [], cells, frozenset({"module", "no_grad"}), {"no_grad": own["no_grad"]}) == reason
    pushed = {"module": "get_ipython().push({'Iterator': None})\n"}  # a released name: why_undefined's, as before
    assert explain(reason, [], cells, frozenset({"module", "no_grad"}), pushed) == reason
