"""autograder/nbgrader_glue/late.py's settle_penalties on a gradebook built with nbgrader's API: the late penalty is the
policy's share of the whole score the gradebook holds (hand grades included), whenever they were given.

tests/test_term.py runs the same through `make grade` and `make feedback` (slow).
"""
from __future__ import annotations

import os
import shutil
import sys
from datetime import datetime
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from traitlets.config import Config

from autograder.nbgrader_glue.late import settle_penalties

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's session noise, as make grade

DUE = datetime(2026, 11, 20, 23, 59)
LATE = datetime(2026, 11, 22, 10, 0)  # 1 day 10 h late: 2 days or part of one


def policy(method: str) -> Config:
    config = Config()
    config.AssignLatePenalties.plugin_class = "autograder.nbgrader_glue.late.LatePenalty"
    config.LatePenalty.penalty_method = method
    config.LatePenalty.percent_per_day = 10.0
    return config


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """lou's gradebook: 18 autograded points (a code part), an answer of 6 points not hand graded yet, a penalty of
    3.6 as nbgrader's autograde left it (10 % of 18 for 2 days); made once (nbgrader runs `alembic` for it)."""
    path = tmp_path_factory.mktemp("late") / "gradebook.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        with Gradebook(f"sqlite:///{path}") as gb:
            gb.add_assignment("a", duedate=DUE)
            gb.add_notebook("nb", "a")
            gb.add_grade_cell("code", "nb", "a", max_score=18, cell_type="code")
            gb.add_grade_cell("answer", "nb", "a", max_score=6, cell_type="markdown")
            gb.add_student("lou")
            gb.add_submission("a", "lou", timestamp=LATE)
            code = gb.find_grade("code", "nb", "a", "lou")
            code.auto_score, code.needs_manual_grade = 18.0, False
            gb.find_submission_notebook("nb", "a", "lou").late_submission_penalty = 3.6
            gb.db.commit()
    return path


def book(template: Path, tmp_path: Path, timestamp: datetime = LATE) -> Gradebook:
    """A copy of the template, lou's submission at `timestamp`."""
    shutil.copy(template, tmp_path / "gradebook.db")
    gb = Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}")
    gb.find_submission("a", "lou").timestamp = timestamp
    gb.db.commit()
    return gb


def hand_grade(gb: Gradebook, name: str, points: float) -> None:
    grade = gb.find_grade(name, "nb", "a", "lou")
    grade.manual_score, grade.needs_manual_grade = points, False
    gb.db.commit()


@pytest.mark.parametrize(("method", "penalty"), [("per_day", 4.8), ("zero", 24.0), ("none", 0.0)])
def test_the_penalty_counts_the_hand_grades_given_after_the_autograde(template, tmp_path, method, penalty):
    with book(template, tmp_path) as gb:
        hand_grade(gb, "answer", 6.0)
        moved = settle_penalties(gb, "a", policy(method))
        gb.db.commit()
        assert gb.find_submission("a", "lou").late_submission_penalty == pytest.approx(penalty)
        assert moved == {"lou": (pytest.approx(3.6), pytest.approx(penalty))}
        assert settle_penalties(gb, "a", policy(method)) == {}  # worked out again: the same


def test_an_override_that_lowers_a_part_lowers_the_penalty_and_on_time_work_has_none(template, tmp_path):
    with book(template, tmp_path) as gb:
        hand_grade(gb, "code", 8.0)
        hand_grade(gb, "answer", 2.0)
        settle_penalties(gb, "a", policy("per_day"))
        gb.db.commit()
        assert gb.find_submission("a", "lou").late_submission_penalty == pytest.approx(2.0)
    (tmp_path / "on-time").mkdir()
    with book(template, tmp_path / "on-time", timestamp=DUE) as gb:
        assert settle_penalties(gb, "a", policy("zero")) == {"lou": (pytest.approx(3.6), 0.0)}
