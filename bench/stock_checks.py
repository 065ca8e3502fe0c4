"""The hidden suites run inside a Jupyter kernel: what stock nbgrader's grade cells call in `make bench`.

The bench copies this file into the stock course's source folder (nbgrader copies it next to every
submission it autogrades) and rewrites each grade cell of that course's notebook to

    from stock_checks import run_suite
    run_suite("test_step", globals())

`run_suite` calls every check of autograder/<assignment>/test_step.py directly, in the kernel, as the
plain asserts of a stock course's grade cells would run: the suite file is imported once per kernel
and its checks expanded by their parametrize marks (autograder/checks/parametrize.py, as the kit's grader does),
with `student` and `reference` runners that are in-process: `run(probe, **kw)` is `probe(namespace, **kw)`,
on the kernel's globals for the student and on the reference solution's cells (run once per kernel) for
the reference. No sandbox, no fork: stock nbgrader's kernel is the only isolation. That is stock's fastest
honest way to run the same checks, and what `ratio:` compares with. `run_suite_under_pytest` runs the
same suite with `pytest.main` instead (`make bench STOCK_PYTEST=1`, the labelled second pair of ratios).
A failing check raises AssertionError listing the failures, so the cell scores zero; otherwise it scores
full marks (stock nbgrader has no partial credit per cell).
"""
from __future__ import annotations

import os
import sys

import pytest  # the suites' parametrize marks need it, and the pytest variant's plugin

SUITES = ""  # the hidden suites' folder; the bench writes the real path into the copy
REFERENCE = ""  # the reference notebook (solutions/<assignment>/<notebook>)
KIT = ""  # the course copy's root, for autograder/checks/parametrize.py

_reference_ns: dict | None = None
_suites: dict[str, list] = {}


class Runner:
    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace

    def run(self, probe, **kwargs):
        return _lists(probe(self.namespace, **kwargs))


def _lists(value):
    """A probe's answer as the checks get it from the kit's sandbox: its arrays as nested lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {key: _lists(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lists(item) for item in value]
    return value


def _reference() -> Runner:
    """The reference solution's code cells (no tests, no demos), run once in a namespace of their own."""
    global _reference_ns
    if _reference_ns is None:
        from notebook_checks import load  # the student folder's own loader, copied by nbgrader too

        _reference_ns, errors = load(REFERENCE)
        if errors:
            raise RuntimeError(f"the reference solution does not load: {errors[0][0]}")
    return Runner(_reference_ns)


def _checks(part: str) -> list:
    """The checks of suite `part`, imported and expanded once per kernel."""
    if part not in _suites:
        for path in (SUITES, KIT):
            if path not in sys.path:
                sys.path.insert(0, path)  # the suites import probes.py by name; the expansion is the kit's
        from autograder.checks.modules import import_file
        from autograder.checks.parametrize import expand

        module = import_file(f"hidden_{part}", os.path.join(SUITES, f"{part}.py"))
        _suites[part] = [check for name, test in vars(module).items()
                         if name.startswith("test_") and callable(test) for check in expand(test)]
    return _suites[part]


def _conclude(part: str, passed: int, failures: list[str]) -> None:
    print(f"{part}: {passed} of {passed + len(failures)} checks passed")
    if failures:
        raise AssertionError(f"{len(failures)} failed:\n" + "\n".join(failures))


def run_suite(part: str, namespace: dict) -> None:
    """Every check of the hidden suite `part` (a grade_id) on this kernel's notebook, called directly.

    Returns None on purpose: a value would become the cell's execute_result, which nbgrader reads as a
    partial score."""
    student, reference = Runner(namespace), _reference()
    passed, failures = 0, []
    for check in _checks(part):
        try:
            check.test(student, reference, **check.params)
            passed += 1
        except Exception as error:  # a failed assert, or student code that raised
            message = str(error).strip().splitlines()
            failures.append(f"{check.name}: {message[0] if message else type(error).__name__}")
    _conclude(part, passed, failures)


class _InKernel:
    """The pytest plugin of a stock grade cell: `student` and `reference` fixtures that are in-process runners,
    and every check's outcome noted. (The kit's own plugin, autograder/checks/pytest_plugin.py, runs them in
    sandboxes instead; here stock nbgrader's kernel is the only isolation, as the bench compares.)"""

    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace
        self.passed: list[str] = []
        self.failures: list[str] = []

    @pytest.fixture
    def student(self) -> Runner:
        return Runner(self.namespace)

    @pytest.fixture
    def reference(self) -> Runner:
        return _reference()

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "call" and report.passed:
            self.passed.append(report.nodeid)
        elif report.failed:  # the check itself, or its fixtures (the reference failed to load)
            message = str(getattr(report.longrepr, "reprcrash", None) and report.longrepr.reprcrash.message
                          or report.longrepr).strip().splitlines()
            self.failures.append(f"{report.nodeid.split('::')[-1]}: {message[0] if message else ''}")


def run_suite_under_pytest(part: str, namespace: dict) -> None:
    """Every check of the hidden suite `part` (a grade_id) on this kernel's notebook, run by pytest.

    `pytest.main` on autograder/<assignment>/<part>.py in this kernel, with the plugin above (and no
    conftest.py: the suites' own loads the kit's sandboxed plugin). Returns None on purpose: a value
    would become the cell's execute_result, which nbgrader reads as a partial score.
    """
    for path in (SUITES, KIT):
        if path not in sys.path:
            sys.path.insert(0, path)  # the suites import probes.py by name, and causes.py the kit's import_file
    plugin = _InKernel(namespace)
    code = pytest.main([f"{SUITES}/{part}.py", "--noconftest", "-p", "no:cacheprovider", "-p", "no:terminal",
                        "--rootdir", SUITES, "-c", os.devnull], plugins=[plugin])
    if code == pytest.ExitCode.INTERRUPTED:  # nbgrader's timeout interrupted the kernel: the cell ends
        raise KeyboardInterrupt
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise RuntimeError(f"pytest could not run {part} (exit code {int(code)})")
    _conclude(part, len(plugin.passed), plugin.failures)
