"""pytest runs these hidden suites on one notebook through the kit's plugin (autograder/checks/pytest_plugin.py):

    .venv/bin/python -m pytest autograder/dl01_6_3 --notebook PATH.ipynb

Without --notebook every check skips and says so.
"""
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _folder in (_HERE.parent.parent, _HERE):  # the course root (the `autograder` package), and probes.py
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

# Imported rather than named in `pytest_plugins`, so that collecting a parent folder (pytest autograder)
# still works: pytest refuses `pytest_plugins` in a conftest below the rootdir once it is configured.
from autograder.checks.pytest_plugin import *  # noqa: E402,F403 (after the sys.path set-up above; the hooks are all its names)
