"""Probes for the hidden tests of dl01_6_3.

Every probe runs inside the sandbox's child process, next to the student's code, which may have
rewritten NumPy (np.allclose, np.array_equal, ...) before the probe runs. So a probe only drives the
notebook's classes and reports what it saw as raw data: arrays as nested lists, identity patterns
(which of the objects it made came back, by number), graph structures and plain facts (a type, a
flag). It compares nothing and checks no expected value: the tests do that in the grader's process.
Where a case has inputs (start values, gradients, inputs of a layer), the test makes them from its
seed and passes them in, so that nothing the student's process reports is trusted as an input.

Each probe calls only the stub its suite grades; everything else it needs (zeroing gradients,
collecting parameters by hand, a layer's forward pass) it does itself, so that one wrong stub costs one
suite. The grader runs a part with the student's cell for that part and the public release (blank stubs)
for every other cell, never the reference solution: a probe of one part must not need another part's stub.
Only the lesson-numbers probes use the notebook's own classes throughout (that part takes every cell from
the student).
"""
import functools
import sys
from typing import Any

import numpy as np

# ---------------------------------------------------------------- what each probe writes
# Each probe declares the form of its answer (`@_answers`), in the plain literals autograder/checks/answer_form.py
# reads in the grader's process before any check reads the answer: an answer in no such form is the notebook's
# doing (it rewrote what the probe sends back), named as such. The forms of what the helpers below write:
ARRAY = np.ndarray  # _plain's array, as the grader reads it back: a number, or nested lists of numbers
NUMBERS = (ARRAY, None)  # _array_or_none
INDEX = range(-1, 1 << 53)  # _number: a position among the objects, -1 for none of them
COUNT = range(0, 1 << 53)
RATE = (float, None)  # _rate
GRAPH = [[COUNT, ...], ...]  # _graph's rows
FACTS = [[bool, COUNT, bool], ...]  # _facts
KINDS = [[str, bool], ...]  # facts.kinds_of (_not_parameters)
SOME_KINDS = [[str, bool], [str, bool], ...]  # one or more: what makes a probe stop before it calls the optimizer
KEPT = {"defaults": [[str, str, str], ...], "same_list": bool,  # facts.kept_facts (_kept_list)
        "kept": [[str, str, ("class", "global", "self")], ...]}
KEY = (str, float, bool, None)  # a key of vars(): a str, or what a notebook put in __dict__ by hand
INIT = {"kinds": {"weight": str, "bias": str}, "order": [("weight", "bias"), ...],  # facts.init_facts (_init_facts)
        "attributes": [[KEY, str], ...], "drawn": [NUMBERS, NUMBERS]}
MADE = {"made_order": ([INDEX, ...], None), "made_lr": RATE, "made_others": bool, "made_one_shot": bool,
        "made_kind": str}  # _made
GIVEN: tuple = ({}, {"given": [INDEX, ...], "not_parameters": KINDS})  # _given
SEEN = {"values": [ARRAY, ...], "zeroed": [ARRAY, ...], "grads_before": [NUMBERS, ...],  # _zero_grad_seen
        "cleared": [NUMBERS, ...]}


def _holding(most):
    """_held's answer for a model of at most `most` Parameters (the probe made them: a total beyond is no count of
    theirs, and the checks build nothing from one)."""
    return {"held": range(0, most + 1), "total": range(0, most + 1), "kind": str, "one_shot": bool, **MADE}


def _stopped(held, given):
    """The answers of a probe that stops before it calls the optimizer, `held` what SGD(...) held once made (`given`:
    with what it was given, GIVEN): it kept objects that are not Parameters (made_others), or parameters() listed
    some (not_parameters), which zero_grad() would fail on and be named instead. The checks name either; an answer
    that says neither is the notebook's doing."""
    others = _joined({**held, "made_others": True, "none_grads": False}, GIVEN if given else {})
    listed = ({**held, "given": [INDEX, ...], "not_parameters": SOME_KINDS, "none_grads": False},) if given else ()
    return (*_ways(others), *listed)


def _ways(form):
    """The alternatives of `form` (a tuple of forms is any one of them), as a tuple."""
    return form if isinstance(form, tuple) else (form,)


def _joined(*forms):
    """Dict forms merged, each a dict or a tuple of dicts (any one of them): every way of taking one of each."""
    ways: list[dict] = [{}]
    for form in forms:
        ways = [{**way, **one} for way in ways for one in (form if isinstance(form, tuple) else (form,))]
    return ways[0] if len(ways) == 1 else tuple(ways)


def _answers(form):
    """The probe's answer is in `form` (a function of the call's arguments gives the form for that call)."""

    def declared(probe):
        @functools.wraps(probe)
        def started(ns, *args, **kwargs):
            # Each probe starts with recording on, as the engine starts and as each public check starts
            # (notebook_checks.run_check): a cell that left Tensor.recording off (a stray scratch line) or an earlier
            # probe's no_grad() is no fault of the method a probe grades. The engine's Tensor, which the given code
            # uses: the notebook's name Tensor may be rebound to anything (np.ndarray, for type hints: red-b16 5).
            tensor = getattr(sys.modules.get("engine"), "Tensor", None)
            if isinstance(tensor, type) and "recording" in vars(tensor):
                setattr(tensor, "recording", True)  # noqa: B010 - a class mypy knows only as a type
            return probe(ns, *args, **kwargs)

        started.answers = form  # type: ignore[attr-defined]  # a function's attribute, which answer_form reads
        return started

    return declared


def _made_first(form):
    """A probe that answers with _made's facts alone when SGD(...) kept objects that are not Parameters, else
    with `form` besides."""
    return ({**MADE, "made_others": True}, _joined(MADE, {"made_others": False}, form))


