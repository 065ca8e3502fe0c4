"""Unpacking an LMS download within bounds: nbgrader zip_collect's extractor plugin (`BoundedExtractor`).

nbgrader's own extractor unpacks every archive it finds, archives inside archives too, as root and with
the modes the entries claim. A student chooses what they upload, so here:

* Only the download's own archives are unpacked, told by position: archive/ holds either the LMS's
  download as archives (nothing but files with an archive extension at its top: each is unpacked, unless
  it is named as a student's upload, `read_as_uploads`, even alone there: the LMS's download renamed by the
  instructor, `<assignment>_submissions.zip`, is told from one student's zip upload of a download unpacked into
  archive/ by nothing but its name, which the student's zip has from the LMS, so only the instructor can tell, by
  a rename the summary asks for) or the download's files and folders as they are (anything else at
  its top: nothing is unpacked, whatever the names, dot files included; `unopened` names the archives so left,
  `loose` what made it so, for the summary's one line). What the instructor's own system leaves in a folder it
  shows (OS_LITTER: Finder's .DS_Store, Explorer's Thumbs.db) is no LMS's and is passed over, not copied. An
  archive inside a download, in a
  student's folder, or among the download's loose files is a student's upload: it is copied as a plain
  file and never opened (the collector takes notebooks only).
* Every file is written anew, 0600 (folders 0700), owned by the user grading, with the time the
  LMS gave it: no setuid, no execute bit, no owner or link from the archive, closed to the sandbox's uids.
* Caps bound one download (c.BoundedExtractor.*): the bytes of one file; the bytes and the files and folders
  of one student (counted over every entry the collector names as theirs, `student_of`: Canvas gives each upload
  a top-level file of its own, and a folder, asked for as `name/`, is the student's whose files it would hold; the
  entries it names as no one's share one student's caps, UNOWNED), so that
  no student uses up what the class shares; the bytes and entries written of the whole download (an entry a
  student's own caps refuse spends none of it); the depth of its paths.
  Bytes are counted as they are written, not as the archive claims. An entry past a cap, or with a
  name that would leave its folder, is not written and `refused` says why (a few per student, the
  rest counted); the collector names the student it belonged to, and the rest of the class is collected.
"""
from __future__ import annotations

import datetime
import lzma
import os
import shutil
import tarfile
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Callable, Iterator

from nbgrader.plugins import ExtractorPlugin
from traitlets import Int

CHUNK = 1 << 20
OS_LITTER = frozenset({".DS_Store", "Thumbs.db", "desktop.ini", "__MACOSX"})  # and macOS's "._<name>" files


def is_os_litter(name: str) -> bool:
    """Whether a name at archive/'s top is what an operating system leaves in a folder it shows, never an LMS's."""
    return name in OS_LITTER or name.startswith("._")


# The share of the entries `student_of` names as no student's (a name no pattern reads, however many top-level files
# hold them): one student's caps bound them all, so they spend no classmate's share, nor more of the download's than
# one student may, and the summary names three of them and counts the rest. "" is the whole download's (_bytes).
UNOWNED = "\0unowned"
UNOWNED_LABEL = "the files the LMS's patterns name as no student's"


def _whose(student: str) -> str:
    return UNOWNED_LABEL if student == UNOWNED else "its student's uploads"


# What the decompressors raise for a damaged stream, apart from OSError (a bad gzip header), EOFError (a stream cut
# short) and zipfile's BadZipFile (a bad CRC): zlib's for a deflate block it cannot decode (a zip's member, a .tar.gz),
# lzma's for a .tar.xz. A damaged download is not the student's doing, and stops only what it spoils.
DAMAGED_STREAM = (zlib.error, lzma.LZMAError)


class NotCollected(Exception):
    """An entry or file not collected, with the one-line reason the summary shows."""


@dataclass
class Entry:
    """One file or folder of an archive, as the archive describes it."""

    name: str  # its path in the archive
    is_dir: bool
    is_file: bool  # False for links, devices and the like, which are never written
    mtime: float
    open: Callable[[], IO[bytes]]


