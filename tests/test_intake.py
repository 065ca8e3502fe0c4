"""The one intake (autograder/intake/files.py): what a submission folder may bring, and what grading reads of it.

Each route (make grade's submitted/, Gradescope's /autograder/submission, one file on the command line) reads a
submission through it; these are its pieces on small folders. The whole class, with links, a FIFO and a link to
/dev/zero among real students, is tests/test_catalogue_hostile.py's.
"""
from __future__ import annotations

import errno
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from test_collect import collect, course, lms_zip

from autograder.intake import files
from autograder.intake.files import IntakeRules, Refused, StagingFault, choose_notebook, read_regular, take_submission
from autograder.intake.validate import read_submission, submission_problem, validate_notebook
from autograder.settings import GraderSettings
from conftest import ROOT, sparse, within

NAME = "modules_and_sgd.ipynb"
RULES = IntakeRules(NAME, 2048 * 1024)
INBOUND = replace(RULES, linked_files=False)  # a folder the student wrote in (nbgrader's exchange inbound)
REFERENCE = ROOT / "solutions" / "dl01_6_3" / NAME
BLANK = ROOT / "release" / "dl01_6_3" / NAME


def folder(tmp_path: Path, files: dict[str, str]) -> Path:
    top = tmp_path / "submitted"
    for name, text in files.items():
        path = top / "eve" / "a" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (top / "eve" / "a").mkdir(parents=True, exist_ok=True)
    return top / "eve" / "a"


def take(tmp_path: Path, rules: IntakeRules = RULES):
    return take_submission(tmp_path / "submitted", ("eve", "a"), tmp_path / "staging", rules)


def test_the_notebook_and_its_time_stamp_are_copied_and_nothing_else(tmp_path):
    work = folder(tmp_path, {NAME: "{}", "timestamp.txt": "2026-11-20 12:00:00 UTC", "data.csv": "1,2",
                             "sub/notes.txt": "x"})
    intake = take(tmp_path)
    assert intake.notebook == tmp_path / "staging" / NAME and intake.reason == "" and intake.notes == []
    assert sorted(p.name for p in (tmp_path / "staging").iterdir()) == [NAME, "timestamp.txt"]
    assert oct((tmp_path / "staging").stat().st_mode & 0o777) == "0o700"
    assert oct(intake.notebook.stat().st_mode & 0o777) == "0o600"
    named = IntakeRules(NAME, 2048 * 1024, extra_files=("*.csv",), extra_bytes=1024)
    (work / "big.csv").write_text("x" * 2048)
    intake = take(tmp_path, named)
    assert (tmp_path / "staging" / "data.csv").read_text() == "1,2"
    assert not (tmp_path / "staging" / "big.csv").exists()
    assert intake.notes == ["not taken: 'big.csv' (it is 2 KB, more than the 1 KB allowed)"]


def test_the_files_beside_the_notebook_share_one_total(tmp_path):
    """1,000 files of submission_file_kb each would be a gigabyte a student, copied three times (the intake's copy,
    autograded/, feedback/): they share submission_files_total_kb, taken in the walk's order (shallowest first, by
    name) until the next would pass it."""
    folder(tmp_path, {NAME: "{}", "a.csv": "x" * 3072, "b.csv": "x" * 3072, "c.csv": "x" * 3072, "d.csv": "x" * 1024,
                      "e.csv": "x" * 5000})
    intake = take(tmp_path, replace(RULES, extra_files=("*.csv",), extra_bytes=4096, extra_total_bytes=8192))
    assert sorted(os.listdir(tmp_path / "staging")) == ["a.csv", "b.csv", "d.csv", NAME]
    assert intake.notes == ["not taken: 'c.csv' (the files taken before it leave 2 KB of the 8 KB they may hold "
                            "together), 'e.csv' (it is 5 KB, more than the 4 KB allowed)"]
    assert IntakeRules.of(GraderSettings(submission_files_total_kb=8), NAME).extra_total_bytes == 8192


def hard_link(path: Path) -> None:
    secret = path.parent.parent / "secret.ipynb"  # outside the student's folder
    secret.write_text("{}")
    os.link(secret, path)


@pytest.mark.parametrize("make, what", [
    (lambda p: p.symlink_to(REFERENCE), "a symbolic link"),
    (hard_link, "a hard link to another file"),
    (lambda p: p.symlink_to("/dev/zero"), "a symbolic link"),
    (lambda p: os.mkfifo(p), "a FIFO"),
])
def test_a_notebook_that_is_not_a_file_is_that_students_reason(tmp_path, make, what):
    """In a folder the student wrote in: a second hard link may be theirs, to a file they cannot read."""
    work = folder(tmp_path, {})
    make(work / NAME)
    start = time.monotonic()
    intake = take(tmp_path, INBOUND)
    assert time.monotonic() - start < 5  # never opened: a FIFO's writer is never waited for
    assert intake.notebook is None
    assert intake.reason.startswith(f"'{NAME}' is not a readable notebook (it is {what}"), intake.reason
    assert list((tmp_path / "staging").iterdir()) == []


def test_a_second_link_made_by_the_instructors_backup_is_read_as_its_file(tmp_path):
    """`cp -al submitted submitted.bak` (or rsync --link-dest) before a risky step gives every file in submitted/ a
    second link. Only the instructor's side writes there: the notebook and its time stamp are read as what they
    hold, and the survey that tells whether the folder changed sees them unchanged (no regrade into a zero)."""
    work = folder(tmp_path, {NAME: REFERENCE.read_text(), "timestamp.txt": "2026-11-20 12:00:00.000000 UTC"})
    before = fingerprint(tmp_path)
    subprocess.run(["cp", "-al", str(tmp_path / "submitted"), str(tmp_path / "submitted.bak")], check=True)
    assert os.stat(work / NAME).st_nlink == 2
    intake = take(tmp_path)
    assert intake.notebook is not None and intake.reason == "", intake.reason
    assert intake.notebook.read_text() == REFERENCE.read_text()
    assert (intake.folder / "timestamp.txt").read_text().startswith("2026-11-20")
    assert fingerprint(tmp_path) == before
    assert "hard link" in take(tmp_path, INBOUND).reason  # where a student writes, it is still refused


def test_grade_path_reads_a_second_link_as_make_grade_reads_it(tmp_path):
    """`python -m autograder grade submitted/eve/a/modules_and_sgd.ipynb` after the instructor's `cp -al` backup: the
    notebook the command line names is on the instructor's side, as submitted/ is, and is graded as what it holds,
    as make grade's intake and Gradescope's read it (pass 20: the command refused it as "a hard link")."""
    work = folder(tmp_path, {NAME: REFERENCE.read_text()})
    subprocess.run(["cp", "-al", str(tmp_path / "submitted"), str(tmp_path / "submitted.bak")], check=True)
    assert os.stat(work / NAME).st_nlink == 2
    staged = take(tmp_path).notebook
    by_path = read_submission(str(work / NAME), work / NAME, RULES.notebook_bytes)
    assert by_path.error == "" and by_path.notebook == read_submission("staged", staged).notebook, by_path.error


def test_grade_path_grades_the_bytes_it_checked(tmp_path, monkeypatch):
    """`grade PATH` (and the pytest plugin) checked the file through the intake's door, then read it again by its
    path, following a link and with no bound: a file swapped for a link to the reference (or grown) between the two
    was graded as what the check never saw. It reads the file once."""
    from autograder.intake import validate

    work = folder(tmp_path, {NAME: BLANK.read_text()})
    blank, door = read_submission("blank", BLANK).notebook, validate.read_regular

    def then_swapped(path, limit):  # the student's swap, just after the intake's door read the file
        assert Path(path) == work / NAME
        read = door(path, limit)
        (tmp_path / "link").symlink_to(REFERENCE)
        os.replace(tmp_path / "link", path)
        return read

    monkeypatch.setattr(validate, "read_regular", then_swapped)
    graded = read_submission("eve", work / NAME, RULES.notebook_bytes)
    assert graded.error == "" and graded.notebook == blank, graded.error


ROUTES_TABLE = "## How each route reads a submission's notebook"


def routes_table() -> list[dict[str, str]]:
    """docs/submission-path.md's table of the routes: one dict a route, by column header."""
    text = (ROOT / "docs" / "submission-path.md").read_text()
    rows = [[cell.strip() for cell in line.strip("|").split("|")]
            for line in text[text.index(ROUTES_TABLE):].splitlines() if line.startswith("| ")]
    return [dict(zip(rows[0], row)) for row in rows[1:]]


