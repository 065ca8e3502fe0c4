"""The rubric beside each written answer, for graders only.

nbgrader's formgrader shows the autograded copy of a submission, where a written answer is the student's
text alone: the model answer and rubric stay in source/. `AddRubric` (in c.Autograde.autograde_preprocessors,
after SaveAutoGrades has recorded the student's own text and its checksum) puts at the top of each written-answer
cell of the autograded copy the source cell's mark scheme (its `### BEGIN MARK SCHEME` regions), or, when it has
none, its solution region (model answer and rubric), under a heading that says graders only, and the student's
text under a heading of its own below it: first, because markdown read after a student's text can be taken into
it (an answer ending in an open code fence would show the rubric as the student's code). `StripRubric` (in
c.GenerateFeedback.preprocessors) keeps only the student's text again, by its length recorded in the cell's
metadata, counted from the end, so a student's feedback page never shows the rubric, whatever the student wrote.
"""
from __future__ import annotations

import re
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution

from ...assignment import course_assignment

HEADING = "#### Rubric for graders (from source/; students never see it)"
ANSWER_HEADING = "#### The student's answer"
_MARK_SCHEME = re.compile(r"^[ \t]*#*[ \t]*BEGIN MARK SCHEME[^\n]*\n(.*?)^[ \t]*#*[ \t]*END MARK SCHEME[^\n]*$", re.M | re.S)
_SOLUTION = re.compile(r"^[ \t]*#*[ \t]*BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*#*[ \t]*END SOLUTION[^\n]*$", re.M | re.S)


def _written(cell: NotebookNode) -> bool:
    """A written answer: a markdown cell that is both a grade cell and a solution cell (manually graded)."""
    return cell.get("cell_type") == "markdown" and bool(is_grade(cell)) and bool(is_solution(cell))


def rubric_text(source_cell) -> str:
    """What graders should read beside a written answer: the mark scheme, else the model answer and rubric."""
    text = source_cell.get("source", "")
    regions = _MARK_SCHEME.findall(text) or _SOLUTION.findall(text)
    return "\n\n".join(region.strip() for region in regions if region.strip())


def rubrics(source: NotebookNode) -> dict[str, str]:
    """Each written answer's rubric in the source notebook, by grade_id."""
    return {cell.metadata.nbgrader.grade_id: rubric_text(cell) for cell in source.cells if _written(cell)}


class AddRubric(NbGraderPreprocessor):
    """Put the source's rubric above each written answer of the autograded copy (for the formgrader)."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        assignment = course_assignment(Path(CourseDirectory(parent=self).root), info["assignment"])
        found = rubrics(assignment.source)
        for cell in nb.cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if _written(cell) and found.get(grade_id):
                answer = cell.source
                cell.metadata["kit_rubric"] = {"answer_chars": len(answer)}
                cell.source = f"{HEADING}\n\n{found[grade_id]}\n\n---\n\n{ANSWER_HEADING}\n\n{answer}"
        return nb, resources


class StripRubric(NbGraderPreprocessor):
    """Remove what AddRubric put above the answer: the student's feedback shows their own answer only."""

    def preprocess_cell(self, cell, resources, index):
        kept = cell.get("metadata", {}).pop("kit_rubric", None)
        if isinstance(kept, dict) and isinstance(kept.get("answer_chars"), int):
            cell.source = cell.source[len(cell.source) - kept["answer_chars"]:]
        return cell, resources
