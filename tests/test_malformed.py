"""Malformed notebooks (issue 9, item 4): each is one student's one-line reason, never the class's end.

autograder/intake/validate.py checks every submission before grading; these tests give it each malformed
kind an attacker found or could write, then grade a class made of them and one honest student.
"""
from __future__ import annotations

import copy
import csv
import errno
import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from catalogue_hostile import HOSTILE

from autograder.checks.suites import PreparedClass
from autograder.classroom import student_autograde
from autograder.grading import ClassGrading
from autograder.intake.files import IntakeRules
from autograder.intake.validate import MAX_DEPTH, read_submission, validate_notebook
from autograder.sandbox.protocol import NotGraded
from autograder.settings import GraderSettings, load_config
from bench.course import gradebook_scores
from conftest import ASSIGNMENT, FULL, NOTEBOOK, ROOT, course_copy, grade_class, release_notebook, solution_notebook

LIMIT = 2048 * 1024
REFERENCE = json.loads(json.dumps(solution_notebook()))
LOCKED = next(i for i, c in enumerate(REFERENCE["cells"])  # a code cell: outputs are a code cell's
              if c["metadata"].get("nbgrader", {}).get("locked") and c["cell_type"] == "code")
GRADE_ID = REFERENCE["cells"][LOCKED]["metadata"]["nbgrader"]["grade_id"]


def changed(change) -> dict:
    """The reference (as plain JSON) after `change(notebook, locked_cell)`."""
    nb = copy.deepcopy(REFERENCE)
    change(nb, nb["cells"][LOCKED])
    return nb


def nested(depth: int):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


