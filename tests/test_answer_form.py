"""A probe's answer is checked against the form the probe writes before any check reads it (autograder/checks/
answer_form.py), and what a check's own code raises on an answer in that form is the grader's failure, never a grade.

* the forms: what each shape of the vocabulary takes and refuses, and every probe declares one;
* an answer in no form its probe writes (the notebook rewrote it in the sandbox) is the submission's failure of that
  part, named as such, and costs no other part;
* a check that raises on a well-formed answer (a grader bug, injected here as E12-2 was: a look-up of the type name of
  a container an OrderedDict parameters() kept) ends the notebook's grading as the grader's failure, with no score.
"""
from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.checks.answer_form import NOT_IN_FORM, answer_fault, form_of
from autograder.checks.parametrize import Check
from autograder.checks.suites import GraderBug, run_checks
from conftest import ASSIGNMENT, ROOT, course_copy, grade_json, solution_notebook, write_notebook

SUITES = ROOT / "autograder" / ASSIGNMENT.name


def test_each_shape_of_the_vocabulary_takes_what_a_probe_writes_and_refuses_the_rest():
    assert answer_fault([int, ...], [1, 2, 3]) == "" and answer_fault([int, ...], []) == ""
    assert answer_fault([int, ...], [1, True]) == "the answer[1] is True, not a whole number"
    assert answer_fault([str, int, ...], ["a"]) == answer_fault([int, int, ...], [1, 2, 3]) == ""  # a head, then any
    assert answer_fault([int, int, ...], []) == "the answer holds 0 items, not 1 or more"
    assert answer_fault([str, int, ...], ["a", "b"]) == "the answer[1] is a text, not a whole number"
    assert answer_fault([str, bool], ["a", False]) == "" and "holds 1 items, not 2" in answer_fault([str, bool], ["a"])
    assert answer_fault((float, None), None) == answer_fault((float, None), 2) == answer_fault(float, 2.5) == ""
    assert answer_fault(range(-1, 3), -1) == "" and "from -1 to 2" in answer_fault(range(-1, 3), 3)
    assert answer_fault(("class", "self"), "self") == "" and answer_fault(("class", "self"), "selfish")
    assert answer_fault(np.ndarray, [[1.0, float("nan")], [2, 3.0]]) == "" and answer_fault(np.ndarray, 1.5) == ""
    assert "not an array" in answer_fault(np.ndarray, [[1.0], [2.0, 3.0]])  # ragged: np.allclose would raise
    assert "not an array" in answer_fault(np.ndarray, [[1.0], ["2"]])
    form = {"z": [float] * 3, "stop": False}
    assert answer_fault(form, {"z": [1, 2, 3.5], "stop": False}) == ""
    assert answer_fault(form, {"z": [1, 2, 3.5]}) == "the answer has no 'stop'"
    assert answer_fault(form, {"z": [1, 2, 3.5], "stop": False, "x": 1}) == "the answer holds 1 keys the probe never writes"
    assert answer_fault(form, {"z": [1, 2], "stop": False}) == "the answer['z'] holds 2 items, not 3"
    said = "ALL CHECKS PASSED"  # what the notebook wrote is never quoted: only its kind
    assert said not in answer_fault({"a": int}, {"a": said}) and said not in answer_fault({"a": int}, {said: 1})


def test_every_probe_declares_the_form_of_its_answer():
    sys.path.insert(0, str(SUITES))
    try:
        import exercise_probes
        import probes
    finally:
        sys.path.remove(str(SUITES))
    found = [(name, value) for module in (probes, exercise_probes) for name, value in vars(module).items()
             if inspect.isfunction(value) and not name.startswith("_") and value.__module__ == module.__name__]
    assert len(found) > 15
    assert [name for name, probe in found if getattr(probe, "answers", None) is None] == []
    assert form_of(probes.parameter_pattern_repeated, {"seed": 0, "calls": "AAB"})["patterns"] == [[probes.INDEX, ...]] * 3
    with pytest.raises(TypeError, match="declares no form of its answer"):
        form_of(probes._plain, {})


class _Answers:
    """A runner whose probe answers nothing but `value`: what run_checks's checks read."""

    def __init__(self, value):
        self.value, self.missing, self.one_cell = value, "", False

    def run(self, probe, **kwargs):
        return self.value

    def fetch(self):
        return False

    def run_alone(self):
        return False


