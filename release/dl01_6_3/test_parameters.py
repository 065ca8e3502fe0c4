"""Module.parameters() (`pytest -m parameters`): every Parameter a module holds, found by walking its
attributes in the order they were defined; a Module is asked for its own parameters(), a list or a tuple is
searched item by item, anything else is skipped; each Parameter object once (by identity, not by value),
in a new list on every call."""
import causes
import facts
import numpy as np


def box(nb, **attributes):
    """A bare Module holding the given attributes, in the given order."""
    module = nb.Module()
    for name, value in attributes.items():
        setattr(module, name, value)
    return module


def linear(nb, n_in, n_out, rng):
    """A Linear holding what the given __init__ keeps, a Parameter weight and then a bias, set here: these checks
    are of parameters(), as the grade's are (Linear.__init__ has its own, with forward() and the lesson's numbers)."""
    layer = nb.Linear.__new__(nb.Linear)
    layer.weight = nb.Parameter(rng.uniform(-1, 1, size=(n_out, n_in)))
    layer.bias = nb.Parameter(rng.uniform(-1, 1, size=(n_out,)))
    return layer


def skips_subclasses(nb):
    """Whether parameters() finds the Parameter of a bare Module it holds but not that of an instance of a subclass
    of Module (a class made here: type(value) == Module where isinstance is meant)."""
    plain, sub = nb.Parameter(np.ones(1)), nb.Parameter(np.ones(1))
    block = type("Block", (nb.Module,), {})()
    block.w = sub
    found_plain, found_sub = box(nb, inner=box(nb, w=plain)).parameters(), box(nb, inner=block).parameters()
    return any(p is plain for p in found_plain or []) and not any(p is sub for p in found_sub or [])


def expect_parameters(nb, module, expected, missing_hint, order_rule=False):
    """list(module.parameters()) must be the Parameters of `expected` (name -> Parameter), in that order. A set keeps
    no order (memory addresses order it, run by run): its members are judged in the order of `expected`, and a check
    whose rule is the order (`order_rule`) names it, so that a check gives one verdict on every run."""
    found = module.parameters()
    assert found is not None, "parameters() returned None: did you forget to return the list?"
    kind, found, names = facts.unordered(found), list(found), {id(p): name for name, p in expected.items()}
    if kind:
        found.sort(key=lambda p: list(names).index(id(p)) if id(p) in names else len(names))
    wrong = [id(p) for p in found] != [id(p) for p in expected.values()]
    cause = facts.kept_list(module, nb.Parameter) if wrong else ""  # a list kept between calls explains any wrong answer
    assert not cause, cause
    for item in found:
        if id(item) in names:
            continue
        assert not isinstance(item, nb.Parameter), (
            "parameters() returned objects the module does not hold (copies, or objects kept from an earlier "
            "call?): collect the module's own Parameter objects afresh on every call")
        assert not isinstance(item, nb.Tensor), (
            "parameters() returned a plain Tensor: collect only attributes that are instances of Parameter")
        raise AssertionError(causes.not_parameters(facts.kinds_of([item], nb.Parameter, nb.Module)))
    got = [names[id(p)] for p in found]
    repeated = sorted({name for name in got if got.count(name) > 1})
    assert not repeated, (f"parameters() listed the same Parameter object more than once "
                          f"({', '.join(map(repr, repeated))}): a Parameter held in two places must be collected "
                          "once (compare objects by identity, e.g. with a set of id(p))")
    assert len(got) == len(expected) or not skips_subclasses(nb), causes.SUBCLASS_SKIPPED
    assert len(got) == len(expected), f"parameters() found {got} but the module holds {list(expected)}: {missing_hint}"
    assert not (order_rule and kind), causes.UNORDERED.format(kind)
    assert got == list(expected), (f"parameters() found every Parameter but in another order {got}; "
                                   f"expected {list(expected)}, the order in which they were defined")


def test_lists_weight_then_bias_of_a_linear_layer(nb):
    layer = linear(nb, 3, 2, np.random.default_rng(1))
    expect_parameters(nb, layer, {"weight": layer.weight, "bias": layer.bias},
                      "look through the module's attributes (vars(self)) and collect every Parameter", order_rule=True)


def test_finds_parameters_in_nested_modules(nb):
    p0, p1, p2 = nb.Parameter(np.ones(2)), nb.Parameter(np.ones((2, 2))), nb.Parameter(np.ones(3))
    outer = box(nb, first=p0, body=box(nb, block=box(nb, w=p1), scale=p2))
    expect_parameters(nb, outer, {"first": p0, "body.block.w": p1, "body.scale": p2},
                      "when an attribute is a Module, add that module's parameters() (recursion), "
                      "however deep it sits")


