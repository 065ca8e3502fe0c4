"""The sandbox's messages (autograder/sandbox/protocol.py): arrays cross as bytes and come back as the
lists tolist() gives, exactly; a forged array is refused, never turned into something else; every kind of
record reads back as written, and a malformed one is rejected by the one reader with why."""
import json
import math

import numpy as np
import pytest

from autograder.sandbox.protocol import (
    ARRAY,
    BOUND_NAME_CHARS,
    BOUND_NAMES,
    CONFIG,
    EVERY_NAME,
    FROM_LOADER,
    LOAD_BOUND,
    TO_GRADER,
    TO_LOADER,
    TO_SESSION,
    TO_WORKER,
    UNREADABLE,
    Answer,
    Answers,
    Batch,
    Begin,
    Call,
    Done,
    End,
    Ended,
    Failure,
    Fatal,
    Limits,
    Loaded,
    LoadingCell,
    Malformed,
    Oversized,
    ProcessFailed,
    Ready,
    Result,
    Started,
    Unreadable,
    WorkerConfig,
    encode,
    plain,
    read,
    read_pool,
)


def crossed(value):
    """`value` as the grader gets it: encoded by a loader, read by the session, passed on, read by the grader."""
    result = read(encode(Result(True, value)), FROM_LOADER, answer_bytes=1 << 20)
    assert isinstance(result, Result)
    answers = read(encode(Answers([result.answer()], [], 0.0)), TO_GRADER)
    assert isinstance(answers, Answers)
    return answers.answers[0].value


@pytest.mark.parametrize("array", [
    np.array([[1.5, -0.0], [np.inf, 1e-310]]), np.arange(6, dtype=np.int64).reshape(2, 3, 1),
    np.array([True, False]), np.array(2.25), np.zeros((0, 3)), np.arange(4, dtype=np.float32) / 3,
    np.arange(3, dtype=np.uint8),
], ids=["f8", "i8", "bool", "0-d", "empty", "f4", "u1"])
def test_an_array_comes_back_as_its_tolist(array):
    got = crossed({"a": [array, {"b": array}]})
    assert got == {"a": [array.tolist(), {"b": array.tolist()}]}
    assert json.dumps(got) == json.dumps({"a": [array.tolist(), {"b": array.tolist()}]})  # the same types too


def test_nan_and_negative_zero_keep_their_bits():
    got = crossed(np.array([np.nan, -0.0]))
    assert math.isnan(got[0]) and math.copysign(1.0, got[1]) == -1.0


def test_an_array_of_another_dtype_crosses_as_a_list_or_is_refused():
    assert crossed(np.array([1, 2], dtype=">i4")) == [1, 2]  # not native byte order: tolist()
    with pytest.raises(TypeError):
        encode(Result(True, np.array([1 + 2j])))  # complex numbers are not plain data


@pytest.mark.parametrize("forged", [
    ["<f8", [2], "AAAAAAAA8D8="],  # one float where the shape says two
    ["<c16", [1], "AAAAAAAA8D8AAAAAAAAAAA=="],  # a dtype not allowed
    ["<f8", [True], "AAAAAAAA8D8="],  # a bool as a length
    ["<f8", [-1], ""],
    ["<f8", [1], "not base64!"],
    ["<f8", "1", "AAAAAAAA8D8="],
    ["<f8", [1]],
    ["O", [1], "AA=="],
], ids=["short", "dtype", "bool-length", "negative", "base64", "shape-text", "two-fields", "object"])
def test_a_forged_array_is_refused(forged):
    with pytest.raises(Unreadable):
        plain({"x": [{ARRAY: forged}]})


def test_a_dict_without_the_key_is_plain_data():
    assert plain({"array": [1, {"k": "v"}], "n": None}) == {"array": [1, {"k": "v"}], "n": None}


# ------------------------------------------------------------------ every kind, through the one reader

