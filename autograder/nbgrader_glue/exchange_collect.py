"""IntakeExchangeCollect: nbgrader's exchange collect (the formgrader's Collect button, `nbgrader collect`), through
the one intake.

The kit collects from submitted/ and LMS downloads, never through nbgrader's exchange; but a course on a hub
may have one, and its collect copies each student's inbound folder with shutil.copytree as the instructor:
a link the student put there (to the course's solutions/, to gradebook.db) is followed and lands in submitted/
as a real file, which nothing after it can tell from the student's work, and a FIFO stops the copy. Here each
inbound folder is copied by `take_submission` (autograder/intake/files.py), as make grade reads submitted/:
no link followed, regular files only, bounded, the notebook, timestamp.txt and the files
GraderSettings.submission_files names. A folder without a notebook it takes is logged with the intake's
reason, and its student's folder in submitted/ holds what was taken (make grade then says why it grades
nothing there).

Whose folder it is. nbgrader's inbound folder is mode 2733 without the sticky bit: any user may make a folder
there in a classmate's name (`<student>+<assignment>+<time>+<random>`), or rename one away. nbgrader picks each
student's newest folder by the name alone (it only warns when the owner differs: "cheating attempt?"), and
removes the student's collected copy before copying. Here, with c.ExchangeCollect.check_owner on (nbgrader's default),
a student's folder is chosen among those owned by the uid of the user named as the student (the exchange's own
rule: a student id is a user name), or, for an id that names no user on the machine, by root (the instructor put it
there; for a student who is a user it never counts, since inbound has no sticky bit and any student may rename a
root-owned folder into their own name); the owner is checked again on the
descriptor the intake read, in case the folder was swapped meanwhile. With check_owner off (an exchange without
per-student uids) the name is the only identity there is, and the newest folder in a student's name is taken as
nbgrader takes it. Either way submitted/<student>/<assignment> is replaced only while it holds what a collection
wrote there (the instructor's edit stays: intake/collected.py, whose record this collect keeps too), and only once
the intake has read the new folder (Intake.read), from a copy made beside it in a folder of this collect's own, and nbgrader's rule is
asked again under submitted/'s lock before it is put in place (a collect run meanwhile may have put a newer one
there: submitted_folders.py); when the machine fails the copy (a full disk:
intake.files.StagingFault) the collected folder stays as it was and the log names the grader's failure. An inbound name whose time does not parse, and a
collected timestamp.txt that cannot be read as one, are each one line of the log, never the end of the collect.
Every name and time stamp the log shows is the student's (any user may name a folder in inbound): it is written
with its controls as escapes (outputs/inert.py), so that it can neither act on the instructor's terminal nor
start a line of its own.
"""
from __future__ import annotations

import datetime
import glob
import os
import pwd
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import check_mode, parse_utc

from ..assignment import find_assignment
from ..classroom.lifecycle import demo_written
from ..intake.collected import (
    EXCHANGE_RECORD,
    LMS_RECORD,
    files_of,
    held,
    kept_because,
    read_record,
    record_path,
    write_record,
)
from ..intake.files import TIMESTAMP, TIMESTAMP_BYTES, IntakeRules, Refused, StagingFault, read_regular, take_submission
from ..intake.submitted_folders import put_in_place, staging_for, submitted_lock
from ..outputs.inert import escaped, one_line
from ..settings import GraderSettings

Record = dict  # nbgrader's record of an inbound folder: username, filename, timestamp


