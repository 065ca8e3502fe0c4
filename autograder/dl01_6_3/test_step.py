"""Hidden tests for SGD.step (grade cell test_step). These never call zero_grad() or parameters()."""
import causes
import numpy as np
import probes
import pytest
from reported import CHANGED, close, init_cause, per_parameter, reference_holds

STUDENT_CELLS = ("sgd",)
SHAPES = [[3, 2], [2], [1, 4]]


def case(seed, steps=1):
    """Start values and each step's gradients, made here from the seed."""
    rng = np.random.default_rng(seed)
    start = [rng.normal(size=shape) for shape in SHAPES]
    return start, [[rng.normal(size=shape) for shape in SHAPES] for _ in range(steps)]


def step_effect(runner, lr, seed, steps=1):
    """What step() did, after what SGD(...) kept (a cause in the given __init__ fails the check first)."""
    start, grads = case(seed, steps)
    got = runner.run(probes.step_effect, data=[d.tolist() for d in start],
                     grads=[[g.tolist() for g in step] for step in grads], lr=lr)
    cause = init_cause(got, len(SHAPES), lr)
    assert not cause, cause
    return {**got, "start": start, "grads_used": grads}  # a new dict: the runner's answer is shared


def expected_after(result, steps, lr):
    data = result["start"]
    for k in range(steps):
        data = [d - lr * g for d, g in zip(data, result["grads_used"][k])]
    return data


def each_moved_by(result, lr, steps=1):
    """For each parameter: does its data equal start - lr * (the grads of the first `steps` steps)?"""
    want = expected_after(result, steps, lr)
    return [close(got, moved) for got, moved in zip(per_parameter(result["data"][steps - 1], len(want)), want)]


def moved_by(result, lr, steps=1):
    return all(each_moved_by(result, lr, steps))


def check_first_step(got, lr):
    """The first step's move, with the misconception named when it is wrong (causes.step_move: not moved, only
    some, up the gradient, another rate)."""
    assert moved_by(got, lr), causes.step_move(got["start"], per_parameter(got["data"][0], len(SHAPES)),
                                               got["grads_used"][0], lr, grads_after=got["grads_after"][0]) or (
        f"step() did not move each parameter by -lr * grad with lr = {lr}: it moved them by something other than "
        "lr * grad (p.data -= self.lr * p.grad is the whole update)")


@pytest.mark.parametrize("lr,seed", [(0.1, 0), (0.03, 1), (0.5, 2), (1.7, 3)])
def test_moves_every_parameter_by_minus_lr_times_grad(student, reference, lr, seed):
    got, want = step_effect(student, lr, seed), step_effect(reference, lr, seed)
    reference_holds(moved_by(want, lr), "the reference solution does not move by -lr * grad")
    check_first_step(got, lr)


def test_updates_the_same_parameter_objects_in_place(student, reference):
    got = step_effect(student, 0.1, 4)
    cause = causes.init_order(got["made_order"], got["made_kind"])  # every one kept, but not in a list's order
    assert not cause, cause
    assert got["held"] == got["made_order"], (
        "step() replaced the objects in self.params: keep the same Parameters and change their .data")
    assert not moved_by(got, 0), causes.step_move(
        got["start"], per_parameter(got["data"][0], len(SHAPES)), got["grads_used"][0], 0.1,
        grads_after=got["grads_after"][0]) or ("step() must change p.data in place: after step() the Parameter "
                                               "held by the model did not move; did you write p = p - lr * p.grad?")


def test_adds_no_graph_nodes(student, reference):
    got = step_effect(student, 0.1, 5, steps=2)
    facts = per_parameter(got["facts"], len(SHAPES) + len(got["held"]))  # the Parameters given, then those held
    assert all(is_parameter and parents == 0 and not closure for is_parameter, parents, closure in facts), (
        "after step() a parameter is a graph node with parents, or no longer a Parameter: the update is not "
        "part of the model, so do it on the array (p.data -= self.lr * p.grad), not with Tensor operations")


def test_leaves_the_gradients_alone(student, reference):
    got = step_effect(student, 0.1, 6)
    used = got["grads_used"][0]
    after = per_parameter(got["grads_after"][0], len(used))
    assert all(g is not None and close(g, u) for g, u in zip(after, used)), (
        "step() changed p.grad: clearing the gradients is zero_grad()'s job, step() only moves p.data")


@pytest.mark.parametrize("seed", [7, 8])
def test_two_steps_move_by_both_gradients(student, reference, seed):
    got = step_effect(student, 0.2, seed, steps=2)
    check_first_step(got, 0.2)
    cause = causes.rate_changed(0.2, got["rates"])
    assert not cause, cause
    assert moved_by(got, 0.2, steps=2), ("the first step was right, but after the second the Parameters had not "
                                         "moved by -lr * grad again: the optimizer must keep updating the very "
                                         "objects it was given")


@pytest.mark.parametrize("widths,lr,seed", [((2, 16, 16, 2), 0.1, 0), ((3, 6, 4), 0.5, 1), ((5, 3), 0.05, 2)],
                         ids=["2-16-16-2", "3-6-4", "5-3"])
