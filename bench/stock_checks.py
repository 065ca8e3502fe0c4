"""The hidden suites run inside a Jupyter kernel: what stock nbgrader's grade cells call in `make bench`.

The bench copies this file into the stock course's source folder (nbgrader copies it next to every
submission it autogrades) and rewrites each grade cell of that course's notebook to

    from stock_checks import run_suite
    run_suite("test_step", globals())

`run_suite` imports autograder/<assignment>/test_step.py, expands its `pytest.mark.parametrize`
cases and calls every test with in-process `student` and `reference` runners: `run(probe, **kw)`
is `probe(namespace, **kw)`, on the kernel's globals for the student and on the reference solution's
cells (run once per kernel) for the reference. No sandbox, no fork: stock nbgrader's kernel is the
only isolation. A failing check raises AssertionError listing the failures, so the cell scores
zero; otherwise it scores full marks (stock nbgrader has no partial credit per cell).
"""
from __future__ import annotations

import builtins
import importlib
import inspect
import itertools
import json
import sys

SUITES = None  # the hidden suites' folder; the bench writes the real path into the copy
REFERENCE = None  # the reference notebook (solutions/<assignment>/<notebook>)

_reference_ns: dict | None = None


class Runner:
    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace

    def run(self, probe, **kwargs):
        return probe(self.namespace, **kwargs)


def _reference() -> Runner:
    """The reference solution's code cells (no tests, no demos), run once in a namespace of their own."""
    global _reference_ns
    if _reference_ns is None:
        from sandbox import program_from_notebook  # the assignment's own helper, copied by nbgrader too

        with open(REFERENCE, encoding="utf-8") as handle:
            notebook = json.load(handle)
        namespace = {"__name__": "__reference__", "__builtins__": builtins}
        for cell in program_from_notebook(notebook):
            exec(compile(cell.source, f"<reference {cell.name}>", "exec"), namespace)
        _reference_ns = namespace
    return Runner(_reference_ns)


def _cases(test):
    """Keyword sets for one test function, from its parametrize marks (cartesian product)."""
    axes = []
    for mark in getattr(test, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names = mark.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        values = []
        for value in mark.args[1]:
            if type(value).__name__ == "ParameterSet":  # pytest.param(...): its values are always a tuple
                value = value.values
            elif len(names) == 1:  # one name: the value itself, even when it is a tuple
                value = (value,)
            values.append(dict(zip(names, value)))
        axes.append(values)
    for combination in itertools.product(*axes):
        merged = {}
        for part in combination:
            merged.update(part)
        yield merged


def run_suite(part: str, namespace: dict) -> None:
    """Every check of the hidden suite `part` (a grade_id) on this kernel's notebook.

    Returns None on purpose: a value would become the cell's execute_result, which nbgrader reads as
    a partial score.
    """
    if SUITES not in sys.path:
        sys.path.insert(0, SUITES)
    module = importlib.import_module(part)
    student, reference = Runner(namespace), _reference()
    passed, failures = 0, []
    for name, test in vars(module).items():
        if not (name.startswith("test_") and inspect.isfunction(test)):
            continue
        wanted = inspect.signature(test).parameters
        for case in _cases(test):
            fixtures = {"student": student, "reference": reference}
            try:
                test(**{k: v for k, v in fixtures.items() if k in wanted}, **case)
                passed += 1
            except Exception as exc:  # a KeyboardInterrupt (nbgrader's timeout) ends the cell
                label = f"{name}[{'-'.join(map(str, case.values()))}]" if case else name
                failures.append(f"{label}: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")
    print(f"{part}: {passed} of {passed + len(failures)} checks passed")
    if failures:
        raise AssertionError(f"{len(failures)} failed:\n" + "\n".join(failures))
