"""autograder/checks/parametrize.py: the suites' checks are the same whether their marks come from pytest or from
the stand-in the grader imports them with when pytest is not imported (`MARKS_ONLY`)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder.checks.parametrize import uses_marks_only
from autograder.checks.suites import load_suites
from conftest import ASSIGNMENT, ROOT

LISTING = """
import json, sys
from autograder.assignment import find_assignment
from autograder.checks.suites import load_suites
from pathlib import Path
suites = load_suites(find_assignment(Path(sys.argv[1]), sys.argv[2]))
print(json.dumps({"pytest imported": "pytest" in sys.modules,
                  "checks": [[s.grade_id, c.name, c.test.__name__, repr(c.params)] for s in suites for c in s.checks]}))
"""


def test_without_pytest_the_suites_expand_to_pytests_own_checks():
    listed = subprocess.run([sys.executable, "-c", LISTING, str(ROOT), ASSIGNMENT.name], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    stand_in = json.loads(listed.stdout)
    assert stand_in["pytest imported"] is False  # the stand-in was used, and taken out again
    with_pytest = [[s.grade_id, c.name, c.test.__name__, repr(c.params)] for s in load_suites(ASSIGNMENT)
                   for c in s.checks]
    assert "pytest" in sys.modules and len(with_pytest) > 100
    assert stand_in["checks"] == with_pytest


@pytest.mark.parametrize("source, marks_only", [
    ("import pytest\n@pytest.mark.parametrize('a', [1])\ndef test_a(a): pass", True),
    ("import numpy\ndef test_a(): pass", True),
    ("import pytest\ndef test_a(): assert 1 == pytest.approx(1)", False),
    ("import pytest\n@pytest.mark.xfail\ndef test_a(): pass", False),
    ("import pytest\n@pytest.fixture\ndef thing(): pass", False),
])
def test_a_suite_using_more_of_pytest_than_its_marks_gets_pytest(source, marks_only):
    assert uses_marks_only(source) is marks_only
