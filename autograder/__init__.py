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
    grading            prepare_class (the class's state, once before the fork), then grade_one: one notebook
                       to one Report, for make grade, the CLI and Gradescope
    suites             the hidden suites loaded, the PreparedClass, the Grader: each part's program and checks,
                       its sandbox calls batched (the pytest plugin grades with the same Grader)
    sandbox            runs student code in confined child processes (grader only)
    sandbox.policy     how submissions are confined: their sandboxes, the isolation level, the instructor's
                       files closed to student code
    report             the Report: one submission's parts and checks, as JSON, a table, grade-cell lines
    redaction          what of a Report a student may read: hidden code withheld, cut, within a budget
    feedback           nbgrader's feedback pages with the kit's template
    gradescope, export, lms, class_page   Gradescope, grades out (grades.csv, Canvas), the class page (make report)
    counts             how the summary and the class page write counts and the class's mean
    pytest_plugin      the hidden suites under pytest itself
    formgrader_guard   a Jupyter server extension: nbgrader's formgrader pages escape ids and names
    demo, mutate, tuning   the demo class, notebook mutations for tests, nbgrader tuning
    gradebook_lookups  nbgrader's per-cell gradebook lookups of a notebook, read at once (the at-once steps)
    modules            a module imported from its file (the hidden suites, their shared causes.py)
"""

import os as _os
import sys as _sys

# The grader's own arrays are small (a probe's answer against the reference's): BLAS threads only spin beside
# it, and a pool process would start its own. One thread each, set before numpy is imported (the sandbox's
# worker gets the same from its environment, autograder/sandbox/__init__.py).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_name, "1")

# jsonschema (which nbformat and nbgrader use) imports the libraries of its optional "format" checks when
# they are installed (nbgrader's dependencies bring them), and some are slow to import: rfc3987_syntax
# builds a grammar parser (0.9 s here), isoduration loads arrow and dateutil (0.09 s), rfc3986_validator
# compiles its grammar (0.05 s). Only format checks use them, and no notebook or nbgrader schema has a
# format that is checked (nor is format checking on). Marking them absent makes jsonschema skip those
# checks; nothing else installed imports them (grep site-packages).
for _name in ("rfc3987_syntax", "isoduration", "rfc3986_validator", "rfc3339_validator", "uri_template", "webcolors",
              "rfc3987", "fqdn"):
    _sys.modules.setdefault(_name, None)  # type: ignore[arg-type]  # None: "absent", as the import system documents
