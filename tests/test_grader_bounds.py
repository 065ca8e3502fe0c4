"""Bounds on the grader's side (issue 29, item 3): the grader reads every answer within limits no looser than
what a session may send (bytes, depth, values), counts the CPU time it spends reading them in the submission's
budget, reads no more than budget_answers_mb of one submission, and a session lost with its worker is continued
with what is left of the budget, never a new one."""
from __future__ import annotations

import json
import os
import threading
import time

import pytest
import sandbox_probes
from catalogue_hostile import DEEP_ANSWERS, FORGED_ANSWERS, HUGE_ANSWERS

from autograder.sandbox import Budget, Cell, Limits, Sandbox
from autograder.sandbox.protocol import (
    CLOSED,
    DEPTH,
    ERROR_BYTES,
    FROM_LOADER,
    TO_GRADER,
    UNREADABLE,
    Lines,
    Loaded,
    LoadingCell,
    Oversized,
    answer_fault,
    read,
)
from conftest import ASSIGNMENT, ROOT, needs_level

PROBES = ROOT / "tests" / "sandbox_probes.py"


def box(answer_kb: int = 64, **budget) -> Sandbox:
    return Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=3, answer_kb=answer_kb),
                   budget=Budget(**budget))


def lines_of(*writes: bytes, limit: int) -> list:
    read, write = os.pipe()

    def writer() -> None:
        for data in writes:
            os.write(write, data)
        os.close(write)

    thread = threading.Thread(target=writer)
    thread.start()
    lines, got = Lines(read, FROM_LOADER, limit=limit), []
    while (message := lines.next(time.monotonic() + 5)) != CLOSED:
        got.append(message)
    lines.close()
    thread.join()
    return got


def test_a_line_past_the_limit_is_dropped_and_the_next_one_read():
    cell, loaded = b'{"event": "cell", "name": "a"}\n', b'{"event": "loaded", "errors": []}\n'
    too_long = Oversized("longer than 1,000 bytes")
    assert lines_of(cell, b'{"event": "cell", "name": "' + b"x" * 5000 + b'"}\n' + loaded, limit=1000) == [
        LoadingCell("a"), too_long, Loaded([])]
    assert lines_of(b'{"event": "cell", "name": "' + b"x" * 200_000, b'"}\n', loaded, limit=1000) == [
        too_long, Loaded([])]  # found past the limit before its end came: the rest is dropped as it comes


def test_an_answers_depth_and_values_are_bounded_without_recursion():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert answer_fault(deep, 1 << 20) == f"nested more than {DEPTH} levels deep"
    assert answer_fault([0] * 5000, 64 * 1024) == "of more than 4,096 values"
    assert answer_fault({"\x00array": ["|b1", [6000], "AAAA" * 1500]}, 64 * 1024) == "of more than 4,096 values"
    assert answer_fault({"z": [1.5, [2, {"k": "v"}]]}, 64 * 1024) == ""
    assert answer_fault({"\x00array": ["<f8", [10**9, 0], ""]}, 64 * 1024) == "of more than 4,096 values"
    assert answer_fault({"\x00array": ["<f8", [3, 0], ""]}, 64 * 1024) == ""


def test_the_grader_holds_each_answer_to_what_the_session_passes_on_whatever_wrote_the_line():
    empty_rows = {"ok": True, "value": {"\x00array": ["<f8", [10**9, 0], ""]}, "reason": "", "limit": "",
                  "not_run": False}
    line = json.dumps({"answers": [empty_rows, {**empty_rows, "value": 2**61 + 1}], "load_errors": [], "spent": 0,
                       "oom_kills": 0})
    answers = read(line, TO_GRADER, 64 * 1024)
    assert [(a.ok, a.reason) for a in answers.answers] == [(False, UNREADABLE)] * 2