CONFIG_WIRE = {"modules": {"probes": "/k/probes.py"}, "path": ["/k"], "preload": ["numpy"], "isolation": None,
               "limits": {"seconds": 3.0, "memory_mb": 1024, "output_kb": 1024, "answer_kb": 1024},
               "trusted_cells": [["imports", "import numpy"]], "workdir": "/tmp/sandbox-x"}
RECORDS = [
    (CONFIG, WorkerConfig({"probes": "/k/probes.py"}, ["/k"], ["numpy"], Limits(), None, [("imports", "import numpy")],
                          "/tmp/sandbox-x")),
    (TO_WORKER, Begin(45.0, 1.5, 8 << 20, 1000)),
    (TO_SESSION, Batch([Call("probes:value", {"name": "x"})], fresh=True, together=True, charged=0.25,
                       cells=[("student", "x = 1")])),
    (TO_SESSION, End()),
    (TO_LOADER, Batch([Call("probes:value", {"name": "x"})], fresh=False)),
    (TO_GRADER, Ready("namespaces+cgroups")),
    (TO_GRADER, Failure("the submission's sandbox could not start: no")),
    (TO_GRADER, Ended(["memory budget"], 2)),
    (TO_GRADER, Answers([Answer(True, [1.5, {"k": "v"}]), Answer(False, None, "raised ValueError", "time")],
                        ["cell 3: raised NameError"], 0.5, 1)),
    (FROM_LOADER, LoadingCell("sgd")),
    (FROM_LOADER, Loaded(["cell 3: raised NameError"])),
    (FROM_LOADER, Fatal("printed more than the output limit allows", "output")),
    (FROM_LOADER, Result(True, {"a": [1, 2]})),
    (FROM_LOADER, Result(False, None, "did not finish", "time", wall=True, status=9)),
    (FROM_LOADER, Oversized()),
]


@pytest.mark.parametrize("channel,record", RECORDS, ids=[f"{type(r).__name__}-{n}" for n, (_, r) in enumerate(RECORDS)])
def test_every_kind_reads_back_as_the_record_it_was_written_from(channel, record):
    assert read(encode(record), channel) == record


def wire(**fields):
    return json.dumps(fields)


# A malformed record of each kind: read as Malformed, with why and the kind it claimed to be, never as a message.
MALFORMED = [
    (CONFIG, json.dumps({**CONFIG_WIRE, "limits": {**CONFIG_WIRE["limits"], "seconds": -1}}), WorkerConfig,
     "'seconds' is not a number of at least 0"),
    (CONFIG, json.dumps({**CONFIG_WIRE, "modules": ["/k/probes.py"]}), WorkerConfig,
     "'modules' is not an object of file paths"),
    (CONFIG, json.dumps({**CONFIG_WIRE, "workdir": None}), WorkerConfig,
     "'workdir' is not a folder's path without isolation, null with it"),
    (TO_WORKER, wire(begin="45", used=0, answers=1, answered=0), Begin, "'begin' is not a number of at least 0"),
    (TO_WORKER, wire(begin=45, used=0, answers=1), Begin, "has no 'answered'"),
    (TO_SESSION, wire(calls=[{"function": "probes", "kwargs": {}}], fresh=True, together=False, charged=0), Batch,
     "a call's 'function' is not 'module:name' or its 'kwargs' not an object"),
    (TO_SESSION, wire(calls=[], fresh=1, together=False, charged=0), Batch, "'fresh' is not true or false"),
    (TO_SESSION, wire(calls=[], fresh=True, together=False, charged=0, cells=[["x"]]), Batch,
     "'cells' is not a list of [name, source]"),
    (TO_SESSION, wire(end=False), End, "is not {'end': true}"),
    (TO_LOADER, wire(calls="all", fresh=True, together=False, charged=0), Batch, "'calls' is not a list"),
    (TO_GRADER, wire(ready=True), Ready, "'ready' is not text"),
    (TO_GRADER, wire(error=None), Failure, "'error' is not text"),
    (TO_GRADER, wire(budgets="memory budget"), Ended, "'budgets' is not a list of texts"),
    (TO_GRADER, wire(budgets=[], oom_kills=True), Ended, "'oom_kills' is not a whole number of at least 0"),
    (TO_GRADER, wire(answers=[{"ok": True, "value": 1, "reason": "", "limit": "wall", "not_run": False}], load_errors=[],
          spent=0),
     Answers, "'limit' is not one of"),
    (TO_GRADER, wire(answers=[{"ok": True, "value": 1}], load_errors=[], spent=0), Answers,
     "an answer is not {'ok', 'value', 'reason', 'limit', 'not_run'}"),
    (TO_GRADER, wire(answers=[], load_errors=[], spent=0, extra=1), Answers, "has a field it may not have ('extra')"),
    (FROM_LOADER, wire(event="cell"), LoadingCell, "has no 'name'"),
    (FROM_LOADER, wire(event="loaded", errors=7), Loaded, "'errors' is not a list of texts"),
    # "not run" is the session's word for a call it never made: a loader claiming it for its own failure is refused
    (FROM_LOADER, wire(event="result", ok=False, reason="x", not_run=True), Result,
     "has a field it may not have ('not_run')"),
    (FROM_LOADER, wire(event="fatal", reason="x", limit="fork"), Fatal, "'limit' is not one of '', 'output'"),
    (FROM_LOADER, wire(event="result", ok="yes"), Result, "'ok' is not true or false"),
    (FROM_LOADER, wire(event="result", ok=False), Result, "a failure has no 'reason'"),
    (FROM_LOADER, wire(event="result", ok=False, reason=7), Result, "'reason' is not text"),
    (FROM_LOADER, wire(event="result", ok=False, reason="x", limit="answer"), Result, "'limit' is not one of"),
    (FROM_LOADER, wire(event="result", ok=False, reason="x", wall=True), Result,
     "'wall' is true for a limit that is not 'time'"),
    (FROM_LOADER, wire(event="result", ok=False, reason="x", status=1 << 16), Result, "'status' is not a wait status"),
    (FROM_LOADER, wire(event="oversized", fault="none"), Oversized, "has a field it may not have ('fault')"),
]


