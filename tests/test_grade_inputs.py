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


def without_rules(inputs: ledger.Inputs, **recorded) -> ledger.Inputs:
    """`inputs` as a kit before Inputs.intake recorded them (no intake rules), with `recorded` in place."""
    row = {k: v for k, v in json.loads(ledger.inputs_json(inputs)).items() if k != "intake"}
    older = ledger.Inputs.from_json(json.dumps({**row, **recorded}))
    assert older is not None and older.intake is None
    return older


def test_a_grade_recorded_without_the_intakes_rules_whose_folder_reads_the_same_today_changes_nothing(tmp_path):
    """The ledger a kit before the field wrote, for a folder today's kit reads to the same fingerprint: nothing is
    stale, no folder changed (the row gets today's rules: Plan.rules_to_record). Such a row was read under the
    first reading, not today's (red-v6 V1): a fingerprint that differs is not a new submission (below)."""
    folder = tmp_path / "submitted" / "ada" / "a"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text("{}")
    now = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(), NOTEBOOK))
    older = without_rules(now)
    assert older.reading == "1" != now.reading
    assert older.course_changed(now) == [] and not folder_changed(older, now, tmp_path / "submitted", ("ada", "a"))


def test_a_grade_recorded_before_the_intakes_rules_were_is_previewed_when_todays_reading_differs(tmp_path):
    """red-v6 V1 (pass 19): a ledger row a kit before Inputs.intake wrote (intake None) was read by a kit of reading
    "1" too: when today's reading (since "2": BACKUP.IPYNB in any case) sees carl's untouched folder otherwise, he was
    taken for a new submission and graded at once, without a preview (red-t5's U1 for a row with no rules at all)."""
    folder = tmp_path / "submitted" / "carl" / "a"
    (folder / "work").mkdir(parents=True)
    (folder / "work" / "final.ipynb").write_text("{}")
    (folder / "BACKUP.IPYNB").write_text('{"cells": []}')
    now = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(), NOTEBOOK))
    older = without_rules(now, submission="read by reading 1")
    assert not folder_changed(older, now, tmp_path / "submitted", ("carl", "a")), \
        "carl sent nothing: taken for a new submission, graded unseen"
    assert older.course_changed(now) == ["settings"], "previewed"


def test_a_folder_a_new_collection_rule_wrote_otherwise_is_previewed_not_a_new_submission(tmp_path):
    """fix-in (pass 20): the LMS collection reads an upload's extension in any case, so after an upgrade bob's
    newer `WORK.IPYNB` upload is collected where his older `work.ipynb` was, though he sent nothing: a grade recorded
    under the reading before is previewed as the kit's change, never graded at once as a new submission."""
    folder = tmp_path / "submitted" / "ada" / "a"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text("{}")
    now = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(), NOTEBOOK))
    row = json.loads(ledger.inputs_json(now))
    before = ledger.Inputs.from_json(json.dumps({**row, "intake": {**row["intake"], "reading": "2"},
                                                 "submission": "the older upload"}))
    assert not folder_changed(before, now, tmp_path / "submitted", ("ada", "a")), "graded unseen"
    assert before.course_changed(now) == ["settings"], "previewed"


def test_intake_rules_recorded_without_one_of_todays_are_not_known_so_not_read_again(tmp_path):
    """Rules a kit recorded without one of today's (a rule it did not have: it read folders without it, not under
    today's default) or with one this kit lacks are not known: the grade is read as recorded under the first
    reading, previewed when its fingerprint differs, never a new submission, and never a row dropped as unreadable
    (which would grade the student as new)."""
    folder = tmp_path / "submitted" / "ada" / "a"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text("{}")
    now = graded(tmp_path / "submitted", IntakeRules.of(GraderSettings(), NOTEBOOK))
    row = json.loads(ledger.inputs_json(now))
    lacking = {k: v for k, v in row["intake"].items() if k != "extra_total_bytes"}
    for rules in (lacking, {**row["intake"], "a_later_kits_rule": 1}):
        older = ledger.Inputs.from_json(json.dumps({**row, "intake": rules, "submission": "read otherwise"}))
        assert older is not None and older.intake is None and older.reading == "1", rules
        assert not folder_changed(older, now, tmp_path / "submitted", ("ada", "a"))
        assert older.course_changed(now) == ["settings"], "previewed"


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

