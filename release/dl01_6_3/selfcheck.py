"""Self-checks for the Modules and SGD exercise.

Every test cell of the notebook runs `run_part("<part>", globals())`: it builds small
objects of its own, calls the function you wrote for that part and compares the result
with numbers worked out here with plain NumPy. One line is printed per check.
The grader runs more cases of the same kind, with other sizes, weights and learning rates.
"""
from dataclasses import dataclass
from typing import Callable

import numpy as np

from sandbox import describe_exception  # the same one-line reasons as the grader gives


class CheckFailed(AssertionError):
    """A check saw a wrong result (as opposed to your code raising an error)."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


@dataclass(frozen=True)
class Check:
    part: str
    name: str
    fn: Callable[[dict], None]


CHECKS: list[Check] = []

# The names each part needs from the notebook.
NEEDS = {
    "parameters": ("Tensor", "Parameter", "Module", "Linear", "ReLU", "Sequential"),
    "forward": ("Tensor", "Parameter", "Linear"),
    "zero_grad": ("Tensor", "Parameter", "SGD"),
    "step": ("Tensor", "Parameter", "SGD"),
    "no_grad": ("Tensor", "no_grad"),
    "lesson_numbers": ("Tensor", "Parameter", "Module", "Linear", "ReLU", "Sequential", "SGD", "no_grad"),
}


def check(part):
    """Register the decorated function as a check of `part`; its name is the check's name."""
    def register(fn):
        CHECKS.append(Check(part, fn.__name__, fn))
        return fn
    return register


# ---------------------------------------------------------------- small helpers

def _box(ns, **attributes):
    """A bare Module holding the given attributes, in the given order."""
    module = ns["Module"]()
    for name, value in attributes.items():
        setattr(module, name, value)
    return module


def _listed(module):
    found = module.parameters()
    expect(found is not None, "parameters() returned None: did you forget to return the list?")
    return list(found)


def _expect_parameters(ns, module, expected, missing_hint):
    """Compare list(module.parameters()) with `expected`, a dict name -> Parameter in the right order."""
    names = {id(p): name for name, p in expected.items()}
    found = _listed(module)
    for item in found:
        if id(item) in names:
            continue
        if isinstance(item, ns["Tensor"]) and not isinstance(item, ns["Parameter"]):
            raise CheckFailed("parameters() returned a plain Tensor: collect only attributes that are "
                              "instances of Parameter")
        if isinstance(item, ns["Parameter"]):
            raise CheckFailed("parameters() returned a Parameter that this module does not hold (a copy, or one "
                              "kept from an earlier call?): collect the module's own Parameter objects afresh "
                              "on every call")
        raise CheckFailed(f"parameters() returned a {type(item).__name__}: return the Parameter objects "
                          "themselves (not their .data)")
    got = [names[id(p)] for p in found]
    repeated = sorted({name for name in got if got.count(name) > 1})
    expect(not repeated, f"parameters() listed {', '.join(map(repr, repeated))} more than once: a Parameter "
                         "held in two places must be collected once (compare objects by identity, e.g. with a "
                         "set of id(p))")
    expect(len(got) == len(expected), f"parameters() found {got} but the module holds {list(expected)}: "
                                      + missing_hint)
    expect(got == list(expected), f"parameters() found the right Parameters in the wrong order {got}; "
                                  f"expected {list(expected)}, the order in which they were defined")


def _linear(ns, weight, bias):
    """A Linear layer whose weight and bias hold the given numbers."""
    weight = np.asarray(weight, dtype=float)
    layer = ns["Linear"](weight.shape[1], weight.shape[0], np.random.default_rng(0))
    layer.weight = ns["Parameter"](weight)
    layer.bias = ns["Parameter"](np.asarray(bias, dtype=float))
    return layer


def _forward(ns, layer, x):
    n_out, n_in = layer.weight.shape
    try:
        out = layer.forward(x)
    except ValueError:
        raise CheckFailed(f"Linear.forward raised ValueError (the shapes do not fit) on a "
                          f"layer with n_in={n_in}, n_out={n_out}: the weight is stored as (n_out, n_in), so "
                          "the layer computes x @ W.T + b") from None
    expect(isinstance(out, ns["Tensor"]), f"Linear.forward returned a {type(out).__name__}: build the result "
                                          "from x, self.weight and self.bias with Tensor operations")
    return out


