"""The sandbox's worker: the script the caller starts (`python -s -P -B worker.py <config>`).

It imports the trusted modules once, then forks a session per submission; a session forks a loader
per program (child.py), enforces the limits and the budget in the CPU time the submission's processes
used (cputime.py; wall-clock time only as a backstop), and kills what student code left.
It never runs student code itself. It imports its siblings as top-level modules (not as the package,
which is the caller's), from this folder, which it puts on sys.path for those imports only.
"""
from __future__ import annotations

import ctypes
import gc
import os
import resource
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))  # -P leaves the script's folder out
import child
import forks
import landlock  # noqa: F401  (isolation.py, loaded from its path later, imports it and uids as siblings)
import process_limits
import uids  # noqa: F401  (likewise)
from cputime import HURRIED_NICE, TICK, WALL_FACTOR, Stopwatch, SubmissionClock
from messages import (
    NOT_RUN_AFTER_TIME_OUT,
    NOT_RUN_TOGETHER,
    PRINTED_PAST_LIMIT,
    REFUSED_BY_NOTEBOOK,
    as_notebooks,
    as_notebooks_load_error,
    describe_answer_fault,
    describe_answers_budget,
    describe_budget,
    describe_budget_spent,
    describe_disk_budget,
    describe_memory_budget,
    describe_own_process_limit,
    describe_process_budget,
    describe_status,
    describe_time_out,
    describe_wall_time_out,
    in_notebooks_words,
)
from protocol import (
    BACKSTOP_SECONDS,
    CONFIG,
    FIELDS_BYTES,
    FROM_LOADER,
    TO_SESSION,
    TO_WORKER,
    UNREADABLE,
    Answer,
    Answers,
    Batch,
    Begin,
    Call,
    Closed,
    Ended,
    Failure,
    Fatal,
    Lines,
    Loaded,
    LoadingCell,
    Malformed,
    Oversized,
    Read,
    Ready,
    Result,
    WorkerConfig,
    encode,
    read,
    send,
    write,
)

del sys.path[0]  # student code sees the same sys.path as before the split: no grader folder on it

# How much of a check's wall-clock backstop must have passed, as the session counts from the answer before, for
# a loader's word that the backstop stopped the check to be taken (a call run again): the session reads an answer a
# moment after the loader wrote it and forked the next check's child, so it counts a little short of the loader.
SOONEST_WALL_STOP = 0.9
# Seconds between two readings of the submission's CPU time while its session waits for the grader's next request.
IDLE_TICK = 0.5
# How long _reap_orphans goes on killing and reaping: where nothing kills the submission's processes at once (no
# isolation), ones that fork as fast as they are killed would hold it for ever.
REAP_SECONDS = 10.0
# CPU seconds past its limit a loading cell may run before the session ends the load: the loader stops a cell where
# it runs at the limit itself (child._run_limited, red-c26 X35-c26-2) and goes on with the next; this is the backstop
# for a cell that catches the loader's stop and runs on, or sits in one C call (the stop comes when it returns).
LOADING_GRACE = 1.0


