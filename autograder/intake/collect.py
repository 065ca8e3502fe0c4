"""Sorting an LMS download into submitted/<student>/<assignment>/: nbgrader's zip_collect, with its plugins.

`LmsZipCollect` is nbgrader's ZipCollectApp with the kit's two plugins (`BoundedExtractor`, in unpack.py,
and `LmsFileNameCollectorPlugin`) and its own choice of what to copy, because nbgrader's stops the whole
class on one student's duplicate or bad time stamp and replaces whatever submitted/ holds:

* Identities are the LMS's. Each of `named_regexps` (nbgrader_config.py) must match a file's whole path
  from the download's top level (archive/ itself, or the top of an archive unpacked from it), so only
  the names the LMS writes give a student: a file in a folder the student uploaded never matches a
  classmate's name. Besides nbgrader's groups (`student_id`, `file_id`), a pattern may give `name` and
  `lms_id` (the id is then the name in lower case, letters and digits only, `_` and the LMS's number,
  e.g. `smithjohn_12345`; `make grades-lms` reads the number back; a Blackboard username has none: `bitdiddle`),
  or `anonymous_id` (Canvas's anonymous grading names only the submission: the id is `anon_` and it in lower case,
  `anon_x7k2p`), `attachment` (the LMS's number of the upload, higher for a later one: Blackboard's attempt time
  counts as its digits) and `late` (Canvas's LATE marker).
* An id must be `SAFE_ID` (a-z, 0-9 and _, which nbgrader's folders, URLs and the formgrader take as they
  are). An id outside it, and an id that two LMS identities would share (or one LMS number under two ids),
  is "not collected" for those files alone, with the reason in `make grade`'s summary. So is, across downloads, an
  id that a collection of any assignment recorded (collected.json) for another identity as the LMS wrote it
  (`ann.lee`, then `annlee`; `anon_Q9w3e`, then `anon_q9w3e`; one LMS number is one user, however spelled): its
  folders stay as they are (red-b26 X35-b26-1).
* A file's extension is read in any case, as the intake reads a notebook's (`.IPYNB`, as Windows tools write it,
  is a notebook; the patterns see it spelled as `valid_ext` spells it). Two files for one student under one name,
  in any case (Canvas's <notebook>-1.ipynb is a second upload of <notebook>.ipynb, the assignment's notebook; both
  are collected under the notebook's own name, spelled in any case, as the intake chooses the notebook) are
  resolved by the LMS's attachment number, else the LMS's time stamp (the archive entry's time); when neither
  tells, that student is "not collected: two files". Two alike in all the collection takes of them (bytes, name,
  attachment number and LATE marker, and, without an attachment number, time: one upload in two downloads,
  `submissions (1).zip` beside `submissions.zip`, which Canvas built at two times) are one file.
* The LMS copy never replaces what the instructor did (collected.py, the rule the exchange's Collect shares):
  downloaded/<assignment>/collected.json holds what each
  student's folder was written with (each file's name and the SHA-256 of all of it, the notebooks and timestamp.txt),
  the LMS's number of each student (`make grades-lms` reads it as the Canvas user id) and their identity as the LMS
  wrote it. A folder is replaced only while it holds exactly that (or what the exchange's Collect records
  writing), or nothing; one that holds anything
  else at any depth (a notebook put there by hand under any name, a regrade's, a time stamp written or removed for
  an extension, an extra file), and one no record names, is kept whole, and the summary says why (and names the
  download's upload, with its LATE line, when it is not the one collected there: red-b26 X35-b26-2). What the intake
  never reads (files.skipped: .DS_Store, Jupyter's .ipynb_checkpoints/ when the instructor opens the notebook there)
  is no one's edit. A folder that holds the LMS copy already is never touched, and a new one is written whole beside
  it and put in its place under submitted/'s lock (submitted_folders.py), so no run reading submitted/ meanwhile sees
  a folder half written or gone.
* Canvas's LATE marker is all a Canvas download says of lateness: Canvas writes its zip with rubyzip and no time
  for an entry (lib/content_zipper.rb), so each entry's time is when Canvas built the download, not when the
  student uploaded, and a download built again a week later would make the same upload a week later. So no
  timestamp.txt is written from it (nbgrader counts a folder without one on time): the summary names each LATE
  upload of the notebook the intake grades (files.choose_notebook among the student's files), the most it can be
  late by (the build time against the due date of the day), and the timestamp.txt to write by hand from the time
  Canvas shows for the submission (SpeedGrader, or the API's `submitted_at`), which keeps the folder as the
  instructor's (collected.kept_because). A LATE upload not collected (a name `_refuse_unread` names) gets the same.
"""
from __future__ import annotations

