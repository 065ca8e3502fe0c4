"""A regrade preview: the grades a changed check, reference or setting would give, before any is written.

When the course's side of some grades changed (changes.Plan.stale), `make grade` grades those students exactly
as it would for real (nbgrader's autograde, the hidden suites, the late penalty) but into a scratch copy of the
course's gradebook and autograded/ in a folder of the run's own under .grading/ (`scratch_folder`, `scratch_config`:
two previews at once, `make grade` and the formgrader's Autograde button, never share one), then compares the
copy's grades before and after (`standings`, `compare`): for each student and part whose score would change, the
old score, the new one and the first check whose verdict changed. A score is the one in force, as grades.csv shows
it: a part the instructor scored by hand keeps that score through a regrade, and the preview says so (`Kept`) rather
than show an autograded score that never counts; the points counted so far (export.grade_so_far), which a
regrade moves when it raises or clears a hand grade's review flag, are shown wherever they move, written answers'
too, and so are the flag and the final score it blanks or gives. A student the grader failed on is shown no change:
CONFIRM=yes holds them. The table is printed and written to reports/<assignment>-regrade-preview.csv; `make grade CONFIRM=yes` applies
it, and `make preview` shows it at any time. Nothing outside the scratch folder is written while previewing, but
that table and what it was made from (`record_previewed`): CONFIRM=yes applies a regrade only to students previewed
under the inputs they have now, so that a check edited after the preview is not applied unseen; the others are
previewed again, their grades left as they were (grade_class). And it applies the checks' outcome the preview gave
them (`previewed_reports`), never a second run of their code, which may answer otherwise (the clock, `secrets`).
`make preview` grades the class as submitted/ holds it, collecting no LMS download (students.take_roll), and
`make grade` previews after its collect step, as part of grading.
"""
from __future__ import annotations

import copy
import csv
import json
import os
import sqlite3
import tempfile
from contextlib import closing
from dataclasses import astuple, dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from traitlets.config import Config

from ..nbgrader_glue.preprocessors.run_hidden_suites import report_path
from ..outputs.export import grade_rows, grade_so_far, graded_parts, waits_for_grader
from ..outputs.inert import spreadsheet_cell
from ..report import Report, ReportUnreadable
from .ledger import Inputs, hand_graded, inputs_json

COLUMNS = ("student", "part", "old", "new", "first_changed_check")


@dataclass(frozen=True)
class Change:
    """One student's part that a regrade would change."""

    student: str
    part: str  # a grade id, "<grade id> so far" (a hand score waiting for review: Kept), or "late penalty"
    old: str
    new: str
    first_changed_check: str  # "" when no check's verdict tells (a penalty, a report missing)

    def line(self) -> str:
        check = f"  first changed: {self.first_changed_check}" if self.first_changed_check else ""
        return f"  {self.student:<16}{self.part:<28}{self.old:>6} -> {self.new:<6}{check}"


@dataclass(frozen=True)
class Kept:
    """A part the instructor graded by hand (ledger.hand_graded: a score, or extra credit alone) whose review flag a
    regrade would raise or clear, or whose autograded score it would change while the score in force stays: the hand
    grade stays (SaveAutoGradesAtOnce writes the autograded score beside it). What it counts so far follows the flag
    after the regrade (export.grade_so_far), and when that moves, a Change of "<part> so far" shows it too."""

    student: str
    part: str
    score: str  # the instructor's, in force before and after: the hand score, or "+<n> extra credit" alone
    autograded: tuple[str, str]  # the autograded score before and after, which counts only while flagged
    flagged: tuple[bool, bool]  # flagged for review before and after: CONFIRM=yes raises or clears the flag so
    counted: str  # what it counts so far after the regrade while flagged (its checks' score, or 0 waiting)
    why: str  # why it is flagged after the regrade (the answer changed since, or the file is not graded now)

    def line(self) -> str:
        head = f"  {self.student:<16}{self.part:<28}{self.score:>6} stays"
        if self.flagged[1]:
            return f"{head}, waiting for your review (scored by hand, {self.why}; counted so far as {self.counted})"
        if self.flagged[0]:
            return f"{head} and counts again (scored by hand on the answer graded now: the regrade clears its flag)"
        return f"{head} (scored by hand; its checks would give {' -> '.join(self.autograded)})"


@dataclass(frozen=True)
class Part:
    """A part of a student's submission in a gradebook, as a regrade preview reads it (None: no score)."""

    score: float | None  # in force, as grades.csv's part column shows it (`_in_force`)
    auto: float | None  # the autograded score
    so_far: float  # the points counted so far (export.grade_so_far: raw_score, the page's total, the Canvas file's)
    flagged: bool = False  # waiting for review (needs_manual_grade)
    hand: str = ""  # graded by hand (ledger.hand_graded), what a regrade keeps: the score in force, or extra credit
    waits: bool = False  # its points wait for a grader (export.waits_for_grader): counted 0 so far

    def counted(self, autograded: bool) -> str:
        """What it counts so far while flagged, in words."""
        if self.waits:
            return "0, its points waiting for you"
        return f"its checks' score, {_number(self.auto)}" if autograded else _number(self.so_far)


