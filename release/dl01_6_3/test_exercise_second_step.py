"""Your answers to the exercise of section 8 (`pytest -m exercise_second_step`): z and the loss after the
second step of the worked example, with zero_grad() before it and without, each within 1% (or 0.0001)."""
import math
import numbers

import numpy as np


def by_hand(zero_between):
    """z and the loss after two steps of the worked example, in plain NumPy."""
    w, b, x, y, lr = np.array([0.5, -1.0]), 0.2, np.array([1.0, 2.0]), 1.0, 0.1
    grad_w, grad_b = np.zeros(2), 0.0
    for step in (1, 2):
        z = w @ x + b
        keep = step == 2 and not zero_between
        grad_w, grad_b = grad_w * keep + 2 * (z - y) * x, grad_b * keep + 2 * (z - y)
        w, b = w - lr * grad_w, b - lr * grad_b
    z = w @ x + b
    return float(z), float((z - y) ** 2)


def expect_answers(nb, zero_between, names, hint):
    for name, want in zip(names, by_hand(zero_between)):
        got = getattr(nb, name)
        assert isinstance(got, numbers.Real) and not isinstance(got, bool), (
            f"{name} is a {type(got).__name__}: assign a number, e.g. {name} = 1.23")
        assert math.isclose(got, want, rel_tol=0.01, abs_tol=1e-4), f"{name} = {got} is not right: {hint}"


def test_second_step_with_zero_grad(nb):
    expect_answers(nb, True, ["z2_with_zero_grad", "loss2_with_zero_grad"],
                   "after zero_grad() the second step uses only its own gradient, 2 (z - y) x for w and "
                   "2 (z - y) for b, at the values after step 1")


def test_second_step_without_zero_grad(nb):
    expect_answers(nb, False, ["z2_without_zero_grad", "loss2_without_zero_grad"],
                   "without zero_grad() the second step uses the sum of step 1's gradient, still in .grad, "
                   "and its own")
