"""The kit's feedback pages: nbgrader's generate_feedback with a template and two preprocessors of its own.

* `FeedbackExporter` (c.GenerateFeedback.exporter_class): nbgrader's HTMLExporter with the template
  autograder/templates/kit_feedback (each part's title (c.GraderSettings.part_titles), id and score in the
  index and above its cell, written answers not graded yet said so, FAIL lines in red and wrapped, and no
  `Out[1]: 2` under a check cell: that result is the part's score for nbgrader, already in the heading) and MathJax 2 from the course's own copy: the files of the
  pinned `jupyter-server-mathjax` package, copied once into feedback/_static/mathjax/, which each page loads
  by a relative path, so maths renders from file:// with no network.
* `FeedbackGrades` (in c.GenerateFeedback.preprocessors, in place of nbgrader's GetGrades): GetGrades, plus
  whether each grade still waits for a grader (`needs_manual_grade`), which the template shows.
* `StripRubric`: the rubric `AddRubric` (autograder/preprocessors/rubric.py) put into the autograded copy
  for the formgrader never reaches a student's page.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from nbconvert.exporters import HTMLExporter
from nbgrader.preprocessors import GetGrades
from traitlets import default

from .settings import GraderSettings

TEMPLATES = Path(__file__).resolve().parent / "templates"
MATHJAX_DIR = "_static/mathjax"  # under feedback/
MATHJAX_QUERY = "?config=TeX-AMS-MML_HTMLorMML-full,Safe"


def mathjax_source() -> Path:
    """The MathJax 2 files the pinned jupyter-server-mathjax package ships."""
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).resolve().parent / "static"


def install_mathjax(feedback: Path) -> Path:
    """Copy MathJax into feedback/_static/mathjax once (atomically: feedback processes run side by side)."""
    target = feedback / MATHJAX_DIR
    if (target / "MathJax.js").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".mathjax-", dir=target.parent))
    try:
        shutil.copytree(mathjax_source(), scratch / "mathjax")
        for folder, _, files in os.walk(scratch / "mathjax"):  # readable by whoever is given the page
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
        os.rename(scratch / "mathjax", target)
    except OSError:
        if not (target / "MathJax.js").is_file():
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback HTML with the kit's template and an offline MathJax."""

    @default("template_name")
    def _template_name_default(self):
        return "kit_feedback"

    def _init_resources(self, resources):
        resources = super()._init_resources(resources)
        info = resources.get("nbgrader", {})
        course = getattr(getattr(self.parent, "coursedir", None), "root", None)
        if course and info.get("student") and info.get("assignment"):
            install_mathjax(Path(course) / "feedback")
            # The page is feedback/<student>/<assignment>/<notebook>.html
            resources["kit_mathjax_url"] = f"../../{MATHJAX_DIR}/MathJax.js{MATHJAX_QUERY}"
        else:
            resources["kit_mathjax_url"] = f"{mathjax_source().as_uri()}/MathJax.js{MATHJAX_QUERY}"
        resources["kit_part_titles"] = GraderSettings(config=self.config).part_titles
        return resources


class FeedbackGrades(GetGrades):
    """GetGrades, and whether each grade still waits for the formgrader."""

    def _get_score(self, cell, resources) -> None:
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        cell.metadata.setdefault("kit", {})["needs_manual_grade"] = bool(grade.needs_manual_grade)