def zip_entries(path: Path) -> Iterator[Entry]:
    """A zip's entries; only regular files (or entries without unix modes) count as files."""
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            unix_type = (info.external_attr >> 16) & 0o170000  # a symlink entry is a file whose text is its target
            yield Entry(info.filename, info.is_dir(), not info.is_dir() and unix_type in (0, 0o100000),
                        _zip_time(info), partial(archive.open, info))


def _zip_time(info: zipfile.ZipInfo) -> float:
    """An entry's time, read as UTC (a zip keeps no time zone), or 0 for none."""
    try:
        return datetime.datetime(*info.date_time, tzinfo=datetime.timezone.utc).timestamp()
    except ValueError:  # a date the archive made up (month 0): no time stamp is better than a false one
        return 0.0


def tar_entries(path: Path) -> Iterator[Entry]:
    """A tar's entries (any compression); only regular files count as files."""
    with tarfile.open(path) as archive:  # iterated, never extract(): that would keep owners, modes and links
        for info in archive:
            mtime = float(info.mtime) if 0 <= info.mtime < 2 ** 33 else 0.0  # a time os.utime can set, or none
            yield Entry(info.name, info.isdir(), info.isreg(), mtime, partial(_tar_file, archive, info))


def _tar_file(archive: tarfile.TarFile, info: tarfile.TarInfo) -> IO[bytes]:
    """A member's bytes; tarfile gives none for what is not a regular file, and only files are opened."""
    data = archive.extractfile(info)
    if data is None:
        raise tarfile.TarError(f"{info.name} is not a regular file")
    return data