def _parameters_with_grads(ns, seed=0):
    rng = np.random.default_rng(seed)
    params = [ns["Parameter"](rng.normal(size=shape)) for shape in [(2, 3), (3,), (1, 4)]]
    for p in params:
        p.grad = rng.normal(size=p.shape)
    return params


def _count_nodes(output):
    """How many tensors the graph behind `output` holds (output included)."""
    seen, stack = {id(output)}, [output]
    while stack:
        for parent in stack.pop().parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    return len(seen)


def _mlp(ns, widths, rng):
    layers = []
    for n_in, n_out in zip(widths[:-1], widths[1:]):
        layers += [ns["Linear"](n_in, n_out, rng), ns["ReLU"]()]
    return ns["Sequential"](*layers[:-1])


# ---------------------------------------------------------------- parameters

@check("parameters")
def lists_weight_then_bias_of_a_linear_layer(ns):
    layer = ns["Linear"](3, 2, np.random.default_rng(1))
    _expect_parameters(ns, layer, {"weight": layer.weight, "bias": layer.bias},
                       "look through the module's attributes (vars(self)) and collect every Parameter")


@check("parameters")
def finds_parameters_in_nested_modules(ns):
    P = ns["Parameter"]
    p0, p1, p2 = P(np.ones(2)), P(np.ones((2, 2))), P(np.ones(3))
    inner = _box(ns, w=p1)
    outer = _box(ns, first=p0, body=_box(ns, block=inner, scale=p2))
    _expect_parameters(ns, outer, {"first": p0, "body.block.w": p1, "body.scale": p2},
                       "when an attribute is a Module, add that module's own parameters() (recursion), "
                       "however deep it sits")


@check("parameters")
def searches_lists_of_modules_and_of_parameters(ns):
    rng = np.random.default_rng(2)
    l1, l2 = ns["Linear"](2, 3, rng), ns["Linear"](3, 1, rng)
    g1, g2 = ns["Parameter"](np.ones(3)), ns["Parameter"](np.ones(1))
    model = _box(ns, blocks=[l1, ns["ReLU"](), l2], gains=[g1, g2])
    _expect_parameters(ns, model, {"l1.weight": l1.weight, "l1.bias": l1.bias, "l2.weight": l2.weight,
                                   "l2.bias": l2.bias, "gains[0]": g1, "gains[1]": g2},
                       "when an attribute is a list, look at every item: a Parameter is collected and a "
                       "Module is asked for its parameters()")


@check("parameters")
def lists_a_shared_parameter_once(ns):
    rng = np.random.default_rng(3)
    l1, l2 = ns["Linear"](3, 3, rng), ns["Linear"](3, 3, rng)
    l2.weight = l1.weight
    model = ns["Sequential"](l1, ns["ReLU"](), l2)
    _expect_parameters(ns, model, {"shared weight": l1.weight, "l1.bias": l1.bias, "l2.bias": l2.bias},
                       "every Parameter must be found, the shared one once")


@check("parameters")
def ignores_plain_tensors_and_other_attributes(ns):
    T, P = ns["Tensor"], ns["Parameter"]
    w = P(np.ones(2))
    model = _box(ns, x=T(np.ones(2)), size=3, label="net", table=np.ones(2), w=w, nothing=None,
                 mixed=[1, "two", T(np.zeros(1))])
    _expect_parameters(ns, model, {"w": w}, "collect the attribute that is a Parameter")


@check("parameters")
def gives_a_fresh_list_on_every_call(ns):
    rng = np.random.default_rng(4)
    first, second = ns["Linear"](2, 2, rng), ns["Linear"](2, 2, rng)
    hint = ("a list that outlives the call (a default argument such as found=[] or a class attribute) "
            "keeps what earlier calls collected; start from an empty list on every call")
    for model in (first, first, second):
        _expect_parameters(ns, model, {"weight": model.weight, "bias": model.bias}, hint)


# ---------------------------------------------------------------- forward

@check("forward")
def returns_a_tensor_of_shape_batch_by_n_out(ns):
    layer = _linear(ns, np.ones((2, 3)), np.zeros(2))
    out = _forward(ns, layer, ns["Tensor"](np.ones((4, 3))))
    expect(out.shape == (4, 2), f"Linear(3, 2).forward on a (4, 3) input returned shape {out.shape}, "
                                "expected (4, 2): one row per example, one column per output")


