"""Run an assignment's hidden suites against submissions and collect reports.

The suites live in autograder/<assignment>/, one file per grade cell (test_step.py scores the
grade cell `test_step`). They are written as pytest tests: each `test_*` function, expanded by its
`pytest.mark.parametrize` marks, is one check, and takes the fixtures `student` and `reference`.
Each file names the solution cells it takes from the student (`STUDENT_CELLS`); every other solution
cell comes from the public release (blank stubs), and the probes call only the stub their part grades,
so a bug costs one part and the reference never runs next to student code. A check asks a runner to
run a probe (a function of probes.py) in the sandbox and compares the plain data that comes back with
the reference's answers (fetched from a sandbox that runs the reference alone), here, in the grader's
process.

The grader runs the checks itself rather than through pytest, so that a part's probe calls can go
to the sandbox as one batch: it runs every check of the part, noting the answers they wait for,
fetches those in one batch, and runs the waiting checks again, until none waits.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .assignment import Assignment
from .modules import import_file
from .parametrize import Check, expand
from .report import CheckResult
from .sandbox import MISSING, NOT_RUN_AFTER_TIME_OUT, Cell, Outcome, Sandbox, program_from_notebook
from .settings import GraderSettings
from .submission import Submission


class CheckFailed(AssertionError):
    """Student code did not give an answer; the message is the one-line reason."""


class _Waiting(BaseException):
    """A check asked for an answer not fetched yet. (Not an Exception: no check may catch it.)"""


# ------------------------------------------------------------------------ the suites


@dataclass(frozen=True)
class Suite:
    grade_id: str
    student_cells: tuple[str, ...] | str
    checks: list[Check]


_SUITES: dict[Path, list[Suite]] = {}


def load_suites(assignment: Assignment) -> list[Suite]:
    """The hidden suites of `assignment`, one per suite file, imported once per process.

    Imported from their files directly, so no import hook (such as pytest's assertion rewriter in
    the kit's own tests) rewrites them: their code must never appear in a message.
    """
    folder = assignment.suite_dir
    if folder not in _SUITES:
        suites = []
        sys.path.insert(0, str(folder))  # the suites import probes.py by name
        try:
            for path in sorted(folder.glob("test_*.py")):
                module = import_file(f"hidden_{assignment.name}_{path.stem}", path)
                tests = [value for name, value in vars(module).items() if name.startswith("test_") and callable(value)]
                suites.append(Suite(path.stem, getattr(module, "STUDENT_CELLS", "all"),
                                    [check for test in tests for check in expand(test)]))
        finally:
            sys.path.remove(str(folder))
        _SUITES[folder] = suites
    return _SUITES[folder]


# ---------------------------------------------------------------------- running them


class Runner:
    """What a check calls: run a probe on one program, return plain data or fail with a reason.

    A probe called again with the same arguments gives the same answer (probes are seeded), so
    each answer is asked for once, and every check that asks gets that same object: checks must
    not change it. An answer not fetched yet stops the check (`_Waiting`) and is
    noted; `fetch` then asks the sandbox for every noted answer in one batch. Not `batch` (the checks
    run by pytest itself, autograder/pytest_plugin.py), an answer is fetched at once, alone.
    """

    def __init__(self, sandbox: Sandbox, cells: list[Cell], submission: Submission | None, fresh: bool = True,
                 batch: bool = True) -> None:
        self.sandbox, self.cells, self.submission, self.fresh, self.batch = sandbox, cells, submission, fresh, batch
        self.memo: dict[tuple[str, str], Outcome] = {}
        self.wanted: dict[tuple[str, str], tuple[Callable, dict]] = {}
        self.timed_out = False
        self.missing = ""  # the load error of a solution cell missing from the notebook, once an answer shows one

    def run(self, probe: Callable, **kwargs: Any) -> Any:
        key = (probe.__name__, repr(sorted(kwargs.items())))
        if key not in self.memo:
            if self.timed_out:
                raise CheckFailed(NOT_RUN_AFTER_TIME_OUT)
            self.wanted.setdefault(key, (probe, kwargs))
            if self.batch:
                raise _Waiting
            self.fetch()
        outcome = self.memo[key]
        if outcome.ok:
            return outcome.value
        if self.submission is None:
            raise RuntimeError(f"the reference solution failed {probe.__name__}: {outcome.reason}")
        raise CheckFailed(self.explain(outcome))

    def fetch(self) -> bool:
        """Fetch every answer noted as wanted, in one batch; False when none was."""
        if not self.wanted:
            return False
        keys, calls = list(self.wanted), list(self.wanted.values())
        self.wanted.clear()
        outcomes = self.sandbox.call_many(self.cells, calls, fresh=self.fresh)
        for key, outcome in zip(keys, outcomes):
            self.memo[key] = outcome
            self.missing = self.missing or next((e for e in outcome.load_errors if MISSING in e), "")
            if outcome.limit and self.submission is not None:
                self.submission.limits.append(outcome.limit)
            self.timed_out = self.timed_out or (outcome.limit == "time" and not self.fresh)
        return True

    def explain(self, outcome: Outcome) -> str:
        """The reason, plus the load error behind it when a name is missing because a cell failed (a cell
        missing from the notebook, when one is, explains a missing name better than a stub that raised)."""
        if any(word in outcome.reason for word in ("NameError", "KeyError", "is missing")) and outcome.load_errors:
            return f"{outcome.reason} (because {self.missing or outcome.load_errors[0]})"
        return outcome.reason


def _result(check: Check, student: Runner, reference: Runner) -> CheckResult | None:
    """Run one check; None while it waits for an answer."""
    try:
        check.test(student, reference, **check.params)
    except _Waiting:
        return None
    except Exception as error:
        return CheckResult(check.name, False, failure_message(error, student.missing))
    return CheckResult(check.name, True, "")


def failure_message(error: BaseException, missing: str = "") -> str:
    """A failed check's one line: the assertion's message (a CheckFailed's reason), else what went wrong;
    with `missing` (the load error of a solution cell missing from the notebook), that cause too."""
    message = (str(error).strip() or f"{type(error).__name__} in the check").splitlines()[0]
    if not isinstance(error, AssertionError):
        message = f"the check could not run: {type(error).__name__}: {message}"
    if missing and "missing" not in message:  # the cause, not its consequence
        message = f"{message} (because {missing})"
    return message


def run_checks(checks: list[Check], student: Runner, reference: Runner) -> list[CheckResult]:
    """Every check's result: run them all, fetch what they wait for in one batch each, run the waiting again."""
    results: list[CheckResult | None] = [None] * len(checks)
    waiting = list(range(len(checks)))
    while waiting:
        for index in waiting:
            results[index] = _result(checks[index], student, reference)
        waiting = [index for index in waiting if results[index] is None]
        fetched = [runner.fetch() for runner in (reference, student)]
        if waiting and not any(fetched):
            raise RuntimeError(f"{checks[waiting[0]].name} waits for an answer it never asked for (a grader bug)")
    return [result for result in results if result is not None]  # all of them: none is waiting


_REFERENCE: dict[Assignment, dict] = {}  # the reference's answers by probe call, once per process tree


def _sandbox(assignment: Assignment, settings: GraderSettings, students: bool) -> Sandbox:
    """A sandbox whose calls may name the suites' probes (it starts its worker on the first call).

    For `students`, each submission is confined (settings.isolation): of the course directory it sees the
    public release and the kit's environment alone (sandbox/isolation.py: allowed_paths).
    """
    isolation = settings.isolation() if students else None
    probes = {p.stem: p for p in assignment.suite_dir.glob("*probes.py")}  # probes.py, exercise_probes.py
    return Sandbox(modules=probes, path=[assignment.release_dir],
                   limits=settings.limits, preload=assignment.modules, isolation=isolation)


def isolation_level(settings: GraderSettings) -> str:
    """How each submission is kept apart here, as autograder/sandbox/isolation.py names it (or why not at all)."""
    if not settings.isolate:
        return "off (c.GraderSettings.isolate is False)"
    from .sandbox.isolation import machine_level

    return machine_level()


def private_paths(assignment: Assignment) -> list[str]:
    """Every folder of the course directory but the environment (.venv) and the public release: the
    hidden suites, every copy of the solutions (git's history too), submissions, feedback. (Its files,
    the gradebook among them, are closed to student code by their permissions: close_to_others.)"""
    return sorted(str(path) for path in assignment.root.iterdir()
                  if path.is_dir() and not path.is_symlink() and path.name not in (".venv", "release"))


def _reference_runner(assignment: Assignment, sandbox: Sandbox, fresh: bool = True) -> Runner:
    """A runner on the whole reference solution (every cell the reference's own), with no answer yet.

    Its sandbox runs the reference alone: no student code ever runs next to it.
    """
    program = program_from_notebook(assignment.reference, assignment.source, student_cells="all")
    return Runner(sandbox, program, None, fresh=fresh)


def part_program(assignment: Assignment, notebook: dict, suite: Suite) -> list[Cell]:
    """What one part runs for a submission: the student's cells the suite names, and for every other
    solution cell the public release's blank stub, never the reference (nothing of the answer key may
    enter a process that runs student code). Its probes call only the stub they grade."""
    return program_from_notebook(notebook, assignment.source, assignment.release, suite.student_cells)


def reference_answers(assignment: Assignment, settings: GraderSettings, fresh: bool = False) -> dict:
    """The reference's answer to every probe call its checks make, with the reference in the student's
    place too, so every call a correct submission leads to is answered.

    Not `fresh`, the calls share one process: the reference leaves nothing behind that changes an
    answer (tests/test_grading.py checks that both ways give the same answers).
    """
    with _sandbox(assignment, settings, students=False) as sandbox:
        runner = _reference_runner(assignment, sandbox, fresh)
        for suite in load_suites(assignment):
            run_checks(suite.checks, runner, runner)
    return runner.memo


def prepare_grading(assignment: Assignment, settings: GraderSettings) -> None:
    """The reference's answers, fetched once before the grading processes fork and inherit them
    (grading.prepare_class).

    A call only a wrong submission leads to is fetched (in a fresh child) when a check asks for it.
    """
    if assignment not in _REFERENCE:
        _REFERENCE[assignment] = reference_answers(assignment, settings)


class Grader:
    """Grades submissions one after another in this process, with two warm sandboxes.

    The reference's answers (prepare_grading) are kept for every submission this process grades;
    its sandbox starts only if a check asks for one not fetched yet.
    """

    def __init__(self, assignment: Assignment, settings: GraderSettings) -> None:
        self.assignment, self.settings = assignment, settings
        self.suites = load_suites(assignment)
        self.student_box = _sandbox(assignment, settings, students=True)
        self.reference_box = _sandbox(assignment, settings, students=False)
        self.reference = _reference_runner(assignment, self.reference_box)
        self.reference.memo.update(_REFERENCE.get(assignment, {}))

    def grade(self, submission: Submission) -> None:
        """Fill in `submission.results` (by grade_id) and `submission.limits`.

        The submission gets a session of its own (a fresh confined process tree) for all its parts,
        with the time budget for all of them; what it left running ends with the session.
        """
        notebook = submission.notebook
        assert notebook is not None, "grade_one grades only a notebook that was read"
        self.student_box.begin(self.settings.budget_seconds)
        for suite in self.suites:
            cells = part_program(self.assignment, notebook, suite)
            # A part that takes one cell from the student runs its checks one after another in one
            # process: what that cell leaves behind stays within its part. A part that takes the
            # whole notebook starts each check afresh, so state one cell's bug leaves behind cannot
            # cost checks about other cells.
            student = Runner(self.student_box, cells, submission, fresh=suite.student_cells == "all")
            submission.results[suite.grade_id] = run_checks(suite.checks, student, self.reference)
        submission.limits += self.student_box.end()

    def close(self) -> None:
        self.student_box.close()
        self.reference_box.close()


# ----------------------------------------------------------- before student code runs


def close_to_others(assignment: Assignment) -> None:
    """Before student code runs under its worker's uid: make the instructor's files unreadable to it.

    Every private folder (the hidden suites, every copy of the solutions, git's history, other
    students' work, feedback), and the gradebook and grades.csv. The worker imports everything it
    needs before student code runs, so nothing of the kit has to stay readable. With namespaces the
    folders are not even in its root (sandbox/isolation.py); without, this is what keeps them closed. Permanent,
    and harmless: only the grader (root) uses these files.
    """
    for folder in private_paths(assignment):
        Path(folder).chmod(0o700)
    for file in (assignment.root / "gradebook.db", assignment.root / "grades.csv"):
        if file.is_file():
            file.chmod(0o600)
