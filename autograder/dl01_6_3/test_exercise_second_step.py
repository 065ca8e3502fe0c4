"""Hidden tests for Exercise 2, the second step of the worked example by hand (grade cell
test_exercise_second_step): z and the loss with and without zero_grad(), each within 1% (or 0.0001)."""
import math
from pathlib import Path

import exercise_probes
import pytest
from reported import reference_holds

from autograder.checks.modules import import_file

# What counts as right is the public answers.py's rule (release/, which students have): within the tolerance of the
# answer as it keeps it, to its DIGITS digits. One rule, so the grade and the student's own check agree at each edge.
answers = import_file("answers", Path(__file__).resolve().parents[2] / "release" / Path(__file__).parent.name
                      / "answers.py")

STUDENT_CELLS = ("exercise_second_step",)
CASES = {
    "with_zero_grad": ((0.908, 0.092 ** 2), "after zero_grad() the second step uses only its own gradient, "
                                            "2 (z - y) x for w and 2 (z - y) for b, at the values after step 1"),
    "without_zero_grad": ((3.668, 2.668 ** 2), "without zero_grad() the second step uses the sum of step 1's "
                                               "gradient, still in .grad, and its own"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_second_step(student, reference, case):
    names = [f"z2_{case}", f"loss2_{case}"]
    got = student.run(exercise_probes.exercise_answers, names=names)
    want = reference.run(exercise_probes.exercise_answers, names=names)
    lesson, hint = CASES[case]
    for name, value in zip(names, lesson):
        reference_holds(want[name]["number"] is not None and math.isclose(want[name]["number"], value, rel_tol=1e-9),
                        f"the reference's {name} is wrong")
        reference_holds(answers.is_right(name, want[name]["number"], rel_tol=0.01, abs_tol=1e-4),
                        f"answers.py does not take the reference's {name}")
    # z first: the loss is checked once z is right, so its message names the loss, not the step (z's hint).
    for name, why in zip(names, (hint, f"{names[0]} is right, so the loss is off: L = (z - y)^2 of that z, y = 1")):
        assert got[name]["defined"], (f"the notebook defines no {name}: assign your answer to it in the exercise "
                                      f"cell{student.because()}")
        assert got[name]["number"] is not None, answers.refusal(name, got[name]["what"], "1.23")
        assert answers.is_right(name, got[name]["number"], rel_tol=0.01, abs_tol=1e-4), (
            f"{name} = {got[name]['number']:.4g} is not right: {why}")
