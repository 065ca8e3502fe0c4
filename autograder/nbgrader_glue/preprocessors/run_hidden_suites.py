"""RunHiddenSuites: nbgrader's Execute step replaced by the hidden suites.

nbgrader has already restored the locked cells (OverwriteCells); this preprocessor grades the
notebook in the sandbox and writes each part's outcome into its grade cell, where nbgrader's own
SaveAutoGrades reads it: an error output scores 0, a numeric execute_result scores that many
points. The cell's text lists each check by name and message, never the hidden code. The whole
report is also written to report.json beside the autograded notebook (RunHiddenSuites).
"""
from __future__ import annotations

from pathlib import Path

from nbformat.v4 import new_output
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from ...assignment import Assignment, course_assignment, is_test_cell
from ...grading import ClassGrading, prepare_class
from ...report import PartResult, Report, check_lines
from ...settings import GraderSettings
from ...submission import Submission
from .grading_notes import METADATA_KEY

NOTE_RESOURCE = "kit_grading_note"  # the report's note, handed to AddGradingNotes in the pass's resources
# Each part's score in the report, handed to SaveAutoGradesAtOnce: a part whose test cell the student deleted has no
# cell to carry it, and the suites graded it all the same.
PART_SCORES = "kit_part_scores"
GRADING_RESOURCE = "kit_class_grading"  # the class's grading.ClassGrading, handed in by the converter (StagedAutograde)
OWN_GRADINGS = "kit_own_class_gradings"  # on the exporter: the classes prepared here when none was handed in


def grade_cell_outputs(part: PartResult) -> list:
    """The outputs that make nbgrader give `part.score`, and show the student why."""
    text = check_lines(part) or "no check of this part ran\n"
    if part.score > 0:
        return [new_output("stream", name="stdout", text=text),
                new_output("execute_result", data={"text/plain": f"{part.score:g}"}, execution_count=1)]
    return [new_output("error", ename="ChecksFailed", evalue=f"0 of {part.max_score:g} points",
                       traceback=text.splitlines())]


def report_path(coursedir: CourseDirectory, student: str, assignment: str) -> Path:
    """Where RunHiddenSuites writes a submission's report: beside its autograded notebook."""
    return Path(coursedir.format_path(coursedir.autograded_directory, student, assignment)) / "report.json"


def write_grade_cells(nb, report: Report) -> None:
    """Put each part's outcome into its grade cell of `nb`."""
    parts = {p.grade_id: p for p in report.parts}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if is_test_cell(cell):
            # A grade cell no suite scored must still carry an error: nbgrader counts silence as full marks.
            part = parts.get(meta.get("grade_id"), PartResult(meta.get("grade_id", "?"), float(meta.get("points", 0))))
            cell.outputs = grade_cell_outputs(part)
            cell.execution_count = 1


class RunHiddenSuites(NbGraderPreprocessor):
    """Grade the notebook with autograder/<assignment>/ instead of executing it in a kernel.

    The report goes two ways, both on disk: each part's outcome into its grade cell (for nbgrader's
    SaveAutoGrades, so into the gradebook), and the whole report, with the notes FindGradingNotes found,
    into report.json beside the autograded notebook, where `make grade` reads it for its summary (and its
    note to AddGradingNotes, later in the same pass). The grading itself runs in this process's warm
    sandboxes, for the class prepared before the pool forked, which the converter hands in through the
    pass's resources (GRADING_RESOURCE: classroom.student_autograde.StagedAutograde). nbgrader run on its
    own (`nbgrader autograde`, the formgrader's autograde button) hands in none: the class is prepared here,
    from this preprocessor's configuration, once for the converter's run (_own_grading), and each notebook's
    sandboxes are closed with it.
    """

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        coursedir = CourseDirectory(parent=self)
        assignment = course_assignment(Path(coursedir.root), info["assignment"])
        notes = nb.metadata.pop(METADATA_KEY, None)  # FindGradingNotes', from the notebook as submitted
        submission = Submission(f"{info['student']}/{info['notebook']}", notebook=nb)
        handed = resources.get(GRADING_RESOURCE)
        grading = handed or self._own_grading(assignment)
        try:
            report = grading.grade_one(submission)
        finally:
            if handed is None:  # nbgrader on its own: no sandbox outlives the notebook (nothing would close it)
                grading.close()
        report.notes = [str(note) for note in notes] if isinstance(notes, list) else []
        write_grade_cells(nb, report)
        report.save(report_path(coursedir, info["student"], info["assignment"]))
        resources[NOTE_RESOURCE] = report.note  # for AddGradingNotes, later in this same pass
        resources[PART_SCORES] = {part.grade_id: part.score for part in report.parts}  # for SaveAutoGradesAtOnce
        return nb, resources

    def _own_grading(self, assignment: Assignment) -> ClassGrading:
        """The class prepared here for `assignment`, on the run's first notebook of it. nbgrader makes its
        preprocessors again for each notebook, and its exporter (this one's parent) once for the converter's run:
        the class is kept there (OWN_GRADINGS), so the run's later notebooks are graded with it."""
        owner = self.parent if self.parent is not None else self
        owned: dict[Assignment, ClassGrading] = owner.__dict__.setdefault(OWN_GRADINGS, {})
        if assignment not in owned:
            owned[assignment] = ClassGrading(prepare_class(assignment, GraderSettings(parent=self)))
        return owned[assignment]
