"""The kit's grader: hidden suites (written as pytest tests) run against student notebooks in a sandbox.

Modules:
    sandbox      runs a notebook's code in forked children under limits (also shipped to students)
    settings     the limits and other options, read from nbgrader_config.py
    assignment   where an assignment's source, reference solution and hidden suites live
    report       a graded notebook: parts, checks, JSON, a table, and the redaction of hidden text
    suites       runs the hidden suites' checks, batching each part's sandbox calls, over forked processes
    preprocessors.run_hidden_suites   the nbgrader preprocessor that puts reports into gradebook.db
    classroom    `make grade`: collect, autograde and feedback on every core, export and a summary
"""

import sys as _sys

# jsonschema (which nbformat and nbgrader use) imports rfc3987_syntax when it is installed, and that
# builds a grammar parser as it is imported (0.9 s here, a third of the grader's start-up), only to
# check the "iri" string format, which no notebook or nbgrader schema uses (nor is format checking on).
# Marking it absent makes jsonschema skip that one check.
_sys.modules.setdefault("rfc3987_syntax", None)
