"""red-n10 (hostile pass 21): what a student's code scores and what it is told, found failing on main 9300f41.

Each notebook is the reference with one cell rewritten the way a student writes it. The grade runs them through
the hidden suites in one batch (as `make grade` grades a class); the public checks run by the student's own runner
(notebook_checks.run_part). Each test states what the kit must do; each fails on main at its assertion.
"""
from __future__ import annotations

import notebook_checks
import pytest

from autograder.classroom.mutate import Mutation, apply
from conftest import ASSIGNMENT, FULL, NOTEBOOK, ROOT, solution_notebook, write_notebook


def zero_grad(body: str) -> Mutation:
    return Mutation("sgd", "SGD.zero_grad", body)


SGD_CELL = next("".join(cell.source) for cell in solution_notebook().cells
                if cell.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
EXERCISE_NAN = ("import math\nz2_with_zero_grad = math.nan  # to do\nloss2_with_zero_grad = 0.008464\n"
                "z2_without_zero_grad = 3.668\nloss2_without_zero_grad = 7.118\n")
NOTEBOOKS = {
    # N1: an answer left as NaN (a placeholder) is a float, and the message says it is not one
    "exercise-nan": [Mutation("exercise_second_step", "", "", source=EXERCISE_NAN)],
    # N2: zero_grad() sets every grad to ones: the message says it left them as they were
    "zero-grad-ones-like": [zero_grad("for p in self.params:\n    p.grad = np.ones_like(p.data)")],
    # N3: zero_grad() walks every Parameter but leaves np.empty_like's leftovers: "is a return inside the loop?"
    "zero-grad-empty-like": [zero_grad("for p in self.params:\n    p.grad = np.empty_like(p.data)")],
    # N4: the catalogue's zero-grad-zeroes-data, with a right Linear.forward: lesson checks say "check forward"
    "zero-grad-zeroes-data": [zero_grad("for p in self.params:\n    p.grad = np.zeros_like(p.data)\n"
                                        "    p.data[...] = 0")],
    # N5: a typo (an extra parenthesis) in step(): the right zero_grad() in the same cell scores 0/2 too
    "step-syntax-error": [Mutation("sgd", "SGD.step", "for p in self.params:\n    p.data -= self.lr * p.grad)")],
    # N5: step(self, lr=self.lr): a NameError as the class is made, so SGD is undefined and zero_grad() scores 0/2
    "step-default-self-lr": [Mutation("sgd", "SGD", "", source=SGD_CELL.replace(
        "def step(self) -> None:", "def step(self, lr=self.lr) -> None:"))],
    # N7: no_grad() without its yield: "raised TypeError: 'NoneType' object is not an iterator", naming no code
    "no-grad-no-yield": [Mutation("no_grad", "no_grad", "previous = Tensor.recording\nTensor.recording = False\n"
                                  "try:\n    pass\nfinally:\n    Tensor.recording = previous")],
    # N8: step() moves each Parameter by lr times the mean of its grad: "is a return inside the loop?" and "must
    # keep updating the very objects it was given", for a loop over every one of the very objects
    "step-mean-grad": [Mutation("sgd", "SGD.step", "for p in self.params:\n    p.data -= self.lr * p.grad.mean()")],
    # N6: the given Module.__call__ (in the student's cell module) loses its `return`: Linear.forward is blamed
    "call-no-return": [Mutation("module", "Module.__call__", "self.forward(x)")],
}


@pytest.fixture(scope="module")
def graded() -> dict[str, dict]:
    from autograder.grading import grade_submissions
    from autograder.settings import GraderSettings, load_config
    from autograder.submission import Submission

    reference = solution_notebook()
    submissions = [Submission(key, notebook=apply(reference, mutations)) for key, mutations in NOTEBOOKS.items()]
    reports = grade_submissions(ASSIGNMENT, submissions, GraderSettings(config=load_config(ROOT)))
    return {key: report.to_json() for key, report in reports.items()}


@pytest.fixture(scope="module")
def public(tmp_path_factory) -> dict[str, dict[str, dict[str, tuple[bool, str]]]]:
    folder = tmp_path_factory.mktemp("red-n10")
    parts = [grade_id[len("test_"):] for grade_id in FULL]
    return {key: {part: notebook_checks.run_part(part, write_notebook(apply(solution_notebook(), mutations),
                                                                       folder / key / NOTEBOOK)) for part in parts}
            for key, mutations in NOTEBOOKS.items()}


def grade_messages(report: dict, part: str = "") -> list[str]:
    return [t["message"] for p in report["parts"] if not part or p["grade_id"] == part for t in p["tests"]
            if not t["passed"]]


def public_messages(results: dict, part: str = "") -> list[str]:
    return [message for name, checks in results.items() if not part or name == part
            for passed, message in checks.values() if not passed]


def test_a_nan_answer_is_not_told_it_is_no_float(graded, public):
    """N1: 'z2_with_zero_grad is a float: assign a number (an int or a float)' contradicts itself; a NaN (or an
    infinity) is refused, and the message must say what it is."""
    said = grade_messages(graded["exercise-nan"], "test_exercise_second_step") + public_messages(
        public["exercise-nan"], "exercise_second_step")
    assert said, "the NaN answer must lose the exercise"
    wrong = [m for m in said if "is a float: assign a number" in m]
    assert not wrong, wrong


@pytest.mark.parametrize("key", ["zero-grad-ones-like"])
def test_grads_set_to_other_numbers_are_not_said_to_be_left_as_they_were(graded, public, key):
    """N2: causes.grads_left says 'left the gradients as they were' for any nonzero grads; these zero_grad()
    replaced every grad (with ones), which the probes measured (the grads before are in the report)."""
    said = grade_messages(graded[key], "test_zero_grad") + public_messages(public[key], "zero_grad")
    wrong = [m for m in said if "left the gradients as they were" in m]
    assert not wrong, wrong


def test_a_zero_grad_that_walks_every_parameter_is_not_asked_about_a_return_in_its_loop(graded, public):
    """N3: np.empty_like gives every Parameter a new array (the loop ran over all of them); some hold zeros by
    chance. 'cleared only 3 of the 4 gradients ... (is a return inside the loop?)' guesses a cause it did not see."""
    key = "zero-grad-empty-like"
    said = grade_messages(graded[key], "test_zero_grad") + public_messages(public[key], "zero_grad")
    wrong = [m for m in said if "return inside the loop" in m]
    assert not wrong, wrong


@pytest.mark.parametrize("key", ["zero-grad-zeroes-data", "zero-grad-ones-like"])
def test_lesson_messages_do_not_blame_a_right_forward(graded, key):
    """N4: Linear.forward is the reference's; the lesson's shared-weight and training checks still say 'the forward
    pass differs (Linear.forward)' and 'check forward' (the probe holds the values right after zero_grad())."""
    wrong = [m for m in grade_messages(graded[key], "test_lesson_numbers") if "forward" in m.lower()
             and "zero_grad" not in m]
    assert not wrong, wrong


@pytest.mark.parametrize("key", ["step-syntax-error", "step-default-self-lr"])
def test_a_typo_in_step_costs_step_and_not_the_right_zero_grad(graded, key):
    """N5: one mistake costs one part (docs/grading.md); a syntax error in step(), or a default that raises as the
    class is made, makes the whole cell sgd fail to load, so the right zero_grad() beside it scores 0/2."""
    scores = {p["grade_id"]: p["score"] for p in graded[key]["parts"]}
    assert scores["test_step"] < FULL["test_step"]
    assert scores["test_zero_grad"] == FULL["test_zero_grad"], scores


def test_a_syntax_error_is_named_once(graded, public):
    """N5 (wording): both routes say 'cell sgd: cell sgd has a syntax error' / 'cell sgd cell sgd has ...'."""
    said = grade_messages(graded["step-syntax-error"]) + public_messages(public["step-syntax-error"])
    wrong = [m for m in said if "cell sgd cell sgd" in m or "cell sgd: cell sgd" in m]
    assert not wrong, wrong[:2]


def test_a_call_that_drops_what_forward_returned_is_not_blamed_on_forward(graded, public):
    """N6: Linear.forward is the reference's and its own part passes; the given Module.__call__ lost its return.
    Both routes say 'Linear.forward returned a NoneType: build the result from x, self.weight and self.bias'."""
    said = grade_messages(graded["call-no-return"]) + public_messages(public["call-no-return"])
    assert said, "a __call__ that returns None must lose the lesson's numbers"
    wrong = [m for m in said if "Linear.forward returned a NoneType" in m]
    assert not wrong, wrong[:2]


def test_a_no_grad_without_its_yield_is_named(graded, public):
    """N7: a no_grad() that never yields fails inside contextlib; both routes print only "raised TypeError:
    'NoneType' object is not an iterator", which names no code of the student's (issue 31: a message points at
    the code that is wrong) and says nothing of the yield the generator lacks."""
    said = grade_messages(graded["no-grad-no-yield"], "test_no_grad") + public_messages(
        public["no-grad-no-yield"], "no_grad")
    assert said, "a no_grad() that never yields must lose its part"
    unnamed = [m for m in said if "no_grad" not in m]
    assert not unnamed, unnamed[:2]


def test_a_step_that_moves_every_parameter_is_not_asked_about_a_return_or_other_objects(graded, public):
    """N8: step() loops over every Parameter it was given and moves each by lr * mean(grad); a bias whose grad sums
    to zero (cross-entropy's last layer) does not move. The grade says "moved only some of the parameters ... (is a
    return inside the loop?)" and the public check "the optimizer must keep updating the very objects it was
    given": two causes it did not see. It moved them by something other than lr * grad, as its other checks say."""
    said = grade_messages(graded["step-mean-grad"]) + public_messages(public["step-mean-grad"])
    wrong = [m for m in said if "return inside the loop" in m or "the very objects it was given" in m]
    assert not wrong, wrong[:3]
