"""The kit's grader: hidden suites (written as pytest tests) run against student notebooks in a sandbox.

The package, in the order a submission meets its parts (docs/submission-path.md has every step):
    __main__         the command line, a subcommand for every job; reads the configuration once (settings, assignment)
    classroom/       `make grade` over a class: who is graded (changes, ledger), the process pool and its
                     progress bars, nbgrader's autograde per student, the demo class and the term's life cycle
    intake/          every file of a submission: an LMS download collected and unpacked within caps, the safe
                     student ids, the one intake that copies what grading reads, the notebook checked (validate)
    nbgrader_glue/   nbgrader's extension points: preprocessors/ (notes, sanitising, the hidden suites, the
                     rubric, the at-once saves), exporters, the late policy, tuning, the formgrader extensions
    submission       the notebook being graded (a value: its content or why not, its checks' results)
    grading          prepare_class (the class's state, once before the fork), held by a ClassGrading with each
                     process's warm Grader, whose grade_one turns one notebook into one Report, for make grade,
                     the command line and Gradescope
    checks/          the hidden suites: loaded from their files, expanded, the Grader that runs each part's
                     checks in the sandbox and compares; the reference's kept answers; pytest's plugin
    sandbox/         runs student code in confined child processes (grader side only)
    report           the Report: one submission's parts and checks, as JSON, a table, grade-cell lines
    outputs/         what people read: redaction, feedback pages, grades.csv, the Canvas file, the class page,
                     the grader's own failures, text made inert
    gradescope/      the Gradescope zip (build), and grading one submission inside it (run)
    supported_python the Pythons the kit runs on (asked by the Makefile before anything is installed)
The lesson's hidden suites are a folder of their own beside them (autograder/<assignment>/).
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
