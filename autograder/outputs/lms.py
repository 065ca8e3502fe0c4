"""`make grades-lms`: the gradebook as a CSV for Canvas's gradebook import (Grades > Import).

Canvas reads a CSV shaped like its own gradebook export: the columns Student, ID, SIS User ID,
SIS Login ID and Section, then one column per assignment, and optionally a "Points Possible" row under
the header. Canvas matches each row to a student by ID (its user id) or the SIS ids, and a column whose
name is not one of the course's assignments becomes a new assignment on import.

* Student: "Last, First" where the gradebook has names, else the student id.
* ID: the Canvas user id, the LMS's number a Canvas download of this assignment named the student with
  (`smithjohn_12345`, autograder/intake/collect.py, whose collected.json records it for the folders it wrote; never
  an id that merely ends in digits, nor a student number the download's last pattern gave as the id, nor a folder
  no download of this assignment wrote, whose name someone chose and may be an id another assignment's download
  gave a classmate); empty otherwise.
* SIS Login ID (or SIS User ID, as `c.GraderSettings.canvas_folder_ids` says the folders you named are): the student
  id itself when it holds no Canvas number (ids you gave submitted/ yourself).
* ID also comes from `c.GraderSettings.canvas_roster`, a gradebook export of Canvas's, for a student whose id is
  the `canvas_folder_ids` column of exactly one of its rows (read_roster); a row with no Canvas user id is named.
  An id the roster gives another column or more than one user (a student number chosen as a login, a GitHub
  username that is a classmate's student number) could be either user's: its row is left out and named.
* The assignment column: the total when every written answer is graded, else blank, so that an early import
  never turns the autograded points into a grade (`c.GraderSettings.canvas_partial` exports the points graded
  so far instead; the command says how many students either is); "Points Possible" is the assignment's maximum. Its header
  is `c.GraderSettings.canvas_column`, the assignment's header in a gradebook export from Canvas, "Modules
  and SGD (123456)" (name and Canvas's assignment id: what Canvas matches an imported column by), else the
  assignment id, which Canvas would import as a new assignment.
* A student the grader failed on: an empty cell (Canvas records no score), never a zero.
* One row per Canvas user: students given the same Canvas user id (ids that end in the same number: given by hand,
  or a name Canvas changed between downloads; or an id that ends in the number the roster gives another student, a
  login chosen to end in a classmate's) are left out and named, since either score could be the wrong one.

A cell a spreadsheet would run as a formula gets a leading `'`, as in grades.csv (autograder/outputs/inert.py).
"""
from __future__ import annotations

import csv
import os
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .export import number
from .inert import say, spreadsheet_cell

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
SIS_COLUMNS = ("SIS Login ID", "SIS User ID")  # c.GraderSettings.canvas_folder_ids: the first is the default
CHOSEN = "none"  # c.GraderSettings.canvas_folder_ids: folder names the students chose (GitHub usernames), no SIS id
CANVAS_ID = re.compile(r"(?:^|_)(\d+)$")  # a name of no letter a-z or digit gives the number alone


def canvas_rows(rows: list[dict], assignment: str, column: str = "", partial: bool = False,
                roster: Roster | None = None, collected: Mapping[str, str | None] | None = None) -> CanvasRows:
    """The import's header and rows (the Points Possible row first); `column` heads the scores (default: the
    assignment id); `partial`: a student whose hand grades are not all given or reviewed gets the points so far
    instead of a blank; `roster`: Canvas user ids by the SIS id the folders carry (read_roster); `collected`: the
    ids the LMS collection of `assignment` gave, with the LMS's number for each (collect.collected_ids), the only
    Canvas user ids an id gives."""
    roster, collected = roster or Roster(), collected or {}
    mine = [r for r in rows if r["assignment"] == assignment]
    header = HEADER + [column or assignment]
    possible = mine[0]["max_score"] if mine else ""
    table = CanvasRows(header, [["Points Possible", "", "", "", "", possible]])
    table.refused = {r["student_id"]: why for r in mine if (why := roster_refusal(r["student_id"], roster, collected))}
    if roster.column == CHOSEN:  # a name a student chose may be a classmate's SIS id: only a download's number counts
        table.refused.update({r["student_id"]: "its folder's name is one the student chose, no SIS id "
                              f"(c.GraderSettings.canvas_folder_ids = {CHOSEN!r}), and no download of {assignment} "
                              "gave it a Canvas user id" for r in mine if not _lms_number(r["student_id"], collected)})
    canvas_ids = {r["student_id"]: canvas_id_of(r["student_id"], roster, collected) for r in mine
                  if r["student_id"] not in table.refused}
    numbers = Counter(filter(None, canvas_ids.values()))  # from an id's ending and the roster alike: one Canvas user
    table.shared = sorted(student for student, canvas_id in canvas_ids.items() if numbers[canvas_id] > 1)
    for row in mine:
        student = row["student_id"]
        if student in table.shared or student in table.refused:
            continue
        canvas_id = canvas_ids[student]
        if not canvas_id:
            table.without_id.append(student)
        name = ", ".join(filter(None, [row["last_name"], row["first_name"]])) or student
        score = row["score"]
        if score == "" and row["auto_score"] != "":  # a blank auto_score: the grader failed on it, no score at all
            score = _after_penalty(row) if partial else ""
            table.pending.append(student)
        sis = "" if _lms_number(student, collected) else student  # the LMS's id is no SIS id
        table.rows.append([name, canvas_id, *(sis if roster.column == key else "" for key in HEADER[2:4]), "", score])
    return table


