"""red-a7 (pass 20): findings written as failing tests (REPORT ONLY: no fix on this branch).

Each test grades one notebook written the way a student could write it, through the instructor's route
(`python -m autograder grade PATH --json`, the code `make grade` and Gradescope run), and where it says so
through the student's public checks (notebook_checks.run_part, what `pytest` in the release folder runs)."""
from __future__ import annotations

import pytest
from test_hand_grades import cell

from conftest import NOTEBOOK, grade_json, scores, solution_notebook, write_notebook


def graded(tmp_path, sources: dict[str, str]) -> dict:
    """The grader's report of the reference with the cells named in `sources` rewritten."""
    notebook = solution_notebook()
    for grade_id, source in sources.items():
        cell(notebook, grade_id)["source"] = source
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    return report


def first_message(report: dict, grade_id: str) -> str:
    part = next(p for p in report["parts"] if p["grade_id"] == grade_id)
    return next(t["message"] for t in part["tests"] if not t["passed"])


def public(tmp_path, sources: dict[str, str], part: str) -> dict[str, tuple[bool, str]]:
    """The student's public checks of `part` on the same notebook, as `pytest -m part` runs them."""
    import sys

    from conftest import ROOT
    sys.path.insert(0, str(ROOT / "release" / "dl01_6_3"))
    import notebook_checks

    notebook = solution_notebook()
    for grade_id, source in sources.items():
        cell(notebook, grade_id)["source"] = source
    return notebook_checks.run_part(part, write_notebook(notebook, tmp_path / "public" / NOTEBOOK))


@pytest.mark.parametrize("source,grade_id", [
    ("count_64_32_10 = '2410'\n", "test_exercise_count"),
    ("import numpy as np\ncount_64_32_10 = np.array(2410)\n", "test_exercise_count"),
    ("z2_with_zero_grad = '0.908'\nloss2_with_zero_grad = '0.008464'\n"
     "z2_without_zero_grad = '3.668'\nloss2_without_zero_grad = '7.118'\n", "test_exercise_second_step"),
], ids=["count-as-text", "count-as-0d-array", "second-step-as-text"])
def test_an_answer_the_public_check_refuses_as_no_number_is_not_scored_right(tmp_path, source, grade_id):
    """The public check (the rules) says `count_64_32_10 is a str: assign a number` and fails; the grader's
    exercise_probes.exercise_answers takes float(value), which reads '2410' (and ' 2_410 ', a 0-d array, a
    Decimal), so the grade gives the exercise full marks: the routes disagree and the grade is the laxer."""
    exercise = grade_id[len("test_"):]
    assert not all(passed for passed, _ in public(tmp_path, {exercise: source}, exercise).values())
    report = graded(tmp_path, {exercise: source})
    assert scores(report)[grade_id] == 0, f"{grade_id}: text scored as the number (public check: FAIL)"


def test_a_loss_worked_out_wrongly_from_a_right_z_is_not_blamed_on_the_gradient(tmp_path):
    """z2_with_zero_grad = 0.908 is right; the loss is written as |z - y| (0.092), not (z - y)^2. The message
    says the gradient was wrong ("after zero_grad() the second step uses only its own gradient ..."): a cause
    the facts (a right z from that very step) rule out. It should name the loss, (z - y)^2 of the student's z."""
    source = ("z2_with_zero_grad = 0.908\nloss2_with_zero_grad = abs(0.908 - 1)\n"
              "z2_without_zero_grad = 3.668\nloss2_without_zero_grad = 2.668 ** 2\n")
    report = graded(tmp_path, {"exercise_second_step": source})
    assert scores(report)["test_exercise_second_step"] < 1
    message = first_message(report, "test_exercise_second_step")
    assert "loss2_with_zero_grad" in message
    assert "gradient" not in message, f"z is right, yet the message blames the gradient: {message}"


def test_gradients_sharing_one_array_are_not_called_old_gradients(tmp_path):
    """zero_grad() hands Parameters of one shape the same zeros array (a cache by shape): every grad is zero
    after it (causes.grads_left finds nothing left), then backward adds two Parameters' fresh gradients into
    one array. The message says "old gradients were added to it", which the facts just checked contradict;
    the cause is that two Parameters share one grad array (p.grad is q.grad)."""
    source = solution_notebook_cell("sgd").replace(
        "            p.grad = np.zeros_like(p.data)",
        "            p.grad = cache.setdefault(p.data.shape, np.zeros(p.data.shape))").replace(
        "        for p in self.params:\n            p.grad = cache",
        "        cache = {}\n        for p in self.params:\n            p.grad = cache")
    assert "cache = {}" in source
    report = graded(tmp_path, {"sgd": source})
    assert scores(report)["test_zero_grad"] < 2
    message = first_message(report, "test_zero_grad")
    assert "old gradients" not in message, f"no old gradient was left: {message}"


