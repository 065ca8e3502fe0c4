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

A course shipped without its reference (the Gradescope zip: no solutions/, no source/) grades from this file
alone: `make gradescope` writes the answers with a second key, `public_key`, over the files such a course still
holds (the hidden suites and their probes, the release, the grader code that runs them), and known_answers
takes them only under that key. They are data, the probes' return values: no line of the reference's code.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
from pathlib import Path

from ..assignment import Assignment
from ..sandbox import Limits, Outcome

Answers = dict[tuple[str, str], Outcome]
KIT = Path(__file__).resolve().parents[1]


def code_files(*folders: Path) -> list[Path]:
    """The Python modules and notebooks under these folders, in a stable order."""
    return [path for folder in folders for path in sorted(folder.rglob("*"))
            if path.is_file() and path.suffix in (".py", ".ipynb") and "__pycache__" not in path.parts]


def _inputs(assignment: Assignment, public: bool = False) -> list[Path]:
    """Every file the reference's answers depend on (`public`: those a course without its reference holds too)."""
    folders = [assignment.suite_dir, assignment.release_dir, *([] if public else [assignment.source_dir]), KIT / "sandbox"]
    files = code_files(*folders)
    reference = [] if public else [assignment.root / "solutions" / assignment.name / assignment.notebook_name]
    return files + reference + [KIT / "checks" / "suites.py", KIT / "checks" / "parametrize.py"]


def _digest(assignment: Assignment, header: list, public: bool = False) -> str:
    digest = hashlib.sha256(json.dumps(header).encode())
    for path in _inputs(assignment, public):
        digest.update(str(path.relative_to(assignment.root) if path.is_relative_to(assignment.root) else path.name)
                      .encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(assignment: Assignment, limits: Limits) -> str:
    import numpy

    return _digest(assignment, [platform.python_version(), numpy.__version__, repr(limits)])


def public_key(assignment: Assignment, limits: Limits) -> str:
    """The key of answers shipped without the reference: the files both sides hold, and the limits (not the Python
    and NumPy versions: the image cannot compute the answers again, and the checks compare within tolerances)."""
    return _digest(assignment, [repr(limits)], public=True)


def cache_path(assignment: Assignment) -> Path:
    return assignment.root / ".grading" / f"reference-answers-{assignment.name}.json"


def answers_data(key: str, answers: Answers, public: str = "") -> dict:
    """The file's content: the key, the public key when the answers are to be shipped, and the answers."""
    rows = [[probe, kwargs, vars(outcome)] for (probe, kwargs), outcome in answers.items()]
    return {"key": key, **({"public_key": public} if public else {}), "answers": rows}


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.parent.chmod(0o700)
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=".answers-")  # mkstemp makes it 0600
    try:
        with os.fdopen(fd, "w") as file:
            json.dump(data, file)
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


def read_answers(assignment: Assignment, key: str, field: str = "key") -> Answers | None:
    """The answers kept under `key` (cache_key; public_key with `field` "public_key"), or None when there are
    none (then compute and keep them)."""
    try:
        data = json.loads(cache_path(assignment).read_text())
        if data.get(field) != key:
            return None
        return {(probe, kwargs): Outcome(**outcome) for probe, kwargs, outcome in data["answers"]}
    except (OSError, ValueError, TypeError, KeyError):
        return None


def keep_answers(assignment: Assignment, key: str, answers: Answers) -> None:
    """Keep `answers` under `key` for the next run (not at all in a course folder the grader may not write)."""
    try:
        _write(cache_path(assignment), answers_data(key, answers))
    except OSError:  # a read-only course (a shared install): the answers are still right, only not kept
        pass


def shipped_answers(assignment: Assignment, limits: Limits) -> Answers:
    """In a course without its reference (the Gradescope image): the answers shipped with it, or a RuntimeError
    that says they do not match its hidden suites (a grader failure: no score is given)."""
    answers = read_answers(assignment, public_key(assignment, limits), "public_key")
    if answers is None:
        raise RuntimeError(f"{cache_path(assignment).relative_to(assignment.root)} holds no reference answers for these "
                           "hidden suites and limits: build the zip again with make gradescope")
    return answers
