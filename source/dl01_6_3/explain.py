"""One line for what your code raised, naming the method and the line of its cell, and the text of a message
made safe to print: what the public checks (notebook_checks.py) print for an exception. The course's grader
says it in the same words (its own copy: tests/test_messages.py holds the two to one list). Standard library only.
"""
from __future__ import annotations

import _sitebuiltins
import os
import re
import sys
import traceback
import unicodedata

# What a terminal acts on (C0 but newline and tab, DEL, C1): removed from every line printed, since a message
# can quote the notebook (an exception's text, a type's name); format characters (Unicode's Cf: the
# bidirectional controls that reorder a line, zero-width ones) written as their escapes, \u202e, and so the other
# default-ignorable characters, drawn as nothing or a blank, that Python takes in a name ('bias\u034f' is not 'bias').
# The grader's autograder/outputs/inert.py does the same.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
NON_ASCII = re.compile(r"[^\x00-\x7f]")
IGNORABLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2065\u3164\ufe00-\ufe0f\uffa0\ufff0-\ufff8"
                       "\U000e0000-\U000e0fff]")


def _format_escaped(match) -> str:
    char = match[0]
    hidden = unicodedata.category(char) == "Cf" or IGNORABLE.match(char)
    return char.encode("unicode_escape").decode("ascii") if hidden else char


def printable(text: str) -> str:
    """`text` without the control characters a terminal would act on, and its format characters escaped."""
    return NON_ASCII.sub(_format_escaped, CONTROL.sub("", text))


def _qualname(frame) -> str:
    """`Class.method` of a frame's code (co_qualname from Python 3.11; before it, found through `self`)."""
    code = frame.f_code
    if hasattr(code, "co_qualname"):
        return code.co_qualname
    owner = frame.f_locals.get("self") if code.co_varnames[:1] == ("self",) else None
    for cls in type(owner).__mro__ if owner is not None else ():
        if getattr(vars(cls).get(code.co_name), "__code__", None) is code:
            return f"{cls.__qualname__}.{code.co_name}"
    return code.co_name


def in_notebook(filename: str) -> bool:
    """Code from a notebook cell: the checks' "<cell ...>", or IPython's in a live kernel."""
    return filename.startswith(("<cell", "<ipython-input")) or "ipykernel_" in filename


def is_a(exc: BaseException, kind: type) -> bool:
    """isinstance without reading exc.__class__, which a class of the notebook's may make a property that raises."""
    return issubclass(type(exc), kind)


def _said(read, raised: object = "") -> object:
    """What `read` gives of the notebook's exception (its str(), a SystemExit's code, its traceback), or `raised`
    where the exception's own code raises instead, anything (a KeyboardInterrupt too): the checks go on."""
    try:
        return read()
    except BaseException:  # noqa: B036 - the notebook's code, whatever it raises, must not end the checks
        return raised


def _innermost(exc: BaseException):
    """(frame, line) of the innermost notebook code the exception passed through, or None."""
    frames = [(frame, line) for frame, line in _frames(exc) if in_notebook(frame.f_code.co_filename)]
    return frames[-1] if frames else None


def called_by_notebook(exc: BaseException):
    """The code object the innermost notebook line called, where the exception came from (None if it raised
    there): e.g. Tensor.__mul__'s, for `*` or for a NumPy function that multiplies Tensors as objects."""
    frames = [frame for frame, _ in _frames(exc)]
    mine = [i for i, frame in enumerate(frames) if in_notebook(frame.f_code.co_filename)]
    return frames[mine[-1] + 1].f_code if mine and mine[-1] + 1 < len(frames) else None


def _frames(exc: BaseException) -> list:
    """(frame, line) of each level of the exception's traceback (none where reading it raises)."""
    return _said(lambda: list(traceback.walk_tb(exc.__traceback__)), [])


def where(exc: BaseException) -> str | None:
    """The innermost notebook code (a cell's function, or "<module>") the exception passed through."""
    innermost = _innermost(exc)
    return _qualname(innermost[0]) if innermost else None


# NumPy's TypeError for an operand whose class sets __array_ufunc__ = None (a Tensor), given to a ufunc such as
# np.matmul: what it says, and what the message adds (the class has operations of its own).
REFUSES_UFUNCS = ("does not support ufuncs (__array_ufunc__=None)",
                  ": NumPy's ufuncs (np.matmul, np.add, ...) refuse that operand; use its own operations (@, +)")


