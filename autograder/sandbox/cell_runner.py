"""A notebook's cells compiled and run as IPython 9.18's shell runs them (InteractiveShell.run_ast_nodes): with one
compiler for the whole notebook, a codeop.Compile as IPython's CachingCompiler is, so that a cell's own
`from __future__ import annotations` holds for the cells below it (and `barry_as_FLUFL`, which the parser reads: the
cells below it are parsed with it, the cell that imports it is not); each top-level statement compiled, then run, in
turn, top-level `await` allowed (IPython's autoawait, on by default) and such a statement awaited; a last statement
that is an expression in 'single' mode, so that its value goes to sys.displayhook (ipython_outputs.shown), unless a
semicolon ends it (IPython's quiet). Every cell runs whole on the notebook's event loop, as ipykernel runs each
(its do_execute is a coroutine of the kernel's running loop), and in the notebook's one context (contextvars), as
ipykernel runs a cell in its dispatch task's: what a cell sets in a context variable (numpy 2's np.seterr, decimal's
context) holds in the cells below and in the checks, but for a cell with a top-level `await`, which ipykernel runs as
a task of its own, in a copy (red-a26 X35-a26-13).
Run only inside the worker (child.py imports it as a top-level module).
"""
from __future__ import annotations
import __future__

import ast
import asyncio  # imported by the worker: a confined loader may not read the standard library's files
import codeop
import contextvars
import gc
import inspect
import os
import selectors
import signal
import sys
from _signal import getitimer as _getitimer  # C-level, taken before any cell runs (X35-a26-3: see _HANDLE)
from types import CodeType, ModuleType, TracebackType
from typing import Iterable, Iterator, NamedTuple, cast

from messages import LEFT_RUNNING
from protocol import EVERY_NAME

# The flags of every future feature: the ones in force are those the notebook's compiler parses a cell with
FUTURES = sum(getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)


class Compiler(codeop.Compile):
    """IPython's CachingCompiler: it keeps the future flags of every code it compiled. dont_inherit (codeop's): no
    `from __future__` of the sandbox's own files reaches a cell, as none of IPython's reaches one in Jupyter."""

    def __init__(self) -> None:
        super().__init__()
        self.flags |= ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        self.plain = self.flags  # before any future import

    def codes(self, source: str, filename: str) -> Statements:
        """The codes of the cell `source` (plain Python), one per top-level statement (Statements), parsed now: IPython
        runs none of a cell that does not parse."""
        return Statements(self, python_lines(source), filename)

    def _compiled(self, tree: ast.mod, filename: str, mode: str) -> CodeType:
        return self(tree, filename, mode)  # type: ignore[arg-type]  # codeop's compile() takes an ast too


class Statements:
    """A cell's codes, one per top-level statement, each compiled when the one before it has run, as IPython compiles
    them (a future import, or an error found only by the compiler, takes effect after the statements above it ran).
    `line`: the first line of the statement compiled last, where an error the compiler finds in it stops the cell;
    `block_end`: its last line when it is a block whose lines do not run in their order (_REORDERED), else None."""

    def __init__(self, compiler: Compiler, source: str, filename: str) -> None:
        # parsed with the future imports of the cells above, as IPython's ast_parse (with its compiler's flags)
        self.tree = compile(source, filename, "exec", ast.PyCF_ONLY_AST | (compiler.flags & FUTURES), dont_inherit=True)
        self.compiler, self.source, self.filename = compiler, source, filename
        self.line = 1
        self.block_end: int | None = None

    def __iter__(self) -> Iterator[CodeType]:
        body = list(self.tree.body)
        last = body.pop() if body and isinstance(body[-1], ast.Expr) else None
        for node in body:
            yield self._compiled(node, ast.Module([node], []), "exec")
        if isinstance(last, ast.Expr) and _quiet(self.source, last):
            yield self._compiled(last, ast.Module([last], []), "exec")
        elif last is not None:
            yield self._compiled(last, ast.Interactive([last]), "single")

    def _compiled(self, node: ast.stmt, tree: ast.mod, mode: str) -> CodeType:
        # a decorated def or class begins at its first decorator
        self.line = min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", ()))])
        self.block_end = node.end_lineno if isinstance(node, _REORDERED) else None
        return self.compiler._compiled(tree, self.filename, mode)


