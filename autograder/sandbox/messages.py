"""One-line explanations of what went wrong in student code, for the grader's messages.

The student's released explain.py (source/<assignment>/explain.py) keeps its own `describe_exception`: the
sandbox's copy adds MemoryError, and the sandbox loads nothing of an assignment's folder into the worker before
student code runs (so it serves any assignment); tests/test_messages.py holds both to the same words on a
golden list.
The exception described is the notebook's: every read of it here runs none of its code that could raise (the
C-level slots are read directly: its traceback, its type's name, a SyntaxError's or a SystemExit's fields), or is
guarded against any exception (its str(), a Quitter's name), and every text taken from it is cut to a few
hundred characters, so that a line this module writes fits a loader's Loaded line and reads as the loader's shape
(red-c15: an exception that misbehaves stops only its cell, as IPython's run_code shows any and goes on).
Standard library only: the worker imports this file as a top-level module, the caller as a package one.
"""
from __future__ import annotations

import _sitebuiltins
import os
import re
import signal
import traceback
from types import TracebackType
from typing import Any, Callable

# What a line takes of the notebook's text: a name (a function's, a type's), a message's first line, a str or an
# int sys.exit was given. Longer ones are cut, "..." marking the cut.
NAME_CHARS, MESSAGE_CHARS, CODE_CHARS = 60, 200, 60

# The C-level slots, read without the attribute lookup a class of the notebook's may override with a property
_TRACEBACK = BaseException.__dict__["__traceback__"]
_TYPE_NAME = type.__dict__["__name__"]
_SYNTAX = {field: SyntaxError.__dict__[field] for field in ("filename", "lineno", "msg")}
_CODE = SystemExit.__dict__["code"]


def _cut(text: str, chars: int) -> str:
    """`text` as a plain str of at most `chars` characters ("..." at the end where it was cut): a str subclass's
    own methods are never called."""
    return str.__getitem__(text, slice(0, chars)) if str.__len__(text) <= chars else str.__getitem__(
        text, slice(0, chars - 3)) + "..."


def _traceback(exc: BaseException) -> TracebackType | None:
    return _TRACEBACK.__get__(exc)


def _type_name(exc: BaseException) -> str:
    """The name of the exception's type (a metaclass of the notebook's may make __name__ a property)."""
    return _cut(_TYPE_NAME.__get__(type(exc)), NAME_CHARS)


def _is(exc: BaseException, kind: type) -> bool:
    """isinstance by the exception's type (isinstance would read its __class__, which a class may override)."""
    return issubclass(type(exc), kind)


def _in_notebook(filename: str) -> bool:
    """Code from a notebook cell: the sandbox's "<cell ...>", or IPython's in a live kernel (str's own methods: a
    code's file name may be a str subclass of the notebook's, code.replace(co_filename=...))."""
    return str.startswith(filename, ("<cell", "<ipython-input")) or str.__contains__(filename, "ipykernel_")


def _innermost(exc: BaseException) -> tuple[str, int] | None:
    """(qualified name, line) of the innermost notebook code the exception passed through."""
    found = None
    for frame, line in traceback.walk_tb(_traceback(exc)):
        if _in_notebook(frame.f_code.co_filename):
            found = (_cut(frame.f_code.co_qualname, NAME_CHARS), line)
    return found


def _where(exc: BaseException) -> str | None:
    """The innermost notebook function the exception passed through."""
    innermost = _innermost(exc)
    return innermost[0] if innermost and innermost[0] != "<module>" else None


def called_by_notebook(exc: BaseException):
    """The code object the innermost notebook line called, where the exception came from (None if it raised
    there): e.g. Tensor.__mul__'s, for `*` or for a NumPy function that multiplies Tensors as objects."""
    frames = [frame for frame, _ in traceback.walk_tb(_traceback(exc))]
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
    if _is(exc, NotImplementedError) and where:
        return f"{where} {NOT_WRITTEN}"
    if _is(exc, SyntaxError):
        return _syntax_error(exc)
    if _is(exc, MemoryError):
        return f"{where or 'the code'} ran out of memory"
    message = _said(lambda: _first_line(str(exc)))
    what = f"{_type_name(exc)}: {message}" if message and quote else _type_name(exc)
    line = f" (line {innermost[1]}{' of its cell' if where else ''})" if innermost else ""
    if _is(exc, TypeError) and message.endswith(REFUSES_UFUNCS[0]):  # NumPy's words: name what to use
        line += REFUSES_UFUNCS[1]
    if _is(exc, RuntimeError) and message == "can't start new thread":  # Python's words when the filter denies one
        line += NO_THREADS
    return f"{where} raised {what}{line}" if where else f"raised {what}{line}"


