"""The hidden suites under pytest itself: `pytest autograder/<assignment> --notebook=PATH`.

An instructor debugging a grade runs the suite files with the tool they are written for:

    .venv/bin/python -m pytest autograder/<assignment> --notebook=submitted/<student>/<assignment>/<notebook>.ipynb -k step

Each `test_*` function and parametrize case is one check, named as the grader names it, and passes or
fails as it does in `python -m autograder grade PATH`: the class is prepared as the grader prepares it
(grading.prepare_class: the suites, the reference's answers, the redactor, the instructor's files closed)
and graded by the grader's own `suites.Grader`: the first check asked for grades the whole notebook in one
session as the grader does (`Grader.settle`: every part, in the suites' order, with sound cells lent where
that counts), so each part's process sees the same calls in the same order, whichever checks `-k` selects,
and the checks pytest runs find their answers in the runners whose results count (a call outside them is
fetched at once, alone), on the same programs (`suites.part_program`: the
student's cells the suite file names in STUDENT_CELLS, the public release's blank stubs for the rest),
in the same sandboxes (`sandbox.policy`: student code in a child process, confined as the grader
confines a submission when it runs as root; the reference in a sandbox of its own). Student code never
runs in the pytest process. A failing check reports the grader's one line (the assertion's message,
or why student code gave no answer), redacted as the grader redacts it; `--tb=long` (or any style but
the default) shows pytest's own report instead. `--checks-json PATH` writes every check's
{"part", "name", "passed", "message"} (tests/test_suites_under_pytest.py compares it with the grader's).

Without --notebook, the suites skip and say how to run them. The suite folder's conftest.py loads
this plugin (autograder/<assignment>/conftest.py); the course's root conftest.py keeps pytest from importing
any conftest.py of the submission's folders (pytest_plugin_registered). The suite files are imported from their files, not
through pytest's assertion rewriter, by the grader's own loader (suites.import_suite): a message is
the check's own.
"""
from __future__ import annotations

import functools
import json
import os
import shlex
import types
from pathlib import Path

import pytest

__all__ = ["pytest_addoption", "pytest_pycollect_makemodule", "pytest_collection_modifyitems",
           "pytest_runtest_makereport", "pytest_terminal_summary", "pytest_sessionfinish",
           "student", "reference"]

HOW = ("the hidden suites grade one notebook: run them as "
       "`.venv/bin/python -m pytest autograder/<assignment> --notebook=PATH.ipynb`")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograder", "the kit's hidden suites (autograder/checks/pytest_plugin.py)")
    group.addoption("--notebook", metavar="PATH", default=None,
                    help="the submission to run the hidden suites on (as `python -m autograder grade PATH`)")
    group.addoption("--checks-json", metavar="PATH", default=None,
                    help="write every check's part, name, pass or fail and message to PATH as JSON")


class SuiteModule(pytest.Module):
    """A hidden suite file, imported from its file as the grader imports it (no assertion rewriting)."""

    def _getobj(self):
        from .suites import import_suite

        return import_suite(self.path)


def _is_suite_file(path: Path) -> bool:
    return path.name.startswith("test_") and path.suffix == ".py" and (path.parent / "probes.py").is_file() \
        and path.parent.parent.name == "autograder"


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector):
    if _is_suite_file(Path(module_path)):
        return SuiteModule.from_parent(parent, path=Path(module_path))
    return None


