"""What the public checks read from the notebook's live classes before they blame a method: what the layers do and
the given Linear.__init__ made (layers_facts, init_facts), what parameters() defaults to and keeps (kept_list), what it
gave SGD(...) (given_cause) and what SGD(...) kept (holds, order); and of the saved notebook, a given cell you edited
and the names it binds (edited_given, bound_by). The grader's probes read the same facts with this file. NumPy.
"""
from __future__ import annotations

import functools
import gc
import inspect
import re
import types
from collections.abc import MutableMapping, MutableSequence, MutableSet

import numpy as np
from causes import HOMES, defined_again, init_kept, not_parameters, optimizer_holds, parameters_gave, stale_list


def collected(value, parameter, ids: set) -> bool:
    """Whether `value` is a mutable container (a list, a deque, a set, a dict: its keys) holding Parameters
    (`parameter`; () for none) or ids of Parameters (`ids`): what parameters() collects. A counter's ints
    (_calls=[0]) or a constant it only reads (KINDS = [list, tuple]) keep nothing between calls."""
    return isinstance(value, (MutableSequence, MutableSet, MutableMapping)) and any(
        isinstance(item, parameter) or (type(item) is int and item in ids) for item in value)


def live(parameter) -> set:
    """The ids of the Parameters alive now (the module's among them): what ids a parameters() keeps can be."""
    return {id(item) for item in gc.get_objects() if issubclass(type(item), parameter)}


def defaults_of(function, parameter, ids: set) -> list:
    """[name, type name, qualified name] of each argument whose default holds what a call collected, of `function`
    or of a function it calls by name (a helper of its cell: _collect(module, seen=set()))."""
    names = getattr(function, "__globals__", {})
    helpers = [names[n] for n in getattr(getattr(function, "__code__", None), "co_names", ()) if inspect.isfunction(names.get(n))]
    try:
        return [[a.name, type(a.default).__name__, f.__qualname__] for f in [function, *helpers]
                for a in inspect.signature(f).parameters.values() if collected(a.default, parameter, ids)]
    except (TypeError, ValueError):
        return []


def kept_outside(module, parameter, ids: set) -> list:
    """[name, type name, where] for each container outliving a call of parameters() that holds what calls collected:
    on its class ("class"), a global ("global"), the module (ids, or Parameters in one it names: self._params)."""
    method = getattr(type(module), "parameters", None)
    code, names = getattr(method, "__code__", None), getattr(method, "__globals__", {})
    return ([[f"{c.__name__}.{name}", type(value).__name__, "class"] for c in type(module).__mro__
             for name, value in vars(c).items() if not name.startswith("__") and collected(value, parameter, ids)]
            + [[name, type(names[name]).__name__, "global"] for name in getattr(code, "co_names", ())
               if collected(names.get(name), parameter, ids)]
            + [[f"self.{name}", type(value).__name__, "self"] for name, value in vars(module).items()
               if collected(value, parameter if name in getattr(code, "co_names", ()) else (), ids)])


def kinds_of(listed, parameter: type, module: type) -> list:
    """[type name, whether it is a Module] for each of `listed` that is not a Parameter."""
    return [[type(p).__name__, isinstance(p, module)] for p in listed if not isinstance(p, parameter)]


def kept_facts(module, found, parameter: type) -> dict:
    """causes.stale_list's facts of a module whose parameters() returned `found` (defaults_of, kept_outside)."""
    again, ids = module.parameters(), live(parameter)
    return {"defaults": defaults_of(type(module).parameters, parameter, ids),
            "same_list": isinstance(found, list) and again is found, "kept": kept_outside(module, parameter, ids)}


def unordered(found) -> str:
    """The type of what parameters() returned when it keeps no order (a set, a frozenset, iterated as they are: memory
    addresses order it, run by run), '' for anything else (a list, a tuple, a generator, a dict's keys or values)."""
    kind = next((kind for kind in (set, frozenset) if isinstance(found, kind)), None)  # a subclass that iterates its own
    return type(found).__name__ if kind and type(found).__iter__ is kind.__iter__ else ""  # way keeps its order


def kept_list(module, parameter: type) -> str:
    """causes.stale_list for a live module."""
    return stale_list(**kept_facts(module, module.parameters(), parameter))


def given_cause(module, found, params, parameter: type, kind: type) -> str:
    """What is wrong ('' if nothing) with what `module`.parameters() returned (`found`) and SGD(...) was given,
    against the module's `params`: an entry that is not a `parameter` (causes.not_parameters, `kind` the Module
    class), or not every one of `params` (causes.parameters_gave, with what parameters() keeps between calls).
    A list or a tuple only: a generator is not walked here (that would use it up)."""
    if not isinstance(found, (list, tuple)):
        return ""
    given = [next((i for i, p in enumerate(params) if p is q), -1) for q in found]
    if sorted(given) == list(range(len(params))):
        return ""
    return not_parameters(kinds_of(found, parameter, kind)) or parameters_gave(
        given, len(params), stale_list(**kept_facts(module, found, parameter)))


