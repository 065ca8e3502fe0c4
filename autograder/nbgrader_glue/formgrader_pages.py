"""A Jupyter server extension: nbgrader's formgrader pages, from the kit's templates where nbgrader's cannot be
read by everyone (issue 31: no critical or serious axe-core violation, WCAG 2.1 AA, tests/axe.py).

nbgrader 0.9.6's formgrader renders two kinds of page, neither of which its configuration can point elsewhere:

* the .tpl pages (Manage Assignments, the Gradebook, Manage Students, ...) through a Jinja environment whose
  loader is nbgrader's templates folder alone (formgrader.py: `FileSystemLoader([handlers.template_path])`);
* the grading page through an HTMLExporter with the `formgrade` template, set by the extension's own
  `build_extra_config`. Setting `HTMLExporter.template_name` in nbgrader_config.py instead would reach every
  HTMLExporter nbgrader makes, the feedback pages' too.

So, as autograder.nbgrader_glue.formgrader_guard does for escaping, this extension adjusts the two objects the formgrader keeps
in the server's settings once every extension is loaded: the Jinja environment looks in
autograder/templates/formgrader/ first (base.tpl, which every page extends: its header says what it changes), and
the exporter renders the `kit_formgrade` template (autograder/templates/kit_formgrade/). Both include
readable.css, which the feedback pages share. nbgrader itself is not changed.
"""
from __future__ import annotations

from typing import Any

from jinja2 import BaseLoader, ChoiceLoader, FileSystemLoader

from ..outputs.feedback import PAGE_FILTERS, READABLE, TEMPLATES
from .formgrader_guard import EscapedResources

FORMGRADER_TEMPLATES = TEMPLATES / "formgrader"  # the .tpl pages the kit serves in place of nbgrader's
GRADING_TEMPLATE = "kit_formgrade"  # the grading page's nbconvert template, in TEMPLATES


def kit_loader(nbgrader: BaseLoader) -> ChoiceLoader:
    """The kit's pages first, then nbgrader's (`nbgrader` is its loader)."""
    return ChoiceLoader([FileSystemLoader([FORMGRADER_TEMPLATES, READABLE]), nbgrader])


def kit_exporter(exporter: Any) -> Any:
    """The formgrader's HTMLExporter made again with its own config, rendering the `kit_formgrade` template
    (its conf.json names nbgrader's `formgrade` as its base, whose macros it imports) and reading readable.css.
    Made again, not changed: an exporter works out its template folders once."""
    return type(exporter)(config=exporter.config, template_name=GRADING_TEMPLATE,
                          extra_template_basedirs=[str(TEMPLATES), *exporter.extra_template_basedirs],
                          extra_loaders=[FileSystemLoader(READABLE), *exporter.extra_loaders],
                          filters={**exporter.filters, **PAGE_FILTERS})


def use_kit_templates(settings: dict) -> bool:
    """Point the formgrader of a server's tornado `settings` at the kit's templates; False when it is not loaded."""
    jinja_env, exporter = settings.get("nbgrader_jinja2_env"), settings.get("nbgrader_exporter")
    if jinja_env is None or exporter is None:
        return False
    if not isinstance(jinja_env.loader, ChoiceLoader):  # before the first page: templates load on first use
        jinja_env.loader = kit_loader(jinja_env.loader)
    if isinstance(exporter, EscapedResources):  # autograder.nbgrader_glue.formgrader_guard's wrapper, when it ran first
        if exporter.exporter.template_name != GRADING_TEMPLATE:
            exporter.exporter = kit_exporter(exporter.exporter)
    elif exporter.template_name != GRADING_TEMPLATE:
        settings["nbgrader_exporter"] = kit_exporter(exporter)
    return True


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "autograder.nbgrader_glue.formgrader_pages"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Nothing yet: extensions load in name order, so nbgrader's formgrader is not set up at this point."""


async def _start_jupyter_server_extension(serverapp) -> None:
    """Once every extension is loaded, before the server serves a page."""
    if use_kit_templates(serverapp.web_app.settings):
        serverapp.log.info("autograder.nbgrader_glue.formgrader_pages: the formgrader's pages come from the kit's templates")
    else:
        serverapp.log.warning("autograder.nbgrader_glue.formgrader_pages: nbgrader's formgrader is not loaded; its pages are nbgrader's")
