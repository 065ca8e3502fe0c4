"""The rubric beside each written answer, for graders only.

nbgrader's formgrader shows the autograded copy of a submission, where a written answer is the student's
text alone: the model answer and rubric stay in source/. `AddRubric` (in c.Autograde.autograde_preprocessors)
puts in each written-answer cell's metadata of the autograded copy the source cell's mark scheme (its
`### BEGIN MARK SCHEME` regions), or, when it has none, its solution region (model answer and rubric), and takes
that key off every other cell, where only a student could have put it. The kit's grading page
(templates/kit_formgrade) renders it above the answer, in a box of its own under a heading that says graders only:
never in the student's text, where markdown or maths of theirs could run into it or be drawn over it (each box is
painted only within itself: readable.css). The student's text is never changed. `StripRubric` (in
c.GenerateFeedback.preprocessors) takes the key off again, so a student's feedback page never shows it.
"""
from __future__ import annotations

import re
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution

from ...assignment import course_assignment

RUBRIC = "kit_rubric"  # the cell metadata's key the grading page reads the rubric from
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
    """Give each written answer of the autograded copy the source's rubric, for the grading page."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        assignment = course_assignment(Path(CourseDirectory(parent=self).root), info["assignment"])
        found = rubrics(assignment.source)
        for cell in nb.cells:
            cell.get("metadata", {}).pop(RUBRIC, None)
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if _written(cell) and found.get(grade_id):
                cell.metadata[RUBRIC] = found[grade_id]
        return nb, resources


class StripRubric(NbGraderPreprocessor):
    """Take the rubric off again: the student's feedback shows their own answer only."""

    def preprocess_cell(self, cell, resources, index):
        cell.get("metadata", {}).pop(RUBRIC, None)
        return cell, resources