class ComplexNumbers(TypeError):
    """Numbers with an imaginary part where the lesson computes real ones: named as such, never read as no numbers."""

    def __init__(self):
        super().__init__("p.data, p.grad or an output holds numbers with an imaginary part (such as 5j), which no check "
                         "reads as their real part: the lesson's values are real; leave no j in them")


def _real(values):
    """`values`, refused when complex with an imaginary part: np.array(..., dtype=float) and float() would keep the
    real part (a ComplexWarning only), and a check would grade numbers the notebook never computed. A complex zero
    imaginary part loses nothing: the real part is the value."""
    if not np.iscomplexobj(values):
        return values
    if np.any(np.imag(values)):
        raise ComplexNumbers()
    return np.real(values)


def _plain(values):
    """A copy of the values as an array of floats: it crosses to the grader as its bytes, and the checks get
    it as nested lists (autograder/sandbox/protocol.py)."""
    return np.array(_real(values), dtype=float)


def _float(value):
    """float(value), refusing an imaginary part (_real)."""
    return float(_real(value))


def _array_or_none(values):
    """The values as a nested list, or None when they are not numbers (e.g. a grad set to None)."""
    if values is None:
        return None
    try:
        return _plain(values)
    except ComplexNumbers:  # numbers, but not real ones: named, not "no numbers"
        raise
    except (TypeError, ValueError):
        return None


def _number(objects, target):
    """The position of `target` in `objects`, by identity (-1 when it is none of them)."""
    return next((i for i, item in enumerate(objects) if item is target), -1)


def _graph(output):
    """The graph behind `output` as rows of parent numbers: row k lists the parents of node k (node 0 is output)."""
    nodes = [output]
    rows: list[list[int]] = []
    while len(rows) < len(nodes):
        row = []
        for parent in nodes[len(rows)].parents:
            k = _number(nodes, parent)
            if k < 0:
                nodes.append(parent)
                k = len(nodes) - 1
            row.append(k)
        rows.append(row)
    return rows, nodes


def _linear_layers(ns, model):
    """The Linear layers of a Sequential, in order (found without calling parameters()): the instances of the
    notebook's Linear (the probe's own forward derives from it), not whatever answers `.weight` (a Module whose
    __getattr__ answers every name would)."""
    return [layer for layer in model.layers if isinstance(layer, ns["Linear"])]


def _by_hand(ns, model):
    """A Sequential's parameters collected by hand, so a probe need not call parameters()."""
    return [p for layer in _linear_layers(ns, model) for p in (layer.weight, layer.bias)]


def _probe_linear(ns):
    """The notebook's Linear (its given __init__: same weights for the same rng) with the probe's own forward.

    The forward is the lesson's x @ weight.T + bias in Tensor operations, in the reference's order, so its
    graph has the reference's nodes (weight.T, the product, the sum). Probes of the parts that do not grade
    Linear.forward build their models from it: the release's blank forward, or a student's wrong one, cannot
    cost them anything.
    """

    given: Any = ns["Linear"]  # a class only known at run time (a subscript base reads to mypy as a generic)

    class ProbeLinear(given):
        def forward(self, x):
            return x @ self.weight.T + self.bias

    return ProbeLinear


def _mlp(ns, widths, rng, linear=None):
    """Linear layers (the notebook's, or `linear`) of the given widths with a ReLU between consecutive ones."""
    linear = linear or ns["Linear"]
    layers = []
    for n_in, n_out in zip(widths[:-1], widths[1:]):
        layers += [linear(n_in, n_out, rng), ns["ReLU"]()]
    return ns["Sequential"](*layers[:-1])


def _parameters(ns, arrays):
    return [ns["Parameter"](np.array(a, dtype=float)) for a in arrays]


def _public_facts():
    """The public checks' facts.py, imported from the release (on the sandbox's path, as exercise_probes imports
    answers.py): a rule that reads the notebook's live classes has its one home there, so the grade and the
    student's own checks name a cause from the same facts. The release is public: nothing hidden reaches the
    sandbox this way. Imported when a probe runs, as the grader's process has no release on its path."""
    import facts

    return facts


class _Attributes:
    """The notebook's names as attributes (nb.Linear), as facts.py reads them; a name the notebook does not define
    raises KeyError, as a probe's own look-up does, which the grader explains by the cell that defines it
    (autograder/checks/suites.py)."""

    def __init__(self, ns):
        self._names = ns

    def __getattr__(self, name):
        return self._names[name]


def _sendable(facts):
    """Facts of facts.init_facts (layers_facts holds them too) with the numbers drawn as arrays of floats (None: not
    numbers), which cross to the grader (the public checks read them as they are)."""
    return {**facts, "drawn": [_array_or_none(values) for values in facts["drawn"]]}


def _init_facts(layer):
    """What causes.given_init reads of a Linear(2, 1) made with np.random.default_rng(0) (facts.init_facts): the
    type of layer.weight and layer.bias as read, which of them its attributes hold first, its attributes, and
    the numbers of its weight and bias."""
    return _sendable(_public_facts().init_facts(layer))


def _kept_list(ns, module, found):
    """Facts behind a parameters() that keeps a list between calls (facts.kept_facts: the defaults and containers
    outliving a call that hold what calls collected, and whether a second call returns the very same list), from
    which causes.stale_list names the cause."""
    return _public_facts().kept_facts(module, found, ns["Parameter"])


def _unordered(found):
    """The type of what parameters() returned when it keeps no order, a set ('' otherwise; facts.unordered): its order
    follows memory addresses, run by run, so the checks judge its members and name it where the order is the rule."""
    return _public_facts().unordered(found)


