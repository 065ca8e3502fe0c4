"""The Makefile's choice of the Python that builds .venv (README: Set-up).

Without PYTHON it takes the newest of python3.13, python3.12 and python3.11 that runs, then python3
if that is 3.11 to 3.13; where none fits it stops with one line; PYTHON=... overrides; and it looks
only when .venv must be built. The fast tests run `make` in a copy of the Makefile with PATH holding
only fake interpreters; one slow test builds a real .venv with a second supported Python if the
machine has one.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")
SUPPORTED = [(3, 11), (3, 12), (3, 13)]
NEEDS = "needs Python 3.11.0 to 3.13 to build .venv"


def fake_python(bin_dir: Path, name: str, version: str | None, log: Path) -> None:
    """`bin_dir/name`: runs `-c CODE` or a script in this interpreter as if it were `version`; logs the call.

    version None: a command that exists but does not run (like a pyenv shim of an unselected version).
    """
    if version is None:
        text = f"#!/bin/sh\necho {name} >> {log}\necho 'pyenv: {name}: command not found' >&2\nexit 127\n"
    else:
        major, minor, micro = (int(part) for part in version.split("."))
        text = f"""#!{sys.executable}
import sys
with open({str(log)!r}, "a") as log:
    print({name!r}, file=log)
sys.version_info = ({major}, {minor}, {micro}, "final", 0)
sys.version = {version!r} + " " + sys.version.split(" ", 1)[1]
if sys.argv[1:2] == ["-c"]:
    code, sys.argv = sys.argv[2], ["-c"] + sys.argv[3:]
elif sys.argv[1:2] and sys.argv[1].endswith(".py"):
    code, sys.argv = open(sys.argv[1]).read(), sys.argv[1:]
else:
    sys.exit(2)
exec(compile(code, "<string>", "exec"), {{"__name__": "__main__"}})
"""
    path = bin_dir / name
    path.write_text(text)
    path.chmod(0o755)


def make_env(path: str, **extra: str) -> dict[str, str]:
    """The environment with only `path` on PATH, and no PYTHON or make settings from outside."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHON", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    return {**env, "PATH": path, **extra}


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A copy of the Makefile, requirements.txt and the supported-Python check, without .venv."""
    assert MAKE, "make is not on PATH"
    course = tmp_path / "course"
    (course / "autograder").mkdir(parents=True)
    for name in ("Makefile", "requirements.txt", "autograder/supported_python.py"):
        shutil.copy(ROOT / name, course / name)
    return course


def make(course: Path, fakes: dict[str, str | None], *args: str, **env: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`make ARGS` in `course` with PATH holding only `fakes` (name: version); the run and the calls."""
    bin_dir, log = course.parent / "bin", course.parent / "calls.log"
    shutil.rmtree(bin_dir, ignore_errors=True)
    bin_dir.mkdir()
    log.write_text("")
    for name, version in fakes.items():
        fake_python(bin_dir, name, version, log)
    run = subprocess.run([MAKE, "--no-print-directory", *args], cwd=course, capture_output=True, text=True,
                         env=make_env(str(bin_dir), **env), timeout=60)
    return run, log.read_text().split()


def test_picks_the_newest_supported_python(course):
    run, _ = make(course, {"python3.11": "3.11.9", "python3.12": "3.12.3", "python3": "3.11.9"}, "which-python")
    assert (run.returncode, run.stdout) == (0, "python3.12\n"), run.stderr
    # A python3.13 that exists but does not run (an unselected pyenv shim) is passed over.
    run, _ = make(course, {"python3.13": None, "python3.12": "3.12.3", "python3.11": "3.11.9"}, "which-python")
    assert (run.returncode, run.stdout) == (0, "python3.12\n"), run.stderr
    run, _ = make(course, {"python3.13": "3.13.1", "python3.12": "3.12.3", "python3.11": "3.11.9"}, "which-python")
    assert run.stdout == "python3.13\n"


def test_python3_when_it_is_supported(course):
    run, _ = make(course, {"python3": "3.13.0"}, "which-python")
    assert (run.returncode, run.stdout) == (0, "python3\n"), run.stderr
    # A python3.11 that claims another version is not trusted either.
    run, _ = make(course, {"python3.11": "3.10.4", "python3": "3.12.1"}, "which-python")
    assert run.stdout == "python3\n"


@pytest.mark.parametrize("found", ["3.10.12", "3.14.0"])
def test_no_supported_python_stops_with_one_line(course, found):
    for target in ("which-python", ".venv/.installed", "grade"):
        run, _ = make(course, {"python3": found}, target)
        assert run.returncode != 0 and run.stdout == ""
        assert len(run.stderr.splitlines()) == 1, run.stderr
        assert NEEDS in run.stderr and f"found: python3 {found}" in run.stderr, run.stderr
    assert not (course / ".venv").exists()
    run, _ = make(course, {}, "which-python")
    assert run.stderr.splitlines() == [run.stderr.strip()] and "found: no python3" in run.stderr


