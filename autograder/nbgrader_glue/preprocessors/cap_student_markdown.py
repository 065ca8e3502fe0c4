"""How much of the student's own cells the pages show: `budget_kb` of their markdown and raw cells, and
`code_budget_kb` of their code cells, each cell counted as at least `cell_bytes`.

The formgrader renders its grading page from the autograded copy again on every view, in the instructor's Jupyter
server, which waits: markdown costs about 13 µs a byte there and a cell at least 0.6 ms, so a notebook within its
size limit that is all markdown of the student's (2 MB of small cells, or 34,000 cells of a few bytes) cost 20 to
26 s of CPU a view. Code is dearer: every token a span, about 40 µs a byte, and a cell about 1 ms; a code cell past
16 KB is shown as escaped text (templates/readable/code_cell.j2), but 2 MB of the student's own code cells just
under that cost 77 s a view, and 2 MB of tiny ones 13 s. `CapStudentMarkdown` (in
c.Autograde.autograde_preprocessors, after the grades are saved, so that no check and no checksum sees it) keeps the
student's own cells of each kind (those with no nbgrader metadata: every cell of the release has some) in order
until that kind's budget is spent, and puts one cell of the kit's in place of the rest, which says how many were left
off. The written answers and the answers' code (grade and solution cells) and the release's cells are always kept;
the notebook as submitted stays in submitted/, and a hand grade's checksum is taken from it.
"""
from __future__ import annotations

from nbformat.v4 import new_markdown_cell
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Int

from ...outputs.counts import counted


class CapStudentMarkdown(NbGraderPreprocessor):
    """Keep the student's own markdown and raw cells within `budget_kb`, and their own code cells within
    `code_budget_kb`, on the pages (module doc)."""

    budget_kb = Int(128, help="The student's own markdown and raw cells (not the written answers) the feedback and "
                              "grading pages show, in KB; the rest is left off, and a note says so.").tag(config=True)
    code_budget_kb = Int(64, help="The student's own code cells (not the answers' cells) the feedback and grading "
                                  "pages show, in KB; the rest is left off, and a note says so.").tag(config=True)
    cell_bytes = Int(1024, help="What each such cell counts as at least, in bytes: a cell costs the page's "
                                "rendering a fixed time whatever its length.").tag(config=True)

    def preprocess(self, nb, resources):
        caps = {kind: _Cap(budget * 1024) for kind, budget in (("text", self.budget_kb), ("code", self.code_budget_kb))}
        kept: list = []
        for cell in nb.cells:
            kind = _own_kind(cell)
            if kind is None or caps[kind].takes(cell, self.cell_bytes, len(kept)):
                kept.append(cell)
        notes = {"text": ("more markdown or raw cell", "budget_kb", self.budget_kb),
                 "code": ("more code cell", "code_budget_kb", self.code_budget_kb)}
        for kind, cap in sorted(caps.items(), key=lambda item: -item[1].place):  # the later note first: places hold
            if cap.left_off:
                what, setting, budget = notes[kind]
                note = new_markdown_cell(
                    f"*{counted(cap.left_off, what)} of the student's own ({cap.left_bytes // 1024} KB) not shown here: "
                    f"past the {budget} KB the pages show (c.CapStudentMarkdown.{setting}). "
                    f"The notebook as submitted holds them.*")
                if nb.get("nbformat_minor", 0) < 5:  # cell ids exist from nbformat 4.5 on
                    note.pop("id", None)
                kept.insert(cap.place, note)
        nb.cells = kept
        return nb, resources


class _Cap:
    """One budget of the student's own cells: what it kept, and what it left off from where."""

    def __init__(self, budget: int) -> None:
        self.budget, self.spent, self.left_off, self.left_bytes, self.place = budget, 0, 0, 0, -1

    def takes(self, cell, cell_bytes: int, place: int) -> bool:
        """Whether `cell` is kept (else left off, its note to stand at `place`: where the first one left off stood)."""
        size = len(cell.get("source", "")) + _attached(cell)
        cost = max(size, cell_bytes)
        if self.left_off or self.spent + cost > self.budget:
            self.place = self.place if self.left_off else place
            self.left_off, self.left_bytes = self.left_off + 1, self.left_bytes + size
            return False
        self.spent += cost
        return True


def _own_kind(cell) -> str | None:
    """"text" for the student's own markdown or raw cell, "code" for their own code cell (no nbgrader metadata: every
    cell of the release has some), else None."""
    if cell.get("metadata", {}).get("nbgrader"):
        return None
    return {"markdown": "text", "raw": "text", "code": "code"}.get(cell.get("cell_type", ""))


def _attached(cell) -> int:
    """The characters of a cell's attachments (pictures, base64): each one the page shows."""
    return sum(len(data) for bundle in (cell.get("attachments") or {}).values() if isinstance(bundle, dict)
               for data in bundle.values() if isinstance(data, str))
