"""Command line: `python -m autograder grade PATH.ipynb [--json]` and `python -m autograder class`.

`grade` grades one notebook anywhere on disk and exits 0 whatever the notebook does; it exits 3 only
when the grader itself cannot grade (one line says why: grader_failure.py), and 2 for the instructor's own
mistake (a path that does not exist, a folder where a notebook is expected). `class` is `make grade`
(see classroom.py), which exits 3, having written no score, when the grader cannot grade the class; `preview`
and `feedback` are its two halves (`make preview`, `make feedback`);
`regrade`, `new-class`, `clean-grading` and `reset-gradebook` are the course's life cycle
(lifecycle.py, and the make targets of the same names).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .assignment import find_assignment
from .outputs.inert import say
from .settings import GraderSettings, load_config

ROOT = Path(__file__).resolve().parent.parent  # the course directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    course = argparse.ArgumentParser(add_help=False)  # every command that works on an assignment
    course.add_argument("--assignment", help="assignment id (default: the course's only one)")
    grade = commands.add_parser("grade", parents=[course], help="grade one notebook")
    grade.add_argument("notebook", type=Path)
    grade.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    grade.add_argument("--verbose", action="store_true", help="the table lists every check, not each part's first failure")
    klass = commands.add_parser("class", parents=[course], help="grade the new and changed submissions into the gradebook (make grade)")
    klass.add_argument("--force", action="store_true", help="grade the unchanged submissions again too (FORCE=1)")
    klass.add_argument("--confirm", metavar="yes", help="`yes` applies a regrade the changed suites, reference or "
                       "settings make, instead of previewing it (make grade CONFIRM=yes)")
    commands.add_parser("preview", parents=[course], help="who a regrade under today's suites, reference and "
                        "settings would change, written to reports/; nothing else is written (make preview)")
    commands.add_parser("feedback", parents=[course], help="write again the feedback pages whose grades or comments "
                        "changed (hand grading), and grades.csv (make feedback)")
    regrade = commands.add_parser("regrade", parents=[course], help="grade these students of submitted/ again: gradebook, feedback, "
                                  "grades.csv; manual grades kept (make regrade STUDENT=...)")
    regrade.add_argument("students", nargs="+", metavar="STUDENT", help="a folder's name directly under submitted/")
    commands.add_parser("new-class", parents=[course], help="remove the demo class: its submissions, gradebook rows, "
                        "autograded/, feedback/ and grades.csv rows; real students keep theirs (make new-class)")
    class_page = commands.add_parser("report", parents=[course], help="write reports/<assignment>.html after grading: score histogram, "
                                  "pass rate per part, most frequent messages, limits hit (make report)")
    class_page.add_argument("--to", type=Path, help="where to write the page (default reports/<assignment>.html)")
    commands.add_parser("clean-grading", help="remove autograded/, feedback/, grades.csv, reports/ and .grading/; "
                        "gradebook.db and its manual grades stay (make clean-grading)")
    reset = commands.add_parser("reset-gradebook", help="keep a dated copy of gradebook.db, then clean-grading and "
                                "delete gradebook.db: every score, MANUAL GRADES TOO (make reset-gradebook)")
    reset.add_argument("--confirm", metavar="yes", help="`yes` answers the question (make reset-gradebook CONFIRM=yes)")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "examples (make grade runs `class`; each make target of the README runs one of these):\n" + "\n".join(
        f"  {name:<17}{EXAMPLES.get(name, f'python -m autograder {name}')}" for name in commands.choices)
    args = parser.parse_args(argv)

    if args.command == "grade" and not args.notebook.is_file():  # the instructor's mistake, not a student's zero
        problem = "is a folder: give the notebook file" if args.notebook.is_dir() else "does not exist"
        say(f"python -m autograder grade: error: {args.notebook} {problem}", sys.stderr)
        return 2
    if args.command == "clean-grading":
        from .classroom.lifecycle import clean_grading

        removed = clean_grading(ROOT)
        say(f"Removed {', '.join(removed)}." if removed else "Nothing to remove.")
        return 0
    if args.command == "reset-gradebook":
        return _reset_gradebook(args.confirm)

    settings = GraderSettings(config=load_config(ROOT))  # the configuration, read once: passed down from here
    assignment = find_assignment(ROOT, args.assignment)
    if args.command == "grade":
        return _grade_one(assignment, settings, args)
    if args.command == "report":
        from .outputs.class_page import main as write_class_page

        return write_class_page(ROOT, assignment, args.to, settings.config)
    if args.command == "new-class":
        from nbgrader.coursedir import CourseDirectory

        from .classroom.lifecycle import new_class

        removed, kept = new_class(assignment, CourseDirectory(config=settings.config))
        say(f"Removed the demo class ({', '.join(removed)}): put the real submissions in "
              f"submitted/<student>/{assignment.name}/ and run make grade." if removed else "No demo student to remove.")
        if kept:
            say(f"Kept demo students {', '.join(kept)}: their gradebook rows hold manual grades (only make "
                  "reset-gradebook removes those).")
        return 0
    from .classroom.grade_class import grade_class, refresh_feedback

    if args.command == "feedback":
        return refresh_feedback(assignment, settings)
    if args.command == "regrade":
        return grade_class(assignment, settings, only=args.students)
    if args.command == "preview":
        return grade_class(assignment, settings, preview=True)
    return grade_class(assignment, settings, force=args.force, confirm=args.confirm == "yes")


def _grade_one(assignment, settings: GraderSettings, args: argparse.Namespace) -> int:
    """`grade`: the notebook's table or JSON, exit 0; a grader that cannot grade says so in one line, exit 3."""
    from .sandbox.proof import no_ids_refusal

    refusal = no_ids_refusal(settings)
    if refusal:
        say(f"python -m autograder grade: not graded: {refusal}", sys.stderr)
        return 3
    from .sandbox.policy import start_student_sandbox

    student_box = start_student_sandbox(assignment, settings)  # before the grader's own imports, which it outlasts
    from .grading import grade_path
    from .outputs.grader_failure import grader_failure

    try:
        report = grade_path(assignment, args.notebook, settings, student_box)
    except Exception as exc:
        say(f"python -m autograder grade: {grader_failure(exc)}", sys.stderr)
        return 3
    finally:
        student_box.close()
    say(json.dumps(report.to_json(), indent=1) if args.json else report.to_table(verbose=args.verbose))
    return 0


