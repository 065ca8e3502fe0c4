"""The grader's own forks, retried, and its waits for the processes it killed, bounded: a machine short of
processes or memory for a moment is the grader's trouble, never the student's, and so is a kernel that never
lets a killed process end.

A fork fails with EAGAIN when the machine (or a limit the grader did not set for this submission) has no
process to spare, and with ENOMEM when it has no memory to copy the page tables into; both pass. The
sandbox forks its sessions, loaders and check children here, so a short squeeze costs a moment, and a
long one ends in GraderForkError, which the caller reports as the grader's failure.
Standard library only: imported as a top-level module by the worker and the loaders.
"""
from __future__ import annotations

import ctypes
import errno
import os
import sys
import time

PAUSES = (0.05, 0.2, 0.5, 1.0)  # seconds between tries: about 2 s in all before the grader gives up
# A process sent SIGKILL ends at once, unless the kernel holds it (stuck in a system call that never returns, on a
# wedged kernel): past this, the grader says so instead of waiting without end.
KILLED_SECONDS = 10.0


class GraderForkError(OSError):
    """The grader could not start a process it needed, after retrying."""


class NeverEnded(RuntimeError):
    """A process the grader killed had not ended KILLED_SECONDS later: the machine's failure, never a grade."""

    def __init__(self, what: str, pid: int) -> None:
        super().__init__(f"{what} {pid} had not ended {KILLED_SECONDS:g} s after it was killed (the kernel holds "
                         "it): the grading machine's fault, not the notebook's")


def fork() -> int:
    """os.fork(), tried again after each of PAUSES while the kernel says EAGAIN or ENOMEM."""
    failure = OSError()
    for pause in (0.0, *PAUSES):
        time.sleep(pause)
        try:
            return os.fork()
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.ENOMEM):
                raise
            failure = error
    raise GraderForkError(failure.errno, f"fork failed {len(PAUSES) + 1} times: {failure.strerror}")


def become_subreaper() -> None:
    """The orphans of the processes below this one get it as their parent (not the first subreaper above it)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def wait_killed(pid: int, what: str = "the process") -> int:
    """The wait status of `pid`, a child this process sent SIGKILL, once it has ended; NeverEnded when it has
    not ended KILLED_SECONDS later (`what`: which process it is, for that line)."""
    give_up, pause = time.monotonic() + KILLED_SECONDS, 0.0005
    while True:
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended:
            return status
        if time.monotonic() >= give_up:
            raise NeverEnded(what, pid)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)  # most end within a millisecond: looked at often at first
