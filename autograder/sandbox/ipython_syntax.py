"""A notebook cell as the Python Jupyter runs: IPython's own input transformer (IPython.core.inputtransformer2, the
pinned 9.18's), run in the loader on the student's cells, never in the grader's process: it is superlinear on
hostile input (IPython stops it after 500 transformations), so its cost is the submission's, as in Jupyter.

A cell none of whose lines IPython could read otherwise (`could_be_ipython`, linear) is run as it is, so a plain
notebook never loads the transformer. Its two files are read by the worker and run by a loader that needs them
under names of their own, never as `IPython.*`: the notebook's `import IPython` still gets the sandbox's stand-ins
(ipython_display.py). Lines keep their numbers, so a message names the student's own line.
Run only inside the worker (child.py imports it as a top-level module).
"""
from __future__ import annotations

import builtins
import importlib.util
import os
import re
from types import ModuleType, SimpleNamespace
from typing import Any

import ipython_cleanup


def package_text(*path: str) -> str:
    """A file of IPython's package (which is never imported), read by the worker before any student code: a
    confined loader may not read the environment's files (the worker's PRELOAD says why)."""
    spec = importlib.util.find_spec("IPython")
    folder = next(iter(spec.submodule_search_locations or []), "") if spec else ""
    with open(os.path.join(folder, *path), encoding="utf-8") as file:
        return file.read()


_TOKENUTIL, _TRANSFORMER = package_text("utils", "tokenutil.py"), package_text("core", "inputtransformer2.py")
# The standard library modules those two import, imported here by the worker for the same reason: at uid+landlock a
# loader may not read the standard library's files either (`codeop` was "No module named" there).
for _name in ("ast", "codeop", "collections.abc", "io", "itertools", "keyword", "textwrap", "tokenize", "typing",
              "warnings"):
    importlib.import_module(_name)

# Every cell IPython's transformer changes is one its clean-up changes (ipython_cleanup, the grader's reading of the
# same steps: leading blank lines, a dedent, prompts) or one with, on a line as str.splitlines ends lines (IPython
# splits a cell so), an escape that begins it (% ! ? and IPython's , ; / autocall quotes), `= %magic` or `= !cmd`,
# or a `?` anywhere (help). A superset: others only cost a transformation.
_ESCAPE = re.compile(r"^[ \t]*[%!?,;/]|=[ \t]*[%!]|\?", re.MULTILINE)

_manager: Any = None  # the line-keeping TransformerManager, loaded on first use


def could_be_ipython(text: str) -> bool:
    """Whether IPython's transformer could change `text` (linear: the clean-up and one search)."""
    ended = text if text.endswith("\n") else text + "\n"
    cleaned = ipython_cleanup.cleaned(text)
    return cleaned != ended or _ESCAPE.search("\n".join(cleaned.splitlines())) is not None


def as_python(text: str) -> str:
    """`text` as IPython transforms it for Jupyter to run, each line at its place (IPython drops leading blank
    lines and joins a magic continued by backslashes: blank lines stand in for them here)."""
    if not could_be_ipython(text):
        return text
    global _manager
    if _manager is None:
        _manager = _line_keeping(_load_transformer())()
    return "\n" * _python_lines_dropped(text) + _manager.transform_cell(text)


def _python_lines_dropped(text: str) -> int:
    """How many of Python's lines (a line break is LF, CR LF or a bare CR) IPython's leading_empty_lines drops: the
    blank lines, as str.splitlines ends them, before the first that is not (none if every line is blank)."""
    lines = text.splitlines(keepends=True)
    first = next((at for at, line in enumerate(lines) if line and not line.isspace()), 0)
    dropped = "".join(lines[:first])
    return dropped.count("\n") + dropped.count("\r") - dropped.count("\r\n")


def _module(name: str, text: str, imports: dict[str, Any]) -> ModuleType:
    """The code `text` run as a module `name` kept out of sys.modules; `imports` answers its imports of those
    names (inputtransformer2's `from IPython.utils import tokenutil`) before the import system is asked."""
    module = ModuleType(name)
    real = builtins.__import__

    def imported(wanted: str, *args: Any, **kwargs: Any) -> Any:
        return imports[wanted] if wanted in imports else real(wanted, *args, **kwargs)

    module.__dict__["__builtins__"] = {**vars(builtins), "__import__": imported}
    exec(compile(text, f"<IPython's {name}>", "exec", dont_inherit=True), module.__dict__)  # IPython's own futures
    return module


def _load_transformer() -> type:
    tokenutil = _module("tokenutil", _TOKENUTIL, {})
    transformer = _module("inputtransformer2", _TRANSFORMER, {"IPython.utils": SimpleNamespace(tokenutil=tokenutil)})
    return transformer.TransformerManager


def _line_keeping(manager: type) -> type:
    class LineKeeping(manager):
        """IPython's TransformerManager, each transformation that joined lines padded with blank ones after the
        line it made, so that the lines below keep their numbers."""

        def do_one_token_transform(self, lines: list[str]) -> tuple[bool, list[str]]:
            changed, after = super().do_one_token_transform(lines)
            if changed and len(after) < len(lines):
                same = next((at for at, (old, new) in enumerate(zip(lines, after)) if old != new), len(after))
                after[same + 1:same + 1] = ["\n"] * (len(lines) - len(after))
            return changed, after

    return LineKeeping
