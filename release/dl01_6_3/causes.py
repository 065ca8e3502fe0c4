"""Why a check failed, named as its cause: what your code raised (the method and the line), or what a wrong
parameters(), SGD(...), zero_grad() or step() did.

The public checks (test_<part>.py, through notebook_checks.py) and the course's grader use this same file, so
the words you see here are the words of your grade. It finds causes from plain values (exceptions, arrays,
numbers, facts such as what SGD(...) kept), so that a message names the cause ("set p.grad to None", "kept
params as the generator") rather than a number further down; kept_list alone looks at a live module, for the
public checks (the grader's probes gather the same facts in the process that runs your code). Needs NumPy.
"""
from __future__ import annotations

import inspect
import re
import traceback
import unicodedata

import numpy as np

NONE_GRAD = ("zero_grad() set p.grad to None, not to an array of zeros: the next backward() adds into p.grad, "
             "so make it np.zeros_like(p.data)")


# What a terminal acts on (C0 but newline and tab, DEL, C1): removed from every line printed, since a message
# can quote the notebook (an exception's text, a type's name); format characters (Unicode's Cf: the
# bidirectional controls that reorder a line, zero-width ones) written as their escapes, \u202e. The grader's
# autograder/inert.py does the same.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _format_escaped(match) -> str:
    char = match[0]
    return char.encode("unicode_escape").decode("ascii") if unicodedata.category(char) == "Cf" else char


def printable(text: str) -> str:
    """`text` without the control characters a terminal would act on, and its format characters escaped."""
    return NON_ASCII.sub(_format_escaped, CONTROL.sub("", text))


def _qualname(frame) -> str:
    """`Class.method` of a frame's code (co_qualname from Python 3.11; before it, found through `self`)."""
    code = frame.f_code
    if hasattr(code, "co_qualname"):
        return code.co_qualname
    owner = frame.f_locals.get("self") if code.co_varnames[:1] == ("self",) else None
    for cls in type(owner).__mro__ if owner is not None else ():
        if getattr(vars(cls).get(code.co_name), "__code__", None) is code:
            return f"{cls.__qualname__}.{code.co_name}"
    return code.co_name


def in_notebook(filename: str) -> bool:
    """Code from a notebook cell: the checks' "<cell ...>", or IPython's in a live kernel."""
    return filename.startswith(("<cell", "<ipython-input")) or "ipykernel_" in filename


def _innermost(exc: BaseException):
    """(frame, line) of the innermost notebook code the exception passed through, or None."""
    frames = [(frame, line) for frame, line in traceback.walk_tb(exc.__traceback__)
              if in_notebook(frame.f_code.co_filename)]
    return frames[-1] if frames else None


def where(exc: BaseException) -> str | None:
    """The innermost notebook code (a cell's function, or "<module>") the exception passed through."""
    innermost = _innermost(exc)
    return _qualname(innermost[0]) if innermost else None


def describe_exception(exc: BaseException) -> str:
    """One line: `Class.method raised Type: message (line N of its cell)`, naming the innermost notebook
    code involved and the line of its cell that raised (the line Jupyter numbers in that cell)."""
    innermost = _innermost(exc)
    function = None if where(exc) in (None, "<module>") else where(exc)
    if isinstance(exc, NotImplementedError) and function:
        return f"{function} is not written yet: replace `raise NotImplementedError()` with your code"
    if isinstance(exc, SyntaxError):
        return f"{(exc.filename or 'a cell').strip('<>')} has a syntax error on line {exc.lineno}: {exc.msg}"
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    line = f" (line {innermost[1]}{' of its cell' if function else ''})" if innermost else ""
    return f"{function} raised {what}{line}" if function else f"raised {what}{line}"


def _arrays(values):
    try:
        return [np.asarray(v, dtype=float) for v in values]
    except (TypeError, ValueError):
        return None


