"""Hidden tests of the lesson's numbers with everything from the submission (grade cell test_lesson_numbers).

Each of the lesson's numbers is a check of its own (the second step with and without zero_grad() repeat one
shape by design), so feedback says which number came out wrong."""
import functools

import causes
import numpy as np
import probes
import pytest
from reported import block_cause, close, init_cause, reference_holds

STUDENT_CELLS = "all"


def layers_cause(got):
    """What the probe found in the layers before it built a network ('' if nothing): the given Linear.__init__'s
    weight shape, then what Linear.forward returns (causes.layers_cause)."""
    return causes.layers_cause(got)


def listing_cause(got):
    """What the probe found wrong with what parameters() gave SGD(...) ('' if nothing): an entry that is not a
    Parameter, or not every one of the model's Parameters (from the layers' Linear.__init__, or what
    parameters() keeps between calls)."""
    cause = causes.not_parameters(got.get("not_parameters", []))
    stale = causes.stale_list(got["defaults"], got["same_list"], got["kept"]) if "defaults" in got else ""
    stale = causes.init_attributes(got) or stale  # a Linear that keeps no Parameter weight, say
    return cause or (causes.parameters_gave(got["given"], got["total"], stale) if "given" in got else "")


def optimizer_cause(got, lr):
    """What the probe found wrong with the optimizer before any number ('' if nothing): what parameters() gave
    SGD(...), what SGD(..., lr) kept (a used-up generator, not every Parameter, another rate), a grad that
    zero_grad() set to None, or one grad array it left to several Parameters."""
    cause = listing_cause(got)
    cause = cause or (causes.optimizer_holds(got["held"], got["total"], got["kind"], got["one_shot"]) if "held" in got else "")
    kept = got.get("made_order") or [] if got.get("made_others") else None  # objects not Parameters: named here
    cause = cause or (causes.init_kept(kept, len(kept or []), got["made_lr"], lr) if "made_lr" in got else "")
    cause = cause or (causes.NONE_GRAD if got["none_grads"] else "")
    cause = cause or (causes.TENSOR_GRAD if got.get("tensor_grads") else "")
    return cause or causes.grads_shared(got.get("owners", []))


def zero_grad_cause(got):
    """What the probe's first zero_grad() did wrong to the values or the grads, measured right after it ('' if
    nothing): the numbers after it come from what it left, whatever forward() does."""
    return causes.zero_grad_left(got["values"], got["zeroed"], got["grads_before"], got["cleared"])


def moved(got, lr, what):
    """What zero_grad() or step() did wrong to the values in the probe's first step ('' if nothing recognisable):
    zero_grad() first, from the values right after it (step() starts from those); a move twice as far is a
    Parameter listed twice only where the optimizer's list holds one twice."""
    return causes.step_move(*got["params"][:2], got["grads"][0], lr, what=what, order=got.get("made_order"),
                            zeroed=got.get("zeroed"), grads_after=got["grads_after"][0])


@pytest.mark.parametrize("widths,count", [((2, 16, 16, 2), 354), ((64, 32, 10), 2410)],
                         ids=["2-16-16-2", "64-32-10"])
def test_counts_354_and_2410_parameters(student, reference, widths, count):
    found = student.run(probes.parameter_count, widths=list(widths))
    got = sum(int(np.prod(shape)) for shape in found["shapes"])
    cause = causes.init_attributes(found) or causes.not_parameters(found["not_parameters"]) or \
        causes.stale_list(found["defaults"], found["same_list"], found["kept"]) if got != count else ""
    assert not cause, cause
    assert got == count, (f"a {'-'.join(map(str, widths))} network has {count} parameters, parameters() gave {got}")


def first_step_cause(got):
    """What went wrong in the worked example's forward pass and first step, named by its cause ('' if nothing)."""
    if layers_cause(got) or optimizer_cause(got, 0.1):
        return layers_cause(got) or optimizer_cause(got, 0.1)
    if not np.isclose(got["loss"][0], 5.29):
        return (f"the first loss should be 5.29 (z = -1.3), got {got['loss'][0]:.4g} (z = {got['z'][0]:.4g}): "
                "Linear(2, 1) must compute x @ W.T + b")
    return zero_grad_cause(got) or causes.grads_missing(got["grads"][0], ["weight", "bias"], whose="the layer's ") \
        or moved(got, 0.1, "the Parameters")


