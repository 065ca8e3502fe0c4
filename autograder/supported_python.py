"""The Pythons the kit runs on: CPython 3.11.0 and every later release of 3.11, 3.12 and 3.13.

Asked by the Makefile and by Gradescope's setup.sh before either builds a venv, so it is run by
whatever interpreter they are weighing, not by the kit's: it keeps to syntax that any Python
parses, 2.7 included (no f-strings, no annotations), and imports nothing from the kit. `requirements.txt` is pinned so that
it installs on the oldest of these (tests/test_pins.py resolves it for 3.11.0, 3.12.0 and 3.13.0).

    python3.11 autograder/supported_python.py [NAME]

exits 0 on a supported interpreter; otherwise it prints one line naming NAME (how the caller found
this interpreter, default `python3`) and its version, and exits 1.
"""
import platform
import sys

OLDEST = (3, 11, 0)  # every patch release from here on: Debian 12 ships 3.11.2
NEWEST_MINOR = (3, 13)
RANGE = "3.11.0 to 3.13"


def supported(version_info):
    return OLDEST <= tuple(version_info[:3]) and tuple(version_info[:2]) <= NEWEST_MINOR


def main(argv):
    name = argv[1] if len(argv) > 1 else "python3"
    if supported(sys.version_info):
        return 0
    sys.stderr.write("%s is Python %s: the kit needs CPython %s (PYTHON=... names another)\n"
                     % (name, platform.python_version(), RANGE))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
