"""Work done item by item in a forked child, each item within so many seconds of the child's CPU time.

A feedback process writes its share of the class's pages this way (feedback_pages.GenerateFeedbackFor): the
exporter it built, and what the child learns from page to page (templates compiled, the given cells highlighted),
serve the whole share, while a page that takes too long stops alone. The child says which item it starts and
its CPU time then; the parent reads the child's CPU time (/proc, as the sandbox does) and kills it once one item
has used more than its bound, and a new child goes on with the next item. CPU time, not wall-clock time: a loaded
machine slows a page down but never makes it too slow.
"""
from __future__ import annotations

import os
import select
import signal
import sys
from typing import Callable, NoReturn, TypeVar

from ..sandbox.cputime import process_seconds

Item = TypeVar("Item")
# Seconds between two readings of the child's CPU time: at least the kernel's tick, which /proc counts in; at most
# a second (a child of more threads than one may use CPU time faster than wall-clock time goes).
SHORTEST_WAIT, LONGEST_WAIT = 1 / os.sysconf("SC_CLK_TCK"), 1.0


def each_within(items: list[Item], work: Callable[[Item], None], seconds: float) -> tuple[list[Item], bool]:
    """`work(item)` for every item in order, in forked children, each item within `seconds` of CPU time.

    Returns the items stopped at their bound, and whether every other item's work returned (False: one raised,
    or a child ended before it was done; the items after that one are not done either)."""
    stopped: list[Item] = []
    start, succeeded = 0, True
    while start < len(items):
        over, ended_well = _run_child(items[start:], work, seconds)
        succeeded = succeeded and ended_well
        if over is None:
            break
        stopped.append(items[start + over])
        start += over + 1
    return stopped, succeeded


def _run_child(items: list[Item], work: Callable[[Item], None], seconds: float) -> tuple[int | None, bool]:
    """One child working through `items`: the index of the item it was stopped on (None: it ended by itself),
    and whether the child's work all returned (up to that item, when it was stopped)."""
    reader, writer = os.pipe()
    sys.stdout.flush()  # what the parent printed is printed once, not again by the child
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        _serve(items, work, writer)
    os.close(writer)
    try:
        over, failed_before = _watch(pid, reader, seconds)
    except BaseException:  # the parent is stopped (Ctrl-C): its child with it
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(reader)
    if over is not None:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return over, not failed_before if over is not None else os.waitstatus_to_exitcode(status) == 0


def _serve(items: list[Item], work: Callable[[Item], None], channel: int) -> NoReturn:
    """The child: before each item, its index, the CPU time used and whether any work raised so far; then its
    work. Exits 1 if any work raised."""
    failed = 0
    try:
        for index, item in enumerate(items):
            os.write(channel, f"{index} {process_seconds(os.getpid())} {failed}\n".encode())
            try:
                work(item)
            except Exception:  # the others are still done; the parent learns it
                failed = 1
    except BaseException:
        failed = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(failed)  # never back into the caller's frames: they are the parent's


def _watch(pid: int, channel: int, seconds: float) -> tuple[int | None, bool]:
    """Read the child's items as it starts them: the index of the one past `seconds` of CPU time (None once the
    child has closed its end: done, or ended otherwise), and whether work before it raised."""
    current, since, failed, pending = None, 0.0, False, b""
    wait: float | None = None  # until the first item starts
    while True:
        if select.select([channel], [], [], wait)[0]:
            data = os.read(channel, 4096)
            if not data:
                return None, failed
            *lines, pending = (pending + data).split(b"\n")
            if lines:
                index, started, raised = lines[-1].split()
                current, since, failed = int(index), float(started), raised == b"1"
        if current is not None:
            used = process_seconds(pid) - since
            if used > seconds and not select.select([channel], [], [], 0)[0]:  # and no later item started meanwhile
                return current, failed
            wait = min(max(seconds - used, SHORTEST_WAIT), LONGEST_WAIT)  # one thread: CPU time <= wall-clock time
