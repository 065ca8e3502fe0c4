"""What a notebook may take from IPython in Jupyter, for the sandbox, which runs plain Python with IPython's own
package never imported: `display()` and `get_ipython()` (also given without an import, as Jupyter gives them), and
every module under `IPython` (IPython.display, IPython.core.display, IPython.core.display_functions, ...), each
answering every name it is asked for (a module __getattr__, PEP 562): display(), update_display(), DisplayHandle and
clear_output as Jupyter's, which send what they show to the page, never to the output, so here they print nothing;
get_ipython() as the stand-in shell (ipython_shell.py); any other name a quiet stand-in (Image, HTML, Audio, ...:
made with anything, doing nothing). A right notebook that shows its progress so is graded as it runs in Jupyter."""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

from ipython_shell import Quiet, ZMQInteractiveShell

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


class _StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds every module under `IPython` as a stand-in package answering every name."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "IPython" and not fullname.startswith("IPython."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = ModuleType(spec.name)
        module.__dict__.update(__getattr__=_answer, __path__=[])
        return module

    def exec_module(self, module: ModuleType) -> None:
        pass


def install(namespace: dict) -> None:
    """`IPython` and its modules importable in the sandbox, and get_ipython() the shell on `namespace`."""
    global _shell
    _shell = ZMQInteractiveShell(namespace)
    sys.meta_path.insert(0, _StandIns())
    namespace.update(display=display, get_ipython=get_ipython)
