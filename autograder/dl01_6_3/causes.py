"""What a wrong step() or zero_grad() did, named from the numbers it left behind (for the hidden suites).

Runs in the grader's process only, on the plain data the probes sent back: a check calls it before it
compares a consequence (a loss, a model's output), so that its message names the cause ("did not move",
"moved up the gradient", "left the gradients as they were") rather than a number further down.
"""
import numpy as np


def _arrays(values):
    try:
        return [np.asarray(v, dtype=float) for v in values]
    except (TypeError, ValueError):
        return None


def step_move(before, after, grads, lr, what="the Parameters"):
    """The cause of a wrong step ('' when it has no recognisable shape): each parameter's values before and
    after step(), against the move -lr * grad that the gradients step() was given ask for. Gradients that are
    all zero (or missing) ask for no move, so they blame nothing here."""
    before, after, grads = _arrays(before), _arrays(after), _arrays(grads or [])
    if before is None or after is None or not grads or len(grads) != len(before) or len(after) != len(before):
        return ""
    if any(a.shape != b.shape or g.shape != b.shape for a, b, g in zip(after, before, grads)):
        return ""
    got = [a - b for a, b in zip(after, before)]
    want = [-lr * g for g in grads]
    if not any(np.any(w != 0) for w in want) or all(np.allclose(g, w) for g, w in zip(got, want)):
        return ""
    if all(np.allclose(g, 0) for g in got):
        return (f"step() did not move {what}: they stayed where they were; change p.data in place, "
                "p.data -= self.lr * p.grad")
    if any(np.allclose(g, 0) and np.any(w != 0) for g, w in zip(got, want)):
        return ("step() moved only some of the parameters: loop over every p in self.params "
                "(is a return inside the loop?)")
    if all(np.allclose(g, -w) for g, w in zip(got, want)):
        return f"step() moved {what} up the gradient: subtract self.lr * p.grad"
    if all(np.allclose(a, w) for a, w in zip(after, want)):
        return (f"{what} were zero when step() ran: zero_grad() changed p.data (it must clear p.grad only)")
    flat_got, flat_want = np.concatenate([g.ravel() for g in got]), np.concatenate([w.ravel() for w in want])
    ratio = float(flat_got @ flat_want / (flat_want @ flat_want))
    if ratio > 0 and not np.isclose(ratio, 1) and np.allclose(flat_got, ratio * flat_want):
        if np.isclose(ratio, 2):
            return (f"step() moved {what} twice as far as -lr * grad: a Parameter listed twice is moved twice "
                    "(parameters() must list each Parameter once)")
        return (f"step() moved {what} {ratio:.3g} times as far as -lr * grad: use the learning rate stored in "
                "self.lr")
    return ""


def grads_left(cleared):
    """The cause when zero_grad() did not clear every gradient ('' when it did): `cleared` holds each
    p.grad after zero_grad() (None for a grad set to None, which another message names)."""
    zero = [g is not None and not np.any(np.asarray(g, dtype=float)) for g in cleared]
    if all(zero):
        return ""
    if not any(zero):
        return "zero_grad() left the gradients as they were: set p.grad to zeros for every p in self.params"
    return (f"zero_grad() cleared only {sum(zero)} of the {len(zero)} gradients: loop over every parameter in "
            "self.params (is a return inside the loop?)")
