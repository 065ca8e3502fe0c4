"""`make bench`'s correctness check, quick and without timing: the kit and stock nbgrader agree; and the lines
it ends with.

The bench (bench/) grades the same notebooks twice: with this kit (`python -m autograder class`) and
with stock nbgrader's kernel executor, whose grade cells run the hidden suites' checks in the kernel
(bench/stock_checks.py), called directly (the headline) and through pytest.main (the labelled variant).
Honest submissions must get the same scores, full marks, from every side; a buggy one must lose its part
on every side, so the in-kernel checks are not passing everything.
"""
from __future__ import annotations

import pytest

from bench.__main__ import Side, headline, kit_side, stock_side
from bench.course import CORRECT, full_marks, notebooks_by_kind
from conftest import ROOT


@pytest.mark.slow
def test_kit_and_stock_nbgrader_give_honest_submissions_the_same_full_marks(tmp_path):
    people = [(f"honest{i}", CORRECT) for i in range(3)] + [("zero_grad_bug", "grace")]
    texts = notebooks_by_kind()
    kit = kit_side(tmp_path, len(people), people, texts)
    # A generous cell timeout: this checks scores, not speed, and a busy machine must not cost a cell its points.
    stocks = [stock_side(tmp_path, len(people), people, texts, 30, finish=False, runner=runner)
              for runner in ("run_suite", "run_suite_under_pytest")]
    full = full_marks(ROOT)

    honest = [student for student, kind in people if kind == CORRECT]
    for side in (kit, *stocks):
        assert {s: side.scores.get(s) for s in honest} == {s: full for s in honest}

    # grace's zero_grad() does nothing: every grader takes points off test_zero_grad, and only there
    # among the single-stub parts (stock gives zero for the cell, the kit a share per check passed).
    for side in (kit, *stocks):
        bug = side.scores["zero_grad_bug"]
        assert bug["test_zero_grad"] < full["test_zero_grad"]
        assert all(bug[part] == full[part] for part in ("test_forward", "test_parameters", "test_step", "test_no_grad"))
    assert all(stock.scores["zero_grad_bug"]["test_zero_grad"] == 0 for stock in stocks)


def side(grade: float, whole: float, but_slowest: float | None = None, again: float | None = None) -> Side:
    return Side(grade=grade, whole=whole, peak_mb=0, peak_rss_mb=0, grade_but_slowest=but_slowest, again=again)


def test_the_bench_ends_with_the_throughput_ratio_between_the_two_largest_sizes_the_whole_job_and_one_notebook():
    both = [(25, side(33.0, 34.0), side(51.0, 58.0)), (100, side(42.0, 43.0), side(164.0, 174.0)),
            (200, side(53.2, 54.8, again=2.74), side(333.2, 346.6))]
    assert headline(both, 0.504) == [
        "one more submission, grading step, N=100->200: kit 0.112 s, stock 1.692 s",
        "throughput ratio: 15.1",
        "whole-job ratio: 6.3",
        "make grade again, unchanged class of 200: 2.7 s (5% of the first)",
        "one notebook: 0.50 s",
    ]


def test_with_one_size_on_both_sides_the_bench_says_the_throughput_ratio_was_not_measured():
    lines = headline([(25, side(33.0, 34.0), side(51.0, 58.0))], 0.8)
    assert lines[0] == "throughput ratio: not measured (needs two sizes on both sides; N=25 only)"
    assert lines[1:] == ["whole-job ratio: 1.7", "one notebook: 0.80 s"]


def test_the_kits_pace_without_its_slowest_submission_is_printed_beside_the_throughput_ratio():
    both = [(100, side(42.0, 43.0, 20.0), side(164.0, 174.0)), (200, side(53.2, 54.8, 39.0), side(333.2, 346.6))]
    assert headline(both, 0.5)[:3] == [
        "one more submission, grading step, N=100->200: kit 0.112 s, stock 1.692 s",
        "  the kit to the last score but its slowest submission's (the loop's): 0.190 s; stock over that: 8.9",
        "throughput ratio: 15.1",
    ]


def test_the_slowest_submission_is_left_out_of_the_kits_pace():
    from bench.__main__ import _graded_but_slowest

    events = [{"event": f"autograde:{edge}", "pid": pid, "t": t} for pid, edge, t in [
        (1, "start", 100.0), (2, "start", 100.1), (1, "end", 100.5), (1, "start", 100.6), (1, "end", 101.0),
        (2, "end", 130.0)]]
    assert _graded_but_slowest(events, 99.0) == 2.0
