"""nbgrader settings for this course directory, and the grader's own (c.GraderSettings)."""
import os
import sys

c = get_config()  # noqa: F821 (nbgrader provides it)
root = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, root)  # so nbgrader can import the autograder package's preprocessor

c.CourseDirectory.root = root
c.CourseDirectory.course_id = "dl01"
c.CourseDirectory.solution_directory = "solutions"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".pytest_cache"]

# An LMS download (downloaded/dl01_6_3/archive/*.zip or loose files) is unpacked and sorted into
# submitted/ by `nbgrader zip_collect`, which `make grade` runs when that folder has files. Files are
# expected as <student id>_<anything>_modules_and_sgd.ipynb; change the pattern to your LMS's naming.
c.FileNameCollectorPlugin.named_regexp = (
    r".*/(?P<student_id>[^/_]+)_(?:[^/]*_)?(?P<file_id>modules_and_sgd\.ipynb)$"
)

# Released stubs: one line the student replaces.
c.ClearSolutions.code_stub = {"python": "raise NotImplementedError()"}

# Sanitizing, as nbgrader does it, except that a pasted copy of a graded cell becomes a plain cell
# instead of failing the whole notebook (see autograder/preprocessors/drop_duplicate_ids.py).
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "autograder.preprocessors.drop_duplicate_ids.DropDuplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "autograder.preprocessors.sanitize_markdown.SanitizeMarkdown",  # student markdown renders inert (README)
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Grading: the hidden pytest suites take the place of nbgrader's kernel executor. Everything
# around it (restoring locked cells, saving grades, late penalties) is nbgrader's own.
c.Autograde.autograde_preprocessors = [
    "autograder.preprocessors.run_hidden_suites.RunHiddenSuites",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
]
# (nbgrader's default list ends with a second CheckCellMetadata, after execution. Nothing here runs
# the notebook: RunHiddenSuites only writes grade cell outputs, and the cell metadata checked while
# sanitizing is unchanged. Leaving it out saves a fifth of nbgrader's time per notebook.)

# Limits for student code (README: "Limits"). What a student sees when one is hit is in the README.
c.GraderSettings.seconds = 3.0      # wall-clock seconds per check, and for loading the notebook
c.GraderSettings.memory_mb = 1024   # memory student code may add, per check
c.GraderSettings.output_kb = 1024   # printing past this stops the check
c.GraderSettings.notebook_kb = 2048  # a larger notebook file is not graded (the summary says why)

# solutions/ is the reference the hidden suites compare against: generated without running it,
# so regenerating it gives the same bytes (make test checks that). make test runs it separately.
c.GenerateSolution.preprocessors = [
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.LockCells",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.ClearMarkScheme",
]
