"""RecordRelease: the release's cells, as the grade takes them, kept in the notebook's own metadata for the public
checks (the student's folder holds no other copy of the release: cells.py's graded_cells reads it)."""
from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor

KEY = "release_cells"  # cells.py (source/<assignment>/) reads the same key


class RecordRelease(NbGraderPreprocessor):
    """Last of generate_assignment's and generate_solution's preprocessors: what each cell of the release is, and the
    text of a given code cell (the grade runs a given cell as released, whatever the student did to it: made it
    markdown, edited or deleted it). A copy the student may change, as everything in the student's folder: only the
    public checks read it, never the grade."""

    def preprocess(self, nb, resources):
        nb.metadata[KEY] = [_released(cell) for cell in nb.cells]
        return nb, resources


def _released(cell) -> dict:
    """A cell's type, its nbgrader metadata and tags, and its text if it is given code (not a test, not a demo)."""
    grading = cell.metadata.get("nbgrader", {})
    given = cell.cell_type == "code" and grading.get("locked") and not grading.get("grade") and "demo" not in \
        cell.metadata.get("tags", [])
    return {"cell_type": cell.cell_type, "source": cell.source if given else "",
            "metadata": {key: cell.metadata[key] for key in ("nbgrader", "tags") if key in cell.metadata}}