def test_a_check_that_raises_on_a_well_formed_answer_is_a_grader_bug_not_a_failed_check():
    def test_reads_a_key_no_probe_writes(student, reference):
        student.run(None)["none_grads"]

    def test_asserts(student, reference):
        assert student.run(None)["skipped"], "parameters() skipped a subclass"

    answers = _Answers({"skipped": False})
    [failed] = run_checks([Check("test_asserts", test_asserts, {})], answers, answers)
    assert not failed.passed and failed.message == "parameters() skipped a subclass"
    with pytest.raises(GraderBug, match=r"the hidden check test_reads_a_key_no_probe_writes raised KeyError: "
                                        r"'none_grads' \(a grader bug\)"):
        run_checks([Check("test_reads_a_key_no_probe_writes", test_reads_a_key_no_probe_writes, {})], answers, answers)


def test_a_reference_answer_a_check_finds_wrong_is_a_grader_bug_not_a_failed_check():
    """The checks' tests of the reference's own answers (reported.reference_holds) were assertions, written as the
    student's failed check: a wrong reference is the grader's failure."""
    from autograder.checks.suites import load_suites

    [suite] = [suite for suite in load_suites(ASSIGNMENT) if suite.grade_id == "test_exercise_count"]
    answers = _Answers({"count_64_32_10": {"defined": True, "number": 2410.0, "what": ""}})
    assert [result.passed for result in run_checks(suite.checks, answers, answers)] == [True]
    wrong = _Answers({"count_64_32_10": {"defined": True, "number": 2411.0, "what": ""}})
    with pytest.raises(GraderBug, match=r"the reference's count is wrong \(a grader bug\)"):
        run_checks(suite.checks, answers, wrong)


# The module cell of the reference, and a rewrite of what the loader sends back from inside the notebook's process
# (the probes themselves run from code compiled before the notebook's: sandbox/child.py): the answer of test_parameters'
# probe says "every one" where the probe writes the list of the Parameters found. Before answers were checked against
# their form, the check's own `-1 not in pattern` raised TypeError, written as "the check could not run".
def forged(test: str, change: str) -> str:
    """Notebook code that rewrites, from inside the notebook's process, the answer its part's probe sends back: where
    `test` (an expression of `value`, the answer) holds, `change` (a statement) runs before the write."""
    return f"""

import sys as _sys

_loader = _sys.modules.get("child")
if _loader is not None and not hasattr(_loader, "real_write"):
    _loader.real_write = _loader.write

    def _write(fd, message, real=_loader.real_write):
        value = getattr(message, "value", None)
        if {test}:
            {change}
        return real(fd, message)

    _loader.write = _write
"""


FORGED = forged('isinstance(value, dict) and "plain_tensors" in value', 'value["pattern"] = "every one"')


@pytest.mark.slow
def test_an_answer_the_notebook_forged_fails_its_part_with_the_reason_named(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    cell["source"] = "".join(cell["source"]) + FORGED
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    parts = {part["grade_id"]: part for part in report["parts"]}
    forged = [t["message"] for t in parts["test_parameters"]["tests"] if not t["passed"]]
    assert forged and all(m == f"{NOT_IN_FORM}: the answer['pattern'] is a text, not a list" for m in forged), forged
    assert {p: part["score"] for p, part in parts.items() if part["score"] != part["max_score"]} == {
        "test_parameters": parts["test_parameters"]["score"]}  # the rest is untouched


# E12-2's grader bug, injected again into a copy of the course: the check of parameters() looks the type name of a
# container parameters() kept up in a table of list, dict and set (causes.stale_list did, before it named OrderedDict).
E12_2 = ('def stale(found, wrong):\n',
         'def stale(found, wrong):\n    [{"list": 0, "dict": 1, "set": 2}[kind] for _, kind, _ in found["kept"]]\n')

@pytest.mark.slow
def test_a_grader_bug_on_a_well_formed_answer_gives_no_score_and_names_the_grader(tmp_path):
    from catalogue_bugs import BUGS

    from autograder.classroom.mutate import apply

    course = course_copy(tmp_path / "course")
    suite = course / "autograder" / ASSIGNMENT.name / "test_parameters.py"
    suite.write_text(suite.read_text().replace(*E12_2))
    [bug] = [b for b in BUGS if b.id == "parameters-seen-ordered-dict-on-instance"]
    notebook = write_notebook(apply(solution_notebook(), list(bug.mutations)), tmp_path / ASSIGNMENT.notebook_name)
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(notebook), "--json"], cwd=course,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 3 and done.stdout == "", done.stdout[-2000:]
    [line] = done.stderr.strip().splitlines()
    assert "the grader failed, not the notebook" in line and "KeyError: 'OrderedDict'" in line
    assert "(a grader bug)" in line and "no score was given" in line
    report, _ = grade_json(Path(ROOT / "solutions" / ASSIGNMENT.name / ASSIGNMENT.notebook_name), course)
    assert report["total"] == report["max"]  # the bug is reached by that answer alone: the reference is graded
    assert json.dumps(report).count("could not run") == 0


