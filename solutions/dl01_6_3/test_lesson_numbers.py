"""The lesson's numbers with all five methods together (`pytest -m lesson_numbers`): the parameter counts of
section 6, the worked example of section 8 with and without zero_grad(), the graph sizes of section 11 and
the shared weight of section 12."""
import answers
import causes
import facts
import numpy as np
from test_no_grad import block  # what no_grad() returned, named when a `with` block cannot run it
from test_step import sgd  # SGD(...), failing with what its __init__ kept wrong


def linear(nb, weight, bias):
    weight = np.asarray(weight, dtype=float)
    layer = nb.Linear(weight.shape[1], weight.shape[0], np.random.default_rng(0))
    layer.weight, layer.bias = nb.Parameter(weight), nb.Parameter(np.asarray(bias, dtype=float))
    return layer


def mlp(nb, widths, rng):
    layers = [layer for n_in, n_out in zip(widths[:-1], widths[1:]) for layer in (nb.Linear(n_in, n_out, rng), nb.ReLU())]
    return nb.Sequential(*layers[:-1])


def graph(output):
    """The ids of the tensors in the graph behind `output` (output included)."""
    seen, stack = {id(output)}, [output]
    while stack:
        for parent in stack.pop().parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    return seen


def layers_cause(nb, drawn=False):
    """What the layers do wrong before a network is built from them (causes.layers_cause): the given
    Linear.__init__'s weight shape, what Linear.forward returns for a batch (a given ReLU, or the loss, would
    otherwise fail on an array and be named in place of forward); `drawn`: a network whose numbers come from
    Linear.__init__'s draws, which must be the given ones (causes.given_init)."""
    found = facts.layers_facts(nb)
    return causes.layers_cause(found) or (causes.given_init(found) if drawn else "")


def zeroed(nb, optimizer, params):
    """optimizer.zero_grad(), failing with its cause when it set a grad to None (backward() adds into it), changed
    the values, or left other numbers than zeros in the grads (causes.zero_grad_left: measured right after it)."""
    values, grads = [np.array(p.data) for p in params], [np.array(p.grad) for p in params]
    optimizer.zero_grad()
    assert not any(isinstance(p.grad, nb.Tensor) for p in params), causes.TENSOR_GRAD
    cause = causes.zero_grad_left(values, [p.data for p in params], grads, [p.grad for p in params])
    assert not cause, cause


def worked_example(nb, zero_between):
    """The two steps of section 8 with your Linear, SGD, zero_grad() and step(); a wrong first step fails here,
    named by its cause (causes.py): what the optimizer holds, what step() did with the gradients, the first
    loss, or no gradient."""
    cause = layers_cause(nb)
    assert not cause, f"worked example: {cause}"
    layer, x = linear(nb, [[0.5, -1.0]], [0.2]), nb.Tensor(np.array([[1.0, 2.0]]))
    found = layer.parameters()
    optimizer, params = nb.SGD(found, lr=0.1), [layer.weight, layer.bias]
    cause = facts.given_cause(layer, found, params, nb.Parameter, nb.Module) or facts.holds(optimizer, params, 0.1)
    assert not cause, f"worked example: {cause}"
    listed = facts.order(optimizer, params)
    numbers = []

    def forward():
        z = layer(x)
        loss = ((z - 1.0) ** 2).sum()
        numbers.extend([float(z.data.sum()), float(loss.data)])
        return loss

    before = [p.data.copy() for p in params]
    zeroed(nb, optimizer, params)
    cleared = [p.data.copy() for p in params]  # where step() starts from: zero_grad() must not have moved it
    forward().backward()
    grads = [np.array(p.grad, dtype=float) for p in params]
    optimizer.step()
    cause = causes.step_move(before, [p.data for p in params], grads, 0.1, order=listed, zeroed=cleared,
                             grads_after=[p.grad for p in params])
    assert not cause, f"worked example: {cause}"
    assert np.isclose(numbers[1], 5.29), (f"worked example: the first loss should be 5.29 (z = -1.3), got "
                                          f"{numbers[1]:.4g} (z = {numbers[0]:.4g}): Linear(2, 1) must compute "
                                          "x @ W.T + b")
    cause = causes.grads_missing(grads, ["weight", "bias"], whose="the layer's ")
    assert not cause, f"worked example: {cause}"
    loss = forward()
    if zero_between:
        zeroed(nb, optimizer, params)
    assert zero_between or not any(p.grad is None for p in params), f"worked example: {causes.STEP_LEFT_NONE}"
    assert zero_between or not (cause := causes.grads_changed(grads, [p.grad for p in params])), f"worked example: {cause}"
    loss.backward()
    optimizer.step()
    forward()
    return numbers


def lesson_number(name, value):
    """Whether `value` is section 8's number `name` within 0.1% (Exercise 2's answer: answers.py holds it as a
    salted hash of its first four digits, so that this file does not give it away)."""
    return answers.is_right(name, value, rel_tol=1e-3)


def test_counts_the_parameters_of_2_16_16_2_and_64_32_10_networks(nb):
    for widths in [(2, 16, 16, 2), (64, 32, 10)]:
        model = mlp(nb, widths, np.random.default_rng(0))
        listed = list(model.parameters())
        count = sum(np.size(getattr(p, "data", p)) for p in listed)
        right = count == 354 if widths[0] == 2 else answers.is_right("count_64_32_10", count)
        cause = "" if right else causes.init_attributes(facts.layers_facts(nb)) or \
            causes.not_parameters(facts.kinds_of(listed, nb.Parameter, nb.Module))
        assert not cause, cause
        cause = "" if right else facts.kept_list(model, nb.Parameter)
        assert not cause, cause
        want = "354 parameters" if widths[0] == 2 else "as many parameters as section 6's formula says"
        assert right, f"a {'-'.join(map(str, widths))} network has {want}, parameters() gave {count}"


