"""Why a check failed, named as its cause: what a wrong Linear.__init__, parameters() or SGD(...) did, and (from
training_causes.py, given out here too) zero_grad(), step(), no_grad() and backward() (what your code raised,
explain.py says).

The public checks (test_<part>.py, through notebook_checks.py) and the course's grader use this same file, so
the words you see here are the words of your grade. It finds causes from plain values (exceptions, arrays,
numbers, facts such as what SGD(...) kept), so that a message names the cause ("set p.grad to None") rather
than a number further down. The public checks read those facts from your live classes (facts.py); the
grader's probes gather the same in the process that runs your code. Needs NumPy.
"""
from __future__ import annotations

import re

import numpy as np
from training_causes import (  # noqa: F401 - the checks ask causes.<name> for these too
    NONE_GRAD,
    STEP_LEFT_NONE,
    TENSOR_GRAD,
    a,
    arrays,
    grad_kind,
    grads_changed,
    grads_left,
    grads_missing,
    grads_shared,
    named,
    no_grad_made,
    rate_changed,
    step_move,
    swallowed,
    zero_grad_left,
)


def init_kept(order, total, kept_lr, lr):
    """The cause ('' if none) when SGD.__init__ did not keep what SGD(params, lr) was given: `order`, the number among the
    `total` params of each entry of self.params (None: no list of them; total 0: not checked; other order: init_order)."""
    if order is None or total and (len(order) != total or sorted(order) != list(range(total))):
        return "SGD.__init__ did not keep the Parameters it was given: self.params = list(params), not copies or others"
    same = isinstance(kept_lr, (int, float, np.number)) and np.isclose(kept_lr, lr)
    return "" if same else f"SGD.__init__ kept self.lr = {kept_lr!s:.12}, not the {lr:g} it was given (self.lr = lr)"


def init_order(order, kind: str) -> str:
    """The cause ('' if none) when SGD.__init__ kept every Parameter given, the very objects, but in a set (`kind`, the
    type of self.params; PyTorch's optimizers refuse one) or in another `order` (init_kept's numbers)."""
    if kind in ("set", "frozenset"):
        return (f"SGD.__init__ kept the Parameters in a {kind}: a set loses the order they were given in (and its "
                "order changes from run to run); keep a list, self.params = list(params)")
    return "" if order == sorted(order) else ("SGD.__init__ kept the Parameters in another order than it was given "
                                              "them: keep a list in their order, self.params = list(params)")


def optimizer_holds(held: int, total: int, kind: str, one_shot: bool) -> str:
    """The cause when SGD(...) did not keep the model's parameters ('' when it holds all `total`), from what it held once
    made: `kind`, the type of self.params; `one_shot`, an iterator the first loop uses up; else `held`, how many."""
    if one_shot:
        return (f"SGD.__init__ kept params as the {named(kind)} it was given: the first loop over it (zero_grad()) "
                "uses it up and the next (step()) finds nothing; keep a list, self.params = list(params)")
    if held < total:
        return (f"the optimizer held {held} of the model's {total} Parameters once made: SGD.__init__ must keep "
                "every one, self.params = list(params) (a generator, as parameters() may return, is used up by "
                "the first loop over it: walk params once)")
    return ""


SUBCLASS_SKIPPED = ("parameters() asks a bare Module for its parameters() but not an instance of a subclass of "
                    "Module (a Linear, a Sequential): test isinstance(value, Module), not type(value) == Module")
UNORDERED = ("parameters() returns a {}, whose order changes from run to run: return a list, in the order the "  # facts.unordered
             "Parameters were defined (a set of id(p) can still tell which you have already seen)")


