"""Command line: `python -m autograder grade PATH.ipynb [--json]` and `python -m autograder class`.

`grade` grades one notebook anywhere on disk and exits 0 whatever the notebook does; it exits
non-zero only when the grader itself cannot run. `class` is `make grade` (see classroom.py).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .assignment import find_assignment
from .settings import GraderSettings, load_config
from .suites import grade_paths

ROOT = Path(__file__).resolve().parent.parent  # the course directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade one notebook")
    grade.add_argument("notebook", type=Path)
    grade.add_argument("--assignment", help="assignment id (default: the course's only one)")
    grade.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    klass = commands.add_parser("class", help="grade every submission into the gradebook (make grade)")
    klass.add_argument("--assignment", help="assignment id (default: the course's only one)")
    args = parser.parse_args(argv)

    settings = GraderSettings(config=load_config(ROOT))
    assignment = find_assignment(ROOT, args.assignment)
    if args.command == "grade":
        report = grade_paths(assignment, [args.notebook], settings)[str(args.notebook)]
        print(json.dumps(report.to_json(), indent=1) if args.json else report.to_table())
        return 0
    from .classroom import grade_class

    return grade_class(assignment, settings)


if __name__ == "__main__":
    sys.exit(main())