# kind -> (the notebook: a dict, JSON text or bytes; words its reason must hold)
MALFORMED = {
    "source a dict": (changed(lambda nb, c: c.update(source={"code": c["source"]})),
                      [f"cell {LOCKED + 1}", GRADE_ID, "source", "an object"]),
    "source a number": (changed(lambda nb, c: c.update(source=42)), ["source", "a number"]),
    "source a list holding a number": (changed(lambda nb, c: c.update(source=["x = 1\n", 2])), ["source", "a list"]),
    "grade_id a list": (changed(lambda nb, c: c["metadata"]["nbgrader"].update(grade_id=[GRADE_ID])),
                        [f"cell {LOCKED + 1}", "metadata.nbgrader.grade_id", "a list", "not a string"]),
    "grade_id null": (changed(lambda nb, c: c["metadata"]["nbgrader"].update(grade_id=None)), ["grade_id", "null"]),
    "points a string": (changed(lambda nb, c: c["metadata"]["nbgrader"].update(points="5")),
                        ["metadata.nbgrader.points", '"5"', "not a number"]),
    "points NaN": ('{"x": 1}', None),  # replaced below: NaN only exists as JSON text
    "locked a number": (changed(lambda nb, c: c["metadata"]["nbgrader"].update(locked=1)),
                        ["metadata.nbgrader.locked", "true or false"]),
    "metadata.nbgrader a string": (changed(lambda nb, c: c["metadata"].update(nbgrader="locked")),
                                   ["metadata.nbgrader", "a string", "not an object"]),
    "cell metadata a list": (changed(lambda nb, c: c.update(metadata=[])), ["metadata", "a list"]),
    "magics_language a list": (changed(lambda nb, c: c["metadata"].update(magics_language=["x"])),
                               [f"cell {LOCKED + 1}", "metadata.magics_language", "not a string"]),
    "language_info.pygments_lexer a list": (changed(lambda nb, c: nb["metadata"].update(
        language_info={"name": "python", "pygments_lexer": ["x"]})), ["not a valid nbformat 4 notebook"]),
    "cells an object": (changed(lambda nb, c: nb.update(cells={"0": c})), ["'cells'", "an object", "not a list"]),
    "no cells": (changed(lambda nb, c: nb.pop("cells")), ["no cells"]),
    "an empty list of cells": (changed(lambda nb, c: nb.update(cells=[])), ["no cells"]),
    "a cell that is a string": (changed(lambda nb, c: nb["cells"].append("print('hello')")),
                                [f"cell {len(REFERENCE['cells']) + 1}", "a string", "not an object"]),
    "an unknown cell_type": (changed(lambda nb, c: c.update(cell_type="python")), ["cell_type", '"python"']),
    "outputs an object": (changed(lambda nb, c: c.update(outputs={})), ["outputs", "an object", "not a list"]),
    "an output that is a string": (changed(lambda nb, c: c.update(outputs=["hello"])), ["output", "not an object"]),
    "attachments a list": (changed(lambda nb, c: nb["cells"][0].update(attachments=[])), ["attachments", "a list"]),
    "notebook metadata a string": (changed(lambda nb, c: nb.update(metadata="x")), ["'metadata'", "a string"]),
    "a key nbformat does not know": (changed(lambda nb, c: c.update(secret=1)),
                                     ["not a valid nbformat 4 notebook", "'secret' was unexpected"]),
    "nbformat 5": (changed(lambda nb, c: nb.update(nbformat=5)), ["nbformat 5"]),
    "nbformat a string": (changed(lambda nb, c: nb.update(nbformat="4")), ["'nbformat'"]),
    "deeply nested JSON text": ('{"cells": [], "metadata": {"deep": ' + "[" * 100_000 + "]" * 100_000 + "}}",
                                ["nested more than", str(MAX_DEPTH)]),
    "deeply nested dict": (changed(lambda nb, c: nb["metadata"].update(deep=nested(100_000))), ["nested more than"]),
    "just too deep": (changed(lambda nb, c: nb["metadata"].update(deep=nested(MAX_DEPTH))), ["nested more than"]),
    "a JSON list": ("[1, 2, 3]", ["a list", "not a notebook"]),
    "not JSON": ("this is not json {", ["not JSON"]),
    "empty": ("", ["empty"]),
    "not UTF-8": ('{"cells": ["caf\xe9"]}'.encode("latin-1"), ["not UTF-8"]),
    "a lone surrogate": (json.dumps(REFERENCE)[:-1] + ', "x": "\\ud800"}', ["not valid Unicode"]),
    "too large": (json.dumps(REFERENCE) + " " * LIMIT, ["KB", "more than the 2,048 KB", "clear its outputs"]),
}
MALFORMED["points NaN"] = (re.sub(r'"points": [0-9.]+', '"points": NaN', json.dumps(REFERENCE), count=1),
                           ["metadata.nbgrader.points", "NaN", "not a number"])


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_each_malformed_kind_is_one_line_naming_what_is_wrong(kind):
    notebook, words = MALFORMED[kind]
    reason = validate_notebook(notebook, LIMIT)
    assert reason, f"{kind}: accepted"
    assert "\n" not in reason and len(reason) <= 160, reason
    missing = [w for w in words if w.lower() not in reason.lower()]
    assert not missing, f"{kind}: {reason!r} does not say {missing}"


def test_a_file_is_checked_for_its_size_before_it_is_read(tmp_path):
    path = tmp_path / NOTEBOOK
    path.write_text(json.dumps(REFERENCE, indent=1))
    assert validate_notebook(path, LIMIT) is None
    size = path.stat().st_size
    assert "more than the 1 KB" in validate_notebook(path, 1024)
    assert validate_notebook(path, size) is None and validate_notebook(path, size - 1)
    assert "could not be read" in validate_notebook(tmp_path / "missing.ipynb", LIMIT)


def test_an_old_notebook_is_held_to_the_size_limit_as_converted(tmp_path):
    """nbformat's upgrade from nbformat 3 writes a heading cell as `"#" * level`, and nothing bounds the level: a
    file of a few hundred bytes became hundreds of MB in the grading process, which has no memory bound (8 cells of
    level 1e9: about 25 GB). An old notebook is read as nbformat 4, and held to the size limit as that."""
    path = tmp_path / NOTEBOOK
    heading = {"cell_type": "heading", "level": 3 * 1024 * 1024, "source": "Answer", "metadata": {}}
    path.write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""},
                                "worksheets": [{"cells": [heading], "metadata": {}}]}))
    assert path.stat().st_size < 1024
    assert validate_notebook(path, 2 * 1024 * 1024), "a 3 MB heading from a file of 200 bytes is graded"


