"""What the session reads of a submission's processes to tell whose doing a refused fork was: facts from /proc,
never a word of a process that ran student code (docs/security.md, "who is charged").
Standard library only: the worker imports this file as a top-level module.
"""
from __future__ import annotations

import os


def process_limit_of(pid: int) -> int | None:
    """Process `pid`'s soft RLIMIT_NPROC as the kernel holds it (its /proc/<pid>/limits), a large number for
    unlimited; None when it cannot be read (the process ended, or no /proc)."""
    try:
        with open(f"/proc/{pid}/limits") as limits:
            for line in limits:
                if line.startswith("Max processes"):
                    soft = line[len("Max processes"):].split()[0]
                    return 1 << 62 if soft == "unlimited" else int(soft)
    except (OSError, ValueError, IndexError):
        pass
    return None


def tasks_of(uid: int) -> int:
    """How many tasks (processes and their threads) run with the real uid `uid`: what the kernel holds against
    that uid's RLIMIT_NPROC when one of them forks."""
    count = 0
    try:
        entries = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return 0
    for entry in entries:
        try:
            with open(f"/proc/{entry}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError, IndexError):
            pass  # ended meanwhile
    return count
