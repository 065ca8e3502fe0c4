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

    call: {"function": "module:name", "kwargs": {...}}; answer: a result without "event".

A loader runs student code, so what it writes is read as untrusted: a line that is not a JSON object (cut
short, nested past the parser's depth, or longer than the reader's limit) reads as {"event": "garbled"}, and
the session checks every field of an answer (worker.py). A process at the other end may be wedged by student
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
                type(length) is int and length >= 0 for length in shape):
            raise ValueError
        raw = base64.b64decode(data, validate=True)
        if math.prod(shape) * _ITEM_BYTES[dtype[1:]] != len(raw):
            raise ValueError
        return numpy.frombuffer(raw, dtype=dtype).reshape(shape).tolist()
    except (TypeError, ValueError, OverflowError) as exc:
        raise Unreadable("an array that is not one") from exc


class Lines:
    """Read the messages on a pipe, each with a deadline; past `limit` bytes a line reads as garbled."""

    def __init__(self, fd: int, limit: int = 1 << 24) -> None:
        self.fd, self.buffer, self.limit = fd, b"", limit
        self.selector = selectors.DefaultSelector()
        self.selector.register(fd, selectors.EVENT_READ)

    def next(self, deadline: float | None = None) -> dict | None:
        """The next message; {} at end of file; None when the deadline passes first."""
        while b"\n" not in self.buffer:
            left = None if deadline is None else deadline - time.monotonic()
            if (left is not None and left <= 0) or not self.selector.select(left):
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return {}
            self.buffer += chunk
            if len(self.buffer) > self.limit and b"\n" not in self.buffer:
                self.buffer = b""
                return {"event": "garbled"}
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return {"event": "garbled"}
        return message if isinstance(message, dict) else {"event": "garbled"}

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
