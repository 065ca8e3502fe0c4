"""A notebook's cells compiled and run as IPython 9.18's shell runs them (InteractiveShell.run_ast_nodes): with one
compiler for the whole notebook, a codeop.Compile as IPython's CachingCompiler is, so that a cell's own
`from __future__ import annotations` holds for the cells below it (and `barry_as_FLUFL`, which the parser reads: the
cells below it are parsed with it, the cell that imports it is not); each top-level statement compiled, then run, in
turn, top-level `await` allowed (IPython's autoawait, on by default) and such a statement awaited; a last statement
that is an expression in 'single' mode, so that its value goes to sys.displayhook (ipython_outputs.shown), unless a
semicolon ends it (IPython's quiet). Every cell runs whole on the notebook's event loop, as ipykernel runs each
(its do_execute is a coroutine of the kernel's running loop).
Run only inside the worker (child.py imports it as a top-level module).
"""
from __future__ import annotations
import __future__

import ast
import asyncio  # imported by the worker: a confined loader may not read the standard library's files
import codeop
import inspect
import os
import selectors
from types import CodeType
from typing import Iterable, Iterator

# The flags of every future feature: the ones in force are those the notebook's compiler parses a cell with
FUTURES = sum(getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)


class Compiler(codeop.Compile):
    """IPython's CachingCompiler: it keeps the future flags of every code it compiled. dont_inherit (codeop's): no
    `from __future__` of the sandbox's own files reaches a cell, as none of IPython's reaches one in Jupyter."""

    def __init__(self) -> None:
        super().__init__()
        self.flags |= ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        self.plain = self.flags  # before any future import

    def codes(self, source: str, filename: str) -> Iterator[CodeType]:
        """The codes of the cell `source` (plain Python), one per top-level statement, each compiled when the one
        before it has run, as IPython compiles them (a future import, or an error found only by the compiler, takes
        effect after the statements above it ran)."""
        source = python_lines(source)
        # parsed with the future imports of the cells above, as IPython's ast_parse (with its compiler's flags)
        tree = compile(source, filename, "exec", ast.PyCF_ONLY_AST | (self.flags & FUTURES), dont_inherit=True)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        for node in tree.body:
            yield self._compiled(ast.Module([node], []), filename, "exec")
        if isinstance(last, ast.Expr) and _quiet(source, last):
            yield self._compiled(ast.Module([last], []), filename, "exec")
        elif last is not None:
            yield self._compiled(ast.Interactive([last]), filename, "single")

    def _compiled(self, tree: ast.mod, filename: str, mode: str) -> CodeType:
        return self(tree, filename, mode)  # type: ignore[arg-type]  # codeop's compile() takes an ast too


def python_lines(source: str) -> str:
    """`source` with its line breaks as Python's tokenizer reads them: a bare CR and a CR LF are each one LF (the
    tokenizer translates them so before it reads a token, string literals too), so that a line the ast numbers is
    that line of the text."""
    return source.replace("\r\n", "\n").replace("\r", "\n")


def _quiet(source: str, last: ast.Expr) -> bool:
    """Whether a semicolon follows the cell's last expression (its columns count UTF-8 bytes; `source`'s lines are
    python_lines')."""
    after = source.split("\n")[(last.end_lineno or 1) - 1].encode()[last.end_col_offset or 0:]
    return after.lstrip().startswith(b";")


def run_cell(codes: Iterable[CodeType], namespace: dict) -> None:
    """Run a cell's `codes` in turn in `namespace`, the whole cell on the notebook's event loop, as ipykernel runs
    every cell (so asyncio.get_running_loop() and ensure_future() work in any cell, asyncio.run() fails in any);
    a statement with a top-level `await` (a coroutine's code) awaited there, as IPython's run_code awaits it."""
    error = _event_loop().run_until_complete(_cell(codes, namespace))
    if error is not None:
        raise error


async def _cell(codes: Iterable[CodeType], namespace: dict) -> Exception | None:
    """The cell run; what it raised, returned, as IPython's run_code catches it inside its coroutine: raised out of
    one, a StopIteration would become "coroutine raised StopIteration" (PEP 479)."""
    try:
        for code in codes:
            if code.co_flags & inspect.CO_COROUTINE:
                await eval(code, namespace)
            else:
                exec(code, namespace)
    except Exception as error:
        return error
    return None


_loop: asyncio.AbstractEventLoop | None = None


def _event_loop() -> asyncio.AbstractEventLoop:
    """The notebook's one event loop (the kernel's in Jupyter), made on first use: tasks a cell started go on in the
    cells below. It waits with poll and wakes itself through a pipe: the loader's system-call filter (seccomp.py)
    denies epoll and socketpair, which asyncio's default loop needs."""
    global _loop
    if _loop is None:
        _loop = _PipeWokenLoop(selectors.PollSelector())
    return _loop


def close_loop() -> None:
    """Close the notebook's event loop, and its wake-up pipe with it: in a check child, a fork of the loader that
    runs its calls off the loop, and holds no pipe but the one its answers go to."""
    global _loop
    if _loop is not None:
        _loop.close()
        _loop = None


class _PipeWokenLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop, its self-pipe a pipe instead of a socketpair."""

    def _make_self_pipe(self) -> None:
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        # asyncio's own registration, as for its socketpair: the public add_reader needs what __init__ makes next
        self._add_reader(self._wake_read, self._read_from_self)  # type: ignore[attr-defined]  # asyncio internal

    def _close_self_pipe(self) -> None:
        self._remove_reader(self._wake_read)  # type: ignore[attr-defined]  # asyncio internal
        os.close(self._wake_read)
        os.close(self._wake_write)

    def _read_from_self(self) -> None:
        try:
            while os.read(self._wake_read, 4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def _write_to_self(self) -> None:
        try:
            os.write(self._wake_write, b"\0")
        except OSError:  # full (a wake-up is already pending) or closed
            pass