def make_probe(column: str, work: Path, data: str) -> str:
    """The notebook of one column of the routes table, made in `work`: the name it is given."""
    named = "Modules_and_SGD.IPYNB" if "IPYNB" in column else NAME
    if "symbolic" in column:
        (work / named).symlink_to(REFERENCE)
        return named
    (work / named).write_text(data + " " * (2048 * 1024) if "over" in column else data)
    if "hard link" in column:
        os.link(work / named, work.parent / f"{work.name}.bak")  # the instructor's cp -al, outside the folder
    return named


def graded_by_route(route: str, column: str, tmp_path: Path) -> str:
    """'graded' or 'refused': the route of the table's row `route` on the column's notebook, as the route runs."""
    rules, data = IntakeRules.of(GraderSettings(), NAME), REFERENCE.read_text()

    def by_the_intake(top: Path, parts: tuple[str, ...], rules: IntakeRules) -> str:
        intake = take_submission(top, parts, tmp_path / "staging", rules)
        return "graded" if intake.notebook and not submission_problem(intake.notebook, rules.notebook_bytes) else "refused"

    if route.startswith("an LMS download"):  # the upload as Canvas names it; a link is an archive entry's mode
        root = course(tmp_path)
        zipped = tmp_path / "upload"
        zipped.mkdir()
        named = make_probe(column, zipped, data)
        path = lms_zip(root, {})
        with zipfile.ZipFile(path, "w") as bundle:
            entry = zipfile.ZipInfo(f"carol_222_100_{named}", (2026, 11, 20, 9, 30, 0))
            if (zipped / named).is_symlink():
                entry.external_attr = (stat.S_IFLNK | 0o777) << 16
            bundle.writestr(entry, os.readlink(zipped / named) if (zipped / named).is_symlink()
                            else (zipped / named).read_bytes())
        collect(root)
        return by_the_intake(root / "submitted", ("carol_222", "dl01_6_3"), rules)
    work = folder(tmp_path, {})
    named = make_probe(column, work, data)
    if route.startswith("`python -m autograder grade PATH`"):
        return "refused" if read_submission(str(work / named), work / named, rules.notebook_bytes).error else "graded"
    inbound = "`linked_files` off" in route
    return by_the_intake(tmp_path / "submitted", ("eve", "a"), replace(rules, linked_files=False) if inbound else rules)


@pytest.mark.parametrize("column", ["`Modules_and_SGD.IPYNB`", "a second hard link", "a symbolic link",
                                    "over `notebook_kb`"])
def test_every_route_reads_a_notebook_as_docs_submission_path_says(tmp_path, column):
    """docs/submission-path.md's table of the routes, run: each route on the same notebook grades it or refuses it
    as the table says (pass 20: `grade PATH` refused a backup's second link that make grade and Gradescope read, and
    an LMS download did not collect the `.IPYNB` the intake grades)."""
    table = routes_table()
    assert len(table) == 4 and all(column in row for row in table), table
    for number, row in enumerate(table):
        if row[column] in ("graded", "refused"):  # else: the route cannot bring such a file (said in words)
            route = f"{row['route']} | {row['read through']}"
            assert graded_by_route(route, column, tmp_path / str(number)) == row[column], (row["route"], column)


def staged_as_make_grade_does(tmp_path: Path, rules: IntakeRules):
    """take_submission into .grading/intake/<student>/<assignment>: 6 bytes longer than submitted/ holds it."""
    return take_submission(tmp_path / "submitted", ("eve", "a"), tmp_path / ".grading" / "intake" / "eve" / "a", rules)


def test_a_folder_named_as_the_notebook_is_the_students_layout_not_the_machines_failure(tmp_path):
    """A student who zips the folder modules_and_sgd.ipynb/ (the notebook and a figure in it), and names that clash
    only on a disk that ignores case: the notebook is staged as modules_and_sgd.ipynb, so a file under a folder of
    that name (or two files of one name in any case) cannot be staged as it is. The student's names: a note, the
    notebook graded; never StagingFault (no score, and make grade stops: 'the grader failed on every submission')."""
    folder(tmp_path, {f"{NAME}/{NAME}": '"work"', f"{NAME}/plot.png": "png", "Modules_and_SGD.IPYNB/fig.png": "png",
                      "TIMESTAMP.TXT/a.png": "png", "Figs/a.png": "1", "figs/a.png": "2", "figs/b.png": "3"})
    intake = staged_as_make_grade_does(tmp_path, replace(RULES, extra_files=("*.png",)))
    assert intake.notebook.read_text() == '"work"', intake.reason
    assert intake.notes == [
        "not taken: 'Modules_and_SGD.IPYNB/fig.png' (its folder 'Modules_and_SGD.IPYNB' has the name of a file "
        "taken, in some case), 'TIMESTAMP.TXT/a.png' (its folder 'TIMESTAMP.TXT' has the name of a file taken, in "
        "some case), 'figs/a.png' (a file or folder taken has its name, in some case) and 1 more"]
    staged = tmp_path / ".grading" / "intake" / "eve" / "a"
    assert sorted(str(p.relative_to(staged)) for p in staged.rglob("*")) == ["Figs", "Figs/a.png", "figs",
                                                                              "figs/b.png", NAME]


