"""IntakeExchangeCollect: nbgrader's exchange collect (the formgrader's Collect button, `nbgrader collect`), through
the one intake.

The kit collects from submitted/ and LMS downloads, never through nbgrader's exchange; but a course on a hub
may have one, and its collect copies each student's inbound folder with shutil.copytree as the instructor:
a link the student put there (to the course's solutions/, to gradebook.db) is followed and lands in submitted/
as a real file, which nothing after it can tell from the student's work, and a FIFO stops the copy. Here each
inbound folder is copied by `take_submission` (autograder/intake/files.py), as make grade reads submitted/:
no link followed, regular files only, bounded, the notebook, timestamp.txt and the files
GraderSettings.submission_files names. A folder without a notebook it takes is logged with the intake's
reason, and its student's folder in submitted/ holds what was taken (make grade then says why it grades
nothing there). A folder whose owner is not the student its name claims (nbgrader only warns: "cheating
attempt?") is not copied at all, unless CollectApp.check_owner is off.
"""
from __future__ import annotations

import os
import pwd
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect

from ..assignment import find_assignment
from ..intake.files import IntakeRules, take_submission
from ..settings import GraderSettings


class IntakeExchangeCollect(ExchangeCollect):
    """nbgrader's ExchangeCollect, copying each submission through the kit's intake."""

    def do_copy(self, src: str, dest: str, log=None) -> None:
        source = Path(src)
        claimed = source.name.split("+")[0]  # nbgrader's inbound name: <student>+<assignment>+<time>
        owner = os.lstat(source).st_uid
        if self.check_owner and owner != 0 and _name(owner) != claimed:  # root's: the instructor put it there
            self.log.warning("%s: not collected: it is owned by %s, not by %s", source.name, _name(owner), claimed)
            return
        root = Path(self.coursedir.root)
        assignment = find_assignment(root, self.coursedir.assignment_id)
        rules = IntakeRules.of(GraderSettings(config=self.config), assignment.notebook_name)
        intake = take_submission(source.parent, (source.name,), Path(dest), rules)
        for line in ([intake.reason] if intake.reason else []) + intake.notes:
            self.log.warning("%s: %s", source.name, line)


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