def _not_parameters(ns, listed):
    """[type name, whether it is a Module] of each of `listed` that is not a Parameter (facts.kinds_of;
    causes.not_parameters)."""
    return _public_facts().kinds_of(listed, ns["Parameter"], ns["Module"])


def _made(optimizer, params):
    """What SGD(params, lr) kept, read right after it was made, before zero_grad() or step() could change it:
    the number among `params` of each entry of self.params (-1 for another object; None when self.params is a
    one-shot iterator, a generator, which is not walked here, or no iterable) and self.lr as a number (None when
    it is none). causes.init_kept names what the given __init__ got wrong."""
    held = optimizer.params
    try:
        order = None if hasattr(type(held), "__next__") else [_number(params, p) for p in held]
    except TypeError:  # not iterable at all
        order = None
    # Objects that are not Parameters (their arrays, say): zero_grad() and step() would raise on them, and be
    # named in place of the __init__ that kept them, so a probe answers with this alone (made_others).
    others = order is not None and not all(isinstance(p, type(params[0])) for p in held) if params else False
    return {"made_order": order, "made_lr": _rate(optimizer), "made_others": others,
            "made_one_shot": hasattr(type(held), "__next__"), "made_kind": type(held).__name__}


def _rate(optimizer):
    """The optimizer's self.lr as a finite number, None when it holds none."""
    rate: Any = getattr(optimizer, "lr", None)
    number = isinstance(rate, (int, float, np.integer, np.floating)) and not isinstance(rate, bool)
    return float(rate) if number and np.isfinite(rate) else None


def _held(optimizer, params):
    """What the optimizer holds right after SGD(...) made it, before any of its methods could change that: the
    type of self.params, whether it is a one-shot iterator (a generator: used up by the first loop over it, so
    it is not walked here), and else how many of `params` it holds (causes.optimizer_holds names the cause);
    and what _made reads."""
    made = _made(optimizer, params)
    order = made["made_order"] or []
    count = sum(number in order for number in range(len(params)))
    return {"held": count, "total": len(params), "kind": type(optimizer.params).__name__,
            "one_shot": hasattr(type(optimizer.params), "__next__"), **made}


def _given(ns, found, params):
    """What parameters() returned and SGD(...) was given, read as it was given: the number among `params` of each
    entry (-1 for another object), and each entry that is not a Parameter (causes.parameters_gave and
    not_parameters name the cause); nothing for anything but a list or a tuple (a generator is not walked: that
    would use it up). Read from the probe's own call: a call made apart would change what a parameters() that
    keeps a list between calls gives the probe."""
    if not isinstance(found, (list, tuple)):
        return {}
    return {"given": [_number(params, p) for p in found], "not_parameters": _not_parameters(ns, found)}


def _none_grads(params):
    """Whether zero_grad() left a grad that is None (the next backward() cannot add into it)."""
    return any(p.grad is None for p in params)


def _tensor_grads(ns, params):
    """Whether zero_grad() left a grad that is a Tensor, not an array (PyTorch's .grad is one): step() cannot move
    p.data by it."""
    return any(isinstance(p.grad, ns["Tensor"]) for p in params)


def _grad_owners(params):
    """For each Parameter, the number of the first whose grad shares its memory (its own when none does; views of
    one array share it, and backward() adds into that one memory): zero_grad() that left one array to several
    (causes.grads_shared). A grad that is no array is another check's."""
    return [next(j for j, q in enumerate(params) if q is p or isinstance(q.grad, np.ndarray)
                 and np.shares_memory(q.grad, p.grad)) if isinstance(p.grad, np.ndarray) else i
            for i, p in enumerate(params)]


def _facts(ns, objects):
    """For each object: is it a Parameter, how many parents, does it carry a backward closure."""
    return [[isinstance(p, ns["Parameter"]), len(getattr(p, "parents", ()) or ()),
             getattr(p, "backward_fn", None) is not None] for p in objects]


# ---------------------------------------------------------------- parameters

class _Registry:
    """The tensors a case creates, numbered; parameters() answers are reported as these numbers."""

    def __init__(self, ns, rng):
        self.ns, self.rng, self.items = ns, rng, []

    def add(self, tensor):
        if _number(self.items, tensor) < 0:
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
        return [_number(self.items, p) for p in found]


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
    if case == "tuple_of_modules":
        a, b, c = _widths(rng, 2)
        blocks = (reg.linear(a, b), ns["ReLU"](), reg.linear(b, c))
        return reg.box(blocks=blocks, head=reg.parameter(c))
    if case == "tuple_of_parameters":
        first = reg.linear(*_widths(rng, 1))
        scales = tuple(reg.parameter(int(n)) for n in rng.integers(1, 5, size=3))
        return reg.box(first=first, scales=scales)
    if case in ("equal_values", "drawn_values"):  # one module; "drawn_values" keeps the numbers drawn, all different
        n = int(rng.integers(2, 5))
        first, second = reg.linear(n, n), reg.linear(n, n)
        if case == "equal_values":
            second.weight.data[...] = first.weight.data  # two weights holding the same values
            first.bias.data[...] = 0.0
            second.bias.data[...] = 0.0  # two zero biases
        offset = reg.add(ns["Parameter"](np.zeros(n) if case == "equal_values" else rng.normal(size=n)))
        return reg.box(net=ns["Sequential"](first, ns["ReLU"](), second), offset=offset)
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


@_answers({"pattern": ([INDEX, ...], None), "plain_tensors": [COUNT, ...], "strangers": KINDS, "unordered": str,
           **KEPT})