def describe_exception(exc: BaseException, quote: bool = True, cell: bool = False) -> str:
    """One line: `Class.method raised Type: message (line N of its cell)`, naming the innermost notebook
    code involved and the line of its cell that raised (the line Jupyter numbers in that cell); `quote`
    False leaves the message out, where a check states the fact itself. `cell`: out of a cell as it ran,
    where a SystemExit (Jupyter's kernel catches it) stops only that cell, and the tokenizer reads the cell. The
    exception's own code (a __str__, a property of the notebook's class) may raise: what it hides is left out."""
    try:
        return _described(exc, quote, cell)
    except BaseException:  # noqa: B036 - e.g. a SyntaxError subclass whose lineno raises: its type's name alone
        return f"raised {_type_name(exc)}"


def _type_name(exc: BaseException) -> str:
    """The name the class was made with (type's own attribute: a metaclass's __name__ property is not read)."""
    return vars(type)["__name__"].__get__(type(exc))


def _described(exc: BaseException, quote: bool, cell: bool) -> str:
    innermost = _innermost(exc)
    function = None if where(exc) in (None, "<module>") else where(exc)
    line = f" (line {innermost[1]}{' of its cell' if function else ''})" if innermost else ""
    if is_a(exc, SystemExit) and cell:
        return f"{function + ' ' if function else ''}called {_exit_call(exc)}{line}, which stops the cell there"
    if is_a(exc, NotImplementedError) and function:
        return f"{function} is not written yet: replace `raise NotImplementedError()` with your code"
    if is_a(exc, SyntaxError):  # a cell's: its caller names the cell ("cell sgd: ..."); else the file
        # (any text); "<tokenize>": IPython's transform_cell, which tokenizes a cell before it runs, read the cell;
        # a filename not a str (None, or SyntaxError("x", (1, 2, 3, "x")) raised by hand) names no file
        filename = exc.filename
        own = type(filename) is not str or in_notebook(filename) or (cell and filename == "<tokenize>")
        where_from = "" if own else f"file {filename!r} has "
        return f"{where_from}a syntax error on line {exc.lineno}: {exc.msg}"
    text = _said(lambda: str(exc).strip())  # str() of ValueError(10**5000) raises too
    message = text.splitlines()[0] if text else ""
    what = f"{_type_name(exc)}: {message}" if message and quote else _type_name(exc)
    if is_a(exc, TypeError) and message.endswith(REFUSES_UFUNCS[0]):  # NumPy's words: name what to use
        line += REFUSES_UFUNCS[1]
    return f"{function} raised {what}{line}" if function else f"raised {what}{line}"


def _exit_call(exc: SystemExit) -> str:
    """quit() or exit() (site's Quitter raised it: the last frame of its traceback), else sys.exit, with its
    argument (an int's, a str's or None's repr: any other object's repr is the notebook's text)."""
    frames = [frame for frame, _ in _frames(exc)]
    quitter = frames[-1].f_locals.get("self") if frames and frames[-1].f_code is _QUITTER else None
    name = _said(lambda: getattr(quitter, "name", None), None)  # a Quitter's name is the notebook's to set
    function = name if type(name) is str and name in ("quit", "exit") else "sys.exit"
    code = _said(lambda: exc.code, ...)  # a subclass's own property may raise: then no argument is told
    if code is ...:
        return f"{function}(...)"
    # repr of an int past Python's 4,300 digits raises ValueError
    told = _said(lambda: repr(code), "...") if code is None or type(code) in (int, bool, str) else "an object of your own"
    return f"{function}()" if function != "sys.exit" and code is None else f"{function}({told})"


_QUITTER = _sitebuiltins.Quitter.__call__.__code__


def why_missing(name: str, load_errors: list, seen: frozenset = frozenset()) -> str:
    """The load error ('' if none) of the first cell that raised whose source names `name`, or, when that cell raised
    NameError for another name (class Linear(Module) with no Module), the error behind that name, as the grade says."""
    reason = next((r for r, source in load_errors if isinstance(source, str) and re.search(rf"\b{name}\b", source)), "")
    deeper = re.search(r"NameError: name '(\w+)' is not defined", reason)
    return (why_missing(deeper[1], load_errors, seen | {name}) or reason) if deeper and deeper[1] not in seen else reason


def own_streams() -> None:
    """A child prints UTF-8 (whatever the console's code page) to its own output, not a kernel's streams."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        try:
            setattr(sys, name, open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False))
        except OSError:  # no console at all (pythonw on Windows)
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
