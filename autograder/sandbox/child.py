"""What runs in the processes that hold student code: a loader and the check children it forks.

A loader confines itself, runs the cells, then answers batches of calls; every message it writes on the
results pipe is a record of protocol.py (a Result for each call). Run only inside the worker (worker.py imports
it as a top-level module).
"""
from __future__ import annotations

import builtins
import functools
import gc
import io
import math
import os
import resource  # here, not in each loader: importing it costs a loader about 2 ms
import signal
import sys
import tempfile  # the worker's already: no cost to a loader
import time
from types import CodeType
from typing import Any, Callable, Iterable, cast

import cell_runner
import forks
import ipython_display
import ipython_syntax
import seccomp
from cputime import TICK, WALL_FACTOR, Stopwatch, tree_seconds
from messages import (
    NOT_RUN_TOGETHER,
    PRINTED_PAST_LIMIT,
    describe_cell_exit,
    describe_exception,
    describe_exit,
    describe_left_running,
    describe_not_plain,
    describe_over_time,
    describe_status,
    describe_time_out,
    describe_wall_time_out,
)
from protocol import (
    EVERY_NAME,
    FROM_LOADER,
    TO_LOADER,
    UNREADABLE,
    Batch,
    Call,
    Closed,
    Fatal,
    Limits,
    Lines,
    Loaded,
    LoadingCell,
    Malformed,
    Read,
    Result,
    read,
    write,
)


def _send_breach_nowhere(reason: str, limit: str) -> None:
    """Where a limit breach is reported before a loader has its results pipe: nowhere."""


def _fatal_to(results: int, reason: str, limit: str) -> None:
    """While a loader loads the program: the breach ends the load."""
    write(results, Fatal(reason, limit))


def _result_to(results: int, reason: str, limit: str) -> None:
    """While a call runs: the breach is that call's answer."""
    write(results, Result(False, None, reason, limit))


_send_breach: Callable[[str, str], None] = _send_breach_nowhere  # where a limit breach is sent: (reason, limit)
# Why no call is run, once a cell left code running at a moment of its own (_load): every answer is that reason
_LEFT_RUNNING = ""
_CPU_SECONDS = 5  # CPU seconds one cell or call may use; set from the limits when a loader confines itself
_CELL_SECONDS = 3.0  # CPU seconds after which the loader stops a cell where it runs (_run_limited); limits.seconds
_OUTPUT: Any = None  # the loader's stdout and stderr, a _CappedText once it confined itself
# The loader's own hold on its signal calls, taken before any cell runs: a cell may replace the signal module's
_SIGNAL, _SETITIMER, _GETSIGNAL = signal.signal, signal.setitimer, signal.getsignal
# Descriptors each process of student code may hold: the loader needs a few (its own pipes, one to the check child
# it runs), and each pipe's buffer is kernel memory no count of a process's memory sees (docs/security.md, "Not
# contained")
_DESCRIPTORS = 256


class _OverTime(BaseException):
    """Raised in a loading cell that used its CPU time (_over_time): the loader's own stop of that cell, as the
    public checks' runner.OverTime is theirs (a BaseException: a cell's `except Exception` goes on)."""


class _OverOutput(BaseException):
    """Raised in a loading cell that printed past the output limit (_CappedText.write): the loader's own stop."""


# Whether a cell of the load runs now (_run_limited): only then do the loader's limits raise in it, not in the
# loader's own code between two cells, nor in a call
_IN_CELL = [False]


def _over_time(signum: int, frame: object) -> None:
    """The loader's SIGPROF handler while a cell runs: the cell used its CPU time (ITIMER_PROF)."""
    if _IN_CELL[0]:
        raise _OverTime()


class _CappedText(io.TextIOBase):
    """stdout/stderr for student code: discards text, and stops the code past the limit: a loading cell where it
    runs (_OverOutput), a call (or anything else) by ending the process with the breach as its answer."""

    def __init__(self, limit: int) -> None:
        self.limit = self.left = limit

    def write(self, text: str) -> int:
        self.left -= len(text)
        if self.left < 0:
            if _IN_CELL[0]:  # every write past it raises: a cell that catches one prints nothing more
                raise _OverOutput()
            _send_breach(PRINTED_PAST_LIMIT, "output")
            os._exit(0)
        return len(text)

    def writable(self) -> bool:
        return True


