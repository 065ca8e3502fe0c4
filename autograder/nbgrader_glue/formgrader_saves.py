"""A Jupyter server extension: a score saved from a formgrader page that shows an answer `make grade` has since
replaced is kept, flagged for review, never taken as given on the new answer.

The formgrader renders a grading page from the autograded notebook when the page opens; the instructor's score is
saved later (nbgrader's GradeHandler.put, which clears the review flag). When `make grade` regrades the student in
between (docs/instructors.md: grading in the formgrader while it runs is safe), the gradebook's answer is no longer
the one on the page, and the ledger (autograder/classroom/ledger.py) would record the score as given on the new
one. So the page says what it showed, and the save checks it:

* the kit's grading page (autograder/templates/kit_formgrade/index.html.j2) carries the answers' checksums of the
  notebook it renders (`kit_answers`, which FindGradingNotes writes into every autograded notebook and a submission
  cannot bring: grading_notes.py) and adds them to each save of a grade as the SHOWN_HEADER request header, through
  jQuery's ajaxPrefilter: nbgrader's formgrade_models.js is not changed;
* the kit's save (`save_grade`, in place of GradeHandler.put, whose body it follows) stores the score (and extra
  credit: one save holds both) as nbgrader does, but leaves it flagged for review when the page showed another
  answer than the one the ledger records as autograded now (`seen`), records the answer the page showed as the one
  the grade stands on (`reviewed`: so grading clears the flag only when that answer comes back, never on the one
  reviewed before), and says so in the ANSWER_CHANGED_HEADER response header, which the page turns into a
  message: reload the page to see the answer now graded. The score is kept (a refusal would lose what was typed);
  a stale page cannot clear the flag, a reloaded one can. A save that names no page (a script of the instructor's
  own against nbgrader's API) is nbgrader's.

The extension replaces the method on nbgrader's own handler class, which the formgrader has already routed by the
time extensions start (as formgrader_guard replaces the API class its handlers make): nbgrader's files are not
changed.
"""
from __future__ import annotations

import json
from typing import Any

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.server_extensions.formgrader import apihandlers
from nbgrader.server_extensions.formgrader.base import check_notebook_dir, check_xsrf
from tornado import web

from ..classroom import ledger

SHOWN_HEADER = "X-Kit-Answers-Shown"  # the page's {grade id: answer checksum}, JSON
ANSWER_CHANGED_HEADER = "X-Kit-Answer-Changed"  # "1": saved, flagged, the page shows an answer no longer graded


def shown_answers(header: str | None) -> dict[str, str] | None:
    """The answers a page showed, from its SHOWN_HEADER; None when it names none (or not as the kit writes it)."""
    try:
        shown = json.loads(header) if header else None
    except ValueError:
        return None
    if not isinstance(shown, dict):
        return None
    return {str(name): checksum for name, checksum in shown.items() if isinstance(checksum, str)}


def answer_changed(gradebook: Gradebook, grade: Any, shown: dict[str, str] | None) -> bool:
    """Whether the page `shown` came from showed another answer for `grade` than the one last autograded (the
    ledger's `seen`); False for a page that named none."""
    if shown is None:
        return False
    where = grade.to_dict()
    book = ledger.read_answers(gradebook.db, where["assignment"], where["student"])
    return shown.get(grade.name) != book.get(where["notebook"], {}).get(grade.name, {}).get("seen")


def save_grade(gradebook: Gradebook, grade_id: str, data: dict, shown: dict[str, str] | None) -> tuple[dict, bool]:
    """A score and extra credit saved from a page (nbgrader's GradeHandler.put): (the grade as the API returns it,
    whether the page showed another answer, so that the grade stays flagged for review)."""
    grade = gradebook.find_grade_by_id(grade_id)
    grade.manual_score = data.get("manual_score", None)
    grade.extra_credit = data.get("extra_credit", None)
    changed = ledger.hand_graded(grade) and answer_changed(gradebook, grade, shown)
    if changed and shown is not None:  # typed for the answer the page showed: it stands on that one, flagged on any other
        ledger.given_on(gradebook.db, grade, shown.get(grade.name))
    grade.needs_manual_grade = changed or (grade.manual_score is None and grade.auto_score is None)
    gradebook.db.commit()
    return grade.to_dict(), changed


@web.authenticated
@check_xsrf
@check_notebook_dir
def put(self: apihandlers.GradeHandler, grade_id: str) -> None:
    """GradeHandler.put, through save_grade."""
    try:
        saved, changed = save_grade(self.gradebook, grade_id, self.get_json_body() or {},
                                    shown_answers(self.request.headers.get(SHOWN_HEADER)))
    except MissingEntry:
        raise web.HTTPError(404) from None
    if changed:
        self.set_header(ANSWER_CHANGED_HEADER, "1")
    self.write(json.dumps(saved))


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "autograder.nbgrader_glue.formgrader_saves"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Nothing yet: extensions load in name order, so nbgrader's formgrader is not set up at this point."""


async def _start_jupyter_server_extension(serverapp) -> None:
    """Once every extension is loaded, before the server serves a page."""
    apihandlers.GradeHandler.put = put
    serverapp.log.info("autograder.nbgrader_glue.formgrader_saves: a score saved from a page whose answer was "
                       "regraded since stays flagged for review")
