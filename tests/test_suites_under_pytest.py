"""The hidden suites under pytest itself (autograder/checks/pytest_plugin.py) agree with the grader, check by check.

For every entry of the bug catalogue (the reference with one mutation, tests/catalogue_bugs.py), and for
the reference, the reference without its `sgd` cell and the blank release, the notebook is written to a file and run twice:

* `python -m pytest autograder/dl01_6_3 --notebook X -q -rA --checks-json J`, as an instructor runs it;
* the grader, on all of them in one batch (grading.grade_submissions, what `python -m autograder grade X`
  and `make grade` run).

Each check (part, name) must pass under pytest exactly when it passes in the grader, and fail with the
grader's one-line message; the lines pytest prints (`-rA`: PASSED/FAILED node id) must say the same.
The pytest runs go two at a time (the kit's tests run on two cores).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from catalogue_bugs import BUGS

from autograder.classroom.mutate import apply
from autograder.grading import grade_submissions
from autograder.settings import GraderSettings, load_config
from autograder.submission import Submission
from conftest import ASSIGNMENT, ROOT, course_copy, release_notebook, solution_notebook, write_notebook

pytestmark = pytest.mark.slow

SUITES = f"autograder/{ASSIGNMENT.name}"
LINE = re.compile(rf"^(PASSED|FAILED) {re.escape(SUITES)}/(test_\w+)\.py::(\S+)(?: - (.*))?$")


def notebooks() -> dict[str, dict]:
    entries = {"reference": solution_notebook(), "release": release_notebook()}
    for bug in BUGS:
        entries[bug.id] = apply(solution_notebook(), list(bug.mutations))
    # A deleted solution cell: the messages name it as the cause, under pytest as in the grader.
    without_sgd = solution_notebook()
    without_sgd.cells = [c for c in without_sgd.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "sgd"]
    entries["reference-without-sgd"] = without_sgd
    return entries


def run_pytest(path: Path) -> tuple[dict, subprocess.CompletedProcess]:
    """The hidden suites on one notebook under pytest; its --checks-json and the run (stdout: -q -rA)."""
    checks = path.with_suffix(".pytest.json")
    run = subprocess.run([sys.executable, "-m", "pytest", SUITES, "--notebook", str(path), "-q", "-rA",
                          "--checks-json", str(checks)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, env=_env())
    assert run.returncode in (0, 1), f"pytest could not run the suites on {path.name}:\n{run.stdout[-3000:]}{run.stderr[-2000:]}"
    return json.loads(checks.read_text()), run


def _env() -> dict:
    import os

    return {**os.environ, "COLUMNS": "1000"}  # -rA lines with their messages untrimmed


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> dict[str, tuple[dict, dict, str]]:
    """{entry: (grader's {(part, name): (passed, message)}, pytest's the same, pytest's printed lines)}."""
    folder = tmp_path_factory.mktemp("under_pytest")
    entries = notebooks()
    paths = {key: write_notebook(notebook, folder / key / ASSIGNMENT.notebook_name) for key, notebook in entries.items()}

    start = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        runs = dict(zip(paths, pool.map(run_pytest, paths.values())))
    pytest_seconds = time.perf_counter() - start

    start = time.perf_counter()
    reports = grade_submissions(ASSIGNMENT, [Submission(key, notebook=nb) for key, nb in entries.items()],
                                GraderSettings(config=load_config(ROOT)))
    grader_seconds = time.perf_counter() - start
    print(f"\n{len(paths)} notebooks: pytest {pytest_seconds:.1f} s (two at a time), grader {grader_seconds:.1f} s")

    results = {}
    for key in paths:
        grader = {(part["grade_id"], test["name"]): (test["passed"], test["message"])
                  for part in reports[key].to_json()["parts"] for test in part["tests"]}
        report, run = runs[key]
        under_pytest = {(check["part"], check["name"]): (check["passed"], check["message"]) for check in report["checks"]}
        results[key] = (grader, under_pytest, run.stdout)
    return results


# Entries whose checks pass or fail by chance, in the grader too, and why: for these, pytest and the grader
# must run the same checks and take points from the same parts, but which checks fail may differ.
BY_CHANCE = {
    "parameters-returns-a-set": "a set of Parameters iterates in an order set by their memory addresses, so "
                                "which checks see the order wrong changes from one run of the grader to the next",
    "parameters-seen-on-class": "a set kept on the class holds the ids of Parameters gone, which new ones take again "
                                "as memory is reused, so which checks find a Parameter missing changes from run to run",
    # The same set, kept in a global of the cell or as a default argument: one object for every call.
    "parameters-seen-global": "as parameters-seen-on-class",
    "parameters-seen-default-set": "as parameters-seen-on-class",
    "parameters-helper-default-set": "as parameters-seen-on-class",  # the set a default of its helper
    "sgd-init-set": "as parameters-returns-a-set",  # the set SGD.__init__ keeps
    "zero-grad-empty-like": "np.empty_like's arrays hold what their memory held before, so the numbers the messages "
                            "quote, and which checks see them, change from one run to the next",
}


def failing_parts(results: dict) -> set[str]:
    return {part for (part, _), (passed, _) in results.items() if not passed}


@pytest.mark.parametrize("entry", ["reference", "release", *(bug.id for bug in BUGS)])
def test_pytest_and_the_grader_pass_and_fail_the_same_checks(both, entry):
    grader, under_pytest, _ = both[entry]
    assert len(grader) > 100
    if entry in BY_CHANCE:
        assert set(under_pytest) == set(grader)
        assert failing_parts(under_pytest) == failing_parts(grader), BY_CHANCE[entry]
        return
    assert {k: v[0] for k, v in under_pytest.items()} == {k: v[0] for k, v in grader.items()}


@pytest.mark.parametrize("entry", ["reference", "release", *(bug.id for bug in BUGS)])
def test_a_failing_check_shows_the_graders_message_in_what_pytest_prints(both, entry):
    grader, under_pytest, printed = both[entry]
    shown = {}
    for line in printed.splitlines():
        match = LINE.match(line)
        if match:
            word, part, name, message = match.groups()
            shown[(part, name)] = (word == "PASSED", message or "")
    assert {k: v[0] for k, v in shown.items()} == {k: v[0] for k, v in under_pytest.items()}
    if entry in BY_CHANCE:
        return
    assert {k: v[0] for k, v in shown.items()} == {k: v[0] for k, v in grader.items()}
    for key, (passed, message) in grader.items():
        if not passed and not message.startswith("(message withheld"):
            assert under_pytest[key][1] == message, key
            assert shown[key][1] == message, key


def mallorys_course(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A course copy with its root conftest.py and pytest.ini, Mallory's submission in it (the reference's
    notebook): the course, her folder, and the file a conftest.py of hers writes to when it runs."""
    course = course_copy(tmp_path / "course")
    for name in ("conftest.py", "pytest.ini"):
        shutil.copy2(ROOT / name, course / name)
    folder = course / "submitted" / "mallory" / ASSIGNMENT.name
    write_notebook(solution_notebook(), folder / ASSIGNMENT.notebook_name)
    return course, folder, tmp_path / "ran"


def suites_pass(course: Path, *args: str, env: dict | None = None) -> None:
    """pytest on the suites from the course root, one part's checks: they run, and pass (the reference)."""
    run = subprocess.run([sys.executable, "-m", "pytest", *args, "-q", "-k", "counts_354"], cwd=course,
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]


def test_no_conftest_of_the_submissions_folder_runs_in_pytest(tmp_path):
    """nbgrader submit copies the student's whole folder, its conftest.py too: pytest must not import it.

    (pytest takes `--notebook PATH`'s value for a test path before it knows the option, and would load the
    conftest.py files above it; the root conftest.py registers stand-ins for them first. `--notebook=PATH` it
    never takes for one: a folder outside the course, its pytest.ini and conftest.py, are never read.)
    """
    course, folder, canary = mallorys_course(tmp_path)
    home = tmp_path / "home" / "mallory"  # outside the course: pytest would take its pytest.ini for the course's
    write_notebook(solution_notebook(), home / ASSIGNMENT.notebook_name)
    (home / "pytest.ini").write_text("[pytest]\naddopts = --collect-only\n")
    for place in (folder, folder.parent, folder.parent.parent, home):
        (place / "conftest.py").write_text(f"open({str(canary)!r}, 'a').write({str(place)!r} + '\\n')\n")
    for order in (["--notebook", str(folder / ASSIGNMENT.notebook_name), SUITES],
                  [SUITES, "--notebook", f"submitted/mallory/{ASSIGNMENT.name}/{ASSIGNMENT.notebook_name}"],
                  [f"--notebook={home / ASSIGNMENT.notebook_name}", SUITES]):
        suites_pass(course, *order)
        assert not canary.exists(), canary.read_text()


def test_a_conftest_made_in_the_submissions_folder_after_the_guard_looked_is_never_run(tmp_path):
    """A student who owns the folder of the notebook (their home on a hub) makes conftest.py there once the root
    conftest's guard has looked (or keeps making and removing one): pytest, which looks again by the path, must
    still not import it. Here a plugin of the test's makes it right after the guard ran."""
    course, folder, canary = mallorys_course(tmp_path)
    (tmp_path / "plugins").mkdir()
    student_conftest = f"open({str(canary)!r}, 'a').write('ran')\n"
    (tmp_path / "plugins" / "late_conftest.py").write_text(
        "from pathlib import Path\n"
        "def pytest_plugin_registered(plugin, plugin_name, manager):\n"
        f"    if plugin_name == {str(course / 'conftest.py')!r}:  # the guard ran: the root conftest's hook is first\n"
        f"        Path({str(folder / 'conftest.py')!r}).write_text({student_conftest!r})\n")
    suites_pass(course, "-p", "late_conftest", SUITES, "--notebook",
                f"submitted/mallory/{ASSIGNMENT.name}/{ASSIGNMENT.notebook_name}",
                env={**os.environ, "PYTHONPATH": str(tmp_path / "plugins")})
    assert (folder / "conftest.py").is_file()  # made in time for pytest to look again
    assert not canary.exists(), "the conftest.py made after the guard looked ran in the instructor's pytest"


def test_without_a_notebook_the_suites_skip_and_say_how_to_run_them():
    run = subprocess.run([sys.executable, "-m", "pytest", SUITES, "-q", "-rs"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:]
    assert " skipped" in run.stdout and "passed" not in run.stdout and "--notebook=PATH" in run.stdout
