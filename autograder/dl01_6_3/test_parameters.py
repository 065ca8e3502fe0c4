"""Hidden tests for Module.parameters() (grade cell test_parameters).

One test function per rule, each named for it and with its own message, so that feedback names the rule a
submission broke: the functions repeat one shape (check_same_parameters with a case) by design."""
import causes
import numpy as np
import probes
import pytest
from reported import reference_holds

STUDENT_CELLS = ("module",)
SEEDS = [0, 1, 2]


def listed(runner, case, seed):
    result = runner.run(probes.parameter_pattern, case=case, seed=seed)
    assert result["pattern"] is not None, "parameters() returned None: return the Parameters you collected"
    return result


def stale(found, wrong):
    """The cause of a wrong answer when parameters() keeps a list between calls ('' if right, or another cause)."""
    return causes.stale_list(found["defaults"], found["same_list"], found["kept"]) if wrong else ""


def runs_right(student, reference, case, seed):
    """Whether parameters() lists the case's Parameters as the reference does."""
    got = student.run(probes.parameter_pattern, case=case, seed=seed)
    return got["pattern"] == reference.run(probes.parameter_pattern, case=case, seed=seed)["pattern"]


def in_order_of(items, unordered, want):
    """What parameters() returned (`items`), in the order of `want` when it returned a set (`unordered`, its type):
    memory addresses order a set, differently run by run, so a check judges its members as those of a list in any
    order, and a check whose rule is the order names the set (causes.UNORDERED): one grade on every run. Each item
    takes the first place of `want` it fits that no other took (shapes repeat); one that fits none goes last."""
    if not unordered:
        return items
    free, places = list(want), []
    for item in items:
        places.append(free.index(item) if item in free else len(want))
        if places[-1] < len(want):
            free[places[-1]] = free  # taken: a list holds no item equal to itself
    return [item for _, item in sorted(zip(places, items), key=lambda pair: pair[0])]


def check_same_parameters(student, reference, case, seed, missing_hint, order_rule=False):
    found = listed(student, case, seed)
    want = listed(reference, case, seed)
    pattern = in_order_of(found["pattern"], found["unordered"], want["pattern"])
    reference_holds(len(want["pattern"]) == len(set(want["pattern"])) and -1 not in want["pattern"],
                    "the reference solution lists these Parameters wrongly")
    cause = stale(found, pattern != want["pattern"])
    assert not cause, cause
    cause = causes.not_parameters(found["strangers"])
    assert not cause, cause
    assert -1 not in pattern, ("parameters() returned objects the module does not hold: copies, arrays, or objects "
                               "kept from an earlier call (a list that outlives the call, such as a default "
                               "found=[]); return the module's own Parameter objects, collected afresh")
    assert not set(pattern) & set(want["plain_tensors"]), ("parameters() returned a plain Tensor: only attributes "
                                                           "that are instances of Parameter are learned")
    assert len(pattern) == len(set(pattern)), ("parameters() listed the same Parameter object more than once: "
                                               "a Parameter held in two places must be collected once "
                                               "(compare by identity, e.g. with a set of id(p))")
    assert set(pattern) == set(want["pattern"]) or student.run(probes.skips_subclasses)["skipped"] is not True, (
        causes.SUBCLASS_SKIPPED)
    assert set(pattern) == set(want["pattern"]), (f"parameters() found {len(pattern)} of the "
                                                  f"{len(want['pattern'])} Parameters: " + missing_hint)
    assert not (order_rule and found["unordered"]), causes.UNORDERED.format(found["unordered"])
    assert pattern == want["pattern"], ("parameters() found every Parameter but in another order: keep the order "
                                        "of definition (attributes in order, first layer first, weight before bias)")


@pytest.mark.parametrize("seed", SEEDS)
def test_collects_weight_then_bias_of_a_linear_layer(student, reference, seed):
    check_same_parameters(student, reference, "linear", seed,
                          "collect every attribute of the module that is a Parameter", order_rule=True)


def test_returns_nothing_for_a_module_without_parameters(student, reference):
    check_same_parameters(student, reference, "relu", 0, "a ReLU holds no Parameters")


@pytest.mark.parametrize("seed", SEEDS)
def test_finds_parameters_in_nested_modules(student, reference, seed):
    check_same_parameters(student, reference, "nested", seed,
                          "when an attribute is a Module, add that module's parameters() (recursion), "
                          "however deep it sits")


@pytest.mark.parametrize("seed", SEEDS)
def test_finds_the_parameters_of_every_layer_of_a_sequential(student, reference, seed):
    check_same_parameters(student, reference, "sequential", seed,
                          "Sequential keeps its layers in a list (self.layers): look at every item of a list")


@pytest.mark.parametrize("seed", SEEDS)
def test_searches_lists_of_modules(student, reference, seed):
    check_same_parameters(student, reference, "list_of_modules", seed,
                          "when an attribute is a list, ask every Module in it for its parameters()")


@pytest.mark.parametrize("seed", SEEDS)
def test_searches_lists_of_parameters(student, reference, seed):
    check_same_parameters(student, reference, "list_of_parameters", seed,
                          "when an attribute is a list, collect every Parameter in it")