def test_changes_the_output_of_the_model_that_holds_the_parameters(student, reference, widths, lr, seed):
    got = student.run(probes.step_moves_model, widths=list(widths), batch=6, lr=lr, seed=seed)
    want = reference.run(probes.step_moves_model, widths=list(widths), batch=6, lr=lr, seed=seed)
    cause = init_cause(got, len(want["grads"][0]), lr) or causes.step_move(*got["params"][:2], got["grads"][0], lr,
                                                                         what="the model's Parameters",
                                                                         grads_after=got["grads_after"][0])
    assert not cause, cause
    assert not close(got["outputs"][1], got["outputs"][0]), (
        "after step() the model's output did not change: the optimizer must update the same Parameter objects "
        "the layers hold, in place (p.data -= self.lr * p.grad)")
    assert close(got["outputs"][1], want["outputs"][1]), ("after one step() the model's output differs "
                                                                "from a step of -lr * grad")


@pytest.mark.parametrize("widths,lr,seed", [((2, 16, 16, 2), 0.1, 3), ((4, 5, 3), 0.3, 4)],
                         ids=["2-16-16-2", "4-5-3"])
def test_keeps_optimizer_and_model_linked_over_two_steps(student, reference, widths, lr, seed):
    got = student.run(probes.step_moves_model, widths=list(widths), batch=6, lr=lr, seed=seed, steps=2)
    want = reference.run(probes.step_moves_model, widths=list(widths), batch=6, lr=lr, seed=seed, steps=2)
    cause = init_cause(got, len(want["grads"][0]), lr)  # what SGD(...) kept, before what step() did with it
    assert not cause, cause
    facts = per_parameter(got["facts"], len(want["facts"]))
    assert all(is_parameter and parents == 0 for is_parameter, parents, _ in facts), (
        "after step() a layer's weight or bias is no longer a plain Parameter")
    cause = causes.step_move(*got["params"][:2], got["grads"][0], lr, what="the model's Parameters",
                             grads_after=got["grads_after"][0])
    assert not cause, cause
    assert close(got["outputs"][1], want["outputs"][1]), ("after one step() the model's output differs "
                                                          "from a step of -lr * grad")
    cause = causes.rate_changed(lr, got["rates"])
    assert not cause, cause
    assert close(got["outputs"][2], want["outputs"][2]), (
        "the first step() was right, but after the second the model's output differs from two steps of "
        "-lr * grad: the optimizer and "
        "the model must keep sharing the same Parameter objects")
    nodes, wanted = [len(g) for g in got["graphs"]], [len(g) for g in want["graphs"]]
    assert nodes == wanted, (f"the model's forward graph grew from {nodes[0]} to {nodes[-1]} nodes over the "
                             "steps: update .data, outside the graph")


def no_gradient(grads):
    """The cause ('' if none) when the worked example's first backward() left the layer's weight or bias a grad that is
    None (no numbers): the probe ran its own forward on grads it zeroed itself, so only the code of cell sgd (the one
    cell of this part) can have changed them, or the answer. Named before the checks that compare the grads
    (causes.grads_changed), as the lesson-numbers suite names a missing one first (causes.grads_missing)."""
    missing = [name for name, grad in zip(("weight", "bias"), grads) if grad is None]
    return "" if not missing else (
        f"after backward() the layer's {' and '.join(missing)} had no gradient (p.grad None, or no numbers), though "
        "the check ran its own forward on gradients it had zeroed: code in cell sgd changed p.grad before step(), "
        f"or {CHANGED}")


def worked_step_cause(got):
    """What step() did wrong in the worked example's first step, lr = 0.1, or to self.lr ('' when nothing
    recognisable), after what SGD(...) kept and a first gradient that is missing."""
    return init_cause(got, 2, 0.1) or no_gradient(got["grads"][0]) or causes.step_move(
        *got["params"][:2], got["grads"][0], 0.1, grads_after=got["grads_after"][0]) or \
        causes.rate_changed(0.1, got.get("rates", []))


def test_worked_example_with_zeroed_grads_reaches_0_908(student, reference):
    got = student.run(probes.step_worked_example, zero_between=True)
    cause = worked_step_cause(got)
    assert not cause, f"worked example: {cause}"
    assert close(got["z"], [-1.3, 1.46, 0.908]) and close(got["loss"], [5.29, 0.2116, 0.008464]), (
        f"worked example (grads zeroed before each backward): z should go -1.3, 1.46, 0.908 and the loss 5.29, "
        f"0.2116, 0.0085; step() gave z = {np.round(got['z'], 4).tolist()}")


def test_worked_example_without_zeroing_adds_the_gradients_up_to_3_668(student, reference):
    got = student.run(probes.step_worked_example, zero_between=False)
    cause = worked_step_cause(got)
    assert not cause, f"worked example: {cause}"
    assert not got.get("step_left_none"), f"worked example: {causes.STEP_LEFT_NONE}"
    cause = causes.grads_changed(got["grads"][0], got["grads_after"][0])  # what the second backward() adds to
    assert not cause, f"worked example: {cause}"
    assert not np.isclose(got["z"][2], 0.908), ("without zeroing, the second step used only the new gradient: "
                                                "step() must not clear p.grad, the gradients add up")
    assert close(got["z"], [-1.3, 1.46, 3.668]) and np.isclose(got["loss"][2], 2.668 ** 2), (
        f"worked example without zeroing: z should go -1.3, 1.46, 3.668 (loss about 7.12); step() gave "
        f"z = {np.round(got['z'], 4).tolist()}")
