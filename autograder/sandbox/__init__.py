"""Run a notebook's code in other processes, under limits, and bring back plain data only (the grader's).

Four roles, one module each; only lines of JSON cross between processes:
* the caller (this module): `Sandbox` starts the worker, sends programs and calls, reads `Outcome`s;
* the worker (worker.py, a script run as `python -I -B worker.py <config>`): imports the trusted modules
  once, forks a session per submission (confined by isolation.py as root), which forks a loader per
  program, enforces the limits in CPU time (cputime.py) and kills what student code left running;
* the child (child.py): a loader confines itself, runs the cells, answers calls, or forks a check child each;
* the messages (messages.py): the one-line reasons; program.py turns a notebook into the cells to run;
  uids.py, forks.py and cputime.py: the worker's uid, its retried forks, the CPU time it charges.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .messages import NOT_RUN_AFTER_TIME_OUT, describe_exception
from .program import MISSING, Cell, program_from_notebook

__all__ = ["MISSING", "NOT_RUN_AFTER_TIME_OUT", "Cell", "Limits", "Outcome", "Sandbox", "describe_exception",
           "program_from_notebook"]

WORKER = Path(__file__).with_name("worker.py")
ISOLATION = Path(__file__).with_name("isolation.py")  # the `path` of the `isolation` argument


@dataclass(frozen=True)
class Limits:
    """What one check may use. The grader reads these from nbgrader_config.py."""

    seconds: float = 3.0  # CPU time for one check, and for each cell of loading (wall clock: a backstop, cputime.py)
    memory_mb: int = 1024  # address space the student's code may add to the worker's
    output_kb: int = 1024  # what the student's code may print before it is stopped


@dataclass
class Outcome:
    """What came back from one call: a value, or a one-line reason it has none."""

    ok: bool
    value: Any = None
    reason: str = ""
    limit: str = ""  # "time", "memory" or "output" when a limit ended it
    load_errors: list[str] = field(default_factory=list)  # cells that raised while loading


# -------------------------------------------------------------- the caller's side

# Modules a notebook commonly imports; the worker imports them once so checks start warm (and so
# they work after privileges are dropped, when the interpreter's own files may be unreadable).
PRELOAD = (
    "numpy", "numpy.linalg", "numpy.random", "numpy.fft", "secrets", "hashlib", "math", "cmath",
    "random", "statistics", "fractions", "decimal", "numbers", "itertools", "functools", "operator",
    "collections", "collections.abc", "heapq", "bisect", "contextlib", "dataclasses", "typing", "types",
    "copy", "weakref", "time", "datetime", "string", "re", "textwrap", "json", "struct", "inspect",
    "traceback", "warnings", "abc", "enum", "subprocess", "signal",
)

_THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


class Sandbox:
    """A warmed worker that runs calls on programs, one submission at a time. Use as a context manager.

    modules: trusted modules the calls may name, as {module name: file path}.
    path: folders put in front of the worker's sys.path (the assignment's folder, for `engine`).
    preload: more modules to import once in the worker (after `path` is set), so the notebook's
        imports of them work even when student code may not read their files.
    isolation: for the grader running as root, how to confine each submission (isolation.py):
        {"path": ISOLATION, "budgets": {...}, "hide": [paths]}.

    `begin` starts a submission's session with a time budget and `end` ends it; a call outside a
    session starts one with no time budget.
    """

    def __init__(
        self,
        modules: Mapping[str, str | os.PathLike],
        path: Sequence[str | os.PathLike] = (),
        limits: Limits = Limits(),
        preload: Sequence[str] = (),
        isolation: Mapping[str, Any] | None = None,
    ) -> None:
        self.limits = limits
        self.config = {
            "modules": {name: str(Path(p).resolve()) for name, p in modules.items()},
            "path": [str(Path(p).resolve()) for p in path],
            "preload": [*PRELOAD, *preload],
            "limits": dataclasses.asdict(limits),
            "isolation": dict(isolation) if isolation else None,
        }
        self.worker: subprocess.Popen | None = None
        self.level = ""  # the isolation the worker could set up (isolation.py names the levels)
        self.sent: Sequence[Cell] | None = None  # the program the session holds
        self.session = False
        self.ended: list[str] = []  # budgets the last session hit, when it ended by itself

    def _start(self) -> None:
        self.worker = subprocess.Popen(
            # -B: the worker imports the assignment's modules from their folder and must write nothing there
            [sys.executable, "-I", "-B", str(WORKER), json.dumps(self.config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **_THREADS},
            text=True,
        )
        ready = self._receive()
        if not ready or "ready" not in ready:
            self.close()
            raise RuntimeError("the sandbox worker could not start (is numpy installed?)")
        self.level = ready["ready"]

    def _send(self, request: dict) -> None:
        self.worker.stdin.write(json.dumps(request) + "\n")
        self.worker.stdin.flush()

    def _receive(self) -> dict | None:
        try:
            return json.loads(self.worker.stdout.readline())
        except (OSError, ValueError, RecursionError):
            return None

    def begin(self, seconds: float = float("inf")) -> None:
        """Start a submission's session, with `seconds` of CPU time for all its checks (and a wall-clock
        backstop, cputime.py)."""
        if self.session:
            self.end()
        if self.worker is None:
            self._start()
        for attempt in (1, 2):  # a sandbox that could not start is the grader's trouble: once more, then say so
            self._send({"begin": seconds if seconds != float("inf") else 1e9})
            reply = self._receive()
            if reply is None:
                self.close()
                raise RuntimeError("the sandbox worker stopped")
            if "error" not in reply:
                break
            self._receive()  # the worker's word that the session ended
            if attempt == 2:
                raise RuntimeError(f"{reply['error']} (tried twice: the grader's failure, not the submission's)")
            time.sleep(1.0)
        self.session, self.sent, self.ended = True, None, []

    def end(self) -> list[str]:
        """End the session: everything its code started ends with it. The budgets it hit."""
        if not self.session:
            return self.ended
        self.session = False
        try:
            self._send({"end": True})
        except OSError:
            self.close()
            return []
        reply = self._receive() or {}
        return list(reply.get("budgets", []))

    def call(self, cells: Sequence[Cell], function: Callable | str, **kwargs: Any) -> Outcome:
        """Load `cells` (reusing the loaded program when it is the same) and run one call alone."""
        return self.call_many(cells, [(function, kwargs)], fresh=True)[0]

    def call_many(self, cells: Sequence[Cell], calls: Sequence[tuple[Callable | str, dict]],
                  fresh: bool = False) -> list[Outcome]:
        """Run `calls` on the loaded `cells`, in order, in one request: an Outcome each.

        They run one after another in the loaded program's process, so a call can see what an
        earlier one changed; with `fresh`, each runs in its own child and sees only the loaded program.
        """
        if not calls:
            return []
        if not self.session:
            self.begin()
        request: dict[str, Any] = {"fresh": fresh, "calls": [
            {"function": f if isinstance(f, str) else f"{f.__module__}:{f.__name__}", "kwargs": kwargs}
            for f, kwargs in calls]}
        if cells != self.sent:
            request["cells"] = [[c.name, c.source] for c in cells]
            self.sent = list(cells)
        try:
            self._send(request)
        except OSError:
            self.close()
            return [Outcome(False, reason="stopped the grader's worker process") for _ in calls]
        result = self._receive()
        if result is None or "answers" not in result:  # the worker was killed, or the session failed
            reason = (result or {}).get("error", "stopped the grader's worker process")
            if result is not None:
                self.session, self.ended = False, list((self._receive() or {}).get("budgets", []))
            else:
                self.close()
            return [Outcome(False, reason=reason) for _ in calls]
        errors = result.get("load_errors", [])
        return [Outcome(ok=a.get("ok", False), value=a.get("value"), reason=a.get("reason", ""),
                        limit=a.get("limit", ""), load_errors=errors) for a in result["answers"]]

    def close(self) -> None:
        if self.worker:
            if self.session:
                self.end()
            for stream in (self.worker.stdin, self.worker.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            try:
                self.worker.wait(timeout=self.limits.seconds + 5)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                self.worker.wait()
            self.worker = None
            self.sent = None
            self.session = False

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