class _Loader:
    """The session's handle on one loaded program."""

    def __init__(self, cells: list[tuple[str, str]], config: WorkerConfig, modules: dict, session: _Session) -> None:
        self.failure: Result | None = None  # why the program could not load: every call's answer
        self.errors: list[str] = []
        self.stops: dict[str, int] = {}  # where each cell that raised stopped (the loader's Loaded)
        self.bound: dict[str, list[str]] = {}  # the names each of them bound as it ran (the loader's Loaded)
        self.session = session
        self.out = ""  # which limit ran out while waiting for the loader: see _next
        commands_r, self.commands = os.pipe()
        results, results_w = os.pipe()
        try:
            self.pid = forks.fork()
        except forks.GraderForkError as error:
            for fd in (commands_r, self.commands, results, results_w):
                os.close(fd)
            self.pid, self.commands, self.failure = 0, -1, session.refused(error)
            return
        if self.pid == 0:
            # its scratch folder, for the loader's fchdir, and the session's writable /proc (Isolation.drop closes both)
            held = {getattr(session.isolation, name, -1) for name in ("scratch_fd", "proc_fd")}
            _close_fds_except({0, 1, 2, commands_r, results_w} | {fd for fd in held if fd >= 0})
            child.loader_main(cells, config.limits, session.isolation, session.workdir, commands_r, results_w, modules)
        os.close(commands_r)
        os.close(results_w)
        self.answer_bytes = config.limits.answer_kb * 1024
        # An answer's line: the answer, and its reason and fields (cut to 500 characters when read, but written whole).
        self.lines = Lines(results, FROM_LOADER, limit=self.answer_bytes + FIELDS_BYTES, answer_bytes=self.answer_bytes)
        self.seconds = config.limits.seconds
        self._wait_loaded(len(cells))

    def _next(self, grace: float = 0.0) -> Read | None:
        """The loader's next message, or None when a limit ran out first (self.out says which): `seconds`
        (+ `grace`) of the submission's CPU time from now, WALL_FACTOR times that of wall-clock time (less
        the loader's waits for a CPU: cputime.Stopwatch), the submission's budget of either, or its memory or
        disk budget where no cgroup or tmpfs bounds them (_Session.over)."""
        session, limit = self.session, self.seconds + grace
        cpu_end, stopwatch, started = session.clock.seconds() + limit, None, time.monotonic()
        self.out = session.over()  # before the first wait too: a daemon may have grown while no call ran
        if self.out:
            return None
        while (message := self.lines.next(time.monotonic() + TICK)) is None:
            # Most messages come within a tick, so the backstop's stopwatch starts only after one (reading the
            # waits walks /proc): from `started`, less the waits after that first tick. The loader's tree only,
            # not a daemon it left: the CPU time charged covers those, and each more process whose waits were
            # taken off (a niced one, on a busy machine: a second of waits a second) would hold the backstop off.
            stopwatch = stopwatch or Stopwatch(self.pid, started)
            used, spent = session.clock.seconds(), session.spent()
            self.out = session.over() or (
                "budget" if spent == "cpu" else "cpu" if used >= cpu_end else "budget wall" if spent == "wall"
                else "wall" if stopwatch.seconds() >= limit * WALL_FACTOR else "")
            if self.out:
                return None
        return message

    def _time_out(self, what: str) -> Result:
        """Why `what` has no answer: which limit _next saw run out. One stopped by the wall-clock backstop
        alone says so (`wall`), to be run again once (_Session.answer)."""
        budget, isolation = self.session.budget, self.session.isolation
        if self.out == "memory budget":  # named as the memory cgroup's OOM kill is (the summary: Isolation.end)
            return Result(False, None, f"{what} was stopped: {describe_memory_budget(isolation.budgets.memory_mb)}")
        if self.out == "disk budget":
            return Result(False, None, f"{what} was stopped: {describe_disk_budget(isolation.budgets.disk_mb)}")
        if self.out == "budget":
            return Result(False, None, f"{what} was stopped: {describe_budget(budget)}", "time budget")
        if self.out == "budget wall":
            return Result(False, None, f"{what} was stopped: {describe_budget(budget * WALL_FACTOR, wall=True)}",
                          "time budget")
        if self.out == "cpu":
            return Result(False, None, describe_time_out(what, self.seconds), "time")
        return Result(False, None, describe_wall_time_out(what, self.seconds * WALL_FACTOR, self.seconds), "time",
                      wall=True)

    def _wait_loaded(self, cells: int) -> None:
        """Until the loader says it loaded the program's `cells`: one "cell" message each, and no more (each
        starts that cell's time limit: a loader that kept sending them would never run out of time).

        Until its first word (the first cell's LoadingCell, sent before that cell runs, or Loaded) the loader
        confines itself and no code of the notebook has run: a loader that fails, ends, or uses its own time
        limit before that word is the grading machine's failure (a kernel that refuses the confinement or never
        finishes it), a RuntimeError, never a time-out of the notebook's. A budget of the submission's that runs
        out meanwhile stays the submission's: its earlier checks spent it; and so does the memory budget's OOM
        killer when it picked the loader (files the submission left in its scratch space hold its cgroup full)."""
        cell = ""
        while True:
            message = self._next(LOADING_GRACE)
            if not cell and not isinstance(message, (LoadingCell, Loaded)) and (
                    message is not None or self.out in ("cpu", "wall")):
                pid = self.pid
                memory = isinstance(message, Closed) and self._killed_for_memory()
                self.stop()
                if not memory:
                    raise RuntimeError(self._unconfined(pid, message))
                self.failure = Result(False, None, f"the notebook's process was killed by the kernel before its first "
                                                   f"cell: {memory}")
                return
            if message is None:
                self.failure = self._time_out(f"cell {cell or 'the first cell'}")
            elif isinstance(message, LoadingCell) and cells > 0:
                cells -= 1
                cell = message.name
                continue
            elif isinstance(message, Loaded):  # student code has run: its errors are the notebook's data
                self.errors = [as_notebooks_load_error(error) for error in message.errors]
                self.stops, self.bound = message.stops, message.bound
                return
            elif isinstance(message, Fatal):  # the session names the cell (the one it was told runs), the rest is data
                words = PRINTED_PAST_LIMIT if message.limit == "output" else as_notebooks(
                    message.reason.removeprefix(f"cell {cell} "))
                self.failure = Result(False, None, f"cell {cell} {words}", message.limit)
            else:
                self.failure = Result(False, None, f"cell {cell} {self._ended(message)}")
            self.stop()
            return

    def _killed_for_memory(self) -> str:
        """The memory budget's words when the loader, which closed its pipe, ended by SIGKILL and the memory cgroup
        counted an OOM kill since the session last looked; "" otherwise (it is reaped either way)."""
        status = self._reap(kill=True) or 0  # never None once killed and waited for
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            return self.session.memory_killed()
        return ""

    def _unconfined(self, pid: int, message: Read | None) -> str:
        """Why loader `pid` never came to the notebook's first cell (`message`, its first; None: a time limit
        ran out first): the grading machine's failure."""
        if isinstance(message, Fatal):  # its own word (child.loader_main): a step of the confinement failed
            why = message.reason
        elif message is None:
            limit = (f"{self.seconds:g} s of CPU time" if self.out == "cpu" else
                     f"{self.seconds * WALL_FACTOR:g} s of wall-clock time")
            why = f"the loader {pid} had not confined itself after {limit} (the kernel never finished it)"
        else:
            why = f"the loader {pid} {'ended' if isinstance(message, Closed) else 'wrote what is no message'}"
        return f"{why}, before any of the notebook's code ran: the grading machine's fault, not the notebook's"

    def run(self, calls: list[Call], fresh: bool, together: bool = False) -> list[Result]:
        """Answers to `calls`, in order, each within the time limits from the end of the one before.

        Fewer answers than calls when the loader ended on the way (it is then stopped): after a
        time-out, a failure to load, or a call that ended the process. `fresh`: the loader times its
        check children itself and answers for one that ran out of time; the deadline here is then
        BACKSTOP_SECONDS later.
        """
        if self.failure:
            return [self.failure]
        # Within the check's wall-clock backstop: a loader that shrank its pipe and stopped itself takes no more.
        deadline = time.monotonic() + self.seconds * WALL_FACTOR
        if not send(self.commands, Batch(calls, fresh, together), deadline):
            self.out = "wall"
            answer = self._time_out("the check") if time.monotonic() >= deadline else \
                Result(False, None, "the notebook's process ended before the check could start")
            self.stop()
            return [answer]
        answers: list[Result] = []
        asked = deadline - self.seconds * WALL_FACTOR  # when the call now answered could start, at the earliest
        for _ in calls:
            message = self._next(grace=BACKSTOP_SECONDS if fresh else 0.0)
            waited, asked = time.monotonic() - asked, time.monotonic()  # the next call's child is forked after this
            if message is None:
                answers.append(self._time_out("the check"))
                if not self.out.endswith(" budget"):  # a time limit's: not the memory or disk budget
                    self.session.hurry(0)
                self.stop()
                break
            if isinstance(message, Malformed) and message.kind is Result:  # the loader goes on to the next call
                message = Result(False, None, UNREADABLE)
            if isinstance(message, Oversized):  # dropped as it was read: the loader goes on to the next call
                answer = self._too_large(message.fault)
            elif isinstance(message, Result):
                answer = self.session.judge(message, self.pid, waited)
            else:
                answers.append(Result(False, None, self._ended(message)))
                self.stop()
                break
            # Measured as the grader will read it (written again here, a number or a character may take more room
            # than the loader gave it): the grader reads no answer past the limit, and no more than the budget.
            size = len(encode(answer.answer()))
            if size > self.answer_bytes + FIELDS_BYTES:
                answer = self._too_large(f"larger than {self.answer_bytes // 1024:,} KB")
            answers.append(answer)
            self.session.answered += size
            if self.session.answered > self.session.answers:
                answers[-1] = self.session.rest()
                self.stop()
                break
            if answer.limit == "time":
                self.session.hurry(self.pid)
            if answer.limit == "output":  # the process stopped itself after saying so
                self.stop()
                break
        return answers

    def _too_large(self, fault: str) -> Result:
        """The answer of a check whose answer is past what the grader reads from one (`fault`: how)."""
        return Result(False, None, describe_answer_fault(fault, self.answer_bytes), "answer")

    def _ended(self, message: Read) -> str:
        """Why the loader sent no answer: it wrote something that is not one (it is killed), or it closed
        its pipe: then how it ended by itself, or, still running a second later, that it closed the pipe."""
        if not isinstance(message, Closed):
            self._reap(kill=True)
            return ("wrote to the grader's pipe something that is not an answer: write only through print(), "
                    "not to file descriptors (os.write)")
        give_up = time.monotonic() + 1.0
        while (status := self._reap(kill=False)) is None:
            if time.monotonic() > give_up:
                self._reap(kill=True)
                return "closed the grader's pipe (os.close?) before the check finished"
            time.sleep(0.01)
        return self.session.describe_status(status)

    def _reap(self, kill: bool) -> int | None:
        """The loader's wait status once it has ended (after SIGKILL, with `kill`); None while it runs."""
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            status = forks.wait_killed(self.pid, "the loader")
        else:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if not pid:
                return None
        self.pid = 0
        return status

    def stop(self) -> None:
        """Kill the loader, its group, and everything it started (_Session.end_processes)."""
        if self.pid:
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            forks.wait_killed(self.pid, "the loader")
            self.pid = 0
        if self.commands >= 0:
            os.close(self.commands)
            self.lines.close()
            self.commands = -1
        self.session.end_processes()
        if self.session.isolation is not None:
            self.session.isolation.note_scratch()


