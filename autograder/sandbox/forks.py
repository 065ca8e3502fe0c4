"""The grader's own forks, retried: a machine short of processes or memory for a moment is the grader's
trouble, never the student's.

A fork fails with EAGAIN when the machine (or a limit the grader did not set for this submission) has no
process to spare, and with ENOMEM when it has no memory to copy the page tables into; both pass. The
sandbox forks its sessions, loaders and check children here, so a short squeeze costs a moment, and a
long one ends in GraderForkError, which the caller reports as the grader's failure.
Standard library only: imported as a top-level module by the worker and the loaders.
"""
from __future__ import annotations

import errno
import os
import time

PAUSES = (0.05, 0.2, 0.5, 1.0)  # seconds between tries: about 2 s in all before the grader gives up


class GraderForkError(OSError):
    """The grader could not start a process it needed, after retrying."""


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
