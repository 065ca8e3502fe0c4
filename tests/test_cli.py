"""The command line (autograder/__main__.py): one for every job, exit statuses, --help, and a table that fits on a screen."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ASSIGNMENT, NOTEBOOK, ROOT

BLANK = ROOT / "release" / ASSIGNMENT.name / NOTEBOOK


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("where, says", [
    ("no/such/file.ipynb", "does not exist"),
    ("release", "is a folder"),
])
def test_a_path_that_is_not_a_notebook_file_is_the_instructors_error_exit_2(tmp_path, where, says):
    path = ROOT / where if where == "release" else tmp_path / where
    run = cli("grade", str(path))
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == "" and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert says in run.stderr and str(path) in run.stderr
    assert cli("grade", str(path), "--json").returncode == 2


@pytest.mark.slow
def test_a_good_notebook_exits_0():
    run = cli("grade", str(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK))
    assert run.returncode == 0, run.stderr[-2000:]
    total = re.search(r"^total\s+(\S+)/(\S+)$", run.stdout, re.M)
    assert total and total.group(1) == total.group(2), run.stdout
    assert "FAIL" not in run.stdout


@pytest.mark.slow
def test_a_broken_notebook_file_exits_0_with_its_reason(tmp_path):
    """The file is the student's: it is graded (zero) with a reason, and the grader exits 0."""
    path = tmp_path / NOTEBOOK
    path.write_text('{"cells": [')
    run = cli("grade", str(path))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "not graded:" in run.stdout and "is not a readable notebook" in run.stdout
    assert run.stdout.count("is not a readable notebook") == 1, "the reason is said once, not once a part"


def test_help_lists_every_subcommand_with_an_example():
    from autograder.__main__ import EXAMPLES

    run = cli("--help")
    assert run.returncode == 0
    commands = re.search(r"\{([a-z,-]+)\}", run.stdout).group(1).split(",")
    assert {"grade", "class", "regrade", "new-class", "clean-grading", "reset-gradebook"} <= set(commands)
    examples = run.stdout.split("examples")[1]
    for command in commands:
        assert re.search(rf"^\s+{re.escape(command)}\s+python -m autograder {re.escape(command)}\b", examples, re.M), command
    assert set(EXAMPLES) <= set(commands)


def test_every_make_target_that_runs_the_grader_runs_one_of_its_subcommands():
    """One command line: each make target of the kit's jobs runs `python -m autograder <subcommand>`, and every
    subcommand but the two the Gradescope zip's scripts run (and `grade`, one notebook by hand) has its target."""
    from autograder.__main__ import EXAMPLES

    subcommands = set(EXAMPLES)  # every subcommand, as the --help test holds
    makefile = (ROOT / "Makefile").read_text()
    modules = set(re.findall(r"^\t\$\(PY\) -m ([\w.]+)", makefile, re.M))
    assert modules == {"pip", "ipykernel", "autograder", "pytest", "machines", "bench"}, modules
    run = re.findall(r"^\t\$\(PY\) -m autograder ([a-z-]+)", makefile, re.M)
    assert set(run) <= subcommands, set(run) - subcommands
    assert subcommands - set(run) == {"grade", "gradescope-prepare", "gradescope-run"}, subcommands - set(run)


@pytest.mark.slow
def test_the_table_of_a_blank_notebook_fits_on_a_screen_and_verbose_lists_every_check():
    short = cli("grade", str(BLANK))
    assert short.returncode == 0, short.stderr[-2000:]
    lines = short.stdout.strip().splitlines()
    assert len(lines) <= 25, short.stdout
    for cell in ASSIGNMENT.grade_cells:  # each part, with its first failing check and what it says
        at = next(i for i, line in enumerate(lines) if line.startswith(cell.grade_id))
        assert lines[at + 1].startswith("    FAIL ") and len(lines[at + 1]) > 20, lines[at:at + 2]
    full = cli("grade", str(BLANK), "--json")
    import json

    checks = [t["name"] for p in json.loads(full.stdout)["parts"] for t in p["tests"]]
    verbose = cli("grade", str(BLANK), "--verbose").stdout
    listed = re.findall(r"^    (?:PASS|FAIL) (\S+?)(?::|$)", verbose, re.M)
    assert listed == checks and len(listed) > 25