@pytest.mark.parametrize("too_long", ["the file", "its folder"])
def test_a_path_that_fits_in_submitted_is_not_the_machines_failure_for_its_length(tmp_path, too_long):
    """.grading/intake/ is 6 bytes longer than submitted/: a data file of a 4,095-byte path (unzip, git and tar write
    it), or in a folder whose path passes 4,095 bytes only there, could not be staged. Any extra file's path is
    bounded (EXTRA_PATH_BYTES), so its length is the student's: a note, the notebook graded, never StagingFault (a
    blank) nor "its folder could not be read" (a zero)."""
    top = folder(tmp_path, {NAME: '"work"'})
    d = top / "data"
    d.mkdir()
    end = 4095 if too_long == "the file" else 4093  # the folder's own path, 4,093 bytes, passes 4,095 staged
    while end - len(os.fsencode(str(d))) > 300:
        d = d / ("d" * 200)
        d.mkdir()
    if too_long == "the file":
        (d / ("x" * (end - len(os.fsencode(str(d))) - 5) + ".csv")).write_text("1,2\n")
    else:
        d = d / ("d" * (end - len(os.fsencode(str(d))) - 1))
        d.mkdir()
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        os.close(os.open("a.csv", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
        os.close(fd)
    intake = staged_as_make_grade_does(tmp_path, replace(RULES, extra_files=("data/*.csv",)))
    assert intake.notebook.read_text() == '"work"', intake.reason
    [note] = intake.notes
    assert note.startswith("not taken: 'data/dddd") and note.endswith(
        "…' (its path is longer than 1,024 bytes)") and len(note) < 300, note


@pytest.mark.parametrize("failing", ["write", "read"])
def test_the_machine_failing_the_intake_is_the_graders_failure_never_the_students_reason(tmp_path, monkeypatch,
                                                                                          failing):
    """A full disk writing the kit's own copy (ENOSPC), or an I/O error reading a file the student's mode lets the
    grader read (EIO): the grader's failure (StagingFault: no score, graded again next run), never "not a
    readable notebook" (a zero, kept as "unchanged" once the disk is freed)."""
    folder(tmp_path, {NAME: REFERENCE.read_text()})
    opened = os.open

    def full_disk(path, flags, mode=0o777, *, dir_fd=None):
        if flags & os.O_CREAT and Path(path).name == NAME:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return opened(path, flags, mode, dir_fd=dir_fd)

    def io_error(fd, size):
        raise OSError(errno.EIO, "Input/output error")

    if failing == "write":
        monkeypatch.setattr(os, "open", full_disk)
    else:
        monkeypatch.setattr(os, "read", io_error)
    with pytest.raises(StagingFault, match="the machine's fault, not the file's") as fault:
        take(tmp_path)
    assert ("No space left on device" if failing == "write" else "Input/output error") in str(fault.value)


def lease_held(path: Path, owner: int | None = None) -> int:
    """A process of the file's owner (`owner`, else this one's user) holding a write lease on `path` (fcntl
    F_SETLEASE, F_WRLCK: any owner may) until it is killed; its pid."""
    import fcntl
    import signal

    holder = os.fork()
    if holder == 0:
        try:
            mine = os.open(path, os.O_WRONLY)  # opened first: pytest's tmp_path is closed to other users
            if owner is not None:
                os.setgid(owner)
                os.setuid(owner)
            signal.signal(signal.SIGIO, signal.SIG_IGN)  # the kernel's request to let go, ignored
            fcntl.fcntl(mine, fcntl.F_SETLEASE, fcntl.F_WRLCK)
            time.sleep(30)
        finally:
            os._exit(0)
    time.sleep(0.5)
    return holder


def let_go(holder: int) -> None:
    import signal

    os.kill(holder, signal.SIGKILL)
    os.waitpid(holder, 0)


def test_a_lease_the_student_holds_on_their_notebook_is_their_reason_not_the_machines_failure(tmp_path):
    """red-c7 C (pass 20): in nbgrader's exchange inbound the student owns their files, and a process of theirs
    may hold a write lease on one. The intake's open (O_NONBLOCK, so that a FIFO's never waits) then fails at once
    with EWOULDBLOCK: the student's reason, named, never StagingFault (logged as the grader's failure at every
    collect, for as long as they hold it)."""
    work = folder(tmp_path, {NAME: '{"mine": 1}'})
    holder = lease_held(work / NAME)
    try:
        intake = take(tmp_path, INBOUND)
    finally:
        let_go(holder)
    assert intake.notebook is None and intake.reason == (
        f"'{NAME}' is not a readable notebook (it could not be read (a program holds a lease on it: fcntl F_SETLEASE))")


@pytest.mark.parametrize("error", [errno.EIO, errno.EWOULDBLOCK])
def test_one_file_on_the_command_line_is_judged_by_the_intakes_rule_of_whose_failure(tmp_path, monkeypatch, error):
    """`python -m autograder grade PATH`, the pytest plugin and Gradescope's staged copy read one notebook file
    (validate.read_submission): an error reading it is the student's reason or the machine's failure by the
    intake's one rule (files.FILES_OWN), never every error a reason (an I/O error a zero written down as a grade)."""
    from autograder.intake.validate import read_submission

    (tmp_path / NAME).write_text(REFERENCE.read_text())

    def failing(fd, size):
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(os, "read", failing)
    if error == errno.EIO:
        with pytest.raises(StagingFault, match="Input/output error.*the machine's fault"):
            read_submission("eve", tmp_path / NAME)
    else:
        assert read_submission("eve", tmp_path / NAME).error == (
            f"'{NAME}' is not a readable notebook (it could not be read (a program holds a lease on it: fcntl "
            "F_SETLEASE))")


def test_links_fifos_and_devices_beside_the_notebook_are_named_and_never_opened(tmp_path):
    work = folder(tmp_path, {NAME: "{}"})
    for name, target in (("solution.ipynb.txt", REFERENCE), ("zero", "/dev/zero"), ("shadow", "/etc/shadow"),
                         ("gradebook.db", ROOT / "gradebook.db")):
        (work / name).symlink_to(target)
    os.mkfifo(work / "pipe")
    intake = take(tmp_path, IntakeRules(NAME, 2048 * 1024, extra_files=("*",)))
    assert [p.name for p in (tmp_path / "staging").iterdir()] == [NAME]
    assert intake.notes == ["not read: 'gradebook.db' (a symbolic link), 'pipe' (a FIFO), 'shadow' (a symbolic link) "
                            "and 2 more: only files are taken"]


def test_a_linked_folder_is_refused_and_hidden_folders_are_not_entered(tmp_path):
    (tmp_path / "submitted" / "eve").mkdir(parents=True)
    (tmp_path / "submitted" / "eve" / "a").symlink_to(ROOT / "solutions" / "dl01_6_3")
    intake = take(tmp_path)
    assert intake.notebook is None and "it is a symbolic link, not a folder" in intake.reason
    (tmp_path / "submitted" / "eve" / "a").unlink()
    work = folder(tmp_path, {".git/objects/x.ipynb": "{}", ".ipynb_checkpoints/modules_and_sgd-checkpoint.ipynb": "{}",
                             "__MACOSX/._x.ipynb": "{}"})
    (work / "linked").symlink_to(ROOT / "solutions" / "dl01_6_3")
    intake = take(tmp_path)
    assert intake.reason == f"no {NAME} in the submission: submit the notebook file itself, saved from Jupyter"


def test_a_time_stamp_that_is_not_a_file_leaves_the_student_not_graded(tmp_path):
    work = folder(tmp_path, {NAME: "{}"})
    (work / "timestamp.txt").symlink_to(ROOT / "nbgrader_config.py")
    assert "its timestamp.txt is not a plain file" in take(tmp_path).reason


def fingerprint(tmp_path: Path, rules: IntakeRules = RULES) -> str:
    from autograder.classroom.ledger import folder_fingerprint

    return folder_fingerprint(tmp_path / "submitted", ("eve", "a"), rules)


def test_whether_a_submission_changed_is_told_from_what_the_intake_reads_alone(tmp_path):
    """make grade regrades a student whose folder's fingerprint changed: it reads what the intake reads, within
    the intake's caps, so a terabyte-long sparse file beside the notebook (a 17 KB archive) costs nothing."""
    work = folder(tmp_path, {NAME: "{}", "timestamp.txt": "2026-11-20 12:00:00 UTC", "notes.txt": "a"})
    sparse(work / "huge.bin")
    sparse(work / "data" / "huge.csv")
    with within(5):
        before = fingerprint(tmp_path)
        (work / "notes.txt").write_text("b")  # the intake never reads it
        assert fingerprint(tmp_path) == before
        with_data = IntakeRules(NAME, 2048 * 1024, extra_files=("data/*.csv",))
        unread = fingerprint(tmp_path, with_data)
        os.truncate(work / "data" / "huge.csv", 1 << 30)  # read up to its cap: its size is what tells
        assert fingerprint(tmp_path, with_data) != unread
        for change in ("timestamp.txt", NAME):
            (work / change).write_text(f"changed {change}")
            assert fingerprint(tmp_path) != before, change
            before = fingerprint(tmp_path)
        (work / "more.ipynb").write_text("{}")  # a note names it: the page the student sees changes
        assert fingerprint(tmp_path) != before


def test_a_changed_notebook_is_never_hidden_behind_other_entries(tmp_path):
    work = folder(tmp_path, {NAME: "{}"})
    for index in range(10_001):  # each sorts before the notebook's name
        (work / f"a{index:05}.txt").touch()
    before = fingerprint(tmp_path)
    (work / NAME).write_text('{"changed": 1}')
    assert fingerprint(tmp_path) != before


def test_the_count_of_entries_is_bounded_and_hides_neither_the_notebook_nor_its_time_stamp(tmp_path):
    work = folder(tmp_path, {NAME: "{}", "timestamp.txt": "2026-11-20 12:00:00 UTC"})
    for index in range(200):  # a folder is read in the file system's order: these may come first
        (work / f"a{index:03}.txt").write_text("")
    intake = take(tmp_path, IntakeRules(NAME, 2048 * 1024, max_entries=10))
    assert intake.notebook is not None and (tmp_path / "staging" / "timestamp.txt").is_file()
    assert intake.notes == ["the folder holds more than 10 entries: the folder that passes that count was not "
                            "looked into, nor any after it (GraderSettings.submission_entries)"]


class Listing:
    """What os.scandir returns, with the entries in an order of the test's choosing."""

    def __init__(self, entries) -> None:
        self.entries = entries

    def __iter__(self):
        return iter(self.entries)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


def test_a_folder_over_the_entry_cap_is_read_the_same_whatever_order_the_disk_lists_it_in(tmp_path, monkeypatch):
    """A file system lists a folder in its own order (ext4: a hash seeded per disk; tmpfs: newest first), so the
    same folder copied to another machine lists otherwise: what the intake takes of it, and so its grade and its
    fingerprint, must not follow."""
    work = folder(tmp_path, {f"work/{NAME}": REFERENCE.read_text()})
    for index in range(20):
        (work / "work" / f"n{index:02}.txt").write_text("x")
    rules = IntakeRules(NAME, 2048 * 1024, max_entries=10)
    listed = os.scandir
    seen = []
    for backwards in (False, True):
        monkeypatch.setattr(os, "scandir", lambda path=".", backwards=backwards: Listing(
            sorted(listed(path), key=lambda entry: entry.name, reverse=backwards)))
        intake = take(tmp_path, rules)
        seen.append((intake.notebook is not None, intake.reason, fingerprint(tmp_path, rules=rules)))
    assert seen[0] == seen[1]
    assert seen[0][1] == (f"no {NAME} in the submission: submit the notebook file itself, saved from Jupyter (the "
                          "folder holds more than 10 entries: the folder that passes that count was not looked into, "
                          "nor any after it (GraderSettings.submission_entries))")


def test_a_file_or_folder_the_grader_cannot_read_is_said_so_not_called_what_it_is_not(tmp_path, monkeypatch):
    """A zip unpacked with mode 000 entries, a folder the grader's user may not enter: the open fails for want of
    permission, and the reason says that, never "it is a file, not a file" (nor "submit the notebook file itself",
    to a student who did)."""
    folder(tmp_path, {NAME: REFERENCE.read_text(), "data.csv": "1,2"})
    opened = os.open

    def denying(*names: str):  # the tests run as root, whom no mode stops: EACCES as the grader's user gets it
        def open_(path, flags, mode=0o777, *, dir_fd=None):
            if os.fsdecode(path) in names:
                raise PermissionError(13, "Permission denied")
            return opened(path, flags, mode, dir_fd=dir_fd)
        return open_

    before = fingerprint(tmp_path)
    monkeypatch.setattr(os, "open", denying(NAME, "data.csv"))
    intake = take(tmp_path, IntakeRules(NAME, 2048 * 1024, extra_files=("*.csv",)))
    assert intake.reason == f"'{NAME}' is not a readable notebook (it could not be read (Permission denied))"
    assert fingerprint(tmp_path) == fingerprint(tmp_path) != before  # the same while its mode stays
    monkeypatch.setattr(os, "open", denying("data.csv"))
    intake = take(tmp_path, IntakeRules(NAME, 2048 * 1024, extra_files=("*.csv",)))
    assert intake.notebook is not None and intake.notes == ["not taken: 'data.csv' (it could not be read: Permission denied)"]
    monkeypatch.setattr(os, "open", denying("a"))
    assert take(tmp_path).reason == "its folder could not be read (Permission denied)"


def test_one_rule_chooses_the_notebook_for_make_grade_and_gradescope():
    assert choose_notebook([], NAME) == (None, f"no {NAME} in the submission: submit the notebook file itself, "
                                               "saved from Jupyter")
    assert choose_notebook(["work/my work.ipynb"], NAME) == ("work/my work.ipynb",
                                                              f"graded 'work/my work.ipynb' as {NAME} (renamed)")
    assert choose_notebook(["work/my work.ipynb", f"work/{NAME}"], NAME) == (f"work/{NAME}", "")
    assert choose_notebook([f"work/{NAME}", NAME], NAME) == (NAME, "")  # the nearest of two under the name
    assert choose_notebook([NAME.upper(), NAME], NAME) == (NAME, "")  # of two as near, the one spelled so
    assert choose_notebook(["work/my work.ipynb", "b.ipynb"], NAME) == (
        None, f"no {NAME} in the submission (found 'b.ipynb', 'work/my work.ipynb'): submit one notebook under that name")


@pytest.mark.parametrize("typed", ["Modules_and_SGD.ipynb", "Modules_and_SGD.IPYNB"])
def test_the_notebook_graded_is_the_same_on_a_disk_that_ignores_case(tmp_path, monkeypatch, typed):
    """The work at the top as Modules_and_SGD.ipynb (Jupyter keeps the case typed; Windows tools and old zip tools
    write the extension as .IPYNB), an old draft in old/: Linux and a macOS or Windows course copy (simulated: the
    known names looked up and opened whatever their case, as APFS and NTFS do) grade the same file."""
    assert typed.casefold() == NAME
    folder(tmp_path, {typed: '"final"', f"old/{NAME}": '"draft"'})
    on_linux = take(tmp_path)
    assert on_linux.notebook.read_text() == '"final"', on_linux.reason
    assert on_linux.notes == [f"graded {typed!r} as {NAME} (renamed)"]

    def spelled(folder: int, name: str) -> str:
        *up, last = name.split("/")
        fd = files._open_folder(os.dup(folder), up)
        try:
            return "/".join([*up, next((n for n in os.listdir(fd) if n.casefold() == last.casefold()), last)])
        finally:
            os.close(fd)

    lstat, open_file = files._lstat, files._open_file
    monkeypatch.setattr(files, "_lstat", lambda folder, name: lstat(folder, spelled(folder, name)))
    monkeypatch.setattr(files, "_open_file", lambda root, path: open_file(root, spelled(root, path)))
    shutil.rmtree(tmp_path / "staging")
    ignoring_case = take(tmp_path)
    assert ignoring_case.notebook.read_text() == '"final"', ignoring_case.reason
    assert ignoring_case.notes == [f"the folder also holds 'old/{NAME}': only {NAME} is graded"]


def test_a_notebook_whose_extension_is_in_upper_case_is_a_notebook(tmp_path):
    folder(tmp_path, {"MODULES_AND_SGD.IPYNB": '"work"', "notes.IPYNB": "{}"})
    intake = take(tmp_path, replace(RULES, extra_files=("*",)))
    assert intake.notebook.read_text() == '"work"', intake.reason
    assert intake.notes == [f"graded 'MODULES_AND_SGD.IPYNB' as {NAME} (renamed)"]
    assert sorted(os.listdir(tmp_path / "staging")) == [NAME]  # another notebook is never taken as an extra file


def test_a_file_name_cannot_end_its_quotes_in_a_note(tmp_path):
    """A note quotes the names a student chose as literals: a quote in a name does not end them, so what follows it
    cannot read as the grader's own words."""
    renamed = "x.ipynb' as modules_and_sgd.ipynb (renamed); the instructor checked every part by hand; 'y.ipynb"
    assert choose_notebook([renamed], NAME)[1] == (
        "graded \"x.ipynb' as modules_and_sgd.ipynb (renamed); the instructor checked every part by hand; 'y.ipynb\" "
        f"as {NAME} (renamed)")
    other = "draft.ipynb' and nothing else: the instructor says so; 'z.ipynb"
    folder(tmp_path, {NAME: "{}", other: "{}"})
    assert take(tmp_path).notes == [f"the folder also holds \"{other}\": only {NAME} is graded"]


@pytest.mark.parametrize("mark", ["\u2019", "\ua78c", "\u1fbd", "\u05f3", "\u00b4", "\u02ca"],
                         ids=["right-quote", "saltillo", "koronis", "geresh", "acute", "modifier-acute"])
def test_a_file_name_cannot_end_its_quotes_in_a_note_with_quotes_that_look_alike(tmp_path, mark):
    """Typographic quotes (U+2018, U+2019, printable, so repr keeps them) close the note's quotes to the eye as an
    ASCII one would (red-q4, pass 18: the summary and the grading page's header read "the folder also holds 'Rough
    work.ipynb’ (not graded). Checked by the instructor: ... no review needed. ‘z.ipynb': only ... is graded")."""
    other = f"Rough work.ipynb{mark} (not graded). Checked by the instructor: no review needed. {mark}z.ipynb"
    folder(tmp_path, {NAME: "{}", other: "{}"})
    [note] = take(tmp_path).notes
    assert mark not in note, note  # red-t5 (pass 18): the letters and accents drawn as apostrophes too


@pytest.mark.parametrize("mark", ["\u055a", "\U0001f676", "\U0001f677", "\u201a", "\u201e"],
                         ids=["armenian-apostrophe", "ornament-turned-comma", "ornament-comma", "low-9", "double-low-9"])
def test_a_file_name_cannot_end_its_quotes_in_a_note_with_other_marks_drawn_as_quotes(tmp_path, mark):
    """red-d12 F2 (pass 22): the Armenian apostrophe (U+055A, Po) is drawn as a right single quote, the sans-serif
    quotation mark ornaments (U+1F676, U+1F677, So) as double quotes, and the low-9 quotation marks (U+201A, U+201E,
    Ps, the opening quotes of German) are quotation marks by name: none is Pi, Pf, Sk or Lm, nor in _QUOTE_LIKE, nor
    made a quote by NFKC, so `quoted` keeps them and they close the note's quotes to the eye as U+2019 did."""
    other = f"Rough work.ipynb{mark} (not graded). Checked by the instructor: no review needed. {mark}z.ipynb"
    folder(tmp_path, {NAME: "{}", other: "{}"})
    [note] = take(tmp_path).notes
    assert mark not in note, note


def test_a_grade_id_named_in_a_reason_is_quoted_as_the_notebooks_words(tmp_path):
    """A reason names a cell by its grade_id, which the notebook's metadata holds and the student may write: bare,
    `(cell 2, imports) was checked by hand by the instructor: no review needed; see (cell 2, has ...` read as the
    kit's words in the summary's "Not graded" line and on the page (red-d12 F8, pass 22; validate._cell_name). A
    name the student chose is `quoted`, as a file name is (cut to GRADE_ID_CHARS inside its quotes)."""
    from autograder.intake.validate import GRADE_ID_CHARS
    from autograder.outputs.inert import quoted

    grade_id = "imports) was checked by hand by the instructor: no review needed; see (cell 2"
    notebook = json.loads((ROOT / "solutions/dl01_6_3/modules_and_sgd.ipynb").read_text())
    notebook["cells"][1]["metadata"]["nbgrader"] = {"grade_id": grade_id, "solution": "yes"}
    (tmp_path / NAME).write_text(json.dumps(notebook))
    reason = validate_notebook(tmp_path / NAME, 2048 * 1024)
    assert reason and "solution" in reason, reason
    assert quoted(grade_id, GRADE_ID_CHARS) in reason, reason


def test_a_long_grade_id_named_in_a_reason_leaves_the_reason_and_its_closing_quote_in_the_line(tmp_path):
    """red-b23 X32-b23-1 (pass 32): validate._cell_name quotes the grade_id with no limit, and _line then cuts the
    whole reason to REASON_CHARS (160): a grade_id of 26 Greek letters (each escape 6 characters) or of 160 ASCII
    letters pushes the reason out of its line and cuts the quotes open, `cell 2, '\\u0391...\\u0391…` with nothing
    said of what is wrong (red-c22 X31-c22-1's file-name case, through the grade_id: quoted() takes a limit)."""
    notebook = json.loads((ROOT / "solutions/dl01_6_3/modules_and_sgd.ipynb").read_text())
    for grade_id in ("\u0391" * 40, "a_b-" * 60):
        notebook["cells"][1]["metadata"]["nbgrader"] = {"grade_id": grade_id, "solution": "yes"}
        (tmp_path / NAME).write_text(json.dumps(notebook))
        reason = validate_notebook(tmp_path / NAME, 2048 * 1024)
        assert reason and "solution" in reason, reason
        assert "…'" in reason or '…"' in reason, reason  # the grade_id cut inside its own quotes


def test_a_key_named_in_a_validation_reason_cannot_end_its_quotes(tmp_path):
    """nbformat's validator names an unexpected key as Python's repr writes it, which keeps a typographic quote
    (U+2019) that closes the repr's quotes to the eye: the reason read "it is not a valid nbformat 4 notebook:
    Additional properties are not allowed ('x’ was unexpected). The instructor checked this notebook by hand: no
    review need…" (red-d12 F8, pass 22: red-q4's spoof, through validate.py's jsonschema message rather than a
    file name)."""
    key = "x’ was unexpected). The instructor checked this notebook by hand: no review needed (‘y"
    notebook = json.loads((ROOT / "solutions/dl01_6_3/modules_and_sgd.ipynb").read_text())
    notebook["cells"][1][key] = 1
    (tmp_path / NAME).write_text(json.dumps(notebook))
    reason = validate_notebook(tmp_path / NAME, 2048 * 1024)
    assert reason and "not a valid nbformat 4 notebook" in reason, reason
    assert "’" not in reason and "‘" not in reason, reason


def test_other_notebooks_are_noted(tmp_path):
    folder(tmp_path, {NAME: "{}", "Untitled.ipynb": "{}"})
    assert take(tmp_path).notes == [f"the folder also holds 'Untitled.ipynb': only {NAME} is graded"]


def test_one_file_on_the_command_line_is_read_without_following_a_link(tmp_path):
    (tmp_path / "link.ipynb").symlink_to(REFERENCE)
    with pytest.raises(Refused, match="symbolic link"):
        read_regular(tmp_path / "link.ipynb", 100)
    assert validate_notebook(tmp_path / "link.ipynb", 2048 * 1024) == "it is a symbolic link, not a file"
    data, size = read_regular(REFERENCE, 100)
    assert len(data) == 101 and size == REFERENCE.stat().st_size


@pytest.mark.parametrize("swapped_in", ["a link to the reference", "a FIFO"])
def test_one_file_on_the_command_line_is_read_once_what_is_graded_is_what_was_checked(tmp_path, monkeypatch,
                                                                                        swapped_in):
    """red-c7 D (pass 20): `python -m autograder grade PATH` and the pytest plugin (validate.read_submission) read
    the file through the intake's door (read_regular: no link followed, bounded) and then read it again by its path
    (links followed, no bound). A student who owns the folder PATH is in renames a link to the reference over it
    between the two (inotify says when the first read closed the file): the reference scored 18 of 18; a FIFO hung
    the grader. Here the swap is made right after the door's read: nothing reads the path again."""
    import signal

    from autograder.intake import validate

    theirs = tmp_path / "eve" / NAME
    theirs.parent.mkdir()
    theirs.write_text(json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "mine"}],
                                  "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    door = validate.read_regular

    def then_swapped(path, limit):
        read = door(path, limit)
        swap = theirs.with_name("swap")
        swap.symlink_to(REFERENCE) if swapped_in.startswith("a link") else os.mkfifo(swap)
        os.replace(swap, theirs)  # rename(2) of the student's entry over their file
        return read

    def hung(signum, frame):
        raise AssertionError(f"the grader read the path again and waits on {swapped_in}")

    monkeypatch.setattr(validate, "read_regular", then_swapped)
    signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    try:
        submission = validate.read_submission(str(theirs), theirs, 2048 * 1024)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    assert not submission.error, submission.error
    assert ["".join(cell["source"]) for cell in submission.notebook["cells"]] == ["mine"], (
        f"what was graded is what the path named after the check: {len(submission.notebook['cells'])} cells")


@pytest.mark.slow
def test_the_formgrader_autograde_button_reads_the_intakes_copy(tmp_path, monkeypatch):
    """Stock nbgrader's autograde, which the formgrader's button runs, reads submitted/ itself: it follows a link
    and copies every file beside the notebook into autograded/ (and on to feedback/). formgrader_guard routes
    the button through the kit's regrade, so the button reads the intake's copy as `make grade` does."""
    import jinja2
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.server_extensions.formgrader import base

    from autograder.nbgrader_glue.formgrader_guard import guard
    from conftest import ASSIGNMENT, course_copy

    course = course_copy(tmp_path)
    work = course / "submitted" / "eve" / ASSIGNMENT.name
    work.mkdir(parents=True)
    (work / NAME).write_bytes((ROOT / "release" / ASSIGNMENT.name / NAME).read_bytes())
    (work / "answers.txt").symlink_to(course / "solutions" / ASSIGNMENT.name / NAME)
    (work / "notes.txt").write_text("a file beside the notebook")
    stock = base.NbGraderAPI
    monkeypatch.setattr(base, "NbGraderAPI", stock)  # put back after the test
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # as in a server
    assert guard({"nbgrader_jinja2_env": jinja2.Environment(), "nbgrader_exporter": object()})
    api = base.NbGraderAPI(CourseDirectory(root=str(course)))
    result = api.autograde(ASSIGNMENT.name, "eve")
    assert result["success"], result
    autograded = course / "autograded" / "eve" / ASSIGNMENT.name
    assert (autograded / NAME).is_file(), result["log"]
    assert not {"answers.txt", "notes.txt"} & {p.name for p in autograded.iterdir()}, sorted(autograded.iterdir())
    assert "not read: 'answers.txt' (a symbolic link)" in result["log"], result["log"]
    # the control: nbgrader's own button, on the gradebook the kit's regrade set up, copies both. In a fresh
    # interpreter, as a formgrader server is: this one has run other tests' nbgrader applications.
    control = ("import sys; from nbgrader.coursedir import CourseDirectory; "
               "from nbgrader.server_extensions.formgrader.base import NbGraderAPI; "
               "api = NbGraderAPI(CourseDirectory(root=sys.argv[1])); "
               "sys.exit(0 if api.autograde(sys.argv[2], 'eve')['success'] else 1)")
    stock_run = subprocess.run([sys.executable, "-c", control, str(course), ASSIGNMENT.name], cwd=course,
                               capture_output=True, text=True, timeout=300)
    assert stock_run.returncode == 0, stock_run.stderr[-3000:]
    assert {"answers.txt", "notes.txt"} <= {p.name for p in autograded.iterdir()}


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="a folder another user owns is made with chown, as root")
def test_nbgraders_exchange_collect_copies_through_the_intake(tmp_path, monkeypatch):
    """nbgrader's exchange collect copies an inbound folder with shutil.copytree, following a student's link to
    the course's reference into submitted/ as a real file, and only warns when a folder's owner is not the
    student its name claims; nbgrader_config.py makes it the kit's IntakeExchangeCollect, which takes nothing the
    intake would not, and nothing from a folder another user owns."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from autograder.settings import load_config
    from conftest import ASSIGNMENT, course_copy

    course = course_copy(tmp_path / "course")
    inbound = tmp_path / "exchange" / "dl01" / "inbound" / f"eve+{ASSIGNMENT.name}+2026-11-20 12:00:00.000000 UTC"
    inbound.mkdir(parents=True)
    (inbound / NAME).symlink_to(course / "solutions" / ASSIGNMENT.name / NAME)
    (inbound / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC")
    (inbound / "notes.txt").write_text("a file beside the notebook")
    posing = inbound.with_name(f"ada+{ASSIGNMENT.name}+2026-11-21 12:00:00.000000 UTC")  # another uid's, as ada
    posing.mkdir()
    (posing / NAME).write_text("{}")
    os.chown(posing, 1234567, 1234567)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # alembic
    config = load_config(course)
    config.Exchange.root = str(tmp_path / "exchange")
    api = NbGraderAPI(CourseDirectory(config=config, root=str(course)), config=config)
    result = api.collect(ASSIGNMENT.name)
    assert result["success"], result
    collected = course / "submitted" / "eve" / ASSIGNMENT.name
    assert not list(collected.iterdir()), result["log"]
    assert "is a symbolic link" in result["log"], result["log"]
    assert not (course / "submitted" / "ada" / ASSIGNMENT.name).exists(), result["log"]
    # the control: nbgrader's own collect copies the reference's text as eve's notebook, and the file beside it
    config.ExchangeFactory.collect = "nbgrader.exchange.default.collect.ExchangeCollect"
    stock = NbGraderAPI(CourseDirectory(config=config, root=str(course)), config=config)
    shutil.rmtree(collected)
    assert stock.collect(ASSIGNMENT.name)["success"]
    assert (collected / NAME).read_bytes() == (course / "solutions" / ASSIGNMENT.name / NAME).read_bytes()
    assert (collected / "notes.txt").is_file() and not (collected / NAME).is_symlink()


# ------------------------------------------------------------------------ nbgrader's exchange: whose folder it is

STUDENT = "nobody"  # a user on every machine: the exchange takes a student id for a user name
NOBODY = 65534
ATTACKER = 1234567  # a classmate's uid


def exchange(tmp_path: Path, monkeypatch):
    """A course with nbgrader's exchange in tmp_path, and the formgrader's Collect button on it (the kit's
    IntakeExchangeCollect, nbgrader_config.py): a function that collects and returns nbgrader's result."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from autograder.settings import load_config
    from conftest import ASSIGNMENT, course_copy

    course = course_copy(tmp_path / "course")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # alembic
    config = load_config(course)
    config.Exchange.root = str(tmp_path / "exchange")
    api = NbGraderAPI(CourseDirectory(config=config, root=str(course)), config=config)
    return course / "submitted" / STUDENT / ASSIGNMENT.name, lambda: api.collect(ASSIGNMENT.name)


