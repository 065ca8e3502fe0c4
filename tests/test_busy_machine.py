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
from conftest import FULL, ROOT, scores, solution_notebook, write_notebook

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
