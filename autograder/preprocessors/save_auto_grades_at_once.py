"""SaveAutoGradesAtOnce: nbgrader's SaveAutoGrades, in one query for the rows and one commit for the notebook."""
from __future__ import annotations

from nbgrader.preprocessors import SaveAutoGrades

from ..gradebook_lookups import LookupsPrefetched


class SaveAutoGradesAtOnce(LookupsPrefetched, SaveAutoGrades):
    """nbgrader's SaveAutoGrades (each grade cell's auto score, each answer's "No response." comment), with the
    notebook's grades and comments read at once and written in one transaction (autograder/gradebook_lookups.py):
    a notebook's scores enter the gradebook together or, if it fails on the way, not at all."""
