"""`pytest` here runs the checks of each test_<part>.py on the notebook as last saved (save it first).

notebook_checks.py runs a part's checks in a child process; `pytest -m step` runs one part (pytest.ini).
"""
import notebook_checks
import pytest

_results = {}  # part -> {check name: (passed, message)}, filled when the part's first check runs


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(getattr(pytest.mark, item.path.stem[len("test_"):]))


@pytest.fixture
def nb():
    """Stands for the notebook's names: the check itself runs in a child process (notebook_checks.py)."""


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    part = pyfuncitem.path.stem[len("test_"):]
    if part not in _results:
        _results[part] = notebook_checks.run_part(part)
    passed, message = _results[part][pyfuncitem.originalname]
    if not passed:
        pytest.fail(notebook_checks.printable(message), pytrace=False)
    return True
