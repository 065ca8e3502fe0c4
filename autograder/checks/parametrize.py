"""A hidden suite's test function expanded by its `pytest.mark.parametrize` marks, as pytest expands it.

The grader (suites.py) and stock nbgrader's grade cells in `make bench` (bench/stock_checks.py) run the
suites' checks themselves, without pytest's collection, so both need each check's name and parameters
exactly as pytest would give them (tests/test_suites_under_pytest.py holds the names to pytest's own).
Standard library only: a stock grade cell imports it in a kernel with nothing else of the kit.

`MARKS_ONLY`: a stand-in for the pytest module whose `mark` records marks as pytest stores them (the
`pytestmark` list of name, args and kwargs that `expand` reads). Importing pytest costs a grading process
about 60 ms, a tenth of one notebook's grade, and a suite that uses nothing of pytest but its parametrize
marks (`uses_marks_only`) needs nothing more: suites.import_suite imports such a suite with the stand-in
when pytest itself is not imported already.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable


@dataclass(frozen=True)
class _Mark:
    """A mark as pytest keeps it on a function (what `expand` reads of it)."""

    name: str
    args: tuple
    kwargs: dict


class _MarkRecorder:
    """`pytest.mark`: `mark.<name>(*args, **kwargs)` decorates a function with that mark, appended as pytest does."""

    def __getattr__(self, name: str) -> Callable:
        def mark(*args: Any, **kwargs: Any) -> Callable:
            def decorate(function: Callable) -> Callable:
                function.pytestmark = [*getattr(function, "pytestmark", []), _Mark(name, args, kwargs)]  # type: ignore[attr-defined]  # where pytest keeps marks
                return function
            return decorate
        return mark


MARKS_ONLY = ModuleType("pytest", "A stand-in for pytest with its marks only (autograder/checks/parametrize.py).")
MARKS_ONLY.mark = _MarkRecorder()  # type: ignore[attr-defined]  # a module made here


def uses_marks_only(source: str) -> bool:
    """Whether a suite's source uses nothing of pytest but `pytest.mark.parametrize` (and `import pytest`)."""
    return all(use == "pytest.mark.parametrize" for use in re.findall(r"\bpytest(?:\.\w+)*", source)
               if use != "pytest")


@dataclass(frozen=True)
class Check:
    """One test function with one set of its parametrize values; named as pytest would name it."""

    name: str
    test: Callable
    params: dict


def _case_id(value: Any, name: str, index: int, ids: Callable | None) -> str:
    """pytest's id for one parameter value: what `ids` names it, else the value itself when it is
    simple, else name + index."""
    named = ids(value) if ids is not None else None
    if named is not None:
        return str(named)
    if value is None or isinstance(value, (str, int, float, bool)):
        return str(value)
    return f"{name}{index}"


def expand(test: Callable) -> list[Check]:
    """A test function expanded by its parametrize marks, as pytest expands it."""
    cases: list[tuple[dict, list[str]]] = [({}, [])]
    for mark in reversed(getattr(test, "pytestmark", [])):
        if mark.name != "parametrize":
            raise RuntimeError(f"{test.__name__}: the hidden suites may use only pytest.mark.parametrize")
        names, values = mark.args[0], list(mark.args[1])
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        ids = mark.kwargs.get("ids")
        expanded = []
        for params, labels in cases:
            for index, value in enumerate(values):
                value = tuple(value) if len(names) > 1 else (value,)
                if ids is None or callable(ids):
                    label = "-".join(_case_id(v, n, index, ids) for v, n in zip(value, names))
                else:
                    label = str(ids[index])
                expanded.append(({**params, **dict(zip(names, value))}, [*labels, label]))
        cases = expanded
    return [Check(f"{test.__name__}[{'-'.join(labels)}]" if labels else test.__name__, test, params)
            for params, labels in cases]
