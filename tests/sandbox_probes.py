"""Trusted functions the sandbox tests call on a program's namespace."""


def value(ns: dict, name: str):
    return ns[name]


def bound(ns: dict, name: str) -> bool:
    return name in ns


def bump(ns: dict) -> int:
    """Change the program's state and report it: a second call must see the state as loaded."""
    ns["counter"][0] += 1
    return ns["counter"][0]


def parent(ns: dict) -> int:
    """The process that forked this call's process: the loader, for a call in a fresh batch."""
    import os

    return os.getppid()


def priority(ns: dict) -> int:
    """The niceness this call's process runs at."""
    import os

    return os.getpriority(os.PRIO_PROCESS, 0)


def run(ns: dict, name: str):
    return ns[name]()
