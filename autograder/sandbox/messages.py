"""One-line explanations of what went wrong in student code, for the grader's messages.

The student's helper (source/<assignment>/notebook_checks.py) must stay standalone, so it keeps its
own `describe_exception`; tests/test_messages.py holds both to the same words on a golden list.
Standard library only: the worker imports this file as a top-level module, the caller as a package one.
"""
from __future__ import annotations

import os
import signal
import traceback


def _in_notebook(filename: str) -> bool:
    """Code from a notebook cell: the sandbox's "<cell ...>", or IPython's in a live kernel."""
    return filename.startswith(("<cell", "<ipython-input")) or "ipykernel_" in filename


def _where(exc: BaseException) -> str | None:
    """The innermost notebook function the exception passed through."""
    where = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        if _in_notebook(frame.f_code.co_filename):
            where = frame.f_code.co_qualname
    return where if where != "<module>" else None


def describe_exception(exc: BaseException) -> str:
    """`Class.method raised Type: message`, naming the innermost notebook function involved."""
    where = _where(exc)
    if isinstance(exc, NotImplementedError) and where:
        return f"{where} is not written yet: replace `raise NotImplementedError()` with your code"
    if isinstance(exc, SyntaxError):
        return f"{(exc.filename or 'a cell').strip('<>')} has a syntax error on line {exc.lineno}: {exc.msg}"
    if isinstance(exc, MemoryError):
        return f"{where or 'the code'} ran out of memory"
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return f"{where} raised {what}" if where else f"raised {what}"


def describe_exit(exc: BaseException) -> str:
    """For exceptions that are not Exceptions: they end the program, so they end the check."""
    where = _where(exc)
    what = (f"called sys.exit({exc.code!r}), which ends the program" if isinstance(exc, SystemExit)
            else f"raised {type(exc).__name__}, which stops the program")
    return f"{where} {what}" if where else what


NOT_RUN_AFTER_TIME_OUT = "not run: an earlier check of this part ran out of time"


def describe_budget_spent(seconds: float) -> str:
    """Why a check was not run: the submission's time budget was used up."""
    return f"not run: the submission used its {seconds:g} s"


def describe_no_answer(seconds: float) -> str:
    """Why a call has no answer when the sandbox's worker, wedged by the submission, was killed."""
    return f"stopped: the sandbox gave no answer within {seconds:g} s (the submission's limits and a margin)"


def describe_time_out(what: str, seconds: float) -> str:
    """Why a check or a cell has no answer when its wall-clock limit passed."""
    return f"{what} did not finish within {seconds:g} s (an infinite loop?)"


def describe_status(status: int) -> str:
    """Why a process that owed an answer ended, from its wait status."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return "used more CPU time than the limit allows"
        if sig == signal.SIGKILL:
            return "was killed (out of memory?)"
        return f"crashed ({signal.Signals(sig).name})"
    return f"ended the process (os._exit({os.WEXITSTATUS(status)})?) before the check finished"
