"""Why a check failed, named as its cause: what a wrong Linear.__init__, parameters(), SGD(...), zero_grad() or
step() did (what your code raised, explain.py says).

The public checks (test_<part>.py, through notebook_checks.py) and the course's grader use this same file, so
the words you see here are the words of your grade. It finds causes from plain values (exceptions, arrays,
numbers, facts such as what SGD(...) kept), so that a message names the cause ("set p.grad to None") rather
than a number further down. The public checks read those facts from your live classes (facts.py); the
grader's probes gather the same in the process that runs your code. Needs NumPy.
"""
from __future__ import annotations

import numpy as np

NONE_GRAD = ("zero_grad() set p.grad to None, not to an array of zeros: the next backward() adds into p.grad, "
             "so make it np.zeros_like(p.data)")


def _arrays(values):
    try:
        return [np.asarray(v, dtype=float) for v in values]
    except (TypeError, ValueError):
        return None


def step_move(before, after, grads, lr, what="the Parameters", order=None, zeroed=None):
    """The cause of a wrong step ('' when it has no recognisable shape): each parameter's values before (`zeroed`:
    right after a zero_grad() run since, which must not change them) and after step(), against the move -lr * grad
    the gradients ask for (all zero, or missing: no blame); twice as far is a listing's fault only where `order`
    (see init_kept) holds a Parameter twice."""
    before, after, grads, zeroed = _arrays(before), _arrays(after), _arrays(grads or []), _arrays(zeroed or before)
    if before is None or after is None or not grads or len(grads) != len(before) or len(after) != len(before):
        return ""
    if zero_grad_left(before, zeroed):
        return zero_grad_left(before, zeroed)
    if any(a.shape != b.shape or g.shape != b.shape for a, b, g in zip(after, before, grads)):
        return ""
    got = [a - b for a, b in zip(after, before)]
    want = [-lr * g for g in grads]
    if not any(np.any(w != 0) for w in want) or all(np.allclose(g, w) for g, w in zip(got, want)):
        return ""
    if all(np.allclose(g, 0) for g in got):
        return (f"step() left {what} where they were (it did not move them): change p.data in place, "
                "p.data -= self.lr * p.grad (p = p - lr * p.grad only rebinds a local name)")
    if all(np.allclose(a, w) for a, w in zip(after, want)) and any(np.any(b != 0) for b in before):  # from values
        return (f"step() set {what} to -lr * grad, leaving out their values: change p.data in place, "
                "p.data -= self.lr * p.grad")
    still = [bool(np.allclose(g, 0) and np.any(w != 0)) for g, w in zip(got, want)]
    if any(still) and all(s or np.allclose(g, w) for s, g, w in zip(still, got, want)):  # the others moved right
        stopped = still.index(True) == len(still) - sum(still)  # the first ones moved, then none: the loop ended
        return ("step() moved only some of the parameters: loop over every p in self.params"
                + (" (is a return inside the loop?)" if stopped else ""))
    if all(np.allclose(g, -w) for g, w in zip(got, want)):
        return f"step() moved {what} up the gradient: subtract self.lr * p.grad"
    flat_got, flat_want = np.concatenate([g.ravel() for g in got]), np.concatenate([w.ravel() for w in want])
    ratio = float(flat_got @ flat_want / (flat_want @ flat_want))
    if ratio > 0 and not np.isclose(ratio, 1) and np.allclose(flat_got, ratio * flat_want):
        if np.isclose(ratio, 2) and order is not None and len(order) != len(set(order)):
            return (f"step() moved {what} twice as far as -lr * grad: a Parameter listed twice is moved twice "
                    "(parameters() must list each Parameter once)")
        # the rate it acted as if it had, not a guess at why: a rate typed in and a stray factor read alike here
        return (f"step() moved {what} {ratio:.3g} times as far as -lr * grad, as if the learning rate were "
                f"{ratio * lr:.3g} while self.lr is {lr:g}: move each p.data by exactly -self.lr * p.grad")
    return ""


