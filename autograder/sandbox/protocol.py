"""Every message between the grader's processes, as typed records: one module, one encoder, one reader.

The sandbox's messages are lines of JSON over pipes, every read and write with a deadline; each record here
is one kind, with its own `wire()` (what `encode` writes) and `from_json` (what `read` calls). The kinds,
by pipe (a `Channel` names the kinds one pipe carries; anything else on it is Malformed):

    grader → worker (argv)  WorkerConfig   {"modules", "path", "preload", "limits", "isolation", "trusted_cells"}
    grader → worker         Begin          {"begin": seconds, "used", "answers", "answered"}  a submission's session
    grader → session        Batch          {"calls": [call], "fresh", "together", "charged", "cells"?}
                            End            {"end": true}
    worker, session → grader  Ready        {"ready": level}                started (the worker), serving (a session)
                            Failure        {"error": text}                 could not start
                            Ended          {"budgets": [name], "oom_kills"}  a session ended: the budgets it hit
                            Answers        {"answers": [answer], "load_errors": [text], "stops"?: {cell: line},
                                            "spent": seconds, "oom_kills"}
    session → loader        Batch          (without "cells")
    loader → session        LoadingCell    {"event": "cell", "name": text}  loading this cell now
                            Loaded         {"event": "loaded", "errors": [text], "stops"?: {cell: line}}
                            Fatal          {"event": "fatal", "reason": text, "limit"?}  loading ended its process
                            Result         {"event": "result", "ok": bool, "value"?, "reason"?, "limit"?, "wall"?,
                                            "status"?}  one call's answer (a check child's too, passed on)
                            Oversized      {"event": "oversized"}          a check child's line past the limit

    call: Call {"function": "module:name", "kwargs": {...}}; answer: Answer {"ok", "value", "reason", "limit"}.

`read` is the one reader: a line that is not a JSON object, of no kind its pipe carries, or with a field of the
wrong type reads as Malformed(why), never as a message; every reader of a pipe (Lines) goes through it.
A loader runs student code, so what it writes is read as untrusted, within bounds that all hold here: a line
longer than the reader's limit (an answer's `answer_kb` and FIELDS_BYTES) reads as Oversized as soon as it is
(the rest of it is dropped as it comes, never held), and so does an answer nested deeper than DEPTH or holding
more values than VALUE_BYTES allow (answer_fault); the session counts every reply it sends, whole (its answers
and its load errors, each of these cut to ERROR_BYTES of JSON), against the submission's answer budget
(worker.py), and the grader counts the same bytes, reading each reply within limits no looser
(sandbox/__init__.py). A process at the other end may be wedged by student code (stopped with SIGSTOP, its
pipe shrunk with F_SETPIPE_SZ), so no read or write waits past its deadline.

Values are plain data: numbers, strings, lists, dicts. A numpy array of booleans, integers or floats crosses
as its bytes (`{"\\u0000array": [dtype, shape, base64]}`), not as a list of decimal numbers: writing and
parsing floats as text was most of the sandbox's time for the probes' arrays. `plain` turns such an array
back into the lists `tolist()` gives, in the grader's reading of Answers, after checking its dtype, shape and
length, so a forged one is refused like any unreadable answer.

The pool's records (Started, Done, ProcessFailed) and a student's NotGraded cross between the grader's own
processes (classroom/pool.py; no student code runs in them) through multiprocessing's pipe, which pickles
them (a report is not JSON); the parent reads each through `read_pool`, which rejects anything else.

Standard library only: the worker imports this file as a top-level module, the caller as a package one.
"""
from __future__ import annotations

import base64
import json
import math
import os
import selectors
import sys
import time
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, NamedTuple, Union

# In a fresh batch the loader times its check children; the worker waits this much longer (of CPU time, and
# WALL_FACTOR times as long of wall-clock time: cputime.py) for an answer before it stops a loader that student
# code has wedged (and the caller counts it in its own deadline).
BACKSTOP_SECONDS = 1.0

FIELDS_BYTES = 64 * 1024  # what a line may hold besides its answers: an answer's fields, a reply's word and load errors
# The load errors a reply may carry: so many cells that raised, each cut to so many characters and to so many bytes
# of JSON as `encode` writes it (a character outside ASCII takes 6 bytes there, one outside the BMP 12): all of
# them, quoted, about 36 KB, within a reply's FIELDS_BYTES.
LOAD_ERRORS, ERROR_CHARS, ERROR_BYTES = 20, 300, 1800
# Where the cells that raised stopped (child._load): so many cells, each name of at most so many characters, about
# 11 KB of JSON with the load errors' 36 KB, within a reply's FIELDS_BYTES.
LOAD_STOPS, STOP_NAME_CHARS = 100, 100
# The names each of the first so many cells that stopped bound as it ran (child._load, cell_runner.rebound), each
# cell at most so many names, each an ASCII identifier of at most so many characters: about 11 KB of JSON more, the
# cells' names counted, within a reply's FIELDS_BYTES.
# A cell that bound more, or any other name, is sent as EVERY_NAME; a stopped cell past LOAD_BOUND is read so too.
LOAD_BOUND, BOUND_NAMES, BOUND_NAME_CHARS = 20, 10, 40
EVERY_NAME = "*"  # no name: a cell read as binding every name a stub in its place would
UNREADABLE = "sent an answer the grader cannot read"  # the reason of an answer that is malformed, or a forged array