def test_what_jupyter_and_the_kit_write_is_valid():
    no_ids = changed(lambda nb, c: [cell.pop("id", None) for cell in nb["cells"]])
    pasted = changed(lambda nb, c: nb["cells"].append(copy.deepcopy(c)))  # the same cell id twice
    old_minor = changed(lambda nb, c: (nb.update(nbformat_minor=4), [cell.pop("id", None) for cell in nb["cells"]]))
    deep_enough = changed(lambda nb, c: nb["metadata"].update(deep=nested(MAX_DEPTH - 2)))
    for notebook in (REFERENCE, json.dumps(REFERENCE), json.dumps(REFERENCE).encode(), release_notebook(),
                     no_ids, pasted, old_minor, deep_enough):
        assert validate_notebook(notebook, LIMIT) is None
    assert validate_notebook(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK, LIMIT) is None


def test_every_catalogue_notebook_the_grader_grades_is_valid():
    reference, release = solution_notebook(), release_notebook()
    malformed = {"not-json", "empty", "source-dict", "grade-id-list", "nbgrader-string", "deep-json", "too-large",
                 "cells-object", "cell-string"}
    for entry in HOSTILE:
        for name, content in entry.files(reference, release).items():
            if not name.endswith(".ipynb") or not isinstance(content, str):  # a file beside it, a link, a FIFO
                continue
            reason = validate_notebook(content, LIMIT)
            assert bool(reason) == (entry.student in malformed), (entry.student, name, reason)


def test_the_reader_never_raises_and_json_alone_would():
    with pytest.raises(RecursionError):  # why the depth is bounded: json (and nbformat.read) recurse per level
        json.loads("[" * 100_000)
    class Treacherous(dict):
        def get(self, *args):
            raise RuntimeError("boom")

    assert validate_notebook(Treacherous(nbformat=4), LIMIT) == "the grader could not check it (RuntimeError: boom)"
    assert "not a notebook" in validate_notebook(object(), LIMIT)
    assert validate_notebook("[" * 100_000, LIMIT)


def test_read_submission_gives_the_reason_and_the_course_limit(tmp_path):
    path = tmp_path / NOTEBOOK
    path.write_text(json.dumps(MALFORMED["grade_id a list"][0]))
    submission = read_submission("s", path)
    assert submission.notebook is None
    assert submission.error.startswith(f"'{NOTEBOOK}' is not a readable notebook (cell {LOCKED + 1}")
    assert "grade_id that is a list" in submission.error
    path.write_text(json.dumps(REFERENCE) + " " * 3000)
    assert read_submission("s", path).notebook is not None  # the course's limit: 2048 KB
    assert GraderSettings(config=load_config(ROOT)).notebook_kb == GraderSettings().notebook_kb == 2048
    assert "more than the 2 KB" in read_submission("s", path, max_bytes=2048).error


def test_a_timestamp_txt_nbgrader_cannot_read_is_a_reason(tmp_path):
    from autograder.intake.validate import TIMESTAMP_BYTES, timestamp_problem

    stamp = tmp_path / "timestamp.txt"
    assert timestamp_problem(tmp_path) is None  # none: nbgrader grades it as on time
    stamp.write_text("2026-11-20 12:00:00.000000 UTC\n")
    assert timestamp_problem(tmp_path) is None
    for text in ("\x1b[31mnot a time", "\x00\x00", "", "2026-11-20 12:00:00 UTC" + " " * TIMESTAMP_BYTES):
        stamp.write_text(text)
        assert "timestamp.txt" in timestamp_problem(tmp_path), text
    for text in ("2026-11-20T12:00:00+01:00", "2026-11-20 12:00 UTC", "2026-11-20 12:00:00Z"):
        stamp.write_text(text)
        assert timestamp_problem(tmp_path) is None, text
    # Read through today's date, the machine's zone, or an offset nbgrader misreads: a grade that moves by itself.
    for text in ("12:00", "Monday", "2026-12", "2026-12-01 00:30:00 JST", "2026-12-01 00:00:00 -0500",
                 "2026-12-01 00:00:00 -05:00", "2026-12-01 00:00:00 Europe/Paris"):
        stamp.write_text(text)
        assert "reads differently by the day or the machine" in timestamp_problem(tmp_path), text
    stamp.unlink()
    stamp.symlink_to("/etc/hostname")  # a link the grader (root) would follow
    assert "not a plain file" in timestamp_problem(tmp_path)


