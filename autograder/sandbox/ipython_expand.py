"""How IPython 9.18 expands a magic's line before the magic reads it (InteractiveShell.var_expand): `$name` and
`{expression}` from the notebook's names, with IPython's own DollarFormatter (utils/text.py), for every magic but
those IPython's magics mark @no_var_expand (%time, %timeit, %prun, %debug), read from IPython's magics files. Both
are read by the worker, before any student code (a confined loader may not read the environment's files), and run
only in a loader, on the student's own names. Run only inside the worker (imported as a top-level module).
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
from typing import Any

import ipython_syntax

_IPYTHON = importlib.util.find_spec("IPython")
_MAGICS = os.path.join(next(iter(_IPYTHON.submodule_search_locations or [])) if _IPYTHON else "", "core", "magics")
# The magics whose line IPython passes as written: each function the decorator @no_var_expand marks (its name is
# the magic's), up to the next `def`, as magic.py's MAGIC_NO_VAR_EXPAND_ATTR marks them.
NO_VAR_EXPAND = frozenset(name for file in sorted(os.listdir(_MAGICS)) if file.endswith(".py")
                          for name in re.findall(r"@no_var_expand\b.*?\bdef[ \t]+(\w+)",
                                                 ipython_syntax.package_text("core", "magics", file), re.S))


def _formatter_code() -> ast.Module:
    """IPython's text.py cut to its imports and the two formatters var_expand uses (its top-level statements each
    begin at column 0; parsing the cut, not the whole file, spares each worker about 15 ms); the modules those
    imports name are imported here, by the worker (a confined loader may not read the standard library's files)."""
    statements = re.split(r"\n(?=[^\s#)\]}])", ipython_syntax.package_text("utils", "text.py"))
    kept = [text for text in statements if text.startswith(("import ", "from ", "class FullEvalFormatter(",
                                                             "class DollarFormatter("))]
    tree = ast.parse("\n".join(kept))
    for node in tree.body:
        for module in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                       [node.module] if isinstance(node, ast.ImportFrom) and node.module not in (None, "__future__") else []):
            importlib.import_module(module)
    return tree


_CODE = compile(_formatter_code(), "<IPython's text.py>", "exec", dont_inherit=True)
_formatter: Any = None  # IPython's DollarFormatter, made on first use


def var_expand(line: str, namespace: dict, caller_locals: dict) -> str:
    """The magic's `line` as IPython's var_expand gives it: expanded from the notebook's names and the caller's
    locals, or as written when it cannot be (IPython lets any error pass)."""
    global _formatter
    if "$" not in line and "{" not in line:
        return line
    if _formatter is None:
        module: dict[str, Any] = {"__name__": "IPython.utils.text"}
        exec(_CODE, module)
        _formatter = module["DollarFormatter"]()
    try:
        return _formatter.vformat(line, args=[], kwargs={**namespace, **caller_locals})
    except Exception:
        return line


def expanded(name: str, line: str, namespace: dict, caller_locals: dict) -> str:
    """The line magic or cell magic `name` gets: `line` expanded, unless IPython marks the magic @no_var_expand."""
    return line if name in NO_VAR_EXPAND else var_expand(line, namespace, caller_locals)