def test_worked_example_first_step_takes_the_loss_from_5_29_to_0_2116(student, reference):
    got = student.run(probes.lesson_worked_example, zero_between=True)
    cause = first_step_cause(got)
    assert not cause, f"worked example: {cause}"
    assert np.isclose(got["z"][1], 1.46) and np.isclose(got["loss"][1], 0.2116), (
        f"worked example: after one step z should be 1.46 and the loss 0.2116, got z = {got['z'][1]:.4g}, "
        f"loss = {got['loss'][1]:.4g}")


def test_worked_example_second_step_after_zero_grad_gives_0_908_and_0_0085(student, reference):
    got = student.run(probes.lesson_worked_example, zero_between=True)
    cause = first_step_cause(got)
    assert not cause, f"worked example: {cause}"
    assert not np.isclose(got["z"][2], 3.668), ("worked example: zero_grad() left the gradients as they were: the "
                                                "second step added the first gradient in again (z = 3.668, not "
                                                "0.908); zero_grad() must clear every grad")
    assert np.isclose(got["z"][2], 0.908) and np.isclose(got["loss"][2], 0.008464), (
        f"worked example: with zero_grad() the second step should give z = 0.908 and loss 0.0085, got "
        f"z = {got['z'][2]:.4g}, loss = {got['loss'][2]:.4g}")


def test_worked_example_second_step_without_zero_grad_gives_3_668_and_7_12(student, reference):
    got = student.run(probes.lesson_worked_example, zero_between=False)
    cause = first_step_cause(got)
    assert not cause, f"worked example: {cause}"
    assert not got.get("step_left_none"), f"worked example: {causes.STEP_LEFT_NONE}"
    cause = causes.grads_changed(got["grads"][0], got["grads_after"][0])  # what the second backward() adds to
    assert not cause, f"worked example: {cause}"
    assert not np.isclose(got["z"][2], 0.908), ("worked example: without zero_grad() the gradients must add up, "
                                                "but the second step used only the new one: step() must not "
                                                "clear p.grad")
    assert np.isclose(got["z"][2], 3.668) and np.isclose(got["loss"][2], 2.668 ** 2), (
        f"worked example: without zero_grad() the second step should give z = 3.668 and loss about 7.12, got "
        f"z = {got['z'][2]:.4g}, loss = {got['loss'][2]:.4g}")


LEAVES = ["x"] + [f"layers[{i}].{name}" for i in (0, 2, 4) for name in ("weight", "bias")]  # probes.lesson_graph's


def test_network_records_18_nodes_and_1_under_no_grad_with_equal_outputs(student, reference):
    assert not block_cause(student), block_cause(student)
    got = student.run(probes.lesson_graph, widths=[2, 16, 16, 2], batch=4, seed=0)
    want = reference.run(probes.lesson_graph, widths=[2, 16, 16, 2], batch=4, seed=0)
    assert not layers_cause(got), layers_cause(got)
    recorded, quiet = len(got["recorded_graph"]), len(got["quiet_graph"])
    reference_holds(len(want["recorded_graph"]) == 18, "the reference records no 18 nodes")
    missing = [name for name, number in zip(LEAVES, got["leaves"]) if number == -1]
    assert not missing, (f"the 2-16-16-2 forward pass recorded no node for {', '.join(missing)}: each layer must "
                         "compute with Tensor operations on x, self.weight and self.bias (not on their .data)")
    assert recorded >= 18, (f"the 2-16-16-2 forward pass recorded {recorded} nodes, expected 18: the input, 6 "
                            "Parameters, and three results per Linear (W.T, x @ W.T, + b), one per ReLU")
    assert quiet == 1, f"under no_grad() the output still has a graph of {quiet} nodes, expected 1 (no parents)"
    assert close(got["quiet"], got["recorded"]), (
        "the 2-16-16-2 network gave other outputs under no_grad() than with recording on")
    # Its own outputs agree: one unlike the lesson's comes from the layers it was built from.
    cause = "" if close(got["recorded"], want["recorded"]) else causes.given_init(got)
    assert not cause, cause
    assert close(got["recorded"], want["recorded"]), (
        "the 2-16-16-2 network gave other outputs than the lesson's (with recording on and under no_grad()): "
        "check Linear.forward")