@check("forward")
def computes_x_times_weight_transposed_plus_bias(ns):
    rng = np.random.default_rng(5)
    w, b, x = rng.normal(size=(2, 3)), rng.normal(size=2), rng.normal(size=(4, 3))
    out = _forward(ns, _linear(ns, w, b), ns["Tensor"](x))
    expect(out.shape == (4, 2), f"Linear(3, 2).forward on a (4, 3) input returned shape {out.shape}, "
                                "expected (4, 2)")
    expect(not np.allclose(out.data, x @ w.T), "Linear.forward returned x @ W.T without the bias: add self.bias")
    expect(np.allclose(out.data, x @ w.T + b), "Linear.forward returned wrong numbers: a layer computes "
                                               "x @ W.T + b, with W of shape (n_out, n_in)")


@check("forward")
def adds_the_bias_to_every_row(ns):
    bias = np.array([1.0, -2.0])
    out = _forward(ns, _linear(ns, np.zeros((2, 3)), bias), ns["Tensor"](np.ones((3, 3))))
    expect(out.shape == (3, 2) and np.allclose(out.data, bias),
           f"with a zero weight every row of the output should equal the bias {bias.tolist()}, got "
           f"{np.round(out.data, 3).tolist()}: add self.bias to x @ W.T")


@check("forward")
def uses_the_transposed_weight_on_a_square_layer(ns):
    w, b = np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([0.5, -0.5])
    x = np.array([[1.0, 3.0]])
    out = _forward(ns, _linear(ns, w, b), ns["Tensor"](x))
    expect(not np.allclose(out.data, x @ w + b),
           "Linear.forward computed x @ W + b: the weight is stored as (n_out, n_in), so the layer computes "
           "x @ W.T + b (with n_in == n_out the shapes fit either way, only the numbers show it)")
    expect(np.allclose(out.data, x @ w.T + b), f"Linear.forward gave {np.round(out.data, 3).tolist()} on a "
                                               f"square layer, expected {(x @ w.T + b).tolist()}")


@check("forward")
def lets_gradients_reach_weight_bias_and_input(ns):
    rng = np.random.default_rng(6)
    w, b = rng.normal(size=(2, 3)), rng.normal(size=2)
    x_data, upstream = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    layer = _linear(ns, w, b)
    x = ns["Tensor"](x_data)
    (_forward(ns, layer, x) * ns["Tensor"](upstream)).sum().backward()
    for name, got, want in [("self.weight", layer.weight.grad, upstream.T @ x_data),
                            ("self.bias", layer.bias.grad, upstream.sum(axis=0)),
                            ("the input x", x.grad, upstream @ w)]:
        expect(np.any(got != 0), f"after backward no gradient reached {name}: compute the output with Tensor "
                                 "operations on x, self.weight and self.bias (not on their .data)")
        expect(np.shape(got) == want.shape and np.allclose(got, want),
               f"after backward the gradient of {name} is wrong: the output must be x @ self.weight.T + self.bias")


# ---------------------------------------------------------------- zero_grad

@check("zero_grad")
def sets_every_grad_to_zero(ns):
    params = _parameters_with_grads(ns)
    ns["SGD"](params, lr=0.1).zero_grad()
    cleared = [bool(np.all(np.asarray(p.grad) == 0)) for p in params]
    expect(any(cleared), "zero_grad() left every gradient as it was: set p.grad to zeros for each p in self.params")
    expect(all(cleared), f"zero_grad() cleared only some of the gradients ({sum(cleared)} of {len(params)}): "
                         "loop over every parameter (is a return inside the loop?)")


@check("zero_grad")
def keeps_each_grad_an_array_of_the_parameter_shape(ns):
    params = _parameters_with_grads(ns)
    ns["SGD"](params, lr=0.1).zero_grad()
    for p in params:
        expect(isinstance(p.grad, np.ndarray) and p.grad.shape == p.shape,
               f"after zero_grad() a Parameter of shape {p.shape} has grad {type(p.grad).__name__} of shape "
               f"{np.shape(p.grad)}: use an array of zeros shaped like p.data (np.zeros_like(p.data))")


@check("zero_grad")
def leaves_the_data_alone(ns):
    params = _parameters_with_grads(ns)
    before = [p.data.copy() for p in params]
    ns["SGD"](params, lr=0.1).zero_grad()
    expect(all(np.array_equal(p.data, old) for p, old in zip(params, before)),
           "zero_grad() changed p.data: it clears p.grad only, the values stay")


