"""Your answer to the exercise of section 6 (`pytest -m exercise_count`): count_64_32_10 holds the number of
parameters of a 64-32-10 network, worked out with the formula: the sum over the layers of n_out * (n_in + 1).
The answer itself is not in this file: answers.py holds a salted hash of it, which says right or wrong."""
import answers


def test_count_64_32_10_is_the_number_of_parameters(nb):
    got = answers.number(nb.count_64_32_10)
    assert got is not None, answers.refused("count_64_32_10", nb.count_64_32_10, "123")
    assert answers.is_right("count_64_32_10", got), (
        f"count_64_32_10 = {got:g} is not the number of parameters of a 64-32-10 network: each layer has a "
        "weight (n_out, n_in) and a bias (n_out,), n_out * (n_in + 1) numbers; add them over the two layers")
