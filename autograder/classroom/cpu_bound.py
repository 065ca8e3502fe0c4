"""Work done item by item in a forked child, each item within so many seconds of the child's own CPU time.

Two callers. A feedback process writes its share of the class's pages this way (each_within, from
feedback_pages.GenerateFeedbackFor): the exporter it built, and what the child learns from page to page (templates
compiled, the given cells highlighted), serve the whole share, while a page that takes too long stops alone. A
grading process of `make grade`'s pool grades its students this way (pool.run_pool with `seconds`): its child takes
student after student from the pool with one warm Grader, and nbgrader's autograde of one that takes too long stops
alone.

The child says which item it starts and its CPU time then, and when it is between items (nothing is bounded then);
the parent reads the child's CPU time (/proc, as the sandbox does) and kills it once one item has used more than its
bound, and a new child goes on with the next item. CPU time, not wall-clock time: a loaded machine slows an item
down but never makes it too slow. The child's own time, not its children's: a grading child's sandboxes have
bounds of their own, and a worker it reaps would bring all of its time in at once.
"""
from __future__ import annotations

import os
import select
import signal
import sys
from functools import partial
from typing import Callable, NoReturn, TypeVar

from ..sandbox.cputime import process_seconds

Item = TypeVar("Item")
# What the child's work calls as it starts an item (its index; None: between items) and whether work before it failed.
Begin = Callable[[int | None, bool], None]
# Seconds between two readings of the child's CPU time: at least the kernel's tick, which /proc counts in; at most
# a second (a child of more threads than one may use CPU time faster than wall-clock time goes).
SHORTEST_WAIT, LONGEST_WAIT = 1 / os.sysconf("SC_CLK_TCK"), 1.0


class _WorkFailed(Exception):
    """Some item's work raised (the others were still done): the child's exit status says so."""


def each_within(items: list[Item], work: Callable[[Item], None], seconds: float) -> tuple[list[Item], bool]:
    """`work(item)` for every item in order, in forked children, each item within `seconds` of CPU time.

    Returns the items stopped at their bound, and whether every other item's work returned (False: one raised,
    or a child ended before it was done; the items after that one are not done either)."""
    stopped: list[Item] = []
    start, succeeded = 0, True
    while start < len(items):
        over, ended_well = within(partial(_each, items, start, work), seconds)
        succeeded = succeeded and ended_well
        if over is None:
            break
        stopped.append(items[over])
        start = over + 1
    return stopped, succeeded


def _each(items: list[Item], start: int, work: Callable[[Item], None], begin: Begin) -> None:
    """each_within's child: the work of every item from `start` on, each begun; raises at the end if any raised."""
    failed = False
    for index in range(start, len(items)):
        begin(index, failed)
        try:
            work(items[index])
        except Exception:  # the others are still done; the parent learns it
            failed = True
    if failed:
        raise _WorkFailed


def within(serve: Callable[[Begin], None], seconds: float) -> tuple[int | None, bool]:
    """`serve(begin)` in a forked child, which calls `begin(index, failed)` as it starts each item (and
    `begin(None, failed)` once it is between items); the child is killed once one item has used more than `seconds`
    of its CPU time. Returns the index of that item (None: the child ended by itself), and whether the child's work
    went well (serve returned; when it was stopped: no work before that item failed)."""
    reader, writer = os.pipe()
    sys.stdout.flush()  # what the parent printed is printed once, not again by the child
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        _serve(serve, writer)
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


def _serve(serve: Callable[[Begin], None], channel: int) -> NoReturn:
    """The child: serve(begin), each begin a line to the parent (the item's index or "-", the CPU time used, and
    whether work before it failed). Exits 1 if serve raised."""

    def begin(index: int | None, failed: bool = False) -> None:
        seconds = process_seconds(os.getpid(), children=False)
        os.write(channel, f"{'-' if index is None else index} {seconds} {int(failed)}\n".encode())

    status = 1
    try:
        serve(begin)
        status = 0
    except BaseException:  # the parent learns it from the exit status
        pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)  # never back into the caller's frames: they are the parent's


def _watch(pid: int, channel: int, seconds: float) -> tuple[int | None, bool]:
    """Read the child's items as it starts them: the index of the one past `seconds` of CPU time, the child stopped
    on it (None once the child has closed its end: done, or ended otherwise), and whether work before it failed."""
    current, since, failed, pending = None, 0.0, False, b""
    wait: float | None = None  # while no item is begun
    while True:
        if select.select([channel], [], [], wait)[0]:
            data = os.read(channel, 4096)
            if not data:
                return None, failed
            *lines, pending = (pending + data).split(b"\n")
            if lines:
                index, started, raised = lines[-1].split()
                current = None if index == b"-" else int(index)
                since, failed = float(started), raised == b"1"
        wait = None
        if current is not None:
            used = process_seconds(pid, children=False) - since
            if used > seconds and _stopped_on_it(pid, channel):
                return current, failed
            wait = min(max(seconds - used, SHORTEST_WAIT), LONGEST_WAIT)  # one thread: CPU time <= wall-clock time


def _stopped_on_it(pid: int, channel: int) -> bool:
    """Stop the child, and say whether it is still on its item: it wrote no later line before it stopped (True: it
    stays stopped, to be killed). Stopped first, so that it cannot go on to what follows an item (a pool's answer on
    its way out) between the look and the kill."""
    os.kill(pid, signal.SIGSTOP)
    os.waitid(os.P_PID, pid, os.WSTOPPED | os.WEXITED | os.WNOWAIT)  # stopped, or ended: left for waitpid
    if select.select([channel], [], [], 0)[0]:  # a later item begun, or the child's end: it goes on
        os.kill(pid, signal.SIGCONT)
        return False
    return True
