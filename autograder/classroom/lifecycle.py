"""A course's life cycle: from the demo class to a real one, regrading, cleaning, next year's reset.

**A demo student is one the kit wrote, and says so in a record only the kit writes.** Writing the demo
class (write_demo) records, in DEMO_RECORD at the course root, each student it wrote with its
notebook's SHA-256 and modification time to the nanosecond. That file is outside submitted/ and
downloaded/, where collecting and uploads write, and outside every sandbox. A folder of submitted/ is a
demo student's only while it is on the record and its notebook is still the file the kit wrote (same
bytes, same mtime): a name, a time stamp (timestamp.txt is the student's) or a notebook identical to a
demo one never makes a student demo, and a demo folder the instructor replaced with real work stops
being demo. An unreadable record makes no one demo: a demo student left behind is removed by hand, a
real one is never lost.

**Only demo students are ever removed**, and only of the demo's own assignment (a demo id may be a real
student's in another: their submissions, ledger rows and folders there stay), and a submission that holds manual
grades (a manual score, extra credit or a comment) never is, demo or not, except by `make reset-gradebook`
(forget_students is the one place rows are removed). Grading a class first forgets each recorded student whose demo
notebook is no longer in submitted/ (deleted, or replaced under the same name): that assignment's gradebook rows,
autograded/ and feedback/, and so their grades.csv row; the record drops them either way. The demo class is written
only into a submitted/ that holds no real student of any assignment (real_folders).

**Manual grades survive every target but `make reset-gradebook`**, which asks first and keeps a dated
copy of gradebook.db. Grading never writes a manual score, extra credit or comment (nbgrader 0.9.6's
autograde and the kit's SaveAutoGradesAtOnce write auto scores, auto comments and the review flag only), so a
mark entered or cleared in the formgrader while `make grade` runs stays as the instructor left it.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import sqlite3
import tempfile
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Iterator, NamedTuple

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from ..assignment import Assignment
from ..nbgrader_glue.late import settle_penalties
from ..outputs.export import PartsCsvExportPlugin
from ..outputs.inert import say
from . import ledger
from .demo import MARKER, TIMESTAMP, write_demo_class

# What grading writes, besides gradebook.db: removed by `make clean-grading` (reports/ is the class
# report's folder, .grading/ the scratch release).
GRADING_OUTPUTS = ("autograded", "feedback", "grades.csv", "reports", ".grading")
GRADEBOOK_FILES = ("gradebook.db", "gradebook.db-journal")
DEMO_RECORD = ".demo-class.json"  # at the course root: {assignment: {student: fingerprint}} (module doc)


class Forgotten(NamedTuple):
    """Students whose rows and outputs were removed, and those kept because their rows hold manual grades."""
    removed: list[str]
    kept: list[str]


def is_folder_name(name: str) -> bool:
    """Whether `name` can only mean one folder directly inside another: no separator, no `..`, not hidden."""
    return bool(name) and not name.startswith(".") and "/" not in name and "\0" not in name and Path(name).name == name


# ------------------------------------------------------------------------------------ the demo record


def _fingerprint(notebook: Path) -> dict | None:
    """The notebook file as the record knows it, or None when it is not a regular file (a symlink is not)."""
    try:
        if not notebook.is_file() or notebook.is_symlink():
            return None
        return {"sha256": hashlib.sha256(notebook.read_bytes()).hexdigest(), "mtime_ns": notebook.stat().st_mtime_ns}
    except OSError:
        return None


def _read_record(root: Path) -> dict[str, dict[str, dict]]:
    """The whole record; an absent or unreadable one is empty (no one is demo)."""
    try:
        record = json.loads((root / DEMO_RECORD).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def demo_record(assignment: Assignment) -> dict[str, dict]:
    """{student: fingerprint} of the demo students the kit wrote for this assignment and has not forgotten."""
    students = _read_record(assignment.root).get(assignment.name)
    if not isinstance(students, dict):
        return {}
    return {s: f for s, f in students.items() if is_folder_name(s) and isinstance(f, dict)}


def _save_record(assignment: Assignment, students: dict[str, dict]) -> None:
    """This assignment's part of the record, written whole and atomically (os.replace); no demo left, no file."""
    record = {**_read_record(assignment.root), assignment.name: students}
    record = {name: part for name, part in record.items() if part}
    path = assignment.root / DEMO_RECORD
    if not record:
        path.unlink(missing_ok=True)
        return
    with tempfile.NamedTemporaryFile("w", dir=assignment.root, prefix=DEMO_RECORD, delete=False) as scratch:
        json.dump(record, scratch, indent=1, sort_keys=True)
    os.replace(scratch.name, path)


