"""The magics that change the notebook's names, as IPython 9.18's do (magics/namespace.py's %reset and %xdel,
magics/execution.py's %run of a file), and the objects of the shell's API a notebook may hold (user_module,
run_cell's ExecutionResult), for the stand-in shell (ipython_shell.py). No confirmation is asked: %reset without -f
resets, as it does in Jupyter when the kernel has no input to ask (nbconvert, nbgrader). Run only inside the worker
(imported as a top-level module).
"""
from __future__ import annotations

import builtins
import importlib.util
import json
import os
import runpy
import shlex
import sys
import traceback
from typing import Any, Callable


class Module:
    """The notebook's module: its attributes are the namespace's names (IPython's DummyMod), so that pickle and
    typing find a notebook's class as `__main__.Name`."""

    def __init__(self, namespace: dict) -> None:
        self.__dict__ = namespace


class ExecutionResult:
    """What run_cell returns (IPython's ExecutionResult): the cell's shown value and the error that ended it."""

    def __init__(self, raw_cell: str) -> None:
        self.raw_cell, self.result = raw_cell, None
        self.error_before_exec: BaseException | None = None
        self.error_in_exec: BaseException | None = None

    @property
    def success(self) -> bool:
        return self.error_in_exec is None

    def raise_error(self) -> None:
        if self.error_in_exec is not None:
            raise self.error_in_exec


def _options(line: str, with_value: str, end_after: str = "") -> tuple[dict[str, str], list[str]]:
    """A magic's line read as IPython's parse_options reads it: its single-letter options (those in `with_value`
    take the rest of the word or the next word) and `--long` ones, up to the first word that is neither, or `--`
    (getopt's end), or the option word `end_after` and its value (%run's `-m module`: IPython puts `--` after it)."""
    words, options = shlex.split(line), {}
    while words and words[0].startswith("-") and words[0] != "-":
        word = words.pop(0)
        if word == "--":
            break
        if word.startswith("--"):
            options[word[2:]] = ""
            continue
        for at, letter in enumerate(word[1:], 1):
            if letter in with_value:
                options[letter] = word[at + 1:] or (words.pop(0) if words else "")
                break
            options[letter] = ""
        if word == end_after:
            break
    return options, words


def _user_names(shell: Any) -> list[str]:
    """%who_ls: the notebook's own names (no `_` names, none the shell put there itself)."""
    hidden, missing = shell.user_ns_hidden, object()
    return [name for name, value in shell.user_ns.items()
            if not name.startswith("_") and value is not hidden.get(name, missing)]


def reset(shell: Any, line: str) -> None:
    """%reset [-f] [-s] [--aggressive] [out|array ...]: all names but the shell's own deleted (-s: the notebook's
    own names only), or what each target names ('out': `_`; 'array': the NumPy arrays)."""
    options, targets = _options(line, "")
    namespace = shell.user_ns
    if "s" in options:
        for name in _user_names(shell):
            del namespace[name]
    elif not targets:  # IPython's InteractiveShell.reset: `_` flushed first, then gone with the rest
        shell.displayhook.flush()
        kept = {name: namespace[name] for name in ("__builtins__", "__name__") if name in namespace}
        namespace.clear()
        namespace.update(shell.user_ns_hidden, **kept)
    for target in (target.lower() for target in targets):
        if target == "out":
            shell.displayhook.flush()
        elif target == "array" and "numpy" in sys.modules:  # no array exists before numpy is imported
            for name in [n for n, v in namespace.items() if isinstance(v, sys.modules["numpy"].ndarray)]:
                del namespace[name]


def delete(shell: Any, name: str, by_name: bool = False) -> None:
    """IPython's del_var: `name` deleted, and (unless `by_name`) every other name of the same object, `_` too."""
    if name in ("__builtin__", "__builtins__"):
        raise ValueError(f"Refusing to delete {name}")
    namespace = shell.user_ns
    if by_name:
        namespace.pop(name, None)
        return
    if name not in namespace:
        raise NameError(f"name '{name}' is not defined")
    value = namespace[name]
    for other in [n for n, v in namespace.items() if v is value]:
        del namespace[other]
    hook = shell.displayhook
    hook.unders = tuple(None if under is value else under for under in hook.unders)


def xdel(shell: Any, line: str) -> None:
    """%xdel [-n] name: its error printed, as IPython prints it (the cell goes on)."""
    options, words = _options(line, "")
    try:
        delete(shell, " ".join(words), "n" in options)
    except (NameError, ValueError) as error:
        print(f"{type(error).__name__}: {error}")


def run(shell: Any, line: str) -> None:
    """%run [-i] [-n] [-e] file [args] | -m module [args]: the file run as a program (`__main__`, sys.argv its name and
    args), in a namespace of its own whose names then join the notebook's (-i: in the notebook's). An error in it is
    printed and the cell goes on, as IPython's safe_execfile does. A module runs as runpy runs it (a package: its
    __main__), as IPython's safe_run_module; a .ipy file or a notebook runs as IPython's safe_execfile_ipy (_run_cells)."""
    options, words = _options(line, "NbDlsTm", "" if "--" in line else "-m")  # IPython: no `--` added to a line with one
    module = options.get("m")
    if module is not None:
        words.insert(0, _module_file(module))
    if not words:
        raise ValueError("%run: a file to run is missing")
    path = os.path.expanduser(words[0])
    if not os.path.isfile(path) and os.path.isfile(path + ".py"):
        path += ".py"
    if module is None and path.lower().endswith((".ipy", ".ipynb")):
        return _run_cells(shell, path)
    text = _read(path) if module is None else ""
    main_name = "__main__" if "n" not in options else os.path.splitext(os.path.basename(path))[0]
    program = shell.user_ns if "i" in options else {"__name__": main_name, "__builtins__": builtins}
    program["__file__"] = path

    def body() -> None:
        if module is None:
            exec(compile(text, path, "exec", dont_inherit=True), program)
        else:  # runpy's globals, dunders too, join the program's as IPython's `where.update(...)`
            program.update(runpy.run_module(module, run_name="__main__", alter_sys=True))

    _as_main(program, [path, *words[1:]], body)
    if "i" not in options:
        for name in ("__file__", "__name__"):
            del program[name]
        shell.user_ns.update(program)
    return None


