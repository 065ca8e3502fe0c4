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

# Every cell IPython's transformer changes has one of these (a superset: others only cost a transformation): an
# escape that begins a line (% ! ? and IPython's , ; / autocall quotes), a prompt to strip, `= %magic` or `= !cmd`,
# a `?` (help), or a space or tab after nothing but whitespace (a first line indented: the whole cell is dedented).
# A line begins after any break str.splitlines knows (IPython splits a cell so: `\r`, `\f`... too).
_LINE_START = r"(?:^|(?<=[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]))"
_COULD_BE = re.compile(rf"{_LINE_START}[ \t]*(?:[%!?,;/]|>>>|\.\.\.|In \[)|=[ \t]*[%!]|\?|\A\s*[ \t]", re.MULTILINE)

_manager: Any = None  # the line-keeping TransformerManager, loaded on first use


def could_be_ipython(text: str) -> bool:
    return _COULD_BE.search(text) is not None


def as_python(text: str) -> str:
    """`text` as IPython transforms it for Jupyter to run, each line at its place (IPython drops leading blank
    lines and joins a magic continued by backslashes: blank lines stand in for them here)."""
    if not could_be_ipython(text):
        return text
    global _manager
    if _manager is None:
        _manager = _line_keeping(_load_transformer())()
    blank = len(text) - len(text.lstrip(" \t\r\n\f\v"))
    leading = text.count("\n", 0, blank) if text[blank:] else 0  # IPython's leading_empty_lines
    return "\n" * leading + _manager.transform_cell(text)


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