def grads_missing(grads, names, expected=None, whose="") -> str:
    """The cause ('' if none) when backward() left Parameters without a gradient (None or all zero) that must get
    one: each of `names` (in the order of `grads`) whose `expected` gradient is not zero, or every one where
    `expected` is None (the worked example's loss depends on every number of its weight and bias); `whose`
    comes before the names."""
    expected = expected if expected is not None else [1.0] * len(grads)
    missing = [name for name, grad, want in zip(names, grads, expected)
               if (grad is None or not np.any(np.asarray(grad, dtype=float))) and np.any(np.asarray(want, dtype=float))]
    listed = " and ".join([", ".join(missing[:-1]), missing[-1]] if len(missing) > 1 else missing)
    return "" if not missing else (f"after backward() no gradient reached {whose}{listed}: Linear.forward "
                                   "must compute with Tensor operations on x, self.weight and self.bias (not on "
                                   "their .data)")


def grads_left(cleared, before):
    """The cause when zero_grad() did not clear every gradient ('' when it did), from what it measured: `cleared`
    holds each p.grad after zero_grad() (None for a grad set to None), `before` each one before it ran. A grad
    kept as it was is told apart from one set to other numbers; a loop that stopped early is asked about only
    where the grads cleared are the first ones and the rest kept theirs, the shape a return in the loop leaves."""
    if any(g is None for g in cleared):
        return NONE_GRAD
    zero = [not np.any(np.asarray(g, dtype=float)) for g in cleared]
    if all(zero):
        return ""
    kept = [not z and b is not None and np.shape(g) == np.shape(b) and np.array_equal(np.asarray(g, dtype=float), np.asarray(b, dtype=float))
            for g, b, z in zip(cleared, before, zero)]
    if not all(z or k for z, k in zip(zero, kept)):
        other = [np.asarray(g, dtype=float) for g, z, k in zip(cleared, zero, kept) if not z and not k]
        values = set(np.unique(np.concatenate([o.ravel() for o in other])).tolist())
        what = f"{values.pop():g} everywhere" if len(values) == 1 else "other numbers"
        return (f"zero_grad() left {len(other)} of the {len(zero)} gradients holding {what} (neither zeros nor the "
                "numbers they held before): make each p.grad np.zeros_like(p.data)")
    if not any(zero):
        return "zero_grad() left the gradients as they were: set p.grad to zeros for every p in self.params"
    stopped = zero.index(False) == sum(zero)  # the cleared ones first, then only grads kept as they were
    return (f"zero_grad() cleared only {sum(zero)} of the {len(zero)} gradients and left the others as they were: "
            "loop over every parameter in self.params" + (" (is a return inside the loop?)" if stopped else ""))


def no_grad_made(kind: str, enters: bool, body: str) -> str:
    """The cause ('' if none) when what no_grad() returned cannot run a `with` block, from what it was: `kind`, its
    type; `enters`, whether it has __enter__ and __exit__; `body`, for @contextlib.contextmanager's object, the type
    of what the decorated function returned ('' for another context manager): a generator only when it has a yield."""
    if not enters:
        return (f"no_grad() returned a {kind}, not a context manager, so `with no_grad():` cannot enter it: put "
                "@contextlib.contextmanager above def no_grad() and yield where the block runs")
    if body and body != "generator":
        return (f"no_grad() has no yield: @contextlib.contextmanager called it for a generator and got a {body}; "
                "yield where the block runs, after switching Tensor.recording off and before restoring it")
    return ""


def zero_grad_left(values, zeroed, before=(), cleared=()) -> str:
    """What zero_grad() did wrong ('' if nothing), as measured right after it ran: each p.data before it (`values`)
    and after (`zeroed`), then each p.grad before it (`before`) and after (`cleared`, grads_left)."""
    values, zeroed = _arrays(values), _arrays(zeroed)
    if values is not None and zeroed is not None and any(
            z.shape != v.shape or not np.array_equal(z, v) for z, v in zip(zeroed, values)):
        return "zero_grad() changed p.data (it must clear p.grad only)"
    return grads_left(list(cleared), list(before)) if len(cleared) else ""


