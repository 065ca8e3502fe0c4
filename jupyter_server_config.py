"""Jupyter server settings for the instructor's server (JupyterLab and nbgrader's formgrader) on this course.

Jupyter does not read config from the current folder: `make` links this file into `.venv/etc/jupyter/`, so
`.venv/bin/jupyter lab` at the root uses it (elsewhere: `jupyter lab --config=jupyter_server_config.py`).
The real defence against a hostile written answer is SanitizeMarkdown at grading time (docs/security.md: "Student
markdown and the formgrader"); this header is a second line that costs the formgrader nothing.
"""

c = get_config()  # noqa: F821 (Jupyter provides it)

# jupyter_server's own default is "frame-ancestors 'self'" plus a report-uri; its handlers still add their
# own directives (sandbox for served files, default-src 'none' for the API). Added here: no plugins, no
# <base> that moves the page's relative URLs, no form posted off the server. Inline scripts stay allowed:
# the formgrader and JupyterLab pages need them, so a CSP cannot stop an injected script on its own.
c.ServerApp.tornado_settings = {
    "headers": {
        "Content-Security-Policy": "frame-ancestors 'self'; object-src 'none'; base-uri 'self'; form-action 'self'",
    },
}

# The formgrader's pages escape every id and name they show (autograder/nbgrader_glue/formgrader_guard.py): nbgrader's own
# templates do not. The course root goes at the end of the server's path (nothing installed is shadowed), so
# that it finds the kit's package; traitlets gives a config file its own __file__.
import sys  # noqa: E402 (kept beside the set-up they serve)
from pathlib import Path  # noqa: E402 (kept beside the set-up they serve)

sys.path.append(str(Path(__file__).resolve().parent))
c.ServerApp.jpserver_extensions.update({"autograder.nbgrader_glue.formgrader_guard": True})
# and every page reads for everyone (a lang, contrast, labelled fields, landmarks: autograder/nbgrader_glue/formgrader_pages.py).
c.ServerApp.jpserver_extensions.update({"autograder.nbgrader_glue.formgrader_pages": True})
# and a score saved from a page whose answer make grade has regraded since stays flagged for review
# (autograder/nbgrader_glue/formgrader_saves.py).
c.ServerApp.jpserver_extensions.update({"autograder.nbgrader_glue.formgrader_saves": True})