def _suite_module(item: pytest.Item) -> SuiteModule | None:
    node = item.getparent(SuiteModule)
    return node if isinstance(node, SuiteModule) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --notebook, skip the suites' checks; with it, a failed check reports the grader's line.

    (With pytest's default traceback style only: `--tb=long` and the others show pytest's own report.)
    """
    skip = pytest.mark.skip(reason=HOW) if config.getoption("notebook") is None else None
    one_line = config.option.tbstyle == "auto"
    for item in items:
        if _suite_module(item) is not None:
            if skip:
                item.add_marker(skip)
            elif one_line:
                item.repr_failure = functools.partial(_printed_message, item)  # type: ignore[method-assign]  # no hook sets one item's failure text


# ----------------------------------------------------------- no conftest.py of a submission's folder


_GUARDED = pytest.StashKey[bool]()  # in the config's stash: its plugin manager is guarded


def pytest_plugin_registered(plugin, plugin_name, manager) -> None:
    """(Imported by the course's root conftest.py, which pytest loads before any conftest below it.)

    pytest reads its command line once before it knows `--notebook`, takes the notebook's path for a test path
    (written `--notebook PATH`; `--notebook=PATH` it never takes for one), and loads every conftest.py in the
    folders above it: a submission's folder may hold one (nbgrader submit copies the student's whole folder, the
    public checks' conftest.py with it), and it would run in this process. Each of those is registered here
    first as an empty stand-in, which pytest then takes for that conftest already loaded, so it never imports
    it: one for each folder, whether or not a conftest.py is there now, since pytest looks again by the path (a
    student who owns the folder makes one after this look).
    """
    config = manager.get_plugin("pytestconfig")
    if config is None or config.stash.get(_GUARDED, False):
        return
    config.stash[_GUARDED] = True
    args = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *config.invocation_params.args]
    notebooks = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--notebook"]
    for notebook in notebooks:
        folder = (Path(config.invocation_params.dir) / notebook).absolute().parent
        for parent in (folder, *folder.parents):
            conftest = parent / "conftest.py"
            if manager.get_plugin(str(conftest)) is None:
                manager.register(types.ModuleType(f"{conftest} (not loaded: a submission's folder)"), name=str(conftest))


# ------------------------------------------------------------------------------ the runs


class _Grading:
    """One notebook's grading, for the session: its class prepared as the grader prepares it, and its
    Grader, whose two sandboxes' workers start when the first check asks."""

    def __init__(self, config: pytest.Config, suite_dir: Path) -> None:
        from ..assignment import Assignment
        from ..grading import prepare_class
        from ..intake.validate import read_submission
        from ..settings import GraderSettings, load_config
        from .suites import Grader

        root = suite_dir.parent.parent
        settings = GraderSettings(config=load_config(root))
        path = Path(config.getoption("notebook"))
        if not path.is_absolute():
            path = Path(config.invocation_params.dir) / path
        self.submission = read_submission(str(path), path, settings.notebook_kb * 1024)
        self.prepared = prepare_class(Assignment(root, suite_dir.name), settings)
        self.grader = Grader(self.prepared)
        self.begun = False
        self.parts: dict[str, object] = {}  # part -> the runner whose results count (Grader.settle)

    def student(self, module) -> object:
        """A runner on the part's program: the student's cells the suite names, blank stubs for the rest (and the
        sound cells lent, where that counted).

        Its answers are fetched first as the grader fetches them: the first part asked for grades every part of
        the notebook in one session, with its time budget, as the grader does (Grader.settle: each part in the
        suites' order, by suites.run_checks, in batches, then again with sound cells lent), so each part's process
        sees the very calls in the very order it sees when the notebook is graded (a part that takes one cell runs
        them all in one process, and a check can depend on what earlier calls left behind, such as a default
        `found=[]`), and what a part leaves in the session's scratch space reaches the parts after it as it does
        there. The checks pytest then runs find their answers there, whichever of them `-k` selects; any other
        call is fetched at once, alone.
        """
        if self.submission.notebook is None:
            pytest.fail(self.submission.error, pytrace=False)
        if not self.begun:
            self.grader.begin_session()
            self.begun = True
            self.parts = {grade_id: runner for grade_id, (runner, _) in self.grader.settle(self.submission).items()}
        return self.parts[Path(module.__file__).stem]

    def close(self) -> None:
        if self.begun:
            self.grader.end_session(self.submission)
        self.grader.close()


class _SuitesRun:
    """What one pytest run of the suites keeps, in its config's stash: each suite folder's grading (closed at the
    session's end), every check's outcome in the order run, and the limits the submission hit."""

    def __init__(self) -> None:
        self.gradings: dict[Path, _Grading] = {}
        self.results: list[dict] = []
        self.limits: list[str] = []


_RUN = pytest.StashKey[_SuitesRun]()


def _suites_run(config: pytest.Config) -> _SuitesRun:
    return config.stash.setdefault(_RUN, _SuitesRun())


def _grading(request: pytest.FixtureRequest) -> _Grading:
    if request.config.getoption("notebook") is None:
        pytest.skip(HOW)
    folder = Path(request.module.__file__).resolve().parent
    gradings = _suites_run(request.config).gradings
    if folder not in gradings:
        gradings[folder] = _Grading(request.config, folder)  # closed at the session's end
    return gradings[folder]


@pytest.fixture(scope="module")
def student(request: pytest.FixtureRequest):
    """The suite file's part of the submission, in the sandbox: `.run(probe, **kwargs)` gives plain data or fails."""
    return _grading(request).student(request.module)


@pytest.fixture(scope="module")
def reference(request: pytest.FixtureRequest):
    """The reference solution, in a sandbox of its own: `.run(probe, **kwargs)` gives plain data.

    One runner for the session (its answers kept for every part), as the grader keeps one."""
    return _grading(request).grader.reference


# --------------------------------------------------------------------------- the report


def _message(item: pytest.Item, excinfo: pytest.ExceptionInfo) -> str:
    """The grader's line for a failed check: suites.failure_message, redacted as the grader's report is."""
    from .suites import failure_message

    funcargs = item.funcargs if isinstance(item, pytest.Function) else {}  # a suite's checks are all functions
    message = failure_message(excinfo.value, getattr(funcargs.get("student"), "missing", ""))
    grading = _suites_run(item.config).gradings.get(item.path.resolve().parent)
    if grading is not None:
        message = grading.prepared.redactor(message)
    return message


def _printed_message(item: pytest.Item, excinfo: pytest.ExceptionInfo) -> str:
    """The line pytest prints for a failed check: the grader's line with its control characters removed
    (the report JSON keeps the grader's line as it is)."""
    from ..outputs.inert import terminal_text

    return terminal_text(_message(item, excinfo))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    module = _suite_module(item)
    if module is None or report.when != "call":
        return report
    message = _message(item, call.excinfo) if report.failed and call.excinfo is not None else ""
    _suites_run(item.config).results.append({"part": module.path.stem, "name": item.name, "passed": report.passed, "message": message})
    return report


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    run = _suites_run(config)
    if config.getoption("notebook") is None or not run.results:
        return
    parts: dict[str, list[bool]] = {}
    for result in run.results:
        parts.setdefault(result["part"], []).append(result["passed"])
    terminalreporter.section("hidden suites")
    for part, passed in parts.items():
        terminalreporter.line(f"{part}: {sum(passed)} of {len(passed)} checks passed")
    if run.limits:
        terminalreporter.line(f"limits hit: {', '.join(run.limits)}")


def pytest_sessionfinish(session: pytest.Session, exitstatus) -> None:
    """End the submission's session (its sandboxes close), then write --checks-json."""
    run = _suites_run(session.config)
    limits = []
    while run.gradings:
        grading = run.gradings.pop(next(iter(run.gradings)))
        grading.close()
        limits += grading.submission.limits
    run.limits = sorted(set(limits))
    path = session.config.getoption("checks_json")
    if path:
        Path(path).write_text(json.dumps({"checks": run.results, "limits": run.limits}, indent=1))