# red-f14 X23-f14-1: an honest wrong Linear.forward whose output is transposed, (n_out, batch), sends answers in
# the probe's form (ARRAY takes any shape); test_square_layer_multiplies_by_the_transposed_weight then calls
# np.allclose(got, x @ w + b) before any shape check, NumPy raises ValueError (shapes (4,3) (3,4)), and the whole
# notebook ends as "the grader failed" with no score (exit 3) instead of losing the forward part. Measured on main
# 28dcb74: rc 3, GraderBug ... test_square_layer_multiplies_by_the_transposed_weight[5] raised ValueError; the same
# for `return self.weight @ x.T` (that check again) and `return x` (test_bias_is_added_to_every_row: (4,3) vs (4,5)).
@pytest.mark.parametrize("body", ["return (x @ self.weight.T + self.bias).T", "return self.weight @ x.T", "return x"])
def test_a_wrong_shaped_forward_output_loses_the_forward_part_not_the_whole_grade(tmp_path, body):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    right = "return x @ self.weight.T + self.bias\n"
    assert right in "".join(cell["source"])
    cell["source"] = "".join(cell["source"]).replace(right, body + "\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))  # asserts rc 0
    parts = {part["grade_id"]: part for part in report["parts"]}
    assert parts["test_forward"]["score"] < parts["test_forward"]["max_score"]


# red-f14 X23-f14-1 (on purpose): the released notebook, untouched, grades 0/18; the same notebook with one line in
# Linear.forward, `return (x @ self.weight.T + self.bias).T`, ends as the grader's failure with no score (exit 3; in
# the class run auto_score None, not 0), so a student avoids a zero at will. Measured on main 28dcb74.
def test_a_blank_notebook_cannot_trade_its_zero_for_no_score_by_one_wrong_shape(tmp_path):
    from conftest import release_notebook

    notebook = release_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    stub = "        raise NotImplementedError()"
    assert "".join(cell["source"]).rstrip().endswith(stub.strip())
    cell["source"] = "".join(cell["source"]).rstrip()[: -len(stub)] + "        return (x @ self.weight.T + self.bias).T\n"
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))  # asserts rc 0
    forward = next(part for part in report["parts"] if part["grade_id"] == "test_forward")
    # a score, not the grader's failure: only what the transposed forward does right (it changes no weight) counts
    assert report["total"] <= forward["score"] < 0.5, report["total"]


# ------------------------------------------------------------------ red-a15 (pass 24): answers in the form that raise

def _release_with(grade_id: str, source: str, tmp_path: Path) -> Path:
    """The released notebook (every stub blank: 0/18) with one cell's text replaced."""
    from conftest import release_notebook

    notebook = release_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)
    cell["source"] = source
    return write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name)


# red-a15 X24-a15-1: an exercise answer that is a finite number of at least about 1.8e299 (z2_with_zero_grad = 1e300,
# what a hand computation that diverged can leave) is taken by answers.number, so exercise_answers sends
# {"defined": True, "number": 1e300, "what": ""}, in its form; test_second_step then calls the public
# answers.is_right(..., rel_tol=0.01), whose _near divides the tolerance window's edge by a step of 1e-9 and takes
# math.ceil(inf): OverflowError from the check's own code, a GraderBug, and the blank notebook (0/18) gets no score
# at all (exit 3) instead of 0. Measured on main e044460: rc 3, "test_second_step[with_zero_grad] raised
# OverflowError: cannot convert float infinity to integer (a grader bug)".
@pytest.mark.parametrize("value", ["1e300", "-1e300", "1.7976931348623157e308"])
def test_a_huge_finite_exercise_answer_fails_its_check_not_the_grader(tmp_path, value):
    source = (f"z2_with_zero_grad = {value}\nloss2_with_zero_grad = 0.5\nz2_without_zero_grad = 1.0\n"
              "loss2_without_zero_grad = 1.0\n")
    report, _ = grade_json(_release_with("exercise_second_step", source, tmp_path))  # asserts rc 0
    part = next(part for part in report["parts"] if part["grade_id"] == "test_exercise_second_step")
    assert part["score"] == 0 and report["total"] == 0