def inbound(tmp_path: Path, when: str, owner: int, notebook: str, student: str = STUDENT) -> Path:
    """A folder of nbgrader's inbound, as `nbgrader submit` makes it: `<student>+<assignment>+<time>+<random>`."""
    from conftest import ASSIGNMENT

    folder = tmp_path / "exchange" / "dl01" / "inbound" / f"{student}+{ASSIGNMENT.name}+{when}+{abs(hash(notebook))}"
    folder.mkdir(parents=True)
    (folder / NAME).write_text(notebook)
    (folder / "timestamp.txt").write_text(when)
    for path in (folder, folder / NAME, folder / "timestamp.txt"):
        os.chown(path, owner, owner)
    return folder


AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="folders other users own are made with chown, as root")
SUBMITTED = "2026-11-20 12:00:00.000000 UTC"
LATER = "2026-11-21 12:00:00.000000 UTC"


@pytest.mark.slow
@AS_ROOT
def test_a_newer_folder_in_a_classmates_name_never_costs_them_their_collected_work(tmp_path, monkeypatch):
    """nbgrader's inbound lets any user make a folder in a classmate's name; nbgrader takes the newest by its
    name and removes the classmate's collected copy before copying. The kit chooses among the folders the
    student's uid owns."""
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    assert (collected / NAME).read_text() == '{"mine": 1}'
    inbound(tmp_path, LATER, ATTACKER, '{"posing": 1}')
    result = collect()
    assert result["success"], result
    assert (collected / NAME).read_text() == '{"mine": 1}', result["log"]
    assert f"not collected: it is owned by uid {ATTACKER}, not by {STUDENT}" in result["log"], result["log"]
    inbound(tmp_path, "2026-11-22 12:00:00.000000 UTC", NOBODY, '{"mine": 2}')  # the student's own, later
    assert collect()["success"]
    assert (collected / NAME).read_text() == '{"mine": 2}'