ARRAY = "\x00array"  # the key of an array sent as bytes: no probe's answer has a key with a NUL in it
_DTYPES = {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8"}
_ITEM_BYTES = {"b1": 1, "i1": 1, "u1": 1, "i2": 2, "u2": 2, "f2": 2, "i4": 4, "u4": 4, "f4": 4, "i8": 8, "u8": 8,
               "f8": 8}


class Unreadable(ValueError):
    """A value claims to be an array but is not one the grader can read."""


def _plain(obj: Any) -> Any:
    """json's fallback for what is not plain data: a numpy array as its bytes (or, of another dtype, as
    `tolist()`), a numpy scalar as `tolist()`; anything else is refused."""
    numpy = sys.modules.get("numpy")
    if numpy is not None and type(obj) is numpy.ndarray and obj.dtype.str in _DTYPES:
        return {ARRAY: [obj.dtype.str, list(obj.shape), base64.b64encode(obj.tobytes()).decode()]}
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not plain data")


def encode(message: Message) -> bytes:
    """The one encoder: a record as its line (NaN and infinities as Python's json writes them). Raises TypeError
    or ValueError for a value that is not plain data."""
    return (json.dumps(message.wire(), default=_plain, allow_nan=True) + "\n").encode()


def plain(value: Any) -> Any:
    """`value` as read, with every array sent as bytes turned into the lists tolist() gives (numpy is the
    grader's, never the loader's). Raises Unreadable for a malformed one."""
    if isinstance(value, list):
        return [plain(item) for item in value]
    if not isinstance(value, dict):
        return value
    if ARRAY not in value:
        return {key: plain(item) for key, item in value.items()}
    import numpy

    try:
        (dtype, shape, data), = value.values()
        if dtype not in _DTYPES or not isinstance(shape, list) or not all(
                type(length) is int and 0 <= length < 1 << 40 for length in shape):  # no product of huge numbers
            raise ValueError
        raw = base64.b64decode(data, validate=True)
        if math.prod(shape) * _ITEM_BYTES[dtype[1:]] != len(raw):
            raise ValueError
        return numpy.frombuffer(raw, dtype=dtype).reshape(shape).tolist()
    except (TypeError, ValueError, OverflowError) as exc:
        raise Unreadable("an array that is not one") from exc


# The deepest an answer may be nested (the probes' are at most 6 deep), checked where the session reads it: far
# below what json's parser takes in any process (about 1000 levels less what is on that process's stack), so
# that nothing the session passes on fails to parse in the grader.
DEPTH = 32
VALUE_BYTES = 16  # an answer may hold one value (a number, a string, a list, an array's element) per 16 bytes
# The largest whole number an answer may hold (a double's exact range): the probes' counts and indices are far
# below it, and larger ones could be chosen to share a hash, which makes the grader's sets of them quadratic.
WHOLE = 1 << 53


def _array_values(array: list) -> int:
    """What an array sent as bytes becomes in the grader: its elements (counted by its bytes) or, where more, the
    lists and elements tolist() makes of its shape (an empty array of shape (10**9, 0) has no bytes and makes 10**9
    lists). Counted up to 2**40 at most."""
    dtype, shape, data = array
    values = len(data) * 3 // 4 // _ITEM_BYTES.get(dtype[1:], 1)
    if isinstance(shape, list) and all(type(length) is int and length >= 0 for length in shape):
        made = 1
        for length in shape:
            made = min(made * length, 1 << 40)
            values = min(values + made, 1 << 40)
    return values


def answer_fault(value: Any, limit: int) -> str:
    """Why `value`, an answer as read, is more than the grader takes from an answer of at most `limit` bytes:
    nested deeper than DEPTH, holding more than limit // VALUE_BYTES values (an array sent as bytes counts what
    the grader makes of it: _array_values), or a whole number beyond WHOLE; "" when it is not. It bounds what the
    grader's process holds and does once it has read the answer (a value of a few bytes of JSON can take 60 bytes
    of Python). Walked without recursion."""
    most, count, todo = limit // VALUE_BYTES, 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if depth > DEPTH:
            return f"nested more than {DEPTH} levels deep"
        count += 1
        if isinstance(item, dict):
            array = item.get(ARRAY)
            if isinstance(array, list) and len(array) == 3 and isinstance(array[0], str) and isinstance(array[2], str):
                count += _array_values(array)
            todo += [(entry, depth + 1) for entry in item.values()]
        elif isinstance(item, list):
            todo += [(entry, depth + 1) for entry in item]
        elif type(item) is int and not -WHOLE <= item <= WHOLE:
            return "holding a whole number beyond 2**53"
        if count > most:
            return f"of more than {most:,} values"
    return ""


# ------------------------------------------------------------------------------------------------ the records



class _Bad(Exception):
    """Why a message is not one of the kind it claims to be: `read` turns it into Malformed."""


def _only(obj: dict, fields: frozenset[str]) -> None:
    if not obj.keys() <= fields:
        raise _Bad(f"has a field it may not have ({sorted(obj.keys() - fields)[0]!r})")


def _text(obj: dict, key: str, default: str | None = None) -> str:
    value = obj.get(key, default)
    if type(value) is not str:
        raise _Bad(f"{key!r} is not text" if key in obj else f"has no {key!r}")
    return value


def _flag(obj: dict, key: str, default: bool | None = None) -> bool:
    value = obj.get(key, default)
    if value is not True and value is not False:
        raise _Bad(f"{key!r} is not true or false" if key in obj else f"has no {key!r}")
    return value


def _number(obj: dict, key: str) -> float:
    """A count of seconds: a finite number, not negative (never a bool)."""
    value: Any = obj.get(key)
    if type(value) not in (int, float) or not 0 <= value < math.inf:
        raise _Bad(f"{key!r} is not a number of at least 0" if key in obj else f"has no {key!r}")
    return value


def _whole(obj: dict, key: str) -> int:
    """A count (bytes, megabytes, kills): an integer, not negative (never a bool)."""
    value: Any = obj.get(key)
    if type(value) is not int or value < 0:
        raise _Bad(f"{key!r} is not a whole number of at least 0" if key in obj else f"has no {key!r}")
    return value


def _texts(obj: dict, key: str) -> list[str]:
    value = obj.get(key)
    if type(value) is not list or not all(type(item) is str for item in value):
        raise _Bad(f"{key!r} is not a list of texts" if key in obj else f"has no {key!r}")
    return value


def _stops(obj: dict, key: str) -> dict[str, int]:
    """{cell: line} (optional, none by default): each line a whole number of at least 1 (never a bool); the cells past
    LOAD_STOPS, or named in more than STOP_NAME_CHARS characters, are not read (as a writer's _cut_stops leaves them)."""
    value = obj.get(key, {})
    if type(value) is not dict or not all(type(line) is int and line >= 1 for line in value.values()):
        raise _Bad(f"{key!r} is not a map of cells to lines")
    return _cut_stops(value)


def _cut_stops(stops: dict[str, int]) -> dict[str, int]:
    return {name: line for name, line in list(stops.items())[:LOAD_STOPS] if len(name) <= STOP_NAME_CHARS}


def _bound(obj: dict, key: str) -> dict[str, list[str]]:
    """{cell: the names it bound} (optional, none by default): each a list of texts, cut as a writer's _cut_bound."""
    value = obj.get(key, {})
    if type(value) is not dict or not all(type(names) is list and all(type(name) is str for name in names)
                                          for names in value.values()):
        raise _Bad(f"{key!r} is not a map of cells to names")
    return _cut_bound(value)


def _cut_bound(bound: dict[str, list[str]]) -> dict[str, list[str]]:
    """At most LOAD_BOUND cells, each named in at most STOP_NAME_CHARS characters; a cell with more than BOUND_NAMES
    names, or one that is not an ASCII identifier of at most BOUND_NAME_CHARS (one byte of JSON a character, as every
    name a stub binds), is sent as EVERY_NAME (read as binding more, never fewer)."""
    return {cell: names if len(names) <= BOUND_NAMES and all(_plain_name(name) for name in names) else [EVERY_NAME]
            for cell, names in list(bound.items())[:LOAD_BOUND] if len(cell) <= STOP_NAME_CHARS}


def _plain_name(name: str) -> bool:
    return len(name) <= BOUND_NAME_CHARS and name.isascii() and name.isidentifier()


def _one_of(obj: dict, key: str, allowed: tuple[str, ...]) -> str:
    value = obj.get(key, "")
    if value not in allowed or type(value) is not str:
        raise _Bad(f"{key!r} is not one of {', '.join(map(repr, allowed))}")
    return value


def _cells(value: Any) -> list[tuple[str, str]]:
    """A program's cells as [[name, source]] on the wire."""
    if type(value) is not list or not all(type(cell) is list and len(cell) == 2 and type(cell[0]) is str
                                          and type(cell[1]) is str for cell in value):
        raise _Bad("'cells' is not a list of [name, source]")
    return [(name, source) for name, source in value]


class _Kind:
    """A message kind, a frozen dataclass with slots (typed, fixed, light to make on the hot path). One "event"
    (of the loader's messages) or one key (of the others) tells it apart on its pipe (Channel); `wire()` is
    what encode writes, `from_json` what read makes of it."""

    __slots__ = ()
    KEY: ClassVar[str] = ""
    EVENT: ClassVar[str] = ""


def _names(kind: type) -> frozenset[str]:
    return frozenset(field.name for field in fields(kind))


def _json_cut(text: str, chars: int, size: int) -> str:
    """`text` cut to at most `chars` characters that take at most `size` bytes in a line `encode` writes (quotes
    not counted): the bytes the grader counts against the submission's answer budget."""
    text = text[:chars]
    if len(json.dumps(text)) - 2 <= size:
        return text
    for end, char in enumerate(text):
        size -= len(json.dumps(char)) - 2
        if size < 0:
            return text[:end]
    return text


def _one_line(text: str) -> str:
    """A loader's reason as the grader may show it: one line of at most 500 characters."""
    return " ".join(text.split())[:500]


# The limits a loader may name itself (time: for a check child, in a fresh batch; fork: it could not start
# one); a loader's own time and the submission's budgets are the session's to judge.
LOADER_LIMITS = ("", "memory", "output", "time", "fork")
# The limits an answer the session passes on may name (the grader's Outcome.limit).
LIMITS = ("", "memory", "output", "time", "answer", "answer budget", "time budget", "process budget")
FATAL_LIMITS = ("", "output")  # the limits a loader's end while loading may name: printing past the output limit


@dataclass(frozen=True)
class Limits:
    """What one check may use. The grader reads these from nbgrader_config.py."""

    seconds: float = 3.0  # CPU time for one check, and for each cell of loading (wall clock: a backstop, cputime.py)
    memory_mb: int = 1024  # address space the student's code may add to the worker's
    output_kb: int = 1024  # what the student's code may print before it is stopped
    answer_kb: int = 1024  # the JSON of one check's answer (and a value per VALUE_BYTES of it, DEPTH deep)

    def wire(self) -> dict:
        return {"seconds": self.seconds, "memory_mb": self.memory_mb, "output_kb": self.output_kb,
                "answer_kb": self.answer_kb}

    @classmethod
    def from_json(cls, obj: Any) -> Limits:
        if type(obj) is not dict:
            raise _Bad("'limits' is not an object")
        _only(obj, _names(cls))
        return cls(_number(obj, "seconds"), *(_whole(obj, key) for key in ("memory_mb", "output_kb", "answer_kb")))


@dataclass(frozen=True, slots=True)
class WorkerConfig(_Kind):
    """How the grader starts its worker (`python -s -P -B worker.py <config>`): what it imports and runs, once.

    modules: the trusted modules calls may name, {name: file path}; path: folders put in front of sys.path;
    preload: modules imported once; limits: each check's; isolation: isolation.py's {"path", "budgets",
    "level"?}, or None; trusted_cells: the course's own cells, compiled once (child.COMPILED); workdir: where
    student code starts without isolation (the grader's folder: it removes it, even after killing the worker),
    None with isolation (which makes each session's own)."""

    modules: dict[str, str]
    path: list[str]
    preload: list[str]
    limits: Limits
    isolation: dict | None
    trusted_cells: list[tuple[str, str]]
    workdir: str | None

    def wire(self) -> dict:
        return {"modules": self.modules, "path": self.path, "preload": self.preload, "limits": self.limits.wire(),
                "isolation": self.isolation, "trusted_cells": [list(cell) for cell in self.trusted_cells],
                "workdir": self.workdir}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> WorkerConfig:
        _only(obj, _CONFIG_FIELDS)
        modules, isolation, workdir = obj.get("modules"), obj.get("isolation"), obj.get("workdir")
        if type(modules) is not dict or not all(type(path) is str for path in modules.values()):
            raise _Bad("'modules' is not an object of file paths")
        if isolation is not None and type(isolation) is not dict:
            raise _Bad("'isolation' is neither an object nor null")
        if (workdir is None) == (isolation is None) or (workdir is not None and type(workdir) is not str):
            raise _Bad("'workdir' is not a folder's path without isolation, null with it")
        return cls(modules, _texts(obj, "path"), _texts(obj, "preload"), Limits.from_json(obj.get("limits")),
                   isolation, _cells(obj.get("trusted_cells")), workdir)


_CONFIG_FIELDS = _names(WorkerConfig)


@dataclass(frozen=True, slots=True)
class Call:
    """One call of a trusted module's function on the loaded program: {"function": "module:name", "kwargs"}."""

    function: str
    kwargs: dict

    def wire(self) -> dict:
        return {"function": self.function, "kwargs": self.kwargs}

    @classmethod
    def from_json(cls, obj: Any) -> Call:
        if type(obj) is not dict or obj.keys() != {"function", "kwargs"}:
            raise _Bad("a call is not {'function', 'kwargs'}")
        function, kwargs = obj["function"], obj["kwargs"]
        if type(function) is not str or function.count(":") != 1 or type(kwargs) is not dict:
            raise _Bad("a call's 'function' is not 'module:name' or its 'kwargs' not an object")
        return cls(function, kwargs)


@dataclass(frozen=True, slots=True)
class Begin(_Kind):
    """Start a submission's session: its CPU seconds and the bytes of answers it may send, and what it used of
    both in sessions lost with their worker (`used`, `answered`): a replaced worker's session continues the
    budgets, never starts them again (Sandbox.call_many)."""

    seconds: float
    used: float
    answers: int
    answered: int
    KEY: ClassVar[str] = "begin"

    def wire(self) -> dict:
        return {"begin": self.seconds, "used": self.used, "answers": self.answers, "answered": self.answered}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Begin:
        _only(obj, _BEGIN_FIELDS)
        return cls(_number(obj, "begin"), _number(obj, "used"), _whole(obj, "answers"), _whole(obj, "answered"))


_BEGIN_FIELDS = frozenset({"begin", "used", "answers", "answered"})


@dataclass(frozen=True, slots=True)
class Batch(_Kind):
    """Calls to run on a program, in order (worker.py's _Session.answer, child.py's _run_batch). `cells`: a new
    program (None: the one sent last); `charged`: the CPU seconds the grader spent reading the session's answers
    so far. The session passes a batch on to its loader without either."""

    calls: list[Call]
    fresh: bool
    together: bool = False
    charged: float = 0.0
    cells: list[tuple[str, str]] | None = None
    KEY: ClassVar[str] = "calls"

    def wire(self) -> dict:
        wire = {"calls": [call.wire() for call in self.calls], "fresh": self.fresh, "together": self.together,
                "charged": self.charged}
        if self.cells is not None:
            wire["cells"] = [list(cell) for cell in self.cells]
        return wire

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Batch:
        _only(obj, _BATCH_FIELDS)
        calls = obj.get("calls")
        if type(calls) is not list:
            raise _Bad("'calls' is not a list")
        return cls([Call.from_json(call) for call in calls], _flag(obj, "fresh"), _flag(obj, "together"),
                   _number(obj, "charged"), _cells(obj["cells"]) if "cells" in obj else None)


_BATCH_FIELDS = _names(Batch)


@dataclass(frozen=True, slots=True)
class End(_Kind):
    """End the session: everything its code started ends with it."""

    KEY: ClassVar[str] = "end"

    def wire(self) -> dict:
        return {"end": True}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> End:
        if obj != {"end": True}:
            raise _Bad("is not {'end': true}")
        return cls()


@dataclass(frozen=True, slots=True)
class Ready(_Kind):
    """The worker started, at this isolation level (isolation.py names them; "none" without one); a session
    serves (its worker's level)."""

    level: str
    KEY: ClassVar[str] = "ready"

    def wire(self) -> dict:
        return {"ready": self.level}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Ready:
        _only(obj, frozenset({"ready"}))
        return cls(_text(obj, "ready"))


@dataclass(frozen=True, slots=True)
class Failure(_Kind):
    """The worker, or a session, could not start (or could not go on): why, in one line."""

    error: str
    KEY: ClassVar[str] = "error"

    def wire(self) -> dict:
        return {"error": self.error}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Failure:
        _only(obj, frozenset({"error"}))
        return cls(_text(obj, "error"))


@dataclass(frozen=True, slots=True)
class Ended(_Kind):
    """A session ended: the budgets of the submission it hit (isolation.py's names), and how many processes its
    memory budget's OOM killer had killed by then (`oom_kills`, as Answers counts them)."""

    budgets: list[str]
    oom_kills: int = 0
    KEY: ClassVar[str] = "budgets"

    def wire(self) -> dict:
        return {"budgets": self.budgets, "oom_kills": self.oom_kills}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Ended:
        _only(obj, frozenset({"budgets", "oom_kills"}))
        return cls(_texts(obj, "budgets"), _whole(obj, "oom_kills"))


@dataclass(frozen=True, slots=True)
class Answer:
    """One call's answer as the session passes it on: a value, or a one-line reason and the limit that ended
    it (one of LIMITS); `not_run`: the session never made the call (a budget spent, an earlier call out of
    time), its own word, never a loader's (Result.from_json does not read it)."""

    ok: bool
    value: Any = None
    reason: str = ""
    limit: str = ""
    not_run: bool = False

    def wire(self) -> dict:
        return {"ok": self.ok, "value": self.value, "reason": self.reason, "limit": self.limit,
                "not_run": self.not_run}

    @classmethod
    def from_json(cls, obj: Any, answer_bytes: int) -> Answer:
        """In the grader: its arrays read back into lists (`plain`); a forged one, or one past what the session
        passes on from an answer of at most `answer_bytes` (answer_fault), is UNREADABLE."""
        if type(obj) is not dict or obj.keys() != _ANSWER_FIELDS:
            raise _Bad("an answer is not {'ok', 'value', 'reason', 'limit', 'not_run'}")
        ok, reason, limit = _flag(obj, "ok"), _text(obj, "reason"), _one_of(obj, "limit", LIMITS)
        not_run = _flag(obj, "not_run")
        if answer_bytes and answer_fault(obj["value"], answer_bytes):
            return cls(False, None, UNREADABLE)
        try:
            return cls(ok, plain(obj["value"]), reason, limit, not_run)
        except (Unreadable, RecursionError):
            return cls(False, None, UNREADABLE)


_ANSWER_FIELDS = _names(Answer)


@dataclass(frozen=True, slots=True)
class Answers(_Kind):
    """A batch's answers, one per call in order; the cells that raised while the program loaded, and the line
    where each stopped (Loaded); the CPU seconds the session charged the submission so far; how many processes the memory budget's OOM killer has
    killed so far (isolation.py's _Cgroups.events: a session that dies during the next request is the budget's
    only if the count grows meanwhile)."""

    answers: list[Answer]
    load_errors: list[str]
    spent: float
    oom_kills: int = 0
    stops: dict[str, int] = field(default_factory=dict)
    bound: dict[str, list[str]] = field(default_factory=dict)
    KEY: ClassVar[str] = "answers"

    def wire(self) -> dict:
        return {"answers": [answer.wire() for answer in self.answers], "load_errors": self.load_errors,
                "stops": self.stops, "bound": self.bound, "spent": self.spent, "oom_kills": self.oom_kills}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Answers:
        _only(obj, frozenset({"answers", "load_errors", "stops", "bound", "spent", "oom_kills"}))
        answers = obj.get("answers")
        if type(answers) is not list:
            raise _Bad("'answers' is not a list")
        return cls([Answer.from_json(answer, answer_bytes) for answer in answers], _texts(obj, "load_errors"),
                   _number(obj, "spent"), _whole(obj, "oom_kills"), _stops(obj, "stops"), _bound(obj, "bound"))


@dataclass(frozen=True, slots=True)
class LoadingCell(_Kind):
    """A loader starts this cell of the program (each starts that cell's time limit)."""

    name: str
    EVENT: ClassVar[str] = "cell"

    def wire(self) -> dict:
        return {"event": "cell", "name": self.name}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> LoadingCell:
        _only(obj, frozenset({"event", "name"}))
        return cls(_text(obj, "name")[:40])


@dataclass(frozen=True, slots=True)
class Loaded(_Kind):
    """A loader ran every cell of the program: the cells that raised (at most LOAD_ERRORS read, each cut to
    ERROR_CHARS characters and ERROR_BYTES bytes of JSON), and the line of each where it stopped, as the loader saw
    it run (cell_runner.stopped_at; at most LOAD_STOPS read), and the names each bound as it ran, as the loader saw
    its namespace change (cell_runner.rebound; _cut_bound)."""

    errors: list[str]
    stops: dict[str, int] = field(default_factory=dict)
    bound: dict[str, list[str]] = field(default_factory=dict)
    EVENT: ClassVar[str] = "loaded"

    def wire(self) -> dict:  # cut as it is read: a loader's line stays within the reader's limit (red-c15)
        return {"event": "loaded", "errors": _cut_errors(self.errors), "stops": _cut_stops(self.stops),
                "bound": _cut_bound(self.bound)}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Loaded:
        _only(obj, frozenset({"event", "errors", "stops", "bound"}))
        return cls(_cut_errors(_texts(obj, "errors")), _stops(obj, "stops"), _bound(obj, "bound"))


def _cut_errors(errors: list[str]) -> list[str]:
    """The load errors a line holds: at most LOAD_ERRORS, each cut to ERROR_CHARS characters and ERROR_BYTES bytes."""
    return [_json_cut(error, ERROR_CHARS, ERROR_BYTES) for error in errors[:LOAD_ERRORS]]


@dataclass(frozen=True, slots=True)
class Fatal(_Kind):
    """Loading ended the loader's process (a cell called sys.exit, printed past the limit, or the loader could
    not confine itself): why, and the limit it names (one of FATAL_LIMITS)."""

    reason: str
    limit: str = ""
    EVENT: ClassVar[str] = "fatal"

    def wire(self) -> dict:
        return {"event": "fatal", "reason": self.reason, "limit": self.limit}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Fatal:
        _only(obj, frozenset({"event", "reason", "limit"}))
        return cls(_one_line(_text(obj, "reason")), _one_of(obj, "limit", FATAL_LIMITS))


@dataclass(frozen=True, slots=True)
class Result(_Kind):
    """One call's answer from the process that ran it: a value (`ok`), or why there is none and the limit that
    ended it (one of LOADER_LIMITS). `wall`: a time limit's wall-clock backstop, not its CPU time, stopped it;
    `status`: the wait status of the check child that ended without answering, for the session to describe;
    `not_run`: the session's own answer for a call it never made (never read from a loader's line)."""

    ok: bool
    value: Any = None
    reason: str = ""
    limit: str = ""
    wall: bool = False
    status: int | None = None
    not_run: bool = False
    EVENT: ClassVar[str] = "result"

    def wire(self) -> dict:
        if self.ok:
            return {"event": "result", "ok": True, "value": self.value}
        wire = {"event": "result", "ok": False, "reason": self.reason, "limit": self.limit, "wall": self.wall}
        if self.status is not None:
            wire["status"] = self.status
        return wire

    def answer(self) -> Answer:
        return Answer(self.ok, self.value, self.reason, self.limit, self.not_run)

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Result | Oversized:
        """The value of an answer is anything plain; read where an answer has a limit (`answer_bytes`), one nested
        deeper or holding more values than the grader takes (answer_fault) reads as Oversized, with why."""
        _only(obj, _RESULT_FIELDS)
        ok, reason, limit = _flag(obj, "ok"), _text(obj, "reason", ""), _one_of(obj, "limit", LOADER_LIMITS)
        wall, status = _flag(obj, "wall", False), obj.get("status")
        if wall and limit != "time":
            raise _Bad("'wall' is true for a limit that is not 'time'")
        if status is not None and (type(status) is not int or not 0 <= status < 1 << 16):
            raise _Bad("'status' is not a wait status")
        if not ok:
            if not reason:
                raise _Bad("a failure has no 'reason'")
            return cls(False, None, _one_line(reason), limit, wall, status)
        value = obj.get("value")
        fault = answer_fault(value, answer_bytes) if answer_bytes else ""
        return Oversized(fault) if fault else cls(True, value, "", limit, wall, status)


_RESULT_FIELDS = (_names(Result) - {"not_run"}) | {"event"}  # not_run is the session's word, never a loader's


@dataclass(frozen=True, slots=True)
class Oversized(_Kind):
    """An answer past the grader's bounds: its line longer than the reader's limit, or its value past
    answer_fault's; `fault` says which ("larger than 1,024 KB", "nested more than 32 levels deep"). On the
    wire only as a loader passes on its check child's line (read again as larger than the answer's limit)."""

    fault: str = ""
    EVENT: ClassVar[str] = "oversized"

    def wire(self) -> dict:
        return {"event": "oversized"}

    @classmethod
    def from_json(cls, obj: dict, answer_bytes: int) -> Oversized:
        _only(obj, frozenset({"event"}))
        return cls(_too_long(answer_bytes, 0) if answer_bytes else "")


@dataclass(frozen=True, slots=True)
class Malformed:
    """What `read` makes of a line that is no message of its pipe: why, and the kind it claimed to be (None:
    not JSON, not an object, or of no kind the pipe carries). Never on the wire."""

    reason: str
    kind: type | None = None


@dataclass(frozen=True, slots=True)
class Closed:
    """The pipe's writer closed it (end of file). Never on the wire."""


CLOSED = Closed()

# The pool's records (classroom/pool.py): each process says when it takes an item and what its work answered,
# or why it failed; `make grade`'s work answers None for a student graded, or NotGraded.


class Started(NamedTuple):
    item: int  # the index of the item the process takes now (the parent's bar shows who it is on, since when)


class Done(NamedTuple):
    item: int
    answer: Any  # what the work returned for that item: plain data, or a Report


class ProcessFailed(NamedTuple):
    reason: str  # the exception that ended the process's work: "Type: message"


def read_pool(message: object) -> Started | Done | ProcessFailed | Malformed:
    """What the pool's parent makes of an object one of its processes sent: one of the pool's records, or
    Malformed with why (a process of the grader's own sent something else: the grader's failure)."""
    if isinstance(message, (Started, Done)):
        return message if type(message.item) is int else Malformed(f"{type(message).__name__}: 'item' is not a "
                                                                   "number", type(message))
    if isinstance(message, ProcessFailed):
        return message if type(message.reason) is str else Malformed("ProcessFailed: 'reason' is not text",
                                                                      ProcessFailed)
    return Malformed(f"{type(message).__name__} is not one of the pool's records")


class NotGraded(NamedTuple):
    """Why a student was not graded (one line); `grader_fault`: the grader's failure, not the submission's, so
    the student is tried once more and gets no page that blames the file."""

    reason: str
    grader_fault: bool = False


Message = Union[WorkerConfig, Begin, Batch, End, Ready, Failure, Ended, Answers, LoadingCell, Loaded, Fatal, Result,
                Oversized]
Read = Union[Message, Malformed, Closed]


class Channel:
    """The kinds of message one pipe carries: told apart by their "event", or by the one key that names each."""

    def __init__(self, *kinds: type[_Kind]) -> None:
        self.only = kinds[0] if len(kinds) == 1 else None
        self.events = {kind.EVENT: kind for kind in kinds if kind.EVENT}
        self.keys = {kind.KEY: kind for kind in kinds if kind.KEY}

    def kind_of(self, obj: dict) -> Any:
        if self.only is not None:
            return self.only
        if "event" in obj:
            event = obj["event"]
            return self.events.get(event) if type(event) is str else None
        named = [kind for key, kind in self.keys.items() if key in obj]
        return named[0] if len(named) == 1 else None


CONFIG = Channel(WorkerConfig)  # the worker's argv
TO_WORKER = Channel(Begin)  # the worker's stdin, between sessions
TO_SESSION = Channel(Batch, End)  # the worker's stdin, while a session serves
TO_LOADER = Channel(Batch)  # a loader's commands pipe
FROM_LOADER = Channel(LoadingCell, Loaded, Fatal, Result, Oversized)  # a loader's (and its check children's) results
TO_GRADER = Channel(Ready, Failure, Ended, Answers)  # the worker's stdout: its word and its sessions'


def _too_long(answer_bytes: int, limit: int) -> str:
    return f"larger than {answer_bytes // 1024:,} KB" if answer_bytes else f"longer than {limit:,} bytes"


def read(line: bytes | str, channel: Channel, answer_bytes: int = 0) -> Read:
    """The one reader: the message of kind `channel` carries that `line` is, or Malformed with why.
    `answer_bytes`: the most one answer may hold (Result.from_json)."""
    try:
        obj = json.loads(line)
    except ValueError:  # cut short, or not JSON at all
        return Malformed("not a line of JSON")
    except RecursionError:
        return Malformed("nested past the JSON parser's depth")
    if type(obj) is not dict:
        return Malformed("not a JSON object")
    kind = channel.kind_of(obj)
    if kind is None:
        return Malformed("of no kind this pipe carries")
    try:
        return kind.from_json(obj, answer_bytes)
    except _Bad as bad:
        return Malformed(f"{kind.__name__}: {bad}", kind)


class Lines:
    """Read the messages of `channel` on a pipe, each with a deadline, through `read`. A line longer than `limit`
    bytes reads as Oversized as soon as it is (the rest of it is dropped as it comes, never held). `read`: the
    bytes of every line so far. A line costs its length, not its length squared: each chunk is searched once,
    the buffer grows in place. `answer_bytes`: the most one answer may hold (Result.from_json)."""

    def __init__(self, fd: int, channel: Channel, limit: int = 1 << 24, answer_bytes: int = 0) -> None:
        self.fd, self.channel, self.limit, self.answer_bytes, self.read = fd, channel, limit, answer_bytes, 0
        self.buffer = bytearray()
        self.searched = 0  # no newline in the buffer before this
        self.dropping = False  # within a line past the limit: what comes is dropped up to its newline
        # poll, not epoll: a loader reads its check child's answers through it, and the filter denies student code
        # epoll (seccomp.py)
        self.selector = selectors.PollSelector()
        self.selector.register(fd, selectors.EVENT_READ)

    def next(self, deadline: float | None = None) -> Read | None:
        """The next message (or Malformed, Oversized); CLOSED at end of file; None when the deadline passes first."""
        while (end := self.buffer.find(b"\n", self.searched)) < 0:
            self.searched = len(self.buffer)
            if self.searched > self.limit:
                return self._drop()
            left = None if deadline is None else deadline - time.monotonic()
            if (left is not None and left <= 0) or not self.selector.select(left):
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return CLOSED
            self.read += len(chunk)
            if self.dropping:
                cut = chunk.find(b"\n")
                if cut < 0:
                    continue
                self.dropping, chunk = False, chunk[cut + 1:]
            self.buffer += chunk
        if end > self.limit:
            del self.buffer[:end]  # its newline stays: the line's end is not dropped twice
            return self._drop()
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        self.searched = 0
        return read(line, self.channel, self.answer_bytes)

    def _drop(self) -> Oversized:
        """The line in the buffer is past the limit: forget what is held of it, drop the rest as it comes."""
        self.dropping = not self.buffer.startswith(b"\n")
        del self.buffer[:1 if not self.dropping else len(self.buffer)]
        self.searched = 0
        return Oversized(_too_long(self.answer_bytes, self.limit))

    def close(self) -> None:
        self.selector.close()
        os.close(self.fd)


def write(fd: int, message: Message | bytes) -> None:
    """Write a message (or its line, already encoded) to `fd`, waiting as long as it takes: for a process
    whose reader is the session, which always reads (the loader and its check children)."""
    view = memoryview(message if isinstance(message, bytes) else encode(message))
    while view:
        view = view[os.write(fd, view):]


def send(fd: int, message: Message, deadline: float) -> bool:
    """Write `message` as one line to `fd` (made non-blocking here); False when the deadline passes first
    (the reader stopped reading) or the reader is gone. For writers whose reader may be wedged."""
    os.set_blocking(fd, False)
    view = memoryview(encode(message))
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_WRITE)
        while view:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                return False
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:  # another writer took the room select saw
                continue
            except OSError:  # EPIPE: the reader ended
                return False
    return True