def write_demo(assignment: Assignment, submitted: Path) -> list[str]:
    """Write the demo class into submitted/ (demo.write_demo_class) and record each student it wrote."""
    students = write_demo_class(assignment, submitted)
    prints = {s: _fingerprint(submitted / s / assignment.name / assignment.notebook_name) for s in students}
    _save_record(assignment, {**demo_record(assignment), **{s: f for s, f in prints.items() if f}})
    return students


def _still_demo(assignment: Assignment, submitted: Path, student: str, fingerprint: dict) -> bool:
    folder = submitted / student
    if folder.is_symlink() or (folder / assignment.name).is_symlink():
        return False
    return _fingerprint(folder / assignment.name / assignment.notebook_name) == fingerprint


def demo_submissions(assignment: Assignment, submitted: Path) -> list[str]:
    """The students of submitted/ whose folder still holds the notebook the kit wrote for them (module doc)."""
    return sorted(s for s, f in demo_record(assignment).items() if _still_demo(assignment, submitted, s, f))


def demo_written(assignment: Assignment, submitted: Path, student: str) -> dict[str, str]:
    """What the kit wrote in `student`'s folder, as a collection records what it wrote (intake/collected.held:
    {file: SHA-256}), while the folder is still the demo's; else {}. A real student of a demo id (a login `ada`)
    is a real student: collecting their work replaces the kit's demo folder as it replaces its own (never a folder
    the instructor changed), and grading then forgets the demo's rows (forget_stale_demo)."""
    fingerprint = demo_record(assignment).get(student)
    if not fingerprint or not _still_demo(assignment, submitted, student, fingerprint):
        return {}
    return {assignment.notebook_name: str(fingerprint.get("sha256")),
            "timestamp.txt": hashlib.sha256(f"{TIMESTAMP}\n".encode()).hexdigest()}  # as write_demo_class writes it


def real_folders(root: Path, submitted: Path) -> list[str]:
    """The folders of submitted/ (`<student>/<assignment>`, any assignment) that are not the kit's demo ones (module
    doc): another assignment's real students, whose ids the demo class must never take."""
    record = _read_record(root)
    real = []
    for folder in sorted(submitted.glob("*/*")) if submitted.is_dir() else []:
        student, name = folder.parent.name, folder.name
        prints = record.get(name)
        fingerprint = prints.get(student) if isinstance(prints, dict) else None
        try:
            demo = isinstance(fingerprint, dict) and _still_demo(Assignment(root, name), submitted, student, fingerprint)
        except RuntimeError:  # that assignment's notebook is not to be found: not the kit's demo, as far as it knows
            demo = False
        if not demo:
            real.append(f"{student}/{name}")
    return real


# ------------------------------------------------------------------------------------ the gradebook


def existing_gradebook(coursedir: CourseDirectory) -> Gradebook | None:
    """The course's gradebook, or None when there is none yet (never creates one)."""
    url = coursedir.db_url
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        return None
    return Gradebook(url, coursedir.course_id)


def _marks(submission) -> Iterator[tuple[tuple[str, str, str], object]]:
    """What graders entered by hand in one submission: ((notebook, kind, name), value) for each mark."""
    for notebook in submission.notebooks:
        for grade in notebook.grades:
            if ledger.hand_graded(grade):
                yield (notebook.name, "grade", grade.name), (grade.manual_score, grade.extra_credit)
        for comment in notebook.comments:
            if comment.manual_comment is not None:
                yield (notebook.name, "comment", comment.name), comment.manual_comment