def parameter_pattern(ns, case, seed):
    """Which of the case's tensors list(root.parameters()) returns, in its order (None if it returned None), the
    type of what it returned when that keeps no order (_unordered), and what it returned that is none of them and
    no Parameter (causes.not_parameters)."""
    reg = _Registry(ns, np.random.default_rng(seed))
    root = _build_case(reg, case)
    found = root.parameters()
    listed = None if found is None else list(found)
    pattern = None if listed is None else reg.pattern(listed)
    return {
        "pattern": pattern,
        "plain_tensors": [i for i, item in enumerate(reg.items) if not isinstance(item, ns["Parameter"])],
        "strangers": _not_parameters(ns, [p for p in listed or [] if _number(reg.items, p) < 0]),
        "unordered": _unordered(found), **_kept_list(ns, root, found),
    }


@_answers({"skipped": bool})
def skips_subclasses(ns):
    """Whether parameters() finds the Parameter of a bare Module it holds but not that of an instance of a subclass
    of Module (a class made here: type(value) == Module where isinstance is meant; causes.SUBCLASS_SKIPPED). Asked
    only once an answer misses Parameters, so that a right parameters() is called no more than the checks call it."""
    reg = _Registry(ns, np.random.default_rng(0))
    plain, sub = ns["Parameter"](np.ones(1)), ns["Parameter"](np.ones(1))
    block = type("Block", (ns["Module"],), {})()
    block.w = sub
    found_plain, found_sub = reg.box(inner=reg.box(w=plain)).parameters(), reg.box(inner=block).parameters()
    return {"skipped": any(p is plain for p in found_plain or []) and not any(p is sub for p in found_sub or [])}


@_answers(lambda seed, calls: {"patterns": [[INDEX, ...]] * len(calls.replace("R", "")), "strangers": KINDS,
                               "unordered": str, **KEPT})
def parameter_pattern_repeated(ns, seed, calls):
    """Model "A" (a Sequential) and "B" (lists of Parameters) in one registry; parameters() called on each
    letter of `calls` in turn, in one process (so a list kept between calls shows), "R" replacing the weight of
    A's first layer with a new Parameter instead (layer.weight = Parameter(...), as the lesson shares a weight);
    what the first call returned that is none of the registry's tensors and no Parameter (causes.not_parameters);
    the type of what A's parameters() returns when it keeps no order (_unordered)."""
    reg = _Registry(ns, np.random.default_rng(seed))
    models = {"A": _build_case(reg, "sequential"), "B": _build_case(reg, "list_of_parameters")}
    listed = []
    for name in calls:
        if name == "R":
            layer = _linear_layers(ns, models["A"])[0]
            layer.weight = reg.parameter(*np.shape(layer.weight.data))
        else:
            listed.append(list(models[name].parameters() or []))
    found = models["A"].parameters()
    return {"patterns": [reg.pattern(one) for one in listed],
            "strangers": _not_parameters(ns, [p for p in listed[0] if _number(reg.items, p) < 0]),
            **_kept_list(ns, models["A"], found), "unordered": _unordered(found)}


@_answers({"shapes": [[COUNT, ...], ...], "not_parameters": KINDS, "unordered": str, **KEPT, **INIT})
def parameter_count(ns, widths, seed=0):
    """The shapes, in order, of what parameters() returns for an MLP with the given widths (the test counts), and
    the type of what it returned when that keeps no order (_unordered)."""
    model = _mlp(ns, widths, np.random.default_rng(seed))
    found = model.parameters()
    listed = list(found)
    shapes = [list(np.shape(getattr(p, "data", p))) for p in listed]
    return {"shapes": shapes, "not_parameters": _not_parameters(ns, listed), "unordered": _unordered(found),
            **_kept_list(ns, model, found),
            **_init_facts(ns["Linear"](2, 1, np.random.default_rng(0)))}


# ---------------------------------------------------------------- forward

@_answers(({"error": str, "said": str, "elementwise": bool},
           {**INIT, "error": None, "is_tensor": bool, "shape": [COUNT, ...], "data": NUMBERS, "after": [ARRAY] * 3,
            "weight_grad": NUMBERS, "bias_grad": NUMBERS, "x_grad": NUMBERS}))
def linear_forward(ns, weight, bias, x, upstream):
    """Linear.forward called directly on the given weight, bias and input; the output, what the three hold
    afterwards, and the grads of sum(output * upstream)."""
    weight, bias, x_data = (np.array(a, dtype=float) for a in (weight, bias, x))
    made = _init_facts(ns["Linear"](2, 1, np.random.default_rng(0)))  # what the check's weight and bias replace
    layer = ns["Linear"](weight.shape[1], weight.shape[0], np.random.default_rng(0))  # replaced just below
    layer.weight, layer.bias = ns["Parameter"](weight), ns["Parameter"](bias)
    x_tensor = ns["Tensor"](x_data)
    try:
        out = layer.forward(x_tensor)
    except ValueError as error:  # named where it was raised: forward() may call a helper of another cell
        from messages import called_by_notebook, describe_exception  # the sandbox's own: only in the worker
        return {"error": describe_exception(error, quote=False), "said": describe_exception(error),
                "elementwise": called_by_notebook(error) is getattr(ns["Tensor"].__mul__, "__code__", None)}
    values = getattr(out, "data", out)
    result = {**made, "error": None, "is_tensor": isinstance(out, ns["Tensor"]), "shape": list(np.shape(values)),
              "data": _array_or_none(values),
              "after": [_plain(layer.weight.data), _plain(layer.bias.data), _plain(x_tensor.data)],
              "weight_grad": None, "bias_grad": None, "x_grad": None}
    if result["is_tensor"] and result["shape"] == list(np.shape(upstream)):
        (out * ns["Tensor"](np.array(upstream, dtype=float))).sum().backward()
        result.update(weight_grad=_plain(layer.weight.grad), bias_grad=_plain(layer.bias.grad),
                      x_grad=_plain(x_tensor.grad))
    return result


