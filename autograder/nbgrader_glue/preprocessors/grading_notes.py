"""Grading notes: what the student and the instructor should know about a submission that was graded anyway.

A notebook saved under another name, a graded cell pasted twice, a locked cell edited, a cell of the
release deleted, moved or merged into another, a cell's nbgrader metadata edited, a second notebook in the folder, a link or a FIFO beside it: each is
graded (as the README says how) and said once, in one
line, in the summary of `make grade` and at the top of the student's feedback page.

* `FindGradingNotes` (first in c.Autograde.sanitize_preprocessors) looks at the notebook as submitted,
  before nbgrader drops the pasted copies and restores the locked cells and the release's metadata, and takes
  what the intake noted about the student's folder (autograder/intake/files.py: a renamed notebook, others beside it,
  links and the like not read) from the pass's resources. It keeps the notes in the notebook's metadata (`kit_notes`, always overwritten, so a submission cannot
  bring its own) for the grading step. It also takes the checksum of each grade's answer there, as submitted
  (`kit_answers`: autograder/classroom/ledger.py, answer_checksums), before any step restores, sanitizes or cuts
  a cell, for SaveAutoGradesAtOnce, which flags a hand grade whose answer changed.
* `RunHiddenSuites` moves them into the submission's report (`notes`), which it writes beside the
  autograded notebook (autograded/<student>/<assignment>/report.json).
* `AddGradingNotes` (autograder/nbgrader_glue/preprocessors/add_grading_notes.py, last in
  c.Autograde.autograde_preprocessors) takes the report's note from the pass's resources and puts it at
  the top of the autograded notebook as a markdown cell, so the formgrader and the feedback page show it.
"""
from __future__ import annotations

import re
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_locked

from ...assignment import Assignment, course_assignment
from ...checks.suites import hosts
from ...classroom.ledger import answer_checksums
from ...outputs.inert import one_line
from .overwrite_cells_at_once import released_metadata

METADATA_KEY = "kit_notes"  # notebook metadata: from FindGradingNotes to RunHiddenSuites
ANSWERS_KEY = "kit_answers"  # notebook metadata: from FindGradingNotes to SaveAutoGradesAtOnce
INTAKE_NOTES = "kit_intake_notes"  # the pass's resources: the intake's notes (student_autograde.StagedAutograde)
GRADE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what nbgrader's CheckCellMetadata takes as a grade id, bounded


def named(grade_id: object) -> str:
    """A grade id as a note names it: as written when it is one nbgrader takes, else by what it is. A student chooses
    the ids of cells the release does not have, and a sentence there would read as the grader's own words."""
    text = str(grade_id)
    return text if GRADE_ID.fullmatch(text) else f"a grade id nbgrader does not take ({len(text)} characters)"