@check("zero_grad")
def lets_the_next_backward_start_from_zero(ns):
    params = _parameters_with_grads(ns)
    rng = np.random.default_rng(7)
    factors = [rng.normal(size=p.shape) for p in params]
    ns["SGD"](params, lr=0.1).zero_grad()
    loss = sum(((p * ns["Tensor"](c)).sum() for p, c in zip(params, factors)), ns["Tensor"](0.0))
    loss.backward()
    expect(all(np.allclose(p.grad, c) for p, c in zip(params, factors)),
           "after zero_grad() and one backward pass the gradients still contain old values: zero_grad() "
           "must clear the grad of the very Parameters held in self.params")


# ---------------------------------------------------------------- step

@check("step")
def moves_every_parameter_by_minus_lr_times_grad(ns):
    params = _parameters_with_grads(ns)
    before, grads = [p.data.copy() for p in params], [p.grad.copy() for p in params]
    ns["SGD"](params, lr=0.25).step()
    after = [np.asarray(p.data) for p in params]

    def moved_by(rate):
        return [np.allclose(a, old - rate * g) for a, old, g in zip(after, before, grads)]

    expect(not all(moved_by(0)), "step() left the Parameters where they were: change p.data in place, "
                                 "p.data -= self.lr * p.grad")
    expect(not any(moved_by(0)), "step() moved only some of the parameters: loop over every p in self.params "
                                 "(is a return inside the loop?)")
    expect(not all(moved_by(-0.25)), "step() moved the Parameters up the gradient: subtract self.lr * p.grad")
    expect(not all(moved_by(0.1)) and not all(moved_by(0.01)),
           "step() did not use the learning rate given to the optimizer: use self.lr")
    expect(all(moved_by(0.25)), "step() moved the Parameters by the wrong amount: each p.data should lose "
                                "self.lr * p.grad")


@check("step")
def changes_data_in_place_on_the_same_objects(ns):
    params = _parameters_with_grads(ns)
    before = [p.data.copy() for p in params]
    optimizer = ns["SGD"](params, lr=0.1)
    optimizer.step()
    expect(all(mine is theirs for mine, theirs in zip(params, optimizer.params)) and len(optimizer.params) == 3,
           "step() replaced the objects in self.params: keep the same Parameters and change their .data")
    expect(not any(np.array_equal(p.data, old) for p, old in zip(params, before)),
           "step() must change p.data in place: after step() the Parameter held by the model did not move; "
           "did you write p = p - lr * p.grad?")


@check("step")
def adds_no_graph_nodes(ns):
    params = _parameters_with_grads(ns)
    optimizer = ns["SGD"](params, lr=0.1)
    optimizer.step()
    for p in list(params) + list(optimizer.params):
        expect(isinstance(p, ns["Parameter"]) and not p.parents and p.backward_fn is None,
               "after step() a parameter is a graph node with parents: the update is not part of the model, "
               "so do it on the array (p.data -= self.lr * p.grad), not with Tensor operations")


@check("step")
def leaves_the_gradients_alone(ns):
    params = _parameters_with_grads(ns)
    grads = [p.grad.copy() for p in params]
    ns["SGD"](params, lr=0.1).step()
    expect(all(np.array_equal(p.grad, g) for p, g in zip(params, grads)),
           "step() changed p.grad: clearing gradients is zero_grad()'s job, step() only moves p.data")


@check("step")
def keeps_moving_the_same_objects_over_two_steps(ns):
    params = _parameters_with_grads(ns)
    start, first = [p.data.copy() for p in params], [p.grad.copy() for p in params]
    optimizer = ns["SGD"](params, lr=0.5)
    optimizer.step()
    second = [np.full(p.shape, 2.0) for p in params]
    total = [g1 + g2 for g1, g2 in zip(first, second)]
    for p, g in zip(params, second):
        p.grad = g
    optimizer.step()
    expect(all(np.allclose(p.data, s - 0.5 * t) for p, s, t in zip(params, start, total)),
           "over two steps the Parameters did not move by -lr * grad each time: the optimizer must keep "
           "updating the very objects it was given")


# ---------------------------------------------------------------- no_grad

