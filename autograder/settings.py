"""The grader's options, as traitlets settings so nbgrader_config.py is their one home."""
from __future__ import annotations

import os
from pathlib import Path

from traitlets import Bool, Float, Int
from traitlets.config import Config, Configurable, PyFileConfigLoader

from .sandbox import Limits


class GraderSettings(Configurable):
    """Limits for student code and how the grader runs it. Set them as c.GraderSettings.<name>."""

    seconds = Float(3.0, help="Wall-clock seconds one check (and loading the notebook) may take.").tag(config=True)
    memory_mb = Int(1024, help="Memory (MB of address space) student code may add for one check.").tag(config=True)
    output_kb = Int(1024, help="What student code may print in one check (KB) before it is stopped.").tag(config=True)
    jobs = Int(0, help="Cores to grade on; 0 means all. Grading runs one process more (one may be waiting out "
                       "a time limit); feedback runs one per core.").tag(config=True)
    drop_privileges = Bool(
        os.geteuid() == 0,
        help="Run student code as the user 'nobody'. On by default when the grader runs as root.",
    ).tag(config=True)

    @property
    def limits(self) -> Limits:
        return Limits(seconds=self.seconds, memory_mb=self.memory_mb, output_kb=self.output_kb)


def load_config(root: Path) -> Config:
    """The course's nbgrader_config.py, as a traitlets Config (empty when there is none)."""
    path = root / "nbgrader_config.py"
    if not path.exists():
        return Config()
    return PyFileConfigLoader(path.name, path=str(root)).load_config()
