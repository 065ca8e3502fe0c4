"""A grade is a function of its inputs (classroom/changes.py): every setting that can change a score is one of them,
so that changing it is previewed, never applied in silence by the next regrade of one student; and a change of the
intake's rules is such a change of settings, never a new submission of the folders it reads otherwise."""
from __future__ import annotations

import json
from pathlib import Path

from autograder.classroom import ledger
from autograder.classroom.changes import (
    INTAKE_SETTINGS,
    NOT_SCORE_SETTINGS,
    SCORE_SETTINGS,
    course_inputs,
    folder_changed,
)
from autograder.intake.files import IntakeRules
from autograder.settings import GraderSettings
from conftest import ASSIGNMENT, NOTEBOOK


def test_every_setting_is_an_input_of_the_grade_or_named_as_never_changing_a_score():
    settings = set(GraderSettings.class_trait_names(config=True))
    assert settings - set(NOT_SCORE_SETTINGS) - set(INTAKE_SETTINGS) == set(SCORE_SETTINGS)


def test_a_smaller_answer_limit_is_a_change_of_settings():
    """answer_kb = 1 took ada from 18 to 7.26 points on `make regrade` while `make preview` saw nothing (pass 13)."""
    before = course_inputs(ASSIGNMENT, GraderSettings(), None)
    for changed in (GraderSettings(answer_kb=1), GraderSettings(budget_answers_mb=1), GraderSettings(autograde_seconds=1)):
        after = course_inputs(ASSIGNMENT, changed, None)
        assert after["settings"] != before["settings"]
        assert {k: v for k, v in after.items() if k != "settings"} == {k: v for k, v in before.items() if k != "settings"}


def test_another_numpy_or_python_is_a_change_of_the_grader(monkeypatch):
    """The kit's grading code and the NumPy and Python that run the notebook are the "suites" input: an upgrade of
    any is previewed as a fixed check is (red-g, pass 14: parametrize.py and the versions were not inputs)."""
    import platform

    import numpy

    before = course_inputs(ASSIGNMENT, GraderSettings(), None)
    monkeypatch.setattr(numpy, "__version__", "0.0.1")
    newer_numpy = course_inputs(ASSIGNMENT, GraderSettings(), None)
    monkeypatch.setattr(platform, "python_version", lambda: "3.99.0")
    newer_python = course_inputs(ASSIGNMENT, GraderSettings(), None)
    assert len({before["suites"], newer_numpy["suites"], newer_python["suites"]}) == 3
    assert before["settings"] == newer_python["settings"] and before["reference"] == newer_python["reference"]


def test_every_intake_setting_is_in_the_rules_recorded_with_a_grade():
    today = IntakeRules.of(GraderSettings(), NOTEBOOK)
    for changed in ({"submission_files": ["helper.py"]}, {"submission_file_kb": 1}, {"submission_entries": 3},
                    {"submission_files_total_kb": 1}):
        assert IntakeRules.of(GraderSettings(**changed), NOTEBOOK) != today, changed


def graded(submitted: Path, rules: IntakeRules) -> ledger.Inputs:
    """ada's grade as `make grade` records it (its folder read under `rules`), back from the ledger's JSON."""
    course = course_inputs(ASSIGNMENT, GraderSettings(), None)
    given = ledger.Inputs(ledger.folder_fingerprint(submitted, ("ada", "a"), rules), intake=rules,
                          answers_format=ledger.ANSWERS_FORMAT, **course)
    return ledger.Inputs.from_json(ledger.inputs_json(given))


