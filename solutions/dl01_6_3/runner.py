"""Runs a notebook's cells for the public checks (notebook_checks.py) as Jupyter's kernel runs them, and as the grade
does: IPython's syntax read by IPython's own shell (without IPython, magics skipped), a top-level `await` allowed
(IPython's autoawait) and every cell run on one event loop, whatever a cell raises (KeyboardInterrupt too) stopping
only that cell, and `exit` and `quit` the kernel's (KernelExit), and a cell stopped at CHECK_SECONDS of CPU time, as
the grade stops it (where Python has CPU timers: not on Windows). Standard library only; IPython if installed.
"""
from __future__ import annotations

import _sitebuiltins
import ast
import asyncio
import concurrent.futures
import contextlib
import inspect
import re
import signal
import sys
import threading
from pathlib import Path

from explain import describe_exception, is_a, where

HERE = Path(__file__).resolve().parent
NOT_WRITTEN = "is not written yet: replace `raise NotImplementedError()` with your answer"
# CPU seconds one check, and each cell of loading the notebook, may use: the grade's (c.GraderSettings.seconds in the
# course's nbgrader_config.py; the kit's tests keep the two equal, as the student's folder holds no copy of it)
CHECK_SECONDS = 3.0


class OverTime(BaseException):
    """Raised in a cell that used CHECK_SECONDS of CPU time (a BaseException: a cell's `except Exception` goes on)."""


class KernelExit(_sitebuiltins.Quitter):
    """`exit` and `quit` as Jupyter's kernel binds them (ipykernel's ZMQExitAutocall), and as the grade has them. The
    kernel's raises nothing: with `keep_kernel` true (quit(3), exit(True)) nothing else happens, and the cell goes on;
    otherwise the kernel ends 0.1 s later, so a cell that starts after that never runs (nbclient: DeadKernelError, and
    nbgrader cannot grade the notebook; measured with nbclient 0.11 and ipykernel 7.4). Here, as in the grade, that
    call stops its cell as site's Quitter does ("called exit()"), and the cells below run."""

    def __call__(self, keep_kernel: object = False) -> None:  # type: ignore[override]  # ipykernel's signature
        if not keep_kernel:
            super().__call__(*(() if keep_kernel is False else (keep_kernel,)))


def run_cells(cells: list[tuple[str, str]]) -> tuple[dict, list[tuple[str, str]]]:
    """Run (name, source) cells in order; the names defined and (reason, source) for each cell that raised. Called
    where an event loop already runs (a kernel's own cell: stock nbgrader's grade cells load the notebook so), the
    cells run on a thread of their own, whose loop is theirs as a kernel's is."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none: this thread's own loop runs them
        return _run_cells(cells)
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(_run_cells, cells).result()


def _run_cells(cells: list[tuple[str, str]]) -> tuple[dict, list[tuple[str, str]]]:
    sys.path.insert(0, str(HERE))  # the notebook imports engine.py from this folder
    names, errors = {"__name__": "__main__"}, []
    with _reader(names) as read:
        # after the shell's own, which fail without a terminal
        names.update({name: KernelExit(name, "Ctrl-D (i.e. EOF)") for name in ("exit", "quit")})
        loop = asyncio.new_event_loop()
        try:
            for name, source in cells:
                raised = _run(loop, name, source, read, names)
                if raised is not None:
                    errors.append((_reason(name, raised), source))
        finally:
            loop.close()
    return names, errors


@contextlib.contextmanager
def _reader(names: dict):
    """While the cells run: IPython's reading of a cell on a shell of `names` that runs no shell command, as the
    grade's (checks_shell.py), or without IPython, magics made comments."""
    try:
        from checks_shell import shell
    except ImportError:
        yield lambda source: "" if source.lstrip().startswith("%%") else re.sub(r"(?m)^(\s*)([%!])", r"\1# \2", source)
        return
    with shell(names) as the:
        yield the.read


def _run(loop: asyncio.AbstractEventLoop, name: str, source: str, read, names: dict) -> BaseException | None:
    """One cell read, compiled (no future import of ours: dont_inherit) and run on `loop`; what it raised, if anything
    (IPython's run_cell catches every exception, a BaseException too, and the cells below run)."""
    try:
        code = compile(read(source), f"<cell {name}>", "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        with _cpu_bound():
            return loop.run_until_complete(_cell(code, names))
    except BaseException as exc:  # noqa: B036 - a cell's KeyboardInterrupt or GeneratorExit stops that cell only
        return exc


@contextlib.contextmanager
def _cpu_bound():
    """The cell inside raises OverTime once the process used CHECK_SECONDS more of CPU time, as the grade stops a cell
    there (its own limit: it would go on in a kernel's own cell, on a thread, and where Python has no CPU timer)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise OverTime()

    before = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, CHECK_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, before)


async def _cell(code, names: dict) -> BaseException | None:
    """The cell run inside the loop, as ipykernel runs each; what it raised, returned from inside the coroutine (raised
    out of it, a StopIteration would become a RuntimeError, and a KeyboardInterrupt would go through the loop)."""
    try:
        if code.co_flags & inspect.CO_COROUTINE:  # a top-level await
            await eval(code, names)
        else:
            exec(code, names)
    except BaseException as exc:  # noqa: B036 - returned to _run, which stops only this cell
        return exc
    return None


def _reason(name: str, exc: BaseException) -> str:
    blank = is_a(exc, NotImplementedError) and where(exc) == "<module>"
    if is_a(exc, OverTime):  # the grade's words (is_a: a cell's exception may make isinstance raise)
        return f"cell {name} did not finish within {CHECK_SECONDS:g} s of CPU time (an infinite loop?)"
    return f"cell {name} {NOT_WRITTEN}" if blank else f"cell {name}: {describe_exception(exc, cell=True)}"
