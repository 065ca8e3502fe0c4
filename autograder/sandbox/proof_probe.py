"""The trivial check sandbox/proof.py runs in one session before a class is graded: what that session is.

Loaded by the worker as a probe module (standard library only); it reports, and compares nothing. proof.py
imports it too, for the same walk to the interpreter's folders done from the caller's side.
"""
import importlib
import os
import stat
import sys

# Small standard-library modules that import little: the first the worker has not imported is loaded from disk by
# the check itself, as an honest `import` in student code loads it (one the worker imported is already in memory).
UNIMPORTED = ("colorsys", "netrc", "csv", "graphlib", "tabnanny")


def session_facts(ns, hidden):
    """The program's answer, the ids the check runs as, whether it can see `hidden` (the hidden suites), whether
    it can list the machine's root (which Landlock's allow-list leaves out), the first folder on the way to the
    interpreter's folders it may not enter ("" for none: `closed`), and why a standard-library module the
    worker has not imported would not import ("" when it did)."""
    try:
        lists_root = bool(os.listdir("/"))
    except OSError:
        lists_root = False
    module, import_error = next((name for name in UNIMPORTED if name not in sys.modules), ""), ""
    if module:
        try:
            importlib.import_module(module)
        except Exception as error:  # what honest code would meet
            import_error = f"import {module}: {type(error).__name__}: {error}"
    return {"answer": ns.get("answer"), "uid": os.getuid(), "gid": os.getgid(), "sees_hidden": os.path.exists(hidden),
            "lists_root": lists_root, "closed": closed(interpreter_folders()), "import_error": import_error}


def interpreter_folders():
    """The interpreter's own folders on sys.path: the standard library, its extension modules, site-packages
    (the virtual environment's and the base interpreter's), none of the course's."""
    prefixes = tuple(p.rstrip("/") + "/" for p in {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix})
    return [path for path in sys.path if path.startswith(prefixes)]


def closed(paths, may=os.access):
    """The first folder on the way to one of `paths`, or that path itself, this process may not enter (nor read,
    for the path), with its mode, as "/root (mode 700)"; "" when there is none. A path that is not there (a
    standard-library zip never made) needs nothing. `may(path, mode)` answers as os.access does."""
    for path in paths:
        step = "/"
        for part in path.strip("/").split("/"):
            step = os.path.join(step, part)
            try:
                mode = os.stat(step).st_mode
            except OSError:  # the folder above it may be entered: it is not there
                break
            need = os.X_OK if step != path.rstrip("/") else os.R_OK | (os.X_OK if stat.S_ISDIR(mode) else 0)
            if not may(step, need):
                return f"{step} (mode {stat.S_IMODE(mode):o})"
    return ""