@pytest.mark.parametrize("code,reason", [
    (HUGE_ANSWERS, "returned an answer larger than 64 KB: more than the grader reads from one check (at most 64 KB)"),
    (DEEP_ANSWERS, "returned an answer nested more than 32 levels deep: more than the grader reads from one check"),
    (FORGED_ANSWERS.format(payload="[0] * 5000"), "returned an answer of more than 4,096 values"),
], ids=["huge", "deep", "values"])
def test_a_forged_answer_past_the_limits_is_the_checks_named_failure(code, reason):
    with box() as sandbox:
        outcomes = sandbox.call_many([Cell("student", code + "\nx = 1")], [(sandbox_probes.value, {"name": "x"})] * 3)
        after = sandbox.call([Cell("student", "x = 2")], sandbox_probes.value, name="x")
    assert [(o.ok, o.limit) for o in outcomes] == [(False, "answer")] * 3 and reason in outcomes[0].reason
    assert after.ok and after.value == 2  # the worker lived on: no new session was needed


@pytest.mark.parametrize("code,reason", [
    # an empty array of 10**9 rows has no bytes, and tolist() in the grader would make 10**9 lists
    ("import numpy\nx = numpy.empty((10**9, 0))", "returned an answer of more than 4,096 values"),
    # whole numbers chosen to share a hash would make the grader's sets of them quadratic
    ("x = [1 + k * (2**61 - 1) for k in range(3)]", "returned an answer holding a whole number beyond 2**53"),
], ids=["empty-rows", "colliding-wholes"])
def test_an_answer_that_would_cost_the_grader_more_than_its_bytes_is_the_checks_named_failure(code, reason):
    with box() as sandbox:
        outcome = sandbox.call([Cell("student", code)], sandbox_probes.value, name="x")
    assert (outcome.ok, outcome.limit) == (False, "answer") and outcome.reason.startswith(reason), outcome


# Rewrites json.dumps in the loader, as FORGED_ANSWERS does, so that every answer it (or a check child forked
# from it) writes says "ok": "yes": a record of the right kind with a field of the wrong type.
WRONG_TYPES = """\
import json
def dumps(message, *args, _dumps=json.dumps, **kwargs):
    if isinstance(message, dict) and message.get("event") == "result":
        message = {**message, "ok": "yes"}
    return _dumps(message, *args, **kwargs)
json.dumps = dumps
x = 1"""


@pytest.mark.parametrize("fresh", [True, False], ids=["check-child", "loader"])
def test_an_answer_with_a_field_of_the_wrong_type_is_rejected_as_that_checks_failure(fresh):
    with box() as sandbox:
        outcomes = sandbox.call_many([Cell("student", WRONG_TYPES)], [(sandbox_probes.value, {"name": "x"})] * 2,
                                     fresh=fresh)
        after = sandbox.call([Cell("student", "x = 2")], sandbox_probes.value, name="x")
    assert [(o.ok, o.reason, o.limit) for o in outcomes] == [(False, UNREADABLE, "")] * 2
    assert after.ok and after.value == 2  # the same worker, the next program: nothing else was lost


def test_past_the_submissions_answer_budget_the_grader_reads_no_more():
    code = FORGED_ANSWERS.format(payload="'x' * 300_000") + "\nx = 1"
    with box(answer_kb=1024, answers_mb=1) as sandbox:
        sandbox.begin()
        outcomes = [sandbox.call([Cell("student", code)], sandbox_probes.value, name="x") for _ in range(5)]
        assert sandbox.charged > 0  # its reading, charged to the submission's time budget
    assert [o.limit for o in outcomes] == [""] * 3 + ["answer budget"] * 2  # the fourth crosses the line
    assert [o.not_run for o in outcomes] == [False] * 3 + [True] * 2  # a mark, not the words below
    assert outcomes[-1].reason == ("not run: your answers were larger than 1 MB in all, the most the grader reads "
                                   "from a submission")


def test_one_batch_brings_the_grader_no_more_than_the_submissions_answer_budget():
    code = FORGED_ANSWERS.format(payload="'x' * 300_000") + "\nx = 1"
    with box(answer_kb=1024, answers_mb=1) as sandbox:
        sandbox.begin()
        outcomes = sandbox.call_many([Cell("student", code)], [(sandbox_probes.value, {"name": "x"})] * 20)
        assert sandbox.answered < (1 << 20) + 64 * 1024  # the session stopped at the budget: not 20 x 300 KB
    assert [o.limit for o in outcomes] == [""] * 3 + ["answer budget"] * 17


