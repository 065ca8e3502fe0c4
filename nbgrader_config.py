"""nbgrader settings for this course directory, and the grader's own (c.GraderSettings)."""
import importlib.util
import os
import sys

c = get_config()  # noqa: F821 (nbgrader provides it)
root = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, root)  # so nbgrader can import the autograder package's preprocessor

c.CourseDirectory.root = root
c.CourseDirectory.course_id = "dl01"
c.CourseDirectory.solution_directory = "solutions"
# report.json: the grader's report beside each autograded notebook (RunHiddenSuites), never copied from a
# submission into autograded/ nor from there into feedback/.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".pytest_cache", "report.json"]
# nbgrader's exchange, which the kit does not use (its Collect button, `nbgrader collect`), copies each inbound
# folder through the kit's intake: no link followed, regular files only (docs/security.md).
c.ExchangeFactory.collect = "autograder.nbgrader_glue.exchange_collect.IntakeExchangeCollect"

# An LMS download (downloaded/dl01_6_3/archive/*.zip, or its files and folders as they are) is unpacked
# and sorted into submitted/<student>/dl01_6_3/ by nbgrader's zip_collect with the kit's plugins, which
# `make grade` runs when archive/ has files (autograder/intake/collect.py, docs/instructors.md: "Collecting an
# LMS download"). Each pattern must match a file's whole path from the download's top level, so a student
# id comes only from the names the LMS writes; `name` + `lms_id` make the id `smithjohn_12345`, and
# `make grades-lms` reads the number back. `attachment` orders two uploads of one student; `late` is
# Canvas's LATE marker. A renumbered upload (Canvas's modules_and_sgd-1.ipynb) is collected under the name of
# the assignment's notebook (LmsFileNameCollectorPlugin.notebook_name: by default, the one in source/<assignment>/).
c.ZipCollectApp.collector_plugin = "autograder.intake.collect.LmsFileNameCollectorPlugin"
c.ZipCollectApp.extractor_plugin = "autograder.intake.unpack.BoundedExtractor"
c.LmsFileNameCollectorPlugin.named_regexps = [
    # Moodle, "Download submissions in folders": John Smith_12345_assignsubmission_file_/modules_and_sgd.ipynb
    # (the folder is Moodle's; what is inside it is the student's, and never names anyone)
    r"(?P<name>[^/_]+)_(?P<lms_id>\d+)_assignsubmission_file_/(?:[^/]+/)*(?P<file_id>[^/]+\.ipynb)",
    # Moodle, one folder: John Smith_12345_assignsubmission_file_modules_and_sgd.ipynb (a file name that holds
    # Moodle's marker again is a name chosen to put a classmate's id first: refused)
    r"(?P<name>[^/_]+)_(?P<lms_id>\d+)_assignsubmission_file_(?P<file_id>(?!.*_assignsubmission_file_)[^/]+\.ipynb)",
    # Canvas with anonymous grading: anon_x7k2p_6789012_modules_and_sgd.ipynb, LATE_anon_x7k2p_6789013_... (no user,
    # only the submission's anonymous id, in either case: the student is `anon_x7k2p`, with no Canvas user id; an
    # anonymous id of digits alone would read below as a user `anon` with a Canvas user's number, so this comes first)
    r"(?:(?P<late>LATE)_)?anon_(?P<anonymous_id>[A-Za-z0-9]+)_(?P<attachment>\d+)_"
    r"(?P<file_id>(?!\d+_)(?!(?:[^/]*_)?(?:LATE_)?\d+_\d+_)[^/]+\.ipynb)",
    # Canvas: smithjohn_12345_6789012_modules_and_sgd.ipynb, smithjohn_LATE_12345_6789013_modules_and_sgd-1.ipynb
    # (user id, then the attachment id, which grows with each upload). The name is the student's own and may hold
    # `_` and digits: a file name after the ids that holds ids again is the sign of one (`bob_333` or `bob_333_1_x`
    # as a name puts the real ids after it) and is refused rather than read as someone else's
    r"(?P<name>[^/_]+)_(?:(?P<late>LATE)_)?(?P<lms_id>\d+)_(?P<attachment>\d+)_"
    r"(?P<file_id>(?!\d+_)(?!(?:[^/]*_)?(?:LATE_)?\d+_\d+_)[^/]+\.ipynb)",
    # Blackboard, "Assignment File Download" (nbgrader's own zip_collect example): the assignment's title, the
    # username, the attempt's time, the upload's own name: ps1_bitdiddle_attempt_2026-11-20-10-00-00_modules_and_sgd.ipynb
    # (the id is the username as `name` gives it: bitdiddle). The time (in the server's zone, which the name does not
    # say) orders two attempts as Canvas's attachment number does; no timestamp.txt is written from it. A title or
    # username holding `_` could be either, so it matches nothing (named as not collected, never the title read as
    # everyone's id); a file name holding the marker again is refused, as Moodle's. Blackboard's receipt of each
    # attempt, `<...>_attempt_<time>.txt`, is read as written, with no file_id: it is no notebook, but counts in its
    # student's caps. Read as written, any username read for a notebook owns its receipt too (`ann.lee`: a stem cut
    # at the first dot would read `ps1_ann` and leave the receipt no one's)
    r"[^/_]+_(?P<name>[^/_]+)_attempt_(?P<attachment>[0-9]{4}(?:-[0-9]{2}){5})"
    r"(?:_(?P<file_id>(?!.*_attempt_[0-9]{4}(?:-[0-9]{2}){5}[_.])[^/]+\.ipynb)|\.txt)",
    # Anything else: <student id>_<anything>_modules_and_sgd.ipynb, at the top level, but never a name that holds
    # Canvas's ids (`_12345_6789012_`, with or without LATE), Moodle's marker or Blackboard's: those are the LMS's,
    # read or refused above
    r"(?!.*(?:^|_)(?:LATE_)?\d+_\d+_)(?!.*_assignsubmission_file_)(?!.*_attempt_[0-9]{4}(?:-[0-9]{2}){5}[_.])"
    r"(?P<student_id>[^/_]+)_(?:[^/]*_)?(?P<file_id>modules_and_sgd\.ipynb)",
]
# Caps on what one LMS download may unpack to (autograder/intake/unpack.py). A file past one is "not collected:
# too large" (or too deep, or one file too many) for its student alone; the class goes on.
c.BoundedExtractor.max_file_mb = 16           # one file, unpacked (notebooks are graded up to notebook_kb)
c.BoundedExtractor.max_submission_mb = 64     # one student's: a top-level file or folder of the download
c.BoundedExtractor.max_submission_files = 100
c.BoundedExtractor.max_total_mb = 2048        # the whole download, unpacked
c.BoundedExtractor.max_entries = 100000       # the whole download: files, folders and refused entries
c.BoundedExtractor.max_depth = 8              # path parts from the download's top level, the file included