def stale_list(defaults: list, same_list: bool, kept: list) -> str:
    """The cause when parameters() keeps a list between calls ('' if nothing says so), from facts.kept_facts: its defaults and
    the containers (class, global, self; kinds named as the notebook named them) holding what calls collect; one list twice."""
    empty = {"list": "[]", "dict": "{}", "set": "set()"}
    if defaults:
        name, kind, function = defaults[0]
        new = empty.get(kind, f"{named(kind)}()")
        return (f"{named(function)} has a default argument {named(name)}={new}: Python makes that one object when "
                f"it defines the function, {a(kind)} that outlives the call and keeps what earlier calls collected; "
                f"write {named(name)}=None and start a new {named(kind)} inside the call")
    if kept:
        name, kind, where = kept[0]
        place = {"class": "kept on the class", "global": "at the top of its cell (a global)",
                 "self": "kept on the module itself"}.get(where, "kept outside the call")
        return (f"{named(name)} is {a(kind)} {place}, one object for every call of parameters(): it outlives the call "
                "and keeps what earlier calls collected (a Parameter replaced since, an id a new one can reuse); make it "
                f"a local, {named(str(name).split('.')[-1])} = {empty.get(kind, f'{named(kind)}()')} inside the call")
    if same_list:
        return ("parameters() returned the same list object on two calls: a list that outlives the call (kept, or "
                "cached) keeps what earlier calls collected and misses a Parameter set since, and what a caller does "
                "to it comes back; start a new list on every call")
    return ""


def parameters_gave(given, total: int, stale: str) -> str:
    """The cause ('' if none) when SGD(...) was given other than the model's `total` Parameters: `given`, the number among
    them of each entry parameters() returned (-1: another object; None: a generator, not walked), `stale`: stale_list's."""
    if given is None or len(given) == total and sorted(given) == list(range(total)):  # any order: every one, once
        return ""
    return stale or (f"parameters() gave SGD(...) {len(given)} entries, {len(set(given) - {-1})} of the model's "
                     f"{total} Parameters: the optimizer holds what parameters() returns (see its own checks)")


def not_parameters(kinds: list) -> str:
    """The cause ('' if none) when parameters() listed non-Parameters: `kinds`, [type name, is a Module] of each (facts.kinds_of)."""
    if not kinds:
        return ""
    name, module = kinds[0]
    if module:
        return (f"parameters() listed {a(name)}, which is not a Parameter: for an attribute that is a Module, add "
                "what its parameters() returns, not the module itself")
    return (f"parameters() listed {a(name)}, which is not a Parameter: list the Parameter objects themselves"
            + (" (not their .data)" if name == "ndarray" else ""))


def init_attributes(facts: dict) -> str:
    """The cause ('' if none) when Linear.__init__ does not keep what the given one does, from facts.init_facts: the types
    of layer.weight and .bias as read (a property too), and which of them vars() holds first."""
    for name in ("weight", "bias"):
        if facts["kinds"].get(name) != "Parameter":
            return (f"Linear.__init__ keeps no Parameter self.{name} (it keeps "
                    f"{', '.join(f'{named(n)}: {named(k)}' for n, k in facts['attributes'])}): keep the given __init__")
    if facts["order"] == ["bias", "weight"]:
        return ("Linear.__init__ sets self.bias before self.weight: keep the given __init__, weight first "
                "(parameters() lists them in that order, and a seed draws the weight's numbers first)")
    return ""


def forward_reads(facts: dict, message: str) -> str:
    """A wrong output's `message`, or, when Linear.__init__ keeps no Parameter weight or bias (facts.init_facts of a
    Linear it made), that first: forward() then reads other attributes than the self.weight and self.bias a check sets."""
    kept = facts.get("kinds") == {"weight": "Parameter", "bias": "Parameter"}
    cause = "" if kept else init_attributes(facts)
    return f"{cause}; forward() must compute with self.weight and self.bias, which the check sets" if cause else message


