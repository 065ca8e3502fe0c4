"""Grading notes: what the student and the instructor should know about a submission that was graded anyway.

A notebook saved under another name, a graded cell pasted twice, a locked cell edited, a graded cell
deleted, a second notebook in the folder: each is graded (as the README says how) and said once, in one
line, in the summary of `make grade` and at the top of the student's feedback page.

* `FindGradingNotes` (first in c.Autograde.sanitize_preprocessors) looks at the notebook as submitted,
  before nbgrader drops the pasted copies and restores the locked cells, and at the student's folder of
  submitted/ (the grader copied a renamed notebook to the assignment's name beside the original). It
  keeps the notes in the notebook's metadata (`kit_notes`, always overwritten, so a submission cannot
  bring its own) for the grading step.
* `RunHiddenSuites` moves them into the submission's report (`notes`), which it writes beside the
  autograded notebook (autograded/<student>/<assignment>/report.json).
* `AddGradingNotes` (autograder/preprocessors/add_grading_notes.py, last in
  c.Autograde.autograde_preprocessors) takes the report's note from the pass's resources and puts it at
  the top of the autograded notebook as a markdown cell, so the formgrader and the feedback page show it.
"""
from __future__ import annotations

from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_locked, is_solution

from ..assignment import Assignment, course_assignment
from ..inert import one_line
from ..validate import notebooks_in

METADATA_KEY = "kit_notes"  # notebook metadata: from FindGradingNotes to RunHiddenSuites


def folder_notes(folder: Path, name: str) -> list[str]:
    """What the folder says about the graded notebook `name`: it was renamed, or it has company (its other
    notebooks, as validate.find_notebook counts them)."""
    others = [p for p in notebooks_in(folder) if p != folder / name]
    if not others:
        return []
    if len(others) == 1:
        try:
            renamed = others[0].read_bytes() == (folder / name).read_bytes()
        except OSError:
            renamed = False
        if renamed:  # the grader's copy of the student's only notebook, beside the original
            return [f"graded '{others[0].relative_to(folder)}' as {name} (renamed)"]
    found = ", ".join(f"'{p.relative_to(folder)}'" for p in others)
    return [f"the folder also holds {found}: only {name} is graded"]


def cell_notes(assignment: Assignment, notebook: dict) -> list[str]:
    """What is odd about the notebook's graded cells: pasted twice, missing, or locked and edited."""
    def grade_id(cell) -> str | None:
        return (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")

    def text(cell) -> str:  # nbformat.read joins a saved list of lines into one string
        return cell.get("source", "").strip()

    ids = [i for c in notebook.get("cells", []) if (i := grade_id(c))]
    # nbgrader keeps the last copy of a pasted cell as the graded one (DropDuplicateIds); earlier copies
    # lose their metadata and run as plain code where they stand.
    last = {grade_id(cell): cell for cell in notebook.get("cells", [])}
    notes = []
    duplicated = sorted({i for i in ids if ids.count(i) > 1}, key=ids.index)
    if duplicated:
        notes.append(f"cells pasted more than once: {', '.join(duplicated)} (the last copy of each is graded; "
                     "earlier copies run as plain code: delete them)")
    known = [(i, c) for c in assignment.source.cells if (i := grade_id(c))]
    missing = [i for i, c in known if (is_solution(c) or is_grade(c)) and i not in last]
    if missing:
        notes.append(f"cells missing from the notebook: {', '.join(missing)} "
                     "(copy them back from the released notebook)")
    edited = [i for i, c in known if is_locked(c) and i in last and text(last[i]) != text(c)]
    if edited:
        notes.append(f"locked cells edited, graded as released: {', '.join(edited)}")
    return notes


class FindGradingNotes(NbGraderPreprocessor):
    """Note what is odd about the submission as submitted (module docstring); first of the sanitize steps."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        coursedir = CourseDirectory(parent=self)
        assignment = course_assignment(Path(coursedir.root), info["assignment"])
        folder = Path(coursedir.format_path(coursedir.submitted_directory, info["student"], info["assignment"]))
        notes = folder_notes(folder, f"{info['notebook']}.ipynb") + cell_notes(assignment, nb)
        nb.metadata[METADATA_KEY] = [one_line(note) for note in notes]
        return nb, resources