class IntakeExchangeCollect(ExchangeCollect):
    """nbgrader's ExchangeCollect, choosing and copying each submission as the module docstring says."""

    def init_src(self) -> None:
        """nbgrader's checks of the course and its choice of each student's folder (the newest; with
        before_duedate, the newest before the due date), made among the folders that are the student's."""
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        student = self.coursedir.student_id or "*"
        folders = glob.glob(os.path.join(glob.escape(self.inbound_path), f"{student}+{self.coursedir.assignment_id}+*"))
        by_student: dict[str, list[Record]] = defaultdict(list)
        for record in filter(None, map(self._record, sorted(folders))):
            by_student[record["username"]].append(record)
        self.duedate = self._due_date()
        self.src_records = [self._chosen(records) for records in by_student.values()]

    def _record(self, folder: str) -> Record | None:
        """nbgrader's record of an inbound folder, or None (with one line) when its name has no time or the folder
        is not the student's."""
        try:
            record = self._path_to_record(folder)
        except (ExchangeError, ValueError, OverflowError):
            self.log.warning("%s: not collected: its name holds no time nbgrader reads", escaped(os.path.basename(folder)))
            return None
        try:
            owner = os.lstat(folder).st_uid
        except OSError:  # removed since it was listed
            return None
        if not self._owned(record["username"], owner):
            self.log.warning("%s: not collected: it is owned by %s, not by %s", escaped(record["filename"]),
                             escaped(_name(owner)), escaped(record["username"]))
            return None
        return record

    def _owned(self, student: str, uid: int | None) -> bool:
        """Whether a folder owned by `uid` may be `student`'s (module docstring)."""
        if not self.check_owner:
            return True
        own = _uid(student)
        # root's folder (the instructor's, put there for a student) only for an id that names no user: inbound has
        # no sticky bit, so any student may rename a root-owned folder into their own name, and only a folder their
        # own uid made can be theirs.
        return uid is not None and uid == (0 if own is None else own)

    def _due_date(self) -> datetime.datetime | None:
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                return gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                return None

    def _chosen(self, records: list[Record]) -> Record:
        newest_first = self._sort_by_timestamp(records)
        if self.duedate is not None and self.before_duedate:
            return next((r for r in newest_first if r["timestamp"] <= self.duedate), newest_first[0])
        return newest_first[0]

    def copy_files(self) -> None:
        if not self.src_records:
            self.log.warning("No submissions of '%s' for course '%s' to collect", self.coursedir.assignment_id,
                             self.coursedir.course_id)
        for record in self.src_records:
            self._collect(record)

    def _collect(self, record: Record) -> None:
        """Copy one inbound folder through the intake beside submitted/<student>/<assignment>, and put the copy in
        its place once the intake has read the folder and found it the student's."""
        student, source = record["username"], Path(self.inbound_path, record["filename"])
        dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student,
                                               self.coursedir.assignment_id))
        if self._stays(dest, record):
            return
        with staging_for(dest) as staged:
            try:
                intake = take_submission(source.parent, (source.name,), staged, self._rules())
            except StagingFault as fault:  # the machine's (a full disk): the collected work stays whole
                self.log.error("%s: not collected, the grader's failure: %s; submitted/%s is kept (collect again "
                               "once it is fixed)", escaped(source.name), one_line(fault), escaped(student))
                return
            for line in ([intake.reason] if intake.reason else []) + intake.notes:
                self.log.warning("%s: %s", escaped(source.name), one_line(line))
            if not intake.read or not self._owned(student, intake.owner):
                why = ("it could not be read" if not intake.read else
                       f"it is owned by {escaped(_name(intake.owner or 0))} now")
                self.log.warning("%s: not collected: %s; submitted/%s is kept", escaped(source.name), why,
                                 escaped(student))
                return
            wrote = held(staged, self._rules())
            with submitted_lock(dest.parent.parent, exclusive=True):  # no run reads or writes submitted/ meanwhile
                if self._stays(dest, record):  # asked again: another collect may have put its folder there since
                    return
                self.log.info("Collecting submission: %s %s", escaped(student), self.coursedir.assignment_id)
                put_in_place(staged, dest)
                self._record_writing(student, wrote or {})

    def _stays(self, dest: Path, record: Record) -> bool:
        """Whether the collected `dest` stays as it is, said in the log: by nbgrader's rule (`_replaces`), and by
        every collection's, when it holds anything no collection wrote there (intake/collected.py). The kit's own
        demo folder (lifecycle.demo_written) gives way to a real student of that id whatever the demo's time stamp."""
        student = record["username"]
        assignment = find_assignment(Path(self.coursedir.root), self.coursedir.assignment_id)
        demo = demo_written(assignment, dest.parent.parent, student)
        if demo and held(dest, self._rules()) == demo:
            return False
        if dest.is_dir() and not self._replaces(dest, record["timestamp"]):
            self.log.info("No newer submission to collect: %s %s", escaped(record["username"]),
                          self.coursedir.assignment_id)
            return True
        ours, lms = self._record_of(EXCHANGE_RECORD), self._record_of(LMS_RECORD)
        why = kept_because(dest, held(dest, self._rules()) or {}, files_of(ours.get(student)),
                           [files_of(lms.get(student))])
        if why:
            self.log.warning("%s: not collected: submitted/%s is kept: %s", escaped(record["filename"]),
                             escaped(student), why)
            return True
        return False

    def _record_of(self, name: str) -> dict:
        return read_record(record_path(self.config, self.coursedir.assignment_id, name))

    def _record_writing(self, student: str, wrote: dict[str, str]) -> None:
        """EXCHANGE_RECORD: what this collect wrote in `student`'s folder (hold submitted/'s lock: one writer)."""
        record = self._record_of(EXCHANGE_RECORD)
        record[student] = wrote
        write_record(record_path(self.config, self.coursedir.assignment_id, EXCHANGE_RECORD), record)

    def _replaces(self, dest: Path, new: datetime.datetime) -> bool:
        """nbgrader's rule for a student already collected: with update, a newer folder (or any, when the collected
        one has no time stamp); with before_duedate, a folder of another time."""
        existing = self._existing_timestamp(dest)
        if self.update and (existing is None or new > existing):
            return True
        return self.before_duedate and existing != new

    def _existing_timestamp(self, dest: Path) -> datetime.datetime | None:
        """The time in a collected folder's timestamp.txt, read through the intake; None (with one line, unless
        there is none) when it holds no time nbgrader reads."""
        path = dest / TIMESTAMP
        try:
            data, size = read_regular(path, TIMESTAMP_BYTES)
            if size > TIMESTAMP_BYTES:
                raise Refused("it is longer than a time stamp")
            return parse_utc(data.decode("utf-8").strip())
        except FileNotFoundError:
            return None
        except (Refused, OSError, UnicodeDecodeError, ValueError, OverflowError) as why:
            self.log.warning("%s: holds no time nbgrader reads (%s): taken as none", escaped(str(path)), one_line(why))
            return None

    def _rules(self) -> IntakeRules:
        """make grade's rules, but a second hard link is refused: in inbound a student may link a file they cannot
        read (copied as the instructor, it would be theirs to see)."""
        assignment = find_assignment(Path(self.coursedir.root), self.coursedir.assignment_id)
        return replace(IntakeRules.of(GraderSettings(config=self.config), assignment.notebook_name), linked_files=False)


def _uid(user: str) -> int | None:
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
