"""Sorting an LMS download into submitted/<student>/<assignment>/ (nbgrader's zip_collect).

`LmsFileNameCollectorPlugin` is nbgrader's FileNameCollectorPlugin with a list of patterns
(`named_regexps`, set in nbgrader_config.py) tried in turn on each file's path; the first that matches
names the student. Besides nbgrader's groups (`student_id`, `file_id`, `timestamp`, ...), a pattern may
give `name` and `lms_id` instead of `student_id`: the student id is then the name in lower case with
everything but letters and digits dropped, an underscore and the LMS's number (Canvas's user id,
Moodle's participant number), e.g. `smithjohn_12345`; `make grades-lms` reads the number back.
A file id the LMS numbered again (Canvas's `modules_and_sgd-1.ipynb` for a second submission) is
collected under its own name; `make grade` grades a student's only notebook under the assignment's name.
"""
from __future__ import annotations

import re
import unicodedata

from nbgrader.plugins import FileNameCollectorPlugin
from traitlets import List, Unicode

RESUBMITTED = re.compile(r"^(?P<stem>.+?)-\d+(?P<ext>\.ipynb)$")


def slug(name: str) -> str:
    """'John Smith' -> 'johnsmith'; accents dropped, letters and digits kept."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", plain.lower())


class LmsFileNameCollectorPlugin(FileNameCollectorPlugin):
    """Tries each of `named_regexps` (then nbgrader's `named_regexp`, if set) on a submitted file's path."""

    named_regexps = List(Unicode(), help="Patterns tried in turn on each file's path (module docstring).").tag(config=True)
    notebook_name = Unicode("", help="The assignment's notebook: an LMS's renumbered copy of it is collected "
                                     "under this name.").tag(config=True)

    def _match(self, filename: str) -> dict | None:
        patterns = list(self.named_regexps) + ([self.named_regexp] if self.named_regexp else [])
        for pattern in patterns:
            match = re.match(pattern, filename)
            if match:
                found = {k: v for k, v in match.groupdict().items() if v is not None}
                break
        else:
            self.log.warning("No pattern of LmsFileNameCollectorPlugin.named_regexps matched: %s", filename)
            return None
        name, lms_id = slug(found.pop("name", "")), found.pop("lms_id", "")
        if not found.get("student_id"):
            found["student_id"] = "_".join(filter(None, [name, lms_id]))
        if not found["student_id"]:
            self.log.warning("The pattern that matched gave no student: %s", filename)
            return None
        renumbered = RESUBMITTED.match(found.get("file_id", ""))
        if renumbered and self.notebook_name and renumbered["stem"] + renumbered["ext"] == self.notebook_name:
            found["file_id"] = self.notebook_name
        return found
