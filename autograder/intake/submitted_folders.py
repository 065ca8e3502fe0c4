"""Writing a student's folder of submitted/ while other runs may read it: one lock, and whole folders put in place.

Every run of the course reads submitted/ through the intake (a `make grade`, a `make regrade`, the formgrader's
Autograde button, which runs the kit's regrade), and a collection (an LMS download's, the exchange's) writes it. A
reader that found a student's folder half written, or gone, would record that as the student's reason: a zero
under the fingerprint of a folder that never changed, which no later run grades again. So:

* `submitted_lock`: a collection writes submitted/ holding it exclusively, and each read of one student's folder
  (the intake's copy, the fingerprint of what it would copy) holds it shared, for that read alone (flock(2) on the
  submitted/ folder itself: advisory, released with the descriptor, so a run that dies holds nothing);
* `put_in_place`: a collection writes a student's new folder whole beside the old one, in a folder of its own
  (`staging_for`), and renames it into place, never leaving the student without a folder; a folder it leaves as it
  is, it never touches (autograder/intake/collect.py says when).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def submitted_lock(top: Path, exclusive: bool = False) -> Iterator[None]:
    """Hold the lock of submitted/ (`top`): exclusive to write it, shared to read a folder of it. Without a
    submitted/ there is nothing to read, and nothing to wait for; on a file system that locks no folder (NFS
    emulates flock with byte-range locks, which a folder cannot take) the read or write goes on without it, and
    what put_in_place and the collection's rules guarantee still holds."""
    try:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        fd = None
    try:
        if fd is not None:
            with contextlib.suppress(OSError):  # EBADF, ENOLCK, EOPNOTSUPP: no lock to be had there
                fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # and with it the lock


@contextlib.contextmanager
def staging_for(dest: Path) -> Iterator[Path]:
    """A folder of this collection's alone to write a new `dest` in whole before it is put in place: beside it (one
    file system, so the rename is one step), under a hidden name no listing of submitted/<student>/<assignment>
    matches, and made anew for each use, so that two collections at once (the formgrader's Collect and `nbgrader
    collect` in a terminal, an LMS download's and the exchange's) never write, empty or move each other's copy.
    Removed on the way out unless it was put in place."""
    dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".collecting", dir=dest.parent))
    try:
        yield staged
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def put_in_place(staged: Path, dest: Path) -> None:
    """`staged`, a complete folder, becomes `dest`; what `dest` was is removed. Hold `submitted_lock` exclusively:
    between the two renames `dest` is absent. When `staged` cannot be put there (gone, a file system's error), the
    old `dest` goes back to its place before the error is raised: whatever happens, the student keeps a folder."""
    if not os.path.lexists(dest):
        os.rename(staged, dest)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".previous", dir=dest.parent))
    previous = aside / dest.name
    os.rename(dest, previous)
    try:
        os.rename(staged, dest)
    except BaseException:
        os.rename(previous, dest)
        raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)
