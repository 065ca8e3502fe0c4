"""The Gradescope autograder zip (`make gradescope`, `python -m autograder gradescope-zip`).

The zip holds the kit's grader as a course directory (autograder/ with the hidden suites, release/,
nbgrader_config.py), the pinned requirements.txt, and the reference's answers to every hidden case as data
(.grading/, answer_cache.py): no source/ (the rubric, the answers in place) and no solutions/ (the reference
solution) enter the image where student code runs; the release stands in for the source (assignment.py).
`setup.sh` builds the grader's venv and checks the shipped answers (`python3 -m autograder gradescope-prepare`);
`run_autograder` runs `python3 -m autograder gradescope-run` with the python3 first on PATH (setup.sh puts its
venv's there): autograder/gradescope/run.py.
"""
from __future__ import annotations

import json
import shlex
import stat
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..assignment import Assignment
    from ..settings import GraderSettings

SHIPPED = ("autograder", "release", "nbgrader_config.py", "requirements.txt")
SKIPPED_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache"}
# `make grade`'s demo class alone: its students are the reference with bugs added, so it quotes the reference.
SKIPPED_FILES = {"autograder/classroom/demo.py"}

# {assignment}: the zip's assignment, filled in by build_zip (the scripts hold no other braces of that form).
SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu). It makes a venv
# from the pinned requirements.txt next to this file with the newest of python3.13, python3.12 and
# python3.11 that autograder/supported_python.py accepts (3.11.0 to 3.13), else python3 if it does,
# else one installed with apt; then puts that venv's python first on PATH as /usr/local/bin/python3,
# which run_autograder uses. Without one it stops with the script's one line.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CHECK="$HERE/autograder/supported_python.py"
export DEBIAN_FRONTEND=noninteractive

find_python() {
  for p in python3.13 python3.12 python3.11 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" "$CHECK" "$p" 2>/dev/null; then
      command -v "$p"; return 0
    fi
  done
  return 1
}

PYTHON="$(find_python || true)"
if [ -z "$PYTHON" ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq
  for v in 3.12 3.11 3.13; do
    if apt-get install -y -qq --no-install-recommends "python$v" "python$v-venv" >/dev/null 2>&1; then break; fi
  done
  PYTHON="$(find_python || true)"
  if [ -z "$PYTHON" ]; then  # an older Ubuntu: the deadsnakes archive has 3.11
    apt-get install -y -qq --no-install-recommends software-properties-common >/dev/null
    add-apt-repository -y ppa:deadsnakes/ppa && apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3.11 python3.11-venv
    PYTHON="$(find_python || true)"
  fi
fi
if [ -z "$PYTHON" ]; then
  found="$(python3 "$CHECK" python3 2>&1 | tail -n 1 || true)"
  echo "setup.sh: ${found:-no python3 found: the kit needs CPython 3.11.0 to 3.13}" >&2
  exit 1
fi
echo "setup.sh: building the grader's venv with $PYTHON ($("$PYTHON" --version))"
if ! "$PYTHON" -m venv "$HERE/.venv"; then  # Ubuntu's Pythons keep venv (ensurepip) in a package of its own
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$(basename "$PYTHON")-venv"
  "$PYTHON" -m venv "$HERE/.venv"
fi
"$HERE/.venv/bin/python" -m pip install --quiet --upgrade pip
"$HERE/.venv/bin/python" -m pip install --quiet -r "$HERE/requirements.txt"
# A wrapper, not a symlink: a venv's python is found as a venv only through its own bin/ path.
printf '#!/bin/sh\nexec "%s" "$@"\n' "$HERE/.venv/bin/python3" > /usr/local/bin/python3
chmod 755 /usr/local/bin/python3
python3 -c 'import sys, autograder; print("setup.sh: python3 is", sys.executable)' 2>/dev/null || \
  (cd "$HERE" && python3 -c 'import sys, autograder; print("setup.sh: python3 is", sys.executable)')
# The reference's answers the zip ships (autograder/checks/answer_cache.py), checked against its hidden suites once.
(cd "$HERE" && python3 -m autograder gradescope-prepare --assignment {assignment})
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for each submission (as root, in /autograder). It grades the notebook in
# $AUTOGRADER_ROOT/submission (default /autograder) with the kit's grader and writes
# $AUTOGRADER_ROOT/results/results.json, with the python3 first on PATH (setup.sh made it).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")"
if [ -d "${AUTOGRADER_ROOT:-/autograder}/source/autograder" ]; then
  cd "${AUTOGRADER_ROOT:-/autograder}/source"
fi
exec python3 -m autograder gradescope-run --assignment {assignment}
"""


def _files(root: Path) -> list[tuple[Path, str]]:
    """(file, name in the zip) for everything grading needs, in a fixed order."""
    found = []
    for name in SHIPPED:
        path = root / name
        if path.is_file():
            found.append((path, name))
        elif path.is_dir():
            for file in sorted(path.rglob("*")):
                rel = file.relative_to(root)
                if (file.is_file() and not SKIPPED_PARTS & set(rel.parts) and file.suffix != ".pyc"
                        and rel.as_posix() not in SKIPPED_FILES):
                    found.append((file, rel.as_posix()))
        else:
            raise FileNotFoundError(f"{path} is missing: the Gradescope zip needs it")
    return found


def _add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # fixed: the same kit gives the same zip
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def _answers(assignment: Assignment, settings: GraderSettings) -> tuple[str, bytes]:
    """(name in the zip, content) of the reference's answers to every hidden case, as data under their public key
    (answer_cache.py): what run_autograder grades from, with no reference in the image."""
    from ..checks.answer_cache import answers_data, cache_path, public_key
    from ..grading import class_answers

    data = answers_data("", class_answers(assignment, settings), public_key(assignment, settings.limits))
    return cache_path(assignment).relative_to(assignment.root).as_posix(), json.dumps(data).encode()


def build_zip(assignment: Assignment, settings: GraderSettings, dest: Path) -> Path:
    """Write the Gradescope autograder zip for `assignment`'s course to `dest`: setup.sh and run_autograder at its
    root, the pinned requirements, the grader and the reference's answers (never source/, solutions/, tests/, .git,
    submissions or grading output)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    name = shlex.quote(assignment.name)
    with zipfile.ZipFile(partial, "w") as archive:
        _add(archive, "setup.sh", SETUP_SH.replace("{assignment}", name).encode(), executable=True)
        _add(archive, "run_autograder", RUN_AUTOGRADER.replace("{assignment}", name).encode(), executable=True)
        for file, name in _files(assignment.root):
            _add(archive, name, file.read_bytes(), executable=bool(file.stat().st_mode & 0o111))
        _add(archive, *_answers(assignment, settings))
    partial.replace(dest)
    return dest