def test_the_due_date_setting_reads_the_same_on_every_machine_and_every_day(tmp_path):
    """c.GraderSettings.due_date = "Friday 23:59" was this week's Friday (every make grade of a new week previewed
    the class again, and lateness moved), and "... JST" was 9 h earlier under TZ=Asia/Tokyo (pass 14): a due date
    is held to the time stamps' rule, and any other stops make grade with one line before anything is done."""
    import subprocess
    import sys

    from traitlets import TraitError

    for text in ("", "2026-12-15 23:59:00 UTC", "2026-12-15T23:59:00+01:00", "2026-12-15 23:59"):
        assert GraderSettings(due_date=text).due_date == text
    for text in ("Friday 23:59", "2026-12", "2026-12-15 23:59 JST", "2026-12-15 23:59 -0500", "garbage"):
        with pytest.raises(TraitError, match="would read differently by the day or the machine"):
            GraderSettings(due_date=text)
    course = course_copy(tmp_path / "course")
    with (course / "nbgrader_config.py").open("a") as config:
        config.write('\nc.GraderSettings.due_date = "Friday 23:59"\n')
    run = subprocess.run([sys.executable, "-m", "autograder", "class", "--assignment", ASSIGNMENT.name], cwd=course,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == "" and len(run.stderr.splitlines()) == 1, run.stderr[-2000:]
    assert "c.GraderSettings.due_date = 'Friday 23:59' is not a whole date and time" in run.stderr
    assert not (course / "gradebook.db").exists() and not (course / "submitted").exists()

def test_an_error_in_the_grader_is_that_students_reason(tmp_path, monkeypatch):
    def broken(*args):
        raise KeyError("something no one foresaw")

    monkeypatch.setattr(student_autograde, "take_submission", broken)
    rules = IntakeRules(NOTEBOOK, LIMIT)
    settings = GraderSettings(config=load_config(ROOT))
    grading = ClassGrading(PreparedClass(ASSIGNMENT, settings, [], {}, str))  # not reached: the intake fails first
    autograde = student_autograde.autograder_for(grading, settings.config, tmp_path, rules)
    answer = autograde("someone")
    assert answer == NotGraded("the grader failed on it (KeyError: 'something no one foresaw')", grader_fault=True)


def test_a_full_disk_while_the_intake_copies_the_notebook_is_the_graders_failure(tmp_path, monkeypatch):
    """The kit's own write of the staged copy fails (ENOSPC: the grading machine's disk, not the student's file):
    the student is not graded, as the grader's failure (no score, graded again next run), never "not a readable
    notebook" (a zero, which then stays as "unchanged")."""
    folder = tmp_path / "submitted" / "someone" / ASSIGNMENT.name
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK, folder / NOTEBOOK)
    opened = os.open

    def full_disk(path, flags, mode=0o777, *, dir_fd=None):
        if flags & os.O_CREAT and os.fspath(path).endswith(f"/someone/{ASSIGNMENT.name}/{NOTEBOOK}"):
            raise OSError(errno.ENOSPC, "No space left on device", os.fspath(path))
        return opened(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", full_disk)
    settings = GraderSettings(config=load_config(ROOT))
    grading = ClassGrading(PreparedClass(ASSIGNMENT, settings, [], {}, str))  # not reached: the intake fails first
    autograde = student_autograde.autograder_for(grading, settings.config, tmp_path / "submitted",
                                                 IntakeRules(NOTEBOOK, LIMIT))
    answer = autograde("someone")
    assert answer is not None and answer.grader_fault, answer
    assert "No space left on device" in answer.reason and "not a readable notebook" not in answer.reason


def test_the_intake_reads_under_submitteds_lock_and_a_folder_removed_meanwhile_is_the_graders_failure(tmp_path,
                                                                                                      monkeypatch):
    """red-c7 (pass 20), F. No collection writes submitted/ while the intake reads a student's folder (it holds the
    lock of submitted/ shared: submitted_folders.submitted_lock). A folder found gone when the read ends was removed
    by something else meanwhile (a hand, another tool): the grader's failure, graded again next run, never the
    student's zero, which would stay as "unchanged"."""
    from conftest import locked_against

    submitted = tmp_path / "submitted"
    folder = submitted / "someone" / ASSIGNMENT.name
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK, folder / NOTEBOOK)
    taken = student_autograde.take_submission

    def removed_meanwhile(top, parts, staging, rules):
        assert locked_against(submitted, exclusive=True), "the intake read submitted/ without its lock"
        shutil.rmtree(folder)
        return taken(top, parts, staging, rules)

    monkeypatch.setattr(student_autograde, "take_submission", removed_meanwhile)
    settings = GraderSettings(config=load_config(ROOT))
    grading = ClassGrading(PreparedClass(ASSIGNMENT, settings, [], {}, str))  # not reached: the intake fails first
    answer = student_autograde.autograder_for(grading, settings.config, submitted, IntakeRules(NOTEBOOK, LIMIT))("someone")
    assert answer is not None and answer.grader_fault and "removed while it was read" in answer.reason, answer


