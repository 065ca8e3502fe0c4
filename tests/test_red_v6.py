"""red-v6 (pass 19): findings written as failing tests (REPORT ONLY: no fix on this branch)."""
from __future__ import annotations

import json

from autograder.classroom import ledger
from autograder.classroom.changes import course_inputs, folder_changed
from autograder.intake.files import IntakeRules
from autograder.settings import GraderSettings
from conftest import ASSIGNMENT, NOTEBOOK


def test_a_grade_recorded_before_the_intakes_rules_were_is_previewed_when_todays_reading_differs(tmp_path):
    """A ledger row a kit before Inputs.intake wrote (intake None) was read by a kit of reading "1" too: when
    today's reading ("2": BACKUP.IPYNB in any case) sees carl's untouched folder otherwise, he is taken for a new
    submission and graded at once, without a preview (red-t5's U1 for a row with no intake rules at all)."""
    folder = tmp_path / "submitted" / "carl" / "a"
    (folder / "work").mkdir(parents=True)
    (folder / "work" / "final.ipynb").write_text("{}")
    (folder / "BACKUP.IPYNB").write_text('{"cells": []}')
    rules = IntakeRules.of(GraderSettings(), NOTEBOOK)
    course = course_inputs(ASSIGNMENT, GraderSettings(), None)
    now = ledger.Inputs(ledger.folder_fingerprint(tmp_path / "submitted", ("carl", "a"), rules), intake=rules,
                        answers_format=ledger.ANSWERS_FORMAT, **course)
    recorded = {k: v for k, v in json.loads(ledger.inputs_json(now)).items() if k != "intake"}
    older = ledger.Inputs.from_json(json.dumps({**recorded, "submission": "read by reading 1"}))
    assert older is not None and older.intake is None
    assert not folder_changed(older, now, tmp_path / "submitted", ("carl", "a")), \
        "carl sent nothing: taken for a new submission, graded unseen"