def test_a_change_of_the_intakes_rules_is_a_change_of_settings_and_a_changed_folder_a_new_submission(tmp_path):
    """pass 13: adding submission_files = ["helper.py"] made ada, whose folder held helper.py, a new submission,
    graded at once without a preview. Read under the rules her grade was given under, her folder is the same."""
    folder = tmp_path / "submitted" / "ada" / "a"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text("{}")
    (folder / "helper.py").write_text("A = 1\n")
    helper = {"submission_files": ["helper.py"]}
    for then, setting in (({}, helper), ({}, {"submission_entries": 1}), ({}, {"notebook_kb": 0}),
                          (helper, {**helper, "submission_file_kb": 0})):
        before = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(**then), NOTEBOOK))
        now = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(**setting), NOTEBOOK))
        assert now.submission != before.submission, "the intake now reads her folder otherwise"
        assert not folder_changed(before, now, tmp_path / "submitted", ("ada", "a")), setting
        assert before.course_changed(now) == ["settings"], setting
    before = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(), NOTEBOOK))
    unread = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(submission_file_kb=0), NOTEBOOK))
    assert not folder_changed(before, unread, tmp_path / "submitted", ("ada", "a"))
    assert before.course_changed(unread) == [], "rules that read her folder as before change nothing of her grade"
    (folder / "helper.py").write_text("A = 2\n")  # what the rules of her grade never read: a change of settings still
    now = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(**helper), NOTEBOOK))
    assert not folder_changed(before, now, tmp_path / "submitted", ("ada", "a"))
    assert before.course_changed(now) == ["settings"]
    (folder / NOTEBOOK).write_text('{"cells": []}')
    assert folder_changed(before, now, tmp_path / "submitted", ("ada", "a")), "a new submission, graded at once"


def test_a_grade_recorded_without_the_intakes_rules_was_read_under_todays(tmp_path):
    """The ledger a kit before the field wrote: nothing changed, so nothing is stale and no folder changed."""
    folder = tmp_path / "submitted" / "ada" / "a"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text("{}")
    now = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(), NOTEBOOK))
    older = ledger.Inputs.from_json(json.dumps({k: v for k, v in json.loads(ledger.inputs_json(now)).items()
                                                if k != "intake"}))
    assert older is not None and older.intake is None
    assert older.course_changed(now) == [] and not folder_changed(older, now, tmp_path / "submitted", ("ada", "a"))


def test_a_grade_recorded_under_another_reading_of_folders_is_previewed_not_a_new_submission(tmp_path):
    """red-t5 (pass 18): a kit that reads folders otherwise (here: `BACKUP.IPYNB` beside `work/final.ipynb`, which
    the older reading passed over) changed carl's fingerprint though he sent nothing; he was taken for a new
    submission, graded without a preview (18 -> 0), while the preview said no one would change. Whether he changed
    his folder cannot be told by reading it again with today's code: his grade is previewed as the kit's change."""
    folder = tmp_path / "submitted" / "carl" / "a"
    (folder / "work").mkdir(parents=True)
    (folder / "work" / "final.ipynb").write_text("{}")
    (folder / "BACKUP.IPYNB").write_text('{"cells": []}')
    now = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(), NOTEBOOK))
    recorded = json.loads(ledger.inputs_json(now))
    del recorded["intake"]["reading"]  # as a kit before the field recorded it
    older = ledger.Inputs.from_json(json.dumps({**recorded, "submission": "read otherwise"}))
    assert older is not None and older.intake is not None and older.intake.reading == "1"
    assert not folder_changed(older, now, tmp_path / "submitted", ("carl", "a"))
    assert older.course_changed(now) == ["settings"], "previewed"


def test_a_fingerprint_reads_the_folder_under_submitteds_lock(tmp_path, monkeypatch):
    """red-c7 (pass 20), F. What decides whether a folder changed is read while no collection writes submitted/ (its
    lock held shared: submitted_folders.submitted_lock), so it is never the fingerprint of a folder half written."""
    from conftest import locked_against

    folder = tmp_path / "submitted" / "ada" / "a"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text("{}")
    surveyed = ledger.survey

    def checked(top, parts, rules):
        assert locked_against(top, exclusive=True), "the fingerprint read submitted/ without its lock"
        return surveyed(top, parts, rules)

    monkeypatch.setattr(ledger, "survey", checked)
    assert not ledger.folder_fingerprint(tmp_path / "submitted", ("ada", "a"), IntakeRules(NOTEBOOK, 1 << 20)).startswith(
        "unreadable")