# ---------------------------------------------------------------- zero_grad

@_answers(_made_first({"grads": [NUMBERS, ...], "grad_types": [str, ...], "grad_tensors": [bool, ...],
                        "grad_shapes": [[COUNT, ...], ...], "data": [ARRAY, ...], "held": [INDEX, ...]}))
def zero_grad_effect(ns, data, grads):
    """Parameters holding `data` with grads `grads`, then SGD(params).zero_grad() once."""
    params = _parameters(ns, data)
    for p, g in zip(params, grads):
        p.grad = np.array(g, dtype=float)
    optimizer = ns["SGD"](params, lr=0.1)
    made = _made(optimizer, params)
    if made["made_others"]:
        return made
    optimizer.zero_grad()
    return {**made,
        "grads": [_array_or_none(p.grad) for p in params],
        "grad_types": [type(p.grad).__name__ for p in params],
        "grad_tensors": [isinstance(p.grad, ns["Tensor"]) for p in params],
        "grad_shapes": [list(np.shape(p.grad)) for p in params],
        "data": [_plain(p.data) for p in params],
        "held": [_number(params, p) for p in optimizer.params],
    }


@_answers(_made_first(_joined({"first": [ARRAY, ...], "cleared": [NUMBERS, ...], "owners": [COUNT, ...]},
                                ({"tensors": [bool, ...], "second": None}, {"second": [ARRAY, ...]}))))
def zero_grad_then_backward(ns, widths, batch, seed, calls=1):
    """A model's (the probe's own layers) grads from one backward pass; then zero_grad() (`calls` times), the
    grads it left, and the grads of the same backward pass run again."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng, _probe_linear(ns))
    params = _by_hand(ns, model)
    optimizer = ns["SGD"](params, lr=0.1)
    made = _made(optimizer, params)
    if made["made_others"]:
        return made
    x, labels = ns["Tensor"](rng.normal(size=(batch, widths[0]))), rng.integers(0, widths[-1], size=batch)
    ns["cross_entropy"](model(x), labels).backward()
    first = [_plain(p.grad) for p in params]
    for _ in range(calls):
        optimizer.zero_grad()
    cleared = [_array_or_none(p.grad) for p in params]
    owners, tensors = _grad_owners(params), [isinstance(p.grad, ns["Tensor"]) for p in params]
    if any(p.grad is None for p in params) or any(tensors):  # backward() would fail adding into None
        return {"first": first, "cleared": cleared, "owners": owners, "tensors": tensors, "second": None, **made}
    ns["cross_entropy"](model(x), labels).backward()
    return {"first": first, "cleared": cleared, "owners": owners, "second": [_plain(p.grad) for p in params], **made}


# ---------------------------------------------------------------- step

@_answers(lambda data, grads, lr: _made_first({  # one item a step (the checks read each step's)
    "data": [[ARRAY, ...]] * len(grads), "grads_after": [[NUMBERS, ...]] * len(grads), "held": [INDEX, ...],
    "facts": FACTS, "rates": [RATE] * len(grads)}))
def step_effect(ns, data, grads, lr):
    """Parameters holding `data`; before step k the probe sets every grad to grads[k] (no zero_grad)."""
    params = _parameters(ns, data)
    optimizer = ns["SGD"](params, lr=lr)
    made = _made(optimizer, params)
    if made["made_others"]:
        return made
    after, grads_after, rates = [], [], []
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = np.array(g, dtype=float)
        optimizer.step()
        after.append([_plain(p.data) for p in params])
        grads_after.append([_array_or_none(p.grad) for p in params])
        rates.append(_rate(optimizer))
    held = list(optimizer.params)
    return {"data": after, "grads_after": grads_after, "held": [_number(params, p) for p in held],
            "facts": _facts(ns, params + held), "rates": rates, **made}


@_answers(lambda widths, batch, lr, seed, steps=2: _made_first({  # before the steps, then after each
    "outputs": [ARRAY] * (steps + 1), "graphs": [GRAPH] * (steps + 1), "facts": FACTS,
    "params": [[ARRAY, ...]] * (steps + 1), "grads": [[NUMBERS, ...]] * steps,
    "grads_after": [[NUMBERS, ...]] * steps, "rates": [RATE] * steps}))
def step_moves_model(ns, widths, batch, lr, seed, steps=2):
    """Train a model of the probe's own layers for a few steps; grads are zeroed by the probe itself, params
    collected by hand: only step() is the notebook's."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng, _probe_linear(ns))
    params = _by_hand(ns, model)
    optimizer = ns["SGD"](params, lr=lr)
    made = _made(optimizer, params)
    if made["made_others"]:
        return made
    x, labels = ns["Tensor"](rng.normal(size=(batch, widths[0]))), rng.integers(0, widths[-1], size=batch)
    outputs, graphs = [_plain(model(x).data)], [_graph(model(x))[0]]
    values, grads, grads_after, rates = [[_plain(p.data) for p in _by_hand(ns, model)]], [], [], []
    for _ in range(steps):
        for p in params:
            p.grad = np.zeros_like(p.data)
        ns["cross_entropy"](model(x), labels).backward()
        grads.append([_array_or_none(p.grad) for p in params])
        optimizer.step()
        grads_after.append([_array_or_none(p.grad) for p in params])
        rates.append(_rate(optimizer))
        out = model(x)
        outputs.append(_plain(out.data))
        graphs.append(_graph(out)[0])
        values.append([_plain(getattr(p, "data", np.nan)) for p in _by_hand(ns, model)])
    return {"outputs": outputs, "graphs": graphs, "facts": _facts(ns, _by_hand(ns, model)), "params": values,
            "grads": grads, "grads_after": grads_after, "rates": rates, **made}


