"""The messages between the sandbox's processes: one line of JSON each, over pipes, every read and write
with a deadline. The one way the caller, the worker, its sessions and their loaders talk.

Message kinds (each a JSON object on one line):

    caller → worker       {"begin": seconds}                    start a submission's session
    caller → session      {"calls": [call], "fresh": bool, "together": bool, "cells"?: [[name, source]]}
                          {"end": true}                         end the session
    worker → caller       {"ready": level}                      started, at this isolation level
                          {"error": text}                       a session could not start
                          {"budgets": [name]}                   a session ended: the budgets it hit
    session → caller      {"ready": true}                       the session serves
                          {"answers": [answer], "load_errors": [text]}                  a batch's answers
    session → loader      {"calls": [call], "fresh": bool, "together": bool}
    loader → session      {"event": "cell", "name": text}       loading this cell now
                          {"event": "loaded", "errors": [text]}
                          {"event": "fatal", "reason": text}    loading ended the process's run
                          {"event": "result", "ok": bool, "value"?, "reason"?, "limit"?, "wall"?, "status"?}

    call: {"function": "module:name", "kwargs": {...}}; answer: a result without "event", and "not_run": true
    when the session did not make the call (a budget spent, an earlier call out of time; never a loader's word).

A loader runs student code, so what it writes is read as untrusted: a line longer than the reader's limit
reads as {"event": "oversized"}, one that is not a JSON object (cut short, nested past the parser's depth) as
{"event": "garbled"}, and the session checks every field of an answer and its size (answer_fault, worker.py):
what it passes on, the grader reads within limits no looser (sandbox/__init__.py). A process at the other end may be wedged by student
code (stopped with SIGSTOP, its pipe shrunk with F_SETPIPE_SZ), so no read or write waits past its deadline.

Values are plain data: numbers, strings, lists, dicts. A numpy array of booleans, integers or floats crosses
as its bytes (`{"\\u0000array": [dtype, shape, base64]}`), not as a list of decimal numbers: writing and
parsing floats as text was most of the sandbox's time for the probes' arrays. `plain` turns such an array
back into the lists `tolist()` gives, in the grader, after checking its dtype, shape and length, so a
forged one is refused like any unreadable answer.

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
from typing import Any

# In a fresh batch the loader times its check children; the worker waits this much longer (of CPU time, and
# WALL_FACTOR times as long of wall-clock time: cputime.py) for an answer before it stops a loader that student
# code has wedged (and the caller counts it in its own deadline).
BACKSTOP_SECONDS = 1.0

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


def encode(message: dict) -> bytes:
    """One message as its line (NaN and infinities as Python's json writes them)."""
    return (json.dumps(message, default=_plain, allow_nan=True) + "\n").encode()


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


def answer_fault(value: Any, limit: int) -> str:
    """Why `value`, an answer as read, is more than the grader takes from an answer of at most `limit` bytes:
    nested deeper than DEPTH, or holding more than limit // VALUE_BYTES values (each element of an array sent
    as bytes counts, by its bytes); "" when it is not. It bounds what the grader's process holds once it has
    read the answer (a value of a few bytes of JSON can take 60 bytes of Python). Walked without recursion."""
    most, count, todo = limit // VALUE_BYTES, 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if depth > DEPTH:
            return f"nested more than {DEPTH} levels deep"
        count += 1
        if isinstance(item, dict):
            array = item.get(ARRAY)
            if isinstance(array, list) and len(array) == 3 and isinstance(array[0], str) and isinstance(array[2], str):
                count += len(array[2]) * 3 // 4 // _ITEM_BYTES.get(array[0][1:], 1)
            todo += [(entry, depth + 1) for entry in item.values()]
        elif isinstance(item, list):
            todo += [(entry, depth + 1) for entry in item]
        if count > most:
            return f"of more than {most:,} values"
    return ""


class Lines:
    """Read the messages on a pipe, each with a deadline. A line longer than `limit` bytes reads as
    {"event": "oversized"} as soon as it is (the rest of it is dropped as it comes, never held), one that is
    not a JSON object as {"event": "garbled"}. `read`: the bytes of every line so far. A line costs its
    length, not its length squared: each chunk is searched once, the buffer grows in place."""

    def __init__(self, fd: int, limit: int = 1 << 24) -> None:
        self.fd, self.limit, self.read = fd, limit, 0
        self.buffer = bytearray()
        self.searched = 0  # no newline in the buffer before this
        self.dropping = False  # within a line past the limit: what comes is dropped up to its newline
        self.selector = selectors.DefaultSelector()
        self.selector.register(fd, selectors.EVENT_READ)

    def next(self, deadline: float | None = None) -> dict | None:
        """The next message; {} at end of file; None when the deadline passes first."""
        while (end := self.buffer.find(b"\n", self.searched)) < 0:
            self.searched = len(self.buffer)
            if self.searched > self.limit:
                return self._drop()
            left = None if deadline is None else deadline - time.monotonic()
            if (left is not None and left <= 0) or not self.selector.select(left):
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return {}
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
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return {"event": "garbled"}
        return message if isinstance(message, dict) else {"event": "garbled"}

    def _drop(self) -> dict:
        """The line in the buffer is past the limit: forget what is held of it, drop the rest as it comes."""
        self.dropping = not self.buffer.startswith(b"\n")
        del self.buffer[:1 if not self.dropping else len(self.buffer)]
        self.searched = 0
        return {"event": "oversized"}

    def close(self) -> None:
        self.selector.close()
        os.close(self.fd)


def write(fd: int, message: dict | bytes) -> None:
    """Write a message (or its line, already encoded) to `fd`, waiting as long as it takes: for a process
    whose reader is the session, which always reads (the loader and its check children)."""
    view = memoryview(message if isinstance(message, bytes) else encode(message))
    while view:
        view = view[os.write(fd, view):]


def send(fd: int, message: dict, deadline: float) -> bool:
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
