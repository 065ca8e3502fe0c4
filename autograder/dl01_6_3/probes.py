"""Probes for the hidden tests of dl01_6_3.

Every probe runs inside the sandbox's child process: it takes the notebook's namespace `ns`
and plain keyword arguments (sizes, seeds, learning rates), drives the notebook's classes and
returns plain data only (lists, numbers, booleans, strings), which the test compares in the parent.

Each probe calls only the stub its suite grades; everything else it needs (zeroing gradients,
collecting parameters by hand) it does itself, so that one wrong stub costs one suite.
"""
import numpy as np


def _plain(values):
    return np.asarray(values, dtype=float).tolist()


def _array_or_none(values):
    """The values as a nested list, or None when they are not numbers (e.g. a grad set to None)."""
    try:
        return _plain(values)
    except (TypeError, ValueError):
        return None


def _graph_ids(output):
    """The ids of every tensor in the graph behind `output`, output included."""
    seen, stack = {id(output)}, [output]
    while stack:
        for parent in stack.pop().parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    return seen


def _count_nodes(output):
    return len(_graph_ids(output))


def _linear_layers(model):
    """The Linear layers of a Sequential, in order (found without calling parameters())."""
    return [layer for layer in model.layers if hasattr(layer, "weight")]


def _by_hand(model):
    """A Sequential's parameters collected by hand, so a probe need not call parameters()."""
    return [p for layer in _linear_layers(model) for p in (layer.weight, layer.bias)]


def _mlp(ns, widths, rng):
    layers = []
    for n_in, n_out in zip(widths[:-1], widths[1:]):
        layers += [ns["Linear"](n_in, n_out, rng), ns["ReLU"]()]
    return ns["Sequential"](*layers[:-1])


# ---------------------------------------------------------------- parameters

class _Registry:
    """The tensors a case creates, numbered; parameters() answers are reported as these numbers."""

    def __init__(self, ns, rng):
        self.ns, self.rng, self.items = ns, rng, []

    def add(self, tensor):
        if not any(tensor is item for item in self.items):
            self.items.append(tensor)
        return tensor

    def parameter(self, *shape):
        return self.add(self.ns["Parameter"](self.rng.normal(size=shape)))

    def linear(self, n_in, n_out):
        layer = self.ns["Linear"](n_in, n_out, self.rng)
        self.add(layer.weight)
        self.add(layer.bias)
        return layer

    def box(self, **attributes):
        module = self.ns["Module"]()
        for name, value in attributes.items():
            setattr(module, name, value)
        return module

    def pattern(self, found):
        """Registry number of each object found (-1 for an object the case did not create)."""
        return [next((i for i, item in enumerate(self.items) if item is p), -1) for p in found]


def _widths(rng, depth):
    return [int(n) for n in rng.integers(1, 7, size=depth + 1)]


def _build_case(reg, case):
    rng, ns = reg.rng, reg.ns
    if case == "linear":
        n_in, n_out = _widths(rng, 1)
        return reg.linear(n_in, n_out)
    if case == "relu":
        return ns["ReLU"]()
    if case == "nested":
        depth = int(rng.integers(2, 5))
        befores = [reg.parameter(int(rng.integers(1, 4))) for _ in range(depth)]
        module = reg.box(core=reg.parameter(2, 2))
        afters = [reg.parameter(int(rng.integers(1, 4))) for _ in range(depth)]
        for before, after in zip(reversed(befores), afters):
            module = reg.box(before=before, child=module, after=after)
        return module
    if case == "sequential":
        widths = _widths(rng, int(rng.integers(2, 5)))
        layers = []
        for n_in, n_out in zip(widths[:-1], widths[1:]):
            layers += [reg.linear(n_in, n_out), ns["ReLU"]()]
        return ns["Sequential"](*layers[:-1])
    if case == "list_of_modules":
        a, b, c = _widths(rng, 2)
        inner = ns["Sequential"](reg.linear(c, a))
        return reg.box(blocks=[reg.linear(a, b), ns["ReLU"](), reg.linear(b, c), inner])
    if case == "list_of_parameters":
        head = reg.parameter(2)
        gains = [reg.parameter(int(n)) for n in rng.integers(1, 5, size=3)]
        return reg.box(head=head, gains=gains, tail=reg.linear(*_widths(rng, 1)))
    if case == "shared_weight":
        n = int(rng.integers(2, 6))
        first, second = reg.linear(n, n), reg.linear(n, n)
        second.weight = first.weight
        return ns["Sequential"](first, ns["ReLU"](), second, ns["ReLU"](), reg.linear(n, 2))
    if case == "shared_layer":
        n = int(rng.integers(2, 6))
        layer = reg.linear(n, n)
        return ns["Sequential"](layer, ns["ReLU"](), layer, ns["ReLU"](), reg.linear(n, 1))
    if case == "shared_in_list":
        p, q = reg.parameter(3), reg.parameter(2)
        return reg.box(p=p, group=[q, p, q], again=reg.box(p=p))
    if case == "mixed_attributes":
        plain = reg.add(ns["Tensor"](rng.normal(size=3)))
        w = reg.parameter(2, 2)
        other = reg.add(ns["Tensor"](rng.normal(size=2)))
        return reg.box(x=plain, count=3, name="net", table=np.ones(2), w=w, nothing=None,
                       mixed=[1, "two", other, None], empty=[], rng=rng)
    raise ValueError(f"unknown case {case!r}")


