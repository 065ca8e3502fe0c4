"""Which of IPython's magics run the notebook's own code in its namespace, as IPython 9.18's magics/execution.py
and osm.py do, and how their lines are read: shared by the sandbox's stand-in shell (ipython_shell.py), which runs
that code, and the grader's linear reading of a cell (program.py), which must agree with it on the names a cell
binds. No imports but re: the worker imports this file as a top-level module, the caller as a package one."""
from __future__ import annotations

import re

# The options each magic that runs a statement takes before it (IPython's getopt strings: %prun 'D:l:rs:T:q',
# %timeit 'n:r:tcp:qov:'; %time's one flag), a letter that takes a value followed by it.
_OPTIONS = {"time": r"--no-raise-error", "prun": r"-[rq]*(?:[DlsT][ \t]*\S+)?", "timeit": r"-[tcqo]*(?:[nrpv][ \t]*\S+)?"}
# Of those, the magics whose statement (or cell body) binds names in the notebook's namespace: %timeit runs its own
# once per loop inside a function IPython makes (`def inner`), so it binds none. %%capture runs its body as a cell.
BINDING = ("time", "prun", "capture")
ALIASES = {"file": "writefile"}  # InteractiveShell.init_magics: %%file is %%writefile
# Every magic the sandbox's shell runs, line and cell (ipython_shell.py: ALIASES's names are read as their target's);
# any other does nothing, as a shell command (`!cmd`, `!!cmd`) does: %sx, %system, %pip, %conda, %cd, %%bash,
# %%script, %matplotlib, ... The public checks' shell (the release's checks_shell.py: the student's folder holds no
# autograder/) keeps the same two sets, and tests/test_kit.py checks that they agree.
LINE_MAGICS = frozenset({*_OPTIONS, "env", "set_env", "reset", "xdel", "run"})
CELL_MAGICS = frozenset({*_OPTIONS, "capture", "writefile"})


def statement(name: str, line: str) -> str | None:
    """The statement line magic `name` runs, its options taken off `line` (the rest of the magic's line); None
    for a magic that runs no code of the notebook's. Linear."""
    if name not in _OPTIONS:
        return None
    options = re.match(rf"(?:[ \t]*(?:{_OPTIONS[name]})(?=[ \t]|$))*[ \t]*", line)
    return line[options.end():] if options else line


def captured_name(line: str) -> str:
    """The name `%%capture`'s line binds to what it captured ('' for none): its first argument that is no flag."""
    return next((word for word in line.split() if not word.startswith("-")), "")