import datetime
import hashlib
import os
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps.zipcollectapp import ZipCollectApp
from nbgrader.plugins import FileNameCollectorPlugin
from traitlets import List, Unicode, default

from ..assignment import Assignment
from ..classroom.lifecycle import demo_written
from ..nbgrader_glue.late import due_date_of, late_by
from ..outputs.inert import quoted
from ..settings import GraderSettings
from .collected import (
    EXCHANGE_RECORD,
    LMS_ID,
    LMS_IDENTITY,
    LMS_RECORD,
    SHOWN_CHARS,
    digest,
    file_bytes,
    files_of,
    held,
    kept_because,
    other_identity,
    read_record,
    record_path,
    shown,
    write_record,
)
from .files import TIMESTAMP, IntakeRules, choose_notebook, is_notebook, skipped
from .submitted_folders import put_in_place, staging_for, submitted_lock
from .unpack import BoundedExtractor, NotCollected, copy_private

RESUBMITTED = re.compile(r"^(?P<stem>.+?)-\d+(?P<ext>\.ipynb)$", re.IGNORECASE)
SAFE_ID = re.compile(r"[a-z0-9][a-z0-9_]{0,63}")


def slug(name: str) -> str:
    """'John Smith' -> 'johnsmith'; accents dropped, letters and digits kept."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", plain.lower())


class Upload(NamedTuple):
    """A name at the download's top, read by the LMS's prefix alone (LmsFileNameCollectorPlugin.uploaded_by)."""

    student: str | None  # the shortest prefix's id, for naming only
    own: str  # the rest: the name the student gave it
    late: bool  # Canvas's LATE marker in the prefix


class LmsFileNameCollectorPlugin(FileNameCollectorPlugin):
    """Tries each of `named_regexps` (then nbgrader's `named_regexp`, if set) on a file's path from the
    download's top level; the first that matches the whole path names the student (module docstring)."""

    named_regexps = List(Unicode(), help="Patterns tried in turn on each file's path (module docstring).").tag(config=True)
    notebook_name = Unicode("", help="The assignment's notebook: an upload of it (renumbered by the LMS or "
                                     "not, in any case) is collected under this name. Empty: the notebook of "
                                     "the assignment being collected (its one notebook in source/<assignment>/)."
                            ).tag(config=True)

    def collect(self, submitted_file: str) -> dict | None:
        """nbgrader's, but the extension read in any case, as the intake reads a notebook's (files.is_notebook): the
        patterns see it spelled as valid_ext spells it, so an upload saved as `.IPYNB` by a Windows tool is the
        notebook, one name with its `.ipynb` uploads, never passed over as "no notebook in the upload"."""
        spelled = self.spelled(submitted_file)
        return self._match(spelled) if spelled else None

    def spelled(self, filename: str) -> str | None:
        """`filename` with its extension as valid_ext spells it, when it is one of them in any case; else None."""
        stem, dot, ext = filename.rpartition(".")
        return next((stem + valid for valid in self.valid_ext if dot and f".{ext}".casefold() == valid.casefold()),
                    None)

    def _identify(self, filename: str) -> dict | None:
        """The groups of the first pattern that matches the whole path, with the student's id (NotCollected when
        the id is not SAFE_ID), or None when none matches."""
        patterns = list(self.named_regexps) + ([self.named_regexp] if self.named_regexp else [])
        for pattern in patterns:
            match = re.fullmatch(pattern, filename)
            if match:
                found = {k: v for k, v in match.groupdict().items() if v is not None}
                break
        else:
            return None
        name, lms_id, anonymous = found.pop("name", None), found.pop("lms_id", ""), found.pop("anonymous_id", "")
        if anonymous:  # Canvas's anonymous grading: its ids differ in case, so two that differ only so clash (below)
            found["identity"], found["student_id"] = f"anon_{anonymous}", f"anon_{anonymous.lower()}"
        found.setdefault("identity", found.get("student_id") or "_".join(filter(None, [name, lms_id])))  # as written
        if not found.get("student_id"):
            found["student_id"] = "_".join(filter(None, [slug(name or ""), lms_id]))
        if lms_id:
            found["lms_id"] = lms_id
        if not SAFE_ID.fullmatch(found["student_id"]):
            raise NotCollected(f"its student id {quoted(found['student_id'], SHOWN_CHARS)} is not 1 to 64 of a-z, 0-9 and _ "
                               f"(autograder/intake/collect.py: SAFE_ID)")
        return found

    def _match(self, filename: str) -> dict | None:
        found = self._identify(filename)
        if found is None:
            self.log.warning("No pattern of LmsFileNameCollectorPlugin.named_regexps matched: %s", shown(filename))
            return None
        file_id = found.get("file_id", "")
        if not file_id or Path(file_id).name != file_id or file_id.startswith("."):
            raise NotCollected(f"its file name {quoted(file_id, SHOWN_CHARS)} is not a plain notebook name")
        renumbered = RESUBMITTED.match(file_id)
        uploaded = renumbered["stem"] + renumbered["ext"] if renumbered else file_id
        # In any case, as the intake's choose_notebook matches it: else an upload and its renumbered second one,
        # spelled otherwise than notebook_name, reach submitted/ as two files and the older is graded.
        if self.notebook_name.casefold() in {file_id.casefold(), uploaded.casefold()} - {""}:
            found["file_id"] = self.notebook_name
        found["late"] = bool(found.get("late"))
        return found

    def owner(self, filename: str) -> str | None:
        """The student a path from the download's top level is named for, or None: for the caps each student has
        (BoundedExtractor.student_of), for the summary, and so that a student's archive among the download's
        archives is never taken for the LMS's (is_upload). A file is read first as `collect` reads it, so every file collected
        counts as its student's (never against the share of what no one owns, which others may have spent); then,
        whatever its own name (a dot file, one that is not a notebook), as it is, with the notebook extension added,
        or in place of its own. A folder (`name/`) is the student's whose notebook in it would be collected: Moodle's
        folder of each student, and the folders of a student's own upload, are theirs."""
        if not self.valid_ext:
            return None
        ext = self.valid_ext[0]
        folder, _, base = filename.rpartition("/")
        if not base:  # a folder
            names: tuple[str | None, ...] = (filename + (self.notebook_name or f"notebook{ext}"),)
        else:
            stem = f"{folder}/{base.split('.')[0]}" if folder else base.split(".")[0]
            names = (self.spelled(filename), filename, filename + ext, stem + ext)
        for name in filter(None, names):
            try:
                found = self._identify(name)
            except NotCollected:
                continue
            if found:
                return found["student_id"]
        return None

    def uploaded_by(self, filename: str) -> Upload | None:
        """For a name at the download's top: the student whose upload it is by the prefix an LMS writes before the
        name the student gave it (Canvas's `<name>_[LATE_]<user>_<attachment>_`, Moodle's
        `<name>_<user>_assignsubmission_file_`), that own name, and the prefix's LATE marker; None when no prefix is
        one. A prefix is one when the patterns read it before an ordinary name (`x.ipynb`): whatever follows is the
        student's choice, so this holds for a name no pattern reads whole (ids again, a number first), which is then
        never the LMS's own archive (BoundedExtractor.is_upload). The id is the shortest such prefix's (None when it is
        not SAFE_ID), only for naming: a name holding ids twice may be a classmate's made to look so, so it is never a
        file's owner."""
        if "/" in filename or not self.valid_ext:
            return None
        for end in (i + 1 for i, char in enumerate(filename) if char == "_"):
            try:
                found = self._identify(f"{filename[:end]}x{self.valid_ext[0]}")
            except NotCollected:  # an LMS's prefix, with an id the kit refuses: named as no one's (_refuse_unread)
                return Upload(None, filename[end:], False)
            if found:
                return Upload(found["student_id"], filename[end:], bool(found.get("late")))
        return None

    def is_upload(self, filename: str) -> bool:
        """Whether a name at archive/'s top is a student's upload (owner, or uploaded_by), never the LMS's archive."""
        return self.owner(filename) is not None or self.uploaded_by(filename) is not None


def lms_time(path: Path) -> float | None:
    """The LMS's time stamp of a file unpacked into extracted/ (the archive entry's time: Canvas's is when it built
    the download, module docstring), or None."""
    mtime = path.stat().st_mtime
    return mtime if mtime > 0 else None  # 0: the archive gave none


@dataclass
class Candidate:
    """A file of the download the collector gave a student."""

    path: Path  # in extracted/
    name: str  # from the download's top level, as shown
    info: dict  # the collector's groups

    @property
    def lms_time(self) -> float | None:
        return lms_time(self.path)

    @property
    def attachment(self) -> int | None:
        """The LMS's number of the upload: Canvas's attachment id, or Blackboard's attempt time as its digits alone
        (2026-11-20-10-00-00 is 20261120100000: a later attempt's is higher)."""
        number = self.info.get("attachment", "").replace("-", "")
        return int(number) if number.isascii() and number.isdigit() else None

    def same_upload(self) -> tuple:
        """What the collection takes of this file: two files alike in all of it are one upload (the download taken
        twice, both in archive/: `submissions.zip`, `submissions (1).zip`), and copying either writes the same. The
        attachment number names an upload; the time, which Canvas writes as it builds each download, counts only
        without one."""
        with self.path.open("rb") as data:
            content = hashlib.file_digest(data, "sha256").hexdigest()
        when = self.lms_time if self.attachment is None else None
        return self.info["file_id"], self.attachment, self.info["late"], when, content


@dataclass
class Collection:
    """What one collection did besides copying, for `make grade`'s summary (lines())."""

    refused: dict[str, str] = field(default_factory=dict)  # who or which file -> why not collected
    chosen: dict[str, str] = field(default_factory=dict)  # student -> which of their files was taken
    kept: dict[str, str] = field(default_factory=dict)  # student -> why submitted/ was kept
    late: dict[str, str] = field(default_factory=dict)  # student -> the lateness recorded

    def lines(self) -> list[str]:
        return ([f"Not collected: {who}: {why}" for who, why in sorted(self.refused.items())]
                + [f"Collected the newest of several files: {s}: {what}" for s, what in sorted(self.chosen.items())]
                + [f"Kept submitted/{s}/ and not the LMS copy: {why}" for s, why in sorted(self.kept.items())]
                + [f"Late by Canvas's LATE marker: {s}: {what}" for s, what in sorted(self.late.items())])


def one_per_upload(files: list[Candidate]) -> list[Candidate]:
    """`files` with one of each upload present twice or more (Candidate.same_upload), the first met."""
    if len(files) < 2:
        return files
    unique: dict[tuple, Candidate] = {}
    for file in files:
        unique.setdefault(file.same_upload(), file)
    return list(unique.values())


def newest(files: list[Candidate]) -> Candidate | None:
    """The latest upload by the LMS's attachment number, else by its time stamp; None when they do not tell."""
    for key in (lambda c: c.attachment, lambda c: c.lms_time):
        values = [key(c) for c in files]
        if None not in values and len(set(values)) == len(values):
            return max(files, key=key)
    return None


def _utc(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(tzinfo=None)


def collected_ids(config, assignment: str) -> dict[str, str | None]:
    """Every student id the LMS collection of `assignment` wrote a folder for (its collected.json), with the LMS's
    own number for that student: "" when the pattern that named them gave none (an id of the last pattern, a
    student number `20231234`, is no LMS user's number), None when a kit before the number recorded it (the id's
    ending then). An id made any other way (a login, a GitHub username, a folder named by hand) is a name someone
    chose, which may be the id another assignment's download gave a classmate (`12345`, a name with no letter a-z):
    so only the download that wrote the folder says whose it is, and no other assignment's record is read."""
    ids: dict[str, str | None] = {}
    for student, entry in read_record(record_path(config, assignment, LMS_RECORD)).items():
        number = entry.get(LMS_ID) if isinstance(entry, dict) else None
        ids[student] = number if isinstance(number, str) else None
    return ids


class LmsZipCollect(ZipCollectApp):
    """nbgrader's zip_collect with the kit's plugins, per-file refusals and newer work kept (module docstring)."""

    @default("extractor_plugin")
    def _extractor(self):
        return BoundedExtractor

    @default("collector_plugin")
    def _collector(self):
        return LmsFileNameCollectorPlugin

    def init_plugins(self) -> None:
        """nbgrader's, but only the kit's plugins (or subclasses): the steps below rely on what they record."""
        for setting, needed in (("extractor_plugin", BoundedExtractor), ("collector_plugin", LmsFileNameCollectorPlugin)):
            if not issubclass(getattr(self, setting), needed):
                self.fail(f"ZipCollectApp.{setting} must be {needed.__module__}.{needed.__name__} (or a subclass) "
                          f"for make grade's collect step")
        super().init_plugins()
        self.extractor_plugin_inst.student_of = self.collector_plugin_inst.owner
        self.extractor_plugin_inst.is_upload = self.collector_plugin_inst.is_upload
        if not self.collector_plugin_inst.notebook_name:  # any assignment of the course, not one set in the config
            self.collector_plugin_inst.notebook_name = self._assignment.notebook_name

    @property
    def _assignment(self) -> Assignment:
        return Assignment(Path(self.coursedir.root), self.coursedir.assignment_id)

    def start(self) -> None:
        self.collection = Collection()
        super().start()
        extracted = Path(self._format_collect_path(self.extracted_directory))
        extractor = self.extractor_plugin_inst
        for name, why in extractor.refused.items():  # after the collector has seen the rest
            self.collection.refused[self._who(extracted / name)] = why
        if extractor.unopened:  # else "0 submissions" alone would not say why
            more = f" and {len(extractor.loose) - 3} more" if len(extractor.loose) > 3 else ""
            self.collection.refused[", ".join(map(shown, extractor.unopened))] = (
                f"not unpacked: archive/ also holds {', '.join(map(shown, extractor.loose[:3]))}{more}, which "
                f"{'is' if len(extractor.loose) == 1 else 'are'} not an archive, so its files were taken as they "
                f"are (put the LMS's download alone in archive/)")
        for name in extractor.read_as_uploads:  # its student's line would name one no class may have (`dl01_6`)
            self.collection.refused[shown(name)] = (
                "not unpacked: its name reads as the LMS names a student's upload "
                "(c.LmsFileNameCollectorPlugin.named_regexps), and an archive a student uploaded is never unpacked "
                "(the .ipynb itself is needed): if it is the LMS's download, give it a name without `_`, as the LMS "
                "names it (submissions.zip), and run make grade again")

    def _top_relative(self, path: Path) -> str:
        """`path`'s name from the download's top level it came from (the deepest top that holds it)."""
        tops = self.extractor_plugin_inst.tops
        top = max((t for t in tops if path.is_relative_to(t)), key=lambda t: len(t.parts))
        return path.relative_to(top).as_posix()

    def _who(self, path: Path) -> str:
        """A refused file as the summary names it: its student, when the collector can tell, and its name."""
        name = self._top_relative(path)
        try:
            info = self.collector_plugin_inst.collect(name)
        except NotCollected:
            info = None
        return f"{info['student_id']} ({shown(name)})" if info else shown(name)

    def _collect_files(self, src_files: list[str]) -> dict[str, list[Candidate]]:
        """Each student's files to copy: nbgrader's step, with every refusal for that file alone."""
        collector = self.collector_plugin_inst
        read_as_uploads = set(self.extractor_plugin_inst.read_as_uploads)  # each has a line of its own (start)
        found: dict[str, list[Candidate]] = defaultdict(list)
        others: dict[str, list[str]] = defaultdict(list)  # a student's files that are not notebooks
        for source in map(Path, src_files):
            name = self._top_relative(source)
            # What the intake's walk never reads in a student's folder (Moodle's: below the top level, whose names
            # are the LMS's) is no one's work: .ipynb_checkpoints/, __MACOSX; written at the top, it would be graded.
            if any(map(skipped, name.split("/")[1:])):
                continue
            try:
                info = collector.collect(name)
            except NotCollected as why:
                self.collection.refused[shown(name)] = str(why)
                continue
            if info:
                found[info["student_id"]].append(Candidate(source, name, info))
            elif collector.spelled(name):  # a notebook no pattern names (a name chosen to mislead)
                self._refuse_unread(name, source)
            elif name not in read_as_uploads and (owner := collector.owner(name)):
                others[owner].append(shown(name))
        for student, names in others.items():
            if student not in found:
                self.collection.refused[student] = (f"no notebook in the upload, only {', '.join(names[:3])}"
                                                    f"{' ...' if len(names) > 3 else ''} (an archive in an upload "
                                                    f"is never unpacked: the .ipynb itself is needed)")
        self._refuse_clashes(found)
        return {student: chosen for student, files in found.items() if (chosen := self._choose(student, files))}

    def _refuse_unread(self, name: str, source: Path) -> None:
        """A notebook no pattern reads: named by the student whose upload its name begins as (uploaded_by), with why,
        but never collected as theirs: a classmate's upload named to read so (Canvas's `bob_333_222_888_...` is Bob's
        `888_...` or, named `bob_333`, user 222's) is spelled the same, and only the LMS knows whose it is. A LATE
        one's line also says what to write in timestamp.txt beside the copy, as a LATE upload collected has it."""
        upload = self.collector_plugin_inst.uploaded_by(name)
        if not upload or not upload.student:
            self.collection.refused[shown(name)] = ("its name matches none of the LMS's patterns "
                                                    "(c.LmsFileNameCollectorPlugin.named_regexps)")
            return
        student, folder = upload.student, f"submitted/{upload.student}/{self.coursedir.assignment_id}"
        line = (f"its name begins as the LMS names {student}'s upload, but the rest, {quoted(shown(upload.own))}, "
                f"starts with a number and `_` or holds the LMS's ids or marker again, as a classmate's upload named to "
                f"read as {student}'s would, so it is collected as no one's (c.LmsFileNameCollectorPlugin.named_regexps"
                f"): check in the LMS whose it is before you copy it into {folder}/")
        if upload.late:
            line += f"; {self._lateness(lms_time(source), folder)}"
        self.collection.refused[f"{student} ({shown(name)})"] = line

    def _refuse_clashes(self, found: dict[str, list[Candidate]]) -> None:
        """Refuse ids two LMS identities share, and LMS numbers under two ids: one user is one student."""
        ids_of_number = defaultdict(set)
        for student, files in found.items():
            for file in files:
                if "lms_id" in file.info:
                    ids_of_number[file.info["lms_id"]].add(student)
        for student, files in list(found.items()):
            identities = {shown(f.info["identity"]) for f in files}
            others = set().union(*(ids_of_number[f.info["lms_id"]] for f in files if "lms_id" in f.info)) - {student}
            if len(identities) > 1 or others:
                clash = (f"{len(identities)} LMS identities ({', '.join(sorted(identities))}) give this id"
                         if len(identities) > 1 else f"its LMS number is also {', '.join(sorted(others))}'s")
                for file in files:
                    self.collection.refused[f"{student} ({shown(file.name)})"] = f"{clash}: set the ids apart by hand"
                del found[student]

    def _choose(self, student: str, files: list[Candidate]) -> list[Candidate]:
        """One file per name for `student`, in any case (the intake, and a course copy on a disk that ignores case,
        read two spellings as one name): the newest of several, or none of them (the summary says which)."""
        by_name = defaultdict(list)
        for file in files:
            by_name[file.info["file_id"].casefold()].append(file)
        chosen = []
        for _, same in sorted(by_name.items()):
            names = ", ".join(shown(f.name) for f in same)
            depth = min(f.name.count("/") for f in same)  # the intake grades the nearest of one name (choose_notebook)
            same = one_per_upload([f for f in same if f.name.count("/") == depth])
            pick = same[0] if len(same) == 1 else newest(same)
            if pick is None:
                self.collection.refused[student] = (f"two files for {shown(same[0].info['file_id'])} ({names}) and "
                                                    f"neither the LMS's numbers nor its time stamps say which is newer")
                return []
            if len(same) > 1:
                self.collection.chosen[student] = f"took {shown(pick.name)} of {names}"
            chosen.append(pick)
        return chosen

    def _transfer_files(self, collected: dict[str, list[Candidate]]) -> None:
        """Each student's LMS copy into submitted/, holding its lock (submitted_folders.py), and what was written into
        collected.json (module docstring)."""
        path = Path(self._format_collect_path(LMS_RECORD))
        record = read_record(path)
        exchanges = read_record(path.with_name(EXCHANGE_RECORD))  # a folder the exchange's Collect wrote may be replaced
        top = Path(self.coursedir.root, self.coursedir.submitted_directory)  # as the runs reading it name it
        top.mkdir(parents=True, exist_ok=True)
        records = [(self.coursedir.assignment_id, record), *self._other_records()]
        with submitted_lock(top, exclusive=True):
            for student, files in sorted(collected.items()):
                self._transfer(student, files, records, files_of(exchanges.get(student)))
        write_record(path, record)

    def _other_records(self) -> list[tuple[str, dict]]:
        """The LMS records of the course's other assignments (each in source/, or with a folder in downloaded/), by
        name: an id is one gradebook student across them all (red-b26 X35-b26-1)."""
        names: set[str] = set()
        for folder in (self.coursedir.source_directory, self.downloaded_directory):
            top = Path(self.coursedir.root, folder)
            if top.is_dir():
                names.update(p.name for p in top.iterdir() if p.is_dir())
        names.discard(self.coursedir.assignment_id)
        return [(name, read_record(record_path(self.config, name, LMS_RECORD))) for name in sorted(names)]

    def _transfer(self, student: str, files: list[Candidate], records: list[tuple[str, dict]],
                  exchanges: dict[str, str]) -> None:
        """One student's folder: left as it is when it holds the LMS copy already, written whole when it holds only
        what a collection wrote (or nothing), else kept, with the reason in the summary. Never for an id a collection
        of this assignment or another (`records`: this one's first, by assignment) recorded for another LMS
        identity."""
        dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, self.coursedir.assignment_id))
        identity, number = files[0].info["identity"], files[0].info.get("lms_id", "")  # one of each (_refuse_clashes)
        for assignment, collected in records:
            if (recorded := other_identity(collected.get(student), identity, number)) is not None:
                self._refuse_other_identity(student, files, recorded, assignment)
                return
        record = records[0][1]
        late = self._graded(files)
        late = late if late and late.info["late"] else None
        wanted = {f.info["file_id"]: digest(f.path, file_bytes(self._rules)) for f in files}
        if os.path.lexists(dest) and (dest.is_symlink() or not dest.is_dir()):
            self.collection.kept[student] = "it is not a folder (put there by hand)"
            return
        now = held(dest, self._rules)
        if now != wanted:  # else the folder is the LMS copy already: never touched, so no run reading it sees a change
            demo = demo_written(self._assignment, dest.parent.parent, student)  # the kit's demo folder gives way
            why = kept_because(dest, now or {}, files_of(record.get(student)), [exchanges, demo],
                               self._newer(dest, files))
            if why:
                self.collection.kept[student] = why + self._other_upload(student, files, wanted,
                                                                         files_of(record.get(student)))
                return
            self._write_folder(dest, files)
        record[student] = {**wanted, LMS_ID: number, LMS_IDENTITY: identity}
        if late:
            self._note_late(student, late)

    def _refuse_other_identity(self, student: str, files: list[Candidate], recorded: str, assignment: str) -> None:
        """red-b26 X35-b26-1: `student`'s files when a collection (of `assignment`, this one or another) wrote a folder
        for another LMS identity that the id also cuts down to (Blackboard's `ann.lee` and `annlee`, Canvas's
        `anon_Q9w3e` and `anon_q9w3e`), in another download: replacing it, or giving the id a folder of another
        assignment, would put a classmate's upload under the first user's gradebook row and hand grades. The folders
        and the records stay as they are."""
        folder, record = f"submitted/{student}/{shown(assignment)}", f"downloaded/{shown(assignment)}/{LMS_RECORD}"
        self.collection.refused[student] = (
            f"{', '.join(shown(f.name) for f in files)}: its LMS identity is {shown(files[0].info['identity'])}, but "
            f"{folder}/ was collected for the LMS identity {shown(recorded)}, whose id is also {student}: two users, "
            f"one id, so it is not collected and the folders stay as they are; copy this upload by hand into a folder "
            f"of an id of its own (if they are one user, whose name the LMS changed, delete {student}'s entry in "
            f"{record}{' and that folder' if assignment == self.coursedir.assignment_id else ''} to collect it again)")

    def _other_upload(self, student: str, files: list[Candidate], wanted: dict[str, str],
                      written: dict[str, str]) -> str:
        """red-b26 X35-b26-2: for a folder kept (for any reason), the upload in the download when it is not the one the
        collection wrote there (its record, but for a time stamp: the instructor's, or a kit's before), with its
        lateness when Canvas marked it LATE, since no one copies in an upload no line names. "" when it is the same,
        and when no record names the folder (that line says how to collect the new submission already)."""
        if not written or wanted == {name: sha for name, sha in written.items() if name != TIMESTAMP}:
            return ""
        other = [f for f in files if written.get(f.info["file_id"]) != wanted[f.info["file_id"]]] or files
        line = (f"; the download holds an upload other than the one collected, "
                f"{', '.join(shown(f.name) for f in other)}, yours to copy in if it is newer")
        graded = self._graded(files)
        if graded is not None and graded.info["late"] and graded in other:
            line += f" ({self._lateness(graded.lms_time, f'submitted/{student}/{self.coursedir.assignment_id}')})"
        return line

    def _graded(self, files: list[Candidate]) -> Candidate | None:
        """The file of `files` the intake will grade (choose_notebook, on the names they are written under): its upload
        is the submission, and a LATE one's time is the submission's time."""
        by_name = {f.info["file_id"]: f for f in files}
        chosen, _ = choose_notebook([name for name in by_name if is_notebook(name)],
                                    self.collector_plugin_inst.notebook_name)
        return by_name.get(chosen) if chosen else None

    @property
    def _rules(self) -> IntakeRules:
        """make grade's rules, by which the keep rule reads a folder (collected.held)."""
        return IntakeRules.of(GraderSettings(config=self.config), self.collector_plugin_inst.notebook_name)

    @staticmethod
    def _newer(dest: Path, files: list[Candidate]):
        """The LMS's own reason to keep a file of `dest` (collected.kept_because): a copy of an upload newer than
        it (put there by hand since)."""
        lms = {f.info["file_id"].casefold(): f for f in files}  # in any case, as the intake chooses the notebook

        def newer(name: str) -> str | None:
            copy = lms.get(name.casefold())
            if copy and (dest / name).lstat().st_mtime > (copy.lms_time or 0) + 1:  # 1 s: archives keep time to 2 s
                return f"its {shown(name)} is newer than the LMS copy {shown(copy.name)}"
            return None
        return newer

    def _write_folder(self, dest: Path, files: list[Candidate]) -> None:
        """submitted/<student>/<assignment> written whole beside its place, then put there (submitted_folders.py)."""
        with staging_for(dest) as staged:  # 0700, as submitted/<student> is made: closed to other uids
            dest.parent.chmod(0o700)
            for file in files:
                copy_private(file.path, staged / file.info["file_id"])
            put_in_place(staged, dest)

    def _note_late(self, student: str, file: Candidate) -> None:
        """The summary's line for a file the LMS marked late: no time stamp is written for it, since the download
        holds no time of the upload (module docstring)."""
        folder = f"submitted/{student}/{self.coursedir.assignment_id}"
        self.collection.late[student] = self._lateness(file.lms_time, folder)

    def _lateness(self, built: float | None, folder: str) -> str:
        """What the kit knows of an upload Canvas marked LATE, whose download entry has the time `built` (None: none),
        and how to give nbgrader its lateness: the submission's time, by hand, in `folder`'s timestamp.txt."""
        line = "Canvas marked it LATE, but its download holds no time of the upload (each file has the time Canvas "
        if built:
            at, due = _utc(built), self._due_date()
            most = ("" if due is None else f", so late by at most {late_by((at - due).total_seconds())}" if at > due
                    else f", before the due date {due:%Y-%m-%d %H:%M} UTC, so on time")
            line += f"built the download, {at:%Y-%m-%d %H:%M} UTC{most})"
        else:
            line += "built the download, and this one has none)"
        return (f"{line}: nbgrader counts it on time unless you write the time Canvas gives the submission (SpeedGrader"
                f", or the API's submitted_at) into {folder}/{TIMESTAMP}, as `YYYY-MM-DD HH:MM:SS UTC`")

    def _due_date(self) -> datetime.datetime | None:
        """c.GraderSettings.due_date, else the gradebook's own (autograder/nbgrader_glue/late.py)."""
        configured = due_date_of(GraderSettings(config=self.config).due_date)
        if configured is not None:
            return configured
        database = self.coursedir.db_url.replace("sqlite:///", "", 1)
        if self.coursedir.db_url.startswith("sqlite:///") and not os.path.isfile(database):
            return None
        try:
            with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
                return gb.find_assignment(self.coursedir.assignment_id).duedate
        except MissingEntry:  # the assignment is not in the gradebook yet: no due date
            return None
