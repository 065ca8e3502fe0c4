"""Self-check: `pytest` in this folder runs the public checks on the notebook as last saved.

Every check runs in a child process (see sandbox.py), so an infinite loop or a crash in one
method fails only the checks of that method. One part at a time: `pytest -m step`.
Save the notebook in Jupyter first: this reads the file, not the running kernel.
"""
import json
from pathlib import Path

import pytest

import selfcheck
from sandbox import Sandbox, program_from_notebook

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE / "modules_and_sgd.ipynb"


@pytest.fixture(scope="session")
def program():
    try:
        return program_from_notebook(json.loads(NOTEBOOK.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        pytest.fail(f"{NOTEBOOK.name} could not be read as a notebook: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def sandbox():
    with Sandbox(modules={"selfcheck": HERE / "selfcheck.py"}, path=[HERE]) as box:
        yield box


@pytest.mark.parametrize("check", [
    pytest.param(check, id=f"{check.part}:{check.name}", marks=getattr(pytest.mark, check.part))
    for check in selfcheck.CHECKS
])
def test_public_check(check, program, sandbox):
    outcome = sandbox.call(program, selfcheck.run_check, part=check.part, name=check.name)
    if not outcome.ok:
        pytest.fail(outcome.reason, pytrace=False)
    if not outcome.value["passed"]:
        pytest.fail(outcome.value["message"], pytrace=False)
