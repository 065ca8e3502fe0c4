"""Lines of JSON over pipes, each read and write with a deadline: the one way the sandbox's processes talk.

A process at the other end may be student code, or wedged by it (stopped with SIGSTOP, its pipe shrunk
with F_SETPIPE_SZ), so no read or write here waits longer than the deadline it is given. Standard
library only: the worker imports this file as a top-level module, the caller as a package one.
"""
from __future__ import annotations

import json
import os
import selectors
import time

# In a fresh batch the loader times its check children; the worker waits this much longer (of CPU time, and
# WALL_FACTOR times as long of wall-clock time: cputime.py) for an answer before it stops a loader that student
# code has wedged (and the caller counts it in its own deadline).
BACKSTOP_SECONDS = 1.0


class Lines:
    """Read newline-ended JSON messages from a pipe, with a deadline.

    Student code can write anything to the pipes it holds: a line that is not a JSON object (cut
    short, nested past the parser's depth, or longer than `limit` bytes) reads as {"event": "garbled"}.
    """

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


def send(fd: int, message: dict, deadline: float) -> bool:
    """Write `message` as one line to `fd` (made non-blocking here); False when the deadline passes first
    (the reader stopped reading) or the reader is gone."""
    os.set_blocking(fd, False)
    view = memoryview((json.dumps(message) + "\n").encode())
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
