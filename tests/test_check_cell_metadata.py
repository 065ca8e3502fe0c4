"""CheckCellMetadataSchemaOnce (autograder/nbgrader_glue/preprocessors/check_cell_metadata.py) accepts and refuses
what nbgrader's CheckCellMetadata does, and checks the schema once, not for each cell; the sanitize steps before it
(DropDuplicateIds, OverwriteCellsAtOnce) leave it nothing a student's cell metadata makes it refuse."""
from __future__ import annotations

import copy

import nbformat
import pytest
from jsonschema.validators import validator_for
from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors import CheckCellMetadata, OverwriteCells

from autograder.nbgrader_glue.preprocessors.check_cell_metadata import CheckCellMetadataSchemaOnce
from autograder.nbgrader_glue.preprocessors.drop_duplicate_ids import DropDuplicateIds
from autograder.nbgrader_glue.preprocessors.overwrite_cells_at_once import OverwriteCellsAtOnce, released_metadata
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


# ------------------------------------------------------------------ what the steps before it leave


def pasted(where: str, metadata: dict, before: bool = True):
    """The solution notebook with a code cell of `metadata` next to the cell `where` (before it, or after)."""
    nb = solution_notebook()
    index = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == where)
    nb.cells.insert(index if before else index + 1, new_code_cell("# pasted", metadata={"nbgrader": metadata}))
    return nb, index if before else index + 1


PASTED = {  # a student's cell that nbgrader's DeduplicateIds passed over, or stopped on
    "a copy whose metadata is its grade id alone": pasted("module", {"grade_id": "module"}),
    "a copy of a test cell, every flag false": pasted("test_forward", {"grade_id": "test_forward", "grade": False,
                                                                       "solution": False, "locked": False,
                                                                       "schema_version": 3}),
    "a copy after the graded cell": pasted("module", {"grade_id": "module"}, before=False),
    "locked, with no grade id": pasted("module", {"locked": True}),
    "empty": pasted("module", {}),
}


@pytest.mark.parametrize("name", PASTED)
def test_every_grade_id_is_left_once_and_a_cell_without_one_is_plain(name, monkeypatch):
    """DropDuplicateIds, then OverwriteCellsAtOnce's own part (each cell's nbgrader metadata the release's; nbgrader's
    gradebook part left out): each grade id once, the last copy graded, and CheckCellMetadata accepts it."""
    nb, index = copy.deepcopy(PASTED[name])
    nb, _ = DropDuplicateIds().preprocess(nb, {})
    monkeypatch.setattr(OverwriteCells, "preprocess_cell", lambda self, cell, resources, index: (cell, resources))
    overwrite = OverwriteCellsAtOnce()
    overwrite.released = released_metadata(release_notebook())
    nb, _ = Preprocessor.preprocess(overwrite, nb, {})
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
    assert sorted(ids) == sorted(set(ids)) == sorted(released_metadata(release_notebook()))
    assert ("nbgrader" in nb.cells[index].metadata) == (name == "a copy after the graded cell")  # the last copy
    assert outcome(CheckCellMetadataSchemaOnce(), nb) == "accepted"


@pytest.mark.parametrize("cell", [new_raw_cell("import numpy as np"), new_markdown_cell("import numpy as np")])
def test_a_cell_turned_from_code_is_code_again_without_what_code_may_not_hold(cell):
    """OverwriteCellsAtOnce gives a cell the release's type (nbgrader's update_cell_type); its attachments and the
    metadata nbformat types for code cells alone go first, or nbformat refused the code cell."""
    cell.attachments = {"a.png": {"image/png": "iVBORw0KGgo="}}
    cell.metadata.update(collapsed="yes", scrolled="no", execution=[], tags=["kept"], format="text/x-python")
    OverwriteCellsAtOnce().update_cell_type(cell, "code")
    nbformat.validate(new_notebook(cells=[cell]))
    assert cell.cell_type == "code" and "attachments" not in cell and cell.metadata.tags == ["kept"]
