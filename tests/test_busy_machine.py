"""The same notebook gets the same grade on a busy machine: limits are charged in CPU time (sandbox/cputime.py).

One test, as short as it can be: the reference and a notebook that loops in step() ("donald" of the demo
class), graded side by side while four busy processes per core spin, score exactly their quiet scores
(the golden demo scores, which tests/test_grading.py holds on a quiet run).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.classroom.demo import ROSTER
from autograder.classroom.mutate import apply
from conftest import FULL, ROOT, needs_level, scores, solution_notebook, write_notebook

pytestmark = pytest.mark.slow
GOLDEN = Path(__file__).parent / "golden" / "demo_scores.json"
SPIN = "while True:\n    pass"


def test_a_loop_and_the_reference_score_as_on_a_quiet_machine(tmp_path):
    notebooks = {"reference": solution_notebook(), "donald": apply(solution_notebook(), ROSTER["donald"][1])}
    quiet = {"reference": FULL, "donald": json.loads(GOLDEN.read_text())["donald"]}
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range((os.cpu_count() or 1) * 4)]
    try:
        graders = {name: subprocess.Popen(
            [sys.executable, "-m", "autograder", "grade", str(write_notebook(nb, tmp_path / name / "modules_and_sgd.ipynb")),
             "--json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for name, nb in notebooks.items()}
        outputs = {name: grader.communicate(timeout=900) for name, grader in graders.items()}
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    for name, (out, err) in outputs.items():
        assert graders[name].returncode == 0, err[-2000:]
        busy = {part: round(score, 2) for part, score in scores(json.loads(out)).items()}
        assert busy == quiet[name], (name, json.loads(out)["parts"])


# A submission that makes the session's memory polling dear (where no memory cgroup bounds it: the `uid` and
# `uid+landlock` levels, Docker's default): forty processes share 400 MB copy-on-write, so the sum of their RSS is
# past the budget and every look reads each one's smaps_rollup (a walk of its page tables); then a check that
# burns 2 s of CPU time.
DEAR_TO_POLL = """\
import os, time
import numpy as np
held = np.ones(400 << 17)
for _ in range(40):
    if os.fork() == 0:
        time.sleep(600)
        os._exit(0)
def burn():
    end = time.process_time() + 2.0
    while time.process_time() < end:
        pass
    return 1"""


def _charged_for_a_burn(spinners: int) -> float:
    """The CPU seconds the submission is charged for one check of DEAR_TO_POLL, with `spinners` busy processes beside."""
    import sandbox_probes

    from autograder.sandbox import Budget, Cell, Limits, Sandbox
    from autograder.settings import GraderSettings

    spinning = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(spinners)]
    try:
        with Sandbox(modules={"sandbox_probes": ROOT / "tests" / "sandbox_probes.py"}, limits=Limits(seconds=5),
                     budget=Budget(seconds=45), isolation={**GraderSettings().isolation(), "level": "uid"}) as box:
            box.begin()
            cells = [Cell("student", DEAR_TO_POLL)]
            assert box.call(cells, sandbox_probes.bound, name="burn").ok
            before = box.spent
            assert box.call(cells, sandbox_probes.run, name="burn").ok
            return box.spent - before
    finally:
        for spinner in spinning:
            spinner.kill()
            spinner.wait()


@needs_level("uid")
def test_the_charge_of_the_sessions_memory_polling_does_not_change_with_the_machines_load():
    """Isolation.over polls the submission's memory every cputime.TICK of wall-clock time while a check runs, and
    its CPU time (`polled`) is charged to the submission's budget_seconds: how many looks a check gets, and so
    what the same check costs the budget, is a matter of how the machine shares its CPUs, not of the notebook.
    Observed on 2 CPUs: 3.7-3.8 s charged for the 2 s check on its own, 2.33 s with four busy processes per core
    beside it, every time (a notebook of twelve such checks spends its 45 s budget when graded alone, not beside
    them). Without the crowd both are 2.08 s."""
    quiet, busy = _charged_for_a_burn(0), _charged_for_a_burn((os.cpu_count() or 1) * 4)
    assert abs(quiet - busy) < 0.4, (quiet, busy)


def _checks_run_within_a_budget(spinners: int) -> list[tuple[bool, str]]:
    """What four checks of DEAR_TO_POLL answer within a 10 s budget, with `spinners` busy processes beside."""
    import sandbox_probes

    from autograder.sandbox import Budget, Cell, Limits, Sandbox
    from autograder.settings import GraderSettings

    spinning = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(spinners)]
    try:
        with Sandbox(modules={"sandbox_probes": ROOT / "tests" / "sandbox_probes.py"}, limits=Limits(seconds=5),
                     budget=Budget(seconds=10), isolation={**GraderSettings().isolation(), "level": "uid"}) as box:
            box.begin()
            cells = [Cell("student", DEAR_TO_POLL)]
            return [(outcome.ok, outcome.limit) for outcome in
                    (box.call(cells, sandbox_probes.run, name="burn") for _ in range(4))]
    finally:
        for spinner in spinning:
            spinner.kill()
            spinner.wait()


@needs_level("uid")
def test_a_notebook_whose_memory_is_dear_to_poll_gets_the_same_checks_run_beside_busy_processes():
    """The grade-level consequence of the test above. Observed: two of the four checks run, then 'time budget', on
    its own; three or four of them beside four busy processes per core."""
    assert _checks_run_within_a_budget(0) == _checks_run_within_a_budget((os.cpu_count() or 1) * 4)
