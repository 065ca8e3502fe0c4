"""Neighbours: two graders on one machine, even each with its own /run (two containers, or chroots), cannot
touch each other: not through a shared uid, its process quota, or the kill that ends a uid's processes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from catalogue_hostile import FORK_BOMB, with_top_cell

from autograder.sandbox import Cell, uids
from conftest import FULL, ROOT, scores, solution_notebook, write_notebook

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a uid of the grader's own needs the grader to run as root")


def sleeper(uid: int) -> subprocess.Popen:
    return subprocess.Popen(["sleep", "300"], user=uid, group=uid, extra_groups=[])


def test_a_uid_another_grader_runs_is_not_claimed_though_its_lock_is_elsewhere(tmp_path, monkeypatch):
    monkeypatch.setattr(uids, "LOCKS", tmp_path / "their-run")
    theirs = uids.claim_uid()
    neighbour = sleeper(theirs)  # their sandbox, live; its lock is in a /run this grader cannot see
    try:
        monkeypatch.setattr(uids, "LOCKS", tmp_path / "our-run")
        drawn = iter([theirs, theirs + 1])
        monkeypatch.setattr(uids, "_draw", lambda ranges: next(drawn))
        assert uids.claim_uid() == theirs + 1
    finally:
        neighbour.kill()
        neighbour.wait()


def test_ending_a_uids_processes_ends_only_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(uids, "LOCKS", tmp_path)
    ours, theirs = uids.claim_uid(), uids.claim_uid()
    mine, neighbour = sleeper(ours), sleeper(theirs)
    try:
        uids.kill_processes_of(ours)
        assert mine.wait(timeout=5) == -9
        time.sleep(0.2)
        assert neighbour.poll() is None  # the other grader's process lives on
    finally:
        for process in (mine, neighbour):
            process.kill()
            process.wait()


def own_run(path) -> subprocess.Popen:
    """`python -m autograder grade PATH --json` in a mount namespace of its own with an empty /run: a
    second grader on the machine that cannot see this one's uid locks."""
    script = 'mount -t tmpfs none /run && exec "$@"'
    return subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "grader",
                             sys.executable, "-m", "autograder", "grade", str(path), "--json"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_a_fork_bomb_in_one_grader_costs_the_neighbours_reference_nothing(tmp_path):
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("no mount namespaces here to give each grader its own /run")
    reference = write_notebook(solution_notebook(), tmp_path / "honest" / "modules_and_sgd.ipynb")
    # The bomb's sleepers stay while each of its programs is loaded, that is, for as long as the reference takes.
    bomb = write_notebook(with_top_cell(solution_notebook(), FORK_BOMB), tmp_path / "bomb" / "modules_and_sgd.ipynb")
    graders = [own_run(bomb), own_run(reference)]
    outputs = [grader.communicate(timeout=600) for grader in graders]
    assert [grader.returncode for grader in graders] == [0, 0], [err[-2000:] for _, err in outputs]
    bombed, honest = (json.loads(out) for out, _ in outputs)
    assert "process budget" in bombed.get("limits", []), bombed.get("limits")
    assert scores(honest) == FULL, [p for p in honest["parts"] if p["score"] != FULL[p["grade_id"]]]


def test_the_graders_fork_is_retried_then_named_the_graders_failure(monkeypatch):
    from autograder.sandbox import forks

    results = iter([BlockingIOError(11, "Resource temporarily unavailable"), 4321])
    monkeypatch.setattr(forks.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(forks.os, "fork", lambda: (lambda r: r if isinstance(r, int) else (_ for _ in ()).throw(r))(
        next(results)))
    assert forks.fork() == 4321  # a moment's shortage passes
    monkeypatch.setattr(forks.os, "fork", lambda: (_ for _ in ()).throw(BlockingIOError(11, "no processes left")))
    with pytest.raises(forks.GraderForkError, match="fork failed 5 times: no processes left"):
        forks.fork()


FAIL_FORKS = "import os\ndef fork():\n    raise BlockingIOError(11, 'Resource temporarily unavailable')\nos.fork = fork"
FILL_BUDGET = "import os, time\nfor _ in range(20):\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)"


@pytest.mark.parametrize("code,reason,limit", [
    # The loader's fork fails (the notebook replaced os.fork) while the session can fork: the notebook's doing. The
    # machine's shortage, where the session cannot fork either, is no score (test_sandbox, "charged_from_what").
    (FAIL_FORKS, "could not start: the notebook's process could not start one for the check, though the grading "
                 "machine had processes to spare", "process budget"),
    # Its sleepers hold the whole pids budget: the student's.
    (FILL_BUDGET, "could not start: the submission's processes used its process budget of 16", "process budget"),
])
def test_a_check_the_grader_could_not_start_says_whose_fault_it_was(code, reason, limit):
    import sandbox_probes
    from test_isolation import box

    with box(budget_processes=16) as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("student", code + "\nx = 1")], sandbox_probes.value, name="x")
        sandbox.end()
    assert (outcome.reason, outcome.limit) == (reason, limit)