# grades.csv, from `make grade` and from `nbgrader export` alike: a column per autograded part, and the
# hand-graded points apart until they are graded (autograder/outputs/export.py).
c.ExportApp.plugin_class = "autograder.outputs.export.PartsCsvExportPlugin"

# Released stubs: one line the student replaces.
c.ClearSolutions.code_stub = {"python": "raise NotImplementedError()"}

# Sanitizing, as nbgrader does it, except that a pasted copy of a graded cell becomes a plain cell
# instead of failing the whole notebook (see autograder/nbgrader_glue/preprocessors/drop_duplicate_ids.py).
c.Autograde.sanitize_preprocessors = [
    "autograder.nbgrader_glue.preprocessors.grading_notes.FindGradingNotes",  # renamed, pasted, edited cells, as submitted
    "nbgrader.preprocessors.ClearOutput",
    "autograder.nbgrader_glue.preprocessors.drop_duplicate_ids.DropDuplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "autograder.nbgrader_glue.preprocessors.overwrite_cells_at_once.OverwriteCellsAtOnce",  # nbgrader's, one query a kind of row
    "autograder.nbgrader_glue.preprocessors.sanitize_markdown.SanitizeMarkdown",  # student markdown renders inert (docs/security.md)
    "autograder.nbgrader_glue.preprocessors.check_cell_metadata.CheckCellMetadataSchemaOnce",  # nbgrader's, its schema checked once
]

