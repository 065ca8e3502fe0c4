"""The process pool: run one function over a list of items in forked processes, answers back as they come.

`make grade` runs the grading (one student an item) and the feedback (one share of the class an item)
through it; the progress bar (autograder/classroom/progress.py) is drawn here, in the parent's results loop.
"""
from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.connection
from functools import partial
from multiprocessing.connection import Connection
from typing import Any, Callable, Iterator, cast

from ..sandbox.protocol import Done, ProcessFailed, Started, read_pool
from .cpu_bound import Begin, within
from .progress import Progress


def run_pool(items: list, work: Callable[[Any], Any], jobs: int, progress: Progress | None = None,
             finish: Callable[[], None] = lambda: None, seconds: float | None = None,
             too_slow: Callable[[Any], Any] = lambda item: None) -> Iterator[tuple[int, Any]]:
    """Run `work` on every item in `jobs` forked processes; yield (index, answer) as answers come.

    Items are handed out one at a time from a shared counter, so a slow item (an infinite loop
    waiting out its time limit) holds up one process, not a fixed share of the class. Answers are
    sent back through a pipe per process, as the pool's records (sandbox/protocol.py: Done; ProcessFailed).
    Each process calls `finish` when the items run out. Each process also says when it takes an item
    (Started), so that `progress` (drawn here, in the parent's loop over the answers) knows which item
    each process is on and since when.

    With `seconds`, each process works in a child of its own, each item within that many seconds of the child's
    CPU time (cpu_bound.within): an item past it is stopped there, its answer is `too_slow(item)`, and a new child
    takes the next item (and calls `finish` when they run out).
    """
    context = multiprocessing.get_context("fork")
    counter = context.Value("q", 0)

    def take(channel, begin: Begin) -> None:
        """Items from the shared counter until they run out, then `finish`; `begin` says when each item's work
        starts and when it returned (cpu_bound.within bounds what lies between)."""
        try:
            while True:
                with counter.get_lock():
                    index = counter.value
                    counter.value += 1
                if index >= len(items):
                    break
                channel.send(Started(index))  # the parent's bar knows who each process is on, since when
                begin(index, False)
                answer = work(items[index])
                begin(None, False)  # never stopped from here on: its answer goes out whole
                channel.send(Done(index, answer))
            finish()
        except BaseException as exc:  # the parent reports it; nothing may be lost silently
            channel.send(ProcessFailed(f"{type(exc).__name__}: {exc}"))

    def serve(channel, slot: int) -> None:
        try:
            if seconds is None:
                take(channel, lambda index, failed: None)
                return
            while True:
                over, went_well = within(partial(take, channel), seconds)
                if over is None:
                    if not went_well:  # take sends its own failure: this child ended without a word
                        channel.send(ProcessFailed("a grading process's child ended before its items were done"))
                    break
                channel.send(Done(over, too_slow(items[over])))
        except BaseException as exc:
            channel.send(ProcessFailed(f"{type(exc).__name__}: {exc}"))
        finally:
            channel.close()

    # Everything imported so far lives as long as the processes: keep it out of their garbage
    # collections (and so out of the pages they would copy by touching it).
    gc.freeze()
    running: dict[Connection, multiprocessing.context.ForkProcess] = {}
    slots: dict[Connection, int] = {}
    for slot in range(1, max(1, min(jobs, len(items))) + 1):
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=serve, args=(send, slot))
        process.start()
        send.close()
        running[receive], slots[receive] = process, slot
    failures: list[str] = []
    while running:  # the results loop: every answer, and every tick of the bar, comes through here
        # wait() hands back some of the objects it was given: here the pipes' Connections.
        ready = cast("list[Connection]", multiprocessing.connection.wait(list(running), timeout=0.5 if progress else None))
        if not ready and progress:
            progress.tick()  # nothing came back: the bar still says who is waiting out a limit
        for channel in ready:
            try:
                message = read_pool(channel.recv())
            except EOFError:
                process = running.pop(channel)
                process.join()
                channel.close()
                if progress:
                    progress.running.pop(slots[channel], None)
                if process.exitcode:
                    failures.append(f"a grading process ended with exit code {process.exitcode}")
                continue
            if isinstance(message, Started):
                if progress:
                    progress.started(slots[channel], items[message.item])
            elif isinstance(message, Done):
                if progress:
                    progress.finished(slots[channel])
                yield message.item, message.answer
            else:  # ProcessFailed, or Malformed: a process that sends what is not a record failed as much
                failures.append(message.reason)
    if failures:
        raise RuntimeError(failures[0])
