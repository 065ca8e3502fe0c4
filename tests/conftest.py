"""Shared fixtures for the kit's own tests: paths, notebooks, and a sandboxed runner."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.assignment import find_assignment  # noqa: E402 (after the sys.path set-up above)
from autograder.sandbox import Sandbox, program_from_notebook  # noqa: E402 (after the sys.path set-up above)
from autograder.sandbox.isolation import LEVELS, machine_level  # noqa: E402 (after the sys.path set-up above)
from bench.course import copy_course  # noqa: E402 (after the sys.path set-up above)

# tests/fixtures/ holds course folders the tests copy and grade (a second assignment's hidden suite among them),
# never tests of the kit: pytest leaves them alone.
collect_ignore = ["fixtures"]

ASSIGNMENT = find_assignment(ROOT, "dl01_6_3")
sys.path.insert(0, str(ASSIGNMENT.source_dir))  # the public checks' runner, importable as `notebook_checks`
NOTEBOOK = ASSIGNMENT.notebook_name
SCREENSHOTS = ROOT / "build" / "screenshots"  # what the browser tests saw, for a person to look at
STUBS = ["Module.parameters", "Linear.forward", "SGD.zero_grad", "SGD.step", "no_grad"]

# What this machine lets the grader set up (autograder/sandbox/isolation.py), strongest first. A test of what
# a level promises runs where the machine gives that level or a stronger one, and skips, saying why, elsewhere.
LEVEL = machine_level()  # LEVELS: weakest first
WHY_NOT = {"uid": "isolating submissions needs the grader to run as root",
           "namespaces": f"this machine gives the grader no namespaces (level {LEVEL!r}: no CAP_SYS_ADMIN, as in "
                         "a container that allows none, or / is not a mount point, as in a plain chroot)",
           "namespaces+cgroups": f"this machine gives the grader no cgroups it may write (level {LEVEL!r})"}


# The level that names each budget when a submission hits it: the process budget's is a cgroup; the memory budget
# the session sums itself where there is no cgroup; the disk's is its tmpfs (without one the session bounds only
# its scratch folder: the rest of /tmp is closed at uid+landlock, the machine's at uid). Below it the submission
# is still stopped (RLIMIT_NPROC, the uid's files removed) and scores within its bound, but no budget is named.
BUDGET_LEVEL = {"disk budget": "namespaces", "memory budget": "uid", "process budget": "namespaces+cgroups"}


def gives(level: str) -> bool:
    """Whether this machine gives `level` or a stronger one."""
    return LEVELS.index(LEVEL) >= LEVELS.index(level)


def why_not(level: str) -> str:
    """Why this machine does not give `level`: what the first level it lacks needs."""
    return WHY_NOT[LEVELS[min(LEVELS.index(LEVEL) + 1, LEVELS.index(level))]]


def needs_level(level: str) -> pytest.MarkDecorator:
    """Skip unless the machine gives `level` or a stronger one."""
    return pytest.mark.skipif(not gives(level), reason=why_not(level))


CAP_SYS_ADMIN, CAP_SYS_NICE = 21, 23  # bits of the capability sets in /proc/<pid>/status


def holds_capability(bit: int) -> bool:
    """Whether this process holds the capability (a container's root may lack some): unshare and mount need
    CAP_SYS_ADMIN, lowering a niceness CAP_SYS_NICE. The sandbox's worker runs as this process's user."""
    with open("/proc/self/status") as status:
        effective = next(line for line in status if line.startswith("CapEff:")).split()[1]
    return bool(int(effective, 16) >> bit & 1)


def processes() -> list[tuple[int, int, str]]:
    """(pid, uid, command line) of every process in sight, read from /proc (minimal images have no `ps`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                uid = int((entry / "status").read_text().split("\nUid:")[1].split()[0])
                args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            except (OSError, IndexError):  # it ended while being read
                continue
            found.append((int(entry.name), uid, args))
    return found


def command_lines() -> list[str]:
    return [args for _, _, args in processes()]


@contextlib.contextmanager
def within(seconds: float):
    """Fail the test when its block runs longer than `seconds`: SIGALRM interrupts the block (pytest's Failed is
    no OSError nor Exception, so no handler of the code under test takes it for an error of its own)."""
    def expire(signum, frame):
        pytest.fail(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def sparse(path: Path, size: int = 1 << 40) -> Path:
    """A file of `size` bytes (a terabyte) that takes no room on the disk: a 17 KB archive can hold one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    os.truncate(path, size)
    return path


def locked_against(top: Path, exclusive: bool) -> bool:
    """Whether another process would wait to take the lock of submitted/ (`top`, submitted_folders.submitted_lock):
    exclusively (to write it), or shared (to read a folder of it)."""
    import fcntl

    other = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(other, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(other)


def release_notebook() -> dict:
    return nbformat.read(ROOT / "release" / ASSIGNMENT.name / NOTEBOOK, as_version=4)


def solution_notebook() -> dict:
    return nbformat.read(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK, as_version=4)


FULL = {cell.grade_id: cell.points for cell in ASSIGNMENT.grade_cells}  # every autograded part, at full marks


def grade_json(path: Path, course: Path = ROOT) -> tuple[dict, subprocess.CompletedProcess]:
    """`python -m autograder grade PATH --json` with the grader of `course`, as an instructor runs it."""
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", str(path), "--json"],
                         cwd=course, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout), run


def grade_class(course: Path, timeout: float = 900, assignment: str = ASSIGNMENT.name) -> subprocess.CompletedProcess:
    """`python -m autograder class` in `course`: what `make grade` runs."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # alembic
    return subprocess.run([sys.executable, "-m", "autograder", "class", "--assignment", assignment],
                          cwd=course, capture_output=True, text=True, env=env, timeout=timeout)


def scores(report: dict) -> dict[str, float]:
    return {p["grade_id"]: p["score"] for p in report["parts"]}


def write_notebook(notebook: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1))
    return path


def course_copy(tmp: Path) -> Path:
    """A fresh course directory: what a clone holds, without gradebook or submissions."""
    return copy_course(tmp)


def generate_gradebook(course: Path) -> Path:
    """`course`'s gradebook with the assignment's cells entered, as `make grade` enters them
    (grade_students.enter_assignment): what nbgrader's Autograde grades into."""
    # Imported here: importing nbgrader takes a second every other test would pay.
    from autograder.classroom.class_run import ClassRun
    from autograder.classroom.grade_students import enter_assignment
    from autograder.settings import GraderSettings, load_config

    path = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{path}"  # nbgrader runs `alembic`
    try:
        run = ClassRun.open(find_assignment(course, ASSIGNMENT.name), GraderSettings(config=load_config(course)))
        assert enter_assignment(run)
    finally:
        os.environ["PATH"] = path
    return course


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless, launched once a test module (chromium.launched: a skip says why without it)."""
    from chromium import launched

    with launched() as chromium:
        yield chromium


@pytest.fixture(scope="session")
def sandbox():
    """A sandbox whose calls may name the kit's lesson probes."""
    with Sandbox(modules={"lesson_probes": ROOT / "tests" / "lesson_probes.py"},
                 path=[ASSIGNMENT.source_dir]) as box:
        yield box


@pytest.fixture(scope="session")
def catalogue_reports() -> dict[str, dict]:
    """Every entry of the single-fault catalogue (tests/catalogue_bugs.py) graded in one run of the hidden
    suites, as `make grade` grades a class: each entry's report (to_json). Shared by the tests that read it."""
    from catalogue_bugs import BUGS

    from autograder.classroom.mutate import apply
    from autograder.grading import grade_submissions
    from autograder.settings import GraderSettings, load_config
    from autograder.submission import Submission

    reference = solution_notebook()
    submissions = [Submission(bug.id, notebook=apply(reference, list(bug.mutations))) for bug in BUGS]
    reports = grade_submissions(ASSIGNMENT, submissions, GraderSettings(config=load_config(ROOT)))
    return {key: report.to_json() for key, report in reports.items()}


@pytest.fixture(scope="session")
def catalogue_public_results(tmp_path_factory) -> dict[str, dict[str, dict[str, tuple[bool, str]]]]:
    """Every entry of the catalogue through the student's own checks: {entry: {part: {check: (passed,
    message)}}}, by the student's runner (notebook_checks.run_part, a child per part) on the entry's notebook
    saved in a folder of its own. Shared by the tests that read it."""
    import notebook_checks
    from catalogue_bugs import BUGS

    from autograder.classroom.mutate import apply

    folder = tmp_path_factory.mktemp("public")
    parts = [grade_id[len("test_"):] for grade_id in FULL]
    results = {}
    for bug in BUGS:
        path = write_notebook(apply(solution_notebook(), list(bug.mutations)), folder / bug.id / NOTEBOOK)
        results[bug.id] = {part: notebook_checks.run_part(part, path) for part in parts}
    return results


@pytest.fixture(scope="session")
def reference_program():
    return program_from_notebook(solution_notebook(), ASSIGNMENT.source, solution_notebook())
