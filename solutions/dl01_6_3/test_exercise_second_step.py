"""Your answers to the exercise of section 8 (`pytest -m exercise_second_step`): z and the loss after the
second step of the worked example, with zero_grad() before it and without, each within 1% (or 0.0001).
The answers themselves are not in this file: answers.py holds a salted hash of each, which says right or wrong."""
import answers


def expect_answers(nb, names, hint):
    """z, then the loss: the loss is checked once z is right, so its message names the loss, not the step."""
    for name, why in zip(names, (hint, f"{names[0]} is right, so the loss is off: L = (z - y)^2 of that z, y = 1")):
        got = answers.number(getattr(nb, name))
        assert got is not None, answers.refused(name, getattr(nb, name), "1.23")
        assert answers.is_right(name, got, rel_tol=0.01, abs_tol=1e-4), f"{name} = {got:.4g} is not right: {why}"


def test_second_step_with_zero_grad(nb):
    expect_answers(nb, ["z2_with_zero_grad", "loss2_with_zero_grad"],
                   "after zero_grad() the second step uses only its own gradient, 2 (z - y) x for w and "
                   "2 (z - y) for b, at the values after step 1")


def test_second_step_without_zero_grad(nb):
    expect_answers(nb, ["z2_without_zero_grad", "loss2_without_zero_grad"],
                   "without zero_grad() the second step uses the sum of step 1's gradient, still in .grad, "
                   "and its own")
