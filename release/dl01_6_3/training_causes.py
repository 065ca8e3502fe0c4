"""Why zero_grad(), step() or no_grad() went wrong, and backward() left a gradient out, named from what they left:
the values and gradients before and after a call, what no_grad() returned (causes.py holds the rest and gives
these out too: the checks ask causes.<name>). Plain values in, one line out, so the public checks and the course's
grader, which reads what its probes sent back, say the same. Needs NumPy.
"""
from __future__ import annotations

import numpy as np

NONE_GRAD = ("zero_grad() set p.grad to None, not to an array of zeros: the next backward() adds into p.grad, "
             "so make it np.zeros_like(p.data)")
TENSOR_GRAD = ("zero_grad() set p.grad to a Tensor, not a NumPy array (PyTorch's .grad is one, this engine's is "
               "not): backward() adds arrays into p.grad and step() moves p.data by it, so make it "
               "np.zeros_like(p.data)")
# Without zero_grad() between two steps, a None grad after the first is step()'s: zero_grad() has not run since.
STEP_LEFT_NONE = ("step() left p.grad None, so the next backward() (no zero_grad() between the steps) cannot add "
                  "into it: clearing the gradients is zero_grad()'s job, step() only moves p.data")


def grad_kind(kind: str, tensor: bool) -> str:
    """The cause ('' if none) when zero_grad() left p.grad of type `kind` (`tensor`: a Tensor, a Parameter among
    them), not a NumPy array: named as that type, before any shape (a list's shape may be right)."""
    if kind == "ndarray":
        return ""
    return TENSOR_GRAD if tensor else (f"zero_grad() set p.grad to {'None' if kind == 'NoneType' else a(kind)}: p.grad "
                                       "must be a NumPy array shaped like p.data (np.zeros_like(p.data))")


def grads_changed(grads, after) -> str:
    """The cause ('' if none) when step() left p.grad (`after`) other than backward() made it (`grads`, None: none to
    compare, grads_missing's) and not zeros (step_move's) nor None (STEP_LEFT_NONE): the next backward() adds to it."""
    after, shapes = arrays(after), [None if g is None else np.shape(g) for g in grads]  # np.shape(None) is ()
    if after is None or [a.shape for a in after] != shapes or not any(np.any(a) for a in after):
        return ""
    return "" if all(np.allclose(a, g) for a, g in zip(after, grads)) else (
        "step() changed p.grad: without zero_grad() the next backward() adds to what step() left, so step() must "
        "leave p.grad as backward() made it and only move p.data")


def named(name) -> str:
    """A name the notebook chose (a class's, an attribute's), as a message shows it: as it is when it is a Python
    name (dotted), which holds no sentence, else quoted, so that no words the notebook wrote read as the checks'."""
    text = str(name)
    plain = len(text) <= 80 and all(part.isidentifier() or part == "<locals>" for part in text.split("."))
    return text if plain else repr(text[:80])


def a(name) -> str:
    """`named(name)` after its article: a list, an OrderedDict."""
    text = named(name)
    return f"{'an' if text[:1] in 'AEIOUaeiou' else 'a'} {text}"


def arrays(values):
    """The values as float arrays, or None when one is not numbers."""
    try:
        return [np.asarray(v, dtype=float) for v in values]
    except (TypeError, ValueError):
        return None


def step_move(before, after, grads, lr, what="the Parameters", order=None, zeroed=None, grads_after=None):
    """The cause of a wrong step ('' when it has no recognisable shape): each parameter's values before (`zeroed`:
    right after a zero_grad() run since, which must not change them) and after step(), against the move -lr * grad
    the gradients ask for (all zero, or missing: no blame); twice as far is a listing's fault only where `order`
    (see init_kept) holds a Parameter twice. `grads_after`, each p.grad after the step (None: not measured), tells a
    step that cleared the gradients it was to move by from one that moved nothing."""
    before, after, grads, zeroed = arrays(before), arrays(after), arrays(grads or []), arrays(zeroed or before)
    cleared = arrays(grads_after) if grads_after is not None else None
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
        they, their = ("it was", "its gradient") if len(before) == 1 else ("they were", "their gradients")
        if cleared is not None and len(cleared) == len(grads) and not any(np.any(c) for c in cleared):
            return (f"step() left {what} where {they} and set {their} to zero: clearing p.grad is "
                    "zero_grad()'s job, before backward(), and step() only moves each p.data in place by "
                    "-self.lr * p.grad")
        if grads_after is not None and grads_changed(grads, grads_after):  # it wrote to p.grad, not to p.data
            return f"step() left {what} where {they} and changed {their} instead: move p.data, p.data -= self.lr * p.grad"
        return (f"step() left {what} where {they} (it did not move {'it' if len(before) == 1 else 'them'}): change "
                "p.data in place, p.data -= self.lr * p.grad (p = p - lr * p.grad only rebinds a local name)")
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


def rate_changed(lr: float, rates) -> str:
    """The cause ('' if none) when step() changed self.lr: `rates`, self.lr after each step (None: not a number)."""
    for rate in rates:
        number = isinstance(rate, (int, float, np.number)) and not isinstance(rate, bool)
        if not number or not np.isclose(rate, lr):
            return (f"step() changed self.lr from {lr:g} to {f'{rate:g}' if number else 'no number'}: the rate "
                    "stays the one SGD(params, lr) was given, and step() only moves each p.data")
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
    return "" if not missing else (f"after backward() no gradient reached {whose}{listed}: Linear.forward must "
                                   "compute with Tensor operations on x, self.weight and self.bias (not on their .data)")


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


def swallowed(is_class: bool) -> str:
    """no_grad() swallowed an exception raised inside its block: a class's __exit__ that returned a true value, or
    a generator that caught it (`is_class`: whether no_grad is a class of its own)."""
    return "no_grad() swallowed an exception raised inside the block: " + (
        "its __exit__ returned a true value; return False (or None) to let it through" if is_class
        else "let it through (try/finally, no except)")


def no_grad_made(kind: str, missing: list, body: str, is_class: bool = False) -> str:
    """The cause ('' if none) when what no_grad() returned cannot run a `with` block, from what it was: `kind`, its
    type; `missing`, which of __enter__ and __exit__ it lacks; `is_class`, whether no_grad is a class of its own;
    `body`, for @contextlib.contextmanager's object, the type of what the decorated function returned ('' for
    another context manager): a generator only when it has a yield."""
    if missing and is_class:
        return (f"no_grad is a class whose objects have no {' and no '.join(missing)}, so `with no_grad():` cannot "
                "use them: a class for `with` defines __enter__(self) and __exit__(self, exc_type, exc, tb)")
    if missing:
        return (f"no_grad() returned {a(kind)}, not a context manager, so `with no_grad():` cannot enter it: put "
                "@contextlib.contextmanager above def no_grad() and yield where the block runs")
    if body and body != "generator":
        return (f"no_grad() has no yield: @contextlib.contextmanager called it for a generator and got {a(body)}; "
                "yield where the block runs, after switching Tensor.recording off and before restoring it")
    return ""


def zero_grad_left(values, zeroed, before=(), cleared=()) -> str:
    """What zero_grad() did wrong ('' if nothing), as measured right after it ran: each p.data before it (`values`)
    and after (`zeroed`), then each p.grad before it (`before`) and after (`cleared`, grads_left)."""
    values, zeroed = arrays(values), arrays(zeroed)
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
