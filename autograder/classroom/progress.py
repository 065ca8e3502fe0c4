"""Progress of `make grade`: one tqdm bar per step (collect, grading, feedback, export).

The parent draws every bar from its own loop over the answers (pool.run_pool tells it when a
process takes an item and when it sends it back), so it knows which submission each process is on
and since when. A submission still running after `seconds` (the per-check time limit) is named in
the bar's postfix, "donald: waiting out a time limit", so a bar that stands still says why. A
process's first submission also starts its sandboxes and nbgrader (a few seconds on a busy machine),
so it is named only after `warm_up` seconds more.

Bars are tqdm's with `disable=None`: drawn on a terminal, and nothing at all when the output goes
to a file or a pipe (the summary alone is written there).
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, Iterable, TextIO

from tqdm import tqdm

from ..outputs.inert import terminal_text

WAITING = "waiting out a time limit"


def waiting_text(running: Iterable[tuple[str, float]], now: float, seconds: float | None) -> str:
    """The postfix for the items (label, started at) running longer than `seconds`, oldest first."""
    if not seconds:
        return ""
    late = [label for label, since in sorted(running, key=lambda item: item[1]) if now - since > seconds]
    return terminal_text(f"{', '.join(late)}: {WAITING}") if late else ""  # a label is a student's folder name


class Progress:
    """One step's bar, driven by the parent: `started`/`finished` per item, `tick` while it waits.

    `count`, when given, is how many items are done (for steps whose processes each take a share of
    the class, such as feedback: it counts the pages written); otherwise each finished item counts one.
    """

    def __init__(self, desc: str, total: int, unit: str = "submission", seconds: float | None = None,
                 count: Callable[[], int] | None = None, name: Callable[[Any], str] = str,
                 clock: Callable[[], float] = time.monotonic, file: TextIO | None = None,
                 disable: bool | None = None, warm_up: float = 5.0) -> None:
        self.seconds, self.count, self.name, self.clock, self.warm_up = seconds, count, name, clock, warm_up
        self.running: dict[int, tuple[str, float]] = {}  # process slot -> (item label, since, plus any warm-up)
        self.warm: set[int] = set()  # slots that have finished an item (their sandboxes are up)
        self.bar = tqdm(total=total, desc=desc, unit=unit, file=file or sys.__stdout__, disable=disable,
                        dynamic_ncols=True)

    @property
    def shown(self) -> bool:
        return not self.bar.disable

    def started(self, slot: int, item: Any) -> None:
        self.running[slot] = (self.name(item), self.clock() + (0.0 if slot in self.warm else self.warm_up))
        self.tick()

    def finished(self, slot: int) -> None:
        self.running.pop(slot, None)
        self.warm.add(slot)
        if self.count is None:
            self.bar.update(1)
        self.tick()

    def waiting(self) -> str:
        return waiting_text(self.running.values(), self.clock(), self.seconds)

    def tick(self) -> None:
        if not self.shown:
            return
        if self.count is not None:
            done = min(self.count(), self.bar.total or 0)
            if done > self.bar.n:
                self.bar.update(done - self.bar.n)
        self.bar.set_postfix_str(self.waiting(), refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        self.running.clear()
        if self.shown and self.count is not None:
            self.tick()
        if self.shown:
            self.bar.set_postfix_str("", refresh=False)
        self.bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def one_step(desc: str, work: Callable[[], Any], unit: str = "step") -> Any:
    """A step done in the parent in one go (collect, export): a bar of one."""
    with Progress(desc, 1, unit=unit) as bar:
        result = work()
        bar.finished(0)
    return result
