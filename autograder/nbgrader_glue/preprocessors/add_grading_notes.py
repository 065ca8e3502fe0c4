"""AddGradingNotes: the report's note (renamed notebook, pasted or edited cells) as the notebook's first cell.

Last in c.Autograde.autograde_preprocessors, after the gradebook row is written: it takes the note of the
report RunHiddenSuites made earlier in the same pass (handed over in the pass's resources; its notes
come from FindGradingNotes, autograder/nbgrader_glue/preprocessors/grading_notes.py) and inserts a markdown cell at the
top of the autograded notebook, so the formgrader and the feedback page show the note, in the words of `make grade`'s summary.

The cell is the kit's own text, added after SanitizeMarkdown has run, and marked as the kit's (`kit_note` in its
metadata, taken off every other cell, where only a student could have put it): both pages show it in their header,
above the notebook, where no cell of the student's is shown. In the notebook, a student's own cell that reads
"**Note from the grader:** ... no review needed" looked exactly like it. What a student chose in it (file
names, grade ids) is written as character references, which markdown renders as those characters, as text, never
as markdown or HTML, inside a span MathJax leaves alone (`tex2jax_ignore`), so that no `$...$` in a name is
typeset either. The cell is one the sanitiser would keep whole but for that span's class, which it allows no
student (tests/test_grading_notes.py).
"""
from __future__ import annotations

import re

from nbformat.v4 import new_markdown_cell
from nbgrader.preprocessors import NbGraderPreprocessor

from .run_hidden_suites import NOTE_RESOURCE

HEADING = "**Note from the grader:**"
NOT_MATHS = ('<span class="tex2jax_ignore">', "</span>")  # what MathJax's tex2jax does not typeset
NOTE_MARK = "kit_note"  # cell metadata: the kit's note cell, which the pages show in their header


def note_markdown(note: str) -> str:
    """The note cell's markdown: the kit's heading, then the note with every character that markdown or HTML
    could read as syntax written as a character reference (it renders as that character, as text), all of it
    where MathJax typesets nothing."""
    text = re.sub(r"[^A-Za-z0-9 ,.:;\u0080-\U0010ffff-]", lambda m: f"&#{ord(m[0])};", note)
    return f"{NOT_MATHS[0]}{HEADING} {text}{NOT_MATHS[1]}"


class AddGradingNotes(NbGraderPreprocessor):
    """Put the report's note at the top of the autograded notebook, as a markdown cell marked as the kit's."""

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            cell.get("metadata", {}).pop(NOTE_MARK, None)
        note = resources.get(NOTE_RESOURCE, "")
        if note:
            cell = new_markdown_cell(note_markdown(note), metadata={NOTE_MARK: True})  # a random id, as nbformat 4.5 wants
            if nb.get("nbformat_minor", 0) < 5:  # cell ids exist from nbformat 4.5 on
                cell.pop("id", None)
            nb.cells.insert(0, cell)
        return nb, resources