def cell_notes(assignment: Assignment, notebook: dict) -> list[str]:
    """What is odd about the notebook's graded cells: pasted twice, missing, moved, locked and edited, of another
    type, or with metadata the student edited or added."""
    def grade_id(cell) -> str | None:
        return (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")

    def text(cell) -> str:  # nbformat.read joins a saved list of lines into one string
        return cell.get("source", "").strip()

    ids = [i for c in notebook.get("cells", []) if (i := grade_id(c))]
    # nbgrader keeps the last copy of a pasted cell as the graded one (DropDuplicateIds); earlier copies
    # lose their metadata and run as plain code where they stand.
    last = {grade_id(cell): cell for cell in notebook.get("cells", [])}
    notes = []
    known = [(i, c) for c in assignment.source.cells if (i := grade_id(c))]
    # Locked cells too: nbgrader puts back only the cells that are there, so a deleted question (a plain cell of the
    # student's asking another one in its place) would read as the question. First of the notes, the cells that grade
    # or ask first in it: the line the pages and the summary show keeps the first note's start (notes_line), which no
    # other note, nor the release's prose deleted above a question, can push off (red-c18 X27-c18-1, -5).
    hosted = hosts(assignment, notebook)  # a missing cell whose code another cell holds (cells merged) is graded there
    missing = [i for i, c in known if i not in last and i not in hosted]
    if missing:
        asking = _asking(assignment)
        notes.append(f"cells missing from the notebook: {', '.join(sorted(missing, key=lambda i: i not in asking))} "
                     "(copy them back from the released notebook)")
    duplicated = sorted({i for i in ids if ids.count(i) > 1}, key=ids.index)
    if duplicated:
        notes.append(f"cells pasted more than once: {', '.join(map(named, duplicated))} (the last copy of each is graded; "
                     "earlier copies run as plain code: delete them)")
    if hosted:
        notes.append("cells merged into another, graded as the code they hold there: "
                     + ", ".join(f"{gid} (in {_place(cell)})" for gid, cell in hosted.items()))
    moved = out_of_order([i for i, _ in known], [i for c in notebook.get("cells", []) if (i := grade_id(c)) and last[i] is c])
    if moved:
        notes.append(f"cells moved from their place in the release, shown where the student put them: {', '.join(moved)}")
    edited = [i for i, c in known if is_locked(c) and i in last and text(last[i]) != text(c)]
    if edited:
        notes.append(f"locked cells edited, graded as released: {', '.join(edited)}")
    retyped = [f"{i} ({last[i].get('cell_type')})" for i, c in known
               if i in last and last[i].get("cell_type") != c.get("cell_type")]
    if retyped:
        notes.append(f"cells whose type the student changed, graded as released: {', '.join(retyped)}")
    unnamed = [str(n + 1) for n, c in enumerate(notebook.get("cells", []))
               if isinstance(c.get("metadata", {}).get("nbgrader"), dict) and not grade_id(c)]
    if unnamed:  # the release's cells all have a grade id (DropDuplicateIds)
        which = f"cell {unnamed[0]} has" if len(unnamed) == 1 else f"cells {', '.join(unnamed)} have"
        notes.append(f"{which} nbgrader metadata but no grade id: graded as plain cells")
    return notes + metadata_notes(assignment, last)


def _asking(assignment: Assignment) -> set[str]:
    """The release's cells that grade or ask: code, a graded cell, and the cell right above a graded markdown cell (the
    question a written answer answers); the others are prose."""
    cells = [(cell.metadata.get("nbgrader", {}), cell.cell_type) for cell in assignment.release.cells]
    return {meta["grade_id"] for at, (meta, kind) in enumerate(cells) if "grade_id" in meta and (
        kind == "code" or meta.get("grade") or (at + 1 < len(cells) and cells[at + 1][0].get("grade")
                                                 and cells[at + 1][1] == "markdown"))}


def _place(cell: str) -> str:
    """A cell a part names (program_from_notebook): a grade id, or a cell the student added, named by its index."""
    return f"the notebook's cell {int(cell) + 1}" if cell.isdigit() else f"cell {named(cell)}"


def out_of_order(released: list[str], placed: list[str]) -> list[str]:
    """The grade ids of `placed` (the notebook's order) that are not where the release has them: those outside a
    longest run of `placed` in the release's order (the fewest cells whose moves explain the notebook's order)."""
    rank = {grade_id: n for n, grade_id in enumerate(released)}
    ranks = [rank[i] for i in placed if i in rank]
    longest = [1] * len(ranks)  # longest[k]: the longest increasing run of ranks ending at k
    before = [-1] * len(ranks)
    for k, r in enumerate(ranks):
        for j in range(k):
            if ranks[j] < r and longest[j] + 1 > longest[k]:
                longest[k], before[k] = longest[j] + 1, j
    kept, k = set(), max(range(len(ranks)), key=longest.__getitem__, default=-1)
    while k >= 0:
        kept.add(ranks[k])
        k = before[k]
    return [released[r] for r in ranks if r not in kept]


def cell_kind(meta: dict) -> dict:
    """What metadata.nbgrader says a cell is: its flags (an absent one is false) and, for a grade cell, its points."""
    kind: dict = {flag: bool(meta.get(flag, False)) for flag in ("grade", "solution", "locked", "task")}
    if kind["grade"]:
        kind["points"] = float(meta.get("points", 0))
    return kind


def metadata_notes(assignment: Assignment, cells: dict) -> list[str]:
    """The student's edits of what a cell is (`cells`: the graded copy of each grade_id, as submitted): its
    metadata.nbgrader changed from the release's, or given to a cell the release does not have. Both are graded
    as released (OverwriteCellsAtOnce)."""
    released = released_metadata(assignment.release)
    changed: dict[str, list[str]] = {}  # what changed -> the cells it changed in
    for grade_id, meta in released.items():
        if grade_id in cells:
            was, now = cell_kind(meta), cell_kind(cells[grade_id]["metadata"]["nbgrader"])
            keys = ", ".join(key for key in ("grade", "solution", "locked", "task", "points") if was.get(key) != now.get(key))
            if keys:
                changed.setdefault(keys, []).append(grade_id)
    edits = "; ".join(f"{', '.join(ids)} ({keys})" for keys, ids in changed.items())
    notes = [f"cell metadata edited by the student, graded as released: {edits}"] if changed else []
    unknown = [named(grade_id) for grade_id in cells if grade_id is not None and grade_id not in released]
    if unknown:
        notes.append(f"cells the student marked for grading that the release does not have, graded as plain "
                     f"cells: {', '.join(unknown)}")
    return notes


class FindGradingNotes(NbGraderPreprocessor):
    """Note what is odd about the submission as submitted, and take its answers' checksums (module docstring);
    first of the sanitize steps."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        coursedir = CourseDirectory(parent=self)
        assignment = course_assignment(Path(coursedir.root), info["assignment"])
        notes = cell_notes(assignment, nb) + list(resources.get(INTAKE_NOTES, []))  # a cell missing first
        nb.metadata[METADATA_KEY] = [one_line(note) for note in notes]
        nb.metadata[ANSWERS_KEY] = answer_checksums(nb, assignment.release)
        return nb, resources
