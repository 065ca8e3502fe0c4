"""A hidden suite's test function expanded by its `pytest.mark.parametrize` marks, as pytest expands it.

The grader (suites.py) and stock nbgrader's grade cells in `make bench` (bench/stock_checks.py) run the
suites' checks themselves, without pytest's collection, so both need each check's name and parameters
exactly as pytest would give them (tests/test_suites_under_pytest.py holds the names to pytest's own).
Standard library only: a stock grade cell imports it in a kernel with nothing else of the kit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


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