def _after_penalty(row: dict) -> str:
    """The points graded so far (grades.csv's raw_score: a flagged hand grade as its autograded score, export.so_far)
    less the late penalty, as the total will take it off."""
    return number(max(0.0, float(row["raw_score"] or 0) - float(row["late_submission_penalty"] or 0)))


def canvas_id_of(student: str, roster: Roster, collected: Mapping[str, str | None]) -> str:
    """The Canvas user id a student's row is imported to: the LMS's number a Canvas download gave the id with, else
    the roster's, else "" (none known). An id ending in digits that no download gave (a login `eve_12345`), or that
    a download gave without an LMS number (a student number `20231234` named by the file), is no Canvas user's:
    its row would fill the grade of the student the number is."""
    return _lms_number(student, collected) or roster.ids.get(student, "")


def roster_refusal(student: str, roster: Roster, collected: Mapping[str, str | None]) -> str:
    """Why the roster cannot say which Canvas user a student's row is ("" when it can, or is not asked: the
    download gave the id's number)."""
    return "" if _lms_number(student, collected) else roster.refused.get(student, "")


def _lms_number(student: str, collected: Mapping[str, str | None]) -> str:
    """The LMS's number the download gave `student`'s id with ("" when none); for an id recorded before the kit
    kept the number, the number it ends in (the LMS's ids were the only ones that did then)."""
    if student not in collected:
        return ""
    number = collected[student]
    ending = CANVAS_ID.search(student) if number is None else None
    return ending.group(1) if ending else number or ""


@dataclass
class CanvasRows:
    """The import file's header and rows, and the students the command names."""

    header: list[str]
    rows: list[list[str]]
    pending: list[str] = field(default_factory=list)  # hand grades not all given or reviewed: blank (or partial) total
    shared: list[str] = field(default_factory=list)  # left out: another student has their Canvas number
    without_id: list[str] = field(default_factory=list)  # no Canvas user id known: matched by its SIS id alone
    refused: dict[str, str] = field(default_factory=dict)  # left out: the roster gives the id to no one user, and why


@dataclass
class Roster:
    """What c.GraderSettings.canvas_roster says of the ids: the Canvas user id of each id that is the `column` of
    exactly one user, and why each other id it holds names no one user."""

    ids: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    column: str = SIS_COLUMNS[0]  # c.GraderSettings.canvas_folder_ids


def read_roster(path: Path, column: str = SIS_COLUMNS[0]) -> Roster:
    """The Roster of a gradebook export of Canvas's (Grades > Export), for folders named by `column`. A folder name
    may be one the student chose (a login, a GitHub username): matched by `column` alone, and only when no other
    user has it in either SIS column, so that no chosen name takes a classmate's Canvas user id."""
    claims: dict[str, set[tuple[str, str]]] = defaultdict(set)  # a SIS id -> (its column, the Canvas user id) of each
    with path.open(newline="", encoding="utf-8-sig") as handle:
        for row in csv.DictReader(handle):
            canvas_id = (row.get("ID") or "").strip()
            if not canvas_id.isdigit():  # Canvas's "Points Possible" row, a test student's blank id
                continue
            for key in SIS_COLUMNS:
                if (row.get(key) or "").strip():
                    claims[row[key].strip()].add((key, canvas_id))
    roster = Roster(column=column)
    for sis_id, given in claims.items():
        users = sorted({canvas_id for _, canvas_id in given})
        if len(users) > 1:
            roster.refused[sis_id] = "the roster gives it to " + " and ".join(
                f"Canvas user {canvas_id} ({key})" for key, canvas_id in sorted(given, key=lambda kc: kc[1]))
        elif (column, users[0]) in given:
            roster.ids[sis_id] = users[0]
        else:
            roster.refused[sis_id] = (f"the roster has it as Canvas user {users[0]}'s {given.pop()[0]}, not as a "
                                      f"{column} (c.GraderSettings.canvas_folder_ids)")
    return roster


