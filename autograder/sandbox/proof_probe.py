"""The trivial check sandbox/proof.py runs in one session before a class is graded: what that session is.

Loaded by the worker as a probe module (standard library only); it reports, and compares nothing.
"""
import os


def session_facts(ns, hidden):
    """The program's answer, the ids the check runs as, whether it can see `hidden` (the hidden suites), and
    whether it can list the machine's root (which Landlock's allow-list leaves out)."""
    try:
        lists_root = bool(os.listdir("/"))
    except OSError:
        lists_root = False
    return {"answer": ns.get("answer"), "uid": os.getuid(), "gid": os.getgid(), "sees_hidden": os.path.exists(hidden),
            "lists_root": lists_root}