def _read(path: str) -> str:
    """The file's text, read by the loader (the submission's memory and time, as in Jupyter; a file the notebook
    wrote is within its disk budget)."""
    with open(path, encoding="utf-8") as file:
        return file.read()


def _run_cells(shell: Any, path: str) -> None:
    """%run of a .ipy file (one cell) or a notebook (its code cells), as IPython's safe_execfile_ipy with
    raise_exceptions (what %run passes): each runs as a cell of the notebook's own (run_cell: IPython syntax, the
    notebook's namespace), `__file__` the file's name meanwhile and the file's folder first on sys.path; the first
    error, printed by run_cell, stops the rest and is raised in the calling cell, as IPython raises it."""
    cells = _notebook_sources(_read(path)) if path.lower().endswith(".ipynb") else [_read(path)]
    namespace, missing = shell.user_ns, object()
    saved = namespace.get("__file__", missing)
    namespace["__file__"] = path
    folder = os.path.dirname(os.path.abspath(path))
    added = folder not in sys.path  # IPython's prepended_to_syspath: added only if missing, removed after
    if added:
        sys.path.insert(0, folder)
    try:
        for cell in cells:
            shell.run_cell(cell, silent=True, shell_futures=False).raise_error()
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)
        if saved is missing:
            namespace.pop("__file__", None)
        else:
            namespace["__file__"] = saved


class NotJSONError(ValueError):
    """nbformat's: the notebook's file is no JSON."""


class ValidationError(ValueError):
    """nbformat's (jsonschema's): a key that reading the notebook needs is missing."""


class NBFormatError(ValueError):
    """nbformat's: a format version it does not know."""


# Where each nbformat major version keeps its cells and a code cell's source (nbformat converts each to version 4).
_FORMATS = {4: ("cells", "source"), 3: ("worksheets", "input"), 2: ("worksheets", "input"), 1: ("cells", "code")}


def _notebook_sources(text: str) -> list[str]:
    """The code cells' sources of the notebook `text`, as IPython reads them (nbformat.read(as_version=4)), and the
    errors nbformat raises on a file it cannot read, with its words."""
    try:
        notebook = json.loads(text)
    except ValueError:
        message = f"Notebook does not appear to be JSON: {text[:80]!r}"
        raise NotJSONError(message[:77] + "..." if len(message) > 80 else message) from None
    version = notebook.get("nbformat", 1)  # a list or a number: AttributeError, as nbformat's get_version raises
    if version not in _FORMATS:
        raise NBFormatError(f"Unsupported nbformat version {version}")
    where, key = _FORMATS[version]
    if version == 4:  # the keys nbformat's v4 reader needs (rejoin_lines, strip_transient)
        _needed(notebook, "metadata")
        cells = _needed(notebook, "cells")
        for cell in cells:
            _needed(cell, "metadata")
    else:  # nbformat's upgrades to version 4: a missing source is empty
        cells = notebook.get(where, []) if where == "cells" else [c for s in notebook.get(where, []) for c in s["cells"]]
    sources = [cell[key] if version == 4 else cell.get(key, "") for cell in cells if cell["cell_type"] == "code"]
    return ["".join(source) if isinstance(source, list) else source for source in sources]  # nbformat's rejoin_lines


def _needed(holder: Any, key: str) -> Any:
    """holder[key], or the error nbformat's reader raises when it is missing."""
    if not isinstance(holder, dict) or key not in holder:
        raise ValidationError(f"The notebook is invalid and is missing an expected key: {key}")
    return holder[key]


def _as_main(program: dict, argv: list[str], body: Callable[[], None]) -> None:
    """Run `body` with `program` as sys.modules['__main__'] and `argv` as sys.argv, an error printed."""
    saved = sys.argv, sys.modules.get("__main__")
    sys.argv, sys.modules["__main__"] = argv, Module(program)  # type: ignore[assignment]  # a module-like object, as %run
    try:
        body()
    except SystemExit as stop:
        if stop.code:
            traceback.print_exc(limit=0)
    except Exception:
        traceback.print_exc()
    finally:
        sys.argv, sys.modules["__main__"] = saved[0], saved[1]  # type: ignore[assignment]  # put back as it was


def _module_file(module: str) -> str:
    """The file IPython's find_mod gives for `%run -m module` (a package's __init__.py, though runpy then runs its
    __main__): sys.argv[0] until runpy sets it. A module with no Python source it refuses, with IPython's words."""
    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec else None
    if not origin or not origin.endswith((".py", ".pyw")):
        raise ImportError(f"{module!r} is not a valid modulename on sys.path")
    return origin


MAGICS: dict[str, Callable[[Any, str], Any]] = {"reset": reset, "xdel": xdel, "run": run}
