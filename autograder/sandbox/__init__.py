"""Run a notebook's code in other processes, under limits, and bring back plain data only (the grader's).

Four roles, one module each; only lines of JSON cross between processes:
* the caller (this module): `Sandbox` starts the worker, sends programs and calls, reads `Outcome`s;
* the worker (worker.py, a script run as `python -s -P -B worker.py <config>`): imports the trusted modules
  once, forks a session per submission (confined by isolation.py as root), which forks a loader per
  program, enforces the limits in CPU time (cputime.py) and kills what student code left running;
* the child (child.py): a loader confines itself, runs the cells, answers calls, or forks a check child each;
* the messages (messages.py): the one-line reasons; program.py turns a notebook into the cells to run;
  protocol.py: every message between them, a typed record (lines of JSON), with the one encoder and the one
  reader that rejects a malformed one; every read and write with a deadline.
  uids.py, forks.py and cputime.py: the worker's uid, its retried forks and bounded waits for the processes
  it killed, the CPU time it charges;
  seccomp.py: the system-call filter each loader puts itself and what it starts under; landlock.py: the
  file-system allow-list a loader puts itself under where the session has no mount namespace.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .cputime import WALL_FACTOR, Stopwatch, tree_seconds
from .forks import KILLED_SECONDS, NeverEnded
from .messages import (
    NOT_RUN_AFTER_TIME_OUT,
    NOT_WRITTEN,
    describe_answers_budget,
    describe_exception,
    describe_memory_budget,
    describe_no_answer,
)
from .program import MISSING, Cell, program_from_notebook
from .protocol import (
    BACKSTOP_SECONDS,
    FIELDS_BYTES,
    TO_GRADER,
    Answers,
    Batch,
    Begin,
    Call,
    End,
    Ended,
    Failure,
    Limits,
    Lines,
    Message,
    Ready,
    WorkerConfig,
    encode,
    send,
)

__all__ = ["MISSING", "NOT_RUN_AFTER_TIME_OUT", "NOT_WRITTEN", "Budget", "Cell", "Limits", "Outcome", "Sandbox",
           "describe_exception", "program_from_notebook"]

WORKER = Path(__file__).with_name("worker.py")
ISOLATION = Path(__file__).with_name("isolation.py")  # the `path` of the `isolation` argument


@dataclass(frozen=True)
class Budget:
    """What one submission may use in all (a session, and any that continue it after its worker was lost)."""

    seconds: float = 45.0  # CPU time of its processes, and of the grader's reading of their answers
    answers_mb: int = 8  # the JSON of its replies (answers and load errors), as the grader reads them


@dataclass
class Outcome:
    """What came back from one call: a value, or a one-line reason it has none."""

    ok: bool
    value: Any = None
    reason: str = ""
    limit: str = ""  # the limit that ended it, one of protocol.LIMITS ("time", "memory", "answer budget", ...)
    not_run: bool = False  # the call was never made (a budget spent, an earlier call out of time): `reason` says why
    load_errors: list[str] = field(default_factory=list)  # cells that raised while loading
    stops: dict[str, int] = field(default_factory=dict)  # the line where each of them stopped (protocol.Loaded)
    bound: dict[str, list[str]] = field(default_factory=dict)  # the names each of those bound as it ran (Loaded)


# -------------------------------------------------------------- the caller's side

# Modules a notebook commonly imports; the worker imports them once so checks start warm (and so
# they work after privileges are dropped, when the interpreter's own files may be unreadable).
PRELOAD = (
    "numpy", "numpy.linalg", "numpy.random", "numpy.fft", "secrets", "hashlib", "math", "cmath",
    "random", "statistics", "fractions", "decimal", "numbers", "itertools", "functools", "operator",
    "collections", "collections.abc", "heapq", "bisect", "contextlib", "dataclasses", "typing", "types",
    "copy", "weakref", "time", "datetime", "string", "re", "textwrap", "json", "struct", "inspect",
    "traceback", "warnings", "abc", "enum", "subprocess", "signal",
)

# All the worker, and so student code, gets of the grader's environment: an allow-list, so that what the
# grader holds (a hub's JUPYTERHUB_API_TOKEN, cloud keys, the instructor's paths) stays with it. HOME is
# each loader's scratch space (child.py). PYTHONHASHSEED fixes the salt of str and bytes hashes for the worker and
# every process it forks: a grade is a function of the notebook, also where the student's code follows the order
# of a set of names (a wrong parameters() over set(vars(self)) scored 2.29, 2.07, 1.93 on three runs: red-b12 6).
# The worker is started `-s -P` rather than `-I` (which adds -E and so drops that one variable): the environment it
# gets is this allow-list whole, so no other PYTHON* variable reaches it anyway.
_ENVIRONMENT = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0",
                **{name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}}

# How long the caller waits for the worker, on top of what the limits allow a request: starting the worker
# (imports numpy and the modules; slow on a loaded machine), and setting up or ending a session. Past it the
# worker is wedged (student code stopped the session's process, or jammed a pipe): it is killed.
STARTUP_SECONDS = 120.0
MARGIN_SECONDS = 30.0
# How often the caller looks at the clock while it waits for the worker: a look more than this late is the caller's
# own stop (Ctrl-Z, swapped out), which does not count against the worker's deadline.
STALLED_SECONDS = 1.0


class _Waited:
    """How long the caller has waited for the worker's reply to a request, as its last resort against a wedged
    worker counts it: wall-clock time less the time during which a process of the worker's tree (its session,
    the loaders, student code) waited for a CPU (cputime.Stopwatch), as a busy machine keeps them waiting and a
    wedged worker does not; but never less than the CPU time they used meanwhile, so that processes that keep each
    other waiting (more busy threads than CPUs) do not hold it off.

    `cost`: the caller's CPU seconds its walks of /proc took. They are the grader's bookkeeping, not its reading of
    answers, and their number follows the wall-clock time of the request (so the machine's load): never charged to
    the submission (Sandbox.call_many)."""

    def __init__(self, pid: int) -> None:
        started = time.thread_time()
        self.pid, self.stopwatch, self.cpu = pid, Stopwatch(pid), tree_seconds(pid)
        self.cost = time.thread_time() - started

    def seconds(self) -> float:
        started = time.thread_time()
        try:
            return max(self.stopwatch.seconds(), tree_seconds(self.pid) - self.cpu)
        finally:
            self.cost += time.thread_time() - started


def _wait_killed(worker: subprocess.Popen) -> None:
    """Wait for `worker`, sent SIGKILL, to end: within KILLED_SECONDS, or NeverEnded (the machine's failure)."""
    try:
        worker.wait(timeout=KILLED_SECONDS)
    except subprocess.TimeoutExpired:
        raise NeverEnded("the sandbox worker", worker.pid) from None


# The grader's interpreter, its folder's links resolved (not the interpreter's own: a venv's python links to the
# system's, and the venv is found beside the name it was started by). Started through a link (a .venv that links to
# a shared one, a course in a home folder behind a link), the worker's sys.prefix would be the link, and the session's
# allow-list (isolation.allowed_paths, made from the running worker) would hold the link and not the folder: every
# module not imported before the session began was not found, or no session started at all (red-b13 5). Read at
# each start, as sys.executable is.
def _interpreter() -> str:
    return os.path.join(os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable))


class Sandbox:
    """A warmed worker that runs calls on programs, one submission at a time. Use as a context manager.

    modules: trusted modules the calls may name, as {module name: file path}.
    path: folders put in front of the worker's sys.path (the assignment's folder, for `engine`).
    preload: more modules to import once in the worker (after `path` is set), so the notebook's
        imports of them work even when student code may not read their files.
    isolation: for the grader running as root, how to confine each submission (isolation.py):
        {"path": ISOLATION, "budgets": {...}}.
    trusted_cells: cells of the course's own (given cells, the release's stubs) that programs may hold:
        the worker compiles them once, and a loader runs the compiled code for a cell of the same name
        and text instead of compiling it again (student cells are compiled in the loader).

    budget: what one submission may use in all (`begin`'s seconds, when it names none).

    `begin` starts a submission's session with a time budget and `end` ends it; a call outside a submission
    starts one with `budget`. The grader reads each reply within what the session may send (Limits.answer_kb an
    answer), and its CPU time reading them is charged to the submission's time budget. A session lost with its
    worker (killed when it gave no answer in time, or one the grader could not read) is continued by the next
    call in a new worker's session with what is left of the budget: never with a new one. A session that fails
    itself (the grader's code, or the machine under it: worker.py) raises RuntimeError, never an Outcome.
    """

    def __init__(
        self,
        modules: Mapping[str, str | os.PathLike],
        path: Sequence[str | os.PathLike] = (),
        limits: Limits = Limits(),
        preload: Sequence[str] = (),
        isolation: Mapping[str, Any] | None = None,
        trusted_cells: Sequence[Cell] = (),
        budget: Budget = Budget(),
    ) -> None:
        self.limits, self.budgets = limits, budget
        self.config = WorkerConfig(
            modules={name: str(Path(p).resolve()) for name, p in modules.items()},
            path=[str(Path(p).resolve()) for p in path],
            preload=[*PRELOAD, *preload],
            limits=limits,
            isolation=dict(isolation) if isolation else None,
            trusted_cells=[(cell.name, cell.source) for cell in trusted_cells],
            workdir=None if isolation else tempfile.mkdtemp(prefix="sandbox-"),
        )
        if self.config.workdir:  # it outlives a killed worker (the next one uses it): it goes with this object
            weakref.finalize(self, shutil.rmtree, self.config.workdir, ignore_errors=True)
        self.worker: subprocess.Popen | None = None
        self.requests = -1  # our end of the worker's stdin
        self.replies: Lines | None = None  # and of its stdout
        self.level = ""  # the isolation the worker could set up (isolation.py names the levels)
        self.sent: Sequence[Cell] | None = None  # the program the session holds
        self.session = False
        self.submission = False  # begun and not ended: a call after its session was lost continues it
        self.budget = budget.seconds  # the submission's CPU seconds for all its checks
        self.used = 0.0  # of them, what sessions lost with their worker used (their last word, and the lost request)
        self.spent = 0.0  # what the current session used, at its last word (the caller's reading included)
        self.oom_kills = 0  # the processes the current session's memory budget had killed, at its last word
        self.charged = 0.0  # CPU seconds this process spent reading the current session's replies
        self.answered = 0  # bytes of the submission's replies read (the session counts the same: worker.py)
        self.asked = 0.0  # when the current request was sent
        self.ended: list[str] = []  # budgets the last session hit, when it ended by itself
        self.timed_out = False  # the worker's last reply did not come in time
        self.starting = False  # started, its "ready" not read yet
        self.begun: float | None = None  # the budget of a session asked for at start(), its word not read yet

    def start(self, begin: float | None = None) -> None:
        """Start the worker without waiting for it: it imports numpy and the trusted modules while the caller
        goes on (its first request waits until it is ready). With `begin`, the first request is already sent:
        a session with that budget, which the worker sets up as soon as it is ready (`begin` then waits only
        for its word)."""
        if self.worker is not None:
            return
        requests, self.requests = os.pipe()
        replies, replies_w = os.pipe()
        self.worker = subprocess.Popen(
            # -B: the worker imports the assignment's modules from their folder and must write nothing there
            [_interpreter(), "-s", "-P", "-B", str(WORKER), encode(self.config).decode()],
            stdin=requests, stdout=replies_w, stderr=subprocess.DEVNULL, env=_ENVIRONMENT,
            # A process group of its own: a Ctrl-Z (or a stop of the grader's group) stops the grader only, and the
            # session serves the request on, then waits for the next one, which its wall-clock backstop does not
            # count (worker.py). It still dies with the grader (PR_SET_PDEATHSIG), or at the end of its stdin.
            process_group=0,
        )
        os.close(requests)
        os.close(replies_w)
        # call_many widens the line's limit for the answers it asks for; each answer is held to what the session
        # passes on (protocol.answer_fault), whatever wrote the line
        self.replies = Lines(replies, TO_GRADER, limit=FIELDS_BYTES, answer_bytes=self.limits.answer_kb * 1024)
        self.starting = True
        if begin is not None and self._send(self._begin_request(begin)):
            self.begun = begin

    def _ready(self) -> None:
        """The worker started and said it is ready (started here if start() was not called)."""
        self.start()
        self.starting = False
        ready = self._receive(time.monotonic() + STARTUP_SECONDS)
        if not isinstance(ready, Ready):
            self.close()
            raise RuntimeError(f"the sandbox worker could not start ({ready.error})" if isinstance(ready, Failure)
                               else f"the sandbox worker was not ready within {STARTUP_SECONDS:g} s" if self.timed_out
                               else "the sandbox worker ended before it was ready")
        self.level = ready.level

    def _send(self, request: Message) -> bool:
        """Hand the worker a request, or kill it when it takes none within the margin (it is wedged)."""
        if self.worker is None:  # killed: its pipe is closed
            return False
        deadline = time.monotonic() + MARGIN_SECONDS
        if send(self.requests, request, deadline):
            return True
        self.timed_out = time.monotonic() >= deadline  # else the worker is gone: its end of the pipe is closed
        self._kill()
        return False

    def _receive(self, deadline: float, waited: _Waited | None = None) -> Ready | Failure | Ended | Answers | None:
        """The worker's next reply, or None when it ended, gave none by `deadline`, or wrote one that is not a
        reply (protocol.read: Malformed, Oversized): it is then killed. The deadline moves on by the time this
        process was not running (a look that came back more than a STALLED_SECONDS late: stopped with Ctrl-Z,
        swapped out), as that is not the worker's delay (its session serves the request meanwhile). With
        `waited`, the time until the deadline is counted as it counts it, waits for a CPU left out (_Waited)."""
        reply, started = None, time.monotonic()
        allowed = deadline - started
        while self.replies is not None:
            left = allowed - (waited.seconds() if waited else time.monotonic() - started)
            if left <= 0:
                break
            look = time.monotonic() + min(left, STALLED_SECONDS)
            reply = self.replies.next(look)
            late = time.monotonic() - look
            if reply is not None:
                break
            allowed += late if late > STALLED_SECONDS else 0.0
        self.timed_out = reply is None
        if not isinstance(reply, (Ready, Failure, Ended, Answers)):
            self._kill()
            return None
        return reply

    def _kill(self) -> None:
        """End the worker now; its session and loaders die with it (each is set to die with its parent). A
        session lost so is charged what it used at its last word and the wall-clock time of the request it
        was on (its CPU time is not to be read once it is gone)."""
        if self.worker:
            self.worker.kill()
            _wait_killed(self.worker)
        if self.session:
            self.used += self.spent + time.monotonic() - self.asked
        self.session = False
        submission, self.submission = self.submission, False
        self.close()
        self.submission = submission

    def begin(self, seconds: float | None = None) -> None:
        """Start a submission's session, with `seconds` of CPU time for all its checks (by default the sandbox's
        budget; and a wall-clock backstop, cputime.py)."""
        if self.session:
            self.end()
        self.budget = self.budgets.seconds if seconds is None else seconds
        self.used, self.answered = 0.0, 0
        self._open()
        self.submission = True

    def _open(self) -> None:
        """Start a session for the submission: with its whole budget, or what a lost session left of it."""
        seconds = self.budget
        if self.worker is None or self.starting:
            self._ready()
        for attempt in (1, 2):  # a sandbox that could not start is the grader's trouble: once more, then say so
            if self.worker is None:  # the first try's worker gave no word in time and was killed: a new one
                self._ready()
            if self.begun not in (None, seconds):
                raise ValueError(f"start() asked for a session of {self.begun} s, begin() for one of {seconds} s")
            asked, self.begun = self.begun is not None, None  # at start(): its word is the next reply
            reply = self._receive(time.monotonic() + MARGIN_SECONDS) if asked or self._send(
                self._begin_request(seconds, self.used)) else None
            if isinstance(reply, Ready):
                break
            if isinstance(reply, Failure):
                self._receive(time.monotonic() + MARGIN_SECONDS)  # the worker's word that the session ended
                if attempt == 2:
                    raise RuntimeError(f"{reply.error} (tried twice: the grader's failure, not the submission's)")
                time.sleep(1.0)
                continue
            if reply is not None:  # a reply out of turn: the worker is not to be trusted
                self._kill()
            if attempt == 2:  # no word in time (a machine a neighbour's fork bomb keeps busy): a new worker, once
                raise RuntimeError("the sandbox worker stopped")
        self.session, self.sent, self.ended, self.spent, self.charged, self.oom_kills = True, None, [], 0.0, 0.0, 0

    def _begin_request(self, seconds: float, used: float = 0.0) -> Begin:
        """A session's budgets, and what the submission used of them in sessions lost with their worker."""
        return Begin(seconds, used, self.budgets.answers_mb << 20, self.answered)

    def end(self) -> list[str]:
        """End the session: everything its code started ends with it. The budgets it hit."""
        self.submission = False
        if not self.session:
            return self.ended
        self.session = False
        if not self._send(End()):
            return []
        reply = self._receive(time.monotonic() + MARGIN_SECONDS)
        if isinstance(reply, Failure):
            raise self._failed(reply)
        return list(reply.budgets) if isinstance(reply, Ended) else []

    def call(self, cells: Sequence[Cell], function: Callable | str, **kwargs: Any) -> Outcome:
        """Load `cells` (reusing the loaded program when it is the same) and run one call alone."""
        return self.call_many(cells, [(function, kwargs)], fresh=True)[0]

    def call_many(self, cells: Sequence[Cell], calls: Sequence[tuple[Callable | str, dict]],
                  fresh: bool = False, together: bool = False) -> list[Outcome]:
        """Run `calls` on the loaded `cells`, in order, in one request: an Outcome each.

        They run one after another in the loaded program's process, so a call can see what an
        earlier one changed; with `fresh`, each runs in its own child and sees only the loaded program;
        with `together` too, they run one after another in one child, within one check's time in all, and
        any that did not get its answer there says so (worker.py, child.py).
        """
        if not calls:
            return []
        if self.submission and not self.session:  # its session was lost with its worker: a new one continues it
            self._open()
        elif not self.session:
            self.begin()
        left = (self.budgets.answers_mb << 20) - self.answered  # the session sends no more answers than that
        if left <= 0:  # not asked: the grader reads no more of this submission
            return [Outcome(False, reason=describe_answers_budget(self.budgets.answers_mb), limit="answer budget",
                            not_run=True) for _ in calls]
        program = None
        if cells != self.sent:
            program, self.sent = [(c.name, c.source) for c in cells], list(cells)
        request = Batch([Call(f if isinstance(f, str) else f"{f.__module__}:{f.__name__}", kwargs) for f, kwargs in calls],
                        fresh, together, self.charged, program)
        # A last resort against a wedged worker (the session answers for the budget and every limit itself):
        # what the limits allow in wall-clock time, a load and a check for each call (a crash reloads for the
        # next), WALL_FACTOR times their CPU time, doubled, within the budget's backstop likewise, and a margin;
        # counted as the session's backstop counts, less the time a busy machine keeps the worker's processes
        # waiting for a CPU (_Waited), so that no load reaches it.
        allowed = len(calls) * (2 * self.limits.seconds + BACKSTOP_SECONDS)
        waited = 2 * WALL_FACTOR * min(self.budget, allowed) + MARGIN_SECONDS
        # The reply is read no looser than the session writes it: answers within what is left of the budget (the
        # session counts every reply whole, as this process does) and each within the answer limit, with its
        # fields, and the load errors (protocol.ERROR_BYTES each); the CPU time reading it is the submission's
        # (sent with the next request), less the walks of the deadline's count while it waits (_Waited.cost).
        replies = self.replies
        if replies is not None:
            replies.limit = min(len(calls) * (self.limits.answer_kb * 1024 + FIELDS_BYTES), left) + \
                len(calls) * FIELDS_BYTES + FIELDS_BYTES
        reading, self.asked, read = time.thread_time(), time.monotonic(), replies.read if replies else 0
        sent = self._send(request)
        counted = _Waited(self.worker.pid) if sent and self.worker else None
        result = self._receive(time.monotonic() + waited, counted) if counted else None
        self.answered += replies.read - read if replies else 0
        try:
            return self._outcomes(result, len(calls), waited)
        finally:
            self.charged += time.thread_time() - reading - (counted.cost if counted else 0.0)

    def _outcomes(self, result: Ready | Failure | Ended | Answers | None, calls: int, waited: float) -> list[Outcome]:
        """The Outcome of each of `calls` calls from the session's reply (None: there was none)."""
        if isinstance(result, Ended):  # the worker's word that the session died on the way: the worker is sound
            return self._session_killed(result, calls)
        if isinstance(result, Ready) or (isinstance(result, Answers) and len(result.answers) != calls):
            # a reply out of turn, or answers to other calls than asked: the worker is not to be trusted
            self._kill()
            result = None
        if result is None and self.timed_out:  # killed because it gave no answer in time
            return [Outcome(False, reason=describe_no_answer(waited), limit="time budget") for _ in range(calls)]
        if result is None:
            # The worker ended or wrote what is no reply. It is the grader's (another uid than student code's at
            # every level but "none", where student code could as well write its grades; outside the submission's
            # namespaces and cgroups): student code can neither signal it nor write its replies, so whatever ended
            # it (the machine's OOM killer, a kill from outside, a fault of its own) is the machine's, as a session
            # killed during a check is (_session_killed). The next call continues the submission in a new worker.
            raise RuntimeError("the submission's sandbox failed: the grader's worker process ended (or wrote what "
                               "is no reply) during the request: the grading machine's fault, not the notebook's")
        if isinstance(result, Failure):
            raise self._failed(result)
        self.spent, self.oom_kills = result.spent, result.oom_kills
        return [Outcome(answer.ok, answer.value, answer.reason, answer.limit, answer.not_run, result.load_errors,
                        result.stops, result.bound) for answer in result.answers]

    def _session_killed(self, ended: Ended, calls: int) -> list[Outcome]:
        """The Outcome of each of `calls` calls when the session died during the request (it writes a Failure for
        any error of its own, so it was killed): by the memory budget's OOM killer when its cgroup counted a kill
        during the request (the session is the kernel's to choose unless the grader holds CAP_SYS_RESOURCE, and
        the submission can fill the cgroup with files no process holds), the submission's doing; else the grading
        machine's failure (RuntimeError), even when the submission hit the budget earlier in the session. The next
        call continues the submission in a new session of the same worker, charged with what this one used."""
        self.used += self.spent + time.monotonic() - self.asked
        self.session = False
        if ended.oom_kills <= self.oom_kills or not self.config.isolation:
            raise RuntimeError("the submission's sandbox failed: its session was killed during a check, and not by "
                               "the submission's memory budget: the grading machine's fault, not the notebook's")
        megabytes = self.config.isolation["budgets"]["memory_mb"]
        reason = f"the notebook's sandbox was killed by the kernel: {describe_memory_budget(megabytes)}"
        return [Outcome(False, reason=reason, limit="memory budget") for _ in range(calls)]

    def _failed(self, failure: Failure) -> RuntimeError:
        """The error to raise when the session failed (its own code, or the machine under it: worker.py): the
        grader's failure, never a check's answer. The worker's next line says the session ended; a worker that
        says anything else is killed."""
        self.session = False
        if not isinstance(self._receive(time.monotonic() + MARGIN_SECONDS), Ended):
            self._kill()
        return RuntimeError(f"the submission's sandbox failed: {failure.error}")

    def close(self) -> None:
        if self.worker:
            if self.session:
                self.end()
        if self.worker and self.replies is not None:  # end() may have killed it
            os.close(self.requests)
            self.replies.close()
            try:
                self.worker.wait(timeout=self.limits.seconds + 5)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                _wait_killed(self.worker)
            self.worker = None
        self.sent, self.begun = None, None
        self.session = self.starting = self.submission = False

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