def forget_students(assignment: Assignment, coursedir: CourseDirectory, students: list[str]) -> Forgotten:
    """Remove students' submissions of `assignment` from the gradebook (nbgrader's API; a student left with none
    leaves it), their ledger rows of it and their autograded/ and feedback/ folders of it: a demo id may be a real
    student's in another assignment, whose grades stay. Never a submission that holds a manual grade: that student
    keeps everything of this assignment."""
    gradebook = existing_gradebook(coursedir)
    kept: list[str] = []
    if gradebook is not None and students:
        with gradebook as gb:
            for student in students:
                try:
                    submission = gb.find_submission(assignment.name, student)
                except MissingEntry:
                    submission = None
                if submission is not None and next(_marks(submission), None):
                    kept.append(student)
                    continue
                if submission is not None:
                    gb.remove_submission(assignment.name, student)
                try:
                    if not gb.find_student(student).submissions:
                        gb.remove_student(student)
                except MissingEntry:
                    pass
                ledger.forget(gb.db, assignment.name, [student])
            gb.db.commit()
    removed = [s for s in students if s not in kept]
    root = Path(coursedir.root)
    for student in removed:
        for folder in (coursedir.autograded_directory, coursedir.feedback_directory):
            shutil.rmtree(root / folder / student / assignment.name, ignore_errors=True)
            try:
                (root / folder / student).rmdir()  # left empty: the student has nothing else there
            except OSError:
                pass
    return Forgotten(removed, kept)


def forget_stale_demo(assignment: Assignment, coursedir: CourseDirectory, submitted: Path) -> Forgotten:
    """What grading a class does first: forget the recorded demo students whose demo notebook is gone
    from submitted/ (module doc), and take them off the record: from now on that name is a real student's."""
    (submitted / MARKER).unlink(missing_ok=True)  # the dotfile older versions left: the record replaces it
    record = demo_record(assignment)
    current = set(demo_submissions(assignment, submitted))
    stale = sorted(set(record) - current)
    if not stale:
        return Forgotten([], [])
    forgotten = forget_students(assignment, coursedir, stale)
    _save_record(assignment, {s: f for s, f in record.items() if s in current})
    return forgotten


def export_grades(assignment: Assignment, coursedir: CourseDirectory) -> None:
    """grades.csv from the gradebook (nbgrader's CSV export); no gradebook or no student, no file."""
    target = assignment.root / "grades.csv"
    gradebook = existing_gradebook(coursedir)
    if gradebook is None:
        target.unlink(missing_ok=True)
        return
    with gradebook as gb:
        if not gb.students:
            target.unlink(missing_ok=True)
            return
        PartsCsvExportPlugin(to=str(target)).export(gb)  # a column per part (autograder/outputs/export.py)


def settle_late_penalties(assignment: Assignment, coursedir: CourseDirectory, config: Config,
                          students: list[str], held: list[str]) -> None:
    """The late penalties of `students` (last graded under today's due date and late policy:
    changes.graded_under_todays_late_policy) as the policy gives them from the points the gradebook holds now, the hand
    grades given since the autograde included (late.settle_penalties), each one moved named: the hand grades are the
    only input that moved it. Those of `held` (graded under another due date or policy) stay as they are: a change of the due
    date or the policy is `make grade`'s to preview and CONFIRM's to apply; one that would move is named as such. No
    gradebook, nothing to do."""
    gradebook = existing_gradebook(coursedir)
    if gradebook is None:
        return
    with gradebook as gb:
        unseen = settle_penalties(gb, assignment.name, config, held)
        gb.db.rollback()  # only looked at
        moved = settle_penalties(gb, assignment.name, config, students)
        gb.db.commit()
    if moved:
        say("Late penalty worked out again from the points graded now, hand grades included (the policy's share of "
            "the whole score): " + _moves(moved) + ".")
    if unseen:
        say("Late penalty left as graded, until `make grade` previews the change of the due date or late policy since "
            "(CONFIRM=yes applies it): " + _moves(unseen) + ".")


def _moves(moved: dict[str, tuple[float, float]]) -> str:
    return ", ".join(f"{s} {old:g} -> {new:g}" for s, (old, new) in sorted(moved.items()))


def _remove_demo_folder(assignment: Assignment, submitted: Path, student: str) -> None:
    """Remove what write_demo_class wrote for a student, and the folders it leaves empty; nothing else."""
    folder = submitted / student / assignment.name
    for name in (assignment.notebook_name, "timestamp.txt"):
        (folder / name).unlink(missing_ok=True)
    for empty in (folder, folder.parent):
        try:
            empty.rmdir()
        except OSError:  # something the kit did not write is there: it stays
            return