def solution_notebook_cell(grade_id: str) -> str:
    return "".join(cell(solution_notebook(), grade_id)["source"])


def test_a_fraction_answer_passes_the_public_check_it_passes_in_the_grade(tmp_path):
    """count_64_32_10 = Fraction(2410) is a numbers.Real equal to the answer: the grade gives full marks, but
    answers.is_right formats it with f"{value:.4g}", which Fraction supports only from Python 3.12, so on 3.9 to
    3.11 (the README's "Python 3.9 or newer") the public check fails with "raised TypeError: unsupported format
    string passed to Fraction.__format__", a message that names no code of the student's."""
    source = "from fractions import Fraction\ncount_64_32_10 = Fraction(2410)\n"
    assert scores(graded(tmp_path, {"exercise_count": source}))["test_exercise_count"] == 1
    results = public(tmp_path, {"exercise_count": source}, "exercise_count")
    assert all(passed for passed, _ in results.values()), results




def test_a_parameters_cached_across_calls_loses_the_fresh_list_rule(tmp_path):
    """`@functools.cache` on Module.parameters (a right walk otherwise) returns the same list object on every
    call: after `lin.weight = Parameter(...)` the next call still lists the old weight, and whatever a caller
    appends to the list comes back from the next call. The notebook's rule "a new list on every call: a list
    that outlives the call ... would keep what earlier calls collected" is broken, yet both the grade and the
    public check score the part in full (18/18): they call parameters() on unchanged models only."""
    source = "import functools\n\n\n" + solution_notebook_cell("module").replace(
        "    def parameters(self) -> list[Parameter]:", "    @functools.cache\n    def parameters(self) -> list[Parameter]:")
    assert "@functools.cache" in source
    report = graded(tmp_path, {"module": source})
    assert scores(report)["test_parameters"] < 3, "a list that outlives the call scored as right"


def test_a_module_answering_every_missing_attribute_keeps_the_lessons_graph(tmp_path):
    """Module.__getattr__ returning None for a missing attribute (dunder names still raise): the notebook's own
    cell demo_graph_size prints "nodes recorded: 18   under no_grad: 1" and every public check passes, but
    probes._linear_layers takes every layer with hasattr(layer, "weight") for a Linear, so the ReLUs join and the
    leaves shift: the grade takes 1.09 of test_lesson_numbers with "the 2-16-16-2 forward pass recorded no node
    for layers[2].weight, layers[2].bias: ... (not on their .data)", a cause the student's forward does not have."""
    source = solution_notebook_cell("module").replace("    def __call__", (
        "    def __getattr__(self, name):\n        if name.startswith('__'):\n            raise AttributeError(name)\n"
        "        return None\n\n    def __call__"))
    assert "__getattr__" in source
    report = graded(tmp_path, {"module": source})
    assert scores(report)["test_lesson_numbers"] == 3, first_message(report, "test_lesson_numbers")


def test_a_weight_kept_behind_a_property_passes_the_public_checks_it_passes_in_the_grade(tmp_path):
    """Linear with `weight` as a property over self._weight (a setter stores what the given, unchanged __init__
    assigns): layer.weight is the Parameter, parameters() finds it, every demo cell prints the lesson's numbers,
    and the grade is 18/18. The public checks fail 7 (parameters, lesson_numbers) with "Linear.__init__ keeps no
    Parameter self.weight (it keeps _weight: Parameter, bias: Parameter): keep the given __init__": causes.py
    reads vars(layer), and the __init__ it blames is the given one, word for word."""
    source = solution_notebook_cell("linear") + (
        "\n    @property\n    def weight(self) -> Parameter:\n        return self._weight\n\n"
        "    @weight.setter\n    def weight(self, value: Parameter) -> None:\n        self._weight = value\n")
    assert scores(graded(tmp_path, {"linear": source}))["test_parameters"] == 3
    results = public(tmp_path, {"linear": source}, "parameters")
    assert all(passed for passed, _ in results.values()), [m for passed, m in results.values() if not passed][0]


