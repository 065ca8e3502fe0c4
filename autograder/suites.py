"""Run an assignment's hidden pytest suites against submissions and collect reports.

The suites live in autograder/<assignment>/, one file per grade cell (test_step.py scores the
grade cell `test_step`). Each file names the solution cells it takes from the student
(`STUDENT_CELLS`); every other cell comes from the reference solution, so a bug costs one part.
A test asks the `student` and `reference` fixtures to run a probe (a function of probes.py) in the
sandbox and compares the plain data that comes back, here, in the grader's process.

pytest runs once for a whole batch of submissions: each test is parametrized by submission at
module scope, so one student's tests of one part run together on one loaded program.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import nbformat
import pytest
from tqdm import tqdm

from .assignment import Assignment
from .report import CheckResult, PartResult, Redactor, Report
from .sandbox import Cell, Outcome, Sandbox, program_from_notebook
from .settings import GraderSettings


class CheckFailed(AssertionError):
    """Student code did not give an answer; the message is the one-line reason."""


@dataclass
class Submission:
    """One notebook to grade: its content, or why it has none."""

    key: str
    notebook: dict | None = None
    error: str = ""
    results: dict[str, list[CheckResult]] = field(default_factory=dict)
    limits: list[str] = field(default_factory=list)


def read_submission(key: str, path: Path) -> Submission:
    """A submission from disk; a file that is not a notebook becomes a reason, never an exception."""
    try:
        notebook = nbformat.read(path, as_version=4)
        if not isinstance(notebook.get("cells"), list):
            raise ValueError("it has no cells")
        return Submission(key, notebook=notebook)
    except Exception as exc:  # any unreadable file: grading goes on with the next one
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        return Submission(key, error=f"{path.name} is not a readable notebook ({reason})")


class Runner:
    """What a test calls: run a probe on one program, return plain data or fail with a reason.

    A probe called again with the same arguments gives the same answer (every call starts from the
    same loaded program, and probes are seeded), so each answer is asked for once.
    """

    def __init__(self, sandbox: Sandbox, cells: list[Cell], submission: Submission | None) -> None:
        self.sandbox, self.cells, self.submission = sandbox, cells, submission
        self.memo: dict[tuple[str, str], Outcome] = {}
        self.timed_out = False

    def run(self, probe: Callable, **kwargs: Any) -> Any:
        if self.timed_out:
            raise CheckFailed("not run: an earlier check of this part ran out of time")
        key = (probe.__name__, repr(sorted(kwargs.items())))
        if key not in self.memo:
            self.memo[key] = self.sandbox.call(self.cells, probe, **kwargs)
        outcome = self.memo[key]
        if outcome.ok:
            return outcome.value
        if self.submission is None:
            raise RuntimeError(f"the reference solution failed {probe.__name__}: {outcome.reason}")
        if outcome.limit:
            self.submission.limits.append(outcome.limit)
            self.timed_out = outcome.limit == "time"
        raise CheckFailed(_explain(outcome))


def _explain(outcome: Outcome) -> str:
    """The reason, plus the load error behind it when a name is missing because a cell failed."""
    if any(word in outcome.reason for word in ("NameError", "KeyError", "is missing")):
        if outcome.load_errors:
            return f"{outcome.reason} (because {outcome.load_errors[0]})"
    return outcome.reason


class SuitePlugin:
    """The pytest plugin: parametrizes the suites by submission and records every outcome."""

    def __init__(self, assignment: Assignment, submissions: list[Submission],
                 settings: GraderSettings, progress: "Progress") -> None:
        self.assignment, self.settings, self.progress = assignment, settings, progress
        self.submissions = {s.key: s for s in submissions}
        self.sandboxes: list[Sandbox] = []

    def _sandbox(self, drop: bool) -> Sandbox:
        sandbox = Sandbox(
            modules={"probes": self.assignment.suite_dir / "probes.py"},
            path=[self.assignment.source_dir],
            limits=self.settings.limits,
            drop_privileges=drop,
            preload=self.assignment.modules,
        )
        self.sandboxes.append(sandbox)
        return sandbox

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "submission" in metafunc.fixturenames:
            keys = [k for k, s in self.submissions.items() if s.notebook is not None]
            metafunc.parametrize("submission", keys, ids=keys, indirect=True, scope="module")

    @pytest.fixture(scope="module")
    def submission(self, request: pytest.FixtureRequest) -> Submission:
        return self.submissions[request.param]

    @pytest.fixture(scope="session")
    def student_sandbox(self) -> Sandbox:
        return self._sandbox(self.settings.drop_privileges)

    @pytest.fixture(scope="session")
    def reference_sandbox(self) -> Sandbox:
        return self._sandbox(False)

    @pytest.fixture(scope="module")
    def student(self, submission: Submission, student_sandbox: Sandbox, request: pytest.FixtureRequest) -> Runner:
        cells = program_from_notebook(
            submission.notebook, self.assignment.source, self.assignment.reference,
            getattr(request.module, "STUDENT_CELLS", "all"),
        )
        return Runner(student_sandbox, cells, submission)

    @pytest.fixture(scope="session")
    def reference(self, reference_sandbox: Sandbox) -> Runner:
        cells = program_from_notebook(self.assignment.reference, self.assignment.source, self.assignment.reference)
        return Runner(reference_sandbox, cells, None)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
        """Record the outcome, and make pytest's report from the message alone: no traceback.

        pytest would otherwise format a traceback with the suite's source for every failure,
        which costs more than the check and is never shown to anyone.
        """
        error = call.excinfo.value if call.excinfo is not None else None
        message = ""
        if error is not None:
            message = (str(error).strip() or f"{type(error).__name__} in the check").splitlines()[0]
            if not isinstance(error, AssertionError):
                message = f"the check could not run: {type(error).__name__}: {message}"
        passed = error is None
        params = dict(item.callspec.params) if hasattr(item, "callspec") else {}
        submission = self.submissions.get(params.pop("submission", None))
        if submission is not None and (call.when == "call" or (call.when == "setup" and not passed)):
            name = item.originalname
            if params:  # the case, as pytest names it, without the submission's own id
                name += f"[{item.callspec.id.replace(submission.key, '', 1).strip('-').replace('--', '-')}]"
            grade_id = Path(str(item.fspath)).stem
            submission.results.setdefault(grade_id, []).append(CheckResult(name, passed, message))
        return pytest.TestReport(item.nodeid, item.location, {}, "passed" if passed else "failed",
                                 message or None, call.when, [], call.duration, call.start, call.stop)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.progress.add("total", len(session.items))

    def pytest_runtest_logfinish(self) -> None:
        self.progress.add("done", 1)

    def close(self) -> None:
        for sandbox in self.sandboxes:
            sandbox.close()


def _close_to_others(assignment: Assignment) -> None:
    """Before student code runs as `nobody`: make the instructor's files unreadable to it.

    The hidden suites, every copy of the solutions, other students' work, feedback and the
    gradebook. The worker imports everything it needs before it drops privileges, so nothing of
    the kit has to stay readable. Permanent, and harmless: only the grader (root) uses these files.
    """
    root, name = assignment.root, assignment.name
    for folder in (assignment.suite_dir, assignment.source_dir, root / "solutions" / name, root / "submitted",
                   root / "autograded", root / "feedback", root / "downloaded", root / ".grading"):
        if folder.is_dir():
            folder.chmod(0o700)
    for file in (root / "gradebook.db", root / "grades.csv"):
        if file.is_file():
            file.chmod(0o600)


class Progress:
    """Checks done and checks to do, counted across processes; drawn as one bar by the parent."""

    def __init__(self, show: bool) -> None:
        context = multiprocessing.get_context("fork")
        self.done, self.total = context.Value("q", 0), context.Value("q", 0)
        self.show, self.stop = show, threading.Event()

    def add(self, field: str, count: int) -> None:
        value = getattr(self, field)
        with value.get_lock():
            value.value += count

    def __enter__(self) -> "Progress":
        if self.show:
            self.thread = threading.Thread(target=self._draw, daemon=True)
            self.thread.start()
        return self

    def _draw(self) -> None:
        with tqdm(total=0, desc="checks", unit="check", file=sys.__stdout__, disable=None) as bar:
            while not self.stop.wait(0.2):
                bar.total, bar.n = self.total.value, self.done.value
                bar.refresh()
            bar.total, bar.n = self.total.value, self.done.value

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        if self.show:
            self.thread.join()


def _run_suites(assignment: Assignment, submissions: list[Submission], settings: GraderSettings,
                progress: Progress) -> None:
    """One pytest session of the hidden suites over `submissions`, filling in their results."""
    plugin = SuitePlugin(assignment, submissions, settings, progress)
    args = [str(assignment.suite_dir), "--assert=plain", "-p", "no:cacheprovider",
            "-p", "no:terminal", "-p", "no:stepwise", "-c", os.devnull,
            "--rootdir", str(assignment.suite_dir), "-W", "ignore"]
    suite_path = str(assignment.suite_dir)
    sys.path.insert(0, suite_path)
    # Inside another pytest session (the kit's own tests) its assertion rewriter would rewrite the
    # suites and put their code into the messages; they must run as plain Python, as in `make grade`.
    rewriters = [hook for hook in sys.meta_path if type(hook).__name__ == "AssertionRewritingHook"]
    for hook in rewriters:
        sys.meta_path.remove(hook)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            code = pytest.main(args, plugins=[plugin])
        if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            raise RuntimeError(f"the hidden suites of {assignment.name} could not run (pytest exit {code})")
    finally:
        plugin.close()
        sys.path.remove(suite_path)
        sys.meta_path[:0] = rewriters


def _run_share(assignment, share, settings, progress, channel) -> None:
    """A forked grading process: its share of the class, results sent back to the parent."""
    try:
        _run_suites(assignment, share, settings, progress)
        channel.send({s.key: (s.results, s.limits) for s in share})
    except BaseException as exc:  # the parent reports it; nothing may be lost silently
        channel.send(f"{type(exc).__name__}: {exc}")
    finally:
        channel.close()


def grade_submissions(assignment: Assignment, submissions: list[Submission],
                      settings: GraderSettings, progress: bool = False) -> dict[str, Report]:
    """Run the hidden suites on every readable submission; a report for each, by key.

    The class is shared round-robin between `settings.jobs` processes (one per core by default),
    each with its own pytest session and sandboxes; what comes back to this process is the plain
    outcome of each check.
    """
    readable = [s for s in submissions if s.notebook is not None]
    jobs = max(1, min(settings.jobs or os.cpu_count() or 1, len(readable)))
    if settings.drop_privileges:
        _close_to_others(assignment)
    with Progress(progress) as counter:
        if not readable:
            pass
        elif jobs == 1:
            _run_suites(assignment, readable, settings, counter)
        else:
            context = multiprocessing.get_context("fork")
            running = []
            for share in (readable[i::jobs] for i in range(jobs)):
                receive, send = context.Pipe(duplex=False)
                process = context.Process(target=_run_share, args=(assignment, share, settings, counter, send))
                process.start()
                send.close()
                running.append((process, receive, share))
            failures = []
            for process, receive, share in running:
                try:
                    outcome = receive.recv()
                except EOFError:
                    outcome = "a grading process ended without an answer"
                process.join()
                if isinstance(outcome, str):
                    failures.append(outcome)
                    continue
                for submission in share:
                    submission.results, submission.limits = outcome[submission.key]
            if failures:
                raise RuntimeError(f"the hidden suites of {assignment.name} could not run: {failures[0]}")
    redact = Redactor(assignment.suite_dir, assignment.source_dir)
    return {s.key: _report(assignment, s, redact) for s in submissions}


def _report(assignment: Assignment, submission: Submission, redact: Redactor) -> Report:
    parts = []
    for cell in assignment.grade_cells:
        checks = submission.results.get(cell.grade_id, [])
        if submission.error:
            checks = [CheckResult("notebook", False, submission.error)]
        parts.append(PartResult(cell.grade_id, cell.points,
                                [CheckResult(c.name, c.passed, redact(c.message)) for c in checks]))
    return Report(parts, error=redact(submission.error), limits=submission.limits)


def grade_paths(assignment: Assignment, paths: Iterable[Path], settings: GraderSettings) -> dict[str, Report]:
    """Grade notebooks on disk, keyed by their path as given."""
    submissions = [read_submission(str(p), Path(p)) for p in paths]
    return grade_submissions(assignment, submissions, settings)