def test_the_exercises_rule_says_wrong_of_a_huge_finite_number_rather_than_raising():
    """The same rule, as the public check (release/test_exercise_second_step.py) and the grade read it."""
    sys.path.insert(0, str(ROOT / "release" / ASSIGNMENT.name))
    try:
        import answers
    finally:
        sys.path.remove(str(ROOT / "release" / ASSIGNMENT.name))
    assert answers.number(1e300) == 1e300  # taken as a number: the check goes on to is_right
    assert answers.is_right("z2_with_zero_grad", 1e300, rel_tol=0.01, abs_tol=1e-4) is False


# red-a15 X24-a15-2: an SGD.__init__ that keeps self.params = None (its own methods walk another list, or nothing)
# makes probes._made answer made_order None with made_one_shot False (the form MADE allows it: None is not only a
# generator's), and reported.init_cause hands it to causes.init_kept, whose sorted(None) raises TypeError in the
# check's own code. The blank notebook with that one cell (zero_grad and step that do nothing) gets no score (exit 3)
# instead of its 0/18. Measured on main e044460: rc 3, "test_changes_the_output_of_the_model_that_holds_the_parameters
# [2-16-16-2] raised TypeError: 'NoneType' object is not iterable (a grader bug)".
SGD_KEEPS_NONE = """class SGD:
    def __init__(self, params, lr):
        self.params = None
        self.lr = lr

    def zero_grad(self):
        pass

    def step(self):
        pass
"""


def test_an_sgd_whose_params_is_no_iterable_fails_its_parts_not_the_grader(tmp_path):
    report, _ = grade_json(_release_with("sgd", SGD_KEEPS_NONE, tmp_path))  # asserts rc 0
    assert report["total"] < 1


# red-a15 X24-a15-3: a list form written [X, ...] takes any length, but the checks index what the probe always writes
# for the call (a step's grads, two outputs, a first loss): an answer with one such list emptied or cut short is in
# the form and makes the check's own code raise IndexError or TypeError (step_move(*params[:2]) short of arguments),
# a GraderBug, no score. The notebook's own cell makes it so (the forged write of FORGED above, in the cell the part
# runs: test_a_forged_in_form_answer_fails_its_part_not_the_grader). Each case below measured on main e044460.
# Fixed by the forms: a list with one item a step (or a fixed count) has that length in its probe's form, so such an
# answer is refused before a check reads it (_Changed refuses it as the runner does); made_order None, which an honest
# SGD.__init__ keeping self.params = None sends, stays in the form and is named (causes.init_kept: no list kept).
def _cut(key: str, keep: int):
    return lambda value: {**value, key: value[key][:keep]}


CUT_SHORT = {  # probe: (its answer changed, the suite whose checks ask for it)
    "step_effect-grads_after": ("step_effect", _cut("grads_after", 0), "test_step"),
    "step_effect-data": ("step_effect", _cut("data", 0), "test_step"),
    "step_moves_model-outputs": ("step_moves_model", _cut("outputs", 1), "test_step"),
    "step_moves_model-params": ("step_moves_model", _cut("params", 1), "test_step"),
    "step_moves_model-graphs": ("step_moves_model", _cut("graphs", 0), "test_step"),
    "step_worked_example-grads": ("step_worked_example", _cut("grads", 0), "test_step"),
    "lesson_worked_example-grads": ("lesson_worked_example", _cut("grads", 0), "test_lesson_numbers"),
    "lesson_training-losses": ("lesson_training", _cut("losses", 0), "test_lesson_numbers"),
    "lesson_training-params": ("lesson_training", _cut("params", 1), "test_lesson_numbers"),
    "zero_grad_effect-made_order-none": ("zero_grad_effect", lambda value: {**value, "made_order": None}, "test_zero_grad"),
}


