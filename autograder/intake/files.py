"""The one intake: every file of a submission the grader or nbgrader reads is a copy the kit made here.

A submission reaches the grader in several ways (a folder put in submitted/ by hand, by a `git clone` or by an
instructor's `unzip`; an LMS download collected into it; Gradescope's /autograder/submission), and each may bring
symbolic links, devices, FIFOs or files of any size. `take_submission` is the one door, for `make grade` and for
Gradescope alike. It walks the folder without following a link (each folder opened O_NOFOLLOW | O_DIRECTORY from
its parent's descriptor, each file O_NOFOLLOW and checked to be a regular file on the descriptor it is read from),
copies what grading needs, within bounds, into a fresh folder of the kit's own (STAGING, 0700), and says in one
line why not when it cannot. nbgrader and the grader read only that copy:

* the notebook, chosen by `choose_notebook` (the assignment's name, the nearest; else the folder's only
  notebook). A symbolic link, device, FIFO or a file over GraderSettings.notebook_kb in its place leaves that
  student not graded, with the reason; so does a second hard link to a file where the student made the folder
  (IntakeRules.linked_files off: nbgrader's exchange inbound, where a student could link a file they cannot read).
  In submitted/ and Gradescope's submission only the instructor's side writes, and a second link is their backup's
  (`cp -al`, rsync --link-dest): the file, opened without following a link and checked to be a regular file, is
  read as what it holds;
* timestamp.txt, at the top (nbgrader's record of when the work was submitted), up to TIMESTAMP_BYTES + 1 so that
  validate.timestamp_problem still sees one too long; one that is not a regular file is the reason. Only where the
  route reads one (take_submission's `timed`): Gradescope keeps its own time, so there it is not taken, and one
  that is not a file is only named in a note, as anything else that is not (a link, a FIFO);
* the files GraderSettings.submission_files names (glob patterns), each up to submission_file_kb and all of them
  up to submission_files_total_kb, each staged under its own path only when the copy can hold that name as it is
  (`_unstageable`: no clash, in any case, with the notebook's name or another file taken, a path of at most
  EXTRA_PATH_BYTES); else a note names it. Nothing else beside the notebook reaches nbgrader, so nothing else is
  copied into autograded/ or feedback/.

Anything else that is not a regular file or a folder is never opened; a note names it. Hidden folders (.git,
.ipynb_checkpoints) and a zip's __MACOSX are not entered, and the walk stops after
GraderSettings.submission_entries entries, at the first folder that would pass the count (the notebook's name
and timestamp.txt at the top are looked up first, so no cap hides them; which entries are taken never depends on
the order the file system lists a folder in). `read_regular` is the same door for one file named on a command line.

Whose failure. What the student's files are (links, devices, sizes, unreadable modes, gone), or what their owner
does to them (a lease a program of theirs holds), is the student's reason (FILES_OWN); so are their names, which are
checked before the copy is written (`_unstageable`). The machine failing the intake is the grader's (StagingFault,
never a reason): the kit's own copy not written (a full disk: ENOSPC, EDQUOT, EROFS) or a file not read for a cause
that is not the file's own (EIO, EMFILE, ENOMEM). No score is given then, and the next run grades the student again.

`survey` sees a folder as `take_submission` does, without copying it: the same walk, within the same caps, and a
digest of each file the intake reads (at most its cap and one byte of it). What decides whether a submission
changed (classroom/ledger.py's folder_fingerprint) reads that and nothing more: a terabyte-long sparse file beside
the notebook is never read, and a changed notebook is never hidden behind thousands of other entries.
"""
from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import shutil
import stat
import unicodedata
from collections import deque
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from ..outputs.inert import quoted