def _worked_answers(by_hand):
    """The forms of _worked_example's answers: stopped before the steps (on what SGD(...) was given or kept), at a grad
    the notebook's zero_grad() left None or a Tensor (not by hand: the probe's own zeros are arrays), or after both
    steps (the three losses, with the values each was computed at; the grads of two steps, or of the first when it
    left a grad None)."""
    pair = [NUMBERS, NUMBERS]  # the weight's and the bias's
    held = _holding(2)  # the layer's weight and bias
    ran = [{"z": [float] * 3, "loss": [float] * 3, "params": [[ARRAY, ARRAY]] * 3, "grads": [pair] * steps,
            "grads_after": [pair] * steps, "rates": [RATE] * steps, "none_grads": False,
            "step_left_none": steps == 1, **held, **({} if by_hand else {**KEPT, **SEEN})} for steps in (2, 1)]
    if by_hand:
        return (*_stopped(held, given=False), *ran)
    tensor = {**held, "z": [float, ...], "loss": [float, ...], "params": [[ARRAY, ARRAY], ...], "grads": [pair, ...],
              "none_grads": bool, "tensor_grads": True}
    return (*_stopped(held, given=True), *_ways(_joined(GIVEN, (tensor, *ran))))


def _worked_example(ns, zero_between, by_hand):
    """The lesson's Linear(2, 1) example (weight (0.5, -1), bias 0.2, x = (1, 2), y = 1, lr = 0.1), two steps.

    by_hand: the probe's own forward, parameters collected and grads zeroed by the probe (the step suite);
    otherwise the notebook's forward, parameters() and zero_grad() (the lesson-numbers suite).
    """
    layer = (_probe_linear(ns) if by_hand else ns["Linear"])(2, 1, np.random.default_rng(0))
    layer.weight, layer.bias = ns["Parameter"](np.array([[0.5, -1.0]])), ns["Parameter"](np.array([0.2]))
    params = [layer.weight, layer.bias] if by_hand else layer.parameters()
    optimizer = ns["SGD"](params, lr=0.1)
    held = {**_held(optimizer, [layer.weight, layer.bias]), **({} if by_hand else _given(ns, params, [layer.weight, layer.bias]))}
    x = ns["Tensor"](np.array([[1.0, 2.0]]))
    z_values: list[float] = []
    losses: list[float] = []
    values: list[list] = []
    grads: list[list] = []
    grads_after: list[list] = []  # each p.grad right after step()
    rates: list = []  # self.lr after each step
    seen: dict = {}  # what the first zero_grad() left: the values step() starts from, and the grads

    if held.get("not_parameters") or held["made_others"]:  # zero_grad() would fail on it, and be named instead
        return {"none_grads": False, **held}

    def loss():
        values.append([_plain(layer.weight.data), _plain(layer.bias.data)])
        z = layer(x)
        value = ((z - 1.0) ** 2).sum()
        z_values.append(_float(z.data.sum()))
        losses.append(_float(value.data))
        return value

    def clear():
        if by_hand:
            for p in (layer.weight, layer.bias):
                p.grad = np.zeros_like(p.data)
        elif seen:
            optimizer.zero_grad()
        else:
            seen.update(_zero_grad_seen(optimizer, [layer.weight, layer.bias]))

    step_left_none = False  # no zero_grad() since the first step(), which left a grad None: stop there
    for step in range(2):
        current = loss()
        if zero_between or step == 0:
            clear()
            if _none_grads([layer.weight, layer.bias]) or _tensor_grads(ns, [layer.weight, layer.bias]):  # stop here
                return {"z": z_values, "loss": losses, "params": values, "grads": grads, **held,
                        "none_grads": _none_grads([layer.weight, layer.bias]), "tensor_grads": True}
        elif _none_grads([layer.weight, layer.bias]):
            step_left_none = True
            break
        current.backward()
        grads.append([_array_or_none(layer.weight.grad), _array_or_none(layer.bias.grad)])
        optimizer.step()
        grads_after.append([_array_or_none(layer.weight.grad), _array_or_none(layer.bias.grad)])
        rates.append(_rate(optimizer))
    loss()
    kept = {} if by_hand else {**_kept_list(ns, layer, params), **seen}  # after the steps: its own calls change nothing they saw
    return {"z": z_values, "loss": losses, "params": values, "grads": grads, "grads_after": grads_after,
            "rates": rates, "none_grads": False, "step_left_none": step_left_none, **held, **kept}


@_answers(_worked_answers(by_hand=True))
def step_worked_example(ns, zero_between):
    """The worked example with the notebook's step(); the probe zeroes the grads itself when asked."""
    return _worked_example(ns, zero_between, by_hand=True)


# ---------------------------------------------------------------- no_grad

@_answers({"kind": str, "missing": [("__enter__", "__exit__"), ...], "is_class": bool, "body": str})
def no_grad_made(ns):
    """What no_grad() returns, as causes.no_grad_made reads it: its type, which of __enter__ and __exit__ it lacks,
    whether no_grad is a class, and for @contextlib.contextmanager's object the type of what the decorated function
    returned (its `gen`)."""
    made = ns["no_grad"]()
    try:
        missing = [name for name in ("__enter__", "__exit__") if not hasattr(made, name)]
        return {"kind": type(made).__name__, "missing": missing, "is_class": isinstance(ns["no_grad"], type),
                "body": type(made.gen).__name__ if hasattr(made, "gen") else ""}
    finally:
        ns["Tensor"].recording = True  # a body without a yield ran as it was called