# The blocks that may run a line below the one an exception names: a loop's later round raises above lines its
# first ran; a `finally` body, or a handler that raises again with a bare `raise` (no new traceback entry), runs
# below the line raised at. Any block but a def or a class (whose stopped body binds no name of its text: the class
# is not bound; what a `global` there bound, rebound tells), as one of those may stand at any depth in it: read as
# run whole, which reads more names as bound, so a stub replaces more of them (a lower grade at worst, never one
# above Jupyter's).
_REORDERED = (ast.For, ast.AsyncFor, ast.While, ast.Try, ast.TryStar, ast.With, ast.AsyncWith, ast.If, ast.Match)


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


def run_cell(codes: Iterable[CodeType], namespace: dict) -> tuple[BaseException, int] | None:
    """Run a cell's `codes` in turn in `namespace`, the whole cell on the notebook's event loop, as ipykernel runs
    every cell (so asyncio.get_running_loop() and ensure_future() work in any cell, asyncio.run() fails in any);
    a statement with a top-level `await` (a coroutine's code) awaited there, as IPython's run_code awaits it.
    The cell's task runs in the notebook's context (notebook_context), not in a copy of it as a task would by
    default: a context variable a cell sets holds in the cells below, as in Jupyter, whose kernel runs a cell in the
    task that runs every cell (red-a26 X35-a26-13: np.seterr(all='raise') was gone at the next cell and in the checks,
    and the grade was above Jupyter's). A cell with a top-level `await` (IPython's should_run_async) runs in a copy,
    as ipykernel runs it as a task of its own (asyncio.ensure_future): what it sets there is gone after it, in
    Jupyter too (nbclient: np.seterr(all='ignore') after an `await` prints 'raise' in the next cell). A task factory
    the notebook set on the loop makes the cell's task as before, in a copy of the notebook's context.
    What stopped the cell and the line of it where it stopped (stopped_at), or None when it ran to its end.
    An exception out of the loop itself, not out of a statement (a KeyboardInterrupt or SystemExit a callback the cell
    put on the loop raised, which asyncio raises again), stops it past its last line: read as run whole."""
    context = notebook_context()
    if _runs_async(codes):
        context = context.copy()
    try:
        loop = _event_loop()
        if loop.get_task_factory() is None:
            task = loop.create_task(_cell(codes, namespace), context=context)
        else:  # called as asyncio calls a factory given no context, as the kernel's own tasks call it: one that takes
            # none (the pre-3.11 signature) still runs every cell; the task it makes runs in a copy of the context
            task = context.run(loop.create_task, _cell(codes, namespace))
        _own[0] = task  # left_running passes over only this future's run_until_complete callback (X35-a26-11)
        return loop.run_until_complete(task)
    except BaseException as error:  # as _cell: the notebook's callback may raise anything
        return error, past_the_end(codes)


def notebook_context() -> contextvars.Context:
    """The notebook's one context, the kernel's in Jupyter (its dispatch task's): every cell runs in it (run_cell), and
    so does every check's call (child._run_calls), as Jupyter's test cells run in the kernel's context."""
    return _CONTEXT


# Made as the worker imports this module, not on first use: a loaded module's entry changed while a cell runs reads as
# a hook the cell left (left_hooks)
_CONTEXT = contextvars.copy_context()