def not_a_tensor(type_name: str) -> str:
    """The cause when Linear.forward returned a `type_name`, not a Tensor: the next layer of a network, or the
    loss, would fail on it and be named in its place."""
    return (f"Linear.forward returned a {type_name}: build the result from x, self.weight and self.bias with Tensor "
            "operations")


def step_move(before, after, grads, lr, what="the Parameters", order=None):
    """The cause of a wrong step ('' when it has no recognisable shape): each parameter's values before and after
    step(), against the move -lr * grad the gradients it was given ask for (all zero, or missing: no move, no
    blame); twice as far is a listing's fault only where `order` (see init_kept) holds a Parameter twice."""
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
        return (f"step() left {what} where they were (it did not move them): change p.data in place, "
                "p.data -= self.lr * p.grad")
    if all(np.allclose(a, w) for a, w in zip(after, want)):
        return (f"{what} were zero when step() ran: zero_grad() changed p.data (it must clear p.grad only)")
    if any(np.allclose(g, 0) and np.any(w != 0) for g, w in zip(got, want)):
        return ("step() moved only some of the parameters: loop over every p in self.params "
                "(is a return inside the loop?)")
    if all(np.allclose(g, -w) for g, w in zip(got, want)):
        return f"step() moved {what} up the gradient: subtract self.lr * p.grad"
    flat_got, flat_want = np.concatenate([g.ravel() for g in got]), np.concatenate([w.ravel() for w in want])
    ratio = float(flat_got @ flat_want / (flat_want @ flat_want))
    if ratio > 0 and not np.isclose(ratio, 1) and np.allclose(flat_got, ratio * flat_want):
        if np.isclose(ratio, 2) and order is not None and len(order) != len(set(order)):
            return (f"step() moved {what} twice as far as -lr * grad: a Parameter listed twice is moved twice "
                    "(parameters() must list each Parameter once)")
        return (f"step() moved {what} {ratio:.3g} times as far as -lr * grad: use the learning rate stored in "
                "self.lr")
    return ""


def grads_left(cleared):
    """The cause when zero_grad() did not clear every gradient ('' when it did): `cleared` holds each
    p.grad after zero_grad() (None for a grad set to None)."""
    if any(g is None for g in cleared):
        return NONE_GRAD
    zero = [not np.any(np.asarray(g, dtype=float)) for g in cleared]
    if all(zero):
        return ""
    if not any(zero):
        return "zero_grad() left the gradients as they were: set p.grad to zeros for every p in self.params"
    return (f"zero_grad() cleared only {sum(zero)} of the {len(zero)} gradients: loop over every parameter in "
            "self.params (is a return inside the loop?)")


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


def stale_list(defaults: list, same_list: bool) -> str:
    """The cause when parameters() keeps a list between calls ('' when nothing says so): `defaults` holds
    [name, type name] for each argument of parameters() with a default (defaults_of), `same_list` says
    whether two calls returned the very same list object."""
    empty = {"list": "[]", "dict": "{}", "set": "set()"}
    shared = [f"{name}={empty[kind]}" for name, kind in defaults if kind in empty]
    if shared:
        return (f"Module.parameters has a default argument {shared[0]}: Python makes that one object when it "
                "defines the method, a list that outlives the call and keeps what earlier calls collected; "
                f"write {shared[0].split('=')[0]}=None and start a new list inside the call")
    if same_list:
        return ("parameters() returned the same list object on two calls: a list that outlives the call (a "
                "class attribute, or one kept on self) keeps what earlier calls collected; start from an empty "
                "list on every call")
    return ""


def defaults_of(function) -> list:
    """[name, type name] for each argument of `function` that has a default (the probes gather the same)."""
    try:
        arguments = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    return [[a.name, type(a.default).__name__] for a in arguments if a.default is not a.empty]


def kept_list(module) -> str:
    """stale_list for a live module: what its parameters() defaults to, and whether two calls give one list."""
    first, second = module.parameters(), module.parameters()
    return stale_list(defaults_of(type(module).parameters), isinstance(first, list) and first is second)