# Each student's autograde (every step above and below, in a grading process) within CPU seconds of its own
# (autograder/classroom/cpu_bound.py): one that takes longer is stopped and the student not graded, with that
# reason (an honest notebook of notebook_kb: about 0.5 s; one of adversarial markdown: about 4 s).
c.GraderSettings.autograde_seconds = 60.0

# Grading: the hidden pytest suites take the place of nbgrader's kernel executor. Everything
# around it (restoring locked cells, saving grades, late penalties) is nbgrader's own.
c.Autograde.autograde_preprocessors = [
    "autograder.nbgrader_glue.preprocessors.run_hidden_suites.RunHiddenSuites",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "autograder.nbgrader_glue.preprocessors.save_auto_grades_at_once.SaveAutoGradesAtOnce",  # nbgrader's, in one transaction
    "nbgrader.preprocessors.AssignLatePenalties",
    "autograder.nbgrader_glue.preprocessors.cap_student_markdown.CapStudentMarkdown",  # the pages: 128 KB of own markdown, 64 KB of own code
    "autograder.nbgrader_glue.preprocessors.rubric.AddRubric",  # the rubric beside each written answer, for the formgrader
    "autograder.nbgrader_glue.preprocessors.add_grading_notes.AddGradingNotes",  # the report's note as the notebook's first cell
]
# Each pass validates the notebook once, after its preprocessors (and before SaveAutoGrades writes the
# gradebook), instead of after every one; nbformat's read and write do not validate it again
# (autograder/nbgrader_glue/exporters.py says why that checks the same).
c.Autograde.exporter_class = "autograder.nbgrader_glue.exporters.ValidateOnceExporter"
# (nbgrader's default list ends with a second CheckCellMetadata, after execution. Nothing here runs
# the notebook: RunHiddenSuites only writes grade cell outputs, and the cell metadata checked while
# sanitizing is unchanged. Leaving it out saves a fifth of nbgrader's time per notebook.)

# Limits for student code (docs/grading.md: Limits). What a student sees when one is hit is listed there.
# CPU time, not wall clock (a busy machine changes no grade); twice as long of wall-clock time is a backstop.
c.GraderSettings.seconds = 3.0      # CPU seconds per check, and per cell of loading the notebook
c.GraderSettings.memory_mb = 1024   # memory student code may add, per check
c.GraderSettings.output_kb = 1024   # printing past this stops the check
c.GraderSettings.answer_kb = 1024   # one check's answer to the grader (JSON): larger is that check's failure
c.GraderSettings.notebook_kb = 2048  # a larger notebook file is not graded (the summary says why)
# What grading takes from a submission folder, through one intake (autograder/intake/files.py): the notebook and
# nbgrader's timestamp.txt, never through a link, plus the files named here (none: nothing else reaches
# autograded/ or feedback/).
c.GraderSettings.submission_files = []
c.GraderSettings.submission_file_kb = 1024
c.GraderSettings.submission_entries = 1000
# Budgets for a whole submission, across all its processes (docs/security.md). A submission that
# hits one is named in the summary with the budget.
c.GraderSettings.budget_seconds = 45.0   # above the ~30 s of a stub that loops; then the rest are "not run"
c.GraderSettings.budget_answers_mb = 8   # its answers to the grader in all (about 0.2 MB for a whole notebook)
c.GraderSettings.budget_memory_mb = 1024
c.GraderSettings.budget_processes = 64
c.GraderSettings.budget_disk_mb = 64     # its private /tmp, /var/tmp and /dev/shm together
c.GraderSettings.message_budget = 20000  # characters of message text in its report

# solutions/ is the reference the hidden suites compare against: generated without running it,
# so regenerating it gives the same bytes (make test checks that). make test runs it separately.
c.GenerateSolution.preprocessors = [
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.LockCells",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.ClearMarkScheme",
    "autograder.nbgrader_glue.preprocessors.record_release.RecordRelease",  # the release's cells, for the public checks
]
# nbgrader's own list, and last the release's cells as the grade takes them, kept in the notebook for the public
# checks (the student's folder holds no other copy of the release: autograder/nbgrader_glue/preprocessors/record_release.py).
c.GenerateAssignment.preprocessors = [
    *(f"nbgrader.preprocessors.{name}" for name in (
        "IncludeHeaderFooter", "InstantiateTests", "LockCells", "ClearSolutions", "ClearOutput", "CheckCellMetadata",
        "ComputeChecksums", "SaveCells", "ClearHiddenTests", "ClearMarkScheme", "ComputeChecksums", "CheckCellMetadata")),
    "autograder.nbgrader_glue.preprocessors.record_release.RecordRelease",
]

