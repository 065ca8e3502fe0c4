"""What a collection wrote in submitted/<student>/<assignment>: the one rule by which every collection (an LMS
download's, collect.py; nbgrader's exchange's, nbgrader_glue/exchange_collect.py) keeps a folder the instructor
edited.

Each collection records, for each student's folder it wrote, every file in it by its path from the folder
(`data/points.csv` too: the exchange's Collect stages the files submission_files names where the student had them)
and the SHA-256 of all of it (`held`, read of the folder it put in place), in a record of its own beside the LMS
download (downloaded/<assignment>/): `LMS_RECORD` (which `make grades-lms` also reads for the LMS's numbers, and
which holds each id's LMS identity, `other_identity`) and `EXCHANGE_RECORD`. A collection replaces a folder only
while it holds exactly what one of them records writing (or nothing); anything else in it (a hand fix anywhere in any file, a regrade's notebook, a timestamp.txt written or
removed for an extension, a file added or removed at any depth) keeps the folder whole, and `kept_because` says
why. So does a folder no record names: no collection wrote it (the instructor's copy of work that came by mail,
or a folder a kit before the records collected), and the line says how to take the new submission instead, since
hand work is never undone. What the intake's walk never reads (files.skipped) is no one's edit, and the folder is
read as that walk reads one (no link followed), within bounds no setting moves (HELD_BYTES, HELD_ENTRIES).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable

from nbgrader.apps.zipcollectapp import ZipCollectApp
from nbgrader.coursedir import CourseDirectory

from ..outputs.inert import escaped
from .files import TIMESTAMP, TIMESTAMP_BYTES, IntakeRules, Refused, entries, read_regular
from .unpack import write_private

LMS_RECORD = "collected.json"
EXCHANGE_RECORD = "exchange-collected.json"
LMS_ID = "lms_id"  # an LMS entry's LMS number: {file name: its SHA-256, ..., LMS_ID: the number}
# An LMS entry's identity as the LMS wrote it (`ann.lee`, `anon_Q9w3e`, `smithjohn_12345`), which the id cuts down
# (red-b26 X35-b26-1): a later download that gives the id to another identity is refused (collect.py, other_identity)
LMS_IDENTITY = "lms_identity"
SHOWN_CHARS = 160  # an archive entry's name may be 64 KB long: the summary shows its start
UNSEEN = ""  # `held`'s key for what its walk did not reach: no path, so in no record
NOT_RECORDED = ("no collection records writing it (your copy, or one a kit before the records collected): delete the "
                "folder to collect the new submission")


def shown(text: str) -> str:
    """`text` for one line of the summary: every character a terminal or a page could act on written as an
    escape (\\x1b, \\u202e), and cut to SHOWN_CHARS."""
    return escaped(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…")


# How much of a file, and how many entries of a folder, `held` reads at least, whatever the settings: a record
# written under one notebook_kb or submission_entries is compared under the next, so what it reads must not move
# with them (a raised notebook_kb would turn every collected notebook past the old cap into a hand edit).
HELD_BYTES = 64 * 2**20
HELD_ENTRIES = 10_000


def file_bytes(rules: IntakeRules) -> int:
    """How much of one file `held` reads: at least the largest of the intake's caps on a file it takes, which is
    the most a collection writes, and at least HELD_BYTES."""
    return max(rules.notebook_bytes, rules.extra_bytes, TIMESTAMP_BYTES, HELD_BYTES)


def digest(path: Path, limit: int) -> str:
    """The SHA-256 of a whole file, read without following a link, or why the intake refuses it. A file longer than
    `limit` (file_bytes: no collection writes one; put in submitted/ by hand, it may be a terabyte-long sparse file)
    is read up to `limit` + 1 bytes, and its size is part of the digest."""
    try:
        data, size = read_regular(path, limit)
    except Refused as why:
        return f"refused: {why}"
    sha = hashlib.sha256(data).hexdigest()
    return sha if size <= limit else f"{sha} of the first {limit + 1} of {size} bytes"


def held(folder: Path, rules: IntakeRules) -> dict[str, str] | None:
    """What `folder` holds as the rule compares it (module docstring): every entry the intake's walk sees, by its
    path from the folder, with its `digest` (what it is, when it is no file), and UNSEEN when the walk stopped (at
    the larger of submission_entries and HELD_ENTRIES); None when there is no folder."""
    if not folder.is_dir():
        return None
    walked = max(rules.max_entries, HELD_ENTRIES)
    found, complete = entries(folder, walked)
    limit = file_bytes(rules)
    now = {f.path: digest(folder / f.path, limit) if f.kind == "a file" else f"refused: it is {f.kind}, not a file"
           for f in found}
    if not complete:
        now[UNSEEN] = f"more than {walked} entries"
    return now


def record_path(config, assignment: str, name: str) -> Path:
    """Where the record `name` of `assignment`'s collections is: beside its LMS download, downloaded/<assignment>/."""
    app = ZipCollectApp(config=config)  # not initialised: its settings alone
    return Path(CourseDirectory(config=config).root, app.collect_directory_structure.format(
        downloaded=app.downloaded_directory, assignment_id=assignment, collect_step=name))


def read_record(path: Path) -> dict:
    """A record as its collection wrote it (whole, os.replace); one that cannot be read records nothing."""
    try:
        record = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def write_record(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    write_private(partial, json.dumps(record, indent=1, sort_keys=True))
    os.replace(partial, path)


def files_of(entry) -> dict[str, str]:
    """A record's entry for one student as the files it records writing."""
    return ({name: sha for name, sha in entry.items() if name not in (LMS_ID, LMS_IDENTITY)}
            if isinstance(entry, dict) else {})


def other_identity(entry, identity: str, number: str) -> str | None:
    """The LMS identity a record's entry for one student id names, when a file of `identity` (with the LMS number
    `number`, or "") is another user's; None when it is the same user, or the entry names none (a kit before the
    identities recorded none, and no collection yet). One LMS number is one user, whatever its name is spelled as."""
    recorded = entry.get(LMS_IDENTITY) if isinstance(entry, dict) else None
    if not isinstance(recorded, str) or recorded == identity or (number and entry.get(LMS_ID) == number):
        return None
    return recorded


def kept_because(dest: Path, now: dict[str, str], written: dict[str, str], others: list[dict[str, str]],
                 newer: Callable[[str], str | None] = lambda name: None) -> str | None:
    """Why `dest`, which holds `now`, stays as it is: no collection records writing it, or it holds anything no
    collection wrote there, or changed since; None when a collection may replace it (it holds nothing, or exactly
    what this collection (`written`) or another (`others`) records writing). `newer(name)`: a collection's own
    reason for a file it would write (the LMS's: a hand copy newer than its upload)."""
    if not now or now == written or now in others:
        return None
    if not written and not any(others):
        return NOT_RECORDED
    for name, sha in sorted(now.items()):
        if written.get(name) == sha:
            continue
        if name == UNSEEN:
            return f"it holds {sha}, more than a collection writes (put there by hand)"
        if why := newer(name):
            return why
        if name in written:
            return f"its {shown(name)} changed after it was collected (a regrade, or by hand)"
        if name == TIMESTAMP:  # no collection records writing one for this student
            return (f"its {TIMESTAMP} is not one a collection records writing (yours, an extension, or the LATE "
                    f"time stamp of a kit that recorded none): delete it, or the folder, to collect it again")
        return f"its {shown(name)} is not what a collection wrote there (put there by hand)"
    gone = sorted(set(written) - set(now))
    return f"{', '.join(map(shown, gone))} {'was' if len(gone) == 1 else 'were'} removed from it after it was collected"
