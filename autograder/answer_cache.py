"""The reference's answers to the probe calls, kept on disk between runs, for as long as what made them is unchanged.

Running the reference through every hidden check takes a sandbox worker of its own and about half a second,
which `python -m autograder grade` and Gradescope's `run_autograder` (one notebook, while the student waits)
would otherwise pay each time. The answers are a function of the files named in `_inputs` (the reference
solution, the source and release notebooks and modules, the hidden suites and their probes, the grader code
that runs them), of the limits, and of the Python and NumPy versions; the key is a SHA-256 over all of them,
so any change computes them again.

The file is the answer key's output, so it is the grader's alone: .grading/ (a private folder, never in a
submission's root) is made 0700 and the file 0600 before a byte is written, so that student code cannot read
it even where no namespaces hide the course (the uid level of sandbox/isolation.py). Written atomically; a file
that does not read back (cut short, edited, another version) is computed again, never trusted.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
from pathlib import Path

from .assignment import Assignment
from .sandbox import Limits, Outcome

Answers = dict[tuple[str, str], Outcome]
KIT = Path(__file__).resolve().parent


def _inputs(assignment: Assignment) -> list[Path]:
    """Every file the reference's answers depend on."""
    folders = [assignment.suite_dir, assignment.release_dir, assignment.source_dir, KIT / "sandbox"]
    files = [path for folder in folders for path in sorted(folder.rglob("*"))
             if path.is_file() and path.suffix in (".py", ".ipynb") and "__pycache__" not in path.parts]
    return files + [assignment.root / "solutions" / assignment.name / assignment.notebook_name,
                    KIT / "suites.py", KIT / "parametrize.py"]


def cache_key(assignment: Assignment, limits: Limits) -> str:
    import numpy

    digest = hashlib.sha256(json.dumps([platform.python_version(), numpy.__version__, repr(limits)]).encode())
    for path in _inputs(assignment):
        digest.update(str(path.relative_to(assignment.root) if path.is_relative_to(assignment.root) else path.name)
                      .encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_path(assignment: Assignment) -> Path:
    return assignment.root / ".grading" / f"reference-answers-{assignment.name}.json"


def _write(path: Path, key: str, answers: Answers) -> None:
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.parent.chmod(0o700)
    rows = [[probe, kwargs, vars(outcome)] for (probe, kwargs), outcome in answers.items()]
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=".answers-")  # mkstemp makes it 0600
    try:
        with os.fdopen(fd, "w") as file:
            json.dump({"key": key, "answers": rows}, file)
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


def read_answers(assignment: Assignment, key: str) -> Answers | None:
    """The answers kept under `key` (cache_key), or None when there are none (then compute and keep them)."""
    try:
        data = json.loads(cache_path(assignment).read_text())
        if data["key"] != key:
            return None
        return {(probe, kwargs): Outcome(**outcome) for probe, kwargs, outcome in data["answers"]}
    except (OSError, ValueError, TypeError, KeyError):
        return None


def keep_answers(assignment: Assignment, key: str, answers: Answers) -> None:
    """Keep `answers` under `key` for the next run (not at all in a course folder the grader may not write)."""
    try:
        _write(cache_path(assignment), key, answers)
    except OSError:  # a read-only course (a shared install): the answers are still right, only not kept
        pass
