"""Where an assignment's pieces live in the course directory, read once.

nbformat (0.1 s to import, with jsonschema) is imported only when a notebook is read as nbformat's NotebookNode:
the sandbox's worker is configured from the plain JSON of the source and release notebooks (`source_json`,
`release_json`), so `python -m autograder grade` starts it before it imports anything heavy.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbformat import NotebookNode


def is_test_cell(cell: NotebookNode) -> bool:
    """An autograded test cell: a code cell that is nbgrader's grade cell and not a solution cell.

    nbgrader.utils.is_grade and is_solution, as nbgrader reads them; spelt out here because `python -m
    autograder grade` and Gradescope never import nbgrader (its import alone takes longer than grading)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def notebook_from_text(text: str) -> NotebookNode:
    """A notebook as nbformat.read gives it (nbformat 4), without nbformat's schema check, which only logs: for
    the course's own notebooks, and for a file validate.py has checked whole (its check is stricter)."""
    import nbformat

    return nbformat.convert(nbformat.reader.reads(text), 4)


@dataclass(frozen=True)
class GradeCell:
    grade_id: str
    points: float


@dataclass(frozen=True)
class Assignment:
    """source/<name>/ is the instructor's truth, solutions/<name>/ the reference, release/<name>/ what students
    get, autograder/<name>/ the hidden suites. A course shipped without source/ and solutions/ (the Gradescope
    zip) reads the release as its source: the same cells, grade ids, points and given code, its solutions blank
    (no solution cell is ever taken from the source: sandbox/program.py); its reference's answers are data
    (answer_cache.py)."""

    root: Path
    name: str

    @property
    def source_dir(self) -> Path:
        source = self.root / "source" / self.name
        return source if source.is_dir() or not self.release_dir.is_dir() else self.release_dir

    @property
    def has_reference(self) -> bool:
        """Whether the reference solution is here to run (not in the Gradescope zip)."""
        return (self.root / "solutions" / self.name / self.notebook_name).is_file()

    @property
    def release_dir(self) -> Path:
        return self.root / "release" / self.name

    @property
    def suite_dir(self) -> Path:
        return self.root / "autograder" / self.name

    @cached_property
    def notebook_name(self) -> str:
        """The assignment's one notebook: the only .ipynb in source/<name>/ (in release/<name>/ without source/)."""
        notebooks = sorted(p.name for p in self.source_dir.glob("*.ipynb"))
        if len(notebooks) != 1:
            raise RuntimeError(f"{self.source_dir} should hold exactly one notebook, found {notebooks}")
        return notebooks[0]

    @cached_property
    def modules(self) -> list[str]:
        """The assignment's own Python modules the notebook's graded code imports (engine), read from the
        source notebook's code cells but its test cells (which import the public checks' runner, and
        which the grader replaces) and its demonstrations."""
        imported: set[str] = set()
        for cell in self.source_json["cells"]:
            if cell.get("cell_type") != "code" or is_test_cell(cell) or "demo" in cell.get("metadata", {}).get("tags", []):
                continue
            source = cell.get("source", "")
            for line in ("".join(source) if isinstance(source, list) else source).splitlines():
                words = line.split()
                if len(words) >= 2 and words[0] in ("import", "from"):
                    imported.add(words[1].split(".")[0].rstrip(","))
        return sorted(p.stem for p in self.source_dir.glob("*.py") if p.stem in imported)

    @cached_property
    def source_json(self) -> dict[str, Any]:
        """The source notebook's JSON, as saved (a cell's source may be a list of lines)."""
        return json.loads((self.source_dir / self.notebook_name).read_text())

    @cached_property
    def release_json(self) -> dict[str, Any]:
        """The public release's JSON, as saved."""
        return json.loads((self.release_dir / self.notebook_name).read_text())

    @cached_property
    def source(self) -> NotebookNode:
        return notebook_from_text((self.source_dir / self.notebook_name).read_text())

    @cached_property
    def reference(self) -> NotebookNode:
        return notebook_from_text((self.root / "solutions" / self.name / self.notebook_name).read_text())

    @cached_property
    def release(self) -> NotebookNode:
        """The public release, stubs blank: a part takes every solution cell but its own from it."""
        return notebook_from_text((self.release_dir / self.notebook_name).read_text())

    @cached_property
    def grade_cells(self) -> list[GradeCell]:
        """The autograded test cells, in notebook order, with their points."""
        cells = []
        for cell in self.source.cells:
            if is_test_cell(cell):
                cells.append(GradeCell(cell.metadata.nbgrader.grade_id, float(cell.metadata.nbgrader.points)))
        return cells


def find_assignment(root: Path, name: str | None = None) -> Assignment:
    """The named assignment, or the course's only one."""
    folder = root / "source" if (root / "source").is_dir() else root / "release"  # the Gradescope zip has no source/
    if name is None:
        names = sorted(p.name for p in folder.iterdir() if p.is_dir())
        if len(names) != 1:
            raise RuntimeError(f"name the assignment: {folder.name}/ holds {names}")
        name = names[0]
    if not (folder / name).is_dir():
        raise RuntimeError(f"no assignment {name!r} in {folder}")
    return Assignment(root, name)


@cache
def course_assignment(root: Path, name: str) -> Assignment:
    """The one Assignment per course and name in this process: the preprocessors, which nbgrader runs for
    every student, read its notebooks once, not once a student."""
    return Assignment(root, name)
