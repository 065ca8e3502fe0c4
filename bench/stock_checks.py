"""The hidden suites run inside a Jupyter kernel: what stock nbgrader's grade cells call in `make bench`.

The bench copies this file into the stock course's source folder (nbgrader copies it next to every
submission it autogrades) and rewrites each grade cell of that course's notebook to

    from stock_checks import run_suite
    run_suite("test_step", globals())

`run_suite` runs autograder/<assignment>/test_step.py with pytest itself, in the kernel, through a
plugin whose `student` and `reference` fixtures are in-process runners: `run(probe, **kw)`
is `probe(namespace, **kw)`, on the kernel's globals for the student and on the reference solution's
cells (run once per kernel) for the reference. No sandbox, no fork: stock nbgrader's kernel is the
only isolation. A failing check raises AssertionError listing the failures, so the cell scores
zero; otherwise it scores full marks (stock nbgrader has no partial credit per cell).
"""
from __future__ import annotations

import os
import sys

import pytest

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
        from notebook_checks import load  # the student folder's own loader, copied by nbgrader too

        _reference_ns, errors = load(REFERENCE)
        if errors:
            raise RuntimeError(f"the reference solution does not load: {errors[0][0]}")
    return Runner(_reference_ns)


class _InKernel:
    """The pytest plugin of a stock grade cell: `student` and `reference` fixtures that are in-process runners,
    and every check's outcome noted. (The kit's own plugin, autograder/pytest_plugin.py, runs them in
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


def run_suite(part: str, namespace: dict) -> None:
    """Every check of the hidden suite `part` (a grade_id) on this kernel's notebook, run by pytest.

    `pytest.main` on autograder/<assignment>/<part>.py in this kernel, with the plugin above (and no
    conftest.py: the suites' own loads the kit's sandboxed plugin). Returns None on purpose: a value
    would become the cell's execute_result, which nbgrader reads as a partial score.
    """
    if SUITES not in sys.path:
        sys.path.insert(0, SUITES)  # the suites import probes.py by name
    plugin = _InKernel(namespace)
    code = pytest.main([f"{SUITES}/{part}.py", "--noconftest", "-p", "no:cacheprovider", "-p", "no:terminal",
                        "--rootdir", SUITES, "-c", os.devnull], plugins=[plugin])
    if code == pytest.ExitCode.INTERRUPTED:  # nbgrader's timeout interrupted the kernel: the cell ends
        raise KeyboardInterrupt
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise RuntimeError(f"pytest could not run {part} (exit code {int(code)})")
    passed, failures = len(plugin.passed), plugin.failures
    print(f"{part}: {passed} of {passed + len(failures)} checks passed")
    if failures:
        raise AssertionError(f"{len(failures)} failed:\n" + "\n".join(failures))
