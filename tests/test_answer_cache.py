"""The reference's answers kept between runs (autograder/checks/answer_cache.py): used only while every input is
unchanged, never readable by anyone but the grader, and equal to the answers computed afresh."""
import stat
from pathlib import Path

import pytest

from autograder.assignment import find_assignment
from autograder.checks import answer_cache
from autograder.checks.answer_cache import cache_key, keep_answers, read_answers
from autograder.checks.suites import reference_answers
from autograder.classroom.changes import suite_files
from autograder.sandbox import Limits, Outcome
from autograder.settings import GraderSettings, load_config

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = {("probe", "[('n', 1)]"): Outcome(True, value=[[1.5, None]], load_errors=["cell x: y"]),
           ("other", "[]"): Outcome(False, reason="no", limit="time")}


@pytest.fixture
def course(tmp_path, monkeypatch):
    """The course's assignment, its cache in tmp_path, one extra input file the test may change."""
    assignment = find_assignment(ROOT)
    extra = tmp_path / "input.py"
    extra.write_text("x = 1\n")
    inputs = answer_cache._inputs
    monkeypatch.setattr(answer_cache, "_inputs", lambda a, public=False: [*inputs(a, public), extra])
    monkeypatch.setattr(answer_cache, "cache_path", lambda a: tmp_path / ".grading" / "answers.json")
    return assignment, extra, tmp_path / ".grading" / "answers.json"


def cached_answers(assignment, limits, compute):
    """What grading.prepare_class does: the kept answers, else computed and kept."""
    key = cache_key(assignment, limits)
    answers = read_answers(assignment, key)
    if answers is None:
        answers = compute()
        keep_answers(assignment, key, answers)
    return answers


def counting(answers):
    calls = []

    def compute():
        calls.append(1)
        return dict(answers)
    return compute, calls


def test_computed_once_then_read_back_equal(course):
    assignment, _, path = course
    compute, calls = counting(ANSWERS)
    assert cached_answers(assignment, Limits(), compute) == ANSWERS
    assert cached_answers(assignment, Limits(), compute) == ANSWERS
    assert len(calls) == 1


def test_only_the_grader_can_read_it(course):
    assignment, _, path = course
    cached_answers(assignment, Limits(), counting(ANSWERS)[0])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize("change", ["input", "limits", "damaged"])
def test_any_change_computes_them_again(course, change):
    assignment, extra, path = course
    compute, calls = counting(ANSWERS)
    cached_answers(assignment, Limits(), compute)
    limits = Limits()
    if change == "input":
        extra.write_text("x = 2\n")
    elif change == "limits":
        limits = Limits(seconds=2.0)
    else:
        path.write_text(path.read_text()[:-20])
    assert cached_answers(assignment, limits, compute) == ANSWERS
    assert len(calls) == 2


def test_the_key_covers_the_hidden_suites_and_the_reference():
    assignment = find_assignment(ROOT)
    names = {path.name for path in answer_cache._inputs(assignment)}
    assert {"probes.py", "test_step.py", "engine.py", "child.py", "suites.py", assignment.notebook_name} <= names
    assert all(path.is_file() for path in answer_cache._inputs(assignment)), "a key over a missing file covers nothing"
    assert cache_key(assignment, Limits()) == cache_key(assignment, Limits())


def test_the_grade_ledgers_suites_are_files():
    """A grade is stale when its suites or the kit's grading code change (autograder/classroom/changes.py): each
    file it compares is there, the parametrisation, the sandbox and the late penalty among them."""
    files = suite_files(find_assignment(ROOT))
    assert {"probes.py", "test_step.py", "suites.py", "parametrize.py", "worker.py", "late.py"} <= {
        path.name for path in files}
    assert all(path.is_file() for path in files), [str(path) for path in files if not path.is_file()]


def test_the_real_answers_read_back_as_computed(course):
    assignment, _, _ = course
    settings = GraderSettings(config=load_config(ROOT))
    fresh = reference_answers(assignment, settings)
    cached_answers(assignment, settings.limits, lambda: fresh)
    assert cached_answers(assignment, settings.limits, lambda: {}) == fresh
