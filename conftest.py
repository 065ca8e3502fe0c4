"""The course's root conftest: only a guard for `pytest autograder/<assignment> --notebook=PATH`.

pytest loads this file before any conftest.py below the course root. It makes sure that no conftest.py in
the folders of the notebook given to --notebook (a submission's folder) is ever imported by pytest
(autograder/checks/pytest_plugin.py, pytest_plugin_registered). Without --notebook it does nothing.
"""
from autograder.checks.pytest_plugin import pytest_plugin_registered  # noqa: F401 (pytest finds the hook by its name here)
