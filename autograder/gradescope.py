"""Gradescope: build the autograder zip (`make gradescope`) and grade one submission inside it.

Gradescope's autograder specification (gradescope-autograders.readthedocs.io, "Specifications"): a zip
with `setup.sh` and `run_autograder` at its root, unpacked into /autograder/source; Gradescope runs
`setup.sh` once when it builds the image and `run_autograder` (as root, working directory /autograder)
for each submission, with the student's files in /autograder/submission; `run_autograder` must write
/autograder/results/results.json.

The zip holds the kit's grader as a course directory (autograder/ with the hidden suites, release/,
nbgrader_config.py), the pinned requirements.txt, and the reference's answers to every hidden case as data
(.grading/, answer_cache.py): no source/ (the rubric, the answers in place) and no solutions/ (the reference
solution) enter the image where student code runs; the release stands in for the source (assignment.py). `run_autograder` runs
`python3 -m autograder.gradescope run` with the python3 first on PATH (setup.sh puts its venv's there),
which grades the notebook with the same code as `make grade` (`grading.grade_path`, which calls `ClassGrading.grade_one` as
nbgrader's RunHiddenSuites does: the hidden suites in the sandbox, the reference's answers shipped, each submission confined by
autograder/sandbox/isolation.py, on by default as root) and writes results.json:

* one test per part (grade cell), visible: its score out of its points and how many checks passed
  (the public self-checks are not run again: the hidden suites decide the grade, and each part's line
  shows it without any hidden code);
* one test per hidden check, with the visibility `c.GraderSettings.gradescope_hidden_visibility`
  (after_published by default): its name, status and one-line message (0 points of its own: the
  part's line carries them, so the tests' scores add up to the total exactly);
* the total `score`, `execution_time` and an `output` naming the isolation level.

Only check names and their redacted one-line messages leave the grader, as in feedback.
Every path comes from AUTOGRADER_ROOT (default /autograder), so a test runs it in a temporary folder.
"""
from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the course directory (in the zip: /autograder/source)
SHIPPED = ("autograder", "release", "nbgrader_config.py", "requirements.txt")
SKIPPED_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache"}
# `make grade`'s demo class alone: its students are the reference with bugs added, so it quotes the reference.
SKIPPED_FILES = {"autograder/classroom/demo.py"}

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
(cd "$HERE" && python3 -m autograder.gradescope prepare)
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
exec python3 -m autograder.gradescope run
"""


# ------------------------------------------------------------------------------------------ the zip


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


def _answers(root: Path) -> tuple[str, bytes]:
    """(name in the zip, content) of the reference's answers to every hidden case, as data under their public key
    (answer_cache.py): what run_autograder grades from, with no reference in the image."""
    from .assignment import find_assignment
    from .checks.answer_cache import answers_data, cache_path, public_key
    from .grading import class_answers
    from .settings import GraderSettings, load_config

    assignment = find_assignment(root)
    settings = GraderSettings(config=load_config(root))
    data = answers_data("", class_answers(assignment, settings), public_key(assignment, settings.limits))
    return cache_path(assignment).relative_to(root).as_posix(), json.dumps(data).encode()


def build_zip(dest: Path, root: Path = ROOT) -> Path:
    """Write the Gradescope autograder zip to `dest`: setup.sh and run_autograder at its root, the
    pinned requirements, the grader and the reference's answers (never source/, solutions/, tests/, .git,
    submissions or grading output)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    with zipfile.ZipFile(partial, "w") as archive:
        _add(archive, "setup.sh", SETUP_SH.encode(), executable=True)
        _add(archive, "run_autograder", RUN_AUTOGRADER.encode(), executable=True)
        for file, name in _files(root):
            _add(archive, name, file.read_bytes(), executable=bool(file.stat().st_mode & 0o111))
        _add(archive, *_answers(root))
    partial.replace(dest)
    return dest


# ---------------------------------------------------------------------------- one submission


def _place(root: Path) -> tuple[Path, Path]:
    """(the submission folder, results.json) under AUTOGRADER_ROOT."""
    return root / "submission", root / "results" / "results.json"


def results_json(report, settings, isolation: str, seconds: float, note: str = "") -> dict:
    """Gradescope's results.json for one graded notebook (autograder.report.Report)."""
    hidden = settings.gradescope_hidden_visibility
    tests = []
    for number, part in enumerate(report.parts, 1):
        passed = sum(t.passed for t in part.tests)
        tests.append({  # the part's points, always visible: they add up to the total
            "name": f"{part.grade_id} ({passed} of {len(part.tests)} checks passed)",
            "number": f"{number}",
            "score": part.score, "max_score": part.max_score,
            "status": "passed" if part.tests and passed == len(part.tests) else "failed",
            "output": f"{part.grade_id}: {part.score:g} of {part.max_score:g} points",
            "visibility": "visible",
        })
        for index, check in enumerate(part.tests, 1):  # which checks failed and why, when `hidden` allows
            tests.append({
                "name": f"{part.grade_id}: {check.name}",
                "number": f"{number}.{index}",
                "score": 0.0, "max_score": 0.0,  # counted in the part's line above
                "status": "passed" if check.passed else "failed",
                "output": "PASS" if check.passed else f"FAIL: {check.message}",
                "visibility": hidden,
            })
    lines = [f"Score: {report.total:g} of {report.max:g} autograded points"
             " (written answers are graded by hand)."]
    if note:
        lines.append(note)
    if report.error:
        lines.append(f"Not graded: {report.error}")
    if report.limits:
        lines.append("Hit a limit: " + ", ".join(sorted(set(report.limits))))
    when = {"after_published": "once grades are published", "after_due_date": "after the due date",
            "hidden": "to your instructor only"}
    if hidden in when:
        lines.append(f"Each part's score is shown now; which checks passed, and why not, {when[hidden]}.")
    lines.append(f"isolation: {isolation}")
    return {"score": report.total, "execution_time": int(round(seconds)), "output": "\n".join(lines),
            "stdout_visibility": "hidden", "tests": tests}