def _confine(limits: Limits, isolation: Any, workdir: str) -> None:
    """Everything a loader does to itself before it runs a line of student code."""
    os.setsid()  # a process group of its own, and no controlling terminal (/dev/tty): none to type into
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    global _OUTPUT, _CELL_SECONDS
    sys.stdout = sys.stderr = _OUTPUT = _CappedText(limits.output_kb * 1024)
    _CELL_SECONDS = limits.seconds
    sys.stdin = io.StringIO()
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large file becomes an OSError
    extra = limits.memory_mb * 1024 * 1024
    # CPU time is a soft limit only: each check child raises it for each call it runs (_run_calls).
    global _CPU_SECONDS
    _CPU_SECONDS = int(limits.seconds) + 2
    rules = [(resource.RLIMIT_CPU, _CPU_SECONDS, resource.RLIM_INFINITY),
             (resource.RLIMIT_FSIZE, limits.output_kb * 1024, limits.output_kb * 1024),
             (resource.RLIMIT_NOFILE, _DESCRIPTORS, _DESCRIPTORS),
             # no core dumps: a process is not ended while it dumps (forks.KILLED_SECONDS), and a pipe core_pattern
             # (systemd-coredump, apport) hands a dump to a root helper outside the session (red-a13). 1, not 0: for a
             # pipe the kernel ignores the limit but for that one value, its own mark of "no dump" (fs/coredump.c),
             # and 1 byte is below any file dump's size too. The filter denies changing it (seccomp.py).
             (resource.RLIMIT_CORE, 1, 1)]
    try:
        with open("/proc/self/statm") as statm:
            address_space = int(statm.read().split()[0]) * resource.getpagesize() + extra
            rules.append((resource.RLIMIT_AS, address_space, address_space))
    except OSError:  # not Linux: no address-space limit to lean on
        pass
    for which, soft, hard in rules:
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass
    held = getattr(isolation, "scratch_fd", -1)
    if held >= 0:  # still root: the folder the worker made, wherever it was moved, never a link left at its path
        os.fchdir(held)
        os.close(held)
    else:
        os.chdir(workdir)
    # The caller started the worker with HOME unset: the scratch space is home, and where temporary files go
    # (the only place a session may write; the worker's tempfile may have remembered the machine's /tmp).
    os.environ["HOME"] = os.environ["TMPDIR"] = workdir
    tempfile.tempdir = workdir
    if isolation is not None:
        isolation.drop()
    if sys.platform.startswith("linux"):  # last: what the steps above call, it may deny (seccomp.py)
        seccomp.install()


COMPILED: dict[tuple[str, str], tuple[CodeType, ...]] = {}  # the course's own cells, compiled once by the worker
# The notebook's compiler: its own future imports hold for the cells below (cell_runner). The worker never uses it,
# so each loader, a fork of the worker, starts with a clean one.
NOTEBOOK = cell_runner.Compiler()


def cell_codes(name: str, text: str) -> Iterable[CodeType]:
    """A cell's codes as Jupyter runs them, statement by statement: IPython's syntax transformed (in the loader, for
    student code), each compiled by the notebook's compiler; a course cell the worker compiled while no future
    import of the notebook's is in force."""
    compiled = COMPILED.get((name, text)) if NOTEBOOK.flags == NOTEBOOK.plain else None
    return iter(compiled) if compiled else NOTEBOOK.codes(ipython_syntax.as_python(text), f"<cell {name}>")


def compile_cell(name: str, text: str) -> tuple[CodeType, ...]:
    """A cell's codes, all compiled before it runs (the stand-in shell's run_cell)."""
    return tuple(cell_codes(name, text))


def compile_trusted(cells: list[tuple[str, str]]) -> None:
    """The course's own cells, compiled once by the worker, but those IPython's transformer would read (a given
    `%matplotlib inline`): it runs in loaders only, each cell's cost the submission's."""
    compiler = cell_runner.Compiler()
    COMPILED.update({(name, text): tuple(compiler.codes(text, f"<cell {name}>")) for name, text in cells
                     if not ipython_syntax.could_be_ipython(text)})