@pytest.mark.parametrize("channel,line,kind,reason", MALFORMED,
                         ids=[f"{kind.__name__}-{n}" for n, (_, _, kind, _) in enumerate(MALFORMED)])
def test_a_malformed_record_of_each_kind_is_rejected_in_the_reader_with_its_reason(channel, line, kind, reason):
    got = read(line, channel)
    assert isinstance(got, Malformed) and got.kind is kind, got
    assert got.reason.startswith(f"{kind.__name__}: ") and reason in got.reason, got.reason


@pytest.mark.parametrize("channel,line,reason", [
    (FROM_LOADER, b'{"event": "result", "ok": tr', "not a line of JSON"),
    (FROM_LOADER, b"[" * 100_000 + b"]" * 100_000, "nested past the JSON parser's depth"),
    (TO_GRADER, b"[]", "not a JSON object"),
    (FROM_LOADER, wire(event="begin"), "of no kind this pipe carries"),
    (FROM_LOADER, wire(event=["result"]), "of no kind this pipe carries"),
    (TO_GRADER, wire(end=True), "of no kind this pipe carries"),
    (TO_GRADER, wire(ready="none", error="both"), "of no kind this pipe carries"),
], ids=["cut-short", "too-deep", "a-list", "unknown-event", "event-not-text", "another-pipes-kind", "two-kinds"])
def test_a_line_that_is_no_message_of_its_pipe_is_rejected_with_why(channel, line, reason):
    assert read(line, channel) == Malformed(reason)


def test_an_answer_past_the_bounds_reads_as_oversized_with_why():
    assert read(encode(Result(True, [0] * 5000)), FROM_LOADER, answer_bytes=64 * 1024) == Oversized(
        "of more than 4,096 values")
    assert read(encode(Result(True, [0] * 5000)), FROM_LOADER) == Result(True, [0] * 5000)  # a loader passing it on
    assert read(wire(event="oversized"), FROM_LOADER, answer_bytes=64 * 1024) == Oversized("larger than 64 KB")


