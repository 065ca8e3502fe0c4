"""The late policy, set in one place: nbgrader_config.py's due date and penalty method.

* `c.GraderSettings.due_date` ("2026-12-15 23:59:00 UTC"; any time zone nbgrader's `parse_utc` reads) is written
  into the gradebook's assignment by `make grade` (due_date_of, set_due_date), where nbgrader's own
  AssignLatePenalties, the formgrader and `nbgrader export` read it. Empty: the gradebook's own due date
  stands (`nbgrader db assignment add --duedate`), and without one nothing is late.
* `c.AssignLatePenalties.plugin_class = "autograder.nbgrader_glue.late.LatePenalty"` with `c.LatePenalty.penalty_method`:
  nbgrader's `none` and `zero`, or `per_day`: `percent_per_day` of the notebook's score for each day or part
  of a day late, never more than the score.

The score is the submission's whole score, its hand-graded points included. nbgrader works the penalty out when
it autogrades, from the points the gradebook holds then, which leaves out the hand grades given afterwards;
`settle_penalties` works it out again the same way from the points held now (`make grade` and `make feedback` do,
before any grading or preview, and name each penalty it moves; and not_graded.record_not_graded for a file not
graded, for which AssignLatePenalties never runs), so a penalty is the same whatever order autograding and
hand grading came in. They do it only for the students last graded under today's due date and policy
(changes.graded_under_todays_late_policy): a change of those is `make grade`'s to preview, and CONFIRM's to apply.

A submission's time is nbgrader's: `timestamp.txt` beside the notebook (Canvas's LATE marker writes one when
collecting, autograder/intake/collect.py), else none, which is on time.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Collection
from datetime import datetime

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from nbgrader.utils import parse_utc
from traitlets import Enum, Float
from traitlets.config import Config

DAY = 86400.0


class LatePenalty(LateSubmissionPlugin):
    """nbgrader's late submission plugin with one more method: a share of the score for each day late."""

    penalty_method = Enum(("none", "zero", "per_day"), default_value="none",
                          help="'none': no penalty; 'zero': the whole score; 'per_day': percent_per_day of the "
                               "score for each day or part of a day late.").tag(config=True)
    percent_per_day = Float(10.0, help="With penalty_method 'per_day': the percent of the notebook's score taken "
                                       "for each day (or part of one) past the due date.").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        if self.penalty_method != "per_day":
            return super().late_submission_penalty(student_id, score, total_seconds_late)
        days = math.ceil(total_seconds_late / DAY)
        return round(min(score, score * self.percent_per_day / 100 * days), 4)


def settle_penalties(gradebook: Gradebook, assignment: str, config: Config,
                     students: Collection[str] | None = None) -> dict[str, tuple[float, float]]:
    """Each submission's late penalty (of `students` only, when given) worked out again from the score the gradebook
    holds now, as nbgrader's AssignLatePenalties works it out when it autogrades (the configured plugin on each
    notebook's score, kept between 0 and that score, none when on time); {student: (penalty before, after)} for each
    one it moved. The caller commits."""
    step = AssignLatePenalties(config=config, log=logging.getLogger(__name__))  # nbgrader's per-notebook log lines: not here
    step.init_plugin()
    moved: dict[str, tuple[float, float]] = {}
    try:
        submissions = gradebook.assignment_submissions(assignment)
    except MissingEntry:  # not entered yet: nobody graded
        return moved
    for submission in submissions:
        if students is not None and submission.student.id not in students:
            continue
        seconds, before, after = submission.total_seconds_late, submission.late_submission_penalty or 0.0, 0.0
        for notebook in submission.notebooks:
            score = notebook.score
            penalty = step.plugin_inst.late_submission_penalty(submission.student.id, score, seconds) if seconds > 0 else None
            notebook.late_submission_penalty = None if penalty is None else min(max(penalty, 0.0), score)
            after += notebook.late_submission_penalty or 0.0
        if round(before, 4) != round(after, 4):
            moved[submission.student.id] = (before, after)
    return moved


def due_date_of(setting: str) -> datetime | None:
    """The due date c.GraderSettings.due_date names (UTC, without a zone, as nbgrader keeps it), or None."""
    return parse_utc(setting).replace(tzinfo=None) if setting.strip() else None


def due_date_in_force(gradebook: Gradebook, assignment: str, setting: str) -> datetime | None:
    """The configured due date, else the gradebook's own (read only)."""
    due = due_date_of(setting)
    if due is not None:
        return due
    try:
        return gradebook.find_assignment(assignment).duedate
    except MissingEntry:
        return None


def set_due_date(gradebook: Gradebook, assignment: str, setting: str) -> datetime | None:
    """Write the configured due date into the gradebook's assignment; the due date in force, either way."""
    due = due_date_of(setting)
    if due is not None:
        gradebook.update_or_create_assignment(assignment, duedate=due)
    return due_date_in_force(gradebook, assignment, setting)


def late_by(seconds: float) -> str:
    """How late, in words a summary can show: '2 days 3 h', '45 min'."""
    minutes = max(1, math.ceil(seconds / 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [f"{days} day{'s' if days != 1 else ''}"] if days else []
    parts += [f"{hours} h"] if hours else []
    parts += [f"{minutes} min"] if minutes and not days else []
    return " ".join(parts)
