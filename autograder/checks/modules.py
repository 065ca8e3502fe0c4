"""A module imported from its file: the hidden suites, the public causes.py they share, stock's checks.

Read by Python's own source loader, never through sys.meta_path, so no import hook (such as pytest's
assertion rewriter in the kit's own tests) rewrites the file: its code must never appear in a message.
The module is not put in sys.modules; the caller decides under which name, if any, it is found.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def import_file(name: str, path: str | Path) -> ModuleType:
    """The module `name` run from the Python file at `path`."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # not a file Python can load as a module
        raise ImportError(f"{path} is not a Python module", name=name, path=str(path))
    module = importlib.util.module_from_spec(spec)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in release/ or beside a suite:
    try:  # release/ must stay as `make release` writes it (tests/test_kit.py), whoever imports from it
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes
    return module