def _load(cells: list[tuple[str, str]], results: int) -> dict:
    """Run the cells like a notebook with errors allowed: an exception ends only its cell."""
    global _send_breach, _LEFT_RUNNING
    _send_breach = functools.partial(_fatal_to, results)
    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    ipython_display.install(ns, compile_cell, lambda: NOTEBOOK.flags & cell_runner.FUTURES)
    displayhook = sys.displayhook
    sys.addaudithook(cell_runner.count_added_audit_hooks)
    errors, stops, bound = [], {}, {}
    for name, text in cells:
        write(results, LoadingCell(name))
        _allow_cpu()  # each cell its own, as the session times each (red-c24 X33-c24-5: 3 cells of 2 s were killed)
        sys.displayhook = displayhook  # each cell's own, as IPython's DisplayTrap sets it (red-a24 X33-a24-3)
        before = cell_runner.names_of(ns)  # (each cell's: which of them stops is known once it ran)
        hooks = cell_runner.hooks()
        codes: Iterable[CodeType] = ()
        try:
            codes = cell_codes(name, text)
            stopped = _run_limited(codes, ns)
        except (_OverTime, _OverOutput) as exc:  # past the cell's end, as the loader took its limits back: run whole
            stopped = exc, cell_runner.past_the_end(codes)
        except BaseException as exc:  # cell_codes: the cell does not parse (IPython runs none of it)
            stopped = exc, 1
        if stopped is not None:  # a cycle's __del__ the collector would run at a later moment runs now, and is read
            gc.collect()
            error, stops[name] = stopped
            _keep_as_last(error)
            if type(error) is _OverTime:  # the loader's own stop: the words of the session's, for a check's too
                errors.append(f"cell {name}: {describe_over_time(_CELL_SECONDS)}")
            elif type(error) is _OverOutput:
                errors.append(f"cell {name}: {PRINTED_PAST_LIMIT}")
            elif issubclass(type(error), SystemExit):  # by its type (the notebook's class may name another), as `except` reads
                # Jupyter's kernel catches it too: it stops its cell, the next cells run
                errors.append(f"cell {name}: {describe_cell_exit(cast(SystemExit, error))}")
            else:  # IPython's run_code catches every one (KeyboardInterrupt, GeneratorExit too)
                errors.append(f"cell {name}: {describe_exception(error)}")
        left = cell_runner.left_running()
        if left:  # no cell below runs, and every call is answered with why (_run_batch); the cell binds every name
            _LEFT_RUNNING = f"cell {name} {describe_left_running(left)}"
            stops[name], bound[name] = stops.get(name, text.count("\n") + 2), [EVERY_NAME]
            break
        if stopped is not None:  # a hook it left may bind any name at the next cell's first event
            bound[name] = [EVERY_NAME] if cell_runner.left_hooks(hooks) else cell_runner.rebound(before, ns)
    # The calls' own allowances: a cell the loader stopped used the load's CPU allowance to its limit, and code of
    # it that runs in the loader's own waits (a selector it replaced) is then timed by the session, as before the
    # loader stopped cells, not killed by the kernel's backstop first
    _allow_cpu()
    if _OUTPUT is not None:
        _OUTPUT.left = _OUTPUT.limit
    write(results, Loaded(errors, stops, bound))
    return ns


def _run_limited(codes: Iterable[CodeType], ns: dict) -> tuple[BaseException, int] | None:
    """cell_runner.run_cell, the cell stopped where it runs once it used its _CELL_SECONDS of CPU time (ITIMER_PROF,
    _over_time) or printed past the output limit (_CappedText): each cell its own allowance of both, and the load
    goes on with the next cell, as the public checks' runner stops a cell (red-c26 X35-c26-2, X35-c26-15: the session
    ended the load there, so every check of every part failed, 0/18). The session's own limit per cell stays the
    backstop, a little looser (worker.LOADING_GRACE), for a cell that catches the loader's exception and runs on.
    ITIMER_PROF is disarmed after the cell, before cell_runner.left_running looks (it reads an armed timer as the
    cell's): the loader's own, or one the cell armed in its place, which then never fires (no code of the cell's runs
    at a moment of its own); the loader's handler is put back if it is still set, and a SIGPROF handler the cell set
    stays, with no timer to run it."""
    if _OUTPUT is not None:
        _OUTPUT.left = _OUTPUT.limit
    before = _SIGNAL(signal.SIGPROF, _over_time)
    _IN_CELL[0] = True
    _SETITIMER(signal.ITIMER_PROF, _CELL_SECONDS)
    try:
        return cell_runner.run_cell(codes, ns)
    finally:
        _IN_CELL[0] = False
        _SETITIMER(signal.ITIMER_PROF, 0)
        if _GETSIGNAL(signal.SIGPROF) is _over_time:
            _SIGNAL(signal.SIGPROF, before)


