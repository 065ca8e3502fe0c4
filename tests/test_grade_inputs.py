"""A grade is a function of its inputs (classroom/changes.py): every setting that can change a score is one of them,
so that changing it is previewed, never applied in silence by the next regrade of one student."""
from __future__ import annotations

from autograder.classroom.changes import NOT_SCORE_SETTINGS, SCORE_SETTINGS, course_inputs
from autograder.settings import GraderSettings
from conftest import ASSIGNMENT


def test_every_setting_is_an_input_of_the_grade_or_named_as_never_changing_a_score():
    settings = set(GraderSettings.class_trait_names(config=True))
    assert settings - set(NOT_SCORE_SETTINGS) == set(SCORE_SETTINGS)


def test_a_smaller_answer_limit_is_a_change_of_settings():
    """answer_kb = 1 took ada from 18 to 7.26 points on `make regrade` while `make preview` saw nothing (pass 13)."""
    before = course_inputs(ASSIGNMENT, GraderSettings(), None)
    for changed in (GraderSettings(answer_kb=1), GraderSettings(budget_answers_mb=1)):
        after = course_inputs(ASSIGNMENT, changed, None)
        assert after["settings"] != before["settings"]
        assert {k: v for k, v in after.items() if k != "settings"} == {k: v for k, v in before.items() if k != "settings"}
