"""Inside the Gradescope image: the shipped answers checked once (setup.sh) and one submission graded (run_autograder).

`python3 -m autograder gradescope-run`, which run_autograder runs, grades the notebook with the same code as
`make grade` (`grading.grade_path`, which calls `ClassGrading.grade_one` as nbgrader's RunHiddenSuites does: the hidden suites in
the sandbox, the reference's answers shipped, each submission confined by autograder/sandbox/isolation.py, on by
default as root), without importing nbgrader, and writes results.json:

* one test per part (grade cell), visible: its score out of its points and how many checks passed
  (the public self-checks are not run again: the hidden suites decide the grade, and each part's line
  shows it without any hidden code);
* one test per hidden check, with the visibility `c.GraderSettings.gradescope_hidden_visibility`
  (after_published by default): its name, status and one-line message (0 points of its own: the
  part's line carries them, so the tests' scores add up to the total exactly);
* the total `score`, `execution_time` and an `output` naming the isolation level.

Only check names and their redacted one-line messages leave the grader, as in feedback.
Every path under /autograder comes from AUTOGRADER_ROOT (default /autograder), so a test runs it in a temporary
folder. `python3 -m autograder gradescope-prepare`, which setup.sh runs, checks the zip's reference's answers
against its hidden suites once (answer_cache.py).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..assignment import Assignment
    from ..settings import GraderSettings


def _place(root: Path) -> tuple[Path, Path]:
    """(the submission folder, results.json) under AUTOGRADER_ROOT."""
    return root / "submission", root / "results" / "results.json"


# Every field Gradescope shows is plain text: names and messages carry a student's file names and grade ids, and
# Gradescope's default format (simple_format) would read markup in them.
PLAIN = {"output_format": "text", "test_output_format": "text", "test_name_format": "text",
         "stdout_visibility": "hidden"}


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
            "tests": tests, **PLAIN}


def error_json(reason: str, seconds: float, isolation: str) -> dict:
    """results.json for a notebook not graded, 0: the reason as make grade shows it (one_line: one line, bounded,
    its controls escaped), since it may name the student's files (ten notebooks' whole paths, a name's line breaks
    written as lines of the kit's own) (red-a20 X29-a20-3)."""
    from ..outputs.inert import one_line

    return {"score": 0.0, "execution_time": int(round(seconds)),
            "output": f"Not graded: {one_line(reason)}\nisolation: {isolation}", "tests": [], **PLAIN}


def grader_failure_json(reason: str, seconds: float) -> dict:
    """results.json when the grader, not the notebook, failed: no score at all (never a 0; run_autograder exits
    non-zero, and Gradescope shows the run as failed), the reason in `output`."""
    return {"execution_time": int(round(seconds)), "output": f"The grader failed, not your notebook: {reason}",
            "tests": [], **PLAIN}


def run_autograder(assignment: Assignment, settings: GraderSettings, root: Path | None = None) -> int:
    """Grade the submission under `root` (AUTOGRADER_ROOT, default /autograder) into results.json."""
    start = time.monotonic()
    root = Path(root or os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    submission_dir, results = _place(root)
    results.parent.mkdir(parents=True, exist_ok=True)
    from ..outputs.grader_failure import failure_reason
    from ..sandbox.policy import start_student_sandbox
    from ..sandbox.proof import closed_interpreter_refusal, no_ids_refusal

    refusal = no_ids_refusal(settings) or closed_interpreter_refusal(settings)
    if refusal:
        return _failed(results, grader_failure_json(f"{refusal}. No score was given: your instructor will grade it "
                                                    "again.", time.monotonic() - start))
    student_box = start_student_sandbox(assignment, settings)  # before the grader's own imports, which it outlasts
    from ..grading import grade_path
    from ..intake.files import STAGING, IntakeRules, take_submission
    from ..outputs.inert import notes_line

    try:  # what grading reads is the intake's copy, as for make grade (autograder/intake/files.py)
        # timed=False: Gradescope keeps its own submission time, and no timestamp.txt decides anything here.
        intake = take_submission(submission_dir, (), assignment.root / STAGING / "gradescope",
                                 IntakeRules.of(settings, assignment.notebook_name), timed=False)
        if intake.notebook is None:
            data = error_json(intake.reason, time.monotonic() - start, "none (nothing was run)")
        else:
            report = grade_path(assignment, intake.notebook, settings, student_box)
            # The level a session ran this submission's checks at: proven by the grading itself.
            data = results_json(report, settings, student_box.level, time.monotonic() - start,
                                notes_line(intake.notes))
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


def prepare(assignment: Assignment, settings: GraderSettings) -> int:
    """The reference's answers the zip ships checked against its hidden suites (answer_cache.py), at setup."""
    from ..checks.answer_cache import cache_path
    from ..grading import prepare_class

    prepare_class(assignment, settings)
    print(f"setup.sh: the reference's answers in {cache_path(assignment)} match the hidden suites")
    return 0