def test_python_given_overrides_the_choice(course):
    fakes = {"python3.13": "3.13.1", "python3.11": "3.11.9", "python3": "3.10.12"}
    run, _ = make(course, fakes, "which-python", "PYTHON=python3.11")
    assert run.stdout == "python3.11\n"
    given = str(course.parent / "bin" / "python3.11")  # a path, from the environment
    run, _ = make(course, fakes, "which-python", PYTHON=given)
    assert run.stdout == given + "\n", run.stderr
    run, _ = make(course, fakes, "-n", ".venv/.installed", PYTHON="python3.11")
    assert run.stdout.splitlines()[0] == "python3.11 -m venv .venv", run.stdout
    run, _ = make(course, fakes, "-n", ".venv/.installed")
    assert run.stdout.splitlines()[0] == "python3.13 -m venv .venv", run.stdout


@pytest.mark.parametrize("found", ["3.10.12", "3.14.0", None])
def test_an_unsupported_python_given_stops_with_one_line_naming_it(course, found):
    run, _ = make(course, {"python3.13": "3.13.1", "old": found}, ".venv/.installed", "PYTHON=old")
    assert run.returncode != 0 and run.stdout == "" and len(run.stderr.splitlines()) == 1, run.stderr
    if found:
        assert f"old is Python {found}: the kit needs CPython 3.11.0 to 3.13" in run.stderr, run.stderr
    else:
        assert "old does not run" in run.stderr, run.stderr
    assert not (course / ".venv").exists()


def test_looks_only_when_venv_must_be_built(course):
    fakes = {"python3.13": "3.13.1", "python3.12": "3.12.3", "python3": "3.12.3"}
    run, calls = make(course, fakes, "help")
    assert run.returncode == 0 and "make which-python" in run.stdout and calls == []
    # An installed .venv newer than requirements.txt: nothing is looked for, even with no Python at all.
    (course / ".venv").mkdir()
    (course / ".venv" / ".installed").touch()
    os.utime(course / "requirements.txt", (0, 0))
    run, calls = make(course, {}, "-n", "grade")
    assert (run.returncode, run.stdout) == (0, '.venv/bin/python -m autograder class --assignment dl01_6_3 --confirm '
                                               '"$KIT_CONFIRM"\n'), run.stderr
    run, calls = make(course, fakes, "-n", "grade")
    assert run.returncode == 0 and calls == []


def other_supported_python() -> tuple[str, str] | None:
    """A supported interpreter of another minor version than this one, the newest: (path, "3.x.y")."""
    dirs = os.environ.get("PATH", "").split(os.pathsep) + ["/usr/local/bin", "/usr/bin"]
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    dirs += sorted(glob.glob(os.path.join(pyenv, "versions", "*", "bin")))
    found = {}
    for d in dirs:
        for minor in (13, 12, 11):
            path = os.path.join(d, f"python3.{minor}")
            if (3, minor) == sys.version_info[:2] or (3, minor) in found or not os.access(path, os.X_OK):
                continue
            run = subprocess.run([path, "-c", "import platform, venv; print(platform.python_version())"],
                                 capture_output=True, text=True, timeout=60)
            if run.returncode == 0 and run.stdout.startswith(f"3.{minor}."):
                found[(3, minor)] = (path, run.stdout.strip())
    return found[max(found)] if found else None


@pytest.mark.slow
def test_builds_the_venv_with_another_supported_python(course):
    """python3.11 missing, python3 another supported version: `make` builds .venv with it (1 to 2 min)."""
    other = other_supported_python()
    if other is None:
        pytest.skip("no python3.11, python3.12 or python3.13 other than this one "
                    f"({sys.version.split()[0]}) runs from PATH, /usr/bin, /usr/local/bin or pyenv's versions")
    path, version = other
    bin_dir = course.parent / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/bin/sh\nexec {path} "$@"\n')
    (bin_dir / "python3").chmod(0o755)
    for tool in ("touch", "mkdir", "ln"):  # what the venv recipe runs besides python3
        (bin_dir / tool).symlink_to(shutil.which(tool))
    try:
        run = subprocess.run([MAKE, "--no-print-directory", ".venv/.installed"], cwd=course, capture_output=True,
                             text=True, env=make_env(str(bin_dir)), timeout=900)
        assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
        assert run.stdout.splitlines()[0] == "python3 -m venv .venv", run.stdout
        check = subprocess.run([str(course / ".venv" / "bin" / "python"), "-c",
                                "import platform, numpy, nbgrader; print(platform.python_version())"],
                               capture_output=True, text=True, timeout=120)
        assert (check.returncode, check.stdout.strip()) == (0, version), check.stderr
    finally:
        shutil.rmtree(course / ".venv", ignore_errors=True)
