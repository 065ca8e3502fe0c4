"""DropDuplicateIds: nbgrader's DeduplicateIds, without its crash on a pasted cell."""
from __future__ import annotations

from nbgrader.preprocessors import DeduplicateIds


class DropDuplicateIds(DeduplicateIds):
    """nbgrader's DeduplicateIds without its crash on a pasted cell.

    nbgrader keeps the last copy of a cell and leaves `nbgrader: {}` on the others, which its own schema
    check then rejects ("an old version of the nbgrader metadata format"), so the whole notebook failed.
    The extra copies become plain cells instead.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if cell.metadata.get("nbgrader", None) == {}:
            del cell.metadata["nbgrader"]
        return cell, resources
