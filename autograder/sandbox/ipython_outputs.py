"""What IPython's magics give back that a notebook may read, as IPython 9.18's magics give it, for the stand-in shell
(ipython_shell.py): %%capture's CapturedIO (utils/capture.py: the text its body printed; nothing it displayed,
display() showing nothing here), %timeit -o's TimeitResult (magics/execution.py: here from one run of the
statement, as `-n1 -r1` gives it), %env's reading and setting of os.environ (magics/osm.py), and a cell's last value
as `_` for the next cell (Jupyter's displayhook, core/displayhook.py). Run only inside the worker (imported as a
top-level module).
"""
from __future__ import annotations

import builtins
import contextlib
import io
import math
import os
import re
import sys
import time
from typing import Any, Callable


class CapturedIO:
    """What `%%capture name` binds: the body's printed text as `stdout` and `stderr`; `outputs`, what it displayed."""

    def __init__(self, stdout: io.StringIO | None, stderr: io.StringIO | None) -> None:
        self._stdout, self._stderr = stdout, stderr
        self.outputs: list[Any] = []

    @property
    def stdout(self) -> str:
        return self._stdout.getvalue() if self._stdout else ""

    @property
    def stderr(self) -> str:
        return self._stderr.getvalue() if self._stderr else ""

    def show(self) -> None:
        """Print what was captured, as IPython's show() does (outputs are never shown here)."""
        sys.stdout.write(self.stdout)
        sys.stderr.write(self.stderr)

    __call__ = show


def captured(line: str, run: Callable[[], Any]) -> CapturedIO:
    """Run `run` with what %%capture's `line` captures (its flags --no-stdout, --no-stderr) taken from the output."""
    words = line.split()
    out = None if "--no-stdout" in words else io.StringIO()
    err = None if "--no-stderr" in words else io.StringIO()
    with contextlib.ExitStack() as stack:
        if out:
            stack.enter_context(contextlib.redirect_stdout(out))
        if err:
            stack.enter_context(contextlib.redirect_stderr(err))
        run()
    return CapturedIO(out, err)


class TimeitResult:
    """IPython's TimeitResult: the measurements of the statement's runs, each of `loops` loops."""

    def __init__(self, loops: int, repeat: int, best: float, worst: float, all_runs: list[float],
                 compile_time: float, precision: int = 3) -> None:
        self.loops, self.repeat, self.best, self.worst = loops, repeat, best, worst
        self.all_runs, self.compile_time, self._precision = all_runs, compile_time, precision
        self.timings = [run / loops for run in all_runs]

    @property
    def average(self) -> float:
        return math.fsum(self.timings) / len(self.timings)

    @property
    def stdev(self) -> float:
        mean = self.average
        return (math.fsum((x - mean) ** 2 for x in self.timings) / len(self.timings)) ** 0.5

    def __str__(self) -> str:
        return f"{self.average:.{self._precision}g} s ± {self.stdev:.{self._precision}g} s per loop"

    __repr__ = __str__


def timed(options: str, run: Callable[[], Any]) -> TimeitResult | None:
    """%timeit: `run` once, timed; its TimeitResult for `-o` among the magic's `options` (else None, as IPython)."""
    started = time.perf_counter()
    run()
    took = time.perf_counter() - started
    return TimeitResult(1, 1, took, took, [took], 0.0) if re.search(r"(?:^|[ \t])-[tcq]*o", options) else None


def env(line: str) -> Any:
    """%env (and %set_env) as osm.py reads its line: no argument, the environment; `var`, its value; `var=val` or
    `var val`, set (a variable named with spaces, or a name alone that is not set, is IPython's UsageError)."""
    if not line.strip():
        return dict(os.environ)
    bits = line.split("=" if "=" in line else " ", 1)
    if len(bits) == 1:
        return os.environ[line.strip()]
    name, value = bits[0].strip(), bits[1].strip()
    if re.search(r"\s", name):
        raise ValueError(f"an environment variable's name has no spaces: {name!r}")
    os.environ[name] = value
    print(f"env: {name}={value}")
    return None


class DisplayHook:
    """sys.displayhook in the sandbox, moving `_`, `__`, `___` as IPython's DisplayHook.update_user_ns does: a cell's
    last value, unless None, becomes the hook's own `_`, its two before `__` and `___`, all three '' to begin with;
    the namespace gets them only while each it holds is still the hook's own (a notebook that binds `_` itself keeps
    it) and no `_` is a builtin (gettext's). It shows nothing here: no page. `result`: the last value it took."""

    NAMES = ("_", "__", "___")

    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace
        self.result: Any = None
        self.flush()

    def flush(self) -> None:
        """Back to '' for all three, in the namespace too (IPython's flush, as %reset calls it)."""
        self.unders: tuple[Any, ...] = ("", "", "")
        if "_" not in vars(builtins):
            self.namespace.update(zip(self.NAMES, self.unders))

    def __call__(self, value: Any) -> None:
        if value is None:
            return
        own = all(name not in self.namespace or self.namespace[name] is mine
                  for name, mine in zip(self.NAMES, self.unders))
        self.result, self.unders = value, (value, *self.unders[:2])
        if own and "_" not in vars(builtins):
            self.namespace.update(zip(self.NAMES, self.unders))