def _close_fds_except(keep: set[int]) -> None:
    """A loader keeps only its own pipes: not the worker's protocol, not other loaders' pipes."""
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 256))
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _children() -> list[int]:
    """The worker's child processes: from the kernel's list when it keeps one, else from all of /proc."""
    me = os.getpid()
    try:
        with open(f"/proc/self/task/{me}/children") as children:
            return [int(pid) for pid in children.read().split()]
    except OSError:
        pass
    found = []
    try:
        entries = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:  # no /proc: nothing more we can find
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat") as stat:
                if int(stat.read().rsplit(")", 1)[1].split()[1]) == me:
                    found.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return found


def _reap_orphans(kill_all: Callable[[], None] | None = None, spent: Callable[[], bool] = lambda: False) -> None:
    """Kill and reap every process the worker (or a session) adopted (a student's daemons end up here). Each round
    `kill_all` first kills every process of the submission at once (Isolation.kill_processes), as the kernel does
    it whole with respect to fork: killed one at a time, processes that each fork two and end at the process budget
    refill as fast as they die, and would hold the loop for ever. Rounds end when none is left, after REAP_SECONDS,
    or once `spent` (the submission's budget, in the session) says so after a round: what is left then dies with
    the session (its PID namespace; without, the worker's kill of its uid), never holding the grader past it."""
    give_up = time.monotonic() + REAP_SECONDS
    while orphans := _children():
        if kill_all is not None:
            kill_all()
        for pid in orphans:
            try:
                os.kill(pid, signal.SIGKILL)
                forks.wait_killed(pid)
            except (ProcessLookupError, ChildProcessError):
                pass
        if time.monotonic() >= give_up or spent():
            return