def _syntax_error(exc: BaseException) -> str:
    """A cell's syntax error (its caller names the cell: "cell sgd: ..."), else the file's. Its fields are any objects
    a raise gave (SyntaxError("x", (1, 2, 3, "t")) makes the file name an int): a file name that is no str is none,
    a line that is no int is unknown (None)."""
    filename, lineno, msg = (field.__get__(exc) for field in _SYNTAX.values())
    # a file name is the notebook's text (compile() takes any): quoted, so that it cannot speak as the grader
    where_from = "" if not issubclass(type(filename), str) or _in_notebook(filename) else (
        f"file {_cut(filename, NAME_CHARS)!r} has ")
    line = lineno if type(lineno) is int and abs(lineno) < 10**9 else None
    return f"{where_from}a syntax error on line {line}: {_said(lambda: _first_line(str(msg)))}"


def _first_line(text: str) -> str:
    """The first line of an exception's text, stripped and cut (MESSAGE_CHARS): found within a bounded prefix, so
    that a text of millions of lines costs no list of them (red-c15 X24-c15-3)."""
    start = _NOT_SPACE.search(text)  # the regex reads a str subclass's characters, calling none of its methods
    head = str.__getitem__(text, slice(start.start(), start.start() + MESSAGE_CHARS + 1)) if start else ""
    return _cut(head.splitlines()[0].rstrip(), MESSAGE_CHARS) if head else ""


_NOT_SPACE = re.compile(r"\S")


def describe_exit(exc: BaseException) -> str:
    """For exceptions that are not Exceptions: they end the program, so they end the check."""
    where = _where(exc)
    what = (f"called {_exit_call(exc)}, which ends the program" if _is(exc, SystemExit)
            else f"raised {_type_name(exc)}, which stops the program")
    return f"{where} {what}" if where else what


def describe_cell_exit(exc: SystemExit) -> str:
    """A SystemExit out of a cell as it loads: Jupyter's kernel catches it, so it stops that cell and the cells
    below still run (nbgrader's autograde allows errors). The student's explain.py says the same words."""
    where, innermost = _where(exc), _innermost(exc)
    line = f" (line {innermost[1]}{' of its cell' if where else ''})" if innermost else ""
    return f"{where + ' ' if where else ''}called {_exit_call(exc)}{line}, which stops the cell there"


def _exit_call(exc: BaseException) -> str:
    """The call that raised it: quit() or exit() (site's Quitter raised it, the last frame of its traceback),
    else sys.exit, with its argument (_exit_code: the code it holds, not what a subclass's `code` property says)."""
    frames = [frame for frame, _ in traceback.walk_tb(_traceback(exc))]
    quitter = frames[-1].f_locals.get("self") if frames and frames[-1].f_code is _QUITTER else None
    name = _said(lambda: quitter.name, None) if quitter is not None else None  # the notebook's to choose
    function = name if type(name) is str and name in ("quit", "exit") else "sys.exit"
    code = _CODE.__get__(exc)
    return f"{function}()" if function != "sys.exit" and code is None else f"{function}({_exit_code(code)})"


def _said(read: Callable[[], Any], raised: Any = "") -> Any:
    """What `read` gives of the notebook's exception (its str(), a Quitter's name), or `raised` where the notebook's
    own code raises instead, whatever it raises (a __str__ reading an attribute __init__ never set, or raising
    KeyboardInterrupt): a message of the grader's is never lost to it, nor the loader (red-f14, red-c15). No budget
    of the grader's raises one in a loader (CPU time, output and the memory budget end the process), so none is
    caught here; a MemoryError of the address-space limit loses only this text."""
    try:
        return read()
    except BaseException:  # noqa: B036 - the notebook's code may raise anything; only this text is lost
        return raised


_QUITTER = _sitebuiltins.Quitter.__call__.__code__


def _exit_code(code: object) -> str:
    """sys.exit's argument as the grader writes it: an int's, a str's (quoted) or None's repr, cut ("..."); any
    other object's __repr__ is the notebook's text, which could close the parenthesis and go on as the grader's
    sentence. An int past the digits Python writes (sys.get_int_max_str_digits) is told by its size."""
    if type(code) is str:
        return repr(_cut(code, CODE_CHARS))
    if code is None or type(code) in (int, bool):
        text = _said(lambda: repr(code), None)
        return "an int too long to write" if text is None else text if len(text) <= CODE_CHARS else (
            f"{text[:CODE_CHARS // 2 - 2]}...{text[-(CODE_CHARS // 2 - 2):]}")
    return "an object of the notebook's own"


