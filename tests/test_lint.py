"""The kit's code is lint-clean and type-checks (`make lint`): ruff and mypy from .venv, pinned in
requirements-test.txt, with the settings in pyproject.toml. A `# noqa` or `# type: ignore` says why on its line."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

TOOLS = Path(sys.executable).parent  # the venv's own ruff and mypy, not whatever PATH finds
LINT = [["ruff", "check", "."], ["mypy"]]
# A suppression, its codes, then the reason; the reason is any text after the codes (and a separator).
SUPPRESSION = re.compile(r"#\s*(noqa(?::\s*[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)?|type:\s*ignore(?:\[[\w\-, ]+\])?)(.*)$")


@pytest.mark.parametrize("command", LINT, ids=lambda command: command[0])
def test_the_tool_passes_over_the_tree(command):
    done = subprocess.run([str(TOOLS / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_make_lint_runs_the_same_commands():
    done = subprocess.run(["make", "--no-print-directory", "-n", "lint"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert [line.split() for line in done.stdout.splitlines()[-len(LINT):]] == [
        [f".venv/bin/{command[0]}", *command[1:]] for command in LINT]


def suppressions_without_a_reason(text: str) -> list[str]:
    """The lines of `text` whose `# noqa` or `# type: ignore` is not followed by words saying why."""
    return [line.strip() for line in text.splitlines()
            if (found := SUPPRESSION.search(line)) and not re.search(r"\w", found[2])]


def test_the_reason_check_tells_a_bare_suppression_from_one_that_says_why():
    assert suppressions_without_a_reason("import x  # noqa: E402\ny = 1  # type: ignore[attr-defined]\nz  # noqa") \
        == ["import x  # noqa: E402", "y = 1  # type: ignore[attr-defined]", "z  # noqa"]
    assert suppressions_without_a_reason("import x  # noqa: E402,F401 (after sys.path is set)\n"
                                         "y = 1  # type: ignore[attr-defined]  # a monkeypatch") == []


def test_every_suppression_says_why():
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    bare = {path: lines for path in tracked.stdout.split() if not path.startswith(("release/", "solutions/"))
            and (lines := suppressions_without_a_reason((ROOT / path).read_text()))}
    assert bare == {}, bare
