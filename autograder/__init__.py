"""The kit's grader: hidden suites (written as pytest tests) run against student notebooks in a sandbox.

Modules, in the order a submission meets them (docs/submission-path.md):
    __main__           the command line; reads the configuration once (settings, assignment)
    classroom          `make grade`: collect, enter students, grade them in the pool, feedback, export, summary
    collect, unpack    an LMS download into submitted/: ids from the LMS's names, unpacking within caps
    student_ids        the safe alphabet of student ids, checked where students enter the gradebook
    inert              text from students made inert for a terminal and a spreadsheet, and one line long
    lifecycle          the demo class, regrading one student, cleaning, grades.csv (export)
    pool, progress     the process pool; its progress bars, drawn in the parent's results loop
    student_autograde  in a pool process: nbgrader's autograde for one student, the checks inline
    validate           a submission checked before anything reads it: which notebook, whether it is one
    submission         the notebook being graded (a value: its content or why not, its checks' results)
    preprocessors      nbgrader steps: notes, sanitising, the hidden suites, the rubric
    grading            grade_one: one notebook to one Report, for make grade, the CLI and Gradescope
    suites             each part's program and checks, its sandbox calls batched
    sandbox            runs student code in confined child processes (grader only)
    report             the Report: one submission's parts and checks, as JSON, a table, grade-cell lines
    redaction          what of a Report a student may read: hidden code withheld, cut, within a budget
    feedback           nbgrader's feedback pages with the kit's template
    gradescope, export, lms, class_page   Gradescope, grades out (grades.csv, Canvas), the class page (make report)
    counts             how the summary and the class page write counts and the class's mean
    pytest_plugin      the hidden suites under pytest itself
    formgrader_guard   a Jupyter server extension: nbgrader's formgrader pages escape ids and names
    demo, mutate, tuning   the demo class, notebook mutations for tests, nbgrader tuning
    modules            a module imported from its file (the hidden suites, their shared causes.py)
"""

import sys as _sys

# jsonschema (which nbformat and nbgrader use) imports rfc3987_syntax when it is installed, and that
# builds a grammar parser as it is imported (0.9 s here, a third of the grader's start-up), only to
# check the "iri" string format, which no notebook or nbgrader schema uses (nor is format checking on).
# Marking it absent makes jsonschema skip that one check.
_sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: "absent", as the import system documents
