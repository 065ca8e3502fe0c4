"""How the grader confines submissions: the sandbox each side runs in, the level of isolation a submission
gets, and the instructor's files closed to student code before any runs.

Policy, on the caller's side: it knows the course directory (Assignment) and the configuration
(GraderSettings). The mechanism it configures is the rest of this package (the Sandbox, the worker and
its children, isolation.py's namespaces and cgroups); the worker's files stay standard library only and
are imported by the worker as top-level modules, so none of them imports this one.
"""
from __future__ import annotations

from pathlib import Path

from ..assignment import Assignment
from ..settings import GraderSettings
from . import Budget, Cell, Sandbox, program_from_notebook


def _sandbox(assignment: Assignment, settings: GraderSettings, isolation: dict | None,
             trusted_cells: list[Cell] | None = None, budget: Budget | None = None) -> Sandbox:
    """A sandbox whose calls may name the suites' probes (it starts its worker on the first call)."""
    probes = {p.stem: p for p in assignment.suite_dir.glob("*probes.py")}  # probes.py, exercise_probes.py
    return Sandbox(modules=probes, path=[assignment.release_dir], limits=settings.limits,
                   preload=assignment.modules, isolation=isolation, trusted_cells=trusted_cells or (),
                   budget=budget or settings.budget())


def student_sandbox(assignment: Assignment, settings: GraderSettings) -> Sandbox:
    """The sandbox submissions run in, each confined (settings.isolation): of the course directory it sees
    the public release and the kit's environment alone (sandbox/isolation.py: allowed_paths). The course's
    own cells a part's program may hold (given cells, the release's stubs) are compiled once, in its worker."""
    trusted = program_from_notebook(assignment.release_json, assignment.source_json, assignment.release_json,
                                    student_cells=())  # the same cells as from the notebooks nbformat reads
    return _sandbox(assignment, settings, settings.isolation(), trusted)


def start_student_sandbox(assignment: Assignment, settings: GraderSettings) -> Sandbox:
    """The student sandbox, its worker started and the submission's session asked for (Sandbox.start): one
    notebook's grade starts it first, before the grader's own imports, so the worker boots meanwhile."""
    box = student_sandbox(assignment, settings)
    box.start(begin=settings.budget_seconds)
    return box


def reference_sandbox(assignment: Assignment, settings: GraderSettings) -> Sandbox:
    """The sandbox the reference solution runs in, alone: no student code ever runs in it. It answers every
    part's calls in one session: a submission's budget for each part."""
    return _sandbox(assignment, settings, None, budget=settings.budget(len(list(assignment.suite_dir.glob("test_*.py")))))


def private_paths(assignment: Assignment) -> list[str]:
    """Every folder of the course directory but the environment (.venv) and the public release: the
    hidden suites, every copy of the solutions (git's history too), submissions, feedback. (Its files,
    the gradebook among them, are closed to student code by their permissions: close_to_others.)"""
    return sorted(str(path) for path in assignment.root.iterdir()
                  if path.is_dir() and not path.is_symlink() and path.name not in (".venv", "release"))


def close_to_others(assignment: Assignment) -> None:
    """Before student code runs under its worker's uid: make the instructor's files unreadable to it.

    Every private folder (the hidden suites, every copy of the solutions, git's history, other
    students' work, feedback), and every file at the root that holds grades: the gradebook, its dated
    copies (make reset-gradebook's) and SQLite's side files, and grades.csv. The worker imports everything it
    needs before student code runs, so nothing of the kit has to stay readable. With namespaces the
    folders are not even in its root (sandbox/isolation.py); without, this is what keeps them closed. Permanent,
    and harmless: only the grader (root) uses these files.
    """
    for folder in private_paths(assignment):
        Path(folder).chmod(0o700)
    for file in [*assignment.root.glob("gradebook*.db*"), assignment.root / "grades.csv"]:
        if file.is_file():
            file.chmod(0o600)
