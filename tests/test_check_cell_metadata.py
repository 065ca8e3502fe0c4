"""CheckCellMetadataSchemaOnce (autograder/nbgrader_glue/preprocessors/check_cell_metadata.py) accepts and refuses
what nbgrader's CheckCellMetadata does, and checks the schema once, not for each cell."""
from __future__ import annotations

import copy

import pytest
from jsonschema.validators import validator_for
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors import CheckCellMetadata

from autograder.nbgrader_glue.preprocessors.check_cell_metadata import CheckCellMetadataSchemaOnce
from conftest import release_notebook, solution_notebook


def graded_cell(nb):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))


def edited(change) -> object:
    nb = solution_notebook()
    change(graded_cell(nb).metadata.nbgrader)
    return nb


VARIANTS = {
    "solution": solution_notebook(),
    "release": release_notebook(),
    "points a string": edited(lambda meta: meta.update(points="ten")),
    "no points": edited(lambda meta: meta.pop("points")),
    "empty grade_id": edited(lambda meta: meta.update(grade_id="")),
    "locked a number": edited(lambda meta: meta.update(locked=3)),
    "an old schema": edited(lambda meta: meta.update(schema_version=2)),
    "a newer schema": edited(lambda meta: meta.update(schema_version=4)),
    "no schema version": edited(lambda meta: meta.pop("schema_version")),
}


def outcome(preprocessor, nb) -> str:
    try:
        preprocessor.preprocess(copy.deepcopy(nb), {})
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "accepted"


@pytest.mark.parametrize("name", VARIANTS)
def test_it_accepts_and_refuses_what_nbgrader_does(name):
    ours = outcome(CheckCellMetadataSchemaOnce(), VARIANTS[name])
    assert ours == outcome(CheckCellMetadata(), VARIANTS[name])
    assert (ours == "accepted") == (name in ("solution", "release")), ours


def test_no_cell_checks_the_schema_again(monkeypatch):
    checker = validator_for(MetadataValidator().schema)
    checked: list[int] = []
    check_schema = checker.check_schema.__func__
    monkeypatch.setattr(checker, "check_schema", classmethod(lambda cls, schema: checked.append(1) or check_schema(cls, schema)))
    for _ in range(3):
        assert outcome(CheckCellMetadataSchemaOnce(), solution_notebook()) == "accepted"
    assert checked == []  # checked once, when the module was loaded
    assert outcome(CheckCellMetadata(), solution_notebook()) == "accepted"
    assert len(checked) > 5  # nbgrader's: once a cell
