"""red-r4 (pass 18): findings written as failing tests (REPORT ONLY: nothing is fixed on this branch).
Each fails on main 8ffc2c5; /work/pass18/red-r4.md has the reproductions through make grade and Gradescope."""
from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from autograder.intake import files
from autograder.intake.collect import LmsFileNameCollectorPlugin
from autograder.intake.files import IntakeRules, StagingFault, take_submission

NAME = "modules_and_sgd.ipynb"
RULES = IntakeRules(NAME, 2048 * 1024)


def take(tmp_path: Path, rules: IntakeRules = RULES):
    return take_submission(tmp_path / "submitted", ("eve", "a"), tmp_path / ".grading" / "intake" / "eve" / "a", rules)


def submission(tmp_path: Path) -> Path:
    folder = tmp_path / "submitted" / "eve" / "a"
    folder.mkdir(parents=True)
    return folder


def test_a_folder_named_as_the_notebook_is_the_students_layout_not_the_machines_failure(tmp_path):
    """A student who zips the folder `modules_and_sgd.ipynb/` (the notebook and a figure in it): the intake stages the
    notebook as modules_and_sgd.ipynb and then cannot make the figure's folder of that name. That is the student's
    layout, never StagingFault (no zero, and make grade stops: 'the grader failed on every submission')."""
    inner = submission(tmp_path) / NAME
    inner.mkdir()
    (inner / NAME).write_text('"work"')
    (inner / "plot.png").write_text("png")
    try:
        intake = take(tmp_path, replace(RULES, extra_files=("*.png",)))
    except StagingFault as fault:
        raise AssertionError(f"the student's own folder read as the machine's failure: {fault}") from None
    assert intake.notebook is not None or intake.reason


def test_a_file_whose_path_fits_in_submitted_is_not_the_machines_failure_for_its_length(tmp_path):
    """.grading/intake/ is 6 bytes longer than submitted/: a data file of a 4,095-byte path (unzip, git and tar write
    it) cannot be staged. Its length is the student's, never StagingFault."""
    top = submission(tmp_path)
    (top / NAME).write_text('"work"')
    data = top / "data"
    data.mkdir()
    room, d = 4095 - len(os.fsencode(str(data))) - 1, data
    while room > 300:
        d = d / ("d" * 200)
        d.mkdir()
        room -= 201
    (d / ("x" * (room - 4) + ".csv")).write_text("1,2\n")
    try:
        take(tmp_path, replace(RULES, extra_files=("data/*.csv",)))
    except StagingFault as fault:
        raise AssertionError(f"a path's length read as the machine's failure: {str(fault)[:120]}") from None


def test_a_notebook_saved_with_an_upper_case_extension_is_graded_alike_on_every_disk(tmp_path, monkeypatch):
    """The work as Modules_and_SGD.IPYNB at the top, a draft in old/: a case-insensitive course copy (simulated as in
    test_intake: known names looked up and opened whatever their case) grades the work; Linux must grade the same."""
    top = submission(tmp_path)
    (top / "Modules_and_SGD.IPYNB").write_text('"final"')
    (top / "old").mkdir()
    (top / "old" / NAME).write_text('"draft"')

    def spelled(folder: int, name: str) -> str:
        *up, last = name.split("/")
        fd = files._open_folder(os.dup(folder), up)
        try:
            return "/".join([*up, next((n for n in os.listdir(fd) if n.casefold() == last.casefold()), last)])
        finally:
            os.close(fd)

    on_linux = take(tmp_path).notebook.read_text()
    lstat, open_file = files._lstat, files._open_file
    monkeypatch.setattr(files, "_lstat", lambda folder, name: lstat(folder, spelled(folder, name)))
    monkeypatch.setattr(files, "_open_file", lambda root, path: open_file(root, spelled(root, path)))
    shutil.rmtree(tmp_path / ".grading")
    ignoring_case = take(tmp_path).notebook.read_text()
    assert (on_linux, ignoring_case) == ('"final"', '"final"')


def test_a_canvas_resubmission_is_the_newer_upload_whatever_the_case_of_its_name():
    """Canvas's <name>-1.ipynb is the second upload of <name>.ipynb. Spelled Modules_and_SGD.ipynb (the intake grades
    it as modules_and_sgd.ipynb), the two uploads must be one file name to the collector, so that the newer is
    taken; else both reach submitted/ and the older is graded."""
    plugin = LmsFileNameCollectorPlugin(named_regexps=[
        r"(?P<name>[^/_]+)_(?:(?P<late>LATE)_)?(?P<lms_id>\d+)_(?P<attachment>\d+)_(?P<file_id>[^/]+\.ipynb)"],
        notebook_name=NAME)
    first = plugin.collect("carol_222_100_Modules_and_SGD.ipynb")
    second = plugin.collect("carol_222_200_Modules_and_SGD-1.ipynb")
    assert first["file_id"] == second["file_id"]