def test_a_loaders_reason_is_one_line_of_at_most_500_characters_and_its_errors_are_cut():
    reason = read(wire(event="result", ok=False, reason="a\n\tb " + "c" * 900), FROM_LOADER)
    assert reason == Result(False, None, "a b " + "c" * 496)
    loaded = read(wire(event="loaded", errors=["e" * 400] * 30), FROM_LOADER)
    assert loaded == Loaded(["e" * 300] * 20)
    # cut by the bytes of JSON the grader counts too: 6 a character outside ASCII, 12 one outside the BMP
    loaded = read(wire(event="loaded", errors=["\u00e9" * 400, "\U0001F600" * 400, "a" + "\U0001F600" * 400]),
                  FROM_LOADER)
    assert loaded == Loaded(["\u00e9" * 300, "\U0001F600" * 150, "a" + "\U0001F600" * 149])


def test_the_names_a_stopped_cell_bound_are_cut_to_every_name_never_to_fewer():
    """fix-bound (X28-a19-1): a cell that bound more names than a line carries, or a longer one, is read as binding
    every name (a stub in its place replaces more: a lower grade at worst); the cells past LOAD_BOUND are not sent
    (suites reads a stopped cell it has no names of as binding every name)."""
    many = {f"c{n}": ["HELPER"] for n in range(LOAD_BOUND + 5)}
    bound = {"a": ["x"] * (BOUND_NAMES + 1), "b": ["x" * (BOUND_NAME_CHARS + 1)], "d": ["M\u00f3dulo"],
             "e": ["\x00" * 40], "c": ["Module", "x"], **many}
    loaded = read(encode(Loaded([], {}, bound)), FROM_LOADER)
    assert isinstance(loaded, Loaded)
    assert list(loaded.bound.items())[:5] == [("a", [EVERY_NAME]), ("b", [EVERY_NAME]), ("d", [EVERY_NAME]),
                                              ("e", [EVERY_NAME]), ("c", ["Module", "x"])]
    assert len(loaded.bound) == LOAD_BOUND
    assert read(wire(event="loaded", errors=[], bound={"a": "Module"}), FROM_LOADER).reason == (
        "Loaded: 'bound' is not a map of cells to names")


def test_a_forged_array_in_an_answer_is_that_answers_failure_not_the_replys():
    line = wire(answers=[{"ok": True, "value": {ARRAY: ["<f8", [2], "AAAAAAAA8D8="]}, "reason": "", "limit": "",
                          "not_run": False},
                         {"ok": True, "value": 1, "reason": "", "limit": "", "not_run": False}], load_errors=[], spent=0,
                oom_kills=0)
    assert read(line, TO_GRADER) == Answers([Answer(False, None, UNREADABLE), Answer(True, 1)], [], 0)


@pytest.mark.parametrize("sent,reason", [
    (Started("3"), "Started: 'item' is not a number"),
    (Done(None, {}), "Done: 'item' is not a number"),
    (ProcessFailed(RuntimeError("x")), "ProcessFailed: 'reason' is not text"),
    (("done", 3, None), "tuple is not one of the pool's records"),
], ids=["started", "done", "failed", "a-tuple"])
def test_the_pools_parent_takes_its_records_and_rejects_anything_else_with_why(sent, reason):
    assert [read_pool(record) for record in (Started(3), Done(3, None), ProcessFailed("E: x"))] == [
        Started(3), Done(3, None), ProcessFailed("E: x")]
    assert read_pool(sent).reason == reason


def test_a_loader_writes_its_load_errors_cut_as_they_are_read():
    """red-c15 X24-c15-3: a loader wrote each cell's error whole, and only the reader cut it, so a long one made the
    Loaded line longer than the reader's limit (read as a pipe write of the notebook's). The writer cuts the same way."""
    errors = ["e" * 10**6] * 30 + ["\U0001F600" * 400]
    assert encode(Loaded(errors)) == encode(Loaded(["e" * 300] * 20))
    assert len(encode(Loaded(["\U0001F600" * 400] * 30))) < 20 * 1810
