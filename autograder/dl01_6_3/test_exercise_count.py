"""Hidden tests for Exercise 1, the parameter count of a 64-32-10 network (grade cell test_exercise_count)."""
from pathlib import Path

import exercise_probes
from reported import reference_holds

from autograder.checks.modules import import_file

# What a refused answer is told is the public answers.py's wording (test_exercise_second_step.py loads it alike).
answers = import_file("answers", Path(__file__).resolve().parents[2] / "release" / Path(__file__).parent.name
                      / "answers.py")

STUDENT_CELLS = ("exercise_count",)
NAME = "count_64_32_10"


def test_count_64_32_10_is_the_number_of_parameters(student, reference):
    got = student.run(exercise_probes.exercise_answers, names=[NAME])[NAME]
    want = reference.run(exercise_probes.exercise_answers, names=[NAME])[NAME]
    reference_holds(want["number"] == 32 * (64 + 1) + 10 * (32 + 1), "the reference's count is wrong")
    assert got["defined"], f"the notebook defines no {NAME}: assign your count to it in the exercise cell{student.because()}"
    assert got["number"] is not None, answers.refusal(NAME, got["what"], "123")
    assert got["number"] == want["number"], (
        f"{NAME} = {got['number']:g} is not the number of parameters of a 64-32-10 network: each layer has a "
        "weight (n_out, n_in) and a bias (n_out,), n_out * (n_in + 1) numbers; add them over the two layers")
