"""SaveAutoGradesAtOnce: nbgrader's SaveAutoGrades, in one query for the rows and one commit for the notebook,
flagging a hand grade for review only when the answer it grades changed."""
from __future__ import annotations

import json

from nbgrader.preprocessors import SaveAutoGrades

from ...classroom import ledger
from ..gradebook_lookups import LookupsPrefetched


class SaveAutoGradesAtOnce(LookupsPrefetched, SaveAutoGrades):
    """nbgrader's SaveAutoGrades (each grade cell's auto score, each answer's "No response." comment), with the
    notebook's grades and comments read at once and written in one transaction (autograder/nbgrader_glue/gradebook_lookups.py):
    a notebook's scores enter the gradebook together or, if it fails on the way, not at all.

    nbgrader flags every grade that has a manual score as needing review each time it autogrades, so a second
    `make grade` would undo the instructor's hand grading. Here a grade with a manual score keeps the flag it
    had unless its answer changed since it was last autograded (ledger.answer_checksums, kept in the ledger in
    the same transaction): a written answer's own text, or, for an autograded part, the student's code."""

    def preprocess(self, nb, resources):
        self._answers = ledger.answer_checksums(nb)
        self._previous: dict[str, str] | None = None
        return super().preprocess(nb, resources)

    def _previous_answers(self) -> dict[str, str]:
        """The answers as last autograded (read, and this pass's recorded, on the first grade of the pass)."""
        if self._previous is None:
            session = self.gradebook.db
            row = ledger.read(session, self.assignment_id).get(self.student_id, {})
            try:  # {notebook: {grade id: checksum}}
                notebooks = json.loads(row.get("answers") or "{}")
            except ValueError:
                notebooks = {}
            notebooks = notebooks if isinstance(notebooks, dict) else {}
            previous = notebooks.get(self.notebook_id)
            self._previous = previous if isinstance(previous, dict) else {}
            notebooks[self.notebook_id] = self._answers
            ledger.write(session, self.assignment_id, self.student_id, "answers", json.dumps(notebooks, sort_keys=True))
        return self._previous

    def _add_score(self, cell, resources) -> None:
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
        flagged = bool(grade.needs_manual_grade)
        previous = self._previous_answers()
        super()._add_score(cell, resources)
        if grade.manual_score is not None and grade_id in self._answers and previous.get(grade_id) == self._answers[grade_id]:
            grade.needs_manual_grade = flagged  # the same answer: the instructor's grade stands as it was
