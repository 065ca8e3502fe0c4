"""A course's life cycle: from the demo class to a real one, regrading, cleaning, next year's reset.

**The demo class is recognised by its submissions, never by a file beside them.** A folder of
submitted/ is a demo student's when its name is on the demo roster and its notebook is, byte for
byte, the one `write_demo_class` writes for that student (demo_fingerprints). A gradebook row is a
demo student's when the name is on the roster and every submission it holds carries the demo's fixed
time stamp (demo.TIMESTAMP, to the microsecond), or it holds none and no name or e-mail was given.

**Only demo students are ever removed.** Grading a class first forgets every demo student whose demo
submission is no longer in submitted/ (deleted, or replaced by a real student's work under the same
name): their gradebook rows, autograded/ and feedback/ folders, and so their grades.csv row. A real
student whose folder is missing keeps everything: the instructor may have moved it away by mistake.

**Manual grades survive every target but `make reset-gradebook`**, which says so. nbgrader's autograde
keeps a grade's manual score and comment, and flags a grade that has a manual score for review
(needs_manual_grade); the kit checks the scores and comments after grading and puts back any that
changed (keep_manual_marks).
"""
from __future__ import annotations

import functools
import hashlib
import shutil
import tempfile
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import parse_utc

from .assignment import Assignment
from .demo import MARKER, ROSTER, TIMESTAMP, write_demo_class
from .export import PartsCsvExportPlugin

# What grading writes, besides gradebook.db: removed by `make clean-grading` (reports/ is the class
# report's folder, .grading/ the scratch release).
GRADING_OUTPUTS = ("autograded", "feedback", "grades.csv", "reports", ".grading")
GRADEBOOK_FILES = ("gradebook.db", "gradebook.db-journal")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@functools.lru_cache(maxsize=None)
def demo_fingerprints(assignment: Assignment) -> dict[str, str]:
    """{student: sha256 of the notebook} of the demo class as write_demo_class writes it now."""
    with tempfile.TemporaryDirectory() as scratch:
        students = write_demo_class(assignment, Path(scratch))
        return {student: _sha(Path(scratch) / student / assignment.name / assignment.notebook_name)
                for student in students}


def demo_names(assignment: Assignment) -> set[str]:
    return set(ROSTER) | set(demo_fingerprints(assignment))


def is_demo_submission(assignment: Assignment, submitted: Path, student: str) -> bool:
    """Whether submitted/<student> is the bundled demo's submission for that name, byte for byte."""
    expected = demo_fingerprints(assignment).get(student)
    notebook = submitted / student / assignment.name / assignment.notebook_name
    try:
        return expected is not None and notebook.is_file() and _sha(notebook) == expected
    except OSError:
        return False


def demo_submissions(assignment: Assignment, submitted: Path) -> list[str]:
    """The students of submitted/ whose submission is the bundled demo's."""
    folders = sorted(p.parent.name for p in submitted.glob(f"*/{assignment.name}") if p.is_dir())
    return [student for student in folders if is_demo_submission(assignment, submitted, student)]


def _gradebook(coursedir: CourseDirectory) -> Gradebook | None:
    """The course's gradebook, or None when there is none yet (never creates one)."""
    url = coursedir.db_url
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        return None
    return Gradebook(url, coursedir.course_id)


def _is_demo_row(student, names: set[str]) -> bool:
    if student.id not in names:
        return False
    if not student.submissions:  # entered by an interrupted demo run, before its autograde
        return not (student.first_name or student.last_name or student.email or student.lms_user_id)
    demo_time = parse_utc(TIMESTAMP).replace(tzinfo=None)
    return all(s.timestamp is not None and s.timestamp.replace(tzinfo=None) == demo_time for s in student.submissions)


def stale_demo_students(assignment: Assignment, coursedir: CourseDirectory, submitted: Path) -> list[str]:
    """Gradebook students who were demo students and whose demo submission is gone from submitted/."""
    gradebook = _gradebook(coursedir)
    if gradebook is None:
        return []
    names = demo_names(assignment)
    with gradebook as gb:
        rows = [s.id for s in gb.students if _is_demo_row(s, names)]
    return [s for s in rows if not is_demo_submission(assignment, submitted, s)]


def forget_students(assignment: Assignment, coursedir: CourseDirectory, students: list[str]) -> None:
    """Remove students from the gradebook (through nbgrader's API) and their autograded/ and feedback/."""
    gradebook = _gradebook(coursedir)
    if gradebook is not None and students:
        with gradebook as gb:
            for student in students:
                try:
                    gb.remove_student(student)
                except MissingEntry:
                    pass
    root = Path(coursedir.root)
    for student in students:
        for folder in (coursedir.autograded_directory, coursedir.feedback_directory):
            shutil.rmtree(root / folder / student, ignore_errors=True)