NO_PART = Part(None, None, 0.0)  # no submission: nothing counted (grades.csv's zero)


@dataclass(frozen=True)
class Final:
    """A student whose final score (grades.csv's score, "" while any grade waits for a grader) a regrade would
    blank or give: raising a hand grade's review flag blanks it, whatever the points."""

    student: str
    old: str
    new: str

    def line(self) -> str:
        head = f"  {self.student:<16}{'final score':<28}{self.old or 'blank':>6} -> "
        if self.new:
            return f"{head}{self.new} (final: no grade waits for a grader)"
        return f"{head}blank, until you review the grades waiting (grades.csv's score and manual_score)"


@dataclass(frozen=True)
class Standing:
    """A student's submission in a gradebook, as a regrade preview reads it."""

    parts: dict[str, Part]  # by grade id
    penalty: float
    final: str = ""  # grades.csv's score: "" while a grade waits for a grader

    def part(self, name: str) -> Part:
        return self.parts.get(name, NO_PART)


def scratch_folder(root: Path) -> Path:
    """A new folder, of this run's own, under .grading/ for the preview's scratch gradebook (the run removes it)."""
    (root / ".grading").mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="preview-", dir=root / ".grading"))  # mode 0o700


def scratch_config(config: Config, folder: Path) -> Config:
    """The course's configuration, with the gradebook and autograded/ in `folder` (a copy of the gradebook)."""
    scratch = copy.deepcopy(config)
    scratch.CourseDirectory.db_url = f"sqlite:///{folder / 'gradebook.db'}"
    scratch.CourseDirectory.autograded_directory = str(folder / "autograded")
    return scratch


def copy_gradebook(live: str, scratch: str) -> None:
    """SQLite's backup of the live gradebook into the scratch one (whole, even while the formgrader writes)."""
    with closing(sqlite3.connect(live.replace("sqlite:///", "", 1).split("?")[0])) as source, \
            closing(sqlite3.connect(scratch.replace("sqlite:///", "", 1))) as target:
        source.backup(target)


def _standing(gb: Gradebook, assignment: str, student: str, final: str) -> Standing:
    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        return Standing({}, 0.0, final)
    parts = {grade.name: Part(_in_force(grade), grade.auto_score, grade_so_far(grade)[0],
                              bool(grade.needs_manual_grade), _hand(grade), waits_for_grader(grade))
             for notebook in submission.notebooks for grade in notebook.grades}
    return Standing(parts, submission.late_submission_penalty or 0.0, final)


def _hand(grade) -> str:
    """What the instructor gave a grade by hand, in words ("" for none): the score in force when they scored it,
    else the extra credit alone (the score in force then moves with the checks')."""
    if not hand_graded(grade):
        return ""
    return _number(_in_force(grade)) if grade.manual_score is not None else f"+{_number(grade.extra_credit)} extra credit"


def _in_force(grade) -> float | None:
    """nbgrader's Grade.score, which grades.csv and the Canvas file show and a regrade keeps the extra credit of: the
    hand score where the instructor gave one, else the autograded, plus any extra credit; None when neither is."""
    score = grade.auto_score if grade.manual_score is None else grade.manual_score
    return None if score is None else score + (grade.extra_credit or 0.0)


def standings(coursedir, assignment: str, students: list[str]) -> dict[str, Standing]:
    """Each student's submission in the gradebook `coursedir` names."""
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        final = {row["student_id"]: row["score"] for row in grade_rows(gb, [assignment], students)[1]}
        return {student: _standing(gb, assignment, student, final.get(student, "")) for student in students}


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


@dataclass(frozen=True)
class Compared:
    """What a regrade would change (`compare`)."""

    changes: list[Change]  # the table's rows
    kept: list[Kept]
    finals: list[Final]

    def students(self) -> set[str]:
        """The students a regrade would change: a score, the points so far or a penalty (a Change), a review flag
        raised or cleared (a Kept one: CONFIRM=yes writes it), or the final score blanked or given."""
        return ({change.student for change in self.changes} | {k.student for k in self.kept if k.flagged[0] != k.flagged[1]}
                | {final.student for final in self.finals})

    def lines(self) -> list[str]:
        return [change.line() for change in self.changes] + [k.line() for k in self.kept] + [f.line() for f in self.finals]