BURN = "import time\ndef burn():\n    end = time.process_time() + 2.2\n    while time.process_time() < end:\n        pass\n" \
       "    return 1"


def test_a_lost_workers_session_is_continued_with_what_is_left_of_the_budget():
    with box() as sandbox:
        sandbox.begin(seconds=4)
        assert sandbox.call([Cell("student", BURN)], sandbox_probes.run, name="burn").ok
        sandbox._kill()  # as when its reply could not be read, or came too late
        assert sandbox.used >= 2.2
        second = sandbox.call([Cell("student", BURN)], sandbox_probes.run, name="burn")
    assert second.limit == "time budget" and "the submission used its 4 s of CPU time" in second.reason


def test_a_call_outside_a_submission_has_the_sandboxs_budget_not_an_endless_one():
    with box(seconds=1.5) as sandbox:
        outcome = sandbox.call([Cell("student", BURN)], sandbox_probes.run, name="burn")
    assert outcome.limit == "time budget" and "used its 1.5 s of CPU time" in outcome.reason


CELL_FLOOD = """\
import json, os
line = (json.dumps({"event": "cell", "name": "x"}) + "\\n").encode() * 1000
while True:  # to every descriptor it has: one of them is the grader's results pipe
    for fd in range(3, 64):
        try:
            os.write(fd, line)
        except OSError:
            pass"""


def test_a_loader_that_keeps_saying_it_loads_a_cell_is_stopped_at_once():
    with box() as sandbox:
        started = time.monotonic()
        outcome = sandbox.call([Cell("student", CELL_FLOOD)], sandbox_probes.value, name="x")
    assert "wrote to the grader's pipe something that is not an answer" in outcome.reason
    assert time.monotonic() - started < 10  # each such message used to start the cell's time limit again


def test_load_errors_count_in_the_answer_budget_alike_in_the_session_and_the_grader():
    # Twenty cells raise astral characters (12 bytes each in JSON), so every reply carries tens of KB of load
    # errors besides its answer of 240 KB. Were they the grader's count alone, the fourth answer, within the
    # session's budget, would be past what the grader reads from that reply: it would kill its worker.
    code = FORGED_ANSWERS.format(payload="'x' * 240_000") + "\nx = 1"
    cells = [Cell("student", code)] + [Cell(f"raises{n}", "raise Exception('\\U0001F600' * 400)") for n in range(20)]
    with box(answer_kb=1024, answers_mb=1) as sandbox:
        sandbox.begin()
        worker = sandbox.worker.pid
        outcomes = [sandbox.call(cells, sandbox_probes.value, name="x") for _ in range(5)]
        assert sandbox.worker is not None and sandbox.worker.pid == worker  # never killed: every reply was read
        assert sandbox.answered <= (1 << 20) + 64 * 1024
    assert [o.limit for o in outcomes] == [""] * 3 + ["answer budget"] * 2  # the fourth crosses the line
    assert outcomes[-1].reason.startswith("not run: your answers were larger than 1 MB in all")
    errors = outcomes[0].load_errors
    assert len(errors) == 20 and all(len(json.dumps(error)) <= ERROR_BYTES + 2 for error in errors)


# ------------------------------------------------------------------ what the hidden checks do with an answer

COLUMN, ROW = 3000, 6000  # an answer's arrays reshaped: 9,000 numbers, which would broadcast to 18 million
CHECK_BYTES = 40 << 20  # what one check may hold in the grader: far above an honest answer's, below the broadcast


def _reshaped(value: object, made: list[int]) -> object:
    """`value` with each array of floats (a list whose numbers are all floats) a column of COLUMN rows or a row of
    ROW numbers in turn, as a notebook that rewrites its answers may send them; whole numbers (patterns,
    counts, shapes) left as they are, so that the checks get past them to the arrays."""
    if isinstance(value, dict):
        return {key: _reshaped(item, made) for key, item in value.items()}
    if isinstance(value, list) and value and all(isinstance(x, float) for x in _leaves(value)):
        made.append(len(made))
        return [[0.5]] * COLUMN if len(made) % 2 else [0.25] * ROW
    if isinstance(value, list):
        return [_reshaped(item, made) for item in value]
    return value


