"""The trivial check sandbox/proof.py runs in one session before a class is graded: what that session is.

Loaded by the worker as a probe module (standard library only); it reports, and compares nothing.
"""
import os


def session_facts(ns, hidden):
    """The program's answer, the ids the check runs as, and whether it can see `hidden` (the hidden suites)."""
    return {"answer": ns.get("answer"), "uid": os.getuid(), "gid": os.getgid(), "sees_hidden": os.path.exists(hidden)}
