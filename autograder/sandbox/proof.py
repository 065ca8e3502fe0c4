"""Prove the isolation level before a class is graded: the level the kit names is one a session ran a check at.

machine_level's probes say what this machine seems to allow; a class is graded only once one session at
that level has started and a trivial check has run in it (proof_probe.py) as the level promises: the check's
answer back, under a uid of its own (not the grader's) from the `uid` level up, unable to list the machine's
root at `uid+landlock`, without sight of the hidden suites with namespaces, and at every level able to reach the
interpreter's folders and import a standard-library module the worker has not imported, as honest code does (a
Python in a private home, closed to other users, is not the same interpreter for student code). A level whose
session fails is dropped for the next weaker one; as root the ladder ends at `uid`, never at running student
code as root (a worker that never got ready ends it at once: no level was to blame). When no level can be
delivered, or the user namespace maps no id for student code (uids.py: a container given root alone), the
answer is a refusal: one line that says what failed and what to do, and the caller writes nothing. One
notebook's grade proves no level first: it refuses the last two cases from the caller's side.

Each grading process holds an id of its own, so a namespace that maps fewer ids than the class has grading
processes grades with as many processes as it has ids.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..assignment import Assignment
from ..settings import GraderSettings
from . import Cell, Sandbox, proof_probe, uids
from .isolation import LEVELS, machine_level

PROBE = Path(__file__).with_name("proof_probe.py")
OFF = "off (c.GraderSettings.isolate is False)"
MORE_IDS = ("give the container more ids (rootless Podman's default maps 65,536; a Kubernetes pod, hostUsers: false), "
            "or set c.GraderSettings.isolate = False to run student code as the grader's own user")


@dataclass(frozen=True)
class Proof:
    """What the proof found: the level a session ran the check at, how many grading processes may run at
    once, or why none may (then level is empty)."""

    level: str = ""
    processes: int = 0
    refusal: str = ""


def no_ids_refusal(settings: GraderSettings) -> str:
    """The refusal when the grader is root, confines submissions, and no id is mapped for student code (else "")."""
    if not settings.isolate or os.geteuid() != 0 or uids.mapped_count():
        return ""
    return f"this user namespace maps no id for student code but root's (/proc/self/uid_map): {MORE_IDS}"


def closed_interpreter_refusal(settings: GraderSettings) -> str:
    """For one notebook's grade, whose level no session proves first: the refusal when the grader is root,
    confines submissions, and would run them without namespaces (the machine's level) under a uid that cannot
    reach the interpreter's files (else ""). That uid is one of the other users: their permission bits tell."""
    if not settings.isolate or os.geteuid() != 0:
        return ""
    closed = closed_to_others()
    return _closed_reason(closed) if closed and not machine_level().startswith("namespaces") else ""


def closed_to_others() -> str:
    """The first folder on the way to the interpreter's folders that other users may not enter, as
    "/root (mode 700)" ("" for none). The worker runs this interpreter through its folder's links resolved
    (sandbox._interpreter), so its folders are the resolved ones: a grader started through a link under a private
    folder still runs a worker the student uid can reach."""
    folders = [os.path.realpath(path) for path in proof_probe.interpreter_folders()]
    return proof_probe.closed(folders, may=_others_may)


def _others_may(path: str, need: int) -> bool:
    """What os.access would answer for other users: the mode's last three bits (R_OK 4, X_OK 1 are theirs)."""
    return os.stat(path).st_mode & need == need


def _closed_reason(closed: str) -> str:
    return (f"the student uid cannot reach the interpreter's files under {closed}: use a Python installed outside a "
            "private home, or give others search permission on its folders")


def prove_level(assignment: Assignment, settings: GraderSettings, processes: int) -> Proof:
    """The strongest level a session here really delivers, and at most `processes` grading processes."""
    refusal = no_ids_refusal(settings)
    if refusal:
        return Proof(refusal=refusal)
    if settings.isolate and os.geteuid() == 0:
        processes = min(processes, uids.mapped_count())
    ceiling = machine_level() if settings.isolate else "none"
    failures: list[tuple[str, str]] = []  # (the levels that failed, why)
    while True:
        level, problem = _try(assignment, settings, ceiling)
        if not problem:
            return Proof(OFF if not settings.isolate else level, processes)
        if failures and failures[-1][1] == problem:  # a weaker level failed alike (a closed interpreter): said once
            failures[-1] = (f"{failures[-1][0]}, {level or ceiling}", problem)
        else:
            failures.append((level or ceiling, problem))
        weaker = LEVELS.index(level or ceiling) - 1
        # A worker that never got ready failed before any level was set up: a weaker one would fail alike.
        if not level or weaker < LEVELS.index("uid" if settings.isolate and os.geteuid() == 0 else "none"):
            tried = "; ".join(f"{levels}: {problem}" for levels, problem in failures)
            return Proof(refusal=f"no sandbox session could run a check here ({tried}): the grader's failure, not "
                                 "the class's; fix that and grade again")
        ceiling = LEVELS[weaker]


def _try(assignment: Assignment, settings: GraderSettings, ceiling: str) -> tuple[str, str]:
    """(the level the session was set up at, what went wrong with it or "") for one session at most `ceiling`."""
    isolation = {**settings.isolation(), "level": ceiling} if settings.isolate else None
    box = Sandbox(modules={"proof_probe": PROBE}, path=[assignment.release_dir], limits=settings.limits,
                  preload=assignment.modules, isolation=isolation)  # as the student sandbox starts (policy.py)
    try:
        box.begin(settings.budget_seconds)
        outcome = box.call([Cell("proof", "answer = 6 * 7")], "proof_probe:session_facts",
                           hidden=str(assignment.suite_dir))
    except RuntimeError as exc:
        return box.level, str(exc)
    finally:
        box.close()
    facts = outcome.value if outcome.ok and isinstance(outcome.value, dict) else {}
    if facts.get("answer") != 42:
        return box.level, f"the check gave no answer ({outcome.reason or facts})"
    if box.level != "none" and (facts["uid"] == os.geteuid() or facts["gid"] != facts["uid"]):
        return box.level, f"the check ran as uid {facts['uid']}, gid {facts['gid']}, not an id of its own"
    if box.level.startswith("namespaces") and facts["sees_hidden"]:
        return box.level, "the check could see the hidden suites"
    if box.level == "uid+landlock" and facts["lists_root"]:
        return box.level, "the check could list the machine's root folder past its Landlock rules"
    # Honest code imports what the interpreter holds: a level whose uid cannot would grade it by where Python lives.
    if facts["closed"]:
        return box.level, _closed_reason(facts["closed"])
    if facts["import_error"]:
        return box.level, f"an honest import failed as the student uid ({facts['import_error']})"
    return box.level, ""
