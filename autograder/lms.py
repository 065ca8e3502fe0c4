"""`make grades-lms`: the gradebook as a CSV for Canvas's gradebook import (Grades > Import).

Canvas reads a CSV shaped like its own gradebook export: the columns Student, ID, SIS User ID,
SIS Login ID and Section, then one column per assignment, and optionally a "Points Possible" row under
the header. Canvas matches each row to a student by ID (its user id) or the SIS ids, and a column whose
name is not one of the course's assignments becomes a new assignment on import.

* Student: "Last, First" where the gradebook has names, else the student id.
* ID: the Canvas user id, read from the end of a student id that zip_collect made from a Canvas
  download (`smithjohn_12345`, autograder/collect.py); empty otherwise.
* SIS Login ID: the student id itself when it holds no Canvas number (ids you gave submitted/ yourself).
* The assignment column: the total when every written answer is graded, else the autograded points
  (the command says how many students that is); "Points Possible" is the assignment's maximum. Its header
  is `c.GraderSettings.canvas_column`, the assignment's header in a gradebook export from Canvas, "Modules
  and SGD (123456)" (name and Canvas's assignment id: what Canvas matches an imported column by), else the
  assignment id, which Canvas would import as a new assignment.
* A student the grader failed on: an empty cell (Canvas records no score), never a zero.
* One row per Canvas user: students whose ids end in the same Canvas number (ids given by hand, or a
  name Canvas changed between downloads) are left out and named, since either score could be the wrong one.

A cell a spreadsheet would run as a formula gets a leading `'`, as in grades.csv (autograder/inert.py).
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .inert import say, spreadsheet_cell

ROOT = Path(__file__).resolve().parent.parent
HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_ID = re.compile(r"_(\d+)$")


def canvas_rows(rows: list[dict], assignment: str, column: str = "") -> tuple[list[str], list[list[str]], list[str], list[str]]:
    """(header, data rows with the Points Possible row first, students whose manual points are not in,
    students left out because another student has their Canvas number); `column` heads the scores
    (default: the assignment id)."""
    mine = [r for r in rows if r["assignment"] == assignment]
    header = HEADER + [column or assignment]
    possible = mine[0]["max_score"] if mine else ""
    out = [["Points Possible", "", "", "", "", possible]]
    pending = []
    numbers = Counter(m.group(1) for r in mine if (m := CANVAS_ID.search(r["student_id"])))
    shared = sorted(r["student_id"] for r in mine
                    if (m := CANVAS_ID.search(r["student_id"])) and numbers[m.group(1)] > 1)
    for row in mine:
        if row["student_id"] in shared:
            continue
        number = CANVAS_ID.search(row["student_id"])
        name = ", ".join(filter(None, [row["last_name"], row["first_name"]])) or row["student_id"]
        score = row["score"]
        if score == "" and row["auto_score"] != "":  # a blank auto_score: the grader failed on it, and Canvas gets no score
            score = row["auto_score"]
            pending.append(row["student_id"])
        out.append([name, number.group(1) if number else "", "", "" if number else row["student_id"], "", score])
    return header, out, pending, shared


@dataclass(frozen=True)
class CanvasImport:
    """What `write_canvas_csv` wrote."""

    path: Path
    students: int  # rows written
    pending: list[str]  # students whose written answers are not graded yet (the autograded points only)
    shared: list[str]  # students left out: another student has their Canvas number
    column: str  # the assignment's column header


def write_canvas_csv(root: Path, assignment: str, dest: Path) -> CanvasImport:
    """Write the import file for Canvas."""
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    from .export import grade_rows
    from .settings import GraderSettings, load_config

    config = load_config(root)
    coursedir = CourseDirectory(config=config)
    database = Path(coursedir.db_url.replace("sqlite:///", "", 1))
    if coursedir.db_url.startswith("sqlite:///") and not database.is_file():
        raise FileNotFoundError(f"no gradebook at {database}: run `make grade` first")
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        _, rows = grade_rows(gradebook, [assignment])
    header, data, pending, shared = canvas_rows(rows, assignment, GraderSettings(config=config).canvas_column)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    with partial.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")  # a cell holding a CR is quoted (export.py)
        writer.writerows([spreadsheet_cell(cell) for cell in row] for row in [header, *data])
    os.replace(partial, dest)
    return CanvasImport(dest, len(data) - 1, pending, shared, header[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.lms", description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", help="assignment id (default: the course's only one)")
    parser.add_argument("--to", type=Path, help="where to write (default reports/<assignment>-canvas.csv)")
    args = parser.parse_args(argv)
    from .assignment import find_assignment

    name = find_assignment(ROOT, args.assignment).name
    try:
        written = write_canvas_csv(ROOT, name, args.to or ROOT / "reports" / f"{name}-canvas.csv")
    except FileNotFoundError as error:
        say(error, sys.stderr)
        return 1
    say(f"Wrote {written.path}: {written.students} students, for Canvas's Grades > Import, in the column "
          f"{written.column!r}" + (" (Canvas makes it a new assignment: c.GraderSettings.canvas_column names an "
                                   "existing one)" if written.column == name else "") + ".")
    if written.pending:
        say(f"{len(written.pending)} of them have written answers not graded yet ({', '.join(written.pending)}): "
              f"their column holds the autograded points only (grade them in the formgrader, then run this again).")
    if written.shared:
        say(f"Left out {len(written.shared)} students whose ids end in the same Canvas number "
              f"({', '.join(written.shared)}): "
              f"one Canvas user is one row, so give them apart in the gradebook and run this again.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