def test_searches_lists_of_modules_and_of_parameters(nb):
    rng = np.random.default_rng(2)
    l1, l2 = linear(nb, 2, 3, rng), linear(nb, 3, 1, rng)
    g1, g2 = nb.Parameter(np.ones(3)), nb.Parameter(np.ones(1))
    model = box(nb, blocks=[l1, nb.ReLU(), l2], gains=[g1, g2])
    expect_parameters(nb, model, {"l1.weight": l1.weight, "l1.bias": l1.bias, "l2.weight": l2.weight,
                                  "l2.bias": l2.bias, "gains[0]": g1, "gains[1]": g2},
                      "when an attribute is a list, collect every Parameter in it and ask every Module in it "
                      "for its parameters(): look at every item of a list")


def test_searches_tuples_like_lists(nb):
    rng = np.random.default_rng(9)
    l1 = linear(nb, 2, 2, rng)
    g = nb.Parameter(np.ones(2))
    model = box(nb, pair=(l1, nb.ReLU()), extras=(g,))
    expect_parameters(nb, model, {"pair[0].weight": l1.weight, "pair[0].bias": l1.bias, "extras[0]": g},
                      "when an attribute is a tuple, treat it like a list: collect every Parameter in it and "
                      "ask every Module in it for its parameters()")


def test_lists_a_shared_parameter_once(nb):
    rng = np.random.default_rng(3)
    l1, l2 = linear(nb, 3, 3, rng), linear(nb, 3, 3, rng)
    l2.weight = l1.weight
    model = nb.Sequential(l1, nb.ReLU(), l2)
    expect_parameters(nb, model, {"shared weight": l1.weight, "l1.bias": l1.bias, "l2.bias": l2.bias},
                      "every Parameter must be found, the shared one once")


def test_keeps_two_parameters_with_equal_values(nb):
    def made(b_value):  # a, inner.b and inner.c (a held twice); b holds a's values, or others
        a, b, c = nb.Parameter(np.zeros(3)), nb.Parameter(np.full(3, b_value)), nb.Parameter(np.ones((2, 3)))
        return box(nb, a=a, inner=box(nb, b=b, c=c), again=[a]), {"a": a, "inner.b": b, "inner.c": c}

    # Equal values are the cause only where the same module with other values in b is listed in full.
    other, held = made(2.0)
    by_value = [id(p) for p in other.parameters() or []] == [id(p) for p in held.values()]
    model, expected = made(0.0)
    expect_parameters(nb, model, expected, "two different Parameters that hold equal values are both learned: skip "
                      "a Parameter only when it is the very same object (compare id(p), or use `is`), not when its "
                      "values are equal" if by_value else "find the Parameters held directly and in sub-modules")


def test_ignores_plain_tensors_and_other_attributes(nb):
    w = nb.Parameter(np.ones(2))
    model = box(nb, x=nb.Tensor(np.ones(2)), size=3, label="net", table=np.ones(2), w=w, nothing=None,
                mixed=[1, "two", nb.Tensor(np.zeros(1))])
    expect_parameters(nb, model, {"w": w}, "collect the attribute that is a Parameter")


def test_gives_a_fresh_list_on_every_call(nb):
    rng = np.random.default_rng(4)
    first, second = linear(nb, 2, 2, rng), linear(nb, 2, 2, rng)
    hint = ("a list that outlives the call (a default argument such as found=[] or a class attribute) "
            "keeps what earlier calls collected; start from an empty list on every call")
    for calls, model in enumerate((first, first, second)):  # a first call wrong is no list kept from earlier calls
        expect_parameters(nb, model, {"weight": model.weight, "bias": model.bias},
                          hint if calls else "collect every attribute of the module that is a Parameter")
    first.weight = nb.Parameter(rng.uniform(-1, 1, size=(2, 2)))  # replaced (the lesson shares a weight so)
    expect_parameters(nb, first, {"weight": first.weight, "bias": first.bias}, hint)  # the new one, not the old
    found = first.parameters()  # one list object for two calls: right Parameters, yet it outlives the call
    cause = facts.kept_list(first, nb.Parameter) if isinstance(found, list) and first.parameters() is found else ""
    assert not cause, cause


# Every check here first names a class a later cell defined again (parameters() reads the global Module: the copy's).
for _name, _check in list(globals().items()):
    if _name.startswith("test_"):
        globals()[_name] = facts.noting_copies(_check)