def safe_parts(name: str, max_depth: int) -> list[str]:
    """The folders and file name an entry is written under, or NotCollected when the name would leave its folder."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts or "\0" in name or ":" in parts[0]:  # ':' as in C:, a Windows drive
        raise NotCollected("its name would put it outside the download")
    if len(parts) > max_depth:
        raise NotCollected(f"it is {len(parts) - 1} folders deep (the cap is {max_depth - 1}: BoundedExtractor.max_depth)")
    if any(len(os.fsencode(p)) > 255 for p in parts):
        raise NotCollected("a part of its name is longer than a file name can be")
    return parts


class BoundedExtractor(ExtractorPlugin):
    """nbgrader's extractor for the download's own archives only, with fixed modes and caps (module docstring)."""

    max_file_mb = Int(16, help="The largest file (MB, unpacked) collected from an LMS download; a larger one is "
                               "'not collected: too large' for its student. Notebooks are graded up to "
                               "GraderSettings.notebook_kb.").tag(config=True)
    max_submission_mb = Int(64, help="What one student's files in the download may unpack to (MB), all their "
                                     "uploads together.").tag(config=True)
    max_submission_files = Int(100, help="Files and folders one student's uploads in the download may hold, all "
                                         "together.").tag(config=True)
    max_total_mb = Int(2048, help="What one LMS download may unpack to in all (MB).").tag(config=True)
    max_entries = Int(100000, help="Files and folders one LMS download may unpack to (an entry a student's caps "
                                   "refuse spends only that student's); those past it are not read.").tag(config=True)
    max_depth = Int(8, help="Path parts (folders and the file) a path in an LMS download may have.").tag(config=True)
    shown_per_submission = 3  # refusals named in the summary per student; the rest are counted

    @staticmethod
    def student_of(name: str) -> str | None:
        """The student a path from the download's top level is named for (a folder's path ends in `/`), or None (the
        collector says, through LmsZipCollect): their caps count it."""
        return None

    @staticmethod
    def is_upload(name: str) -> bool:
        """Whether a name at archive/'s top is named as a student's upload, whatever the name the student gave it
        (the collector says, through LmsZipCollect): such an archive is never unpacked."""
        return False

    def extract(self, archive_path: str, extracted_path: str) -> None:
        """Copy the loose files of `archive_path` and unpack its top-level archives into `extracted_path`.

        `tops` lists each folder that is a top level of the download (extracted_path itself for loose
        files, and one folder per archive); `refused` maps each entry not written to why.
        """
        self.refused: dict[str, str] = {}
        self.tops: list[Path] = [Path(extracted_path)]
        self.unopened: list[str] = []  # the download's archives copied as files (the module docstring)
        self.loose: list[str] = []  # what at archive/'s top is not an archive, when that left some unopened
        self.read_as_uploads: list[str] = []  # archives, when archive/ holds nothing else, not unpacked by their names
        self._entries = 0
        self._bytes: Counter[str] = Counter()  # per student, and "" for the whole download
        self._files: Counter[str] = Counter()  # per student
        self._shown: Counter[str] = Counter()  # refusals named, per student
        self._unshown: Counter[str] = Counter()
        self._label: dict[str, str] = {}  # each student's first top-level file or folder, as the summary names it
        source, dest = Path(archive_path), Path(extracted_path)
        dest.chmod(0o700)  # nbgrader made it with the umask's modes
        items = sorted(item for item in source.iterdir() if not is_os_litter(item.name))
        is_archive = {item: item.is_file() and not item.is_symlink() and self._is_archive(item.name) for item in items}
        archives = all(is_archive.values())
        if archives:
            self.read_as_uploads = [i.name for i in items if self.is_upload(i.name)]
        else:
            self.unopened = [i.name for i in items if is_archive[i] and not self.is_upload(i.name)]
            self.loose = [i.name for i in items if not is_archive[i]] if self.unopened else []
        for item in items:
            if archives and item.name not in self.read_as_uploads:  # the LMS's download, as archives
                self._unpack(item, dest)
            else:
                self._copy_loose(item, source, dest)
        for student, count in self._unshown.items():
            self.refused[f"{self._label[student]} (and more)"] = f"{count} more of its entries not collected, for the same reasons"

    def _is_archive(self, name: str) -> bool:
        return any(name.endswith(ext) for ext in self.zip_ext)

    def _unpack(self, archive: Path, dest: Path) -> None:
        stem = archive.name.split(".")[0] or archive.name
        top = dest / stem
        if top.exists() or (archive.parent / stem).exists():
            self.refused[archive.name] = f"not unpacked: archive/ also has a file or folder named {stem}"
            return
        entries = zip_entries(archive) if zipfile.is_zipfile(archive) else tar_entries(archive)
        self._mkdir(top)
        self.tops.append(top)
        self.log.info("Unpacking %s into %s", archive, top)
        try:
            for entry in entries:
                if not self._write_entry(entry, top, f"{stem}/"):
                    break
        except UnicodeDecodeError as exc:  # zipfile decodes every name as it opens the zip: none of it is read
            self.refused[archive.name] = (f"not unpacked: an entry's name is not the UTF-8 the zip says it is ({exc}); "
                                          f"unpack it with another tool into archive/, in place of the zip")
        except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError, *DAMAGED_STREAM) as exc:  # a broken archive
            self.refused[archive.name] = f"the LMS archive could not be read to the end ({type(exc).__name__}: {exc})"

    def _copy_loose(self, item: Path, source: Path, dest: Path) -> None:
        """A file or folder of archive/ as it is: its archives copied, not opened; links never followed."""
        for path in _walk(item, self.max_depth):  # a deeper path is refused, not walked
            is_dir, is_file = path.is_dir() and not path.is_symlink(), path.is_file() and not path.is_symlink()
            if not self._write_entry(Entry(path.relative_to(source).as_posix(), is_dir, is_file, path.lstat().st_mtime,
                                           partial(_open_no_follow, path)), dest, ""):
                break

    def _write_entry(self, entry: Entry, top: Path, label: str) -> bool:
        """Write one entry, or say in `refused` why not; False once the download has too many entries."""
        first = next((p for p in entry.name.replace("\\", "/").split("/") if p not in ("", ".")), "")
        # whose caps (and shown refusals) it counts against: its student's, else the one share of what no one owns
        student = self.student_of(entry.name.rstrip("/") + "/" if entry.is_dir else entry.name) or UNOWNED
        self._label.setdefault(student, label + first if student != UNOWNED else UNOWNED_LABEL)
        try:
            parts = safe_parts(entry.name, self.max_depth)
            if not entry.is_dir and not entry.is_file:
                raise NotCollected("it is a link or a special file, not a file")
            if self._files[student] >= self.max_submission_files:
                raise NotCollected(f"{_whose(student)} hold more than {self.max_submission_files} files and "
                                   f"folders (BoundedExtractor.max_submission_files)")
            # Only an entry written spends the download's share: one a student's own caps refuse never does, so no
            # upload of many files (or folders) leaves the classmates after it uncollected.
            if self._entries >= self.max_entries:
                self.refused[label + entry.name] = (f"the download holds more than {self.max_entries} entries "
                                                    f"(BoundedExtractor.max_entries): this one and those after it")
                return False
            self._entries += 1
            self._files[student] += 1
            if entry.is_dir:
                self._mkdir(top.joinpath(*parts))
                return True
            for depth in range(1, len(parts)):
                self._mkdir(top.joinpath(*parts[:depth]))
            self._write(entry, top.joinpath(*parts), student)
        except NotCollected as why:
            self._refuse(student, label + entry.name, str(why))
        except FileExistsError:
            self._refuse(student, label + entry.name, "the archive holds two entries of this name")
        except (OSError, RuntimeError, zipfile.BadZipFile, NotImplementedError, *DAMAGED_STREAM) as exc:  # encrypted...
            self._refuse(student, label + entry.name, f"unreadable in the archive ({type(exc).__name__}: {exc})")
        return True

    def _refuse(self, student: str, name: str, why: str) -> None:
        """Name a refused entry, up to `shown_per_submission` of one student's (the rest are counted)."""
        self.log.warning("Not collected: %r: %s", name, why)  # also when nbgrader's zip_collect runs it
        if self._shown[student] < self.shown_per_submission:
            self._shown[student] += 1
            self.refused[name] = why
        else:
            self._unshown[student] += 1

    def _write(self, entry: Entry, path: Path, student: str) -> None:
        """Write one file, stopping at whichever cap comes first; a file cut short is removed."""
        caps = [(self.max_file_mb << 20, f"{self.max_file_mb} MB a file (BoundedExtractor.max_file_mb)"),
                ((self.max_submission_mb << 20) - self._bytes[student],
                 f"{self.max_submission_mb} MB {'for ' + UNOWNED_LABEL if student == UNOWNED else 'a student'} "
                 f"(BoundedExtractor.max_submission_mb)"),
                ((self.max_total_mb << 20) - self._bytes[""],
                 f"{self.max_total_mb} MB for the download (BoundedExtractor.max_total_mb)")]
        room, cap = min(caps, key=lambda c: c[0])
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        size = 0
        try:
            with os.fdopen(fd, "wb") as out, entry.open() as data:
                while chunk := data.read(CHUNK):
                    size += len(chunk)
                    if size > room:
                        raise NotCollected(f"too large (the cap is {cap})")
                    out.write(chunk)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        os.chmod(path, 0o600)  # the umask may only have narrowed it; never wider
        os.utime(path, (entry.mtime, entry.mtime))
        self._bytes[student] += size
        self._bytes[""] += size

    @staticmethod
    def _mkdir(path: Path) -> None:
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise NotCollected("a folder of its path is also a file in the download")
        path.mkdir(mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)


def _walk(item: Path, levels: int) -> Iterator[Path]:
    """`item` and, when it is a folder (not a link to one), what is under it to `levels` more levels, in order."""
    yield item
    if levels > 0 and item.is_dir() and not item.is_symlink():
        for child in sorted(item.iterdir()):
            yield from _walk(child, levels - 1)


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW)


def _open_no_follow(path: Path) -> IO[bytes]:
    """A file of archive/ opened for reading; a link in its place is refused, not followed."""
    return open(path, "rb", opener=_no_follow)


def copy_private(source: Path, dest: Path) -> None:
    """Copy a collected file into submitted/ with the same fixed mode (0600) and its LMS time."""
    shutil.copyfile(source, dest, follow_symlinks=False)
    os.chmod(dest, 0o600)
    mtime = source.stat().st_mtime
    os.utime(dest, (mtime, mtime))


def write_private(path: Path, text: str) -> None:
    """Write a file of the collection's own (0600), replacing what was there."""
    path.unlink(missing_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "w") as out:
        out.write(text)
