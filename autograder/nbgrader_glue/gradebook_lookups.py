"""nbgrader's per-cell gradebook lookups for one notebook, answered from one query per kind of row.

OverwriteCells, SaveAutoGrades and GetGrades look up every cell of a notebook on its own: a source cell, a
graded cell, a grade or a comment by name, each a query joining four to seven tables (about sixty a
notebook), and SaveAutoGrades commits after each grade and each comment (about twenty commits). The kit's
subclasses of them (OverwriteCellsAtOnce and SaveAutoGradesAtOnce in autograder/nbgrader_glue/preprocessors/, FeedbackGrades
in autograder/outputs/feedback.py) mix in `LookupsPrefetched`: the Gradebook they open answers those lookups from the rows of the whole notebook,
read with one query per kind on first use, and their writes go to the database in one transaction,
committed when they close it (none when they fail on the way). Every other call goes to nbgrader's
Gradebook itself, and what is written is what nbgrader writes (tests/test_exporters.py compares the rows).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from nbgrader.api import (
    Comment,
    Grade,
    Gradebook,
    GradeCell,
    MissingEntry,
    SolutionCell,
    SourceCell,
    TaskCell,
)
from sqlalchemy.orm import joinedload


class _OneCommit:
    """The Gradebook's session, whose commits are flushes until the Gradebook is closed (then one commit)."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def commit(self) -> None:
        self.session.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


class PrefetchedGradebook:
    """A Gradebook whose find_source_cell, find_graded_cell, find_grade and find_comment are served from
    the notebook's rows of that kind, read at once; the rest is the Gradebook's."""

    def __init__(self, gradebook: Gradebook) -> None:
        self.gradebook = gradebook
        self.db = _OneCommit(gradebook.db)
        self.rows: dict[tuple, dict[str, Any]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.gradebook, name)

    def __enter__(self) -> "PrefetchedGradebook":
        self.gradebook.__enter__()
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        if kind is None:
            self.gradebook.db.commit()
        self.gradebook.__exit__(kind, value, traceback)

    def _rows(self, key: tuple, read: Callable[[], Iterable[Any]]) -> dict[str, Any]:
        """The rows `read` gives, by name (read once per key; the first of a name wins, as nbgrader's lookups try
        one kind of cell before the other)."""
        if key not in self.rows:
            rows: dict[str, Any] = {}
            for row in read():
                rows.setdefault(row.name, row)
            self.rows[key] = rows
        return self.rows[key]

    def _find(self, key: tuple, name: str, read: Callable[[], Iterable[Any]], what: str) -> Any:
        """The row called `name` among those `read` gives (`_rows`), or nbgrader's MissingEntry."""
        try:
            return self._rows(key, read)[name]
        except KeyError:
            raise MissingEntry(f"No such {what}: {'/'.join(map(str, key[1:]))}/{name}") from None

    def _cells(self, kind: Any, notebook: str, assignment: str) -> list[Any]:
        notebook_id = self.gradebook.find_notebook(notebook, assignment).id
        return self.gradebook.db.query(kind).filter(kind.notebook_id == notebook_id).all()

    def _submitted(self, kind: Any, cell_kinds: tuple[type, ...], notebook: str, assignment: str,
                   student: str) -> list[Any]:
        """The submitted notebook's grades or comments whose cell is of `cell_kinds`, in that order of kinds."""
        submitted_id = self.gradebook.find_submission_notebook(notebook, assignment, student).id
        rows = self.gradebook.db.query(kind).options(joinedload(kind.cell)).filter(kind.notebook_id == submitted_id)
        found = rows.all()
        return [row for cell_kind in cell_kinds for row in found if isinstance(row.cell, cell_kind)]

    def find_source_cell(self, name: str, notebook: str, assignment: str) -> SourceCell:
        return self._find(("source", notebook, assignment), name,
                          lambda: self._cells(SourceCell, notebook, assignment), "source cell")

    def find_graded_cell(self, name: str, notebook: str, assignment: str) -> GradeCell | TaskCell:
        return self._find(("graded", notebook, assignment), name,
                          lambda: self._cells(GradeCell, notebook, assignment) + self._cells(TaskCell, notebook, assignment),
                          "grade cell")

    def find_grade(self, grade_cell: str, notebook: str, assignment: str, student: str) -> Grade:
        return self._find(("grade", notebook, assignment, student), grade_cell,
                          lambda: self._grades(notebook, assignment, student), "grade")

    def grades(self, notebook: str, assignment: str, student: str) -> list[Grade]:
        """Every grade of the submitted notebook: the rows find_grade answers from."""
        return list(self._rows(("grade", notebook, assignment, student),
                               lambda: self._grades(notebook, assignment, student)).values())

    def _grades(self, notebook: str, assignment: str, student: str) -> list[Grade]:
        return self._submitted(Grade, (GradeCell, TaskCell), notebook, assignment, student)

    def find_comment(self, solution_cell: str, notebook: str, assignment: str, student: str) -> Comment:
        return self._find(("comment", notebook, assignment, student), solution_cell,
                          lambda: self._submitted(Comment, (SolutionCell, TaskCell), notebook, assignment, student),
                          "comment")


class LookupsPrefetched:
    """Mixin for an nbgrader preprocessor that opens `self.gradebook`: it is a PrefetchedGradebook."""

    _prefetched: PrefetchedGradebook

    @property
    def gradebook(self) -> PrefetchedGradebook:
        return self._prefetched

    @gradebook.setter
    def gradebook(self, gradebook: Gradebook) -> None:
        self._prefetched = PrefetchedGradebook(gradebook)