class _Changed:
    """A runner that answers from the reference's answers, the answers of `probe` changed by `change`; one in no form
    of the probe's is refused as the grader's runner refuses it (suites._in_form: a failed check, named)."""

    def __init__(self, answers: dict, probe: str = "", change=None) -> None:
        self.answers, self.probe, self.change, self.missing, self.one_cell = answers, probe, change, "", False
        self.changed: list = []

    def run(self, probe, **kwargs):
        from autograder.checks.suites import CheckFailed, CheckNotRun

        outcome = self.answers.get((probe.__name__, repr(sorted(kwargs.items()))))
        if outcome is None or not outcome.ok:
            raise CheckNotRun("no reference answer for this call")  # not this test's concern
        value = json.loads(json.dumps(outcome.value))  # a copy, as read from the wire
        if probe.__name__ == self.probe:
            value = self.change(value)
            self.changed.append(probe.__name__)
            fault = answer_fault(form_of(probe, kwargs), value)
            if fault:
                raise CheckFailed(f"{NOT_IN_FORM}: {fault}")
        return value

    def because(self):
        return ""

    def fetch(self):
        return False

    def run_alone(self):
        return False


@pytest.fixture(scope="module")
def reference_answers_once():
    from autograder.checks import suites
    from autograder.settings import GraderSettings, load_config

    return suites.reference_answers(ASSIGNMENT, GraderSettings(config=load_config(ROOT)))


def _fails_its_checks(probe: str, change, grade_id: str, answers: dict) -> None:
    """The suite `grade_id` run on the reference's answers, `probe`'s changed by `change`: some check fails (by an
    assertion, or the runner's refusal of an answer in no form), and none raises (run_checks's GraderBug)."""
    from autograder.checks.suites import load_suites

    [suite] = [suite for suite in load_suites(ASSIGNMENT) if suite.grade_id == grade_id]
    student, reference = _Changed(answers, probe, change), _Changed(answers)
    results = run_checks(suite.checks, student, reference)
    assert student.changed and not all(result.passed for result in results)


@pytest.mark.parametrize("case", list(CUT_SHORT))
def test_an_answer_in_the_form_cut_short_fails_its_checks_not_the_grader(case, reference_answers_once):
    _fails_its_checks(*CUT_SHORT[case], reference_answers_once)  # raises GraderBug on main


# fix-forms (pass 24), the same kind found with answers drawn from the forms near the reference's (small indices,
# permutations of them, empty texts): a probe stops short on a cause (SGD(...) kept objects that are not Parameters,
# parameters() listed some, the layers a lesson probe builds from are wrong, the notebook's zero_grad() left a grad
# None or a Tensor), and the checks go on only where the cause is named; an answer that says it stopped and shows no
# cause (made_others with every Parameter numbered, not_parameters empty, a "stop" of layers that show nothing wrong,
# the by-hand worked example stopped on a grad the probe's own zeros never leave) was in the form, and the check read
# on into keys the probe never wrote: KeyError or IndexError, a GraderBug. Each case below measured on main 03850de.
MADE_KEYS = ("made_order", "made_lr", "made_others", "made_one_shot", "made_kind")
HELD_KEYS = ("held", "total", "kind", "one_shot", *MADE_KEYS)
LAYERS = ("weight_shape", "kinds", "order", "attributes", "drawn", "forward_returned", "call_returned", "stop")


def _kept(keys, **changed):
    return lambda value: {**{key: value[key] for key in keys if key in value}, **changed}


def _stopped_on_tensor(value):
    return {**_kept(HELD_KEYS)(value), "z": value["z"][:1], "loss": value["loss"][:1], "params": value["params"][:1],
            "grads": [], "none_grads": False, "tensor_grads": True}


