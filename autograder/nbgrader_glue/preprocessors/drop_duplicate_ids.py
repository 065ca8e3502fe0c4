"""DropDuplicateIds: nbgrader's DeduplicateIds, for every copy of a grade id, without its crashes."""
from __future__ import annotations

from nbgrader.preprocessors import DeduplicateIds


class DropDuplicateIds(DeduplicateIds):
    """nbgrader's DeduplicateIds (the last copy of a pasted cell keeps its metadata), with the earlier copies made
    plain cells, whatever flags they carry.

    nbgrader's leaves `nbgrader: {}` on the earlier copies, which its own schema check rejects ("an old version of
    the nbgrader metadata format"). It looks only at copies flagged grade, solution or locked: a copy whose metadata
    is the grade id alone stays, OverwriteCellsAtOnce gives it the release's metadata, and the notebook then holds
    that grade id twice ("Duplicate grade id"). And a flagged cell with no grade id stops it (KeyError). Here every
    cell with a grade id counts as a copy, and a cell whose nbgrader metadata has no grade id (the release's cells
    all have one) is a plain cell. FindGradingNotes names both as the student's
    (autograder/nbgrader_glue/preprocessors/grading_notes.py: cell_notes).
    """

    def preprocess(self, nb, resources):
        self.grade_ids = set()
        for index in reversed(range(len(nb.cells))):  # last first, each cell at its own index
            nb.cells[index], resources = self.preprocess_cell(nb.cells[index], resources, index)
        return nb, resources

    def preprocess_cell(self, cell, resources, cell_index):
        if "nbgrader" not in cell.metadata:
            return cell, resources
        grade_id = cell.metadata.nbgrader.get("grade_id")
        if not isinstance(grade_id, str) or not grade_id:
            del cell.metadata["nbgrader"]
        elif grade_id in self.grade_ids:
            self.log.warning("Cell with id '%s' exists multiple times!", grade_id)
            del cell.metadata["nbgrader"]
        else:
            self.grade_ids.add(grade_id)
        return cell, resources
