"""One-line explanations of what went wrong in student code, for the grader's messages.

The student's released explain.py (source/<assignment>/explain.py) keeps its own `describe_exception`: the
sandbox's copy adds MemoryError, and the sandbox loads nothing of an assignment's folder into the worker before
student code runs (so it serves any assignment); tests/test_messages.py holds both to the same words on a
golden list.
Standard library only: the worker imports this file as a top-level module, the caller as a package one.
"""
from __future__ import annotations

import _sitebuiltins
import os
import re
import signal
import traceback
from typing import Any, Callable


def _in_notebook(filename: str) -> bool:
    """Code from a notebook cell: the sandbox's "<cell ...>", or IPython's in a live kernel."""
    return filename.startswith(("<cell", "<ipython-input")) or "ipykernel_" in filename


def _innermost(exc: BaseException) -> tuple[str, int] | None:
    """(qualified name, line) of the innermost notebook code the exception passed through."""
    found = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if _in_notebook(frame.f_code.co_filename):
            found = (frame.f_code.co_qualname, line)
    return found


def _where(exc: BaseException) -> str | None:
    """The innermost notebook function the exception passed through."""
    innermost = _innermost(exc)
    return innermost[0] if innermost and innermost[0] != "<module>" else None


def called_by_notebook(exc: BaseException):
    """The code object the innermost notebook line called, where the exception came from (None if it raised
    there): e.g. Tensor.__mul__'s, for `*` or for a NumPy function that multiplies Tensors as objects."""
    frames = [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]
    mine = [i for i, frame in enumerate(frames) if _in_notebook(frame.f_code.co_filename)]
    return frames[mine[-1] + 1].f_code if mine and mine[-1] + 1 < len(frames) else None


# How a stub the student has not written yet is named: "<where> " + NOT_WRITTEN.
NOT_WRITTEN = "is not written yet: replace `raise NotImplementedError()` with your code"


# NumPy's TypeError for an operand whose class sets __array_ufunc__ = None (a Tensor), given to a ufunc such as
# np.matmul: what it says, and what the message adds (the class has operations of its own).
REFUSES_UFUNCS = ("does not support ufuncs (__array_ufunc__=None)",
                  ": NumPy's ufuncs (np.matmul, np.add, ...) refuse that operand; use its own operations (@, +)")


def describe_exception(exc: BaseException, quote: bool = True) -> str:
    """`Class.method raised Type: message (line N of its cell)`, naming the innermost notebook code involved
    and the line of its cell that raised (`quote` False: without the message, where a check states the fact)."""
    where, innermost = _where(exc), _innermost(exc)
    if isinstance(exc, NotImplementedError) and where:
        return f"{where} {NOT_WRITTEN}"
    if isinstance(exc, SyntaxError):  # a cell's: its caller names the cell ("cell sgd: ..."); else the file
        # a file name is the notebook's text (compile() takes any): quoted, so that it cannot speak as the grader
        where_from = "" if _in_notebook(exc.filename or "<cell") else f"file {exc.filename!r} has "
        return f"{where_from}a syntax error on line {exc.lineno}: {exc.msg}"
    if isinstance(exc, MemoryError):
        return f"{where or 'the code'} ran out of memory"
    text = _said(lambda: str(exc).strip())
    message = text.splitlines()[0] if text else ""
    what = f"{type(exc).__name__}: {message}" if message and quote else type(exc).__name__
    line = f" (line {innermost[1]}{' of its cell' if where else ''})" if innermost else ""
    if isinstance(exc, TypeError) and message.endswith(REFUSES_UFUNCS[0]):  # NumPy's words: name what to use
        line += REFUSES_UFUNCS[1]
    return f"{where} raised {what}{line}" if where else f"raised {what}{line}"


def describe_exit(exc: BaseException) -> str:
    """For exceptions that are not Exceptions: they end the program, so they end the check."""
    where = _where(exc)
    what = (f"called {_exit_call(exc)}, which ends the program" if isinstance(exc, SystemExit)
            else f"raised {type(exc).__name__}, which stops the program")
    return f"{where} {what}" if where else what


