"""`python -m autograder class` with time stamps: run as a script by the bench, in a course copy.

    python bench/kit_driver.py COURSE EVENTS [PROFILE]

It runs the course copy's own `autograder.__main__.main(["class", ...])`, exactly what
`make grade` runs, after wrapping a few functions so that each call appends a line
{"event": "<name>:start|end", "t": <epoch seconds>, "pid": ...} to EVENTS. The wrappers only take
time stamps; they change no argument and no result. They sit on nbgrader's API and converters
(which the kit uses as its backbone), so they still work if classroom.py changes how it strings
them together; forked grading and feedback processes inherit them.

With PROFILE, the run is under cProfile: the main process writes PROFILE, and every
multiprocessing child writes PROFILE.<pid>.
"""
from __future__ import annotations

import functools
import importlib
import json
import os
import sys
import time

EVENTS_FD = -1


def mark(name: str) -> None:
    if EVENTS_FD >= 0:
        os.write(EVENTS_FD, (json.dumps({"event": name, "t": time.time(), "pid": os.getpid()}) + "\n").encode())


def wrap(owner, attr: str, name: str) -> None:
    original = getattr(owner, attr, None)
    if original is None or getattr(original, "_bench_wrapped", False):
        return

    @functools.wraps(original)
    def timed(*args, **kwargs):
        mark(f"{name}:start")
        try:
            return original(*args, **kwargs)
        finally:
            mark(f"{name}:end")

    timed._bench_wrapped = True  # type: ignore[attr-defined]  # marks the wrapper: a second wrap() leaves it
    setattr(owner, attr, timed)


def instrument() -> None:
    """Wrap the steps of a class run (before the kit imports them by name)."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
    from nbgrader.plugins import CsvExportPlugin

    mark("imports:nbgrader")
    wrap(NbGraderAPI, "generate_assignment", "api_generate_assignment")
    wrap(NbGraderAPI, "autograde", "api_autograde")
    wrap(NbGraderAPI, "generate_feedback", "api_generate_feedback")
    wrap(GenerateAssignment, "start", "generate_assignment")
    wrap(Autograde, "start", "autograde")
    wrap(GenerateFeedback, "start", "feedback")
    wrap(CsvExportPlugin, "export", "export")


def profile_children(path: str) -> None:
    """Each multiprocessing child (the kit's grading processes) profiles its own run into path.<pid>."""
    import cProfile
    import multiprocessing.process

    original = multiprocessing.process.BaseProcess.run

    def run(self):
        profiler = cProfile.Profile()
        try:
            return profiler.runcall(original, self)
        finally:
            profiler.dump_stats(f"{path}.{os.getpid()}")

    multiprocessing.process.BaseProcess.run = run  # type: ignore[method-assign]  # the bench's monkeypatch


def main() -> int:
    global EVENTS_FD
    course, events = sys.argv[1], sys.argv[2]
    profile = sys.argv[3] if len(sys.argv) > 3 else ""
    EVENTS_FD = os.open(events, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    mark("driver:start")
    sys.path[0] = course  # the course copy's autograder package, not the repository's
    os.chdir(course)
    argv = ["class", "--assignment", os.environ.get("BENCH_ASSIGNMENT", "dl01_6_3")]

    def run() -> int:
        importlib.import_module("autograder")  # first, as in `python -m autograder`: its start-up settings

        instrument()
        from autograder.__main__ import main as kit_main

        return kit_main(argv)

    if profile:
        import cProfile

        profile_children(profile)
        profiler = cProfile.Profile()
        code = profiler.runcall(run)
        profiler.dump_stats(profile)
    else:
        code = run()
    mark("driver:end")
    return code


if __name__ == "__main__":
    sys.exit(main())
