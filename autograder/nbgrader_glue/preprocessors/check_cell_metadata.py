"""CheckCellMetadataSchemaOnce: nbgrader's CheckCellMetadata, with the schema checked once, not once a cell.

nbgrader validates each cell's nbgrader metadata with `jsonschema.validate`, which checks the schema itself
before every use: most of the step's time. Here one validator is made, its schema checked once, when the
module is loaded (what jsonschema's documentation advises for repeated validation), and every cell is still
validated as nbgrader validates it: the same schema, the same checks of grade ids, points and cell types after it, the
same error. A cell of another schema version goes to nbgrader's own check, which refuses it.
"""
from __future__ import annotations

import traceback
from typing import Any

from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata


def _schema_validator() -> Any:
    """A validator of nbgrader's metadata schema (the current version's), the schema checked."""
    schema = MetadataValidator().schema
    checker = validator_for(schema)
    checker.check_schema(schema)
    return checker(schema)


SCHEMA = _schema_validator()  # made once, when nbgrader first loads this preprocessor


class _SchemaCheckedOnce(BaseMetadataValidator):
    """The schema part of nbgrader's check of a cell (BaseMetadataValidator.validate_cell), with SCHEMA."""

    schema_version: int

    def validate_cell(self, cell: Any) -> None:
        meta = cell.metadata.get("nbgrader")
        if meta is None or meta.get("schema_version", 0) != self.schema_version:
            super().validate_cell(cell)  # nbgrader's: nothing to check, or a version it refuses
            return
        error = best_match(SCHEMA.iter_errors(meta))
        if error is not None:
            raise error


class _MetadataValidator(MetadataValidator, _SchemaCheckedOnce):
    """nbgrader's MetadataValidator, whose call to its base class's validate_cell reaches _SchemaCheckedOnce."""


class CheckCellMetadataSchemaOnce(CheckCellMetadata):
    """nbgrader's CheckCellMetadata, validating with SCHEMA (module docstring)."""

    def preprocess(self, nb, resources):
        try:
            _MetadataValidator().validate_nb(nb)
        except ValidationError:  # as nbgrader's CheckCellMetadata reports it
            self.log.error(traceback.format_exc())
            msg = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(msg)
            raise ValidationError(msg) from None
        return nb, resources
