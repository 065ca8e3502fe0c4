"""The alphabet a student id must keep to: it names folders, URLs, gradebook rows, CSV cells and pages.

nbgrader takes a student id from the name of a folder (submitted/<id>/) or a file an LMS wrote, and shows
it on the instructor's pages, in the gradebook's CSV and on the terminal, not all of them escaped
(docs/security.md, "What the instructor opens"). An id made only of ASCII letters, digits, `.`, `_` and
`-`, starting with a letter or a digit, means the same thing in all of them: no markup, no quote, no
formula, no option, no path, no control character. Canvas- and Moodle-derived ids (`smithjohn_12345`)
and the ids institutions hand out (`s1234567`, `jane.doe`) keep to it.
"""
from __future__ import annotations

import re

SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
ALPHABET = "ASCII letters, digits, '.', '_' and '-', starting with a letter or a digit, at most 64 characters"


def is_safe_student_id(student_id: str) -> bool:
    """Whether `student_id` keeps to the safe alphabet (module docstring)."""
    return isinstance(student_id, str) and SAFE_ID.fullmatch(student_id) is not None


def unsafe_id_reason(student_id: str) -> str:
    """The one-line reason an id is refused, naming it with its special characters escaped (ascii())."""
    return f"{ascii(student_id)} is not a safe student id ({ALPHABET}): rename its folder in submitted/"