def _die_with_parent() -> None:
    """This process is killed when its parent ends: a grader stopped by Ctrl-C, or one that gave up
    waiting and killed its worker, takes the worker and its session with it."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _import_path(name: str, path: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _Session:
    """Serves one submission: its programs and calls, until the caller ends it.

    Forked from the worker for each submission (confined first by the isolation, when there is
    one), so no session holds anything of another submission, and ending it ends all it started.
    """

    def __init__(self, config: WorkerConfig, modules: dict, isolation: Any, request: Begin) -> None:
        """`request`: the caller's budgets for the submission, and what it used of them before (protocol.Begin)."""
        self.config, self.modules, self.isolation = config, modules, isolation
        self.workdir = isolation.workdir if isolation is not None else config.workdir
        self.budget, self.used = request.seconds, request.used
        self.answers, self.answered = request.answers, request.answered
        self.charged = 0.0  # CPU seconds the grader spent reading this session's answers, as it last said
        self.loader: _Loader | None = None
        # Made again in serve(), in the session's own process: its CPU time, and its wall-clock time less waits
        # while it serves a request (the stopwatch is stopped between them).
        self.clock, self.stopwatch = SubmissionClock(None), Stopwatch(os.getpid())
        self.seen = {"oom_kill": 0, "other_oom_kill": 0, "fork_refused": 0}  # the cgroups' counts, as last looked at
        self.hurried = False  # a check ran out of time: the session runs at HURRIED_NICE (hurry)

    def _new(self, event: str) -> bool:
        """Whether the cgroups counted `event` (isolation.py's _Cgroups.events) since the last look."""
        cgroups = self.isolation.cgroups if self.isolation is not None else None
        if cgroups is None:
            return False
        count, self.seen[event] = self.seen[event], cgroups.events()[event]
        return self.seen[event] > count

    def describe_status(self, status: int) -> str:
        """describe_status, told by the memory cgroup's counts whether an OOM killer was the SIGKILL (_oom_killed)."""
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        return describe_status(status, self.isolation.budgets.memory_mb if self._oom_killed(killed) else 0)

    def memory_killed(self) -> str:
        """For a process ended by SIGKILL: the memory budget's words when its OOM killer was the SIGKILL, else ""."""
        return describe_memory_budget(self.isolation.budgets.memory_mb) if self._oom_killed(True) else ""

    def _oom_killed(self, killed: bool) -> bool:
        """Whether the memory budget's OOM killer killed a process of the submission's since the last look. A
        process `killed` (SIGKILL) while only another OOM killer killed meanwhile (the machine's, or a limit's above
        the kit's cgroups: a container's) died of memory the machine was short of while the submission kept within
        its budget: a RuntimeError, the grader's failure, never a check's answer (isolation.py's _Cgroups.events)."""
        budget, other = self._new("oom_kill"), self._new("other_oom_kill")
        if killed and other and not budget:
            raise RuntimeError("a process of the submission's was killed by the kernel's OOM killer for memory the "
                               "grading machine (or a limit above the grader's) was short of, not for the "
                               "submission's memory budget: the grading machine's fault, not the notebook's")
        return budget

    def judge(self, answer: Result, loader: int, waited: float) -> Result:
        """A failed answer of loader `loader`'s, sent `waited` seconds after its call could start, in the session's
        words: the loader and its check children ran student code, which may write any answer line itself (to a pipe
        it holds), so what they send is the notebook's data. The words of a limit are the session's (a time limit's,
        the output limit's, a check child's end as its wait `status` reads); a claim the session could not have seen
        come true is the notebook's own words (the wall-clock backstop, which has the call run again, sooner than
        it can pass); a claim that no check child could be forked is judged from what the session sees
        (_refused_fork); any other reason is kept only in a shape the loader writes, else quoted (as_notebooks)."""
        if answer.ok:
            return answer
        if answer.limit == "fork":
            return self._refused_fork(loader)
        if answer.status is not None:  # the loader's word (a wait status, as read): described here
            return replace(answer, reason=self.describe_status(answer.status))
        seconds = self.config.limits.seconds
        if answer.limit == "time":
            words = (describe_wall_time_out("the check", seconds * WALL_FACTOR, seconds) if answer.wall else
                     describe_time_out("the check", seconds))
            if answer.wall and waited < seconds * WALL_FACTOR * SOONEST_WALL_STOP:
                return Result(False, None, in_notebooks_words(words))
            return replace(answer, reason=words)
        if answer.limit == "output":
            return replace(answer, reason=PRINTED_PAST_LIMIT)
        return replace(answer, reason=as_notebooks(answer.reason, (NOT_RUN_TOGETHER, UNREADABLE)))

    def _refused_fork(self, loader: int) -> Result:
        """Why loader `loader` could not fork a check child, from facts the session reads itself: the pids cgroup
        counted a refusal, or (where none counts) the uid's processes fill the RLIMIT_NPROC the loader was given:
        the process budget; the loader's own limit lower than it was given: the notebook lowered it. Otherwise
        the session forks a process itself: when the machine has none to spare, the grader's failure (refused:
        no score); when it has, the notebook's process refused it (a limit held low a while, os.fork replaced).
        So no word of the notebook's can turn its own failure into no score, nor a shortage of the machine's
        into a failed check."""
        budget = describe_process_budget(self.isolation.budgets.processes if self.isolation is not None else 0)
        given = self.isolation.process_limit() if self.isolation is not None else None
        if self._new("fork_refused") or (given is not None and process_limits.tasks_of(self.isolation.uid) >= given):
            return Result(False, None, budget, "process budget")
        own = process_limits.process_limit_of(loader)
        if own is not None and own < (given if given is not None else resource.getrlimit(resource.RLIMIT_NPROC)[0]):
            return Result(False, None, describe_own_process_limit(own), "process budget")
        try:
            probe = forks.fork()
        except forks.GraderForkError as error:
            if self._new("fork_refused"):  # the submission's processes took the last of its budget meanwhile
                return Result(False, None, budget, "process budget")
            return self.refused(error, "a check's process")
        if probe == 0:
            os._exit(0)
        os.waitpid(probe, 0)
        return Result(False, None, REFUSED_BY_NOTEBOOK, "process budget")

    def refused(self, error: forks.GraderForkError, what: str = "the notebook's process") -> Result:
        """Why the session could fork no process (`what`: a loader, every process of the submission's having ended
        before, or its probe for a check's: _refused_fork): files it left in the scratch space hold the memory
        budget (its cgroup says so; the program's calls fail with that cause), or else the grading machine is short
        of processes or memory: a RuntimeError, the grader's failure, never a
        check's answer (no score is given)."""
        cgroups = self.isolation.cgroups if self.isolation is not None else None
        if cgroups is not None and "memory budget" in cgroups.hit():
            return Result(False, None, f"{what} could not start: "
                                       f"{describe_memory_budget(self.isolation.budgets.memory_mb)}")
        raise RuntimeError(f"the session could not start {what} ({error.strerror}): the grading machine's fault, "
                           "not the notebook's")

    def spent(self) -> str:
        """Which of the submission's budgets is used up: "" (none), "cpu", "wall" (the backstop: the wall-clock time
        of the requests served, less waits for a CPU) or "answers" (the bytes of its answers)."""
        return ("answers" if self.answered > self.answers else "cpu" if self.cpu_spent() else
                "wall" if self.used + self.stopwatch.seconds() >= self.budget * WALL_FACTOR else "")

    def cpu_spent(self) -> bool:
        """Whether the submission used its budget of CPU time."""
        return self.used + self.seconds() >= self.budget

    def over(self) -> str:
        """The memory or disk budget the submission passed where no cgroup or tmpfs bounds it (Isolation.over):
        "memory budget", "disk budget" or ""."""
        return self.isolation.over(os.getpid()) if self.isolation is not None else ""

    def seconds(self) -> float:
        """The CPU seconds this session charged the submission: its processes' (never this session's own
        bookkeeping: SubmissionClock), and the grader's reading of their answers (the caller's word, sent with each
        request)."""
        return self.clock.seconds() + self.charged

    def serve(self) -> None:
        forks.become_subreaper()  # a student's daemons end up here, to be killed with their loader
        cgroups = self.isolation.cgroups if self.isolation is not None else None
        self.clock, self.stopwatch = SubmissionClock(cgroups.cpu if cgroups else None), Stopwatch(os.getpid())
        # The backstop counts from a request's arrival to its reply only: between them the session waits for the
        # grader, whose own work (explaining failures, the reference's sandbox) or stop (Ctrl-Z, swapped out) is
        # not the submission's. Its processes' CPU time meanwhile is still charged (the clock runs throughout).
        self.stopwatch.stop()
        requests = Lines(0, TO_SESSION, limit=sys.maxsize)
        write(1, Ready(self.isolation.level if self.isolation else "none"))
        cells: list[tuple[str, str]] = []
        while isinstance(request := self._next_request(requests), Batch):
            self.stopwatch.start()
            if request.cells is not None:  # a new program; otherwise the caller means the one it sent last
                cells = request.cells
                if self.loader:
                    self.loader.stop()
                    self.loader = None
            self.charged = max(self.charged, request.charged)
            answered = self.answered
            answers = self.answer(cells, request.calls, request.fresh, request.together)
            load_errors, stops, bound = ((self.loader.errors, self.loader.stops, self.loader.bound) if self.loader
                                         else ([], {}, {}))
            kills = self.isolation.oom_kills() if self.isolation else 0
            reply = encode(Answers(answers, load_errors, self.seconds(), kills, stops, bound))
            self.stopwatch.stop()  # before the write: a grader that is slow to read is not the submission's either
            # Charged whole, load errors too, as the grader counts every byte it reads: the answers counted on the
            # way (to stop at the budget) give way to the reply's own bytes.
            self.answered = answered + len(reply)
            write(1, reply)
        if isinstance(request, Malformed):  # the grader's own failure: it reads this as the session's
            write(1, Failure(f"it could not read the grader's request ({request.reason})"))
        if self.loader:
            self.loader.stop()

    def _next_request(self, requests: Lines) -> Read:
        """The grader's next request. Meanwhile whatever the submission left running (a daemon, a thread of the
        loaded program's) is charged its CPU time, and killed once that spends the budget: nothing else stops it
        between requests (no check's limit runs, and a process's CPU rlimit is a soft one it may raise)."""
        while (request := requests.next(time.monotonic() + IDLE_TICK)) is None:
            if self.cpu_spent():
                if self.loader:
                    self.loader.stop()
                    self.loader = None
                self.end_processes()
        return request

    def end_processes(self) -> None:
        """Kill and reap every process of the submission's (its loaders have ended): all at once where the isolation
        can (_reap_orphans), and no longer than its budget allows."""
        _reap_orphans(self.isolation.kill_processes if self.isolation is not None else None,
                      lambda: self.spent() in ("cpu", "wall"))

    def hurry(self, loader: int) -> None:
        """After a check ran out of time: the kernel runs this submission ahead of the others from now on.

        Each check that loops takes its whole limit, so a submission that timed out once is likely the one
        the class waits for at the end; ahead of the others it finishes while they do, not after them. Its
        limits are CPU time (and the backstop leaves out waits for a CPU), so no grade depends on this.
        The session gets the priority (loaders forked later inherit it), and so does the process group of
        `loader` (0: none), the loader now running and the check children it has forked. Without the
        privilege (not root) nothing changes. Once a session: what it forks afterwards inherits it."""
        if self.hurried:
            return
        self.hurried = True
        for which, pid in [(os.PRIO_PROCESS, 0)] + ([(os.PRIO_PGRP, loader)] if loader else []):
            try:
                os.setpriority(which, pid, HURRIED_NICE)
            except OSError:
                pass

    def answer(self, cells: list[tuple[str, str]], calls: list[Call], fresh: bool, together: bool = False) -> list[Answer]:
        """An answer for each call. A call that ends the loader costs itself: the rest go on in a new one,
        each in a child of its own. After a time-out in a batch that is not fresh, the rest are not run
        (what the looping call left behind would be their state); in a fresh one they go on. A call (or a
        load) stopped by the wall-clock backstop, not by its CPU time, is run again once, alone: in a newly
        loaded program, with nothing else of the submission running; only a second stop is charged."""
        answers: list[Result] = []
        again: set[int] = set()  # the calls run again after the backstop stopped them
        while len(answers) < len(calls) and not self.spent():
            loader = self.loader
            if loader is None or (loader.pid == 0 and not loader.failure):  # not loaded, or ended by a call
                loader = self.loader = _Loader(cells, self.config, self.modules, self)
            new = loader.run(calls[len(answers):], fresh, together)
            stopped = [n for n, answer in enumerate(new) if answer.wall and len(answers) + n not in again]
            if stopped:  # from there on, again (in a fresh batch the calls after it ran already, but not alone)
                again.add(len(answers) + stopped[0])
                answers += new[:stopped[0]]
                loader.stop()
                self.loader = None
                continue
            answers += new
            limit = answers[-1].limit
            if loader.failure or limit == "time budget" or (limit == "time" and not fresh):
                break
            fresh, together = True, False  # a call ended the process: the rest run one child each, so one crash
            # costs one call
        return [answer.answer() for answer in answers + [self.rest() for _ in calls[len(answers):]]]

    def rest(self) -> Result:
        """The answer of a call not run: the program could not load (the call fails with that cause), a budget is
        spent, or (in a batch that is not fresh) an earlier call ran out of time (marked not_run, the session's
        word)."""
        if self.loader and self.loader.failure:  # the program could not load: every call says why
            return self.loader.failure
        spent = self.spent()
        if spent == "answers":
            return Result(False, None, describe_answers_budget(self.answers >> 20), "answer budget", not_run=True)
        if spent:
            wall = spent == "wall"
            return Result(False, None, describe_budget_spent(self.budget * (WALL_FACTOR if wall else 1), wall),
                          "time budget", not_run=True)
        return Result(False, None, NOT_RUN_AFTER_TIME_OUT, not_run=True)


