"""SaveAutoGradesAtOnce: nbgrader's SaveAutoGrades, in one query for the rows and one commit for the notebook,
flagging a hand grade for review exactly when the answer it grades differs from the one it was reviewed on."""
from __future__ import annotations

from nbgrader.preprocessors import SaveAutoGrades

from ...classroom import ledger
from ..gradebook_lookups import LookupsPrefetched
from .grading_notes import ANSWERS_KEY
from .run_hidden_suites import PART_SCORES


def submitted_answers(nb) -> dict[str, str]:
    """The answers' checksums FindGradingNotes took from the notebook as submitted (left in its metadata, so the
    autograded notebook is the one nbgrader's own SaveAutoGrades writes); a grade without one, as when that step
    did not run, is flagged if hand graded."""
    found = nb.metadata.get(ANSWERS_KEY)
    found = found if isinstance(found, dict) else {}
    return {grade_id: checksum for grade_id, checksum in found.items() if isinstance(checksum, str)}


class SaveAutoGradesAtOnce(LookupsPrefetched, SaveAutoGrades):
    """nbgrader's SaveAutoGrades (each grade cell's auto score, each answer's "No response." comment), with the
    notebook's grades and comments read at once and written in one transaction (autograder/nbgrader_glue/gradebook_lookups.py):
    a notebook's scores enter the gradebook together or, if it fails on the way, not at all.

    nbgrader flags every grade that has a manual score as needing review each time it autogrades, and never one
    with extra credit alone, so a second `make grade` would undo the instructor's hand grading, or keep extra credit
    on code that changed. Here a hand grade (ledger.hand_graded: a manual score or extra credit) is flagged exactly
    when its answer, as submitted (ledger.answer_checksums, taken by FindGradingNotes), differs from the answer the
    instructor gave or last confirmed the grade on (ledger.reviewed_answer), not always the last one autograded: an
    answer changed and changed back needs no review, and a changed one the instructor has not seen stays flagged
    however often it comes back. The checksums are kept in the ledger in the same transaction. Only the flag is
    ever written: a manual score, extra credit or comment is the instructor's."""

    def preprocess(self, nb, resources):
        self._answers = submitted_answers(nb)
        self._answers_v1 = ledger.answer_checksums_v1(nb)  # its keys: the grade cells nbgrader saves
        self._cell_ids = {cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in nb.cells}
        self._reviewed: dict[str, str | None] | None = None
        self._part_scores = resources.get(PART_SCORES) or {}
        return super().preprocess(nb, resources)

    def _reviewed_answers(self) -> dict[str, str | None]:
        """Each grade's reviewed answer, found on the first cell of the pass, before any flag changes (on the first
        grading after an upgrade, one the older kit recorded carried over: ledger.carried_over); this pass's answers
        are recorded then. A grade whose cell
        the student deleted is never saved (nbgrader saves the notebook's cells): an autograded part gets the score
        the suites gave it (RunHiddenSuites' report, as on Gradescope: a test cell is the release's, and the suites
        graded the student's code without it), a written answer none (an earlier notebook's score would stand
        either way; no score at all, None, is the grader's failure on the whole file, which grades.csv and the
        Canvas file leave blank: not_graded.py); its answer is recorded as gone, and a hand grade of it is
        flagged, then too."""
        if self._reviewed is None:
            session = self.gradebook.db
            book = ledger.read_answers(session, self.assignment_id, self.student_id)
            before = book.get(self.notebook_id, {})
            upgraded = ledger.recorded_by_an_older_kit(session, self.assignment_id, self.student_id)
            self._reviewed = {}
            for grade_id, now_v1 in self._answers_v1.items():
                grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
                reviewed = ledger.reviewed_answer(grade, before.get(grade_id))
                if upgraded:
                    reviewed = ledger.carried_over(reviewed, self._answers.get(grade_id), now_v1)
                self._reviewed[grade_id] = reviewed
            book[self.notebook_id] = {grade_id: {"seen": self._answers.get(grade_id), "reviewed": reviewed}
                                      for grade_id, reviewed in self._reviewed.items()}
            submitted = self.gradebook.find_submission_notebook(self.notebook_id, self.assignment_id, self.student_id)
            for grade in submitted.grades:
                if grade.name not in self._cell_ids:
                    grade.auto_score = float(self._part_scores.get(grade.name, 0.0))
                    book[self.notebook_id][grade.name] = ledger.answer_gone(grade, before.get(grade.name))
            ledger.write_answers(session, self.assignment_id, self.student_id, book)
        return self._reviewed

    def preprocess_cell(self, cell, resources, cell_index):
        self._reviewed_answers()  # on the first cell, so even in a notebook whose every grade cell was deleted
        return super().preprocess_cell(cell, resources, cell_index)

    def _add_score(self, cell, resources) -> None:
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        reviewed = self._reviewed_answers().get(grade_id)
        super()._add_score(cell, resources)
        grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
        if ledger.hand_graded(grade):  # the instructor's grade stands: to be reviewed on another answer only
            grade.needs_manual_grade = ledger.needs_review(grade, self._answers.get(grade_id), reviewed)