@check("no_grad")
def records_no_parents_inside_the_block(ns):
    T = ns["Tensor"]
    a, b = T(np.array([1.0, 2.0])), T(np.array([3.0, -1.0]))
    with ns["no_grad"]():
        c = (a * b + a).relu()
    expect(not c.parents and c.backward_fn is None,
           "an operation inside `with no_grad():` still recorded its parents: set Tensor.recording = False "
           "when the block starts")


@check("no_grad")
def computes_the_same_values(ns):
    T = ns["Tensor"]
    a, b = T(np.array([1.0, 2.0])), T(np.array([3.0, -1.0]))
    with ns["no_grad"]():
        inside = (a * b + a).relu().data.copy()
    expect(np.allclose(inside, [4.0, 0.0]), f"inside no_grad() the operations gave {inside.tolist()}, "
                                            "expected [4.0, 0.0]: no_grad() changes what is recorded, not the values")


@check("no_grad")
def records_again_after_the_block(ns):
    T = ns["Tensor"]
    with ns["no_grad"]():
        pass
    expect(T.recording is True, "after a no_grad() block Tensor.recording is still off: restore it when the "
                                "block ends")
    a = T(np.array([1.0]))
    expect(len((a * a).parents) == 2, "after a no_grad() block operations record no graph: restore "
                                      "Tensor.recording when the block ends")


@check("no_grad")
def restores_recording_after_an_exception(ns):
    T = ns["Tensor"]
    escaped = False
    try:
        with ns["no_grad"]():
            raise ValueError("raised inside the block")
    except ValueError:
        escaped = True
    expect(escaped, "no_grad() swallowed an exception raised inside the block: let it through (use try/finally, "
                    "not except)")
    expect(T.recording is True, "after an exception inside a no_grad() block Tensor.recording stayed off: "
                                "restore it in a finally clause around the yield")


@check("no_grad")
def restores_the_previous_value_when_nested(ns):
    T, no_grad = ns["Tensor"], ns["no_grad"]
    with no_grad():
        with no_grad():
            inside = T.recording
        inner_left = T.recording
    expect(inside is False, "inside no_grad() Tensor.recording was still on: switch it off when the block starts")
    expect(inner_left is False, "after an inner no_grad() block ended inside an outer one, recording was back "
                                "on: restore the value Tensor.recording had before the block, not True")
    expect(T.recording is True, "after two nested no_grad() blocks ended, Tensor.recording is not True: restore "
                                "the previous value on exit")


# ---------------------------------------------------------------- the lesson's numbers

def _worked_example(ns, zero_before_second_step):
    """Linear(2, 1), weight (0.5, -1), bias 0.2, x = (1, 2), y = 1, squared error, lr = 0.1; two steps."""
    layer = _linear(ns, [[0.5, -1.0]], [0.2])
    x = ns["Tensor"](np.array([[1.0, 2.0]]))
    optimizer = ns["SGD"](layer.parameters(), lr=0.1)
    numbers = []

    def forward():
        z = layer(x)
        loss = ((z - 1.0) ** 2).sum()
        numbers.extend([float(z.data.sum()), float(loss.data)])
        return loss

    optimizer.zero_grad()
    forward().backward()
    optimizer.step()
    loss = forward()
    if zero_before_second_step:
        optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    forward()
    return numbers  # z0, loss0, z1, loss1, z2, loss2


@check("lesson_numbers")
def counts_354_and_2410_parameters(ns):
    for widths, want in [((2, 16, 16, 2), 354), ((64, 32, 10), 2410)]:
        count = sum(p.data.size for p in _listed(_mlp(ns, widths, np.random.default_rng(0))))
        expect(count == want, f"a {'-'.join(map(str, widths))} network has {want} parameters, parameters() "
                              f"gave {count}")


@check("lesson_numbers")
def worked_example_first_step_takes_the_loss_from_5_29_to_0_2116(ns):
    z0, loss0, z1, loss1 = _worked_example(ns, True)[:4]
    expect(np.isclose(loss0, 5.29), f"worked example: the first loss should be 5.29 (z = -1.3), got {loss0:.4g}")
    expect(np.isclose(z1, 1.46) and np.isclose(loss1, 0.2116),
           f"worked example: after one step z should be 1.46 and the loss 0.2116, got z = {z1:.4g}, "
           f"loss = {loss1:.4g}")


