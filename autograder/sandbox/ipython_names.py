"""The magics that change the notebook's names, as IPython 9.18's do (magics/namespace.py's %reset and %xdel,
magics/execution.py's %run of a file), and the objects of the shell's API a notebook may hold (user_module,
run_cell's ExecutionResult), for the stand-in shell (ipython_shell.py). No confirmation is asked: %reset without -f
resets, as it does in Jupyter when the kernel has no input to ask (nbconvert, nbgrader). Run only inside the worker
(imported as a top-level module).
"""
from __future__ import annotations

import builtins
import importlib.util
import os
import shlex
import sys
import traceback
from typing import Any, Callable

import ipython_syntax


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


def _options(line: str, with_value: str) -> tuple[dict[str, str], list[str]]:
    """A magic's line read as IPython's parse_options reads it: its single-letter options (those in `with_value`
    take the rest of the word or the next word) and `--long` ones, up to the first word that is neither."""
    words, options = shlex.split(line), {}
    while words and words[0].startswith("-") and words[0] != "-":
        word = words.pop(0)
        if word.startswith("--"):
            options[word[2:]] = ""
            continue
        for at, letter in enumerate(word[1:], 1):
            if letter in with_value:
                options[letter] = word[at + 1:] or (words.pop(0) if words else "")
                break
            options[letter] = ""
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
    """%run [-i] [-n] [-e] file [args]: the file run as a program (`__main__`, sys.argv its name and args), in a
    namespace of its own whose names then join the notebook's (-i: in the notebook's). An error in it is printed and
    the cell goes on, as IPython's safe_execfile does; a .ipy file is read as IPython syntax."""
    options, words = _options(line, "NbDlsTm")
    if "m" in options:
        words.insert(0, _module_file(options["m"]))
    if not words:
        raise ValueError("%run: a file to run is missing")
    path = os.path.expanduser(words[0])
    if not os.path.isfile(path) and os.path.isfile(path + ".py"):
        path += ".py"
    with open(path, encoding="utf-8") as file:
        text = file.read()
    if path.endswith(".ipy"):
        text = ipython_syntax.as_python(text)
    main_name = "__main__" if "n" not in options else os.path.splitext(os.path.basename(path))[0]
    program = shell.user_ns if "i" in options else {"__name__": main_name, "__builtins__": builtins}
    program["__file__"] = path
    _as_main(program, [path, *words[1:]], lambda: exec(compile(text, path, "exec", dont_inherit=True), program))
    if "i" not in options:
        for name in ("__file__", "__name__"):
            del program[name]
        shell.user_ns.update(program)


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
    """The file `%run -m module` runs."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        raise ImportError(f"No module named {module}")
    return spec.origin


MAGICS: dict[str, Callable[[Any, str], Any]] = {"reset": reset, "xdel": xdel, "run": run}