def describe_cell_exit(exc: SystemExit) -> str:
    """A SystemExit out of a cell as it loads: Jupyter's kernel catches it, so it stops that cell and the cells
    below still run (nbgrader's autograde allows errors). The student's explain.py says the same words."""
    where, innermost = _where(exc), _innermost(exc)
    line = f" (line {innermost[1]}{' of its cell' if where else ''})" if innermost else ""
    return f"{where + ' ' if where else ''}called {_exit_call(exc)}{line}, which stops the cell there"


def _exit_call(exc: SystemExit) -> str:
    """The call that raised it: quit() or exit() (site's Quitter raised it, the last frame of its traceback),
    else sys.exit, with its argument (_exit_code)."""
    frames = [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]
    quitter = frames[-1].f_locals.get("self") if frames and frames[-1].f_code is _QUITTER else None
    name = getattr(quitter, "name", None) if quitter is not None else None
    function = name if name in ("quit", "exit") else "sys.exit"  # a Quitter's name is the notebook's to choose
    code = _said(lambda: exc.code, raised=...)  # a subclass's own property may raise: then no argument is told
    if code is ...:
        return f"{function}(...)"
    return f"{function}()" if function != "sys.exit" and code is None else f"{function}({_exit_code(code)})"


def _said(read: Callable[[], Any], raised: Any = "") -> Any:
    """What `read` gives of the notebook's exception (its str(), a SystemExit's code), or `raised` where the
    exception's own code raises instead (a __str__ reading an attribute __init__ never set): a message of the
    grader's is never lost to it, nor the loader (red-f14)."""
    try:
        return read()
    except Exception:
        return raised


_QUITTER = _sitebuiltins.Quitter.__call__.__code__


def _exit_code(code: object) -> str:
    """sys.exit's argument as the grader writes it: an int's, a str's (quoted) or None's repr; any other object's
    __repr__ is the notebook's text, which could close the parenthesis and go on as the grader's sentence."""
    return repr(code) if code is None or type(code) in (int, bool, str) else "an object of the notebook's own"


def describe_not_plain(error: Exception) -> str:
    """Why a check's answer was not taken: what it returned cannot be sent as data."""
    return f"returned something that is not plain data ({error})"


# The shapes of the reasons describe_exception and describe_exit write, read as they are written: the notebook's
# own text (an exception's message, sys.exit's argument, a file name) comes only after words of theirs.
_QUALNAME = r"[\w.<>]+"
_REPR = r"""(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""  # a str's repr: its quotes hold all of it
_LOADER_SHAPES = re.compile(
    rf"(?:{_QUALNAME} )?raised [^\W\d][\w.]*(?:(?::| \(line|, which stops the program).*)?"
    rf"|{_QUALNAME} {re.escape(NOT_WRITTEN)}|(?:{_QUALNAME}|the code) ran out of memory"
    rf"|(?:{_QUALNAME} )?called (?:sys\.exit|quit|exit)\((?:-?\d+|None|True|False|{_REPR}|an object of the notebook's own)?\)"
    rf"(?:, which ends the program| \(line \d+(?: of its cell)?\), which stops the cell there)"
    rf"|(?:file {_REPR} has )?a syntax error on line \w+: .*"  # a cell's (its caller names it), or a file's
    rf"|returned something that is not plain data \(.*\)", re.S)


def as_notebooks(reason: str, fixed: tuple[str, ...] = ()) -> str:
    """A check's reason as a process that ran student code sent it (a loader or check child, which that code may
    write for): kept when it reads as one of the shapes that process writes (or is one of its `fixed` words),
    else quoted as the notebook's own words, so that no text of its own speaks as the grader."""
    return reason if reason in fixed or _LOADER_SHAPES.fullmatch(reason) else in_notebooks_words(reason)


def as_notebooks_load_error(error: str) -> str:
    """A cell's load error as a loader sent it ("cell NAME: " and describe_exception's line): kept in that shape,
    else quoted as the notebook's own words (as_notebooks)."""
    cell, colon, reason = error.partition(": ")
    if colon and cell.startswith("cell ") and " " not in cell[len("cell "):] and as_notebooks(reason) == reason:
        return error
    return in_notebooks_words(error)


def in_notebooks_words(reason: str) -> str:
    """A reason a process of student code sent that the grader does not take as its own: quoted, as the notebook's."""
    return f'sent an answer in words of its own (written to the grader\'s pipe?): "{reason}"'