STAGING = Path(".grading") / "intake"  # under the course root: nbgrader's layout, <student>/<assignment>/
SKIPPED_FOLDERS = ("__MACOSX",)  # a zip's resource forks, not the student's work
TIMESTAMP = "timestamp.txt"
TIMESTAMP_BYTES = 4096  # a time stamp is one line; a longer timestamp.txt is not one (validate.timestamp_problem)
SHOWN = 3  # files named in one note; the rest are counted
# IntakeRules.reading: how the kit turns what a student sent into the folder it grades, collection included. "2": the
# notebook and extensions in any case, hard links in submitted/, the extras' caps; "3": an LMS upload's extension in
# any case (a newer `.IPYNB` upload is collected where an older `.ipynb` was), a hand copy kept as the intake reads it.
READING = "3"
# The longest path (bytes, from the submission folder) of a file submission_files takes: the staging folder is
# longer than submitted/ or Gradescope's submission, so a path the student's disk held may pass the OS's limit
# (PATH_MAX, 4,096) there; below this bound, no name the student chose decides whether the kit's copy can be made.
EXTRA_PATH_BYTES = 1024
CHUNK = 1 << 16
# The errors that say what the student's file or folder is, or what its owner did to it: their reason, in these
# words (None: the system's own). Its mode, a link, gone, not a folder; and a lease (fcntl F_SETLEASE, which any
# file's owner may take; the intake's O_NONBLOCK open then fails at once with EWOULDBLOCK, the one cause open(2)
# gives that errno, rather than wait out the kernel's lease-break-time for each file). A read-only open never gives
# ETXTBSY, nor EROFS, EDQUOT or ENOSPC, so no student's file brings them. Any other error reading it (EIO, EMFILE,
# ENOMEM: the machine's), and any writing the kit's copy, is the grader's failure (StagingFault).
FILES_OWN = {errno.EACCES: None, errno.EPERM: None, errno.ENOENT: None, errno.ENOTDIR: None, errno.EISDIR: None,
             errno.ELOOP: None, errno.ENXIO: None, errno.ENAMETOOLONG: None,
             errno.EWOULDBLOCK: "a program holds a lease on it: fcntl F_SETLEASE"}
_NO_FOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY  # O_NONBLOCK: a FIFO's open never waits


class Refused(Exception):
    """A file the intake does not take, with the one-line reason (what it is)."""


class StagingFault(Exception):
    """The machine failed the intake (module docstring, "Whose failure"): the grader's failure, with one line."""


def own_failure(error: OSError, what: str) -> str:
    """What `error` says, when it says what the student's file `what` is (FILES_OWN); else StagingFault, raised.
    Every read of a student's file decides whose failure an error is here."""
    said = error.strerror or type(error).__name__
    if error.errno in FILES_OWN:
        return FILES_OWN[error.errno] or said
    raise StagingFault(f"the intake could not read or copy {what} ({said}): the machine's fault, not the file's"
                       ) from error