@pytest.mark.parametrize("seed", SEEDS)
def test_searches_tuples_of_modules(student, reference, seed):
    check_same_parameters(student, reference, "tuple_of_modules", seed,
                          "when an attribute is a tuple, treat it like a list: ask every Module in it for its "
                          "parameters()")


@pytest.mark.parametrize("seed", SEEDS)
def test_searches_tuples_of_parameters(student, reference, seed):
    check_same_parameters(student, reference, "tuple_of_parameters", seed,
                          "when an attribute is a tuple, treat it like a list: collect every Parameter in it")


@pytest.mark.parametrize("seed", SEEDS)
def test_keeps_distinct_parameters_with_equal_values(student, reference, seed):
    # Equal values are the cause only where the same module holding the numbers drawn is listed in full.
    drawn = runs_right(student, reference, "drawn_values", seed)
    check_same_parameters(student, reference, "equal_values", seed,
                          "two different Parameters that hold equal values (two zero biases, two weights with "
                          "the same numbers) are both learned: skip a Parameter only when it is the very same "
                          "object (compare id(p), or use `is`), not when its values are equal" if drawn else
                          "find the Parameters held directly and in sub-modules (a Sequential's layers), each once")


@pytest.mark.parametrize("seed", SEEDS)
def test_lists_a_weight_shared_by_two_layers_once(student, reference, seed):
    check_same_parameters(student, reference, "shared_weight", seed,
                          "every layer's Parameters must be found, the shared weight once")


@pytest.mark.parametrize("seed", SEEDS)
def test_lists_the_parameters_of_a_layer_used_twice_once(student, reference, seed):
    check_same_parameters(student, reference, "shared_layer", seed,
                          "every layer's Parameters must be found, those of the repeated layer once")


def test_lists_a_parameter_held_in_several_places_once(student, reference):
    check_same_parameters(student, reference, "shared_in_list", 0,
                          "find the Parameters held directly, in lists and in sub-modules, each once")


@pytest.mark.parametrize("seed", SEEDS)
def test_ignores_plain_tensors_and_other_attributes(student, reference, seed):
    check_same_parameters(student, reference, "mixed_attributes", seed,
                          "collect the attribute that is a Parameter and skip numbers, strings, arrays and None")


@pytest.mark.parametrize("seed", SEEDS)
def test_collects_afresh_on_every_call(student, reference, seed):
    found = student.run(probes.parameter_pattern_repeated, seed=seed, calls="AARAB")  # R: a weight of A replaced
    fresh_b = student.run(probes.parameter_pattern_repeated, seed=seed, calls="B")["patterns"][0]
    want = reference.run(probes.parameter_pattern_repeated, seed=seed, calls="AARAB")["patterns"]
    got = [in_order_of(pattern, found["unordered"], right) for pattern, right in zip(found["patterns"], want)]
    cause = stale(found, got != want or found["same_list"])  # one list for two calls: right numbers, wrong rule
    assert not cause, cause
    assert got[0] == want[0], (causes.not_parameters(found["strangers"])
                               or "parameters() gave the wrong Parameters on its first call: see the other tests")
    outlives = ("a list that outlives the call (a default argument such as found=[] or a class attribute) keeps "
             "what earlier calls collected; start from an empty list each time")
    # Compared as collections: an order that changes from run to run (a set) is another test's business.
    assert sorted(got[1]) == sorted(got[0]), ("parameters() called twice on the same model gave two different "
                                              "answers: " + outlives)
    assert sorted(got[2]) == sorted(want[2]), ("parameters() called again after a weight of the model was replaced "
                                               "(layer.weight = Parameter(...)) did not give the new one alone: "
                                               + outlives)
    assert sorted(got[3]) == sorted(fresh_b), ("parameters() on a second model gave another answer after a call on "
                                               "a first model than on its own: " + outlives)


@pytest.mark.parametrize("widths", [(2, 16, 16, 2), (64, 32, 10), (3, 7, 5), (5, 1, 4, 9, 2)],
                         ids=lambda w: "-".join(map(str, w)))
def test_counts_the_parameters_of_a_network(student, reference, widths):
    found = student.run(probes.parameter_count, widths=list(widths))
    want = reference.run(probes.parameter_count, widths=list(widths))["shapes"]
    layers = list(zip(widths[:-1], widths[1:]))
    formula = sum(n_out * (n_in + 1) for n_in, n_out in layers)
    expected = [shape for n_in, n_out in layers for shape in ([n_out, n_in], [n_out])]
    got = in_order_of(found["shapes"], found["unordered"], expected)  # the count's rule: a set's order is test_collects_weight_...'s
    cause = stale(found, got != want) or (causes.not_parameters(found["not_parameters"]) if got != want else "")
    assert not cause, cause
    reference_holds(want == expected, "the reference solution disagrees with the formula")
    count = sum(int(np.prod(shape)) for shape in got)
    assert count == formula, (f"parameters() of a {'-'.join(map(str, widths))} network hold "
                              f"{count} numbers, expected {formula} (the sum of n_out * (n_in + 1))")
    assert sorted(got) != sorted(expected) or got == expected, (
        f"parameters() of a {'-'.join(map(str, widths))} network found every Parameter but in another order: "
        f"shapes {got}, expected {expected}: weight then bias, first layer first")
    assert got == expected, (f"parameters() of a {'-'.join(map(str, widths))} network gave the "
                             f"shapes {got}, expected {expected}: weight then bias, first layer first")
