"""IPython's shell for the public checks (runner.py reads each cell with it), doing with a cell's shell lines what
the grade's does. The magics that run the notebook's own code run as IPython runs them (%time, %timeit, %prun,
%%capture, %%writefile, %env, %reset, %xdel, %run); a shell command (`!cmd`; `!!cmd` and `files = !cmd` give no
lines) and every other magic (%pip, %sx, %system, %cd, %%bash, %%script, ...) do nothing. In Jupyter your kernel ran
the command when you ran its cell; the checks, which run the notebook again for every part, do not run it again,
and the grade runs no command at all. The two sets are the grade's (autograder/sandbox/ipython_magics.py, kept in
step by the kit's tests). The shell is IPython's current one while the cells run, so `from IPython import
get_ipython` returns it, as in Jupyter and in the grade. What its run_cell runs (%run of a notebook too) is named
after the cell that called it, as the grade names it ("<cell sgd, by run_cell>": facts.defined_in reads it as cell
sgd). Needs IPython.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from IPython.core.compilerop import CachingCompiler
from IPython.core.interactiveshell import ExecutionResult, InteractiveShell
from IPython.utils.text import SList
from traitlets import Type
from traitlets.config import Config

LINE_MAGICS = frozenset({"time", "prun", "timeit", "env", "set_env", "reset", "xdel", "run"})
CELL_MAGICS = frozenset({"time", "prun", "timeit", "capture", "writefile", "file"})  # %%file is %%writefile
CELL_FILE = re.compile(r"<cell ([^\s,>]+)")  # a cell's code file name (runner.py); a kernel's In[7] whole, not "In"


def calling_cell() -> str:
    """The name of the notebook cell whose code is the innermost on the stack ('' if none), by the grade's rule
    (autograder/sandbox/ipython_shell.py calling_cell): read with str's own methods (a code's may be a str subclass)."""
    frame = sys._getframe(1)
    while frame is not None:
        found = CELL_FILE.match(str.__str__(frame.f_code.co_filename))
        if found:
            return found[1]
        frame = frame.f_back
    return ""


class CellCompiler(CachingCompiler):
    """IPython's compiler, but what run_cell runs is named "<cell X, by run_cell>", X the cell that called it, as the
    grade names it (IPython's own "<ipython-input-N-...>" names no cell)."""

    def get_code_name(self, raw_code: str, transformed_code: str, number: int) -> str:
        return f"<cell {calling_cell()}, by run_cell>"


class ZMQInteractiveShell(InteractiveShell):
    """IPython's InteractiveShell but for shell commands and the magics the grade does not run. Named as Jupyter's
    kernel's shell and the grade's are: notebooks test that name to know they run in Jupyter."""

    compiler_class = Type(CellCompiler)

    def read(self, source: str) -> str:
        """The cell's Python, with an execution result in place, as run_cell leaves one after each cell (del_var, so
        %xdel, reads its `result`: None, as no cell's value is shown here)."""
        self.last_execution_result = ExecutionResult(None)
        return self.transform_cell(source)

    def run_line_magic(self, magic_name: str, line: str, _stack_depth: int = 1) -> object:
        if magic_name not in LINE_MAGICS:
            return None
        return super().run_line_magic(magic_name, line, _stack_depth + 1)  # + 1: this frame, for %time's locals

    def run_cell_magic(self, magic_name: str, line: str, cell: str) -> object:
        # IPython's fixed depth for the line's `{name}` now reaches the cell's frame, as the grade's expansion does
        return super().run_cell_magic(magic_name, line, cell) if magic_name in CELL_MAGICS else None

    def system(self, cmd: str) -> None:  # `!cmd`
        return None

    system_piped = system_raw = system

    def getoutput(self, cmd: str, split: bool = True, depth: int = 0) -> SList:  # `!!cmd`, `files = !cmd`
        return SList()


@contextmanager
def shell(names: dict) -> Iterator[ZMQInteractiveShell]:
    """The shell on the namespace `names` (no history kept), IPython's current one until the cells have run; then the
    one before, if any (the cells may run inside a kernel's own cell: stock nbgrader's grade cells load the notebook)."""
    before = InteractiveShell._instance
    the = ZMQInteractiveShell(config=Config(HistoryManager=Config(enabled=False)), user_ns=names)
    # what InteractiveShell.instance() sets (IPython's get_ipython() returns InteractiveShell._instance), also when
    # another shell was current, where instance() would refuse
    ZMQInteractiveShell._instance = InteractiveShell._instance = the
    try:
        yield the
    finally:
        ZMQInteractiveShell._instance, InteractiveShell._instance = None, before