def grads_shared(owners: list) -> str:
    """The cause ('' if none) when zero_grad() left one array to several Parameters (owners: first sharer of each)."""
    sharing = {n for n, o in enumerate(owners) if o != n} | {o for n, o in enumerate(owners) if o != n}
    return "" if not sharing else (f"zero_grad() left {len(sharing)} Parameters sharing grad arrays (one memory, "
                                   "or views of it): backward() adds each one's gradient into the same memory; give "
                                   "every Parameter its own, p.grad = np.zeros_like(p.data)")


def init_kept(order, total, kept_lr, lr):
    """The cause ('' if none) when the given SGD.__init__ did not keep what SGD(params, lr) was given: `order`, the
    number among the `total` params of each entry of self.params (not checked when total is 0); `kept_lr`, self.lr."""
    if total and order != list(range(total)):
        return "SGD.__init__ did not keep the Parameters it was given: self.params = list(params), not copies or others"
    same = isinstance(kept_lr, (int, float, np.number)) and np.isclose(kept_lr, lr)
    return "" if same else f"SGD.__init__ kept self.lr = {kept_lr!s:.12}, not the {lr:g} it was given (self.lr = lr)"


def optimizer_holds(held: int, total: int, kind: str, one_shot: bool) -> str:
    """The cause when SGD(...) did not keep the model's parameters ('' when it holds all `total`), from what it
    held right after it was made: `kind`, the type of self.params; `one_shot`, whether that is an iterator
    (a generator), which the first loop over it uses up; else `held`, how many of the parameters it holds."""
    if one_shot:
        return (f"SGD.__init__ kept params as the {kind} it was given: the first loop over it (zero_grad()) "
                "uses it up and the next (step()) finds nothing; keep a list, self.params = list(params)")
    if held < total:
        return (f"the optimizer held {held} of the model's {total} Parameters once made: SGD.__init__ must keep "
                "every one, self.params = list(params) (a generator, as parameters() may return, is used up by "
                "the first loop over it: walk params once)")
    return ""


def stale_list(defaults: list, same_list: bool, kept: list) -> str:
    """The cause when parameters() keeps a list between calls ('' if nothing says so), from facts.kept_facts: its
    defaults and the containers (class, global, self) that hold what calls collect; two calls giving one list."""
    empty = {"list": "[]", "dict": "{}", "set": "set()"}
    shared = [(name, kind) for name, kind in defaults if kind in empty]
    if shared:
        name, kind = shared[0]
        return (f"Module.parameters has a default argument {name}={empty[kind]}: Python makes that one object when "
                f"it defines the method, a {kind} that outlives the call and keeps what earlier calls collected; "
                f"write {name}=None and start a new {kind} inside the call")
    if kept:
        name, kind, where = kept[0]
        place = {"class": "kept on the class", "global": "at the top of its cell (a global)",
                 "self": "kept on the module itself"}[where]
        return (f"{name} is a {kind} {place}, one object for every call of parameters(): it outlives the call and "
                "keeps what earlier calls collected (ids of Parameters gone, which new ones can reuse); make it a "
                f"local, {name.split('.')[-1]} = {empty[kind]} inside the call")
    if same_list:
        return ("parameters() returned the same list object on two calls: a list that outlives the call (kept, or "
                "cached) keeps what earlier calls collected and misses a Parameter set since, and what a caller does "
                "to it comes back; start a new list on every call")
    return ""


def parameters_gave(given, total: int, stale: str) -> str:
    """The cause ('' if none) when SGD(...) was given another list than the model's `total` Parameters: `given`
    holds the number among them of each entry parameters() returned (-1 for another object; None for a generator,
    which is not walked), `stale` what stale_list says of that parameters()."""
    if given is None or sorted(given) == list(range(total)):  # in another order: still every one, once
        return ""
    return stale or (f"parameters() gave SGD(...) {len(given)} entries, {len(set(given) - {-1})} of the model's "
                     f"{total} Parameters: the optimizer holds what parameters() returns (see its own checks)")