STOPPED_WITHOUT_CAUSE = {
    "zero_grad_effect-others-numbered": ("zero_grad_effect", _kept(MADE_KEYS, made_others=True), "test_zero_grad"),
    "step_worked_example-others-numbered": ("step_worked_example", _kept(HELD_KEYS, made_others=True, none_grads=False),
                                            "test_step"),
    "step_worked_example-tensor": ("step_worked_example", _stopped_on_tensor, "test_step"),
    "lesson_graph-layers": ("lesson_graph", _kept(LAYERS, stop=True), "test_lesson_numbers"),
    "lesson_worked_example-listed": ("lesson_worked_example", _kept(
        (*LAYERS, *HELD_KEYS, "given"), not_parameters=[], none_grads=False), "test_lesson_numbers"),
    "lesson_shared-listed": ("lesson_shared", _kept((*LAYERS, *MADE_KEYS), not_parameters=[], none_grads=False),
                             "test_lesson_numbers"),
}


@pytest.mark.parametrize("case", list(STOPPED_WITHOUT_CAUSE))
def test_an_answer_stopped_on_no_cause_fails_its_checks_not_the_grader(case, reference_answers_once):
    _fails_its_checks(*STOPPED_WITHOUT_CAUSE[case], reference_answers_once)  # raises GraderBug on main


# red-b20 X29-b20-1 (pass 29): step_worked_example's grads are [NUMBERS, NUMBERS] a step, so a grad None is in the form
# (None: not numbers). Without zeroing, test_step's worked example passes the first step's grads to causes.grads_changed
# as sent; with a grad None and the grad after the step a number, the shapes agree (np.shape(None) is ()) and
# np.allclose(after, None) raises TypeError in the check's own code: a GraderBug, no score, which the notebook forces
# from its own cell (the forged write above). step_move, called first, reads the grads through arrays() and the shapes
# that do not fit make it say nothing. Measured on main ed5efb9: "the hidden check test_worked_example_without_zeroing_
# adds_the_gradients_up_to_3_668 raised TypeError: unsupported operand type(s) for -: 'float' and 'NoneType'".
def _grads_none(value):
    return {**value, "grads": [[None, None], *value["grads"][1:]],
            "grads_after": [[1.0, 1.0], *value["grads_after"][1:]]}


NONE_IN_FORM = {
    "step_worked_example-grad-none": ("step_worked_example", _grads_none, "test_step"),
}


@pytest.mark.parametrize("case", list(NONE_IN_FORM))
def test_a_grad_none_in_the_form_fails_its_checks_not_the_grader(case, reference_answers_once):
    _fails_its_checks(*NONE_IN_FORM[case], reference_answers_once)  # raises GraderBug on main


# fix-nonegrad (pass 29): the suite names the grad None first (test_step.no_gradient); the shared helper itself reads
# a grad None as nothing to compare, not as shape () (np.shape(None)), so no other caller can make it raise TypeError.
def test_grads_changed_reads_a_grad_none_as_nothing_to_compare():
    import causes

    assert causes.grads_changed([None, None], [1.0, 1.0]) == ""  # TypeError on main
    assert causes.grads_changed([None, [1.0]], [[1.0], [2.0]]) == ""
    assert causes.grads_changed([1.0, [1.0]], [1.0, [2.0]]).startswith("step() changed p.grad")


@pytest.mark.parametrize("case", [case for case in CUT_SHORT if not case.endswith("-none")])
def test_a_list_the_checks_read_by_position_has_its_length_in_the_form(case, reference_answers_once):
    sys.path.insert(0, str(SUITES))
    try:
        import probes
    finally:
        sys.path.remove(str(SUITES))
    probe, change, _ = CUT_SHORT[case]
    calls = [(kwargs, outcome.value) for (name, kwargs), outcome in reference_answers_once.items()
             if name == probe and outcome.ok]
    assert calls
    for kwargs, value in calls:
        form = form_of(getattr(probes, probe), dict(ast.literal_eval(kwargs)))  # the key: repr(sorted(kwargs.items()))
        assert answer_fault(form, value) == "" and answer_fault(form, change(value)) != "", kwargs


FORGED_IN_FORM = forged('isinstance(value, dict) and "facts" in value and "held" in value and "data" in value',
                        'value["grads_after"] = []')  # step_effect's: still [[NUMBERS, ...], ...]


def test_a_forged_in_form_answer_fails_its_part_not_the_grader(tmp_path):
    """X24-a15-3 end to end: the reference with its step cell sending step_effect's grads_after empty. Measured on
    main e044460: rc 3, "test_leaves_the_gradients_alone raised IndexError: list index out of range (a grader bug)"."""
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sgd")
    cell["source"] = "".join(cell["source"]) + FORGED_IN_FORM
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))  # asserts rc 0
    parts = {part["grade_id"]: part for part in report["parts"]}
    assert parts["test_step"]["score"] < parts["test_step"]["max_score"]