class TooLarge(Refused):
    """A file over its limit: `size` bytes, more than `limit`."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"it is {size / 1024:,.0f} KB, more than the {limit / 1024:,.0f} KB allowed")
        self.size, self.limit = size, limit


@dataclass(frozen=True)
class IntakeRules:
    """What one submission may bring (GraderSettings, as the entry point read them)."""

    notebook_name: str
    notebook_bytes: int
    extra_files: tuple[str, ...] = ()
    extra_bytes: int = 1 << 20
    max_entries: int = 1000
    extra_total_bytes: int = 10 << 20  # all extra files together: each is copied three times
    linked_files: bool = True  # a second hard link read as its file (module docstring): off where students write
    # How this code reads a folder (which notebook, which files, what a link is): changed whenever a kit reads one
    # otherwise, so that a grade recorded under another reading is previewed, not taken for a new submission
    # (classroom.changes.folder_changed). "1": recorded before the field.
    reading: str = READING

    @classmethod
    def of(cls, settings, notebook_name: str) -> IntakeRules:
        return cls(notebook_name, settings.notebook_kb * 1024, tuple(settings.submission_files),
                   settings.submission_file_kb * 1024, settings.submission_entries,
                   extra_total_bytes=settings.submission_files_total_kb * 1024)


@dataclass(frozen=True)
class Found:
    """One entry of the submission folder, as lstat saw it."""

    path: str  # from the submission folder, with /
    kind: str  # "a file", or what else it is


@dataclass
class Intake:
    """What the intake took: the notebook to grade (in the staging folder), or why there is none; and notes.
    `read`: whether the folder was opened and walked to the end of what the intake takes (False when it is not a
    folder, or could not be read); `owner`: the uid owning the folder read, as its descriptor says."""

    folder: Path
    notebook: Path | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    read: bool = False
    owner: int | None = None


@dataclass(frozen=True)
class Survey:
    """What the intake sees of a submission folder (`survey`): the entries its walk looks at, whether that was all
    of them, for each file it reads, its size and the SHA-256 of what it reads, or why it refuses the file, and the
    notebook it grades (choose_notebook's path), if any."""

    entries: list[Found]
    complete: bool
    reads: dict[str, str]
    notebook: str | None = None


def kind_of(mode: int) -> str:
    """What an lstat mode is, as a reason names it."""
    for test, name in ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device")):
        if test(mode):
            return name
    return "not a file"


def take_submission(top: Path, parts: tuple[str, ...], staging: Path, rules: IntakeRules,
                    timed: bool = True) -> Intake:
    """Copy what grading needs of the folder `top`/`parts` (each part a folder, never a link: a student's) into
    `staging`, emptied first; `top` is the instructor's (submitted/, /autograder/submission). `timed`: whether the
    route reads timestamp.txt (module docstring); a route's, not a submission's, so not one of IntakeRules, which
    a grade records."""
    _fresh(staging)
    intake = Intake(staging)
    try:
        root = _open_folder(_open_top(top), parts)
    except Refused as why:
        intake.reason = f"its submission folder is not a folder ({why}): submit the notebook file itself"
        return intake
    except OSError as error:
        intake.reason = f"its folder could not be read ({own_failure(error, 'the folder')})"
        return intake
    try:
        intake.owner = os.fstat(root).st_uid
        _take(root, intake, rules, timed)
        intake.read = True
    except OSError as error:  # gone or unreadable while it was read
        intake.notebook, intake.reason = None, f"its folder could not be read ({own_failure(error, 'the folder')})"
    finally:
        os.close(root)
    return intake


def survey(top: Path, parts: tuple[str, ...], rules: IntakeRules) -> Survey:
    """What `take_submission` would see of `top`/`parts` under `rules` (module docstring), without copying it.
    Refused when the folder is not a folder; OSError when it cannot be read."""
    root = _open_folder(_open_top(top), parts)
    try:
        found, complete = _walk(root, rules.max_entries, (rules.notebook_name, TIMESTAMP))
        notebook, _ = choose_notebook([f.path for f in found if is_notebook(f.path)], rules.notebook_name)
        limits = {f.path: rules.extra_bytes for f in found if _is_extra(f.path, rules)}
        limits[TIMESTAMP] = TIMESTAMP_BYTES
        if notebook is not None:
            limits[notebook] = rules.notebook_bytes
        reads = {f.path: _digest(root, f.path, limits[f.path], rules.linked_files) for f in found
                 if f.kind == "a file" and f.path in limits}
    finally:
        os.close(root)
    return Survey(found, complete, reads, notebook)


def entries(folder: Path, max_entries: int) -> tuple[list[Found], bool]:
    """Every entry of the instructor's `folder` the intake's walk sees (`_walk`: no link followed, hidden entries
    passed over, within `max_entries`), and whether that was all of them. Refused when it cannot be opened."""
    root = _open_top(folder)
    try:
        return _walk(root, max_entries, ())
    finally:
        os.close(root)


def _take(root: int, intake: Intake, rules: IntakeRules, timed: bool) -> None:
    """The notebook, then its time stamp (when `timed`), then the files a setting names; the notes on what was not
    read."""
    found, complete = _walk(root, rules.max_entries, (rules.notebook_name, TIMESTAMP))
    cap = rules.max_entries
    unseen = "" if complete else (f"the folder holds more than {cap} entries: the folder that passes that count was "
                                  f"not looked into, nor any after it (GraderSettings.submission_entries)")
    for step in (_take_notebook, _take_timestamp) if timed else (_take_notebook,):
        step(root, found, intake, rules)
        if intake.notebook is None:
            if unseen and step is _take_notebook:  # the notebook may be past the count: not "no notebook" alone
                intake.reason += f" ({unseen})"
            return
    _take_extras(root, found, intake, rules)
    _note_refused(found, intake, rules)
    if unseen:
        intake.notes.append(unseen)


def choose_notebook(notebooks: list[str], name: str) -> tuple[str | None, str]:
    """The notebook to grade among `notebooks` (paths from the submission folder): the one called `name` in any
    case, the nearest (and of two as near, the one spelled `name`); else the only one; else None and the reason the
    student sees. With a notebook, a note: "" for `name` itself, else that it was graded as `name`. Names match
    whatever their case because a course copy on macOS or Windows opens `name` as any spelling of it: the file
    graded is the same on every disk."""
    ordered = sorted(notebooks, key=lambda p: (p.count("/"), p))
    named = sorted((p for p in ordered if p.rpartition("/")[2].casefold() == name.casefold()),
                   key=lambda p: (p.count("/"), p.rpartition("/")[2] != name, p))
    if named:
        return named[0], "" if named[0].rpartition("/")[2] == name else f"graded {quoted(named[0])} as {name} (renamed)"
    if len(ordered) == 1:
        return ordered[0], f"graded {quoted(ordered[0])} as {name} (renamed)"
    if ordered:
        found = ", ".join(map(quoted, ordered[:10]))
        return None, f"no {name} in the submission (found {found}): submit one notebook under that name"
    return None, f"no {name} in the submission: submit the notebook file itself, saved from Jupyter"


def read_regular(path: os.PathLike | str, limit: int | None) -> tuple[bytes, int]:
    """A file's bytes (at most `limit` + 1 of them) and its size, opened without following a link; Refused
    when it is not a regular file. For one file on the instructor's side (`python -m autograder grade PATH`, a
    notebook or time stamp in submitted/, the kit's own copies): a second hard link is read as its file, as
    take_submission reads submitted/ (module docstring), so that an instructor's `cp -al` backup changes no route's
    reading of it."""
    try:
        fd = os.open(path, _NO_FOLLOW)
    except OSError as error:
        raise _open_failure(error, os.fspath(path), None) from None
    return _read(fd, limit, links=True)


# ------------------------------------------------------------------------------------------ the walk


def _fresh(staging: Path) -> None:
    """`staging` empty, made 0700 (its parents too, where the kit makes them)."""
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(mode=0o700, parents=True)
    staging.chmod(0o700)


def _open_top(top: Path) -> int:
    """The instructor's folder a submission is in (links followed: the instructor chose it)."""
    try:
        return os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise Refused(f"could not be opened ({error.strerror or type(error).__name__})") from None


def _open_folder(parent: int, parts: tuple[str, ...] | list[str]) -> int:
    """A descriptor of the folder `parts` under `parent` (which it closes), each part opened without following
    a link; Refused with what the part is when it is not a folder."""
    fd = parent
    try:
        for part in parts:
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as error:
                raise _open_failure(error, part, fd, "a folder") from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_failure(error: OSError, name: str, dir_fd: int | None, wanted: str = "a file") -> Refused:
    """What `name` is, when it could not be opened for not being what was asked for (a link, a file in place of
    a folder); `error` itself when it is something else (gone, or what was asked for but unreadable: its mode)."""
    try:
        mode = os.lstat(name, dir_fd=dir_fd).st_mode
    except OSError:
        raise error from None
    if kind_of(mode) == wanted:
        raise error from None
    return Refused(f"it is {kind_of(mode)}, not {wanted}")


def _walk(root: int, max_entries: int, known: tuple[str, ...]) -> tuple[list[Found], bool]:
    """Every entry under `root` that is not a folder, shallowest first, and whether the walk saw them all. The
    `known` names at the top (the notebook's, timestamp.txt) are looked up first, so no cap hides them. Folders are
    read whole, in order of their paths, until one holds more entries than the cap leaves: the walk stops there,
    taking none of that folder's, since which of them a listing gives first is the file system's order (a hash
    seeded per disk, the order they were written in), not the folder's: the same folder is read the same on
    every machine."""
    top = {name: st for name in known if (st := _lstat(root, name)) is not None and not stat.S_ISDIR(st.st_mode)}
    found = [Found(name, kind_of(st.st_mode)) for name, st in top.items()]
    # Not listed again under another name: a disk that ignores case opens a known name as any spelling of it, and
    # its listing gives the spelling stored.
    seen, looked_up = len(found), {st.st_ino for st in top.values()}
    queue: deque[tuple[str, ...]] = deque([()])
    while queue:
        parts = queue.popleft()
        try:
            fd = _open_folder(os.dup(root), parts)
        except Refused:  # replaced while walked: it is not looked at
            continue
        except OSError as error:  # unreadable (its mode): not looked at; the machine failing is the grader's
            own_failure(error, quoted("/".join(parts)))
            continue
        try:  # a DirEntry's stat() reads through `fd`: it stays open until they are read
            visible = (e for e in os.scandir(fd) if not skipped(e.name) and not (parts == () and e.inode() in looked_up))
            listed = list(islice(visible, max_entries - seen + 1))  # no more read
            if seen + len(listed) > max_entries:  # which of them came first is the file system's order: none is taken
                return found, False
            for entry in sorted(listed, key=lambda e: e.name):
                seen += 1
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    queue.append((*parts, entry.name))
                else:
                    found.append(Found("/".join((*parts, entry.name)), kind_of(mode)))
        finally:
            os.close(fd)
    return found, True


def skipped(name: str) -> bool:
    """Whether the walk passes over an entry of this name, unread and uncounted: hidden ones (.git, Jupyter's
    .ipynb_checkpoints, Finder's .DS_Store and ._ files) and SKIPPED_FOLDERS. Nothing there is graded, so nothing
    there is an edit of a collected folder either (collect.py)."""
    return name.startswith(".") or name in SKIPPED_FOLDERS


def _lstat(folder: int, name: str) -> os.stat_result | None:
    try:
        return os.lstat(name, dir_fd=folder)
    except OSError:
        return None


# ------------------------------------------------------------------------------------------ what is taken


def _take_notebook(root: int, found: list[Found], intake: Intake, rules: IntakeRules) -> None:
    name = rules.notebook_name
    notebooks = {f.path: f for f in found if is_notebook(f.path)}
    chosen, note = choose_notebook(list(notebooks), name)
    if chosen is None:
        intake.reason = note
        return
    entry = notebooks[chosen]
    try:
        if entry.kind != "a file":
            raise Refused(f"it is {entry.kind}, not a file: submit the notebook file itself, saved from Jupyter")
        _copy(root, entry.path, intake.folder / name, rules.notebook_bytes, links=rules.linked_files)
    except (Refused, OSError) as why:
        from .validate import too_big, unreadable  # here: validate reads one file through read_regular

        intake.reason = unreadable(chosen, too_big(why.size, why.limit) if isinstance(why, TooLarge) else
                                   f"it could not be read ({own_failure(why, quoted(chosen))})"
                                   if isinstance(why, OSError) else str(why))
        return
    intake.notebook = intake.folder / name
    others = [quoted(p) for p in sorted(notebooks, key=lambda p: (p.count("/"), p)) if p != chosen]
    if note:
        intake.notes.append(note)
    elif others:
        intake.notes.append(f"the folder also holds {', '.join(others)}: only {name} is graded")


def _take_timestamp(root: int, found: list[Found], intake: Intake, rules: IntakeRules) -> None:
    stamp = next((f for f in found if f.path == TIMESTAMP), None)
    if stamp is None:
        return
    try:
        if stamp.kind != "a file":
            raise Refused(stamp.kind)
        _copy(root, TIMESTAMP, intake.folder / TIMESTAMP, TIMESTAMP_BYTES, cut=True, links=rules.linked_files)
    except Refused:
        from .validate import TIMESTAMP_NOT_A_FILE  # here: validate reads one file through read_regular

        intake.notebook, intake.reason = None, TIMESTAMP_NOT_A_FILE


def is_notebook(path: str) -> bool:
    """Whether `path` is a notebook's, its extension in any case (`.IPYNB`, as Windows tools write it): as
    choose_notebook matches the name, so that a disk that ignores case grades the same file as one that does not."""
    return path.casefold().endswith(".ipynb")


def _is_extra(path: str, rules: IntakeRules) -> bool:
    return (not is_notebook(path) and path != TIMESTAMP
            and any(fnmatch.fnmatchcase(path, pattern) for pattern in rules.extra_files))


def _take_extras(root: int, found: list[Found], intake: Intake, rules: IntakeRules) -> None:
    """The files GraderSettings.submission_files names, in the walk's order (shallowest first, by name), while they
    hold at most submission_files_total_kb together; one too large (submission_file_kb), past that total, linked, or
    whose name cannot be staged as it is (`_unstageable`) is named in a note and not taken."""
    staged = {_staged_key(rules.notebook_name): "a file", _staged_key(TIMESTAMP): "a file"}
    large, room = [], rules.extra_total_bytes
    for entry in found:
        if entry.kind != "a file" or not _is_extra(entry.path, rules):
            continue
        try:
            _unstageable(entry.path, staged)
            room -= _copy(root, entry.path, intake.folder.joinpath(*entry.path.split("/")),
                          min(rules.extra_bytes, room), links=rules.linked_files, made_in=intake.folder)
            staged[_staged_key(entry.path)] = "a file"
        except TooLarge as why:  # over its own limit, or over what the total leaves
            large.append(f"{_shown_path(entry.path)} ({TooLarge(why.size, rules.extra_bytes)})"
                         if why.size > rules.extra_bytes else
                         f"{_shown_path(entry.path)} (the files taken before it leave {room / 1024:,.0f} KB of the "
                         f"{rules.extra_total_bytes / 1024:,.0f} KB they may hold together)")
        except Refused as why:
            large.append(f"{_shown_path(entry.path)} ({why})")
        except OSError as error:
            large.append(f"{_shown_path(entry.path)} (it could not be read: "
                         f"{own_failure(error, _shown_path(entry.path))})")
    if large:
        intake.notes.append(_listed("not taken", large))


def _staged_key(path: str) -> str:
    """`path` as a disk that ignores case (and Unicode's spellings of one letter) compares it: the staging folder
    may be on one (macOS, an SMB share, ext4's casefold)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


def _unstageable(path: str, staged: dict[str, str]) -> None:
    """Refused when the extra file `path` could not be copied as it is beside what is staged already (`staged`:
    each staged path's `_staged_key`, and what it is; its folders are recorded here): a path longer than
    EXTRA_PATH_BYTES, a folder with the name of a file staged (the notebook, as a zip of the folder
    <notebook>.ipynb/ holds it) or a name staged already, in any case. The student's names, never the machine's
    failure: the notebook is still graded."""
    if len(os.fsencode(path)) > EXTRA_PATH_BYTES:
        raise Refused(f"its path is longer than {EXTRA_PATH_BYTES:,} bytes")
    parts = path.split("/")
    folders = ["/".join(parts[:depth]) for depth in range(1, len(parts))]
    for folder in folders:
        if staged.get(_staged_key(folder), "a folder") != "a folder":
            raise Refused(f"its folder {_shown_path(folder)} has the name of a file taken, in some case")
    if _staged_key(path) in staged:
        raise Refused("a file or folder taken has its name, in some case")
    staged.update((_staged_key(folder), "a folder") for folder in folders)


def _shown_path(path: str) -> str:
    """A student's path in a note, cut to its start: one may be thousands of bytes long."""
    return quoted(path, 200)


def _note_refused(found: list[Found], intake: Intake, rules: IntakeRules) -> None:
    """A note naming what the folder holds that is not a file nor a folder (links, FIFOs, devices): never opened."""
    odd = [f"{quoted(f.path)} ({f.kind})" for f in found if f.kind != "a file" and f.path != rules.notebook_name]
    if odd:
        intake.notes.append(_listed("not read", odd) + ": only files are taken")


def _listed(what: str, items: list[str]) -> str:
    more = f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
    return f"{what}: {', '.join(items[:SHOWN])}{more}"


def _copy(root: int, path: str, dest: Path, limit: int, cut: bool = False, links: bool = False,
          made_in: Path | None = None) -> int:
    """Copy the regular file `path` (under `root`) to `dest` (0600, made anew; with `made_in`, its folders under
    that one made 0700 as needed): Refused when it is not a regular file, is over `limit` bytes, or (unless `links`)
    has a second hard link; with `cut`, its first `limit` + 1 bytes instead. StagingFault when `dest` cannot be
    written. The bytes written."""
    data, size = _read(_open_file(root, path), limit, links)
    if size > limit and not cut:
        raise TooLarge(size, limit)
    folders = [made_in / f for f in reversed(dest.relative_to(made_in).parents[:-1])] if made_in else []
    try:
        for folder in folders:
            folder.mkdir(mode=0o700, exist_ok=True)
        with os.fdopen(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as out:
            out.write(data)
        return len(data)
    except OSError as error:  # the kit's own copy, its names checked first (_unstageable): never the student's
        raise StagingFault(f"the intake could not write its copy of {_shown_path(path)} "
                           f"({error.strerror or type(error).__name__}): the machine's fault, not the file's") from error


def _digest(root: int, path: str, limit: int, links: bool) -> str:
    """The size of the file `path` (under `root`) and the SHA-256 of what the intake reads of it (its first
    `limit` + 1 bytes), or why the intake refuses it."""
    try:
        data, size = _read(_open_file(root, path), limit, links)
    except Refused as why:
        return f"refused: {why}"
    except PermissionError as error:  # as long as its mode stays: the intake's reason stays too
        return f"unreadable: {error.strerror}"
    return f"{size} {hashlib.sha256(data).hexdigest()}"


def _open_file(root: int, path: str) -> int:
    """A descriptor of `path` under `root`, no part of it followed as a link; Refused with what it is when it
    cannot be opened for being a link."""
    *folders, name = path.split("/")
    folder = _open_folder(os.dup(root), folders)
    try:
        return os.open(name, _NO_FOLLOW, dir_fd=folder)
    except OSError as error:
        raise _open_failure(error, name, folder) from None
    finally:
        os.close(folder)


def _read(fd: int, limit: int | None, links: bool = False) -> tuple[bytes, int]:
    """What `fd` holds, when it is a regular file with no other hard link unless `links` (Refused when not), at
    most `limit` + 1 bytes of it, and its size: what fstat says, or what was read when the file grew meanwhile.
    Closes `fd`."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"it is {kind_of(info.st_mode)}, not a file")
        if info.st_nlink > 1 and not links:  # a student's link to a file they cannot read, a tar unpacked as root's
            raise Refused("it is a hard link to another file, not a file of its own")
        chunks, read = [], 0
        while limit is None or read <= limit:
            chunk = os.read(fd, CHUNK if limit is None else min(CHUNK, limit + 1 - read))
            if not chunk:
                break
            chunks.append(chunk)
            read += len(chunk)
        return b"".join(chunks), max(read, info.st_size)
    finally:
        os.close(fd)