def error_json(reason: str, seconds: float, isolation: str) -> dict:
    return {"score": 0.0, "execution_time": int(round(seconds)),
            "output": f"Not graded: {reason}\nisolation: {isolation}", "stdout_visibility": "hidden", "tests": []}


def grader_failure_json(reason: str, seconds: float) -> dict:
    """results.json when the grader, not the notebook, failed: no score at all (never a 0; run_autograder exits
    non-zero, and Gradescope shows the run as failed), the reason in `output`."""
    return {"execution_time": int(round(seconds)), "output": f"The grader failed, not your notebook: {reason}",
            "stdout_visibility": "hidden", "tests": []}


def run(root: Path | None = None) -> int:
    """Grade the submission under `root` (AUTOGRADER_ROOT, default /autograder) into results.json."""
    start = time.monotonic()
    root = Path(root or os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    submission_dir, results = _place(root)
    results.parent.mkdir(parents=True, exist_ok=True)
    from .assignment import find_assignment
    from .outputs.grader_failure import failure_reason
    from .sandbox.policy import start_student_sandbox
    from .sandbox.proof import no_ids_refusal
    from .settings import GraderSettings, load_config

    settings = GraderSettings(config=load_config(ROOT))
    assignment = find_assignment(ROOT)
    refusal = no_ids_refusal(settings)
    if refusal:
        return _failed(results, grader_failure_json(f"{refusal}. No score was given: your instructor will grade it "
                                                    "again.", time.monotonic() - start))
    student_box = start_student_sandbox(assignment, settings)  # before the grader's own imports, which it outlasts
    from .grading import grade_path
    from .intake.files import STAGING, IntakeRules, take_submission

    try:  # what grading reads is the intake's copy, as for make grade (autograder/intake/files.py)
        intake = take_submission(submission_dir, (), assignment.root / STAGING / "gradescope",
                                 IntakeRules.of(settings, assignment.notebook_name))
        if intake.notebook is None:
            data = error_json(intake.reason, time.monotonic() - start, "none (nothing was run)")
        else:
            report = grade_path(assignment, intake.notebook, settings, student_box)
            # The level a session ran this submission's checks at: proven by the grading itself.
            data = results_json(report, settings, student_box.level, time.monotonic() - start,
                                "; ".join(intake.notes))
    except Exception as exc:  # the grader itself failed: one line for the student and the log, and no score
        return _failed(results, grader_failure_json(f"{failure_reason(exc)}. No score was given: your instructor will "
                                                    "grade it again.", time.monotonic() - start))
    finally:
        student_box.close()  # grade_path closed it already, unless there was no notebook to grade or it failed
    results.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{data['score']:g} points; wrote {results} (isolation: {student_box.level or 'none'})")
    return 0


def _failed(results: Path, data: dict) -> int:
    """Write the grader's failure (no score) and say it in the log's one line; run_autograder exits non-zero."""
    results.write_text(json.dumps(data, indent=1) + "\n")
    print(f"No score; wrote {results}: {data['output']}")
    return 3


def prepare() -> int:
    """The reference's answers the zip ships checked against its hidden suites (answer_cache.py), at setup."""
    from .assignment import find_assignment
    from .checks.answer_cache import cache_path
    from .grading import prepare_class
    from .settings import GraderSettings, load_config

    assignment = find_assignment(ROOT)
    prepare_class(assignment, GraderSettings(config=load_config(ROOT)))
    print(f"setup.sh: the reference's answers in {cache_path(assignment)} match the hidden suites")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.gradescope", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="write the Gradescope autograder zip")
    build.add_argument("--to", type=Path, default=ROOT / "build" / "gradescope.zip")
    commands.add_parser("run", help="grade $AUTOGRADER_ROOT/submission into $AUTOGRADER_ROOT/results/results.json")
    commands.add_parser("prepare", help="compute the reference's answers once, into .grading/ (setup.sh runs it)")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        return prepare()
    if args.command == "build":
        path = build_zip(args.to)
        print(f"Wrote {path} ({path.stat().st_size // 1024} KB): upload it as the assignment's autograder on Gradescope.")
        return 0
    return run()


if __name__ == "__main__":
    sys.exit(main())