# red-a15 X24-a15-5: the probes send every number through _plain / _array_or_none, np.array(values, dtype=float),
# which keeps the real part of a complex array and drops the rest with a ComplexWarning only: a Linear.forward whose
# output is x @ W.T + b + 5j, or a step() that leaves p.data - lr * grad + 5j, sends the right numbers in the form
# and gets full marks, though every value it computes is wrong. Measured on main e044460: 18/18 for each.
COMPLEX = {
    "forward": ("linear", "return x @ self.weight.T + self.bias\n",
                "out = x @ self.weight.T + self.bias\n        out.data = out.data + 5j\n        return out\n",
                "test_forward"),
    "step": ("sgd", "p.data -= self.lr * p.grad\n", "p.data = p.data - self.lr * p.grad + 5j\n", "test_step"),
}


def test_a_probe_refuses_an_imaginary_part_by_name_and_reads_a_zero_one_as_the_real_value():
    sys.path.insert(0, str(SUITES))
    try:
        import probes
    finally:
        sys.path.remove(str(SUITES))
    for value in (np.array([1.0, 2.0]) + 5j, [1 + 1e-300j], 2j, np.complex64(1 + 1j)):
        with pytest.raises(probes.ComplexNumbers, match="imaginary part"):
            probes._array_or_none(value)
        with pytest.raises(probes.ComplexNumbers):
            probes._float(np.sum(value))
    assert probes._plain(np.array([[1.5, -2.0]]) + 0j).tolist() == [[1.5, -2.0]] and probes._float(3 + 0j) == 3.0
    assert probes._array_or_none(["x"]) is None and probes._array_or_none([[1.0], [2.0, 3.0]]) is None  # no numbers


@pytest.mark.parametrize("case", list(COMPLEX))
def test_complex_values_are_not_graded_as_their_real_part(tmp_path, case):
    grade_id, right, wrong, part_id = COMPLEX[case]
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)
    assert right in "".join(cell["source"])
    cell["source"] = "".join(cell["source"]).replace(right, wrong)
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    part = next(part for part in report["parts"] if part["grade_id"] == part_id)
    assert part["score"] < part["max_score"], f"{case} + 5j: {part['score']}/{part['max_score']}"


# The forms tightened above (fix-forms, pass 24) must still take every answer an honest notebook's probes send, however
# unusual its code: red-a15 graded 62 such notebooks (a grad left None, complex zeros, a generator or a tuple kept, a
# list of .data given SGD(...), ...) and none was refused as "not in the form". These cover the alternatives changed:
# a zero_grad() leaving None (the stops on a None grad, a step that left one), parameters() listing arrays (the stops on
# not_parameters), and a notebook right in unusual ways (a tuple kept, a generator given, complex values with a zero
# imaginary part): graded in full.
HONEST = {
    "zero-grad-leaves-none": ({"sgd": ("p.grad = np.zeros_like(p.data)", "p.grad = None")}, False),
    "parameters-lists-arrays": ({"module": ("        return found\n", "        return [p.data for p in found]\n")}, False),
    "right-in-unusual-ways": ({"sgd": ("self.params = list(params)", "self.params = tuple(params)"),
                               "module": ("        return found\n", "        yield from found\n")}, True),
    "right-with-complex-zeros": ({"sgd": ("p.data -= self.lr * p.grad", "p.data = p.data - self.lr * p.grad + 0j")}, True),
}


@pytest.mark.parametrize("case", list(HONEST))
def test_an_honest_unusual_notebook_is_graded_never_refused_as_out_of_form(tmp_path, case):
    changes, full = HONEST[case]
    notebook = solution_notebook()
    for cell in notebook["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in changes:
            right, honest = changes[grade_id]
            assert right in "".join(cell["source"])
            cell["source"] = "".join(cell["source"]).replace(right, honest)
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))  # asserts rc 0
    messages = [test["message"] for part in report["parts"] for test in part["tests"] if not test["passed"]]
    assert not [message for message in messages if NOT_IN_FORM in message], messages
    assert (report["total"] == report["max"]) if full else messages