@pytest.mark.parametrize("n,lr,seed", [(3, 0.1, 0), (5, 0.02, 1)])
def test_shared_parameter_is_listed_once_and_moved_once(student, reference, n, lr, seed):
    got = student.run(probes.lesson_shared, n=n, batch=4, lr=lr, seed=seed)
    want = reference.run(probes.lesson_shared, n=n, batch=4, lr=lr, seed=seed)
    assert not layers_cause(got) and not optimizer_cause(got, lr), layers_cause(got) or optimizer_cause(got, lr)
    reference_holds(want["pattern"] == [0, 1, 2], "the reference lists the shared weight wrongly")
    entries = got["pattern"].count(0)
    wrong = not (entries == 1 and len(got["pattern"]) == 3)
    cause = (causes.init_attributes(got) or causes.stale_list(
        got["defaults"], got["same_list"], got["kept"])) if wrong else ""
    assert not cause, cause
    assert not wrong, (
        f"parameters() of two layers sharing a weight listed it {entries} times among "
        f"{len(got['pattern'])} entries, expected once among 3")
    cause = init_cause(got, 3, lr) or zero_grad_cause(got)  # the list is right: what SGD(...) kept of it
    assert not cause, cause
    assert got["still_shared"], "after step() the two layers no longer share one weight"
    # All three first (a step() that moved only some of them), then the shared weight (moved twice: listed twice).
    moved = got["moved"]
    cause = causes.step_move(moved["before"], moved["after"], moved["grads"], lr, grads_after=moved["grads_after"]) or \
        causes.step_move([got["before"]], [got["after"]], [got["grad"]], lr, what="the shared weight",
                         order=got["made_order"], grads_after=[got["grad_after"]])
    assert not cause, cause
    # Shapes first: arrays of two shapes would broadcast, here in the grader's process, to as many numbers as the
    # product of their sizes (a column and a row within one answer's values make gigabytes).
    assert np.shape(got["before"]) == np.shape(got["after"]) == np.shape(want["before"]), (
        "step() changed the shape of the shared weight")
    move = np.subtract(got["before"], got["after"])
    by_its_grad = np.shape(got["grad"]) == np.shape(move) and close(move, lr * np.asarray(got["grad"], dtype=float))
    assert close(move, np.subtract(want["before"], want["after"])), (
        causes.given_init(got) or "the shared weight moved by lr * its grad, but that grad is not the lesson's: "
        "the forward pass differs (Linear.forward)" if by_its_grad else
        "step() moved the shared weight by another amount than lr * grad (its grad already holds both uses)")


@pytest.mark.parametrize("widths,lr,seed", [((2, 16, 16, 2), 0.1, 0), ((4, 9, 3), 0.3, 1), ((6, 5, 7, 2), 0.05, 2)],
                         ids=["2-16-16-2", "4-9-3", "6-5-7-2"])
def test_training_loop_matches_the_reference(student, reference, widths, lr, seed):
    kwargs = dict(widths=list(widths), batch=8, steps=4, lr=lr, seed=seed)
    assert not block_cause(student), block_cause(student)  # the loop ends with `with no_grad():`
    got, want = student.run(probes.lesson_training, **kwargs), reference.run(probes.lesson_training, **kwargs)
    assert not layers_cause(got) and not optimizer_cause(got, lr), layers_cause(got) or optimizer_cause(got, lr)
    assert not zero_grad_cause(got), zero_grad_cause(got)
    assert close(got["losses"][0], want["losses"][0]), (
        causes.given_init(got) or "the first training loss differs: check forward")
    names = [f"layers[{2 * i}].{name}" for i in range(len(widths) - 1) for name in ("weight", "bias")]  # _by_hand's
    cause = causes.grads_missing(got["grads"][0], names, want["grads"][0]) or moved(got, lr, "the model's Parameters")
    assert not cause, cause
    assert close(got["losses"], want["losses"]), (
        f"four steps of zero_grad(), backward(), step() gave losses {np.round(got['losses'], 4).tolist()}, "
        f"expected {np.round(want['losses'], 4).tolist()}")
    assert len(got["final_graph"]) == 1 and close(got["final"], want["final"]), (
        "after training, the outputs under no_grad() differ or still record a graph")


def noting_copies(test):
    """A check whose failure first says which class in use a later cell defined again (causes.defined_again): the
    lesson's numbers come from that copy, and the part of the cell it replaced grades that cell's own."""

    @functools.wraps(test)
    def noted(student, reference, **params):
        try:
            test(student, reference, **params)
        except AssertionError as failure:
            note = causes.defined_again(student.run(probes.lesson_defined_in))
            if note:
                raise AssertionError(f"{note}; {str(failure).strip()}") from None
            raise

    return noted


for _name, _test in list(globals().items()):
    if _name.startswith("test_"):
        globals()[_name] = noting_copies(_test)