def _allow_cpu() -> None:
    """Raise this process's soft CPU limit to _CPU_SECONDS past what it used so far: each cell and each call its own
    allowance (the session's limit per cell or call is the one it names; this is the kernel's backstop above it)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    # rounded up: at least _CPU_SECONDS more, above the session's limit plus its grace (worker.LOADING_GRACE,
    # protocol.BACKSTOP_SECONDS), which names the limit; rounded down it could come first, unnamed
    allowance = math.ceil(used.ru_utime + used.ru_stime + _CPU_SECONDS)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (allowance, resource.RLIM_INFINITY))
    except (ValueError, OSError):
        pass


def _keep_as_last(error: BaseException) -> None:
    """Hold a stopped cell's exception, its traceback and the frames' locals with it, for the loader's life, as IPython
    keeps the last one (sys.last_value, sys.last_traceback): an object only those locals hold is not freed, nor its
    __del__ run, as the load ends (red-a24 X33-a24-5). Every one, not just the last: a stub a part takes blank that
    raises as it loads (an exercise's) is no later error of the student's, which in Jupyter would free the one before."""
    _STOPPED.append(error)
    sys.last_type, sys.last_value = type(error), error
    sys.last_traceback = cell_runner.traceback_of(error)
    sys.last_exc = error  # type: ignore[attr-defined]  # Python 3.12+ keeps it under this name too


_STOPPED: list[BaseException] = []  # (_keep_as_last)


def _run_calls(ns: dict, modules: dict[str, CodeType], calls: list[Call], results: int) -> None:
    """Run each call on `ns` in turn (in the loader, or in a check child) and send its Result to `results`.

    The functions come from a fresh run of their module's code, compiled before any student code
    ran: whatever the notebook did to the module objects it could reach is not used. Each call
    gets its own CPU allowance (the wall-clock limit is the worker's to enforce).
    """
    global _send_breach
    _send_breach = functools.partial(_result_to, results)
    trusted: dict[str, dict] = {}
    for call in calls:
        module_name, name = call.function.split(":")
        _allow_cpu()
        try:
            if module_name not in trusted:
                trusted[module_name] = {"__name__": module_name, "__builtins__": builtins}
                exec(modules[module_name], trusted[module_name])
            # in the notebook's context, as Jupyter's test cells run in the kernel's (red-a26 X35-a26-13: numpy 2's
            # error state a cell set was not seen, and an overflow Jupyter raises passed)
            message = Result(True, cell_runner.notebook_context().run(trusted[module_name][name], ns, **call.kwargs))
        except MemoryError as exc:
            message = Result(False, None, describe_exception(exc), "memory")
        except Exception as exc:
            message = Result(False, None, describe_exception(exc))
        except BaseException as exc:
            message = Result(False, None, describe_exit(exc))
        left = cell_runner.left_running()
        if left:  # what a later call of this process sees would depend on timing: the worker loads afresh for the rest
            write(results, Result(False, None, describe_left_running(left, called=True)))
            os._exit(0)
        try:
            write(results, message)
        except (TypeError, ValueError) as exc:
            write(results, Result(False, None, describe_not_plain(exc)))


def _run_batch(ns: dict, modules: dict[str, CodeType], calls: list[Call], results: int, fresh: bool,
               together: bool, seconds: float) -> None:
    """In the loader: answer every call of a batch on `results`, one message each, in order.

    `fresh`: each call runs in its own child (and process group), forked from the loaded program; a
    child that dies answers for its call, and one that used `seconds` of CPU time (or WALL_FACTOR times
    that of wall-clock time) is killed and answers that it ran out of time, so a loop costs its own call
    and the batch goes on in this loader (the worker's deadline, a little later, is the backstop).
    `together` (with `fresh`): all the calls run one after another in one child, within `seconds` in all;
    the grader runs them again a child each unless every check passes (suites.Runner), so an answer that
    is missing here only says so. Otherwise the loader runs the calls itself, one after another: the
    worker loads the program again for the rest if one of them ends the process.
    """
    if _LEFT_RUNNING:
        for _ in calls:
            write(results, Result(False, None, _LEFT_RUNNING))
    elif not fresh:
        _run_calls(ns, modules, calls, results)
    elif together:
        _run_in_child(ns, modules, calls, results, seconds)
    else:
        for call in calls:
            _run_in_child(ns, modules, [call], results, seconds)


def _run_in_child(ns: dict, modules: dict[str, CodeType], calls: list[Call], results: int, seconds: float) -> None:
    """Run `calls` in one check child forked from the loaded program, and send an answer for each: its own,
    or, when it ran out of time or ended first, why: for the first call, as if it ran alone (with the cause
    the worker may refine); for a later one, "not run" for it and the rest, which the grader runs again alone."""
    read_end, write_end = os.pipe()
    try:
        pid = forks.fork()
    except forks.GraderForkError as error:
        for end in (read_end, write_end):
            os.close(end)
        for _ in calls:  # a claim only (student code could write it too): the session finds whose doing it was
            write(results, Result(False, None, f"could not start a process for the check ({error.strerror})", "fork"))
        return
    if pid == 0:
        os.setpgid(0, 0)
        # What the call starts stays below it while it runs, a double-forked helper too: its CPU time and its waits
        # for a CPU are the call's (_answer_of), not left to the session's clock, which never took a helper's waits
        # off the backstop (red pass 24: on a busy machine, helpers charged 3 s of CPU time ran into the wall-clock
        # backstop first, waiting nine tenths of the time). What outlives the call goes to the session, as before.
        forks.become_subreaper()
        for end in (read_end, results):  # its answers go to this loader alone, which reads them as the child's
            os.close(end)
        cell_runner.close_loop()  # and the loop's wake-up pipe, which only the loader's cells use
        _run_calls(ns, modules, calls, write_end)
        os._exit(0)
    os.close(write_end)
    answers, stopwatch = Lines(read_end, FROM_LOADER), Stopwatch(pid)
    try:
        for done in range(len(calls)):
            message = _answer_of(answers, pid, seconds, stopwatch)
            if isinstance(message, Malformed) and message.kind is Result:
                message = Result(False, None, UNREADABLE)
            if not isinstance(message, (str, Malformed, Closed)):
                write(results, message)  # the session judges what it says (a child that forged one included)
                continue
            # Out of time: stopped here. Ended, or wrote what is no message: how it ends says why. The first call
            # ran as it would alone (nothing ran before it in the child, with the same limit): its own answer.
            status = _end(pid, kill=message in ("cpu", "wall") or done > 0)
            if done == 0 and message in ("cpu", "wall"):
                write(results, Result(False, None, describe_time_out("the check", seconds) if message == "cpu" else
                                      describe_wall_time_out("the check", seconds * WALL_FACTOR, seconds), "time",
                                      wall=message == "wall"))
            elif done == 0:  # nothing, or a line cut short by the child's death
                write(results, Result(False, None, describe_status(status), status=status))  # the worker may know more
            for _ in calls[max(done, 1):]:
                write(results, Result(False, None, NOT_RUN_TOGETHER))
            return
        _end(pid, kill=False)
    finally:
        answers.close()


def _end(pid: int, kill: bool) -> int:
    """The check child's wait status once it has ended; with `kill`, it and what it started in its group are
    killed first (it may still be running)."""
    if kill:
        for signal_to in (os.killpg, os.kill):
            try:
                signal_to(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    # Unbounded here: what the loader says after student code ran is not to be trusted, so a child the kernel
    # never lets end is the session's to name (its deadline kills this loader; worker._reap_orphans, the child).
    return os.waitpid(pid, 0)[1]


def _answer_of(answers: Lines, pid: int, seconds: float, stopwatch: Stopwatch) -> Read | str:
    """Check child `pid`'s next message (CLOSED at its end); "cpu" when the child and what it started have used
    `seconds` of CPU time first, "wall" when WALL_FACTOR times that of wall-clock time (less their waits
    for a CPU) passed first. The child is a subreaper (_run_in_child): a helper it double-forks is below it too."""
    while (message := answers.next(time.monotonic() + TICK)) is None:
        if tree_seconds(pid) >= seconds:
            return "cpu"
        if stopwatch.seconds() >= seconds * WALL_FACTOR:
            return "wall"
    return message


def loader_main(cells: list[tuple[str, str]], limits: Limits, isolation, workdir, commands: int, results: int,
                modules: dict) -> None:
    """The loader: confine, load the cells, then answer calls until the session hangs up."""
    try:
        try:
            _confine(limits, isolation, workdir)
        except OSError as error:  # before any student code: the session raises it as the machine's failure
            write(results, Fatal(f"the grader could not confine the notebook's process ({error})"))
            return
        ns = _load(cells, results)
        gc.freeze()  # the loaded program is shared by every check child: no collection needs to touch it
        with os.fdopen(commands, "rb") as lines:
            for line in lines:
                batch = read(line, TO_LOADER)
                if not isinstance(batch, Batch):  # the session sends batches only: the loader ends
                    break
                _run_batch(ns, modules, batch.calls, results, batch.fresh, batch.together, limits.seconds)
    finally:
        os._exit(0)
