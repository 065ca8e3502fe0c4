"""CPU time that a submission's processes used: what its per-check limits and its time budget are charged in.

On a busy machine a check gets a smaller share of a core: its wall-clock time grows with the load, its
CPU time does not. So a check that loops runs out of CPU time wherever it runs, and a correct one that
was merely slowed is never charged. Wall-clock time stays only as a backstop, WALL_FACTOR times each
limit, for code that waits instead of computing (a sleep, a blocked read); and the time its processes
spent waiting for a CPU, as the kernel counts it (/proc/<pid>/task/<tid>/schedstat: the time during which some
thread waited, Stopwatch), is taken off it, so that not even the backstop grows with the load. (A kernel without
schedstat counts no waits: there the backstop is plain wall-clock time, and a machine more than WALL_FACTOR times
oversubscribed reaches it.)

Counted from the submission's cgroup where it has one (cpuacct.usage on cgroup v1, cpu.stat on v2: every
process, threads and daemons included), else from the kernel's per-process counters: what the processes
the session reaped used (rusage, os.times) plus what every live process below it has used so far (/proc).
The same walk of the live processes gives the memory they hold (tree_memory): the session's bound on the
submission's memory where no memory cgroup bounds it (isolation.py's Isolation.over).
Standard library only: the worker and the loaders import this file as a top-level module, the caller as
a package one.
"""
from __future__ import annotations

import math
import os
import time
from pathlib import Path
from time import monotonic as time_now

WALL_FACTOR = 2  # the wall-clock backstop (less the waits for a CPU), in multiples of a CPU-time limit
TICK = 0.05  # seconds between two readings of the CPU time while a call runs
# The niceness of a submission once one of its checks ran out of time (worker.py's _Session.hurry): three
# times the usual weight, ahead of the other submissions. Limits are CPU time, so no grade depends on it.
HURRIED_NICE = -5
# Threads of one process a Stopwatch remembers after they ended (Stopwatch._remember): past that, their largest wait
# stands for all of them. A process has at most the pids budget's 64 at a time, but may start and end more.
ENDED_KEPT = 256
_HZ = os.sysconf("SC_CLK_TCK")


def process_seconds(pid: int, children: bool = True) -> float:
    """CPU seconds `pid` used, its reaped children's included unless `children` is False; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return sum(int(ticks) for ticks in fields[11:15 if children else 13]) / _HZ  # utime, stime, cutime, cstime


def _tree(pid: int) -> dict[int, list[str]]:
    """`pid` and every live process below it (a child that moved away is not counted): their thread ids."""
    found, todo = {}, [pid]
    while todo:
        pid = todo.pop()
        try:
            found[pid] = os.listdir(f"/proc/{pid}/task")
            for task in found[pid]:
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    todo += [int(child) for child in children.read().split()]
        except OSError:  # gone meanwhile, or a kernel that keeps no list of children: what was found
            pass
    return found


def tree_seconds(pid: int) -> float:
    """CPU seconds `pid` and every live process below it used, their reaped children's included."""
    return sum(process_seconds(member) for member in _tree(pid))


def tree_waits(pid: int) -> dict[tuple[int, str], float]:
    """Seconds each thread of `pid` and of every live process below it spent runnable, waiting for a CPU, by
    (process, thread)."""
    waits = {}
    for member, tasks in _tree(pid).items():
        for task in tasks:
            try:
                with open(f"/proc/{member}/task/{task}/schedstat") as stat:
                    waits[member, task] = int(stat.read().split()[1]) / 1e9  # run time, run-queue wait, time slices
            except (OSError, IndexError, ValueError):
                pass
    return waits


def task_started(pid: int, task: str) -> int | None:
    """When thread `task` of `pid` started, in clock ticks since boot (its stat's field 22); None once it is gone."""
    try:
        with open(f"/proc/{pid}/task/{task}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def boot_ticks() -> int:
    """Clock ticks since boot now: the clock task_started counts in (CLOCK_BOOTTIME, as /proc adds a time
    namespace's offset to both)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * _HZ)


def _kilobyte_fields(pid: int, name: str, keys: tuple[str, ...]) -> dict[str, int]:
    """The fields `keys` of `pid`'s /proc file `name` (lines "Key:  N kB"), in bytes; those it has not, or all once
    it is gone, left out."""
    found = {}
    try:
        with open(f"/proc/{pid}/{name}") as fields:
            for line in fields:
                key, _, value = line.partition(":")
                if key in keys:
                    found[key] = int(value.split()[0]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return found


def memory_status(pid: int, tasks: list[str]) -> tuple[int, dict[str, int]]:
    """The process whose /proc folder shows the memory of process `pid` (of threads `tasks`), and its status's VmRSS
    and VmPTE: `pid`'s own, or where that shows none (its first thread ended alone, by the exit system call and not
    exit_group, while others go on: its status has no VmRSS, its smaps_rollup fails with ESRCH, its maps and fd are
    empty; red-a21 X30-a21-2) a live thread's, as /proc/<tid> reads that thread's (threads share one memory).
    Beyond `pid`'s own, a status read of each other thread at most, and only for a process that shows none."""
    for task in (pid, *(int(task) for task in tasks if task != str(pid))):
        fields = _kilobyte_fields(task, "status", ("VmRSS", "VmPTE"))
        if "VmRSS" in fields:
            return task, fields
    return pid, {}