@dataclass(frozen=True)
class CanvasImport:
    """What `write_canvas_csv` wrote."""

    path: Path
    students: int  # rows written
    pending: list[str]  # students with hand grades not given or reviewed yet (blank, or the points so far)
    shared: list[str]  # students left out: another student has their Canvas number
    column: str  # the assignment's column header
    without_id: list[str] = field(default_factory=list)  # rows with no Canvas user id
    partial: bool = False  # c.GraderSettings.canvas_partial
    refused: dict[str, str] = field(default_factory=dict)  # students left out: the roster ties them to no one user
    folder_ids: str = SIS_COLUMNS[0]  # c.GraderSettings.canvas_folder_ids


def write_canvas_csv(root: Path, assignment: str, dest: Path) -> CanvasImport:
    """Write the import file for Canvas."""
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    from ..intake.collect import collected_ids
    from ..settings import GraderSettings, load_config
    from .export import grade_rows

    config = load_config(root)
    settings = GraderSettings(config=config)
    coursedir = CourseDirectory(config=config)
    database = Path(coursedir.db_url.replace("sqlite:///", "", 1))
    if coursedir.db_url.startswith("sqlite:///") and not database.is_file():
        raise FileNotFoundError(f"no gradebook at {database}: run `make grade` first")
    column = settings.canvas_folder_ids
    chosen = column == CHOSEN or not settings.canvas_roster
    roster = Roster(column=column) if chosen else read_roster(root / settings.canvas_roster, column)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        _, rows = grade_rows(gradebook, [assignment])
    table = canvas_rows(rows, assignment, settings.canvas_column, settings.canvas_partial, roster, collected_ids(config, assignment))
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    with partial.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")  # a cell holding a CR is quoted (export.py)
        writer.writerows([spreadsheet_cell(cell) for cell in row] for row in [table.header, *table.rows])
    os.replace(partial, dest)
    return CanvasImport(dest, len(table.rows) - 1, table.pending, table.shared, table.header[-1], table.without_id,
                        settings.canvas_partial, table.refused, column)


def command(root: Path, name: str, dest: Path | None = None) -> int:
    """`python -m autograder grades-lms`: write the import file for assignment `name` and say what it holds, or why
    not (exit 1)."""
    try:
        written = write_canvas_csv(root, name, dest or root / "reports" / f"{name}-canvas.csv")
    except FileNotFoundError as error:
        say(error, sys.stderr)
        return 1
    say(f"Wrote {written.path}: {written.students} students, for Canvas's Grades > Import, in the column "
          f"{written.column!r}" + (" (Canvas makes it a new assignment: c.GraderSettings.canvas_column names an "
                                   "existing one)" if written.column == name else "") + ".")
    if written.pending:
        say(f"{len(written.pending)} of them have written answers not graded yet or hand grades waiting for review "
            f"({', '.join(written.pending)}): "
            + ("their column holds the points graded so far (c.GraderSettings.canvas_partial)." if written.partial else
               "their column is left blank, so the import sets no grade for them (grade or review them in the formgrader, "
               "then run this again; c.GraderSettings.canvas_partial = True exports the points graded so far)."))
    if written.without_id:
        say(f"{len(written.without_id)} rows carry no Canvas user id ({', '.join(written.without_id)}): Canvas matches "
            f"them by {written.folder_ids} alone; c.GraderSettings.canvas_roster names Canvas's gradebook export to "
            f"read it from.")
    if written.refused:
        say(f"Left out {len(written.refused)} students the roster ties to no one Canvas user as a {written.folder_ids} "
            f"(c.GraderSettings.canvas_folder_ids), so either score could be another student's: "
            + "; ".join(f"{student}: {why}" for student, why in sorted(written.refused.items())) + ".")
    if written.shared:
        say(f"Left out {len(written.shared)} students given the same Canvas user id, by their ids' ending or the "
              f"roster ({', '.join(written.shared)}): "
              f"one Canvas user is one row, so give them apart in the gradebook and run this again.")
    return 0