KINDS_ON_THE_CLASS = '''class Module:
    KINDS = [list, tuple]  # a constant: the containers searched (never written to)

    def parameters(self):
        found, seen = [], set()
        for value in VALUES:
            for item in (value if isinstance(value, tuple(self.KINDS)) else (value,)):
                ps = [item] if isinstance(item, Parameter) else item.parameters() if isinstance(item, Module) else []
                for p in ps:
                    if DEDUP:
                        seen.add(id(p))
                        found.append(p)
        return found

    def __call__(self, x):
        return self.forward(x)
'''


@pytest.mark.parametrize("values,dedup,cause", [
    ("reversed(list(vars(self).values()))", "id(p) not in seen", "order"),
    ("vars(self).values()", "True", "more than once"),
], ids=["reversed-order", "no-dedup"])
def test_a_constant_list_on_the_class_is_not_blamed_for_another_bug(tmp_path, values, dedup, cause):
    """Module keeps a constant `KINDS = [list, tuple]` on the class (types, never written to) and parameters()
    has one bug: the attributes walked in reverse, or no deduplication. The first message of the part (grade and
    public alike) says "Module.KINDS is a list kept on the class, one object for every call of parameters(): it
    outlives the call and keeps what earlier calls collected (ids of Parameters gone, ...); make it a local,
    KINDS = [] inside the call": causes.stale_list takes any list, set or dict on the class (facts.kept_outside)
    for a seen-list, without asking whether it holds ids or changed between calls. The true cause (the order, a
    repeat) is not named."""
    source = KINDS_ON_THE_CLASS.replace("VALUES", values).replace("DEDUP", dedup)
    report = graded(tmp_path, {"module": source})
    assert scores(report)["test_parameters"] < 3
    message = first_message(report, "test_parameters")
    assert "KINDS" not in message and cause in message, message


@pytest.mark.parametrize("top,signature,kinds", [
    ("KINDS = [list, tuple]\n\n\n", "self", "KINDS"),
    ("NAMES = {'weight': 0, 'bias': 1}\n\n\n", "self, names=NAMES", "(list, tuple)"),
    ("", "self, kinds=[list, tuple]", "kinds"),
], ids=["global-list", "default-dict-from-a-global", "default-list"])
def test_a_constant_container_parameters_reads_is_not_blamed_for_the_order(tmp_path, top, signature, kinds):
    """The same as above with the constant a global of the cell that parameters() reads, or a default argument
    (`kinds=[list, tuple]`, quoted back as "a default argument kinds=[]"): parameters() walks the attributes in
    reverse, and the message blames the constant ("KINDS is a list at the top of its cell (a global) ... make it a
    local, KINDS = [] inside the call") instead of the order."""
    source = top + KINDS_ON_THE_CLASS.replace("    KINDS = [list, tuple]  # a constant: the containers searched "
                                              "(never written to)\n\n", "").replace(
        "def parameters(self)", f"def parameters({signature})").replace("self.KINDS", kinds).replace(
        "VALUES", "reversed(list(vars(self).values()))").replace("DEDUP", "id(p) not in seen")
    report = graded(tmp_path, {"module": source})
    assert scores(report)["test_parameters"] < 3
    message = first_message(report, "test_parameters")
    assert "order" in message, message


def test_a_step_that_forgets_p_data_is_not_blamed_on_a_right_zero_grad(tmp_path):
    """step() writes `p.data = -self.lr * p.grad` (the p.data term left out; zero_grad() right, its part 2/2):
    the values after step() equal -lr * grad, which causes.step_move reads as "the Parameters were zero when
    step() ran: zero_grad() changed p.data (it must clear p.grad only)", in the grade's test_lesson_numbers and in
    three public step checks. zero_grad() changed nothing (its own checks, which look, pass); the fault is step()."""
    source = solution_notebook_cell("sgd").replace("p.data -= self.lr * p.grad", "p.data = -self.lr * p.grad")
    assert "p.data = -self.lr" in source
    report = graded(tmp_path, {"sgd": source})
    assert scores(report)["test_zero_grad"] == 2 and scores(report)["test_step"] < 3
    lesson = first_message(report, "test_lesson_numbers")
    assert "zero_grad() changed p.data" not in lesson, lesson
    failing = [m for passed, m in public(tmp_path, {"sgd": source}, "step").values() if not passed]
    assert not [m for m in failing if "zero_grad() changed p.data" in m], failing