def _leaves(value: object) -> list:
    return [leaf for item in value for leaf in _leaves(item)] if isinstance(value, list) else [value]


class _Answers:
    """A runner that answers from `answers` (the reference's), each reshaped by `change`."""

    def __init__(self, answers: dict, change=lambda value: value) -> None:
        self.answers, self.change = answers, change

    def run(self, probe, **kwargs):
        return self.change(self.answers[(probe.__name__, repr(sorted(kwargs.items())))].value)


def test_no_hidden_check_holds_more_of_the_graders_memory_than_its_answers_whatever_their_shapes():
    """Student code can reshape its answers (column against row): a check that combined two of them with
    NumPy's broadcasting would make the product of their sizes in the grader's process, which no budget of
    the submission bounds (a column and a row within one answer's 65,536 values: 4 GB)."""
    import tracemalloc

    from autograder.checks import suites
    from autograder.settings import GraderSettings, load_config

    answers = suites.reference_answers(ASSIGNMENT, GraderSettings(config=load_config(ROOT)))
    student, reference = _Answers(answers, lambda value: _reshaped(value, [])), _Answers(answers)
    held = {}
    for suite in suites.load_suites(ASSIGNMENT):
        for check in suite.checks:
            tracemalloc.start()
            try:
                check.test(student, reference, **check.params)
            except Exception:  # failing is what a reshaped answer should do; holding gigabytes is not
                pass
            held[check.name] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    assert len(held) > 100
    assert not {name: size for name, size in held.items() if size > CHECK_BYTES}


# Sixty processes that only sleep, and a check that waits (within its wall-clock backstop) before it answers: the
# submission's processes use no CPU time meanwhile, nor does the grader read anything.
IDLE_CROWD = """\
import os, time
for _ in range(60):
    if os.fork() == 0:
        time.sleep(600)
        os._exit(0)
def wait():
    time.sleep(8)
    return 1
def at_once():
    return 1"""


@pytest.mark.slow
def test_the_graders_waiting_for_an_answer_is_not_charged_to_the_submissions_budget():
    """What the caller charges a submission (Sandbox.charged, sent to its session and counted in budget_seconds) is
    its CPU time reading the session's replies. While it waits for one, its _Waited walks /proc for every thread of
    the worker's tree about once a second (Stopwatch.seconds, tree_seconds), in the same thread_time window: the
    submission is charged a cost that grows with the wall-clock time of the request (so with the machine's load,
    which stretches the wall-clock time of the same CPU time) and with the number of its processes."""
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=5), budget=Budget()) as sandbox:
        sandbox.begin()
        cells = [Cell("student", IDLE_CROWD)]
        assert sandbox.call(cells, sandbox_probes.run, name="at_once").ok  # loaded: the crowd is running
        before = sandbox.charged
        assert sandbox.call(cells, sandbox_probes.run, name="at_once").ok
        quick = sandbox.charged - before
        before = sandbox.charged
        assert sandbox.call(cells, sandbox_probes.run, name="wait").ok
        waited = sandbox.charged - before
    # the same one-line answer read each time: observed about 0.002 s against 0.06 s (7 ms a second of waiting)
    assert waited < quick + 0.015, (quick, waited)


def _spent_on_a_sleeping_check(crowd: int) -> float:
    """The CPU seconds a submission is charged for one check that sleeps 5.5 s (within the 10 s backstop of a 5 s
    limit), after its notebook forked `crowd` processes that sleep too: none of its processes uses CPU meanwhile."""
    from autograder.settings import GraderSettings

    code = IDLE_CROWD.replace("range(60)", f"range({crowd})").replace("time.sleep(8)", "time.sleep(5.5)")
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=5), budget=Budget(),
                 isolation={**GraderSettings().isolation(), "level": "namespaces+cgroups"}) as sandbox:
        sandbox.begin()
        assert sandbox.call([Cell("student", code)], sandbox_probes.run, name="at_once").ok
        before = sandbox.spent
        assert sandbox.call([Cell("student", code)], sandbox_probes.run, name="wait").ok
        return sandbox.spent - before


