"""Hostile pass 17, red-p3: failing tests for what got through (REPORT ONLY: no fix on this branch).

Each test is a specification the kit does not meet on main 3cbbe9d (/work/pass17/red-p3.md):
* a machine fault while the intake writes the kit's own copy (a full disk) is written down as the student's zero;
* an instructor's hard-link backup of submitted/ (cp -al, rsync --link-dest) turns a graded notebook into a zero;
* one notebook (a solution cell turned into a raw cell) scores differently through make grade and through
  `python -m autograder grade` / Gradescope's run_autograder;
* the full disk during nbgrader's exchange collect replaces the student's collected work with no notebook.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess

import pytest

from autograder.checks.suites import PreparedClass
from autograder.classroom import student_autograde
from autograder.grading import ClassGrading
from autograder.intake import files
from autograder.intake.files import IntakeRules
from autograder.settings import GraderSettings, load_config
from bench.course import gradebook_scores
from conftest import ASSIGNMENT, NOTEBOOK, ROOT, course_copy, grade_class, grade_json, scores, solution_notebook

LIMIT = 2048 * 1024


def test_a_full_disk_while_the_intake_copies_the_notebook_is_the_graders_failure(tmp_path, monkeypatch):
    """The kit's own write of the staged copy fails (ENOSPC: the grading machine's disk, not the student's file):
    the student is not graded, and it is the grader's failure (no score), never "not a readable notebook"."""
    folder = tmp_path / "submitted" / "someone" / ASSIGNMENT.name
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK, folder / NOTEBOOK)
    read = files._read

    def full_disk(root, path, dest, limit, cut=False):
        read(files._open_file(root, path), limit)  # the student's file reads fine
        raise OSError(errno.ENOSPC, "No space left on device", str(dest))

    monkeypatch.setattr(files, "_copy", full_disk)
    settings = GraderSettings(config=load_config(ROOT))
    grading = ClassGrading(PreparedClass(ASSIGNMENT, settings, [], {}, str))  # not reached: the intake fails first
    autograde = student_autograde.autograder_for(grading, settings.config, tmp_path / "submitted",
                                                 IntakeRules(NOTEBOOK, LIMIT))
    answer = autograde("someone")
    assert answer is not None and answer.grader_fault, answer  # main: NotGraded("... is not a readable notebook
    # (it could not be read (No space left on device))", grader_fault=False): a zero in the gradebook


def test_a_second_link_made_by_the_instructors_backup_is_not_the_students_zero(tmp_path):
    """`cp -al submitted submitted.bak` before a risky step: every notebook in submitted/ now has two links. The
    student did nothing: the intake may refuse the file, but not as the student's reason (a zero)."""
    folder = tmp_path / "submitted" / "eve" / "a"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text("{}")
    subprocess.run(["cp", "-al", str(tmp_path / "submitted"), str(tmp_path / "submitted.bak")], check=True)
    intake = files.take_submission(tmp_path / "submitted", ("eve", "a"), tmp_path / "staging",
                                   IntakeRules(NOTEBOOK, LIMIT))
    assert intake.notebook is not None, intake.reason  # main: "... is not a readable notebook (it is a hard link
    # to another file, not a file of its own)", and make grade writes 0 of 18 over the 18 it had


@pytest.mark.slow
def test_a_solution_cell_turned_raw_scores_the_same_through_make_grade_and_gradescope(tmp_path):
    """grading.grade_path (python -m autograder grade, Gradescope's run_autograder) and make grade (nbgrader's
    passes, OverwriteCellsAtOnce turning the cell back into code) grade one file: one score."""
    notebook = solution_notebook()
    for cell in notebook.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "no_grad":
            cell.cell_type = "raw"
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
    course = course_copy(tmp_path / "course")
    path = course / "submitted" / "raw" / ASSIGNMENT.name / NOTEBOOK
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(notebook, indent=1))
    report, _ = grade_json(path, course)
    run = grade_class(course, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert gradebook_scores(course)["raw"] == scores(report)  # main: make grade test_no_grad 3, lesson 3 (18/18);
    # grade and Gradescope test_no_grad 0, lesson 1.91 (13.91/18, "the cell no_grad is missing from the notebook")


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="folders other users own are made with chown, as root")
def test_a_full_disk_during_an_exchange_collect_keeps_the_collected_work(tmp_path, monkeypatch):
    """nbgrader's exchange (IntakeExchangeCollect): a newer folder whose notebook the kit cannot copy for a machine
    fault (ENOSPC) never replaces the student's collected work with a folder without a notebook."""
    from test_intake import LATER, SUBMITTED, exchange, inbound

    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, 65534, '{"mine": 1}')
    assert collect()["success"]
    inbound(tmp_path, LATER, 65534, '{"mine": 2}')
    copy = files._copy

    def full_disk(root, path, dest, limit, cut=False):
        if dest.name == NOTEBOOK:
            raise OSError(errno.ENOSPC, "No space left on device", str(dest))
        copy(root, path, dest, limit, cut)

    monkeypatch.setattr(files, "_copy", full_disk)
    result = collect()
    assert (collected / NOTEBOOK).is_file(), result["log"]  # main: "not a readable notebook (it could not be read
    # (No space left on device))", then "Collecting submission": the folder replaced by one without it (a zero)