def describe_not_plain(error: Exception) -> str:
    """Why a check's answer was not taken: what it returned cannot be sent as data."""
    return f"returned something that is not plain data ({error})"


# Why a thread does not start in the sandbox (seccomp.py denies it): what one left running did later would depend on
# timing, never on the notebook alone
NO_THREADS = (": grading starts no thread (what one does after its cell ends would depend on timing); do the work in "
              "the cell itself")
LEFT_RUNNING = ("a timer armed", "a task or callback waiting on the event loop")  # what cell_runner.left_running finds


def describe_left_running(left: str, called: bool = False) -> str:
    """A cell, or (`called`) the notebook code a check called, that left code to run at a moment of its own (`left`,
    one of LEFT_RUNNING): Jupyter would run that code whenever it comes, so no grade could be the same twice."""
    return (f"{'the notebook code this check called ' if called else ''}left {left} when it ended, which could change "
            f"any name at any moment after: grading stops there (what the checks saw would depend on timing); finish "
            f"what it started (await the task, disarm the timer, remove the reader) before it ends")


PRINTED_PAST_LIMIT = "printed more than the output limit allows"
# The shapes of the reasons describe_exception and describe_exit write, read as they are written: the notebook's
# own text (an exception's message, sys.exit's argument, a file name) comes only after words of theirs.
_QUALNAME = r"[\w.<>]+"
_REPR = r"""(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""  # a str's repr: its quotes hold all of it
_LOADER_SHAPES = re.compile(
    rf"(?:{_QUALNAME} )?raised [^\W\d][\w.]*(?:(?::| \(line|, which stops the program).*)?"
    rf"|{_QUALNAME} {re.escape(NOT_WRITTEN)}|(?:{_QUALNAME}|the code) ran out of memory"
    rf"|(?:{_QUALNAME} )?called (?:sys\.exit|quit|exit)\((?:-?\d+(?:\.\.\.\d+)?|None|True|False|{_REPR}"
    rf"|an object of the notebook's own|an int too long to write)?\)"
    rf"(?:, which ends the program|(?: \(line \d+(?: of its cell)?\))?, which stops the cell there)"  # no line: no frame
    rf"|(?:file {_REPR} has )?a syntax error on line \w+: .*"  # a cell's (its caller names it), or a file's
    rf"|returned something that is not plain data \(.*\)"
    # a cell the loader stopped where it ran, at its CPU time or output limit (X35-c26-2, X35-c26-15)
    rf"|did not finish within [\d.e+]+ s of CPU time \(an infinite loop\?\)|{re.escape(PRINTED_PAST_LIMIT)}"
    rf"|(?:cell \S+ )?(?:{'|'.join(re.escape(describe_left_running(left, called)) for left in LEFT_RUNNING for called in (False, True))})", re.S)


def as_notebooks(reason: str, fixed: tuple[str, ...] = ()) -> str:
    """A check's reason as a process that ran student code sent it (a loader or check child, which that code may
    write for): kept when it reads as one of the shapes that process writes (or is one of its `fixed` words),
    else quoted as the notebook's own words, so that no text of its own speaks as the grader."""
    return reason if reason in fixed or _LOADER_SHAPES.fullmatch(_names_as_words(reason)) else in_notebooks_words(reason)


def _names_as_words(reason: str) -> str:
    """`reason` with each character a Python name may hold that the shapes' \\w does not match read as one it does:
    a combining mark (Unicode's Mn, Mc: a Devanagari virama or vowel sign, Thai's, Tamil's...) as a digit, which
    goes on a name, and a character that may start one (Other_ID_Start) as a letter (red-c15 X24-c15-9: a function
    or a class named in Hindi read as the notebook's words). Nothing else changes: a mark is never punctuation."""
    if reason.isascii():
        return reason
    return "".join(char if _WORD.match(char) else "a" if char.isidentifier() else "0" if ("a" + char).isidentifier()
                   else char for char in reason)


_WORD = re.compile(r"\w")


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
    return f"{what} {describe_over_time(seconds)}"


def describe_over_time(seconds: float) -> str:
    """Why the loader stopped a cell where it ran (child.py, X35-c26-2): it used its `seconds` of CPU time."""
    return f"did not finish within {seconds:g} s of CPU time (an infinite loop?)"


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