def test_nbgraders_failure_is_said_with_the_exception_its_step_and_its_cell():
    """nbgrader logs what stopped a notebook and raises "Please see the above traceback": the reason is the
    exception's first line (and that of the one it replaced), and the step and cell it stopped on."""
    from nbconvert.preprocessors import Preprocessor
    from nbformat.v4 import new_notebook, new_raw_cell
    from nbgrader.nbgraderformat import ValidationError

    class Step(Preprocessor):
        def preprocess_cell(self, cell, resources, cell_index):
            if cell_index == 1:
                try:
                    raise ValidationError("Duplicate grade id: module\n\nthe schema, the cell: its first line only")
                except ValidationError:
                    raise ValidationError("the nbgrader metadata may be corrupted") from None
            return cell, resources

    with pytest.raises(ValidationError) as stopped:
        Step().preprocess(new_notebook(cells=[new_raw_cell("a"), new_raw_cell("b")]), {})
    assert student_autograde.nbgrader_failure(stopped.value, "") == (
        "nbgrader could not autograde it (Step, on cell 2 of the notebook): ValidationError: the nbgrader metadata "
        "may be corrupted (ValidationError: Duplicate grade id: module)")
    nbgraders = "Traceback (most recent call last):\n...\nNbGraderException: Please see the above traceback\n"
    assert student_autograde.nbgrader_failure(None, nbgraders) == (
        "nbgrader could not autograde it: NbGraderException: Please see the above traceback")


# ------------------------------------------------------------------------------ a class of them


CLASS = ("source-dict", "grade-id-list", "nbgrader-string", "deep-json", "too-large", "cells-object", "cell-string",
         "not-json", "empty", "bad-timestamp")


@pytest.mark.slow
def test_a_class_of_malformed_notebooks_and_one_honest_student_is_graded(tmp_path):
    course = course_copy(tmp_path / "course")
    reference, release = solution_notebook(), release_notebook()
    entries = {e.student: e for e in HOSTILE}
    for student in CLASS:
        folder = course / "submitted" / student / ASSIGNMENT.name
        folder.mkdir(parents=True)
        for name, content in entries[student].files(reference, release).items():
            (folder / name).write_text(content)
    honest = course / "submitted" / "honest" / ASSIGNMENT.name
    honest.mkdir(parents=True)
    (honest / NOTEBOOK).write_bytes((ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK).read_bytes())
    (honest / "Untitled.ipynb").mkdir()  # a folder named like a notebook is not a second notebook

    run = grade_class(course)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (course / "gradebook.db").is_file()
    book = gradebook_scores(course)
    assert book["honest"] == FULL and sum(book["honest"].values()) == 18
    for student in CLASS:
        assert set(book[student].values()) == {0}, (student, book[student])
    rows = {row["student_id"]: row for row in csv.DictReader((course / "grades.csv").open())}
    assert sorted(rows) == sorted([*CLASS, "honest"])
    assert float(rows["honest"]["auto_score"]) == 18  # the written answers wait for the formgrader
    pages = {s: course / "feedback" / s / ASSIGNMENT.name / Path(NOTEBOOK).with_suffix(".html").name
             for s in [*CLASS, "honest"]}
    assert all(page.is_file() for page in pages.values()), [s for s, p in pages.items() if not p.is_file()]
    lines = {line.split(": ")[1]: line for line in run.stdout.splitlines() if line.startswith("Not graded: ")}
    assert sorted(lines) == sorted(CLASS), run.stdout[-3000:]
    for student in CLASS:
        reason = entries[student].reason
        assert reason.lower() in lines[student].lower(), lines[student]
        shown = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", pages[student].read_text())).split())
        assert reason.lower() in shown.lower() and "not graded" in shown.lower(), student
    assert f"{len(CLASS) + 1} submissions, 1 graded" in run.stdout


