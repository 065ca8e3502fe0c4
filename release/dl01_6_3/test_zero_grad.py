"""SGD.zero_grad() (`pytest -m zero_grad`): every parameter's grad becomes an array of zeros shaped like its
data, for the very Parameters the optimizer holds; the values p.data stay as they were."""
import causes
import numpy as np
from test_step import parameters_with_grads, sgd  # the same setup as the step checks


def test_sets_every_grad_to_zero(nb):
    params = parameters_with_grads(nb)
    before = [np.array(p.grad) for p in params]
    sgd(nb, params, 0.1).zero_grad()
    assert not any(isinstance(p.grad, nb.Tensor) for p in params), causes.TENSOR_GRAD
    cause = causes.grads_left([p.grad for p in params], before)  # None, left as they were, other numbers, some
    assert not cause, cause


def test_keeps_each_grad_an_array_of_the_parameter_shape(nb):
    params = parameters_with_grads(nb)
    sgd(nb, params, 0.1).zero_grad()
    for p in params:
        cause = causes.grad_kind(type(p.grad).__name__, isinstance(p.grad, nb.Tensor))
        assert not cause, cause
        assert p.grad.shape == p.shape, (f"after zero_grad() a Parameter of shape {p.shape} has grad of shape "
                                         f"{p.grad.shape}: p.grad must be a NumPy array shaped like p.data (np.zeros_like(p.data))")


def test_leaves_the_data_alone(nb):
    params = parameters_with_grads(nb)
    before = [p.data.copy() for p in params]
    sgd(nb, params, 0.1).zero_grad()
    assert all(np.array_equal(p.data, old) for p, old in zip(params, before)), (
        "zero_grad() changed p.data: it clears p.grad only, the values stay")


def test_lets_the_next_backward_start_from_zero(nb):
    params = parameters_with_grads(nb) + [nb.Parameter(np.ones((2, 3)))]  # two of one shape: each its own grad
    params[-1].grad = np.ones((2, 3))
    rng = np.random.default_rng(7)
    factors = [rng.normal(size=p.shape) for p in params]
    sgd(nb, params, 0.1).zero_grad()
    assert not any(isinstance(p.grad, nb.Tensor) for p in params), causes.TENSOR_GRAD
    assert not any(p.grad is None for p in params), causes.NONE_GRAD  # backward() cannot add into None
    # One memory for several (views of one array too; a number: another check's): backward() adds into it.
    cause = causes.grads_shared([next(j for j, q in enumerate(params) if q is p or isinstance(q.grad, np.ndarray)
                                      and np.shares_memory(q.grad, p.grad)) if isinstance(p.grad, np.ndarray) else i
                                 for i, p in enumerate(params)])
    assert not cause, cause
    sum(((p * nb.Tensor(c)).sum() for p, c in zip(params, factors)), nb.Tensor(0.0)).backward()
    assert all(np.allclose(p.grad, c) for p, c in zip(params, factors)), (
        "after zero_grad() and one backward pass the gradients are not the fresh ones: zero_grad() must leave "
        "zeros shaped like p.data in the grad of the very Parameters held in self.params")
