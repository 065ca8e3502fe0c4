"""A Jupyter server extension: nbgrader's formgrader pages show ids and names as text, never as markup.

nbgrader 0.9 renders its formgrader pages with a Jinja environment that does not autoescape
(`var student_id = "{{ student_id }}";` and `<li>{{ student_id }}</li>` in the student page that Manage
Students links to, assignment and notebook ids in the gradebook and submission pages), and the grading
page through nbconvert, whose `formgrade` template prints the student's id and names as they are. A
student id that holds `</script><svg onload=...>` runs as the instructor there, with the server's
`/api/contents` and `/api/terminals` one request away. The kit never lets such an id into the gradebook
(autograder/intake/student_ids.py, at `make grade`); this extension is the second line, for an id that came in
another way (`nbgrader db student add`, a gradebook from elsewhere) and for an id typed into the URL:

* the formgrader's Jinja environment autoescapes, so every `{{ ... }}` of its .tpl pages is HTML-escaped
  (inside their inline scripts too: a quote or `</script>` cannot close anything);
* the grading page's resources that name the student, the assignment and the notebook are HTML-escaped
  before nbconvert renders them (its template prints them into HTML, attributes and script strings).

The formgrader's JavaScript already shows what its API returns with jQuery's `.text()`. nbgrader itself is
not changed: the extension adjusts the two objects the formgrader keeps in the server's settings, once
every extension is loaded (jupyter_server_config.py enables it).

The formgrader's Autograde button is routed through the kit as well: stock nbgrader's autograde reads
submitted/ itself, following links and copying every file beside the notebook into autograded/ and feedback/.
Its handlers make an NbGraderAPI for each request from the name in their module, which the extension points at
`IntakeAutogradeAPI`: the button runs `python -m autograder regrade STUDENT` (what `make regrade` runs: the one
intake, the sandbox, the page and the grades.csv row), and every other API call is nbgrader's.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from markupsafe import escape
from nbgrader.apps.api import NbGraderAPI
from nbgrader.server_extensions.formgrader import base as formgrader_base

# SubmissionHandler's resources that come from the gradebook or the student (the rest are numbers and URLs
# the server makes).
TEXT_RESOURCES = ("student", "last_name", "first_name", "assignment_id", "notebook_id", "notebook_path")


class EscapedResources:
    """The formgrader's HTMLExporter, given the grading page's names HTML-escaped (as Jinja's autoescape does)."""

    def __init__(self, exporter: Any) -> None:
        self.exporter = exporter

    def from_filename(self, filename: str, resources: dict | None = None, **kwargs: Any):
        resources = {key: str(escape(value)) if key in TEXT_RESOURCES and isinstance(value, str) else value
                     for key, value in (resources or {}).items()}
        return self.exporter.from_filename(filename, resources=resources, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.exporter, name)


class IntakeAutogradeAPI(NbGraderAPI):
    """nbgrader's API, but for autograde: the kit's regrade of that one student (the intake's copy, never
    submitted/ as it is), its output as the log the formgrader shows."""

    def autograde(self, assignment_id: str, student_id: str, force: bool = True, create: bool = True) -> dict:
        venv = str(Path(sys.executable).parent)  # alembic, which nbgrader's gradebook runs, is beside python
        run = subprocess.run([sys.executable, "-m", "autograder", "regrade", "--assignment", assignment_id, "--",
                              student_id], cwd=self.coursedir.root, capture_output=True, text=True,
                             env={**os.environ, "PATH": venv + os.pathsep + os.environ.get("PATH", "")})
        log = run.stdout + run.stderr
        if run.returncode == 0:
            return {"success": True, "log": log}
        return {"success": False, "log": log, "error": f"python -m autograder regrade exited with {run.returncode}"}


def guard(settings: dict) -> bool:
    """Escape the formgrader's pages in a server's tornado `settings`, and route its Autograde button through
    the kit; False when the formgrader is not loaded."""
    jinja_env, exporter = settings.get("nbgrader_jinja2_env"), settings.get("nbgrader_exporter")
    if jinja_env is None or exporter is None:
        return False
    jinja_env.autoescape = True  # before the first page is rendered: templates compile on first use
    if not isinstance(exporter, EscapedResources):
        settings["nbgrader_exporter"] = EscapedResources(exporter)
    formgrader_base.NbGraderAPI = IntakeAutogradeAPI  # the name BaseHandler.api makes each request's API from
    return True


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "autograder.nbgrader_glue.formgrader_guard"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Nothing yet: extensions load in name order, so nbgrader's formgrader is not set up at this point."""


async def _start_jupyter_server_extension(serverapp) -> None:
    """Once every extension is loaded, before the server serves a page."""
    if guard(serverapp.web_app.settings):
        serverapp.log.info("autograder.nbgrader_glue.formgrader_guard: the formgrader's pages escape ids and names; "
                           "its Autograde button runs the kit's regrade")
    else:
        serverapp.log.warning("autograder.nbgrader_glue.formgrader_guard: nbgrader's formgrader is not loaded; nothing to guard")
