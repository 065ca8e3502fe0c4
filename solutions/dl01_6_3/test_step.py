"""SGD.step() (`pytest -m step`): every parameter p moves by -self.lr * p.grad, on the array p.data in place
(outside the graph: the same Parameter objects, no new graph nodes), and the gradients stay as they are."""
import causes
import facts
import numpy as np


def parameters_with_grads(nb, seed=0):
    rng = np.random.default_rng(seed)
    params = [nb.Parameter(rng.normal(size=shape)) for shape in [(2, 3), (3,), (1, 4)]]
    for p in params:
        p.grad = rng.normal(size=p.shape)
    return params


def sgd(nb, params, lr):
    """nb.SGD(params, lr), failing first with the cause when the given __init__ did not keep the very
    Parameters or the rate it was given (a copy kept there shows in what step() and zero_grad() do too)."""
    optimizer = nb.SGD(params, lr=lr)
    order = facts.order(optimizer, params)  # None: a one-shot iterator (a generator), which a walk here uses up
    cause = (causes.optimizer_holds(0, len(params), type(optimizer.params).__name__, True) if order is None
             else causes.init_kept(order, len(params), getattr(optimizer, "lr", None), lr))
    assert not cause, cause
    return optimizer


def test_moves_every_parameter_by_minus_lr_times_grad(nb):
    params = parameters_with_grads(nb)
    before, grads = [p.data.copy() for p in params], [p.grad.copy() for p in params]
    sgd(nb, params, 0.25).step()
    after = [np.asarray(p.data) for p in params]
    cause = causes.step_move(before, after, grads, 0.25,  # not moved, cleared, some, up the gradient, another rate
                             grads_after=[p.grad for p in params])
    assert not cause, cause
    assert moved(after, before, grads, 0.25), other_move(0.25)


def moved(after, before, grads, lr):
    return all(np.shape(a) == b.shape and np.allclose(a, b - lr * g) for a, b, g in zip(after, before, grads))


def other_move(lr):
    """What a step with no shape step_move names did: the one thing measured."""
    return (f"step() did not move each parameter by -lr * grad with lr = {lr:g}: it moved them by something other "
            "than lr * grad (p.data -= self.lr * p.grad is the whole update)")


def test_changes_data_in_place_on_the_same_objects(nb):
    params = parameters_with_grads(nb)
    before, grads = [p.data.copy() for p in params], [p.grad.copy() for p in params]
    optimizer = sgd(nb, params, 0.1)
    optimizer.step()
    cause = causes.step_move(before, [np.asarray(p.data) for p in params], grads, 0.1,  # not all, a wrong rate
                             grads_after=[p.grad for p in params])
    assert not cause or "left the Parameters where they were" in cause, cause
    assert not (kept := causes.init_order(facts.order(optimizer, params), type(optimizer.params).__name__)), kept
    assert len(optimizer.params) == 3 and all(a is b for a, b in zip(params, optimizer.params)), (
        "step() replaced the objects in self.params: keep the same Parameters and change their .data")
    assert not any(np.array_equal(p.data, old) for p, old in zip(params, before)), cause or (
        "step() must change p.data in place: after step() the Parameter held by the model did not move; "
        "p = p - lr * p.grad only rebinds a local name")


def test_adds_no_graph_nodes(nb):
    params = parameters_with_grads(nb)
    optimizer = sgd(nb, params, 0.1)
    optimizer.step()
    for p in list(params) + list(optimizer.params):
        assert isinstance(p, nb.Parameter) and not p.parents and p.backward_fn is None, (
            "after step() a parameter is a graph node with parents: the update is not part of the model, so do "
            "it on the array (p.data -= self.lr * p.grad), not with Tensor operations")


def test_leaves_the_gradients_alone(nb):
    params = parameters_with_grads(nb)
    grads = [p.grad.copy() for p in params]
    sgd(nb, params, 0.1).step()
    assert all(np.array_equal(p.grad, g) for p, g in zip(params, grads)), (
        "step() changed p.grad: clearing the gradients is zero_grad()'s job, step() only moves p.data")


def test_keeps_moving_the_same_objects_over_two_steps(nb):
    params = parameters_with_grads(nb)
    start, first = [p.data.copy() for p in params], [p.grad.copy() for p in params]
    optimizer = sgd(nb, params, 0.5)
    optimizer.step()
    cause = causes.step_move(start, [np.asarray(p.data) for p in params], first, 0.5,  # the first step, first
                             grads_after=[p.grad for p in params])
    assert not cause, cause
    assert moved([np.asarray(p.data) for p in params], start, first, 0.5), other_move(0.5)
    for p in params:
        p.grad = np.full(p.shape, 2.0)
    optimizer.step()
    cause = causes.rate_changed(0.5, [getattr(optimizer, "lr", None)])
    assert not cause, cause
    assert all(np.allclose(p.data, s - 0.5 * (g + 2.0)) for p, s, g in zip(params, start, first)), (
        "over two steps the Parameters did not move by -lr * grad each time: the optimizer must keep updating "
        "the very objects it was given")
