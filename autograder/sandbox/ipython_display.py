"""What a notebook may take from IPython in Jupyter, for the sandbox, which runs plain Python with IPython's own
package never imported: `display()` and `get_ipython()` (also given without an import, as Jupyter gives them), and
every module under `IPython` (IPython.display, IPython.core.display, IPython.core.display_functions, ...), each
answering every name it is asked for (a module __getattr__, PEP 562): display(), update_display(), DisplayHandle and
clear_output as Jupyter's, which send what they show to the page, never to the output, so here they print nothing;
get_ipython() as the stand-in shell (ipython_shell.py); any other name a quiet stand-in (Image, HTML, Audio, ...:
made with anything, doing nothing). A display module's `import *` binds the names IPython's own module gives (read
from IPython's files by the worker, before any student code), and IPython.__version__ is the installed IPython's.
A right notebook that shows its progress so is graded as it runs in Jupyter."""
from __future__ import annotations

import ast
import builtins
import importlib.abc
import importlib.machinery
import sys
from types import CodeType, ModuleType
from typing import Any, Callable

import ipython_outputs
import ipython_syntax
from ipython_shell import Quiet, ZMQExitAutocall, ZMQInteractiveShell

_shell: ZMQInteractiveShell | None = None  # the loader's one shell, on the notebook's namespace (install)


class DisplayHandle(Quiet):
    """What display(..., display_id=True) returns: showing or updating through it shows nothing here either."""

    def __init__(self, display_id: Any = None, **options: Any) -> None:
        self.display_id = display_id


def display(*objects: Any, display_id: Any = None, **options: Any) -> DisplayHandle | None:
    return DisplayHandle(display_id) if display_id else None


def get_ipython() -> ZMQInteractiveShell | None:
    return _shell


_NAMES = {"display": display, "update_display": Quiet(), "clear_output": Quiet(), "DisplayHandle": DisplayHandle,
          "get_ipython": get_ipython}


def _answer(name: str) -> Any:
    """A module's answer for `name`: one of _NAMES, else a quiet class of that name (a picture, a widget, ...)."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name not in _NAMES:
        _NAMES[name] = type(name, (Quiet,), {})
    return _NAMES[name]


def _star_names(module: str) -> list[str]:
    """The names `from <module> import *` binds in Jupyter, read from IPython's file for `module`: its __all__, or
    (IPython.display has none) the public names it imports and defines, a `*` import's read the same way."""
    tree = ast.parse(ipython_syntax.package_text(*module.split(".")[1:-1], module.split(".")[-1] + ".py"))
    names: list[str] = []
    for node in tree.body:
        targets = [t.id for t in node.targets if isinstance(t, ast.Name)] if isinstance(node, ast.Assign) else []
        if "__all__" in targets:
            return list(ast.literal_eval(node.value))
        if isinstance(node, ast.ImportFrom) and node.module and any(a.name == "*" for a in node.names):
            names += _star_names(node.module)
        elif isinstance(node, ast.ImportFrom):
            names += [alias.asname or alias.name for alias in node.names]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        names += targets
    return [name for name in names if not name.startswith("_")]


# The display modules a notebook takes names from with `import *`, and what each binds (IPython 9.18's files)
_STAR = {module: _star_names(module) for module in
         ("IPython.display", "IPython.core.display", "IPython.core.display_functions", "IPython.lib.display")}
_RELEASE: dict[str, Any] = {}  # IPython's core/release.py, run: it imports nothing and sets __version__
exec(compile(ipython_syntax.package_text("core", "release.py"), "<IPython's release>", "exec", dont_inherit=True),
     _RELEASE)


class _StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds every module under `IPython` as a stand-in package answering every name."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "IPython" and not fullname.startswith("IPython."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = ModuleType(spec.name)
        module.__dict__.update(__getattr__=_answer, __path__=[])
        if spec.name in _STAR:
            module.__dict__["__all__"] = _STAR[spec.name]
        if spec.name == "IPython":
            module.__dict__["__version__"] = _RELEASE["__version__"]
        return module

    def exec_module(self, module: ModuleType) -> None:
        pass


def install(namespace: dict, compile_cell: Callable[[str, str], tuple[CodeType, ...]],
            futures: Callable[[], int]) -> None:
    """`IPython` and its modules importable in the sandbox, get_ipython() the shell on `namespace` (whose run_cell
    compiles a cell with `compile_cell`, its magics with the future flags `futures` gives), a cell's last value `_`
    in it, and, as in Jupyter, the namespace the module `__main__`, display() and get_ipython() builtins (a module
    the notebook wrote calls them so), and `exit` and `quit` the kernel's, in the namespace alone (IPython's
    BuiltinTrap hides the builtins' while a cell runs)."""
    global _shell
    namespace.update(display=display, get_ipython=get_ipython, exit=ZMQExitAutocall("exit", "Ctrl-D (i.e. EOF)"),
                     quit=ZMQExitAutocall("quit", "Ctrl-D (i.e. EOF)"))
    for hidden_builtin in ("exit", "quit"):
        builtins.__dict__.pop(hidden_builtin, None)
    hidden = dict(namespace)  # what %reset leaves
    hook = ipython_outputs.DisplayHook(namespace)
    _shell = ZMQInteractiveShell(namespace, hook, compile_cell, hidden, futures)
    sys.displayhook = hook  # a cell's last value: `_` below
    sys.meta_path.insert(0, _StandIns())
    sys.modules["__main__"] = _shell.user_module
    builtins.display, builtins.get_ipython = display, get_ipython  # type: ignore[attr-defined]  # as IPython adds them
