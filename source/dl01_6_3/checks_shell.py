"""IPython's shell for the public checks (runner.py reads each cell with it), doing with a cell's shell lines what
the grade's does. The magics that run the notebook's own code run as IPython runs them (%time, %timeit, %prun,
%%capture, %%writefile, %env, %reset, %xdel, %run); a shell command (`!cmd`; `!!cmd` and `files = !cmd` give no
lines) and every other magic (%pip, %sx, %system, %cd, %%bash, %%script, ...) do nothing. In Jupyter your kernel ran
the command when you ran its cell; the checks, which run the notebook again for every part, do not run it again,
and the grade runs no command at all. The two sets are the grade's (autograder/sandbox/ipython_magics.py, kept in
step by the kit's tests). Needs IPython.
"""
from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.text import SList
from traitlets.config import Config

LINE_MAGICS = frozenset({"time", "prun", "timeit", "env", "set_env", "reset", "xdel", "run"})
CELL_MAGICS = frozenset({"time", "prun", "timeit", "capture", "writefile", "file"})  # %%file is %%writefile


class ChecksShell(InteractiveShell):
    """IPython's InteractiveShell but for shell commands and the magics the grade does not run."""

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


def shell(names: dict) -> ChecksShell:
    """The shell on the namespace `names` (no history kept)."""
    return ChecksShell(config=Config(HistoryManager=Config(enabled=False)), user_ns=names)