RESET_QUESTION = "reset-gradebook deletes gradebook.db: every score, manual grades too (a dated copy is kept)."


def _reset_gradebook(confirm: str | None) -> int:
    """reset-gradebook once confirmed: `--confirm yes`, else `yes` typed on a terminal; with neither, one line."""
    from .classroom.lifecycle import reset_gradebook

    if confirm != "yes":
        if not sys.stdin.isatty():
            sys.stderr.write("reset-gradebook: refused: it deletes every score and manual grade; confirm on a "
                             "terminal, or with make reset-gradebook CONFIRM=yes (--confirm yes)\n")
            return 2
        try:
            answer = input(f"{RESET_QUESTION}\nType yes to go on: ")
        except EOFError:  # Ctrl-D: no answer is not a yes
            answer = ""
        if answer.strip() != "yes":
            say("Nothing removed.")
            return 2
    copy, removed = reset_gradebook(ROOT)
    if copy:
        say(f"Kept a copy of gradebook.db as {copy.name}.")
    say(f"Removed {', '.join(removed)}." if removed else "Nothing to remove.")
    return 0


EXAMPLES = {
    "grade": "python -m autograder grade submitted/ada/<assignment>/<notebook>.ipynb [--json | --verbose]",
    "class": "python -m autograder class [--force] [--confirm yes]",
    "preview": "python -m autograder preview",
    "feedback": "python -m autograder feedback",
    "regrade": "python -m autograder regrade ada",
    "new-class": "python -m autograder new-class",
    "clean-grading": "python -m autograder clean-grading",
    "reset-gradebook": "python -m autograder reset-gradebook [--confirm yes]",
    "report": "python -m autograder report [--to PAGE.html]",
}



if __name__ == "__main__":
    sys.exit(main())