def parameter_pattern(ns, case, seed):
    """Which of the case's tensors list(root.parameters()) returns, in its order."""
    reg = _Registry(ns, np.random.default_rng(seed))
    root = _build_case(reg, case)
    found = root.parameters()
    if found is None:
        return {"returned_none": True}
    found = list(found)
    return {
        "returned_none": False,
        "pattern": reg.pattern(found),
        "plain_tensors": [i for i, item in enumerate(reg.items) if not isinstance(item, ns["Parameter"])],
        "shapes": [list(np.shape(getattr(p, "data", p))) for p in found],
    }


def parameter_pattern_repeated(ns, seed):
    """parameters() called on model A, on A again, then on a second model B (patterns in one registry)."""
    reg = _Registry(ns, np.random.default_rng(seed))
    first, second = _build_case(reg, "sequential"), _build_case(reg, "list_of_parameters")
    calls = [first, first, second]
    return {"patterns": [reg.pattern(list(model.parameters() or [])) for model in calls]}


def parameter_count(ns, widths, seed=0):
    """Total size and the shapes, in order, of the parameters of an MLP with the given widths."""
    found = list(_mlp(ns, widths, np.random.default_rng(seed)).parameters())
    return {"count": int(sum(np.size(p.data) for p in found)),
            "shapes": [list(np.shape(p.data)) for p in found]}


# ---------------------------------------------------------------- forward

def linear_forward(ns, n_in, n_out, batch, seed, weight=None, bias=None, x=None, zero_weight=False):
    """Linear.forward called directly on set weights; the output, and the grads of a weighted sum of it."""
    rng = np.random.default_rng(seed)
    layer = ns["Linear"](n_in, n_out, np.random.default_rng(seed + 1000))  # its own draws: weights are set below
    w = np.asarray(weight, dtype=float) if weight is not None else rng.normal(size=(n_out, n_in))
    b = np.asarray(bias, dtype=float) if bias is not None else rng.normal(size=n_out)
    x_data = np.asarray(x, dtype=float) if x is not None else rng.normal(size=(batch, n_in))
    if zero_weight:
        w = np.zeros_like(w)
    upstream = rng.normal(size=(x_data.shape[0], n_out))
    layer.weight, layer.bias = ns["Parameter"](w.copy()), ns["Parameter"](b.copy())
    x_tensor = ns["Tensor"](x_data.copy())
    result = {"weight": _plain(w), "bias": _plain(b), "x": _plain(x_data),
              "upstream": _plain(upstream), "error": None}
    try:
        out = layer.forward(x_tensor)
    except ValueError as error:
        result["error"] = f"ValueError: {' '.join(str(error).split())}"
        return result
    result.update(
        is_tensor=isinstance(out, ns["Tensor"]),
        shape=list(np.shape(getattr(out, "data", out))),
        data=_array_or_none(getattr(out, "data", out)),
        unchanged=bool(np.array_equal(layer.weight.data, w) and np.array_equal(layer.bias.data, b)
                       and np.array_equal(x_tensor.data, x_data)),
        weight_grad=None, bias_grad=None, x_grad=None,
    )
    if result["is_tensor"] and out.shape == upstream.shape:
        (out * ns["Tensor"](upstream)).sum().backward()
        result.update(weight_grad=_plain(layer.weight.grad), bias_grad=_plain(layer.bias.grad),
                      x_grad=_plain(x_tensor.grad))
    return result


# ---------------------------------------------------------------- zero_grad

def _parameters_with_grads(ns, shapes, rng):
    params = [ns["Parameter"](rng.normal(size=shape)) for shape in shapes]
    for p in params:
        p.grad = rng.normal(size=p.shape)
    return params


def zero_grad_effect(ns, shapes, seed):
    """Parameters built by hand, grads set by hand, then SGD(params).zero_grad() once."""
    rng = np.random.default_rng(seed)
    params = _parameters_with_grads(ns, shapes, rng)
    data = [p.data.copy() for p in params]
    optimizer = ns["SGD"](params, lr=0.1)
    optimizer.zero_grad()
    return {
        "grads": [_array_or_none(p.grad) for p in params],
        "grad_is_array": [isinstance(p.grad, np.ndarray) for p in params],
        "grad_shapes": [list(np.shape(p.grad)) for p in params],
        "data_unchanged": [bool(np.array_equal(p.data, d)) for p, d in zip(params, data)],
        "same_objects": len(optimizer.params) == len(params)
                        and all(a is b for a, b in zip(optimizer.params, params)),
    }


