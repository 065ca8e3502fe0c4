"""Whether a probe's answer is in the form the probe writes, checked in the grader's process before any check reads it.

A probe runs next to the student's code, which can rewrite what it sends back (patch the probe's helpers, wrap
its function): an answer of a shape no notebook's honest run gives is the submission's doing, named as such, and
never reaches a check. What a check's own code then raises on an answer in the form is the grader's fault
(suites.GraderBug), never a grade.

A probe declares its answer's form next to itself (its `answers` attribute), in plain Python literals, since
probes.py also runs in the sandbox, which imports nothing of the kit:

    int, float, bool, str   a whole number (not a bool); any number (not a bool); a bool; a str
    None, True, False, "x"  that very value
    range(a, b)             a whole number a <= n < b
    numpy.ndarray           an array as the grader reads one: a number, or nested lists of numbers, all of one shape
    [A, B]                  a list of exactly these items (a row); [X, ...] a list of any number of X;
                            [A, X, ...] A, then any number of X ([X, X, ...]: one X or more)
    (A, B)                  any one of these forms
    {"key": X}              a dict of exactly these keys
    a function              the form for the call's arguments: form(**kwargs)
"""
from __future__ import annotations

from typing import Any

import numpy as np

NOT_IN_FORM = "the answers the notebook sent back are not in the form the probe writes"
_KINDS = {int: "a whole number", float: "a number", bool: "True or False", str: "a text"}


def answer_fault(form: Any, value: Any, where: str = "the answer") -> str:
    """Why `value` is not in `form` ("" when it is): where it first departs, and what it holds there (its kind
    only, never its text: the notebook chose it)."""
    if isinstance(form, tuple):
        faults = [answer_fault(one, value, where) for one in form]
        return "" if "" in faults else max(faults, key=len)  # the form it followed furthest
    if isinstance(form, type) and form is not np.ndarray:
        return "" if _is_kind(value, form) else f"{where} is {_kind(value)}, not {_KINDS[form]}"
    if form is None or isinstance(form, (bool, str)):
        return "" if type(value) is type(form) and value == form else f"{where} is {_kind(value)}, not {form!r}"
    if isinstance(form, range):
        within = type(value) is int and value in form
        return "" if within else f"{where} is {_kind(value)}, not a whole number from {form.start} to {form.stop - 1}"
    if form is np.ndarray:
        return "" if _shape(value) is not None else f"{where} is {_kind(value)}, not an array of numbers"
    if isinstance(form, list):
        return _list_fault(form, value, where)
    if isinstance(form, dict):
        return _dict_fault(form, value, where)
    raise TypeError(f"{form!r} is no answer form (a grader bug)")


def form_of(probe: Any, kwargs: dict) -> Any:
    """The form of `probe`'s answer to a call with `kwargs`. A probe that declares none is the grader's bug: no
    answer is taken unchecked, nor refused for a form nobody wrote."""
    if not hasattr(probe, "answers"):
        raise TypeError(f"the probe {probe.__name__} declares no form of its answer (a grader bug)")
    form = probe.answers
    return form(**kwargs) if callable(form) and not isinstance(form, type) else form


def _list_fault(form: list, value: Any, where: str) -> str:
    if type(value) is not list:
        return f"{where} is {_kind(value)}, not a list"
    if form[-1:] == [...]:
        head = form[:-2]  # the items it always begins with, then any number of form[-2]
        if len(value) < len(head):
            return f"{where} holds {len(value)} items, not {len(head)} or more"
        items = head + [form[-2]] * (len(value) - len(head))
    elif len(value) == len(form):
        items = form
    else:
        return f"{where} holds {len(value)} items, not {len(form)}"
    return next((fault for fault in (answer_fault(item, entry, f"{where}[{index}]") for index, (item, entry)
                                     in enumerate(zip(items, value))) if fault), "")


def _dict_fault(form: dict, value: Any, where: str) -> str:
    if type(value) is not dict:
        return f"{where} is {_kind(value)}, not a dict"
    lacking = [key for key in form if key not in value]
    if lacking:
        return f"{where} has no {lacking[0]!r}"
    if len(value) != len(form):
        return f"{where} holds {len(value) - len(form)} keys the probe never writes"
    return next((fault for fault in (answer_fault(item, value[key], f"{where}[{key!r}]") for key, item in form.items())
                 if fault), "")


def _is_kind(value: Any, kind: type) -> bool:
    if kind is float:
        return type(value) in (int, float)
    return type(value) is kind


def _shape(value: Any) -> tuple | None:
    """The shape of an array as read (nested lists of numbers), or None when `value` is none."""
    if type(value) in (int, float):
        return ()
    if type(value) is not list:
        return None
    shapes = {_shape(item) for item in value}
    if len(shapes) > 1:
        return None
    inner = next(iter(shapes), ())  # an empty list: an array of shape (0,)
    return None if inner is None else (len(value), *inner)


def _kind(value: Any) -> str:
    """What a value is, in a few words."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (list, dict)):
        return f"a {type(value).__name__} of {len(value)}"
    return _KINDS.get(type(value), "an object")
