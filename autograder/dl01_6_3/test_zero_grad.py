"""Hidden tests for SGD.zero_grad (grade cell test_zero_grad). These never call step()."""
import numpy as np
import pytest

import probes

STUDENT_CELLS = ("sgd",)
SHAPES = [[[3, 2], [2], [1, 5]], [[4], [2, 2], [7, 3], [3]], [[1], [1, 1]]]


@pytest.mark.parametrize("seed,shapes", list(enumerate(SHAPES)))
def test_sets_every_grad_to_zero(student, reference, seed, shapes):
    got = student.run(probes.zero_grad_effect, shapes=shapes, seed=seed)
    cleared = [g is not None and not np.any(np.asarray(g)) for g in got["grads"]]
    assert any(cleared), "zero_grad() left the gradients as they were: set p.grad to zeros for every p in self.params"
    assert all(cleared), (f"zero_grad() cleared only {sum(cleared)} of the {len(cleared)} gradients: loop over "
                          "every parameter in self.params (is a return inside the loop?)")


@pytest.mark.parametrize("seed,shapes", list(enumerate(SHAPES)))
def test_keeps_each_grad_an_array_of_the_parameter_shape(student, reference, seed, shapes):
    got = student.run(probes.zero_grad_effect, shapes=shapes, seed=seed)
    assert all(got["grad_is_array"]) and got["grad_shapes"] == shapes, (
        "after zero_grad() each p.grad must be a NumPy array shaped like p.data (np.zeros_like(p.data)), "
        f"got shapes {got['grad_shapes']} for parameters of shapes {shapes}")


def test_leaves_the_data_alone(student, reference):
    got = student.run(probes.zero_grad_effect, shapes=SHAPES[1], seed=3)
    assert all(got["data_unchanged"]), "zero_grad() changed p.data: it clears p.grad only, the values stay"


def test_keeps_the_optimizer_holding_the_same_parameters(student, reference):
    got = student.run(probes.zero_grad_effect, shapes=SHAPES[0], seed=4)
    assert got["same_objects"], ("after zero_grad() self.params no longer holds the Parameters it was given: "
                                 "clear their grads, do not replace the objects")


@pytest.mark.parametrize("widths,seed", [((2, 16, 16, 2), 0), ((3, 5, 4), 1), ((6, 2), 2)],
                         ids=["2-16-16-2", "3-5-4", "6-2"])
def test_next_backward_gives_the_fresh_gradient(student, reference, widths, seed):
    got = student.run(probes.zero_grad_then_backward, widths=list(widths), batch=5, seed=seed)
    want = reference.run(probes.zero_grad_then_backward, widths=list(widths), batch=5, seed=seed)
    assert all(got["cleared"]), (f"zero_grad() cleared {sum(got['cleared'])} of the model's "
                                 f"{len(got['cleared'])} parameters: clear every p in self.params")
    for second, first in zip(got["second"], want["first"]):
        assert np.allclose(second, first), ("after zero_grad() the next backward pass did not give the fresh "
                                            "gradient: old gradients were added to it")


def test_calling_it_twice_is_harmless(student, reference):
    got = student.run(probes.zero_grad_then_backward, widths=[3, 4, 2], batch=4, seed=5, calls=2)
    want = reference.run(probes.zero_grad_then_backward, widths=[3, 4, 2], batch=4, seed=5, calls=2)
    assert all(got["cleared"]) and all(np.allclose(a, b) for a, b in zip(got["second"], want["second"])), (
        "calling zero_grad() twice in a row broke the gradients: it should just leave zeros")
