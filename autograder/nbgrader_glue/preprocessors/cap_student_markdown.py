"""How much of the student's own markdown the pages show: `budget_kb` of it, each cell counted as at least
`cell_bytes`.

The formgrader renders its grading page from the autograded copy again on every view, in the instructor's Jupyter
server, which waits: markdown costs about 13 µs a byte there and a cell at least 0.6 ms, so a notebook within its
size limit that is all markdown of the student's (2 MB of small cells, or 34,000 cells of a few bytes) cost 20 to
26 s of CPU a view. `CapStudentMarkdown` (in c.Autograde.autograde_preprocessors, after the grades are saved, so
that no check and no checksum sees it) keeps the student's own markdown and raw cells (those with no nbgrader
metadata: every cell of the release has some) in order until the budget is spent, and puts one cell of the kit's in
place of the rest, which says how many were left off. The written answers (grade cells) and the release's cells are
always kept; the notebook as submitted stays in submitted/, and a hand grade's checksum is taken from it.
"""
from __future__ import annotations

from nbformat.v4 import new_markdown_cell
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Int

from ...outputs.counts import counted


class CapStudentMarkdown(NbGraderPreprocessor):
    """Keep the student's own markdown and raw cells within `budget_kb` on the pages (module doc)."""

    budget_kb = Int(128, help="The student's own markdown and raw cells (not the written answers) the feedback and "
                              "grading pages show, in KB; the rest is left off, and a note says so.").tag(config=True)
    cell_bytes = Int(1024, help="What each such cell counts as at least, in bytes: a cell costs the page's "
                                "rendering a fixed time whatever its length.").tag(config=True)

    def preprocess(self, nb, resources):
        kept: list = []
        spent, left_off, left_bytes, place = 0, 0, 0, 0
        for cell in nb.cells:
            if cell.get("cell_type") in ("markdown", "raw") and not cell.get("metadata", {}).get("nbgrader"):
                size = len(cell.get("source", "")) + _attached(cell)
                cost = max(size, self.cell_bytes)
                if left_off or spent + cost > self.budget_kb * 1024:
                    place = place if left_off else len(kept)  # the note stands where the first cell left off stood
                    left_off, left_bytes = left_off + 1, left_bytes + size
                    continue
                spent += cost
            kept.append(cell)
        if left_off:
            note = new_markdown_cell(
                f"*{counted(left_off, 'more markdown or raw cell')} of the student's own ({left_bytes // 1024} KB) "
                f"not shown here: past the {self.budget_kb} KB the pages show (c.CapStudentMarkdown.budget_kb). "
                f"The notebook as submitted holds them.*")
            if nb.get("nbformat_minor", 0) < 5:  # cell ids exist from nbformat 4.5 on
                note.pop("id", None)
            kept.insert(place, note)
        nb.cells = kept
        return nb, resources


def _attached(cell) -> int:
    """The characters of a cell's attachments (pictures, base64): each one the page shows."""
    return sum(len(data) for bundle in (cell.get("attachments") or {}).values() if isinstance(bundle, dict)
               for data in bundle.values() if isinstance(data, str))