def _serve(config: WorkerConfig) -> None:
    """The worker: import once, then start a session per submission as the caller asks.

    It never holds student code itself: each session is forked from it and gets the programs.
    """
    _die_with_parent()
    sys.path[:0] = config.path
    for name in config.preload:
        __import__(name)
    modules = {}
    for name, path in config.modules.items():
        _import_path(name, path)  # fails here, not in a check, if it is broken; warms its imports
        modules[name] = compile(Path(path).read_text(), path, "exec")
    child.compile_trusted(config.trusted_cells)
    isolation = None
    if config.isolation:
        settings = config.isolation
        module = _import_path("isolation", settings["path"])
        isolation = module.Isolation(module.Budgets(**settings["budgets"]), config.path, settings.get("level"))
    forks.become_subreaper()
    gc.freeze()  # sessions, loaders and check children inherit these objects; collections in them skip them
    requests = Lines(0, TO_WORKER, limit=sys.maxsize)
    write(1, Ready(isolation.level if isolation else "none"))
    # One request at a time: while a session runs, it alone reads the requests (this process waits).
    while isinstance(request := requests.next(), Begin):
        if isolation:
            isolation.begin()
        pid = _start_session(_Session(config, modules, isolation, request))
        _, status = os.waitpid(pid, 0) if pid else (0, 0)
        _reap_orphans(isolation.kill_processes if isolation else None)  # without namespaces, what the session left
        kills = isolation.oom_kills() if isolation else 0  # before end() removes the cgroups
        hit = isolation.end(status) if isolation else []
        write(1, Ended(hit, kills))
    if isinstance(request, Malformed):  # the grader's own failure: __main__ tells it so
        raise ValueError(f"the worker could not read the grader's request ({request.reason})")