# Feedback pages (docs/instructors.md: "Feedback pages"): nbgrader's generate_feedback with the kit's template
# (autograder/templates/kit_feedback: part names and scores in the index, written answers not graded yet
# said so, FAIL lines in red and wrapped), MathJax from the pinned jupyter-server-mathjax copied into
# feedback/_static/mathjax (no CDN), and the graders' rubric taken out again (autograder/outputs/feedback.py).
# Each page within CPU seconds of its own (autograder/classroom/cpu_bound.py): a page that takes longer is not written
# and the summary names its student as not graded, with that reason (an honest notebook of notebook_kb: about 1.5 s).
c.GraderSettings.page_seconds = 60.0
c.GenerateFeedback.exporter_class = "autograder.outputs.feedback.FeedbackExporter"
c.GenerateFeedback.preprocessors = [
    "autograder.nbgrader_glue.preprocessors.rubric.StripRubric",
    "autograder.outputs.feedback.FeedbackGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
c.FeedbackExporter.template_name = "kit_feedback"
c.FeedbackExporter.extra_template_basedirs = [
    os.path.join(root, "autograder", "templates"),
    # Found without importing nbgrader: the import takes about a second, which `python -m autograder grade` (and
    # Gradescope's run_autograder) would pay only to read this path.
    os.path.join(importlib.util.find_spec("nbgrader").submodule_search_locations[0], "server_extensions",
                 "formgrader", "templates"),
]

# The late policy, in one place (autograder/nbgrader_glue/late.py; README: "Instructors"). make grade writes the due date into the
# gradebook, where nbgrader's AssignLatePenalties reads it with each submission's timestamp.txt (Canvas's LATE
# marker writes one). Empty: the gradebook's own due date (nbgrader db assignment add --duedate), else none.
# Changing either is a change of settings: make grade previews its regrade before applying it (CONFIRM=yes).
c.GraderSettings.due_date = ""  # e.g. "2026-12-15 23:59:00 UTC" or "2026-12-15T23:59:00+01:00": a whole time, no zone name
c.AssignLatePenalties.plugin_class = "autograder.nbgrader_glue.late.LatePenalty"
c.LatePenalty.penalty_method = "none"  # nbgrader's "none" or "zero", or "per_day"
c.LatePenalty.percent_per_day = 10.0  # with "per_day": this percent of the score for each day (or part of one) late

# `make grades-lms`: a student whose written answers are not all graded is left blank (True: the points graded so
# far), and Canvas user ids come from the LMS download's names or from Canvas's own gradebook export.
# c.GraderSettings.canvas_partial = True
# c.GraderSettings.canvas_roster = "downloaded/canvas-gradebook.csv"

# `make grades-lms`: the assignment's column header as Canvas's gradebook export shows it ("Name (12345)", with
# Canvas's assignment id), so the import fills that assignment; unset, the column is the assignment id, which
# Canvas imports as a new assignment.
# c.GraderSettings.canvas_column = "Modules and SGD (123456)"

# What each part checks, in words, beside its grade id in feedback, `make grade`'s summary, the class page
# and grades.csv's headers.
c.GraderSettings.part_titles = {
    "test_forward": "Linear.forward()",
    "test_parameters": "Module.parameters()",
    "test_exercise_count": "Exercise: the parameters of 64-32-10",
    "test_zero_grad": "SGD.zero_grad()",
    "test_step": "SGD.step()",
    "test_exercise_second_step": "Exercise: the second step with and without zero_grad()",
    "test_no_grad": "no_grad()",
    "test_lesson_numbers": "The lesson's numbers, all methods together",
    "answer_zeroing": "Why gradients are zeroed",
    "answer_outside_graph": "Why the update is outside the graph",
    "answer_shared_weight": "A shared weight listed twice",
}