@pytest.mark.slow
@AS_ROOT
def test_collected_work_is_replaced_only_by_a_folder_the_intake_read(tmp_path, monkeypatch):
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    newer = inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    linked = newer.with_name(newer.name + "x")
    linked.symlink_to(tmp_path)  # the student's own, but no folder the intake reads
    os.lchown(linked, NOBODY, NOBODY)
    shutil.rmtree(newer)
    result = collect()
    assert result["success"], result
    assert (collected / NAME).read_text() == '{"mine": 1}', result["log"]
    assert f"not collected: it could not be read; submitted/{STUDENT} is kept" in result["log"], result["log"]


@pytest.mark.slow
@AS_ROOT
def test_a_full_disk_during_a_collect_keeps_the_collected_work(tmp_path, monkeypatch):
    """A newer inbound folder whose notebook the kit cannot copy for a machine fault (ENOSPC writing its copy):
    submitted/<student>/<assignment> stays whole (never a folder without a notebook, a zero), and the log names
    the grader's failure."""
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    opened = os.open

    def full_disk(path, flags, mode=0o777, *, dir_fd=None):
        if flags & os.O_CREAT and Path(path).name == NAME:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return opened(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", full_disk)
    result = collect()
    assert (collected / NAME).read_text() == '{"mine": 1}', result["log"]
    assert "not collected, the grader's failure" in result["log"] and "No space left on device" in result["log"]
    assert f"submitted/{STUDENT} is kept" in result["log"], result["log"]
    assert not list(collected.parent.glob(".*collecting"))


@pytest.mark.slow
@AS_ROOT
def test_two_collects_at_once_never_leave_the_student_without_their_folder(tmp_path, monkeypatch):
    """red-e8: `nbgrader collect` in a terminal while the formgrader's Collect button runs (or the LMS collection's
    _write_folder, which empties the same path first): both stage a student's copy at the one path staging_for
    gives, outside submitted/'s lock. The second to put it in place finds its staged folder gone (the first renamed
    it in), and put_in_place has already moved the student's folder aside: submitted/<student>/<assignment> is
    gone (left as a hidden .previous), so no later make grade lists the student."""
    from autograder.nbgrader_glue import exchange_collect

    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    staged, other = exchange_collect.take_submission, []

    def meanwhile(*args, **kwargs):  # the other collect runs whole while this one has staged its copy
        intake = staged(*args, **kwargs)
        if not other:
            other.append(None)
            other[0] = collect()
        return intake

    monkeypatch.setattr(exchange_collect, "take_submission", meanwhile)
    result = collect()
    assert other[0]["success"], other
    assert collected.is_dir(), (sorted(os.listdir(collected.parent)), result.get("error", "")[-300:], result["log"])
    assert (collected / NAME).read_text() == '{"mine": 2}', result["log"]


@pytest.mark.slow
@AS_ROOT
def test_a_collect_never_puts_an_older_copy_over_the_one_another_collect_put_meanwhile(tmp_path, monkeypatch):
    """E8-1's other interleaving: while this collect copies the student's folder of LATER, the student submits again
    and another collect takes that newer folder. nbgrader's rule (update: only a newer folder replaces) is asked
    again under submitted/'s lock before the copy is put in place, so the older copy never replaces the newer."""
    from autograder.nbgrader_glue import exchange_collect

    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    staged, other = exchange_collect.take_submission, []

    def meanwhile(*args, **kwargs):
        intake = staged(*args, **kwargs)
        if not other:
            other.append(None)
            inbound(tmp_path, "2026-11-22 12:00:00.000000 UTC", NOBODY, '{"mine": 3}')
            other[0] = collect()
        return intake

    monkeypatch.setattr(exchange_collect, "take_submission", meanwhile)
    result = collect()
    assert other[0]["success"] and result["success"], (other, result)
    assert (collected / NAME).read_text() == '{"mine": 3}', result["log"]
    assert sorted(os.listdir(collected.parent)) == [collected.name]


@pytest.mark.slow
@AS_ROOT
def test_a_name_without_a_time_is_one_line_not_the_end_of_the_collect(tmp_path, monkeypatch):
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    odd = inbound(tmp_path, "yesterday", ATTACKER, "{}", student="ada")
    result = collect()
    assert result["success"], result
    assert (collected / NAME).read_text() == '{"mine": 1}'
    assert f"{odd.name}: not collected: its name holds no time nbgrader reads" in result["log"], result["log"]


@pytest.mark.slow
@AS_ROOT
def test_names_and_time_stamps_from_the_exchange_reach_the_log_as_escapes(tmp_path, monkeypatch):
    """Any user may name a folder in inbound, and a student writes their own timestamp.txt: the log (the
    instructor's terminal under `nbgrader collect`) shows each with its controls as escapes, never retitling,
    clearing or recolouring the terminal, nor starting a line that reads as the kit's own."""
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    (collected / "timestamp.txt").write_text("\x1b[2Jnot-a-time")
    inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    inbound(tmp_path, "\x1b]0;owned\x07\x1b[1;31mGRADES DELETED\nada+dl01_6_3+x", ATTACKER, "{}", student="ada")
    result = collect()
    assert result["success"], result
    assert "\x1b" not in result["log"] and "\x07" not in result["log"], result["log"]
    assert "\\x1b]0;owned\\x07\\x1b[1;31mGRADES DELETED\\nada+dl01_6_3+x" in result["log"], result["log"]
    assert "\\x1b[2Jnot-a-time" in result["log"], result["log"]


@pytest.mark.slow
@AS_ROOT
@pytest.mark.parametrize("stamp", [
    lambda p: p.mkdir(),
    lambda p: p.write_bytes(b"\xff\xfe\x00binary"),
    lambda p: p.write_text("not a time"),
], ids=["a folder", "binary", "not a time"])
def test_a_collected_time_stamp_that_is_not_one_never_stops_the_next_collect(tmp_path, monkeypatch, stamp):
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    (collected / "timestamp.txt").unlink()
    stamp(collected / "timestamp.txt")
    inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    result = collect()
    assert result["success"], result
    assert "timestamp.txt: holds no time nbgrader reads" in result["log"], result["log"]
    # A timestamp.txt changed in the collected folder is an edit, which every collection keeps (intake/collected.py);
    # a folder in its place is the file removed (the keep rule reads files, at any depth, as the intake's walk does)
    assert (collected / NAME).read_text() == '{"mine": 1}'
    assert any(f"submitted/nobody is kept: {why} after it was collected" in result["log"]
               for why in ("its timestamp.txt changed", "timestamp.txt was removed from it")), result["log"]


@pytest.mark.slow
@AS_ROOT
def test_a_students_lease_on_their_inbound_notebook_is_their_reason_in_the_collect_log(tmp_path, monkeypatch):
    """red-c7 C (pass 20), end to end, as the student (uid 65534, owner of their inbound folder, not root): their
    process holds a write lease on their newer inbound notebook while the instructor presses Collect. The log gives
    their reason, as for any notebook of theirs the intake cannot read, never "not collected, the grader's failure
    ... collect again once it is fixed" at every Collect while they hold it."""
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    newer = inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    holder = lease_held(newer / NAME, NOBODY)
    try:
        log = collect()["log"]
    finally:
        let_go(holder)
    assert "the grader's failure" not in log, log[-600:]
    assert "(it could not be read (a program holds a lease on it: fcntl F_SETLEASE))" in log, log[-600:]


@pytest.mark.slow
@AS_ROOT
def test_the_exchanges_collect_never_undoes_the_instructors_edit_of_a_collected_folder(tmp_path, monkeypatch):
    """red-i9 (pass 20). docs/instructors.md, "Your edits in `submitted/` stay": a collection (the exchange's Collect
    is one) replaces a student's folder only while it holds what a collection wrote there. The exchange's Collect asks
    only nbgrader's rule (update: a newer inbound folder replaces), so the student's next `nbgrader submit` and the
    formgrader's Collect button undo the instructor's hand fix of the collected notebook without a word."""
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    (collected / NAME).write_text('{"mine": 1, "fixed by the instructor": 1}')  # the hand fix the docs say stays
    inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    result = collect()
    assert (collected / NAME).read_text() == '{"mine": 1, "fixed by the instructor": 1}', result["log"]
    assert f"submitted/nobody is kept: its {NAME} changed after it was collected" in result["log"], result["log"]


@pytest.mark.slow
@AS_ROOT
def test_a_folder_the_instructor_put_in_inbound_for_a_classmate_is_never_collected_as_anothers(tmp_path, monkeypatch):
    """red-i9 (pass 20). A root-owned folder of inbound is taken as any student's (exchange_collect._owned: "or by
    root, the instructor put it there"). inbound is 2733 without the sticky bit, so the student `nobody` may rename
    the folder the instructor put there for Ada (a late submission sent by mail) into their own name: the Collect
    takes Ada's work as nobody's, and nobody's feedback shows it (checked: uid 65534 renames a root-owned folder in
    a 2733 folder with mv)."""
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    adas = inbound(tmp_path, SUBMITTED, 0, '{"ada": 1}', student="ada")  # the instructor's, as root
    adas.rename(adas.with_name(adas.name.replace("ada+", f"{STUDENT}+", 1).replace(SUBMITTED, LATER)))  # nobody's mv
    result = collect()
    assert (collected / NAME).read_text() == '{"mine": 1}', result["log"]


@pytest.mark.slow
@AS_ROOT
def test_a_folder_the_instructor_put_in_inbound_is_collected_for_a_student_who_is_no_user(tmp_path, monkeypatch):
    """The other half of the owner rule: a student id that names no user on the machine (an exchange whose students
    are not the hub's users, a late submission the instructor put there by hand) has no uid to own a folder, so root's
    folder is theirs; for a student who is a user (the test above) it never is."""
    collected, collect = exchange(tmp_path, monkeypatch)
    assert not any(user.pw_name == "ada" for user in pwd.getpwall())
    inbound(tmp_path, SUBMITTED, 0, '{"ada": 1}', student="ada")  # the instructor's, as root
    result = collect()
    assert (collected.parent.parent / "ada" / collected.name / NAME).read_text() == '{"ada": 1}', result["log"]


@pytest.mark.slow
@AS_ROOT
def test_the_exchanges_collect_keeps_an_extension_written_in_a_collected_time_stamp(tmp_path, monkeypatch):
    """The instructor's extension (a timestamp.txt rewritten in submitted/) is an edit as a hand fix is: the student's
    next submission, newer by its inbound name, never replaces it; a folder holding only what the Collect wrote is."""
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    assert collect()["success"] and (collected / NAME).read_text() == '{"mine": 2}'  # what it wrote: replaced
    (collected / "timestamp.txt").write_text("2026-11-20 00:00:00.000000 UTC")  # an extension
    inbound(tmp_path, "2026-11-22 12:00:00.000000 UTC", NOBODY, '{"mine": 3}')
    result = collect()
    assert (collected / NAME).read_text() == '{"mine": 2}', result["log"]
    assert "submitted/nobody is kept: its timestamp.txt changed after it was collected" in result["log"], result["log"]


@pytest.mark.slow
@AS_ROOT
def test_a_folder_collected_before_the_collections_kept_records_stays_and_the_log_says_how_to_take_the_new_one(
        tmp_path, monkeypatch):
    """A course that upgrades the kit mid-term has folders the exchange's Collect wrote with no record of it. On disk
    they are what a copy the instructor put there by hand is (red-k10 K2: work sent by mail, which a student's next
    inbound folder replaced when nbgrader's rule alone decided for a student no record names), so the folder stays,
    as the LMS collection keeps it: hand work is never undone, and the one line names the student and says how to
    take the newer submission instead (before pass 21 it was replaced)."""
    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    records = list(collected.parents[2].glob("downloaded/*/exchange-collected.json"))
    assert records
    for record in records:
        record.unlink()  # as a kit before the record left it
    inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    result = collect()
    assert (collected / NAME).read_text() == '{"mine": 1}', result["log"]
    assert ("not collected: submitted/nobody is kept: no collection records writing it (your copy, or one a kit "
            "before the records collected): delete the folder to collect the new submission") in result["log"]
    shutil.rmtree(collected)  # as the line says
    result = collect()
    assert (collected / NAME).read_text() == '{"mine": 2}', result["log"]


@pytest.mark.slow
@AS_ROOT
def test_a_file_the_instructor_adds_in_a_collected_subfolder_keeps_the_folder(tmp_path, monkeypatch):
    """red-k10 K1 (pass 21). docs/instructors.md, "Your edits in `submitted/` stay": "a file you added or removed ...
    keeps the whole folder as it is". The exchange's Collect stages the files submission_files names where the
    student's folder holds them (`data/points.csv` stays in data/), but the keep rule (collected.held) reads only the
    folder's top level, and a subfolder's digest is the same whatever it holds ("refused: ... a folder"). So the
    instructor's file added in data/ (or a fix of data/points.csv) is no edit to it: the student's next submission
    replaces the folder and the instructor's file is gone, without a word in the log."""
    import autograder.settings as settings

    real = settings.load_config

    def with_data(course):
        config = real(course)
        config.GraderSettings.submission_files = ["*.csv"]  # fnmatch's * spans "/": data/points.csv is taken
        return config

    monkeypatch.setattr(settings, "load_config", with_data)
    collected, collect = exchange(tmp_path, monkeypatch)
    for when, points in ((SUBMITTED, "1,2\n"), (LATER, "3,4\n")):
        folder = inbound(tmp_path, when, NOBODY, '{"mine": 1}' if when == SUBMITTED else '{"mine": 2}')
        (folder / "data").mkdir()
        (folder / "data" / "points.csv").write_text(points)
        for path in (folder / "data", folder / "data" / "points.csv"):
            os.chown(path, NOBODY, NOBODY)
        if when == SUBMITTED:
            assert collect()["success"]
            assert (collected / "data" / "points.csv").read_text() == "1,2\n"
            (collected / "data" / "weights.csv").write_text("sent by mail\n")  # the instructor adds what was missing
    result = collect()
    assert (collected / "data" / "weights.csv").is_file(), result["log"]
    assert (collected / NAME).read_text() == '{"mine": 1}', result["log"]


@pytest.mark.slow
@AS_ROOT
def test_a_folder_the_instructor_put_in_submitted_for_a_student_never_collected_stays(tmp_path, monkeypatch):
    """red-k10 K2 (pass 21). One keep rule for both collections (intake/collected.py): the LMS's keeps a folder no
    record names ("put there by hand"), but the exchange's Collect takes a student neither record names for one a
    kit before the records collected (exchange_collect._stays: nbgrader's rule alone), and nbgrader's rule replaces a
    folder without a timestamp.txt by any inbound folder. So the copy the instructor put in submitted/ for a student
    whose work came by mail (no collection ever wrote it) is replaced by whatever the student drops in inbound next,
    at any time, and the log says only "Collecting submission"."""
    collected, collect = exchange(tmp_path, monkeypatch)
    collected.mkdir(parents=True)
    (collected / NAME).write_text('{"by mail, entered by the instructor": 1}')
    inbound(tmp_path, LATER, NOBODY, '{"blank": 1}')
    result = collect()
    assert (collected / NAME).read_text() == '{"by mail, entered by the instructor": 1}', result["log"]
    assert "submitted/nobody is kept" in result["log"], result["log"]


@pytest.mark.slow
@AS_ROOT
def test_an_lms_copy_never_replaces_a_folder_whose_collected_subfolder_the_instructor_changed(tmp_path, monkeypatch):
    """red-k10 K1, the LMS's side: the LMS collection replaces a folder that holds exactly what the exchange's Collect
    records writing (collected.kept_because's `others`), and the record holds data/ as one constant digest, so the
    file the instructor added in data/ is gone with the folder when the LMS copy is written."""
    import autograder.settings as settings

    real = settings.load_config

    def with_data(course):
        config = real(course)
        config.GraderSettings.submission_files = ["*.csv"]
        return config

    monkeypatch.setattr(settings, "load_config", with_data)
    collected, collect_exchange = exchange(tmp_path, monkeypatch)
    folder = inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    (folder / "data").mkdir()
    (folder / "data" / "points.csv").write_text("1,2\n")
    for path in (folder / "data", folder / "data" / "points.csv"):
        os.chown(path, NOBODY, NOBODY)
    assert collect_exchange()["success"]
    (collected / "data" / "weights.csv").write_text("sent by mail\n")  # the instructor's
    root = collected.parents[2]
    lms_zip(root, {f"{STUDENT}_upload_{NAME}": b'{"lms": 1}'})
    lines = collect(root)
    assert (collected / "data" / "weights.csv").is_file(), (sorted(p.name for p in collected.iterdir()), lines)


@pytest.mark.slow
@AS_ROOT
def test_an_instructors_fix_past_notebook_kb_of_a_collected_data_file_keeps_the_folder(tmp_path, monkeypatch):
    """red-k10 K3 (pass 21). collected.held digests every file of a folder by its first notebook_kb (+1) bytes, also
    the files submission_files names, which grading takes up to submission_file_kb. With data files larger than the
    notebook may be (submission_file_kb = 4096, notebook_kb's 2048), the instructor's fix of a collected data file's
    end is no edit to the keep rule, and the student's next submission replaces it."""
    import autograder.settings as settings

    real = settings.load_config

    def with_data(course):
        config = real(course)
        config.GraderSettings.submission_files = ["*.csv"]
        config.GraderSettings.submission_file_kb = 4096
        return config

    monkeypatch.setattr(settings, "load_config", with_data)
    collected, collect = exchange(tmp_path, monkeypatch)
    rows = "1,2\n" * (768 * 1024)  # 3 MB
    for when, notebook in ((SUBMITTED, '{"mine": 1}'), (LATER, '{"mine": 2}')):
        folder = inbound(tmp_path, when, NOBODY, notebook)
        (folder / "points.csv").write_text(rows)
        os.chown(folder / "points.csv", NOBODY, NOBODY)
        if when == SUBMITTED:
            assert collect()["success"]
            assert (collected / "points.csv").stat().st_size == len(rows)
            with (collected / "points.csv").open("a") as data:
                data.write("the instructor's fixed last row\n")
    result = collect()
    assert (collected / "points.csv").read_text().endswith("the instructor's fixed last row\n"), result["log"]


def test_a_collected_folder_past_the_walks_cap_is_never_taken_for_what_a_collection_wrote(tmp_path, monkeypatch):
    """The keep rule reads a folder as the intake's walk does, within a bound (collected.held: the larger of
    submission_entries and HELD_ENTRIES): a folder of more entries than that, which the instructor added beside what
    a collection wrote, is an edit, though the walk stops before its files (else the folder would hold, as far as
    the walk saw, exactly what was written)."""
    from autograder.intake import collected
    from autograder.intake.collected import held, kept_because

    monkeypatch.setattr(collected, "HELD_ENTRIES", 5)
    rules = IntakeRules(NAME, 1 << 20, max_entries=5)
    folder = tmp_path / "collected"
    folder.mkdir()
    (folder / NAME).write_text('{"mine": 1}')
    written = held(folder, rules)
    (folder / "extra").mkdir()
    for n in range(10):
        (folder / "extra" / f"{n}.csv").write_text(f"{n}\n")
    assert kept_because(folder, held(folder, rules), written, []) == (
        "it holds more than 5 entries, more than a collection writes (put there by hand)")


def test_the_keep_rules_digest_is_of_a_whole_file_and_of_a_longer_ones_size(tmp_path):
    """collected.digest: the SHA-256 of a whole file (as the last kit recorded one up to notebook_kb: its records still
    match); a file longer than any a collection writes (put there by hand, maybe a terabyte-long sparse one, never
    read whole) is read up to the cap and a byte, and its size tells it from another that starts as it does."""
    import hashlib

    from autograder.intake.collected import digest

    whole = tmp_path / "whole"
    whole.write_bytes(b"1,2\n" * 4)
    assert digest(whole, 16) == hashlib.sha256(b"1,2\n" * 4).hexdigest()
    longer, longest = tmp_path / "longer", tmp_path / "longest"
    longer.write_bytes(b"1,2\n" * 8)
    longest.write_bytes(b"1,2\n" * 8 + b"the instructor's last row\n")
    assert digest(longer, 16) != digest(longest, 16)


@pytest.mark.slow
@AS_ROOT
def test_the_exchanges_collect_takes_a_real_students_work_over_the_demo_folder_of_their_id(tmp_path, monkeypatch):
    """red-c12 R2 (the exchange's side): `make grade` on a fresh course wrote the demo class (ada: the reference);
    then the class submits through nbgrader's exchange, and a student's id is `ada` (here an id that names no user,
    so the instructor's root-owned folder is theirs, as the test above). The demo folder is the kit's own, on its
    record (.demo-class.json): it gives way to the real submission, never keeps it out as "no collection records
    writing it" while the reference is graded as ada's."""
    from autograder.assignment import find_assignment
    from autograder.classroom.lifecycle import write_demo
    from conftest import ASSIGNMENT

    collected, collect = exchange(tmp_path, monkeypatch)
    course = collected.parent.parent.parent
    assert "ada" in write_demo(find_assignment(course, ASSIGNMENT.name), course / "submitted")
    # later than the demo's own timestamp.txt (demo.TIMESTAMP), which an earlier one is not collected over at all
    inbound(tmp_path, LATER, 0, '{"ada": 1}', student="ada")
    result = collect()
    assert (course / "submitted" / "ada" / ASSIGNMENT.name / NAME).read_text() == '{"ada": 1}', result["log"]