def holds(optimizer, params, lr):
    """The cause when SGD(..., lr) did not keep every one of `params` or the rate ('' when it did), asked right
    after it was made: a generator it kept is not walked here (that would use it up)."""
    kind = type(optimizer.params)
    held = [] if hasattr(kind, "__next__") else list(optimizer.params)
    cause = optimizer_holds(sum(any(p is q for q in held) for p in params), len(params), kind.__name__,
                            hasattr(kind, "__next__"))
    return cause or init_kept([], 0, getattr(optimizer, "lr", None), lr)


def order(optimizer, params):
    """causes.init_kept's number among `params` of each entry of self.params (-1: another; None: a generator)."""
    if hasattr(type(optimizer.params), "__next__"):
        return None
    return [next((i for i, p in enumerate(params) if p is q), -1) for q in optimizer.params]


def init_facts(layer) -> dict:
    """What causes.given_init reads of a Linear(2, 1) made with np.random.default_rng(0): the types of layer.weight
    and .bias as read, which of them vars() holds first (by identity, as parameters() walks it), [name, type name]
    of its attributes, and the numbers of its weight and bias (the probes gather the same)."""
    held = {name: getattr(layer, name, None) for name in ("weight", "bias")}
    return {"kinds": {name: type(value).__name__ for name, value in held.items()},
            "order": [name for value in vars(layer).values() for name in held if held[name] is value],
            "attributes": [[name, type(value).__name__] for name, value in vars(layer).items()],
            "drawn": [getattr(value, "data", None) for value in held.values()]}


def layers_facts(nb) -> dict:
    """For the public checks, on the notebook's live classes (`nb`: its names as attributes): what the layers
    do before a network is built from them, as causes.layers_cause reads it: the shape of the weight the given
    Linear.__init__ makes for Linear(2, 1) and of the bias for Linear(2, 3) (whether x @ W.T + b adds it to each row),
    then what Linear.forward and the layer (Module.__call__) return if no Tensor."""
    layer = nb.Linear(2, 1, np.random.default_rng(0))
    bias = list(np.shape(getattr(getattr(nb.Linear(2, 3, np.random.default_rng(0)), "bias", None), "data", np.nan)))
    facts: dict = {"weight_shape": list(np.shape(getattr(getattr(layer, "weight", None), "data", np.nan))),
                   "bias_shape": bias, "bias_fits": bias in ([3], [1, 3]), **init_facts(layer)}
    if facts["weight_shape"] != [1, 2] or not facts["bias_fits"]:
        return facts
    x, kind = nb.Tensor(np.ones((1, 2))), lambda value: "" if isinstance(value, nb.Tensor) else type(value).__name__
    return {**facts, "forward_returned": kind(layer.forward(x)), "call_returned": kind(layer(x))}


def defined_in(names: dict) -> dict:
    """For each class of causes.HOMES among `names`, the cell its methods come from ('' if not a saved notebook's cell)."""
    found = {}
    for name in HOMES:
        cls = names.get(name)
        files = [f.__code__.co_filename for f in vars(cls).values() if hasattr(f, "__code__")] if isinstance(
            cls, type) else []
        cell = re.fullmatch(r"<cell (\w+)(?:, by run_cell)?>", files[0]) if files else None  # run_cell: its caller
        found[name] = cell[1] if cell else ""
    return found


def noting_copies(check):
    """A check whose failure (an assert, or what the copy raised: a pasted stub's NotImplementedError) first says
    which class in use a later cell defined again (causes.defined_again): the numbers come from that copy."""
    @functools.wraps(check)
    def noted(nb):
        try:
            check(nb)
        except Exception as failure:
            note = defined_again(defined_in(vars(nb)))
            if note:
                raise AssertionError("; ".join([note, *filter(None, [str(failure).strip()])])) from None
            raise
    return noted


class Missing(AttributeError):
    """A name the notebook does not define (AttributeError.name is Python 3.10+)."""


class Names(types.SimpleNamespace):
    """The notebook's names as attributes (nb.Linear) for a check; `read` keeps the names it read, so that the
    note on an edited given cell goes only on the checks that read a name it binds (cells.bound_by)."""
    read: set = set()

    def __getattribute__(self, name: str):
        Names.read.add(name)
        return super().__getattribute__(name)

    def __getattr__(self, name: str):
        raise Missing(name)