def test_worked_example_first_step_takes_the_loss_from_5_29_to_0_2116(nb):
    z1, loss1 = worked_example(nb, True)[2:4]  # the first loss, 5.29, is checked in worked_example
    assert np.isclose(z1, 1.46) and np.isclose(loss1, 0.2116), (
        f"worked example: after one step z should be 1.46 and the loss 0.2116, got z = {z1:.4g}, loss = {loss1:.4g}")


def test_worked_example_second_step_with_zero_grad(nb):
    z2, loss2 = worked_example(nb, True)[4:]
    assert not lesson_number("z2_without_zero_grad", z2), (
        f"worked example: zero_grad() left the gradients as they were: the second step added the first gradient "
        f"in again (z = {z2:.4g}, the number without zero_grad()); zero_grad() must clear every grad")
    assert lesson_number("z2_with_zero_grad", z2) and lesson_number("loss2_with_zero_grad", loss2), (
        f"worked example: with zero_grad() the second step gave z = {z2:.4g}, loss = {loss2:.4g}, not the "
        "numbers of section 8")


def test_worked_example_second_step_without_zero_grad(nb):
    z2, loss2 = worked_example(nb, False)[4:]
    assert not lesson_number("z2_with_zero_grad", z2), ("worked example: without zero_grad() the gradients "
                                                        "must add up, but the second step used only the new "
                                                        "one: step() must not clear p.grad")
    assert lesson_number("z2_without_zero_grad", z2) and lesson_number("loss2_without_zero_grad", loss2), (
        f"worked example: without zero_grad() the second step gave z = {z2:.4g}, loss = {loss2:.4g}, not the "
        "numbers of section 8")


def test_network_records_18_nodes_and_1_under_no_grad(nb):
    cause = layers_cause(nb, drawn=True)
    assert not cause, cause
    rng = np.random.default_rng(0)
    model = mlp(nb, (2, 16, 16, 2), rng)
    x = nb.Tensor(rng.normal(size=(4, 2)))
    recorded = model(x)
    with block(nb):
        quiet = model(x)
    nodes = graph(recorded)
    leaves = {"x": x, **{f"layers[{i}].{name}": getattr(model.layers[i], name) for i in (0, 2, 4)
                         for name in ("weight", "bias")}}
    missing = [name for name, leaf in leaves.items() if id(leaf) not in nodes]
    assert not missing, (f"the 2-16-16-2 forward pass recorded no node for {', '.join(missing)}: each layer must "
                         "compute with Tensor operations on x, self.weight and self.bias (not on their .data)")
    assert len(nodes) >= 18, (f"the 2-16-16-2 forward pass recorded {len(nodes)} nodes, expected 18: the input, "
                              "6 Parameters, and three results per Linear (W.T, x @ W.T, + b), one per ReLU")
    assert len(graph(quiet)) == 1, (f"under no_grad() the output still has a graph of {len(graph(quiet))} "
                                    "nodes, expected 1 (no parents)")
    assert np.allclose(quiet.data, recorded.data), "under no_grad() the network gave other outputs than with " \
                                                   "recording on"


def test_shared_parameter_is_listed_once_and_moved_once(nb):
    cause = layers_cause(nb, drawn=True)
    assert not cause, cause
    rng = np.random.default_rng(8)
    l1, l2 = nb.Linear(3, 3, rng), nb.Linear(3, 3, rng)
    l2.weight = l1.weight
    model = nb.Sequential(l1, nb.ReLU(), l2)
    params = list(model.parameters())
    times = sum(p is l1.weight for p in params)
    cause = causes.not_parameters(facts.kinds_of(params, nb.Parameter, nb.Module))
    cause = cause or (facts.kept_list(model, nb.Parameter) if len(params) != 3 else "")
    assert not cause, cause
    assert len(params) == 3, (f"parameters() of two layers sharing a weight listed it {times} times among "
                              f"{len(params)} entries, expected once among 3 (the shared weight once, two biases)")
    optimizer = sgd(nb, params, 0.1)  # the list is right: what SGD(...) kept of it (test_step.sgd says)
    zeroed(nb, optimizer, params)
    model(nb.Tensor(rng.normal(size=(5, 3)))).sum().backward()
    three = [l1.weight, l1.bias, l2.bias]  # all three first (a step() that moved only some), then the shared weight
    before, grads = [p.data.copy() for p in three], [p.grad.copy() for p in three]
    optimizer.step()
    assert np.allclose(l1.weight.data, before[0] - 0.1 * grads[0]), causes.step_move(
        before, [p.data for p in three], grads, 0.1, grads_after=[p.grad for p in three]) or causes.step_move(
        before[:1], [l1.weight.data], grads[:1], 0.1, what="the shared weight", grads_after=[l1.weight.grad]) or (
        "one step should move the shared weight once by -lr * grad (its grad already holds both uses)")
    assert l2.weight is l1.weight, "the two layers no longer share one weight after step()"


# Every check here first names a class a later cell defined again (the numbers come from that copy).
for _name, _check in list(globals().items()):
    if _name.startswith("test_"):
        globals()[_name] = facts.noting_copies(_check)
