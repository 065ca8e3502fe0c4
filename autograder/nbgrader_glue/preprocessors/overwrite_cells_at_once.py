"""OverwriteCellsAtOnce: nbgrader's OverwriteCells, with every cell's nbgrader metadata the release's.

nbgrader's OverwriteCells puts back a cell's locked flag, points, checksum and (for a locked cell) source from the
gradebook, but trusts the rest of what the submission says the cell is: a test cell the student marked
`grade: false` lost its checksum and failed the whole autograde ("Inconsistent checksums"). Here the release
decides what every cell is: a cell whose grade_id the release has gets the release's metadata.nbgrader (grade,
solution, locked, task, points, schema version; the checksum and cell type nbgrader records, where the cell
has them), and one whose grade_id the release does not have
(or that has none) is a plain cell. FindGradingNotes names each such edit as the student's
(autograder/nbgrader_glue/preprocessors/grading_notes.py: cell_notes).

Nor does the submission decide how a cell shows on the feedback and formgrader pages: nbconvert's templates make
each tag a class (`celltag_<tag>`, a tag with spaces in it several classes, such as Bootstrap's `hidden`) and leave
out the code of a cell marked `transient.remove_source`. So a tag that is not a plain name is dropped, and so are
`transient` and `jupyter` (whose `source_hidden` and `outputs_hidden` fold a cell away).

Every cell the release does not have is marked as the student's (`kit_added_by_student`, taken off the release's
cells), which the grading page says above it: in the notebook, a plain cell worded as the instructor's (an erratum
making Question 1 easier, between it and its answer) read as the instructor's. A cell the kit adds later (the notes
of CapStudentMarkdown and AddGradingNotes) has no mark.
A cell the student turned from code into markdown or raw is code again (nbgrader's update_cell_type): what only
those types may hold (`attachments`, and cell metadata nbformat types for code cells alone, such as `collapsed`)
goes first, else nbformat refuses the code cell it makes and the whole notebook fails.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import OverwriteCells

from ...assignment import course_assignment
from ..gradebook_lookups import LookupsPrefetched

RECORDED = ("checksum", "cell_type")  # what generate_assignment records in the release, not what the cell is
PLAIN_TAG = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a tag that becomes one class on the pages, `celltag_<tag>`
HIDING = ("transient", "jupyter")  # cell metadata with which the pages leave out or fold away a cell's code
ADDED_MARK = "kit_added_by_student"  # cell metadata: a cell the release does not have, which the grading page labels
CODE_METADATA = ("execution", "collapsed", "scrolled")  # typed by nbformat's schema for code cells, free in the others


def released_metadata(release) -> dict[str, dict]:
    """Each grade_id of the release notebook, with its cell's metadata.nbgrader."""
    found = {}
    for cell in release.cells:
        meta = cell.get("metadata", {}).get("nbgrader")
        if isinstance(meta, dict) and isinstance(meta.get("grade_id"), str):
            found[meta["grade_id"]] = meta
    return found


class OverwriteCellsAtOnce(LookupsPrefetched, OverwriteCells):
    """nbgrader's OverwriteCells (locked cells, points and checksums put back from the gradebook), each cell's
    nbgrader metadata the release's first (module docstring), and its two lookups a cell answered from the
    notebook's rows, read at once (autograder/nbgrader_glue/gradebook_lookups.py)."""

    def preprocess(self, nb, resources):
        root = Path(CourseDirectory(parent=self).root)
        self.released = released_metadata(course_assignment(root, resources["nbgrader"]["assignment"]).release)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        if "nbgrader" in cell.metadata:
            submitted = cell.metadata.nbgrader
            released = self.released.get(submitted.get("grade_id"))
            if released is None:
                del cell.metadata["nbgrader"]
            else:  # nbgrader's own bookkeeping (checksum: set from the gradebook next) stays as saved when absent
                cell.metadata["nbgrader"] = copy.deepcopy({key: value for key, value in released.items()
                                                           if key not in RECORDED or key in submitted})
        if "tags" in cell.metadata:
            tags = cell.metadata.tags if isinstance(cell.metadata.tags, list) else []
            cell.metadata["tags"] = [tag for tag in tags if isinstance(tag, str) and PLAIN_TAG.fullmatch(tag)]
        for key in HIDING:
            cell.metadata.pop(key, None)
        if "nbgrader" in cell.metadata:
            cell.metadata.pop(ADDED_MARK, None)
        else:
            cell.metadata[ADDED_MARK] = True
        return super().preprocess_cell(cell, resources, cell_index)

    def update_cell_type(self, cell, cell_type):
        if cell_type == "code" and cell.cell_type != "code":  # what a markdown or raw cell held that code may not
            cell.pop("attachments", None)
            for key in CODE_METADATA:
                cell.metadata.pop(key, None)
        super().update_cell_type(cell, cell_type)