def zero_grad_then_backward(ns, widths, batch, seed, calls=1):
    """A model's grads from one backward pass; then zero_grad() and the same backward pass again."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng)
    params = _by_hand(model)
    optimizer = ns["SGD"](params, lr=0.1)
    x, labels = ns["Tensor"](rng.normal(size=(batch, widths[0]))), rng.integers(0, widths[-1], size=batch)
    ns["cross_entropy"](model(x), labels).backward()
    first = [_plain(p.grad) for p in params]
    for _ in range(calls):
        optimizer.zero_grad()
    cleared = [bool(np.all(np.asarray(p.grad) == 0)) for p in params]
    ns["cross_entropy"](model(x), labels).backward()
    return {"first": first, "cleared": cleared, "second": [_plain(p.grad) for p in params]}


# ---------------------------------------------------------------- step

def step_effect(ns, shapes, lr, seed, steps=1):
    """Parameters built by hand; before each step the probe sets every grad by hand (no zero_grad)."""
    rng = np.random.default_rng(seed)
    params = [ns["Parameter"](rng.normal(size=shape)) for shape in shapes]
    optimizer = ns["SGD"](params, lr=lr)
    start, grads_used, data, grads_after = [_plain(p.data) for p in params], [], [], []
    for _ in range(steps):
        grads = [rng.normal(size=p.shape) for p in params]
        for p, g in zip(params, grads):
            p.grad = g.copy()
        optimizer.step()
        grads_used.append([_plain(g) for g in grads])
        data.append([_plain(p.data) for p in params])
        grads_after.append([_array_or_none(p.grad) for p in params])
    held = list(optimizer.params)
    return {
        "start": start, "grads_used": grads_used, "data": data, "grads_after": grads_after,
        "same_objects": len(held) == len(params) and all(a is b for a, b in zip(held, params)),
        "all_parameters": all(isinstance(p, ns["Parameter"]) for p in params + held),
        "no_parents": all(not getattr(p, "parents", ()) and getattr(p, "backward_fn", None) is None
                          for p in params + held),
    }


def step_moves_model(ns, widths, batch, lr, seed, steps=2):
    """Train a model for a few steps; grads are zeroed by the probe itself, params collected by hand."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng)
    params = _by_hand(model)
    optimizer = ns["SGD"](params, lr=lr)
    x, labels = ns["Tensor"](rng.normal(size=(batch, widths[0]))), rng.integers(0, widths[-1], size=batch)
    outputs, nodes = [_plain(model(x).data)], [_count_nodes(model(x))]
    for _ in range(steps):
        for p in params:
            p.grad = np.zeros_like(p.data)
        ns["cross_entropy"](model(x), labels).backward()
        optimizer.step()
        out = model(x)
        outputs.append(_plain(out.data))
        nodes.append(_count_nodes(out))
    return {"outputs": outputs, "nodes": nodes,
            "model_holds_parameters": all(isinstance(p, ns["Parameter"]) and not p.parents
                                          for p in _by_hand(model))}


def _worked_example(ns, zero_between, by_hand):
    """The lesson's Linear(2, 1) example (weight (0.5, -1), bias 0.2, x = (1, 2), y = 1, lr = 0.1), two steps.

    by_hand: collect the parameters and zero their grads in the probe (the step suite); otherwise
    use the notebook's parameters() and zero_grad() (the lesson-numbers suite).
    """
    layer = ns["Linear"](2, 1, np.random.default_rng(0))
    layer.weight, layer.bias = ns["Parameter"](np.array([[0.5, -1.0]])), ns["Parameter"](np.array([0.2]))
    params = [layer.weight, layer.bias] if by_hand else layer.parameters()
    optimizer = ns["SGD"](params, lr=0.1)
    x = ns["Tensor"](np.array([[1.0, 2.0]]))
    z_values, losses = [], []

    def loss():
        z = layer(x)
        value = ((z - 1.0) ** 2).sum()
        z_values.append(float(z.data.sum()))
        losses.append(float(value.data))
        return value

    def clear():
        if by_hand:
            for p in (layer.weight, layer.bias):
                p.grad = np.zeros_like(p.data)
        else:
            optimizer.zero_grad()

    for step in range(2):
        current = loss()
        if zero_between or step == 0:
            clear()
        current.backward()
        optimizer.step()
    loss()
    return {"z": z_values, "loss": losses}


def step_worked_example(ns, zero_between):
    """The worked example with the notebook's step(); the probe zeroes the grads itself when asked."""
    return _worked_example(ns, zero_between, by_hand=True)