def tree_memory(pid: int, bound: int) -> int:
    """Bytes of memory the live processes below `pid` (not its own) hold: the sum of their PSS, as forked
    processes share pages copy-on-write and their RSS would count those pages once each, and of their page
    tables, which neither counts (sparse mappings of the zero page make 8 KB of them each, and no RSS). A sum of
    RSS of at most `bound` is returned as it is (PSS is never more): status is a counter, smaps_rollup walks page
    tables. A process's RSS stands for its PSS where the kernel gives none (before 4.14, or without
    CAP_SYS_PTRACE: the process is another uid's). Each read where memory_status finds the process's memory."""
    status = [memory_status(member, tasks) for member, tasks in _tree(pid).items() if member != pid]
    tables = sum(fields.get("VmPTE", 0) for _, fields in status)
    resident = tables + sum(fields.get("VmRSS", 0) for _, fields in status)
    if resident <= bound:
        return resident
    return tables + sum(_kilobyte_fields(view, "smaps_rollup", ("Pss",)).get("Pss", fields.get("VmRSS", 0))
                        for view, fields in status)


class Stopwatch:
    """Wall-clock seconds since it was made, less the time during which some thread of the process tree of `pid`
    waited for a CPU meanwhile: what a wall-clock backstop may charge.

    The kernel adds a thread's wait to its schedstat (run_delay) when the thread runs again, in one piece, so a
    wait seen at a reading ended since the reading before and began as long before that: a thread a heavier
    neighbour lets run 2 ms every 200 ms shows 198 ms at every fourth reading 50 ms apart, all of them waited.
    Each wait is taken off as the span of time it covers, ending at the reading that found it, and the spans of
    all threads as their union: threads wait side by side, so the sum of their waits would grow faster than the
    clock (fifty processes woken together on one CPU each wait for the others: seconds of waits a second, for a few
    milliseconds of CPU time, held a cell 60 s under a 6 s backstop), while their union never does, and covers
    the time the submission's own threads waited for each other only while one of them ran: CPU time its limits
    charge. The waits of processes that ended are kept. It can be stopped and started again (a session's,
    between the grader's requests): the time it is stopped does not count, nor any wait from before.

    A thread's waits are taken off only as they grow past the largest reading of that same thread (_baselines): a key
    (process, thread) does not always name one thread from one reading to the next, and a thread's run_delay holds
    everything it ever waited, long before this stopwatch too."""

    def __init__(self, pid: int, started: float | None = None) -> None:
        """`started`: a time_now() from before (waits from then until now are not taken off)."""
        self.pid = pid
        self.held: float | None = None  # its seconds while it is stopped
        self._restart(time_now() if started is None else started)

    def _restart(self, started: float) -> None:
        self.started, self.waited, self.floor = started, 0.0, time_now()
        self.seen: dict[tuple[int, str], float] = {}  # _remember's
        self.ended_largest: dict[int, float] = {}  # _remember's
        self.read_at = boot_ticks()
        self._remember(tree_waits(self.pid))
        self.spans: list[tuple[float, float]] = []  # the union of the waits taken off: disjoint, in order

    def stop(self) -> None:
        if self.held is None:
            self.held = self.seconds()

    def start(self) -> None:
        """Go on from the seconds it was stopped at: neither the time since nor the waits meanwhile count."""
        if self.held is not None:
            held, self.held = self.held, None
            self._restart(time_now() - held)

    def seconds(self) -> float:
        if self.held is not None:
            return self.held
        read_at, waits, now = boot_ticks(), tree_waits(self.pid), time_now()
        baselines = self._baselines(waits)
        longest = max((wait - baselines[task] for task, wait in waits.items()), default=0.0)
        self.read_at = read_at
        self._remember(waits)
        self._take_off(max(now - longest, self.floor), now)
        return now - self.started - self.waited

    def _baselines(self, waits: dict[tuple[int, str], float]) -> dict[tuple[int, str], float]:
        """What each thread of `waits` had waited when its waits were last taken off, as far as the facts tell: the
        wait it grew by since is taken off."""
        ended: dict[int, list[float]] = {}  # the threads of each process remembered and not found now: their waits
        for (pid, task), wait in self.seen.items():
            if (pid, task) not in waits:
                ended.setdefault(pid, []).append(wait)
        baselines = {}
        for (pid, task), wait in waits.items():
            if (pid, task) in self.seen:
                # A thread that execs takes its leader's id, its run_delay with it (the kernel's de_thread): the
                # leader's key may name any thread of its process remembered and not found now whose waits it
                # reaches (the reading before may have read the leader before the exec and the thread after, or the
                # old leader under the thread's id). Of the threads it may name, the largest baseline: never more
                # taken off than any of them waited since.
                leader = task == str(pid)
                continuing = [before for before in ended.get(pid, []) if before <= wait] if leader else []
                largest = self.ended_largest.get(pid, 0.0) if leader else 0.0
                baselines[pid, task] = max([self.seen[pid, task], largest, *continuing])
            else:
                # A thread not remembered is new only if it started since the reading before; else a walk missed it
                # (its parent ended mid-walk, its process was between two parents): its waits so far are old.
                started = task_started(pid, task)
                baselines[pid, task] = 0.0 if started is not None and started > self.read_at else wait
        return baselines

    def _remember(self, waits: dict[tuple[int, str], float]) -> None:
        """Keep for the next reading, of each process found now (one the walk missed is found anew: _baselines):
        the largest wait each of its threads was found with (a key whose wait fell names another thread now, and
        the one before may go on under its leader's id), those found now and those that ended since while their
        wait stays above the leader's (the leader's key's baseline is at least its own: those below never count).
        Past ENDED_KEPT ended threads, their largest wait is the leader's key's baseline from then on
        (ended_largest): never more taken off than any of them waited since, only less."""
        seen = {key: max(wait, self.seen.get(key, wait)) for key, wait in waits.items()}
        leaders = {pid: seen.get((pid, str(pid)), -1.0) for pid, _ in waits}  # of the processes found now
        largest = {pid: wait for pid, wait in self.ended_largest.items() if wait > leaders.get(pid, math.inf)}
        ended: dict[int, dict[tuple[int, str], float]] = {}
        for (pid, task), wait in self.seen.items():
            if (pid, task) not in waits and wait > leaders.get(pid, math.inf):
                ended.setdefault(pid, {})[pid, task] = wait
        for pid, threads in ended.items():
            if len(threads) > ENDED_KEPT:
                largest[pid] = max(largest.get(pid, 0.0), *threads.values())
            else:
                seen.update(threads)
        self.seen, self.ended_largest = seen, largest

    def _take_off(self, begin: float, end: float) -> None:
        """Add the span [begin, end] to the union; `end` is at or after the end of every span in it."""
        if begin >= end:
            return
        added, merged = end - begin, begin
        while self.spans and self.spans[-1][1] > begin:
            low, high = self.spans.pop()
            added -= high - max(low, begin)
            merged = min(merged, low)
        self.spans.append((merged, end))
        self.waited += added