PRINTED_PAST_LIMIT = "printed more than the output limit allows"
NOT_RUN_AFTER_TIME_OUT = "not run: an earlier check of this part ran out of time"
# A check of a batch run together (child.py) that did not get its answer there: the grader runs it again alone.
NOT_RUN_TOGETHER = "not run: the checks run together in one process stopped before it"


def describe_budget(seconds: float, wall: bool = False) -> str:
    """Which of the submission's time budgets ran out: its CPU time, or (`wall`) the wall-clock backstop of
    `seconds`, which only waiting or sleeping reaches."""
    if wall:
        return (f"the submission took {seconds:g} s of wall-clock time (not counting waits for a CPU), its limit: "
                "waiting or sleeping?")
    return f"the submission used its {seconds:g} s of CPU time"


def describe_budget_spent(seconds: float, wall: bool = False) -> str:
    """Why a check was not run: a time budget of the submission ran out (describe_budget)."""
    return f"not run: {describe_budget(seconds, wall)}"


def describe_no_answer(seconds: float) -> str:
    """Why a call has no answer when the sandbox's worker, wedged by the submission, was killed."""
    return f"stopped: the sandbox gave no answer within {seconds:g} s (the submission's limits and a margin)"


def describe_time_out(what: str, seconds: float) -> str:
    """Why a check or a cell has no answer: it used its CPU time without finishing."""
    return f"{what} did not finish within {seconds:g} s of CPU time (an infinite loop?)"


def describe_wall_time_out(what: str, seconds: float, cpu_seconds: float) -> str:
    """Why a check or a cell has no answer: its wall-clock backstop passed before its CPU time ran out."""
    return (f"{what} did not finish within {seconds:g} s of wall-clock time (not counting waits for a CPU), "
            f"though it used less than its {cpu_seconds:g} s of CPU time: waiting or sleeping?")


def describe_answer_fault(fault: str, limit: int) -> str:
    """Why a check's answer was not taken: it is `fault` ("larger than 1,024 KB", "nested more than 32 levels
    deep"), past what the grader reads from one answer of at most `limit` bytes."""
    return f"returned an answer {fault}: more than the grader reads from one check (at most {limit // 1024:,} KB)"


def describe_answers_budget(megabytes: int) -> str:
    """Why a check was not run: the submission's answers came to more than the grader reads from one."""
    return f"not run: your answers were larger than {megabytes:,} MB in all, the most the grader reads from a submission"


def describe_process_budget(processes: int) -> str:
    """Why a check could not start: the submission's processes held its whole process budget."""
    return f"could not start: the submission's processes used its process budget of {processes}"


def describe_own_process_limit(processes: int) -> str:
    """Why a check could not start: the notebook lowered its own process limit below what the grader set."""
    return f"could not start: the notebook lowered its own process limit (RLIMIT_NPROC) to {processes}"


# Why a check could not start when the grader itself could start a process meanwhile: the notebook's process
# refused it (it replaced os.fork, or held its limit low for a while), not the machine.
REFUSED_BY_NOTEBOOK = ("could not start: the notebook's process could not start one for the check, though the "
                       "grading machine had processes to spare")


def describe_memory_budget(megabytes: int) -> str:
    """Which budget a process was killed for: the memory the submission's processes held together."""
    return f"the submission's processes together used their memory budget of {megabytes} MB"


def describe_disk_budget(megabytes: int) -> str:
    """Which budget a process was stopped for: the files in the submission's scratch folder."""
    return f"the submission's files came to more than its disk budget of {megabytes} MB"


def describe_status(status: int, memory_budget_mb: int = 0) -> str:
    """Why a process that owed an answer ended, from its wait status. `memory_budget_mb`: the kernel's
    count says it killed one of the submission's processes for the memory budget (of that size)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return "used more CPU time than the limit allows"
        if sig == signal.SIGKILL and memory_budget_mb:
            return f"was killed by the kernel: {describe_memory_budget(memory_budget_mb)}"
        if sig == signal.SIGKILL:
            return "was killed (SIGKILL), by none of the grader's limits"
        return f"crashed ({signal.Signals(sig).name if sig in signal.valid_signals() else f'signal {sig}'})"
    return f"ended the process (os._exit({os.WEXITSTATUS(status)})?) before the check finished"