# ---------------------------------------------------------------- no_grad

def no_grad_forward(ns, widths, batch, seed):
    """The same forward pass recorded, under no_grad(), and recorded again afterwards."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng)
    x = ns["Tensor"](rng.normal(size=(batch, widths[0])))
    Tensor = ns["Tensor"]
    Tensor.recording = True
    try:
        recorded = model(x)
        with ns["no_grad"]():
            quiet = model(x)
            inside = bool(Tensor.recording)
        again = model(x)
        return {
            "recorded_nodes": _count_nodes(recorded), "quiet_nodes": _count_nodes(quiet),
            "again_nodes": _count_nodes(again), "quiet_closure": quiet.backward_fn is not None,
            "recorded": _plain(recorded.data), "quiet": _plain(quiet.data),
            "inside": inside, "after": bool(Tensor.recording),
        }
    finally:
        Tensor.recording = True


def no_grad_states(ns, scenario):
    """Tensor.recording (and whether a small operation records parents) at points of a scenario."""
    Tensor, no_grad = ns["Tensor"], ns["no_grad"]
    a = Tensor(np.array([1.0, -2.0]))

    def state():
        return {"recording": bool(Tensor.recording), "records": bool((a * a + a).parents)}

    seen = {}
    Tensor.recording = True
    try:
        if scenario == "plain":
            seen["before"] = state()
            with no_grad():
                seen["inside"] = state()
            seen["after"] = state()
        elif scenario == "exception":
            seen["propagated"] = False
            try:
                with no_grad():
                    seen["inside"] = state()
                    raise KeyError("raised inside the block")
            except KeyError:
                seen["propagated"] = True
            seen["after"] = state()
        elif scenario == "nested":
            with no_grad():
                with no_grad():
                    seen["inner"] = state()
                seen["between"] = state()
            seen["after"] = state()
        elif scenario == "nested_exception":
            with no_grad():
                try:
                    with no_grad():
                        raise KeyError("raised in the inner block")
                except KeyError:
                    pass
                seen["between"] = state()
            seen["after"] = state()
        elif scenario == "already_off":
            Tensor.recording = False
            with no_grad():
                seen["inside"] = state()
            seen["after"] = state()
        else:
            raise ValueError(f"unknown scenario {scenario!r}")
        return seen
    finally:
        Tensor.recording = True


# ---------------------------------------------------------------- the lesson's numbers (all student code)

def lesson_worked_example(ns, zero_between):
    """The worked example with the notebook's parameters(), zero_grad() and step()."""
    return _worked_example(ns, zero_between, by_hand=False)


def lesson_graph(ns, widths, batch, seed):
    """Node counts of a forward pass recorded and under no_grad(), and whether every leaf is in the graph."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng)
    x = ns["Tensor"](rng.normal(size=(batch, widths[0])))
    recorded = model(x)
    with ns["no_grad"]():
        quiet = model(x)
    graph = _graph_ids(recorded)
    leaves = [x] + _by_hand(model)
    return {"recorded_nodes": len(graph), "quiet_nodes": _count_nodes(quiet),
            "leaves_in_graph": all(id(t) in graph for t in leaves),
            "recorded": _plain(recorded.data), "quiet": _plain(quiet.data)}


def lesson_shared(ns, n, batch, lr, seed):
    """Two square layers sharing one weight: what parameters() lists and how far one step moves the weight."""
    rng = np.random.default_rng(seed)
    first, second = ns["Linear"](n, n, rng), ns["Linear"](n, n, rng)
    second.weight = first.weight
    model = ns["Sequential"](first, ns["ReLU"](), second)
    params = list(model.parameters())
    optimizer = ns["SGD"](params, lr=lr)
    optimizer.zero_grad()
    (model(ns["Tensor"](rng.normal(size=(batch, n)))) * ns["Tensor"](rng.normal(size=(batch, n)))).sum().backward()
    before, grad = first.weight.data.copy(), first.weight.grad.copy()
    optimizer.step()
    return {"count": len(params), "shared_entries": sum(p is first.weight for p in params),
            "moved": _plain(before - first.weight.data), "lr_times_grad": _plain(lr * grad),
            "still_shared": second.weight is first.weight}


def lesson_training(ns, widths, batch, steps, lr, seed):
    """A training loop with everything from the notebook; losses per step and the final outputs under no_grad."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng)
    optimizer = ns["SGD"](model.parameters(), lr=lr)
    x, labels = ns["Tensor"](rng.normal(size=(batch, widths[0]))), rng.integers(0, widths[-1], size=batch)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ns["cross_entropy"](model(x), labels)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.data))
    with ns["no_grad"]():
        final = model(x)
    return {"losses": losses, "final": _plain(final.data), "final_nodes": _count_nodes(final)}