def forget_stale_demo(assignment: Assignment, coursedir: CourseDirectory, submitted: Path) -> list[str]:
    """What grading a class does first: forget the demo students no longer in submitted/ (module doc)."""
    (submitted / MARKER).unlink(missing_ok=True)  # the dotfile older versions left: demo-ness is the content's
    stale = stale_demo_students(assignment, coursedir, submitted)
    forget_students(assignment, coursedir, stale)
    return stale


def export_grades(assignment: Assignment, coursedir: CourseDirectory) -> None:
    """grades.csv from the gradebook (nbgrader's CSV export); no gradebook or no student, no file."""
    target = assignment.root / "grades.csv"
    gradebook = _gradebook(coursedir)
    if gradebook is None:
        target.unlink(missing_ok=True)
        return
    with gradebook as gb:
        if not gb.students:
            target.unlink(missing_ok=True)
            return
        PartsCsvExportPlugin(to=str(target)).export(gb)  # a column per part (autograder/export.py)


def new_class(assignment: Assignment, coursedir: CourseDirectory) -> list[str]:
    """`make new-class`: the demo class leaves everything behind it; real students keep theirs.

    Removes each demo submission from submitted/, then every demo student from the gradebook,
    autograded/ and feedback/, and writes grades.csv again (or removes it when no student is left).
    Returns the students removed.
    """
    submitted = assignment.root / coursedir.submitted_directory
    gone = demo_submissions(assignment, submitted) if submitted.is_dir() else []
    for student in gone:
        shutil.rmtree(submitted / student / assignment.name)
        try:
            (submitted / student).rmdir()  # only if nothing else of the student's is there
        except OSError:
            pass
    removed = sorted(set(gone) | set(forget_stale_demo(assignment, coursedir, submitted)))
    if (assignment.root / "grades.csv").exists() or removed:
        export_grades(assignment, coursedir)
    return removed


def clean_grading(root: Path) -> list[str]:
    """`make clean-grading`: remove what grading wrote, but not gradebook.db (manual grades live there)."""
    removed = []
    for name in GRADING_OUTPUTS:
        path = root / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        else:
            continue
        removed.append(name)
    return removed


def reset_gradebook(root: Path) -> list[str]:
    """`make reset-gradebook`: clean_grading, and delete gradebook.db: every score, manual grades too."""
    removed = clean_grading(root)
    for name in GRADEBOOK_FILES:
        if (root / name).exists():
            (root / name).unlink()
            removed.append(name)
    return removed


def manual_marks(coursedir: CourseDirectory, assignment: str, students: list[str]) -> dict:
    """What graders entered by hand for these students: manual scores, extra credit, comments."""
    marks: dict = {}
    gradebook = _gradebook(coursedir)
    if gradebook is None:
        return marks
    with gradebook as gb:
        for student in students:
            try:
                submission = gb.find_submission(assignment, student)
            except MissingEntry:
                continue
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.manual_score is not None or grade.extra_credit is not None:
                        marks[(student, notebook.name, "grade", grade.name)] = (grade.manual_score, grade.extra_credit)
                for comment in notebook.comments:
                    if comment.manual_comment is not None:
                        marks[(student, notebook.name, "comment", comment.name)] = comment.manual_comment
    return marks


def keep_manual_marks(coursedir: CourseDirectory, assignment: str, marks: dict) -> int:
    """Put back any manual mark that grading changed (nbgrader 0.9.6 keeps them: this is the guard).
    Returns how many had to be put back."""
    gradebook = _gradebook(coursedir)
    if gradebook is None or not marks:
        return 0
    restored = 0
    with gradebook as gb:
        for (student, notebook, kind, name), value in marks.items():
            try:
                if kind == "grade":
                    grade = gb.find_grade(name, notebook, assignment, student)
                    if (grade.manual_score, grade.extra_credit) != value:
                        grade.manual_score, grade.extra_credit = value
                        grade.needs_manual_grade = True  # as nbgrader flags a regraded manual score: review it
                        restored += 1
                else:
                    comment = gb.find_comment(name, notebook, assignment, student)
                    if comment.manual_comment != value:
                        comment.manual_comment = value
                        restored += 1
            except MissingEntry:
                continue
        gb.db.commit()
    return restored