@check("lesson_numbers")
def worked_example_second_step_after_zero_grad_gives_0_908(ns):
    z2, loss2 = _worked_example(ns, True)[4:]
    expect(not np.isclose(z2, 3.668), "worked example: with zero_grad() the second step still used the first "
                                      "gradient (z = 3.668): zero_grad() must clear every grad")
    expect(np.isclose(z2, 0.908) and np.isclose(loss2, 0.008464),
           f"worked example: with zero_grad() the second step should give z = 0.908 and loss 0.0085, "
           f"got z = {z2:.4g}, loss = {loss2:.4g}")


@check("lesson_numbers")
def worked_example_second_step_without_zero_grad_gives_3_668(ns):
    z2, loss2 = _worked_example(ns, False)[4:]
    expect(not np.isclose(z2, 0.908), "worked example: without zero_grad() the gradients must add up, but the "
                                      "second step used only the new one: step() must not clear p.grad")
    expect(np.isclose(z2, 3.668) and np.isclose(loss2, 2.668 ** 2),
           f"worked example: without zero_grad() the second step should give z = 3.668 and loss about 7.12, "
           f"got z = {z2:.4g}, loss = {loss2:.4g}")


@check("lesson_numbers")
def network_records_18_nodes_and_1_under_no_grad(ns):
    rng = np.random.default_rng(0)
    model = _mlp(ns, (2, 16, 16, 2), rng)
    x = ns["Tensor"](rng.normal(size=(4, 2)))
    recorded = model(x)
    with ns["no_grad"]():
        quiet = model(x)
    nodes = _count_nodes(recorded)
    expect(nodes >= 18, f"the 2-16-16-2 forward pass recorded {nodes} nodes, expected 18 (the input, 6 "
                        "Parameters and 11 results): every layer must use Tensor operations")
    expect(_count_nodes(quiet) == 1, f"under no_grad() the output still has a graph of {_count_nodes(quiet)} "
                                     "nodes, expected 1 (no parents)")
    expect(np.allclose(quiet.data, recorded.data), "under no_grad() the network gave other outputs than with "
                                                   "recording on")


@check("lesson_numbers")
def shared_parameter_is_listed_once_and_moved_once(ns):
    rng = np.random.default_rng(8)
    l1, l2 = ns["Linear"](3, 3, rng), ns["Linear"](3, 3, rng)
    l2.weight = l1.weight
    model = ns["Sequential"](l1, ns["ReLU"](), l2)
    params = _listed(model)
    expect(len(params) == 3, f"parameters() of two layers sharing a weight gave {len(params)} entries, "
                             "expected 3 (the shared weight once, two biases)")
    optimizer = ns["SGD"](params, lr=0.1)
    optimizer.zero_grad()
    model(ns["Tensor"](rng.normal(size=(5, 3)))).sum().backward()
    before, grad = l1.weight.data.copy(), l1.weight.grad.copy()
    optimizer.step()
    expect(np.allclose(l1.weight.data, before - 0.1 * grad),
           "one step should move the shared weight once by -lr * grad (its grad already holds both uses)")
    expect(l2.weight is l1.weight, "the two layers no longer share one weight after step()")


# ---------------------------------------------------------------- running

def run_check(ns, part, name):
    """Run one check on the namespace `ns`; returns {"passed": bool, "message": str}."""
    (chosen,) = [c for c in CHECKS if c.part == part and c.name == name]
    missing = [n for n in NEEDS[part] if n not in ns]
    if missing:
        return {"passed": False, "message": f"{', '.join(missing)} not defined: run the cells above first"}
    tensor = ns["Tensor"]
    recording = getattr(tensor, "recording", True)
    try:
        chosen.fn(ns)
    except CheckFailed as failure:
        return {"passed": False, "message": str(failure)}
    except Exception as error:
        return {"passed": False, "message": describe_exception(error)}
    finally:
        tensor.recording = recording  # a broken no_grad() must not switch recording off for later cells
    return {"passed": True, "message": ""}


def run_part(part, ns):
    """Run every check of `part`, print one line each, and raise if any failed."""
    checks = [c for c in CHECKS if c.part == part]
    if not checks:
        raise ValueError(f"unknown part {part!r}; the parts are {sorted(NEEDS)}")
    failed = 0
    for c in checks:
        result = run_check(ns, part, c.name)
        print(f"PASS {c.name}" if result["passed"] else f"FAIL {c.name}: {result['message']}")
        failed += not result["passed"]
    if failed:
        raise AssertionError(f"{failed} of {len(checks)} checks failed for {part}; see the lines above") from None