def _failure(exc: Exception) -> str:
    """A started session's failure, in one line: a RuntimeError (the machine's: forks.wait_killed,
    _Loader._wait_loaded) names its cause itself."""
    return str(exc) if isinstance(exc, RuntimeError) else f"{type(exc).__name__}: {exc}"


def _start_session(session: _Session) -> int:
    """Fork the process that serves one submission (0 when the grader cannot: it has told the caller);
    it tells the caller in one line if it cannot start, or fails once started."""
    try:
        pid = forks.fork()
    except forks.GraderForkError as exc:
        error = f"the grader could not start the submission's sandbox: {exc.strerror}"
        write(1, Failure(error))
        return 0
    if pid:
        return pid
    started = False
    try:
        _die_with_parent()
        if session.isolation:
            session.isolation.enter()
        started = True
        session.serve()
    except Exception as exc:  # the grader's failure, never the notebook's: the caller raises it
        write(1, Failure(_failure(exc) if started else f"the submission's sandbox could not start: {exc}"))
    finally:
        os._exit(session.isolation.exit_code if session.isolation else 0)


if __name__ == "__main__":
    try:
        config = read(sys.argv[1], CONFIG)
        if not isinstance(config, WorkerConfig):
            raise ValueError("the worker could not read its configuration "
                             f"({config.reason if isinstance(config, Malformed) else 'none'})")
        _serve(config)
    except Exception as exc:  # the caller's one line on why the worker could not start (its stderr goes nowhere)
        write(1, Failure(f"{type(exc).__name__}: {exc}"))
        sys.exit(1)
