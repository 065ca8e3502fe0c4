"""Command line: every job of the kit, one subcommand each; each make target runs one (`make help`).

`grade` grades one notebook anywhere on disk and exits 0 whatever the notebook does; it exits 3 only
when the grader itself cannot grade (one line says why: grader_failure.py), and 2 for the instructor's own
mistake (a path that does not exist, a folder where a notebook is expected). `class` is `make grade`
(classroom/grade_class.py), which exits 3, having written no score, when the grader cannot grade the class;
`preview` and `feedback` are its two halves (`make preview`, `make feedback`);
`regrade`, `new-class`, `clean-grading` and `reset-gradebook` are the course's life cycle
(classroom/lifecycle.py, and the make targets of the same names); `class-page` and `grades-lms` read the
gradebook (outputs/class_page.py, outputs/lms.py); `gradescope-zip` builds the Gradescope autograder (`make
gradescope`), whose setup.sh runs `gradescope-prepare` and whose run_autograder runs `gradescope-run`
(autograder/gradescope/). `grade` and the two inside the Gradescope image never import nbgrader.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from traitlets import TraitError

from .assignment import find_assignment
from .outputs.inert import say
from .settings import GraderSettings, load_config

ROOT = Path(__file__).resolve().parent.parent  # the course directory
CONFIRM_HELP = "`yes` applies a regrade the changed suites, reference or settings make, instead of previewing it"


def build_parser() -> argparse.ArgumentParser:
    """Every subcommand, with its options and its make target."""
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    course = argparse.ArgumentParser(add_help=False)  # every command that works on an assignment
    course.add_argument("--assignment", help="assignment id (default: the course's only one)")
    grade = commands.add_parser("grade", parents=[course], help="grade one notebook")
    grade.add_argument("notebook", type=Path)
    grade.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    grade.add_argument("--verbose", action="store_true", help="the table lists every check, not each part's first failure")
    klass = commands.add_parser("class", parents=[course], help="grade the new and changed submissions into the gradebook (make grade)")
    klass.add_argument("--force", action="store_true", help="grade the unchanged submissions again too (FORCE=1)")
    klass.add_argument("--confirm", metavar="yes", help=f"{CONFIRM_HELP} (make grade CONFIRM=yes)")
    commands.add_parser("preview", parents=[course], help="who a regrade under today's suites, reference and "
                        "settings would change, written to reports/; nothing else is written (make preview)")
    commands.add_parser("feedback", parents=[course], help="write again the feedback pages whose grades or comments "
                        "changed (hand grading), and grades.csv (make feedback)")
    regrade = commands.add_parser("regrade", parents=[course], help="grade these students of submitted/ again: gradebook, feedback, "
                                  "grades.csv; manual grades kept (make regrade STUDENT=...)")
    regrade.add_argument("students", nargs="+", metavar="STUDENT", help="a folder's name directly under submitted/")
    regrade.add_argument("--confirm", metavar="yes", help=f"{CONFIRM_HELP} (make regrade STUDENT=... CONFIRM=yes)")
    commands.add_parser("new-class", parents=[course], help="remove the demo class: its submissions, gradebook rows, "
                        "autograded/, feedback/ and grades.csv rows; real students keep theirs (make new-class)")
    commands.add_parser("clean-grading", help="remove autograded/, feedback/, grades.csv, reports/ and .grading/; "
                        "gradebook.db and its manual grades stay (make clean-grading)")
    reset = commands.add_parser("reset-gradebook", help="keep a dated copy of gradebook.db, then clean-grading and "
                                "delete gradebook.db: every score, MANUAL GRADES TOO (make reset-gradebook)")
    reset.add_argument("--confirm", metavar="yes", help="`yes` answers the question (make reset-gradebook CONFIRM=yes)")
    class_page = commands.add_parser("class-page", parents=[course], help="write reports/<assignment>.html after grading: "
                                     "score histogram, pass rate per part, most frequent messages, limits hit (make class-page)")
    class_page.add_argument("--to", type=Path, help="where to write the page (default reports/<assignment>.html)")
    lms = commands.add_parser("grades-lms", parents=[course], help="write reports/<assignment>-canvas.csv from the "
                              "gradebook, for Canvas's grade import (make grades-lms)")
    lms.add_argument("--to", type=Path, help="where to write the file (default reports/<assignment>-canvas.csv)")
    gradescope = commands.add_parser("gradescope-zip", parents=[course], help="write the Gradescope autograder zip "
                                     "(make gradescope)")
    gradescope.add_argument("--to", type=Path, default=ROOT / "build" / "gradescope.zip",
                            help="where to write the zip (default build/gradescope.zip)")
    commands.add_parser("gradescope-prepare", parents=[course], help="inside the Gradescope image: check the zip's "
                        "reference's answers against its hidden suites, once (the zip's setup.sh runs it)")
    commands.add_parser("gradescope-run", parents=[course], help="inside the Gradescope image: grade $AUTOGRADER_ROOT/"
                        "submission into $AUTOGRADER_ROOT/results/results.json (the zip's run_autograder runs it)")
    parser.epilog = ("examples (`make X` runs X, but make grade runs `class` and make gradescope `gradescope-zip`;\n"
                     "the zip's setup.sh and run_autograder run gradescope-prepare and gradescope-run):\n"
                     + "\n".join(f"  {name:<20}{EXAMPLES[name]}" for name in commands.choices))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
    try:
        settings = GraderSettings(config=load_config(ROOT))  # the configuration, read once: passed down from here
    except TraitError as error:  # a setting of the instructor's that the kit refuses: one line, nothing done
        say(f"nbgrader_config.py: {error}", sys.stderr)
        return 2
    return COMMANDS[args.command](find_assignment(ROOT, args.assignment), settings, args)


def _grade_one(assignment, settings: GraderSettings, args: argparse.Namespace) -> int:
    """`grade`: the notebook's table or JSON, exit 0; a grader that cannot grade says so in one line, exit 3."""
    from .sandbox.proof import closed_interpreter_refusal, no_ids_refusal

    refusal = no_ids_refusal(settings) or closed_interpreter_refusal(settings)
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