@_answers({"recorded_graph": GRAPH, "quiet_graph": GRAPH, "again_graph": GRAPH, "quiet_closure": bool,
           "recorded": ARRAY, "quiet": ARRAY, "inside": bool, "after": bool})
def no_grad_forward(ns, widths, batch, seed):
    """The same forward pass (of the probe's own layers) recorded, under no_grad(), and recorded again afterwards."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng, _probe_linear(ns))
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
            "recorded_graph": _graph(recorded)[0], "quiet_graph": _graph(quiet)[0],
            "again_graph": _graph(again)[0], "quiet_closure": quiet.backward_fn is not None,
            "recorded": _plain(recorded.data), "quiet": _plain(quiet.data),
            "inside": inside, "after": bool(Tensor.recording),
        }
    finally:
        Tensor.recording = True


_STATE = {"recording": bool, "records": bool}  # no_grad_states' state()
_STATES = {"plain": ("before", "inside", "after"), "exception": ("inside", "after"), "nested": ("inner", "between", "after"),
           "nested_exception": ("between", "after"), "already_off": ("inside", "after")}  # the points of each scenario


@_answers(lambda scenario: {**{point: _STATE for point in _STATES[scenario]},
                            **({"propagated": bool} if scenario == "exception" else {})})
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

def _layers(ns):
    """What the notebook's layers do before a lesson probe builds a network from them, as causes.layers_cause reads
    it (facts.layers_facts): the shape of the weight the given Linear.__init__ makes for Linear(2, 1), what it
    made (_init_facts), and the type of what Linear.forward returns for a batch, and of what calling the layer (the
    given Module.__call__) returns, when it is not a Tensor. "stop" says a network built from them would fail on it
    (a matmul of the wrong shapes, the given ReLU.forward on an array: "'numpy.ndarray' object has no attribute
    'relu'") and be named in place of the code that is wrong."""
    facts = _sendable(_public_facts().layers_facts(_Attributes(ns)))
    returned = bool(facts.get("forward_returned") or facts.get("call_returned"))
    return {**facts, "stop": facts["weight_shape"] != [1, 2] or not facts["bias_fits"] or returned}


def _layers_first(probe):
    """A lesson-numbers probe that first gathers _layers' facts, and answers with them alone when one would make a
    network fail."""

    @functools.wraps(probe)
    def probed(ns, *args, **kwargs):
        facts = _layers(ns)
        return facts if facts["stop"] else {**probe(ns, *args, **kwargs), **facts}

    found = {"weight_shape": [COUNT, ...], "bias_shape": [COUNT, ...], "bias_fits": bool, **INIT}  # found before it calls the layer

    def answers(**kwargs):  # the form of `probe`'s answer to the call (a function of its arguments, or one form)
        form = probe.answers(**kwargs) if callable(probe.answers) else probe.answers
        return ({**found, "stop": True}, {**found, "forward_returned": str, "call_returned": str, "stop": True},
                *_ways(_joined(form, {**found, "forward_returned": "", "call_returned": "", "stop": False})))

    probed.answers = answers  # type: ignore[attr-defined]  # as _answers sets it
    return probed


@_layers_first
@_answers(_worked_answers(by_hand=False))
def lesson_worked_example(ns, zero_between):
    """The worked example with the notebook's parameters(), zero_grad() and step()."""
    return _worked_example(ns, zero_between, by_hand=False)


@_layers_first
@_answers({"recorded_graph": GRAPH, "quiet_graph": GRAPH, "leaves": [INDEX, ...], "recorded": ARRAY, "quiet": ARRAY})
def lesson_graph(ns, widths, batch, seed):
    """The graphs of a forward pass recorded and under no_grad(), and where the input and each Parameter sit
    in the recorded one (their node numbers, -1 when absent)."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng)
    x = ns["Tensor"](rng.normal(size=(batch, widths[0])))
    recorded = model(x)
    with ns["no_grad"]():
        quiet = model(x)
    graph, nodes = _graph(recorded)
    return {"recorded_graph": graph, "quiet_graph": _graph(quiet)[0],
            "leaves": [_number(nodes, t) for t in [x] + _by_hand(ns, model)],
            "recorded": _plain(recorded.data), "quiet": _plain(quiet.data)}


@_layers_first
@_answers(({"none_grads": False, "not_parameters": KINDS, **MADE, "made_others": True},  # stopped: named
           {"none_grads": False, "not_parameters": SOME_KINDS, **MADE},
           {"none_grads": bool, "tensor_grads": True, **MADE},
           {"none_grads": False, "pattern": [INDEX, ...], "before": ARRAY, "after": ARRAY, "still_shared": bool,
            "grad": NUMBERS, "grad_after": NUMBERS, "moved": {"before": [ARRAY, ...], "after": [ARRAY, ...],
                                                              "grads": [NUMBERS, ...], "grads_after": [NUMBERS, ...]},
            **SEEN, **MADE, **KEPT}))
def lesson_shared(ns, n, batch, lr, seed):
    """Two square layers sharing one weight: what parameters() lists (numbered: 0 the shared weight, 1 and 2
    the biases), and the shared weight before and after one step (`moved`: all three, whether step() moved each)."""
    rng = np.random.default_rng(seed)
    first, second = ns["Linear"](n, n, rng), ns["Linear"](n, n, rng)
    second.weight = first.weight
    model = ns["Sequential"](first, ns["ReLU"](), second)
    found = model.parameters()
    params = list(found)
    optimizer = ns["SGD"](params, lr=lr)
    made = _made(optimizer, params)
    if _not_parameters(ns, params) or made["made_others"]:  # zero_grad() would fail on it, and be named instead
        return {"none_grads": False, "not_parameters": _not_parameters(ns, params), **made}
    seen = _zero_grad_seen(optimizer, [first.weight, first.bias, second.bias])
    if _none_grads(params) or _tensor_grads(ns, params):  # backward() cannot add into None: stop here
        return {"none_grads": _none_grads(params), "tensor_grads": True, **made}
    (model(ns["Tensor"](rng.normal(size=(batch, n)))) * ns["Tensor"](rng.normal(size=(batch, n)))).sum().backward()
    three = [first.weight, first.bias, second.bias]
    before, grads = [_plain(p.data) for p in three], [_array_or_none(p.grad) for p in three]
    optimizer.step()
    moved = {"before": before, "after": [_plain(p.data) for p in three], "grads": grads,
             "grads_after": [_array_or_none(p.grad) for p in three]}
    return {"none_grads": False, "pattern": [_number(three, p) for p in params], "before": before[0],
            "after": moved["after"][0], "still_shared": second.weight is first.weight, "grad": grads[0],
            "grad_after": moved["grads_after"][0], "moved": moved, **seen, **made, **_kept_list(ns, model, found)}


def _zero_grad_seen(optimizer, params):
    """One zero_grad() of the notebook's, and what it left, as causes.zero_grad_left reads it: each p.data before
    and after it, each p.grad before and after it (None for a grad that is not numbers)."""
    values, before = [_plain(p.data) for p in params], [_array_or_none(p.grad) for p in params]
    optimizer.zero_grad()
    return {"values": values, "zeroed": [_plain(p.data) for p in params], "grads_before": before,
            "cleared": [_array_or_none(p.grad) for p in params]}


def _training_answers(widths, batch, steps, lr, seed):
    """The forms of lesson_training's answers: stopped before the steps, at a grad zero_grad() left None or a Tensor, or
    after `steps` steps (a loss each; the values before and after the first, and its grads)."""
    held = _holding(2 * (len(widths) - 1))  # a weight and a bias for each layer the probe made
    return (*_stopped(held, given=True), *_ways(_joined(held, GIVEN, (
        {"none_grads": bool, "tensor_grads": True},
        {"losses": [float] * steps, "final": ARRAY, "final_graph": GRAPH, "params": [[ARRAY, ...]] * 2,
         "grads": [[NUMBERS, ...]], "grads_after": [[NUMBERS, ...]], **SEEN, "owners": [COUNT, ...],
         "none_grads": False, **KEPT}))))


@_layers_first
@_answers(_training_answers)
def lesson_training(ns, widths, batch, steps, lr, seed):
    """A training loop with everything from the notebook; losses per step and the final outputs under no_grad."""
    rng = np.random.default_rng(seed)
    model = _mlp(ns, widths, rng)
    found = model.parameters()
    optimizer = ns["SGD"](found, lr=lr)
    held = {**_held(optimizer, _by_hand(ns, model)), **_given(ns, found, _by_hand(ns, model))}
    if held.get("not_parameters") or held["made_others"]:  # zero_grad() would fail on it, and be named instead
        return {"none_grads": False, **held}
    x, labels = ns["Tensor"](rng.normal(size=(batch, widths[0]))), rng.integers(0, widths[-1], size=batch)
    losses, values = [], [[_plain(p.data) for p in _by_hand(ns, model)]]
    grads: list[list] = []
    grads_after: list = []
    seen: dict = {}  # what the first zero_grad() left: the values step() starts from, and the grads
    owners: list = []
    for _ in range(steps):
        if seen:
            optimizer.zero_grad()
        else:
            seen = _zero_grad_seen(optimizer, _by_hand(ns, model))
        if _none_grads(_by_hand(ns, model)) or _tensor_grads(ns, _by_hand(ns, model)):  # stop here
            return {"none_grads": _none_grads(_by_hand(ns, model)), "tensor_grads": True, **held}
        owners = owners or _grad_owners(_by_hand(ns, model))
        loss = ns["cross_entropy"](model(x), labels)
        loss.backward()
        first = not grads  # the first step's gradients before and after it, and the layers' values after it (by hand)
        if first:
            grads.append([_array_or_none(p.grad) for p in _by_hand(ns, model)])
        optimizer.step()
        if first:
            grads_after = [_array_or_none(p.grad) for p in _by_hand(ns, model)]
        losses.append(_float(loss.data))
        if len(values) == 1:
            values.append([_plain(getattr(p, "data", np.nan)) for p in _by_hand(ns, model)])
    with ns["no_grad"]():
        final = model(x)
    return {"losses": losses, "final": _plain(final.data), "final_graph": _graph(final)[0], "params": values,
            "grads": grads, "grads_after": [grads_after], **seen, "owners": owners, "none_grads": False, **held,
            **_kept_list(ns, model, found)}


def _homes():
    """causes.HOMES, the classes lesson_defined_in reads, imported where its answer's form is read: the grader's
    process, where `causes` is the released causes.py (autograder/dl01_6_3/causes.py)."""
    import causes

    return causes.HOMES


@_answers(lambda: {name: str for name in _homes()})
def lesson_defined_in(ns):
    """For each class of causes.HOMES, the cell its methods come from ('' when not a cell; facts.defined_in): a class
    a later cell defined again is the one the lesson's numbers come from (causes.defined_again)."""
    return _public_facts().defined_in(ns)