def compare(before: dict[str, Standing], live, scratch, assignment: str) -> Compared:
    """What the scratch run changed, student by student, part by part (the autograded ones and the written answers),
    from the grades it started from (`before`, read from the scratch copy as made: the gradebook as the preview found
    it, whatever another run writes since; only students whose outcome the preview shows: never one the grader
    failed on, whom CONFIRM=yes holds); the parts graded by hand (ledger.hand_graded), which keep that grade, whose
    review flag moved, or whose autograded score moved under a score in force that stays (`Kept`); and each final
    score (grades.csv's score) that a flag raised or cleared blanks or gives (`Final`). The points a part counts so
    far (grades.csv's raw_score, the page's total, the Canvas file's partial one: export.grade_so_far) can move while
    its score in force stays: a hand grade flagged for review counts its autograded score, and a regrade can raise
    the flag (the answer changed, or the file is not graded now) or clear it (the answer it was scored on is back);
    such a move is a Change too ("<part> so far"). The checks' verdicts before are the live course's reports."""
    changes: list[Change] = []
    kept: list[Kept] = []
    after = standings(scratch, assignment, list(before))
    with Gradebook(scratch.db_url, scratch.course_id) as gb:
        auto, manual = graded_parts(gb.find_assignment(assignment))
    autograded = {name for name, _ in auto}
    for student, standing in before.items():
        now = after[student]
        old_report, new_report = _report(live, student, assignment), _report(scratch, student, assignment)
        gone = new_report is not None and new_report.error and not new_report.grader_fault  # not_graded's flag
        why = "its file would not be graded, so the answer is gone" if gone else "the answer changed since"
        for part in [name for name, _ in auto + manual]:
            old, new = standing.part(part), now.part(part)
            first_changed = _first_changed(old_report, new_report, part)
            if old.score != new.score:
                changes.append(Change(student, part, _number(old.score), _number(new.score), first_changed))
            # extra credit alone moves the score in force with the checks': its line is for a flag that moves
            if new.hand and (old.flagged != new.flagged or (old.score == new.score and old.auto != new.auto)):
                kept.append(Kept(student, part, new.hand, (_number(old.auto), _number(new.auto)),
                                 (old.flagged, new.flagged), new.counted(part in autograded), why))
            if old.so_far != new.so_far and (old.so_far, new.so_far) != (old.score or 0.0, new.score or 0.0):
                changes.append(Change(student, f"{part} so far", _number(old.so_far), _number(new.so_far),
                                      first_changed))
        if round(standing.penalty, 4) != round(now.penalty, 4):
            changes.append(Change(student, "late penalty", _number(standing.penalty), _number(now.penalty), ""))
    finals = [Final(student, standing.final, after[student].final) for student, standing in before.items()
              if bool(standing.final) != bool(after[student].final)]
    return Compared(changes, kept, finals)


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


def record_previewed(root: Path, assignment: str, inputs: dict[str, Inputs], reports: dict[str, Report]) -> None:
    """Which students a preview showed, each with the inputs (submission, suites, reference, settings) it graded:
    those whose outcome it showed (grade_students' Graded.inputs), never one the grader failed on; and each one's
    report (graded, or not graded for its file's own reason), which CONFIRM=yes applies (`previewed_reports`) rather than grading again: a
    student's code may answer otherwise from run to run (the clock, `secrets`), and a grade changes only as a
    preview showed. It replaces what an earlier preview recorded, whose outcome this one may not have shown again (a
    student the grader failed on this time: red-b23 X32-b23-2); so after a preview of some students (`make regrade
    STUDENT=x`) the others are previewed again before CONFIRM=yes applies theirs. Written whole (a rename) in
    .grading/ (the grader's own: 0700), as another run may read it."""
    path = _previewed_path(root, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}")
    seen = {student: {"inputs": inputs_json(given), "report": reports[student].to_json()}
            for student, given in inputs.items() if student in reports}
    part.write_text(json.dumps(seen, sort_keys=True))
    part.replace(path)


def _previewed(root: Path, assignment: str, inputs: dict[str, Inputs]) -> dict[str, dict]:
    """What the previews recorded of the students among `inputs` they showed under these very inputs."""
    seen = _recorded(_previewed_path(root, assignment))
    return {student: seen[student] for student, given in inputs.items()
            if isinstance(seen.get(student), dict) and seen[student].get("inputs") == inputs_json(given)}


def _recorded(path: Path) -> dict:
    """The previews' record (record_previewed), {} when there is none or it is not one."""
    try:
        seen = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return seen if isinstance(seen, dict) else {}


def previewed_reports(root: Path, assignment: str, inputs: dict[str, Inputs]) -> dict[str, Report]:
    """The report the last preview gave each student among `inputs` it showed under these very inputs: CONFIRM=yes
    grades them with it (grade_students' `replay`), so that nbgrader's autograde, the late penalty and the flags
    apply the very outcome the preview showed, and one the preview did not grade, for its file's own reason, is not
    graded, for that reason."""
    reports = {}
    for student, seen in _previewed(root, assignment, inputs).items():
        try:
            reports[student] = Report.from_json(seen.get("report"))
        except ReportUnreadable:  # not one: not previewed, so CONFIRM=yes holds the student (grade_class)
            continue
    return reports
