"""RunHiddenSuites: nbgrader's Execute step replaced by the hidden suites.

nbgrader has already restored the locked cells (OverwriteCells); this preprocessor grades the
notebook in the sandbox and writes each part's outcome into its grade cell, where nbgrader's own
SaveAutoGrades reads it: an error output scores 0, a numeric execute_result scores that many
points. The cell's text lists each check by name and message, never the hidden code.
"""
from __future__ import annotations

from pathlib import Path

from nbformat.v4 import new_output
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from ..assignment import Assignment
from ..report import PartResult, Report, check_lines
from ..settings import GraderSettings
from ..suites import Submission, grade_here


def grade_cell_outputs(part: PartResult) -> list:
    """The outputs that make nbgrader give `part.score`, and show the student why."""
    text = check_lines(part) or "no check of this part ran\n"
    if part.score > 0:
        return [new_output("stream", name="stdout", text=text),
                new_output("execute_result", data={"text/plain": f"{part.score:g}"}, execution_count=1)]
    return [new_output("error", ename="ChecksFailed", evalue=f"0 of {part.max_score:g} points",
                       traceback=text.splitlines())]


def write_report(nb, report: Report) -> None:
    """Put each part's outcome into its grade cell of `nb`."""
    parts = {p.grade_id: p for p in report.parts}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            # A grade cell no suite scored must still carry an error: nbgrader counts silence as full marks.
            part = parts.get(meta.get("grade_id"), PartResult(meta.get("grade_id", "?"), float(meta.get("points", 0))))
            cell.outputs = grade_cell_outputs(part)
            cell.execution_count = 1


class RunHiddenSuites(NbGraderPreprocessor):
    """Grade the notebook with autograder/<assignment>/ instead of executing it in a kernel."""

    # Each report by (student, notebook), for whoever started nbgrader to read back (make grade
    # sends it to its summary). The grading itself runs in this process's warm sandboxes.
    reports: dict[tuple[str, str], Report] = {}

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        key = (info["student"], info["notebook"])
        assignment = Assignment(Path(CourseDirectory(parent=self).root), info["assignment"])
        submission = Submission(f"{key[0]}/{key[1]}", notebook=nb)
        self.reports[key] = grade_here(assignment, submission, GraderSettings(parent=self))
        write_report(nb, self.reports[key])
        return nb, resources
