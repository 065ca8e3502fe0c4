"""Who one `make grade` run is about: the class collected (an LMS download, submitted/, or the demo class), the
demo's students no longer in submitted/ forgotten, and the students whose ids are refused; and who has grades
whatever submitted/ holds now (the gradebook's, for the feedback pages)."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from ..assignment import Assignment
from ..intake.student_ids import is_safe_student_id, unsafe_id_reason
from ..outputs.inert import say
from .class_run import ClassRun
from .lifecycle import (
    demo_submissions,
    existing_gradebook,
    forget_stale_demo,
    real_folders,
    regrade_refusal,
    write_demo,
)
from .progress import one_step


@dataclass
class Roll:
    """Who one run is about."""

    origin: str = ""  # where the submissions come from, for the first line
    collected: list[str] = field(default_factory=list)  # what collecting refused or kept, for the summary
    students: list[str] = field(default_factory=list)  # the students to grade
    refused: dict[str, str] = field(default_factory=dict)  # refused for their id, and why
    refusal: str = ""  # `make regrade` named what is not a student's folder: nothing is done


def take_roll(run: ClassRun, only: list[str] | None, collect: bool = True) -> Roll:
    """The students `only` names (each a folder directly under submitted/, never a path), or the class collected;
    the demo's leftovers forgotten; the ids refused. Not `collect` (`make preview`, which writes nothing but its
    table and scratch): the class as submitted/ holds it, nothing collected or forgotten."""
    if only:
        # One grade a student a run, however often the command names them (red-b26, pass 35: `regrade -- ada ada ada`
        # graded ada three times, and the summary's "3 graded", pass rates "1/3", read as two students failing)
        only = list(dict.fromkeys(only))
        refusal = regrade_refusal(run.assignment, run.submitted, only)
        if refusal:
            return Roll(refusal=refusal)
        roll = Roll("submitted/ (regrading " + ", ".join(only) + ")")
    elif not collect:
        roll = Roll("submitted/ as the last make grade collected it (make preview collects nothing)")
    else:
        roll = Roll(*one_step("collect", lambda: collect_class(run)))
    if collect:
        forget_demo_leftovers(run)
    roll.students, roll.refused = list_students(run, only)
    return roll


def collect_class(run: ClassRun) -> tuple[str, list[str]]:
    """Where this run's submissions come from, and what collecting them refused or kept (for the summary);
    fills submitted/ when it has to: from an LMS download, else with the demo class when it is empty."""
    api, assignment, submitted = run.api, run.assignment, run.submitted
    downloads = assignment.root / "downloaded" / assignment.name
    if (downloads / "archive").is_dir() and any((downloads / "archive").iterdir()):
        from ..intake.collect import LmsZipCollect  # only for an LMS download

        log = downloads / "collect.log"  # nbgrader's lines, one per file, would break into the progress bars
        handler = logging.FileHandler(log, mode="w", encoding="utf-8")
        handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
        logger = logging.getLogger("autograder.intake.collect")
        logger.handlers, logger.propagate, logger.level = [handler], False, logging.INFO
        app = LmsZipCollect(coursedir=api.coursedir, parent=api, log=logger)
        app.coursedir.assignment_id = assignment.name
        app.force = True
        try:
            app.start()
        finally:
            handler.close()
        demo = demo_submissions(assignment, submitted)  # left beside the real class: named, as _local names them
        also = f", and {len(demo)} of the bundled demo's in submitted/ ({_demo_named(demo)})" if demo else ""
        return (f"the LMS download in {downloads.relative_to(assignment.root)}{also}",
                app.collection.lines() + [f"Collect log: {log.relative_to(assignment.root)}"])
    return _local(assignment, submitted), []


def _local(assignment: Assignment, submitted: Path) -> str:
    """Where this run's submissions come from when there is no LMS download."""
    folders = [p for p in submitted.glob(f"*/{assignment.name}") if p.is_dir()] if submitted.is_dir() else []
    if not folders:
        real = real_folders(assignment.root, submitted)
        if real:  # a course under way: the demo's ids (ada, ken...) may be its students', never mixed with them
            return (f"submitted/, which holds no {assignment.name} submission yet (only {', '.join(real[:3])}"
                    f"{' ...' if len(real) > 3 else ''}: the demo class is written only beside no real student)")
        write_demo(assignment, submitted)  # and records it: the only way a student is the demo's
        return "the bundled demo class (submitted/ was empty)"
    demo = demo_submissions(assignment, submitted)  # the kit's record, never a name, time stamp or content
    if len(demo) == len(folders):
        return "the bundled demo class (written earlier into submitted/)"
    if demo:
        return f"submitted/, {len(demo)} of them the bundled demo's ({_demo_named(demo)})"
    return "submitted/"


def _demo_named(demo: list[str]) -> str:
    return f"{', '.join(demo)}: `make new-class` removes them"


def forget_demo_leftovers(run: ClassRun) -> None:
    """The demo class leaves nothing behind: its students no longer in submitted/ leave the gradebook,
    autograded/ and feedback/ (a row with manual grades stays, and is named)."""
    forgotten = forget_stale_demo(run.assignment, run.coursedir, run.submitted)
    if forgotten.removed:
        say(f"Removed the demo students no longer in submitted/ from the gradebook, autograded/ and feedback/: "
            f"{', '.join(forgotten.removed)}.")
    if forgotten.kept:
        say(f"Kept the gradebook rows of {', '.join(forgotten.kept)}, no longer the demo's: they hold manual grades "
            f"(only make reset-gradebook removes those).")


def list_students(run: ClassRun, only: list[str] | None) -> tuple[list[str], dict[str, str]]:
    """The students to grade, and those refused for their id (with why)."""
    name = run.assignment.name
    students = sorted(only or (p.parent.name for p in run.submitted.glob(f"*/{name}") if p.is_dir()))
    # The one place students enter the gradebook: an id outside the safe alphabet never does, so no page,
    # CSV or terminal of the instructor's shows it (docs/security.md, "What the instructor opens").
    refused = {student: unsafe_id_reason(student) for student in students if not is_safe_student_id(student)}
    return [student for student in students if student not in refused], refused


def in_gradebook(run: ClassRun) -> list[str]:
    """The students the gradebook holds a submission of the assignment for (nbgrader's API), whether or not
    submitted/ still holds their folder: a real student stays graded when it goes (moved to an archive, say), and
    their page follows the gradebook. An id outside the safe alphabet never enters it (list_students); one that
    came in another way (`nbgrader db student add`) is left out here too."""
    gradebook = existing_gradebook(run.coursedir)
    if gradebook is None:  # no one graded yet
        return []
    with gradebook as gb:
        students = sorted(s.student.id for s in gb.assignment_submissions(run.assignment.name))
    return [student for student in students if is_safe_student_id(student)]