def _grade_class(assignment, settings: GraderSettings, args: argparse.Namespace) -> int:
    """`class`, `preview`, `feedback` and `regrade`: make grade, or one of its parts (classroom/grade_class.py)."""
    from .classroom.grade_class import grade_class, refresh_feedback

    if args.command == "feedback":
        return refresh_feedback(assignment, settings)
    if args.command == "regrade":
        return grade_class(assignment, settings, only=args.students, confirm=args.confirm == "yes")
    if args.command == "preview":
        return grade_class(assignment, settings, preview=True)
    return grade_class(assignment, settings, force=args.force, confirm=args.confirm == "yes")


def _new_class(assignment, settings: GraderSettings, args: argparse.Namespace) -> int:
    from nbgrader.coursedir import CourseDirectory

    from .classroom.lifecycle import new_class

    removed, kept = new_class(assignment, CourseDirectory(config=settings.config))
    say(f"Removed the demo class ({', '.join(removed)}): put the real submissions in "
        f"submitted/<student>/{assignment.name}/ and run make grade." if removed else "No demo student to remove.")
    if kept:
        say(f"Kept demo students {', '.join(kept)}: their gradebook rows hold manual grades (only make "
            "reset-gradebook removes those).")
    return 0


def _class_page(assignment, settings: GraderSettings, args: argparse.Namespace) -> int:
    from .outputs.class_page import command

    return command(ROOT, assignment, args.to, settings.config)


def _grades_lms(assignment, settings: GraderSettings, args: argparse.Namespace) -> int:
    from .outputs.lms import command

    return command(ROOT, assignment.name, args.to)


def _gradescope_zip(assignment, settings: GraderSettings, args: argparse.Namespace) -> int:
    from .gradescope.build import build_zip

    path = build_zip(assignment, settings, args.to)
    say(f"Wrote {path} ({path.stat().st_size // 1024} KB): upload it as the assignment's autograder on Gradescope.")
    return 0


def _gradescope_prepare(assignment, settings: GraderSettings, args: argparse.Namespace) -> int:
    from .gradescope.run import prepare

    return prepare(assignment, settings)


def _gradescope_run(assignment, settings: GraderSettings, args: argparse.Namespace) -> int:
    from .gradescope.run import run_autograder

    return run_autograder(assignment, settings)


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
    "regrade": "python -m autograder regrade [--confirm yes] ada",
    "new-class": "python -m autograder new-class",
    "clean-grading": "python -m autograder clean-grading",
    "reset-gradebook": "python -m autograder reset-gradebook [--confirm yes]",
    "class-page": "python -m autograder class-page [--to PAGE.html]",
    "grades-lms": "python -m autograder grades-lms [--to FILE.csv]",
    "gradescope-zip": "python -m autograder gradescope-zip [--to build/gradescope.zip]",
    "gradescope-prepare": "python -m autograder gradescope-prepare  (setup.sh, in /autograder/source)",
    "gradescope-run": "python -m autograder gradescope-run  (run_autograder, in /autograder/source)",
}
# The subcommands that work on an assignment, each with its handler (clean-grading and reset-gradebook work on the
# course directory alone).
COMMANDS = {"grade": _grade_one, "class": _grade_class, "preview": _grade_class, "feedback": _grade_class,
            "regrade": _grade_class, "new-class": _new_class, "class-page": _class_page, "grades-lms": _grades_lms,
            "gradescope-zip": _gradescope_zip, "gradescope-prepare": _gradescope_prepare,
            "gradescope-run": _gradescope_run}


if __name__ == "__main__":
    sys.exit(main())