def _runs_async(codes: Iterable[CodeType]) -> bool:
    """Whether IPython's should_run_async would run the cell as a coroutine: the whole cell, compiled with top-level
    `await` allowed, is one (a cell the compiler refuses is not). Compiled only when it could be: a top-level `await`,
    `async for` or `async with` needs its keyword in the text."""
    if not isinstance(codes, Statements):  # a course cell the worker compiled (an iterator: read as none)
        return isinstance(codes, tuple) and any(code.co_flags & inspect.CO_COROUTINE for code in codes)
    if "async" not in codes.source and "await" not in codes.source:
        return False
    try:
        code = compile(codes.tree, codes.filename, "exec", codes.compiler.flags, dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return bool(code.co_flags & inspect.CO_COROUTINE)


def past_the_end(codes: Iterable[CodeType]) -> int:
    """A line below the cell's last (program.run_before reads the cell whole up to it)."""
    return codes.source.count("\n") + 2 if isinstance(codes, Statements) else 1_000_000


async def _cell(codes: Iterable[CodeType], namespace: dict) -> tuple[BaseException, int] | None:
    """The cell run; what it raised, returned, as IPython's run_code catches any exception inside its coroutine:
    raised out of one, a StopIteration would become "coroutine raised StopIteration" (PEP 479)."""
    running = None  # the statement running: None between two, so that the compiler's error is told from its own
    try:
        for running in codes:
            if running.co_flags & inspect.CO_COROUTINE:
                await eval(running, namespace)
            else:
                exec(running, namespace)
            running = None
    except BaseException as error:  # as IPython's run_code: KeyboardInterrupt and SystemExit stop the cell too
        return error, stopped_at(error, running, codes)
    return None


def names_of(namespace: dict) -> list[tuple[object, object]]:
    """Each key of `namespace` and what it holds now: copied at once (dict.copy runs no code of the notebook's, nor
    lets a thread of its run meanwhile). The snapshot holds every key and value until rebound compares it, so no id
    of one is reused meanwhile."""
    return list(namespace.copy().items())


def rebound(before: list[tuple[object, object]], namespace: dict) -> list[str]:
    """The names a cell bound as it ran, as the sandbox saw them: each key of `namespace` new since `before`
    (names_of), or holding another object, and each key of `before` the cell deleted (a later cell's `Module` then
    finds builtins'), all by identity (the notebook chooses no comparison). For a cell that stopped, its lines above
    the stop do not show every name it bound (a def's or class body's `global Module`, globals()[...]), and a name it
    bound that a stub in its place replaces costs the grade, a name left out could raise it."""
    held = {(id(key), id(value)) for key, value in before}
    now = namespace.copy()
    kept = {id(key) for key in now}
    changed = [key for key, value in now.items() if (id(key), id(value)) not in held]
    return list(dict.fromkeys(_name(key) for key in changed + [key for key, _ in before if id(key) not in kept]))


def _name(key: object) -> str:
    """The name a later cell's `Module` finds `key` under: a str subclass's is its plain str value (its own hash and
    == are str's unless it overrides them, taken without running its code: str.__add__ copies it); any other key's
    class may make it equal a name (its own __hash__ and __eq__), so it reads as EVERY_NAME (every name)."""
    return str.__add__("", cast(str, key)) if issubclass(type(key), str) else EVERY_NAME  # not isinstance: it reads __class__


class Hooks(NamedTuple):
    """What Python calls at a later event, as it is now (hooks(); left_hooks compares two)."""

    calls: list[object]  # the trace and profile functions, the count of audit hooks added, the import hooks, the
    # collector's callbacks, sys.monitoring's tools, the notebook's event loop's task factory and its own attributes
    modules: list[tuple[object, dict]]  # each module loaded and a copy of its entries (dict.copy: no code of theirs)
    classes: list[tuple[type, dict]]  # each class whose methods the loop calls, and a copy of its attributes


def hooks() -> Hooks:
    """What Python calls at a later event, as it is now."""
    loop = _event_loop()
    return Hooks([sys.gettrace(), sys.getprofile(), _audit_hooks_added[0], *sys.meta_path, None, *sys.path_hooks,
                  None, *gc.callbacks, None, *_monitoring_tools(), loop.get_task_factory(),
                  *(item for pair in names_of(vars(loop)) for item in pair)],
                 [(module, _MODULE_DICT.__get__(module).copy()) for module in sys.modules.copy().values()
                  if issubclass(type(module), ModuleType)],
                 [(cls, _TYPE_DICT.__get__(cls).copy()) for cls in _loop_classes(loop)])


def _loop_classes(loop: asyncio.AbstractEventLoop) -> list[type]:
    """The classes whose methods the notebook's loop calls as the next cell runs: its own class and those above it
    (create_task, _run_once), its selector's (select), and asyncio's Task, Future, Handle and TimerHandle. A stopped
    cell that replaced one of their methods left a hook that runs at the next cell's first step, and may bind any
    name there (red-a26 X35-a26-12: BaseEventLoop.create_task replaced); their entries are compared by identity, as
    a module's are. The loop's and selector's classes are read from the objects' C-level type, not __class__."""
    return [*type(loop).__mro__, *type(_SLOT(loop, "_selector")).__mro__, *_ASYNCIO_CLASSES]


def _monitoring_tools() -> list[object]:
    """The name of each tool id of sys.monitoring (Python 3.12+), whose callbacks run at later events: a tool takes
    an id before it registers any."""
    monitoring = getattr(sys, "monitoring", None)
    return [monitoring.get_tool(tool) for tool in range(6)] if monitoring else []


def left_running() -> str:
    """What code a cell (or a call) left to run at a moment of its own when it ended or stopped (one of LEFT_RUNNING;
    "" when none): a timer it armed, or a task, callback or reader waiting on the notebook's event loop. Such code may
    bind any name, or change any object, at any time from then on, so what a later cell or check sees would depend
    on how fast the machine is (red-a23 X32-a23-1: a SIGALRM handler a timer runs, binding Module 50 ms after the
    stop; red-a24 X33-a24-1/-4: a call_later callback, a task that never ends), and the loader stops there instead
    (child.py). A signal handler alone is no such code: with no timer armed (the filter makes no POSIX timer:
    seccomp.py) and no thread, only the notebook's own code signals the loader, at a moment its run fixes, as in
    Jupyter (red-c26 X35-c26-1: a SIGINT handler an honest cell set to stop training cleanly ended the load, 0/18).
    A process a cell left running could signal it, as it could change what the loader reads: docs/security.md,
    "Not contained"."""
    timer, task = LEFT_RUNNING
    if any(_getitimer(which)[0] for which in _TIMERS):  # a POSIX timer cannot be made (seccomp.py: X35-a26-9)
        return timer
    if _loop is None:
        return ""
    waiting = (*_SLOT(_loop, "_ready"), *_SLOT(_loop, "_scheduled"))
    return task if any(not _passed_over(handle) for handle in waiting) or _readers_left(_loop) else ""


def _passed_over(handle: object) -> bool:
    """Whether a handle waiting on the loop runs none of the notebook's code: cancelled, or run_until_complete's own
    callback for the loader's own future of the cell (left when a callback raised out of the loop first). Read from
    Handle's slots through the descriptors taken at import (X35-a26-3: a cell may replace Handle.cancelled, which the
    loop never calls); any object but a Handle or TimerHandle waits (the loop calls its _run)."""
    if type(handle) not in (asyncio.Handle, asyncio.TimerHandle):
        return False
    if _HANDLE["_cancelled"].__get__(handle):
        return True
    args = _HANDLE["_args"].__get__(handle)  # X35-a26-11: not any handle with that callback, but the cell's own
    return _HANDLE["_callback"].__get__(handle) is _STOP_LOOP and type(args) is tuple and len(args) == 1 \
        and args[0] is _own[0]


def _readers_left(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether a callback waits in the loop's selector for a descriptor to become ready (add_reader, add_writer): it
    runs when the descriptor does (a pipe a process writes to, a timer's descriptor), at a moment of its own (red-a26
    X35-a26-10). The loop's own wake-up pipe's reader, as registered (_PipeWokenLoop), aside."""
    keys = _SLOT(_SLOT(loop, "_selector"), "_fd_to_key")
    return type(keys) is not dict or any(key is not _wake_key[0] for key in keys.copy().values())


def left_hooks(before: Hooks) -> bool:
    """Whether a cell left a hook Python calls at a later event (hooks() changed since `before`): a trace or profile
    function, an audit hook, an import hook, a collector's callback, a sys.monitoring tool, the loop's task factory,
    or an entry of a module loaded before it, or of a class the loop calls (_loop_classes), replaced, deleted or added
    (a builtin such as `__import__`, a library's function or submodule: numpy.random replaced by an object whose
    lookup binds a name, red-a25 X34-a25-4; a module's own __getattr__; BaseEventLoop.create_task, X35-a26-12), but a
    submodule an import binds in its package and sys's record of the last error (the loader sets it at a stop,
    _keep_as_last). Such a hook runs at a moment the notebook's own run fixes (the next cell's frame, exec, import or
    library call), in Jupyter as in the loader, and may bind any name there: a cell that stopped and left one may bind
    any name before the next cell (red-a24 X33-a24-2)."""
    after = hooks()
    if len(after.calls) != len(before.calls) or any(now is not then for now, then in zip(after.calls, before.calls)):
        return True
    loaded = {id(module): entries for module, entries in after.modules}
    if any(id(module) not in loaded or _changed(entries, loaded[id(module)], module is sys)
           for module, entries in before.modules):
        return True
    return len(after.classes) != len(before.classes) or any(
        now is not then or _changed(entries, now_entries, False)
        for (then, entries), (now, now_entries) in zip(before.classes, after.classes))


def _changed(before: dict, after: dict, is_sys: bool) -> bool:
    """Whether a module's (or a class's) entries changed from `before` to `after`, compared by identity and in order
    (no key's own hash or == runs): a value rebound keeps its key's place, a key deleted moves the ones after it, a key
    added comes last, where only a submodule is allowed (an import binds it in its package); sys's record of the last
    error aside."""
    if len(after) < len(before):
        return True
    entries = iter(after.items())
    for (key, value), (now_key, now) in zip(before.items(), entries):
        if now_key is not key or (now is not value and not (is_sys and _last_error(key))):
            return True
    return any(type(value) is not ModuleType and not (is_sys and _last_error(key)) for key, value in entries)


def _last_error(key: object) -> bool:
    return type(key) is str and key in _LAST_ERROR


_MODULE_DICT = vars(ModuleType)["__dict__"]  # the C-level slot: a module's class may override __dict__ or lookup
_TYPE_DICT = vars(type)["__dict__"]  # a class's, as _MODULE_DICT: a metaclass may override __dict__
_SLOT = object.__getattribute__  # an attribute as the loop's own code reads it, whatever a cell set on the object


def count_added_audit_hooks(event: str, args: tuple) -> None:
    """An audit hook of the loader's own (sys.addaudithook, before any cell runs): counts the hooks the notebook adds,
    which Python offers no way to list."""
    if event == "sys.addaudithook":
        _audit_hooks_added[0] += 1


_audit_hooks_added = [0]
# run_until_complete's own callback, which stops the loop once the cell's coroutine is done: left in the queue when a
# callback of the cell's raised a KeyboardInterrupt or SystemExit out of the loop first (no code of the notebook's)
_STOP_LOOP = asyncio.base_events._run_until_complete_cb  # type: ignore[attr-defined]  # asyncio internal
_own: list[object] = [None]  # the loader's future of the cell running or run last (run_cell)
# What left_running reads is taken here, at import, before any cell runs: getitimer from _signal (above), Handle's
# slots' descriptors. A cell may replace signal.getitimer (the same object the notebook's `import signal` holds) or
# Handle.cancelled, and so make left_running see nothing (red-a26 X35-a26-3).
_HANDLE = {slot: vars(asyncio.Handle)[slot] for slot in ("_callback", "_args", "_cancelled")}
_ASYNCIO_CLASSES = (asyncio.Task, asyncio.Future, asyncio.Handle, asyncio.TimerHandle)
_LAST_ERROR = {"last_type", "last_value", "last_traceback", "last_exc"}  # sys's (hooks)
_TIMERS = (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)


_TRACEBACK = BaseException.__dict__["__traceback__"]  # the C-level slot: a class of the notebook's may override it


def traceback_of(error: BaseException) -> TracebackType | None:
    """`error`'s traceback, read from the slot (no code of the notebook's class runs)."""
    return _TRACEBACK.__get__(error)


def stopped_at(error: BaseException, statement: CodeType | None, codes: Iterable[CodeType]) -> int:
    """The line of the cell where `error` stopped it, from what the sandbox saw, never from what the exception says
    (a SyntaxError's line, or a message's: the cell chooses those): the cell ran every statement above it.
    `statement` None: the compiler refused the statement it compiled last (Statements.line). Else the exception
    left that statement's frame, where its traceback first passes through that frame (an exception raised again
    carries its older frames below); and a magic's body the statement ran (the shell compiles it as the cell's own
    top-level code, at the lines below its magic: ipython_shell._run) stops it further down, followed down the calls
    from that frame only (each frame called by the one above it). No line of the statement's own is taken above its
    first or, for its own frame, below its last."""
    if statement is None:
        return codes.line if isinstance(codes, Statements) else 1
    if isinstance(codes, Statements) and codes.block_end is not None:  # _REORDERED: the block read as run whole
        return codes.block_end + 1
    own = [line for _, _, line in statement.co_lines() if line] or [1]  # 0: the code's RESUME, before its first line
    frames, tb = [], traceback_of(error)
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    at = next((n for n, (frame, _) in enumerate(frames) if frame.f_code is statement), None)
    if at is None or type(frames[at][1]) is not int:  # none of its frames (the notebook replaced them): run whole
        return max(own)
    line = min(max(frames[at][1], min(own)), max(own))
    filename = statement.co_filename
    for (caller, _), (frame, below) in zip(frames[at:], frames[at + 1:]):
        if frame.f_back is not caller:  # an older traceback's frames, not the calls the statement made
            break
        code = frame.f_code
        if str.__eq__(code.co_filename, filename) and str.__eq__(code.co_name, "<module>"):
            line = max(line, below)
    return line


_loop: asyncio.AbstractEventLoop | None = None
_wake_pipe: tuple[int, ...] = ()  # its wake-up pipe's descriptors, as made (close_loop)
_wake_key: list[object] = [None]  # its selector's key for the pipe's reader, as registered (_readers_left)


def _event_loop() -> asyncio.AbstractEventLoop:
    """The notebook's one event loop (the kernel's in Jupyter), made on first use: tasks a cell started go on in the
    cells below. It waits with poll and wakes itself through a pipe: the loader's system-call filter (seccomp.py)
    denies epoll and socketpair, which asyncio's default loop needs."""
    global _loop
    if _loop is None:
        _loop = _PipeWokenLoop(selectors.PollSelector())
    return _loop


def close_loop() -> None:
    """In a check child, a fork of the loader that runs its calls off the loop and holds no pipe but the one its
    answers go to: close the loop's wake-up pipe by the descriptors it was made with, calling no method of the loop's
    (a cell may have set its own `close` on it), and keep the loop, so that no task of the notebook's is freed and
    runs its `finally` there, as none is in Jupyter's kernel while a notebook is graded (red-a24 X33-a24-4)."""
    for descriptor in _wake_pipe:
        try:
            os.close(descriptor)
        except OSError:  # closed already
            pass


class _PipeWokenLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop, its self-pipe a pipe instead of a socketpair."""

    def _make_self_pipe(self) -> None:
        global _wake_pipe
        self._wake_read, self._wake_write = _wake_pipe = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        # asyncio's own registration, as for its socketpair: the public add_reader needs what __init__ makes next
        self._add_reader(self._wake_read, self._read_from_self)  # type: ignore[attr-defined]  # asyncio internal
        _wake_key[0] = self._selector.get_key(self._wake_read)  # type: ignore[attr-defined]  # asyncio internal

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