def given_init(facts: dict) -> str:
    """The cause ('' if none) when Linear.__init__ is not the given one, from what Linear(2, 1, default_rng(0)) made
    (facts.init_facts): its attributes, then its numbers in order (a shape that does not fit is layers_cause's)."""
    rng = np.random.default_rng(0)
    given = [rng.uniform(-2 ** -0.5, 2 ** -0.5, size=size) for size in ((1, 2), (1,))]  # weight, then bias
    drawn = arrays(facts["drawn"])
    same = drawn is not None and all(d.size == g.size and np.allclose(d.ravel(), g.ravel()) for d, g in zip(drawn, given))
    return init_attributes(facts) or ("" if same else (
        "Linear.__init__ draws other numbers than the given one for the same seed: keep the given __init__ "
        "(weight, then bias, uniform in +-1/sqrt(n_in))"))


def layers_cause(facts: dict) -> str:
    """The cause ('' if none) of a wrong network before its numbers (facts.layers_facts): the given __init__'s weight
    and bias shapes, then what forward returned when not a Tensor (a later layer would fail on it instead), then
    what calling the layer returned: the given Module.__call__ hands on what forward returned."""
    if facts.get("kinds", {}).get("weight") == "NoneType":  # no weight at all: no shape to speak of
        return init_attributes(facts)
    if facts["weight_shape"] != [1, 2]:
        return (f"Linear.__init__ made the weight of Linear(2, 1) of shape {tuple(facts['weight_shape'])}, not (n_out, "
                "n_in) = (1, 2): keep the given __init__, size=(n_out, n_in) (forward() computes x @ W.T + b)")
    if not facts.get("bias_fits", True):
        return (f"Linear.__init__ made the bias of Linear(2, 3) of shape {tuple(facts['bias_shape'])}, not (n_out,) = "
                "(3,): keep the given __init__, size=(n_out,) (x @ W.T + b adds the bias to each row)")
    returned, called = facts.get("forward_returned"), facts.get("call_returned")
    if returned:
        return (f"Linear.forward returned {a(returned)}: build the result from x, self.weight and self.bias with "
                "Tensor operations")
    return (f"calling the layer, layer(x), returned {a(called)} where its forward(x) returned a Tensor: the given "
            "Module.__call__ must return self.forward(x) (keep the given one in cell module)") if called else ""


# NumPy's words for operands whose shapes do not fit: a matmul's core dimension, a broadcast, a dot product.
SHAPES_MISFIT = re.compile(r"mismatch in its core dimension|could not be broadcast|not aligned")


def forward_raised(where: str, said: str, n_in: int, n_out: int, elementwise: bool = False) -> str:
    """The message when Linear.forward raised ValueError on a layer: `where`, what raised and its line (without the
    exception's words); `said`, the whole line with them; `elementwise`, from Tensor.__mul__ called by the notebook's
    line (`*`, np.dot on Tensors). Other misfits say how the weight is stored; any other ValueError is quoted."""
    layer = f"in Linear.forward on a layer with n_in={n_in}, n_out={n_out}"
    if elementwise:
        return (f"{where} {layer}: from Tensor `*`, which multiplies elementwise (`*`, or np.dot or another NumPy "
                "function given Tensors): compute x @ self.weight.T + self.bias with Tensor operations")
    if SHAPES_MISFIT.search(said):
        return (f"{where} {layer} (the shapes do not fit): the weight is stored as (n_out, n_in), so the layer "
                "computes x @ W.T + b")
    return f"{said} {layer}"


# The cell that defines each class of the lesson in the notebook as given (a grade id: "<cell linear>" in code).
HOMES = {"Module": "module", "Linear": "linear", "ReLU": "relu_sequential", "Sequential": "relu_sequential", "SGD": "sgd"}


def defined_again(cells: dict) -> str:
    """The note ('' if none) when a class in use comes from another cell than its own: `cells` holds, for each
    class of HOMES, the cell its methods come from ('' when unknown: not a cell of the saved notebook)."""
    again = [(name, cell) for name, cell in cells.items() if cell and cell != HOMES.get(name, cell)]
    name, cell = again[0] if again else ("", "")
    return "" if not again else (f"the {name} in use is the one cell {named(cell)} defines again, which "
                                 f"replaces cell {HOMES[name]}'s: remove that copy from cell {named(cell)}")
