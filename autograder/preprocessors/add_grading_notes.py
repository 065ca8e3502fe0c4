"""AddGradingNotes: the report's note (renamed notebook, pasted or edited cells) as the notebook's first cell.

Last in c.Autograde.autograde_preprocessors, after the gradebook row is written: it reads the report that
RunHiddenSuites wrote beside the autograded notebook (report.json; its notes come from FindGradingNotes,
autograder/preprocessors/grading_notes.py) and inserts a markdown cell at the top of the autograded
notebook, so the formgrader and the feedback page show the note, in the words of `make grade`'s summary.

The cell is the kit's own text, added after SanitizeMarkdown has run. What a student chose in it (file
names) is written as character references, which markdown renders as those characters, as text, never as
markdown or HTML: the cell is one the sanitiser would keep whole (tests/test_grading_notes.py).
"""
from __future__ import annotations

import re

from nbformat.v4 import new_markdown_cell
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from ..report import Report
from .run_hidden_suites import report_path

NOTE_CELL_ID = "kit-grading-note"
HEADING = "**Note from the grader:**"


def note_markdown(note: str) -> str:
    """The note cell's markdown: the kit's heading, then the note with every character that markdown or HTML
    could read as syntax written as a character reference (it renders as that character, as text)."""
    return f"{HEADING} " + re.sub(r"[^A-Za-z0-9 ,.:;\u0080-\U0010ffff-]", lambda m: f"&#{ord(m[0])};", note)


class AddGradingNotes(NbGraderPreprocessor):
    """Put the report's note at the top of the autograded notebook, as a markdown cell."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        note = Report.load(report_path(CourseDirectory(parent=self), info["student"], info["assignment"])).note
        if note:
            cell = new_markdown_cell(note_markdown(note))
            if nb.get("nbformat_minor", 0) >= 5:  # cell ids exist from nbformat 4.5 on, and are unique
                taken = {c.get("id") for c in nb.cells}
                cell.id = NOTE_CELL_ID
                while cell.id in taken:
                    cell.id += "-1"
            else:
                cell.pop("id", None)
            nb.cells.insert(0, cell)
        return nb, resources
