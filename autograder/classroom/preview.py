"""A regrade preview: the grades a changed check, reference or setting would give, before any is written.

When the course's side of some grades changed (changes.Plan.stale), `make grade` grades those students exactly
as it would for real (nbgrader's autograde, the hidden suites, the late penalty) but into a scratch copy of the
course's gradebook and autograded/ under .grading/preview/ (`scratch_config`), then compares the copy with the
real gradebook and reports (`compare`): for each student and part whose score would change, the old score, the
new one and the first check whose verdict changed. The table is printed and written to
reports/<assignment>-regrade-preview.csv; `make grade CONFIRM=yes` applies it, and `make preview` shows it
at any time. Nothing outside .grading/preview/ is written while previewing, but that table and what it was made
from (`record_previewed`): CONFIRM=yes applies a regrade only to students previewed under the inputs they have
now (`not_previewed`), so that a check edited after the preview is not applied unseen; the others are previewed
again, their grades left as they were (grade_class). `make preview` grades the
class as submitted/ holds it, collecting no LMS download (students.take_roll), and `make grade` previews after
its collect step, as part of grading.
"""
from __future__ import annotations

import copy
import csv
import json
import shutil
import sqlite3
from contextlib import closing
from dataclasses import astuple, dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from traitlets.config import Config

from ..nbgrader_glue.preprocessors.run_hidden_suites import report_path
from ..outputs.export import graded_parts
from ..outputs.inert import spreadsheet_cell
from ..report import Report, ReportUnreadable
from .ledger import Inputs, inputs_json

COLUMNS = ("student", "part", "old", "new", "first_changed_check")


@dataclass(frozen=True)
class Change:
    """One student's part that a regrade would change."""

    student: str
    part: str  # a grade id, or "late penalty"
    old: str
    new: str
    first_changed_check: str  # "" when no check's verdict tells (a penalty, a report missing)

    def line(self) -> str:
        check = f"  first changed: {self.first_changed_check}" if self.first_changed_check else ""
        return f"  {self.student:<16}{self.part:<28}{self.old:>6} -> {self.new:<6}{check}"


def scratch_config(config: Config, folder: Path) -> Config:
    """The course's configuration, with the gradebook and autograded/ in `folder` (a copy of the gradebook)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, mode=0o700)
    scratch = copy.deepcopy(config)
    scratch.CourseDirectory.db_url = f"sqlite:///{folder / 'gradebook.db'}"
    scratch.CourseDirectory.autograded_directory = str(folder / "autograded")
    return scratch


def copy_gradebook(live: str, scratch: str) -> None:
    """SQLite's backup of the live gradebook into the scratch one (whole, even while the formgrader writes)."""
    with closing(sqlite3.connect(live.replace("sqlite:///", "", 1).split("?")[0])) as source, \
            closing(sqlite3.connect(scratch.replace("sqlite:///", "", 1))) as target:
        source.backup(target)


def _scores(gb: Gradebook, assignment: str, student: str, parts: list[str]) -> tuple[dict[str, float | None], float]:
    """Each autograded part's score and the late penalty of a student's submission (None: not recorded)."""
    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        return {part: None for part in parts}, 0.0
    grades = {grade.name: grade.auto_score for notebook in submission.notebooks for grade in notebook.grades}
    return {part: grades.get(part) for part in parts}, submission.late_submission_penalty or 0.0


def _first_changed(old: Report | None, new: Report | None, part: str) -> str:
    """The first check of `part` whose verdict differs between the two reports (or that only one has); "" when
    either is missing or says the notebook was not graded (no check of it ran)."""
    if old is None or new is None or old.error or new.error:
        return ""
    before = {t.name: t.passed for p in old.parts if p.grade_id == part for t in p.tests}
    for p in new.parts:
        if p.grade_id != part:
            continue
        for test in p.tests:
            if before.get(test.name) != test.passed:
                verdict = "passes" if test.passed else "fails"
                return f"{test.name} now {verdict}" if test.name in before else f"{test.name} (new check) {verdict}"
    gone = [name for name in before if name not in {t.name for p in new.parts if p.grade_id == part for t in p.tests}]
    return f"{gone[0]} (removed)" if gone else ""


def _report(coursedir, student: str, assignment: str) -> Report | None:
    try:
        return Report.load(report_path(coursedir, student, assignment))
    except (OSError, ReportUnreadable):
        return None


def _number(value: float | None) -> str:
    return "-" if value is None else f"{round(value, 4):g}"


def compare(live, scratch, assignment: str, students: list[str]) -> list[Change]:
    """What the scratch run changed against the live gradebook, student by student, part by part."""
    changes: list[Change] = []
    with Gradebook(live.db_url, live.course_id) as old_book, Gradebook(scratch.db_url, scratch.course_id) as new_book:
        parts = [name for name, _ in graded_parts(new_book.find_assignment(assignment))[0]]
        for student in students:
            old, old_penalty = _scores(old_book, assignment, student, parts)
            new, new_penalty = _scores(new_book, assignment, student, parts)
            old_report, new_report = _report(live, student, assignment), _report(scratch, student, assignment)
            for part in parts:
                if old[part] != new[part]:
                    changes.append(Change(student, part, _number(old[part]), _number(new[part]),
                                          _first_changed(old_report, new_report, part)))
            if round(old_penalty, 4) != round(new_penalty, 4):
                changes.append(Change(student, "late penalty", _number(old_penalty), _number(new_penalty), ""))
    return changes


def write_table(changes: list[Change], dest: Path) -> Path:
    """The preview as a CSV (a row per change; formula-like cells quoted, as in grades.csv)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with dest.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(COLUMNS)
        writer.writerows([spreadsheet_cell(cell) for cell in astuple(change)] for change in changes)
    return dest


def read_table(path: Path) -> list[Change]:
    """A preview CSV as written (the tests compare what a preview named with what applying it did)."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [Change(**row) for row in csv.DictReader(handle)]


def _previewed_path(root: Path, assignment: str) -> Path:
    return root / ".grading" / f"previewed-{assignment}.json"


def record_previewed(root: Path, assignment: str, inputs: dict[str, Inputs]) -> None:
    """Which students a preview showed, each with the inputs (submission, suites, reference, settings) it graded:
    those whose outcome it showed (grade_students' Graded.inputs), never one the grader failed on."""
    path = _previewed_path(root, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({student: inputs_json(given) for student, given in inputs.items()}, sort_keys=True))


def not_previewed(root: Path, assignment: str, inputs: dict[str, Inputs]) -> list[str]:
    """The students among `inputs` whose regrade no preview showed under these very inputs."""
    try:
        seen = json.loads(_previewed_path(root, assignment).read_text())
    except (OSError, ValueError):
        seen = {}
    seen = seen if isinstance(seen, dict) else {}
    return sorted(student for student, given in inputs.items() if seen.get(student) != inputs_json(given))