def edited_metadata(change) -> dict:
    """The reference (as plain JSON) after `change(cells, index of a grade id)`, which edits only cell metadata and
    cell types."""
    nb = copy.deepcopy(REFERENCE)
    cells = nb["cells"]
    change(cells, {c["metadata"]["nbgrader"]["grade_id"]: i for i, c in enumerate(cells)
                   if "nbgrader" in c["metadata"]})
    return nb


def retyped(cell: dict, cell_type: str, attachments: dict) -> None:
    cell.update(cell_type=cell_type, attachments=attachments)
    cell.pop("outputs"), cell.pop("execution_count")


# student -> (the notebook, the note it is graded with): each stopped nbgrader's sanitize steps, and was the grader's
# failure; the release decides what each cell is, so each is graded as released, the edit named as the student's
EDITED = {
    "raw-mimetype-number": (edited_metadata(lambda cells, at: cells.insert(1, {
        "cell_type": "raw", "metadata": {"raw_mimetype": 5}, "source": "<b>x</b>"})), None),
    "raw-mimetype-list": (edited_metadata(lambda cells, at: cells.insert(1, {
        "cell_type": "raw", "metadata": {"raw_mimetype": ["text/html"]}, "source": "<b>x</b>"})), None),
    "copy-grade-id-alone": (edited_metadata(lambda cells, at: cells.insert(1, {
        "cell_type": "code", "metadata": {"nbgrader": {"grade_id": "module"}}, "source": "# pasted",
        "outputs": [], "execution_count": None})), "cells pasted more than once: module"),
    "copy-flags-false": (edited_metadata(lambda cells, at: cells.insert(1, {
        "cell_type": "code", "metadata": {"nbgrader": {"grade_id": "test_forward", "grade": False, "solution": False,
                                                       "locked": False, "schema_version": 3}},
        "source": "", "outputs": [], "execution_count": None})), "cells pasted more than once: test_forward"),
    "locked-no-grade-id": (edited_metadata(lambda cells, at: cells.insert(1, {
        "cell_type": "code", "metadata": {"nbgrader": {"locked": True}}, "source": "x = 1", "outputs": [],
        "execution_count": None})), "cell 2 has nbgrader metadata but no grade id"),
    "locked-made-raw": (edited_metadata(lambda cells, at: retyped(cells[at["imports"]], "raw", {})),
                        "cells whose type the student changed, graded as released: imports (raw)"),
    "test-made-markdown": (edited_metadata(lambda cells, at: retyped(cells[at["test_forward"]], "markdown", {
        "a.png": {"image/png": "iVBORw0KGgo="}})), "graded as released: test_forward (markdown)"),
}


@pytest.mark.slow
def test_cell_metadata_a_student_edited_is_graded_as_released_and_named(tmp_path):
    course = course_copy(tmp_path / "course")
    for student, (notebook, _) in EDITED.items():
        assert validate_notebook(notebook, LIMIT) is None, student  # the intake passes each: nbgrader's steps stopped
        folder = course / "submitted" / student / ASSIGNMENT.name
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_text(json.dumps(notebook))
    run = grade_class(course)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert f"{len(EDITED)} submissions, {len(EDITED)} graded" in run.stdout, run.stdout[-3000:]
    book = gradebook_scores(course)
    notes = {line.split(": ")[1]: line for line in run.stdout.splitlines() if line.startswith("Graded with a note: ")}
    for student, (_, note) in EDITED.items():
        assert book[student] == FULL, (student, book[student])
        assert note in notes[student] if note else student not in notes, (student, notes.get(student))
