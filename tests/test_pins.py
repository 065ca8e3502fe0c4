"""requirements.txt (and the test pins) install on every Python the kit claims, down to the patch release.

pip resolves the pins for a target interpreter without having it (`--python-version`, wheels only), so
each supported minor version is tried at its oldest release, the one most likely to be refused: soupsieve
4.x, for one, needs 3.11.5 and broke `make grade` on Debian 12's 3.11.2. The resolution must take exactly
the pinned set: a package the pins left out would be installed unpinned.
"""
from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from autograder import supported_python

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ("requirements.txt", "requirements-test.txt")
OLDEST = [".".join(map(str, supported_python.OLDEST))] + [
    f"3.{minor}.0" for minor in range(supported_python.OLDEST[1] + 1, supported_python.NEWEST_MINOR[1] + 1)]
OFFLINE = ("NewConnectionError", "Temporary failure in name resolution", "Network is unreachable")


def pins() -> dict[str, str]:
    found = {}
    for name in REQUIREMENTS:
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line:
                package, version = line.split("==")
                found[package.lower().replace("_", "-")] = version
    return found


def resolve(version: str, scratch: Path) -> subprocess.CompletedProcess:
    report = scratch / f"report-{version}.json"
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
               "--python-version", version, "--only-binary=:all:", "--target", str(scratch / version),
               "--report", str(report)]
    for name in REQUIREMENTS:
        command += ["-r", str(ROOT / name)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_the_supported_range_starts_at_a_patch_release():
    assert OLDEST == ["3.11.0", "3.12.0", "3.13.0"]
    assert supported_python.supported((3, 11, 0, "final", 0)) and supported_python.supported((3, 13, 9))
    assert not supported_python.supported((3, 10, 14)) and not supported_python.supported((3, 14, 0))


@pytest.mark.slow
def test_the_pins_resolve_for_the_oldest_release_of_each_supported_python(tmp_path):
    with ThreadPoolExecutor(len(OLDEST)) as pool:
        runs = dict(zip(OLDEST, pool.map(lambda v: resolve(v, tmp_path), OLDEST)))
    if all(any(word in run.stderr for word in OFFLINE) for run in runs.values()):
        pytest.skip("the package index cannot be reached from here")
    wanted = pins()
    for version, run in runs.items():
        errors = [line for line in run.stderr.splitlines() if not line.startswith("WARNING: Location")]
        assert run.returncode == 0, f"Python {version}: " + "\n".join(errors[-5:])
        taken = {item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
                 for item in json.loads((tmp_path / f"report-{version}.json").read_text())["install"]}
        assert taken == wanted, f"Python {version}: {set(taken.items()) ^ set(wanted.items())}"