class CgroupCounter:
    """The CPU seconds every process that was ever in one cgroup used, from its counter file, opened where
    the cgroup is made (in the worker): the session reads it after it has left the machine's /sys behind
    (its root is an allow-list, isolation.py) through the descriptor it inherits."""

    def __init__(self, folder: Path) -> None:
        self.nanoseconds = (folder / "cpuacct.usage").exists()  # v1's cpuacct; v2 counts in cpu.stat
        self.fd = os.open(folder / ("cpuacct.usage" if self.nanoseconds else "cpu.stat"), os.O_RDONLY)

    def seconds(self) -> float:
        text = os.pread(self.fd, 1 << 16, 0).decode()
        if self.nanoseconds:
            return int(text) / 1e9
        stats = dict(line.split() for line in text.splitlines() if line.strip())
        return int(stats["usage_usec"]) / 1e6

    def close(self) -> None:
        os.close(self.fd)


class SubmissionClock:
    """The CPU seconds one submission's processes used since the clock was made, read in its session.

    `counter`: the submission's cgroup counter, or None: then what the session reaped, plus what every live
    process below it has used (each one's own time and its reaped children's). Those are all the submission's
    processes, and cost a tick no more than the submission has: the session forks each loader, and being a
    subreaper (worker.py) it adopts whatever a process of the submission leaves behind (a double-forked
    daemon), unless a subreaper below it does first (a check's process while it runs: child.py; or student code's).

    Never the session's own CPU time, either way: the session is in the submission's cgroup (so its memory counts
    there too), but its bookkeeping while a check runs (a walk of the loader's tree every TICK of wall-clock time:
    worker.py's _Loader._next) follows the wall-clock time the check takes, so the machine's load. Its own time
    (process_time: its threads', not its reaped children's) is taken off the counter's.
    """

    def __init__(self, counter: CgroupCounter | None) -> None:
        self.counter = counter
        self.start = 0.0
        self.start = self.seconds()

    def seconds(self) -> float:
        if self.counter is not None:
            return self.counter.seconds() - time.process_time() - self.start
        reaped, session = os.times(), os.getpid()
        below = sum(process_seconds(pid) for pid in _tree(session) if pid != session)  # not the session's own
        return reaped.children_user + reaped.children_system + below - self.start