@pytest.mark.slow
@needs_level("namespaces+cgroups")
def test_the_sessions_own_bookkeeping_during_a_check_is_not_charged_to_the_submission():
    """With cgroups the submission's clock is its cgroup's counter, and the session is in that cgroup
    (Isolation.enter), so the session's own work is charged as the submission's CPU time: while a check runs it
    walks /proc for every thread of the loader's tree each cputime.TICK of wall-clock time (_Loader._next's
    Stopwatch). Observed on 2 CPUs: 0.54-0.59 s charged for a check that only sleeps 5.5 s beside 60 sleeping
    processes, 0.11 s beside none: about 0.1 s a second of wall-clock time, so the same notebook's charge follows
    how long its checks take on the machine (3.5-3.6 s against 3.0 s for a 2.6 s check, alone and beside four
    busy processes per core), not the CPU time its processes used."""
    crowded, alone = _spent_on_a_sleeping_check(60), _spent_on_a_sleeping_check(0)
    assert crowded < alone + 0.15, (crowded, alone)


# red-a15 X24-a15-4: "total", the number of the model's Parameters in probes._held's answer, is a COUNT (any whole
# number below 2**53), and the lesson checks hand it to causes.parameters_gave, which builds list(range(total)) in
# the grader's process: an answer of a few bytes that the notebook rewrote (its own cell, as catalogue_hostile's
# FORGED_ANSWERS do) makes the trusted process hold about 40 bytes per unit of it (2,000,000: about 80 MB; a few hundred
# million: the machine's memory), and 2**52 raises MemoryError from the check's own code, a GraderBug (no score).
# Measured on main e044460: a peak of 80 MB for 2,000,000; MemoryError for 2**52. Fixed twice: the form of "total"
# is bounded by the Parameters the probe made (probes._holding), and causes compare a list's length to a total before
# they build a list that long (a check reached by such an answer all the same holds no more than the answer).
def _total(total: int):
    def change(value: object) -> object:
        return {**value, "total": total} if isinstance(value, dict) and "given" in value and "total" in value else value
    return change


def test_a_forged_count_of_parameters_holds_no_more_of_the_graders_memory_than_its_answer():
    import tracemalloc

    from autograder.checks import answer_form, suites
    from autograder.settings import GraderSettings, load_config

    answers = suites.reference_answers(ASSIGNMENT, GraderSettings(config=load_config(ROOT)))
    [suite] = [suite for suite in suites.load_suites(ASSIGNMENT) if suite.grade_id == "test_lesson_numbers"]
    [check] = [check for check in suite.checks if check.name.startswith("test_worked_example_first_step")]
    student, reference = _Answers(answers, _total(2_000_000)), _Answers(answers)
    probes = __import__("probes")  # the suites' (on the path once load_suites ran)
    forged = student.run(probes.lesson_worked_example, zero_between=True)
    assert forged["total"] == 2_000_000 and answer_form.answer_fault(answer_form.form_of(
        probes.lesson_worked_example, {"zero_between": True}), forged) != ""  # refused before a check reads it
    tracemalloc.start()
    try:
        check.test(student, reference, **check.params)
    except Exception:  # failing is what a forged answer should do (a look-up no right answer leads to, here)
        pass
    held = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert held < CHECK_BYTES, f"{held:,} bytes"


def test_a_forged_count_of_parameters_is_a_failed_check_not_a_grader_failure():
    from autograder.checks import suites
    from autograder.settings import GraderSettings, load_config

    answers = suites.reference_answers(ASSIGNMENT, GraderSettings(config=load_config(ROOT)))
    [suite] = [suite for suite in suites.load_suites(ASSIGNMENT) if suite.grade_id == "test_lesson_numbers"]
    checks = [check for check in suite.checks if check.name.startswith("test_worked_example_first_step")]
    student, reference = _Answers(answers, _total(1 << 52)), _Answers(answers)
    for runner in (student, reference):
        runner.missing, runner.one_cell = "", False
        runner.fetch = runner.run_alone = lambda: False
    asked = student.run  # a failed lesson check asks where the classes come from (noting_copies): the cells' own
    student.run = lambda probe, **kwargs: {} if probe.__name__ == "lesson_defined_in" else asked(probe, **kwargs)
    [result] = suites.run_checks(checks, student, reference)  # raises GraderBug (MemoryError) on main
    assert not result.passed