def new_class(assignment: Assignment, coursedir: CourseDirectory) -> Forgotten:
    """`make new-class`: the demo class leaves everything behind it; real students keep theirs.

    Removes each demo student (module doc) from the gradebook, autograded/, feedback/ and submitted/,
    and writes grades.csv again (or removes it when no student is left). A demo student whose row holds
    manual grades keeps everything, their demo folder too, and is named in `kept`.
    """
    submitted = assignment.root / coursedir.submitted_directory
    demo = demo_submissions(assignment, submitted)
    now = forget_students(assignment, coursedir, demo)
    for student in now.removed:
        _remove_demo_folder(assignment, submitted, student)
    stale = forget_stale_demo(assignment, coursedir, submitted)
    removed = sorted(set(now.removed) | set(stale.removed))
    if (assignment.root / "grades.csv").exists() or removed:
        export_grades(assignment, coursedir)
    return Forgotten(removed, sorted(set(now.kept) | set(stale.kept)))


def regrade_refusal(assignment: Assignment, submitted: Path, students: list[str]) -> str | None:
    """Why `make regrade` refuses these names, in one line, or None when each names a student folder
    directly under submitted/: never a path (`../source` regraded the source notebook into nothing)."""
    for student in students:
        if not is_folder_name(student):
            return (f"{student!r} is not the name of a folder directly under submitted/: give the student's id, "
                    "e.g. STUDENT=ada")
        if (submitted / student).is_symlink() or (submitted / student / assignment.name).is_symlink():
            return f"{student!r} in submitted/ is a symbolic link: only a folder really in submitted/ is regraded"
    absent = [s for s in students if not (submitted / s / assignment.name).is_dir()]
    if absent:
        return f"no submission of {', '.join(absent)} in {submitted / '<student>' / assignment.name}"
    return None


def clean_grading(root: Path) -> list[str]:
    """`make clean-grading`: remove what grading wrote, but not gradebook.db (manual grades live there)."""
    removed = []
    for name in GRADING_OUTPUTS:
        path = root / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        else:
            continue
        removed.append(name)
    return removed


def backup_gradebook(root: Path, now: datetime | None = None) -> Path | None:
    """A dated copy of gradebook.db beside it (gradebook-2026-12-01T0930.db, then -2, -3, ... in the same
    minute: never over an earlier copy), or None when there is no gradebook. SQLite's backup API copies
    it whole even while the formgrader writes; a file SQLite cannot read is copied byte for byte."""
    source = root / "gradebook.db"
    if not source.exists():
        return None
    stamp = (now or datetime.now()).strftime("%Y-%m-%dT%H%M")
    for n in itertools.count(1):
        target = root / f"gradebook-{stamp}{'' if n == 1 else f'-{n}'}.db"
        try:
            # claims the name (an existing copy is never opened for writing), closed to others: it holds every grade
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            break
        except FileExistsError:
            continue
    try:
        with closing(sqlite3.connect(source)) as live, closing(sqlite3.connect(target)) as copy:
            live.backup(copy)
    except sqlite3.DatabaseError:  # not a database SQLite reads: the bytes are what there is to keep
        shutil.copyfile(source, target)
    return target


def empty_gradebook(path: Path) -> bool:
    """Delete every row of every table of a gradebook in place (its schema stays), and the deleted rows' bytes
    with them (VACUUM); False when SQLite cannot read the file.

    In place, because a running formgrader keeps one connection to the file it opened: a gradebook deleted
    and made anew is another file, which it never sees (every grading page would answer "Invalid submission"
    until Jupyter restarts). Emptied, it is the same file, and the formgrader sees the next `make grade`."""
    try:
        with closing(sqlite3.connect(path, timeout=60)) as db:
            tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                   "AND name NOT LIKE 'sqlite_%' AND name != 'alembic_version'")]
            with db:
                for table in tables:
                    db.execute(f'DELETE FROM "{table}"')
            db.execute("VACUUM")
        return True
    except sqlite3.DatabaseError:
        return False


def reset_gradebook(root: Path) -> tuple[Path | None, list[str]]:
    """`make reset-gradebook`, once confirmed: a dated copy of gradebook.db (backup_gradebook), then
    clean_grading and gradebook.db emptied in place (empty_gradebook; deleted when SQLite cannot read it):
    every score, manual grades too. Returns the copy and what went."""
    copy = backup_gradebook(root)
    removed = clean_grading(root)
    database = root / GRADEBOOK_FILES[0]
    emptied = database.exists() and empty_gradebook(database)
    if emptied:
        removed.append(f"every row of {database.name}")
    for name in GRADEBOOK_FILES:
        if (root / name).exists() and not emptied:  # SQLite's own journal stays with the file it belongs to
            (root / name).unlink()
            removed.append(name)
    return copy, removed