def not_parameters(kinds: list) -> str:
    """The cause ('' if none) when parameters() listed objects that are not Parameters: `kinds` holds [type
    name, whether it is a Module] for each of them (facts.kinds_of)."""
    if not kinds:
        return ""
    name, module = kinds[0]
    if module:
        return (f"parameters() listed a {name}, which is not a Parameter: for an attribute that is a Module, add "
                "what its parameters() returns, not the module itself")
    return (f"parameters() listed a {name}, which is not a Parameter: list the Parameter objects themselves"
            + (" (not their .data)" if name == "ndarray" else ""))


def init_attributes(facts: dict) -> str:
    """The cause ('' if none) when Linear.__init__ does not keep what the given one does, from facts.init_facts: the
    types of layer.weight and .bias as read (a property too), and which of them vars() holds first."""
    for name in ("weight", "bias"):
        if facts["kinds"].get(name) != "Parameter":
            return (f"Linear.__init__ keeps no Parameter self.{name} (it keeps "
                    f"{', '.join(f'{n}: {k}' for n, k in facts['attributes'])}): keep the given __init__")
    if facts["order"] == ["bias", "weight"]:
        return ("Linear.__init__ sets self.bias before self.weight: keep the given __init__, weight first "
                "(parameters() lists them in that order, and a seed draws the weight's numbers first)")
    return ""


def given_init(facts: dict) -> str:
    """The cause ('' if none) when Linear.__init__ is not the given one, from what Linear(2, 1, default_rng(0)) made
    (facts.init_facts): its attributes, then its numbers against the given draws the lesson's numbers come from."""
    rng = np.random.default_rng(0)
    given = [rng.uniform(-2 ** -0.5, 2 ** -0.5, size=size) for size in ((1, 2), (1,))]  # weight, then bias
    drawn = _arrays(facts["drawn"])
    same = drawn is not None and all(d.shape == g.shape and np.allclose(d, g) for d, g in zip(drawn, given))
    return init_attributes(facts) or ("" if same else (
        "Linear.__init__ draws other numbers than the given one for the same seed: keep the given __init__ "
        "(weight, then bias, uniform in +-1/sqrt(n_in))"))


def layers_cause(facts: dict) -> str:
    """The cause ('' if none) of a wrong network before its numbers (facts.layers_facts): the given __init__'s weight
    shape for Linear(2, 1), then what forward returned when not a Tensor (a later layer would fail on it instead),
    then what calling the layer returned: the given Module.__call__ hands on what forward returned."""
    if facts["weight_shape"] != [1, 2]:
        return (f"Linear.__init__ made the weight of Linear(2, 1) of shape {tuple(facts['weight_shape'])}, not (n_out, "
                "n_in) = (1, 2): keep the given __init__, size=(n_out, n_in) (forward() computes x @ W.T + b)")
    returned, called = facts.get("forward_returned"), facts.get("call_returned")
    if returned:
        return (f"Linear.forward returned a {returned}: build the result from x, self.weight and self.bias with "
                "Tensor operations")
    return (f"calling the layer, layer(x), returned a {called} where its forward(x) returned a Tensor: the given "
            "Module.__call__ must return self.forward(x) (keep the given one in cell module)") if called else ""


# The cell that defines each class of the lesson in the notebook as given (a grade id: "<cell linear>" in code).
HOMES = {"Module": "module", "Linear": "linear", "ReLU": "relu_sequential", "Sequential": "relu_sequential", "SGD": "sgd"}


def defined_again(cells: dict) -> str:
    """The note ('' if none) when a class in use comes from another cell than its own: `cells` holds, for each
    class of HOMES, the cell its methods come from ('' when unknown: not a cell of the saved notebook)."""
    again = [(name, cell) for name, cell in cells.items() if cell and cell != HOMES.get(name, cell)]
    return "" if not again else (f"the {again[0][0]} in use is the one cell {again[0][1]} defines again, which "
                                 f"replaces cell {HOMES[again[0][0]]}'s: remove that copy from cell {again[0][1]}")
