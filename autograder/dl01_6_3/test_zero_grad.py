"""Hidden tests for SGD.zero_grad (grade cell test_zero_grad). These never call step()."""
import causes
import numpy as np
import probes
import pytest
from reported import init_cause, per_parameter

STUDENT_CELLS = ("sgd",)
SHAPES = [[[3, 2], [2], [1, 5]], [[4], [2, 2], [7, 3], [3]], [[1], [1, 1]]]


def case(shapes, seed):
    """Start values and gradients, made here from the seed."""
    rng = np.random.default_rng(seed)
    data = [rng.normal(size=shape) for shape in shapes]
    return data, [rng.normal(size=shape) for shape in shapes]


def effect(runner, shapes, seed):
    """What one zero_grad() did, after what SGD(...) kept (a cause in the given __init__ fails the check first);
    the start values and the gradients before it ran."""
    data, grads = case(shapes, seed)
    got = runner.run(probes.zero_grad_effect, data=[d.tolist() for d in data], grads=[g.tolist() for g in grads])
    cause = init_cause(got, len(shapes), 0.1)
    assert not cause, cause
    return got, data, grads


def is_zero(grad):
    return grad is not None and not np.any(np.asarray(grad, dtype=float))


@pytest.mark.parametrize("seed,shapes", list(enumerate(SHAPES)))
def test_sets_every_grad_to_zero(student, reference, seed, shapes):
    got, _, before = effect(student, shapes, seed)
    assert not any(per_parameter(got["grad_tensors"], len(shapes))), causes.TENSOR_GRAD
    assert all(t != "NoneType" for t in per_parameter(got["grad_types"], len(shapes))), causes.NONE_GRAD
    cause = causes.grads_left(per_parameter(got["grads"], len(shapes)), before)
    assert not cause, cause


@pytest.mark.parametrize("seed,shapes", list(enumerate(SHAPES)))
def test_keeps_each_grad_an_array_of_the_parameter_shape(student, reference, seed, shapes):
    got, _, _ = effect(student, shapes, seed)
    types, tensors = per_parameter(got["grad_types"], len(shapes)), per_parameter(got["grad_tensors"], len(shapes))
    cause = next(filter(None, map(causes.grad_kind, types, tensors)), "")  # the type first: a list's shape is right
    assert not cause, cause
    assert got["grad_shapes"] == shapes, ("after zero_grad() each p.grad must be a NumPy array shaped like p.data "
                                          f"(np.zeros_like(p.data)), got shapes {got['grad_shapes']} for parameters "
                                          f"of shapes {shapes}")


def test_leaves_the_data_alone(student, reference):
    got, data, _ = effect(student, SHAPES[1], 3)
    after = per_parameter(got["data"], len(data))
    assert all(np.shape(a) == b.shape and np.array_equal(a, b) for a, b in zip(after, data)), (
        "zero_grad() changed p.data: it clears p.grad only, the values stay")


def test_keeps_the_optimizer_holding_the_same_parameters(student, reference):
    got, _, _ = effect(student, SHAPES[0], 4)
    assert got["held"] == got["made_order"], (  # as SGD(...) kept them: another order kept there is step's to name
        "after zero_grad() self.params no longer holds the Parameters it was given: clear their grads, do not "
        "replace the objects")


def cleared_cause(got, want):
    """What SGD(...) kept and what zero_grad() left ('' if right): a grad not cleared, or one array for several."""
    count = len(want["cleared"])
    return (init_cause(got, len(want["first"]), 0.1)
            or (causes.TENSOR_GRAD if any(got.get("tensors", [])) else "")
            or causes.grads_left(per_parameter(got["cleared"], count), per_parameter(got["first"], count))
            or causes.grads_shared(per_parameter(got["owners"], len(want["cleared"]))))


@pytest.mark.parametrize("widths,seed", [((2, 16, 16, 2), 0), ((3, 5, 4), 1), ((6, 2), 2)],
                         ids=["2-16-16-2", "3-5-4", "6-2"])
def test_next_backward_gives_the_fresh_gradient(student, reference, widths, seed):
    got = student.run(probes.zero_grad_then_backward, widths=list(widths), batch=5, seed=seed)
    want = reference.run(probes.zero_grad_then_backward, widths=list(widths), batch=5, seed=seed)
    cause = cleared_cause(got, want)
    assert not cause, cause
    for second, first in zip(per_parameter(got["second"], len(want["first"])), want["first"]):
        assert np.shape(second) == np.shape(first) and np.allclose(second, first), (
            "zero_grad() left every grad at zero, one array per Parameter, yet the next backward pass did not give "
            "the fresh gradient: backward() adds into what zero_grad() left, which must be zeros shaped like p.data")


def test_calling_it_twice_is_harmless(student, reference):
    got = student.run(probes.zero_grad_then_backward, widths=[3, 4, 2], batch=4, seed=5, calls=2)
    want = reference.run(probes.zero_grad_then_backward, widths=[3, 4, 2], batch=4, seed=5, calls=2)
    cause = cleared_cause(got, want)  # what SGD(...) kept and what the calls did, before what calling twice did
    assert not cause, cause
    assert all(is_zero(g) for g in got["cleared"]) and all(
        np.shape(a) == np.shape(b) and np.allclose(a, b)
        for a, b in zip(per_parameter(got["second"], len(want["second"])), want["second"])), (
        "calling zero_grad() twice in a row broke the gradients: it should just leave zeros")
