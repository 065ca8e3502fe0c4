"""ValidateOnceExporter (c.Autograde.exporter_class): nbgrader's NotebookExporter, validating where it counts.

nbgrader's Autograde runs its exporter twice a notebook (the sanitize pass, then the autograde pass), and
nbconvert's stock exporter validates the whole notebook against nbformat's schema about nine times a
pass: when nbformat reads it, after every preprocessor, and when nbformat writes it. It also deep-copies
the notebook three times before the first preprocessor (from_notebook_node, then _preprocess, then nbformat's
normalize, which repairs a copy); here only from_notebook_node copies it (about 0.6 ms a copy). The notebook is
validated:

* after the last preprocessor, as stock does after each: an invalid notebook is refused, the error names
  the preprocessors that ran, and nothing is written (nbgrader removes the failed notebook);
* before each preprocessor in `validate_before`, SaveAutoGrades by default: the preprocessors that
  write the gradebook from the notebook never read an invalid one, so no row is written from a
  notebook stock nbgrader would have refused before that step. (AssignLatePenalties, after it, reads
  the gradebook, not the notebook.)

What is left out repeats one of those checks: nbformat's read and write validate only to log
(`Notebook JSON is invalid`), never to refuse; the autograde pass reads the file the sanitize pass
validated and wrote; and `make grade` checks each submission before nbgrader reads it
(autograder/intake/validate.py, stricter than the schema). The copies left out are of a notebook copied just
before. The output is stock's, byte for byte (tests/test_exporters.py).
"""
from __future__ import annotations

import copy
from typing import Any

import nbformat
from nbconvert.exporters import NotebookExporter
from nbformat import validator
from traitlets import List, Unicode
from traitlets.config import LoggingConfigurable

from ..assignment import notebook_from_text


class ValidatesOnce(LoggingConfigurable):
    """Mixin for an nbconvert exporter: reads without nbformat's logging-only check, validates after its last
    preprocessor and before those that write the gradebook (ValidateOnceExporter, and the feedback pages'
    FeedbackExporter, which stock nbconvert validates after each of its preprocessors too)."""

    validate_before = List(
        Unicode(), ["SaveAutoGrades"],
        help="Class names of preprocessors that write outside the notebook (their subclasses too): it is validated "
             "before each runs.",
    ).tag(config=True)

    _preprocessors: list  # the exporter's

    def from_file(self, file_stream: Any, resources: dict | None = None, **kw: Any) -> tuple[Any, dict[str, Any]]:
        """nbformat.read without its validation, which only logs (the notebook is validated after the preprocessors)."""
        nb = notebook_from_text(file_stream.read())
        return self.from_notebook_node(nb, resources=resources, **kw)  # type: ignore[attr-defined]  # the exporter's

    def _preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict[str, Any]]:
        """Exporter._preprocess without copying `nb` (from_notebook_node has just copied it), validating at the end."""
        resources = copy.deepcopy(resources)
        version, minor = validator.get_version(nb)  # repaired as stock repairs it, in place (normalize copies first)
        _, nb = validator._normalize(nb, version, minor, True, relax_add_props=False, strip_invalid_metadata=False)
        ran: list[str] = []
        for preprocessor in self._preprocessors:
            if any(kind.__name__ in self.validate_before for kind in type(preprocessor).__mro__):  # subclasses too
                self._validate(nb, f"before {type(preprocessor).__name__}", ran)
            nb, resources = preprocessor(nb, resources)
            ran.append(type(preprocessor).__name__)
        self._validate(nb, "after the preprocessors", ran)
        return nb, resources

    def _validate(self, nb: Any, when: str, ran: list[str]) -> None:
        """nbformat's schema, as stock checks it after each preprocessor; a ValidationError is logged with the steps
        that ran (one of them made the notebook invalid) and raised, so nbgrader fails this notebook."""
        try:
            nbformat.validate(nb, relax_add_props=True)
        except nbformat.ValidationError as error:
            self.log.error("Notebook is invalid %s (%s ran): %s", when, ", ".join(ran) or "none", error.message)
            raise


class ValidateOnceExporter(ValidatesOnce, NotebookExporter):
    """NotebookExporter that validates after its last preprocessor and before those that write the gradebook."""

    def from_notebook_node(self, nb: Any, resources: dict | None = None, **kw: Any) -> tuple[Any, dict[str, Any]]:
        """NotebookExporter.from_notebook_node, writing with nbformat's writer without validating again."""
        nb_copy, resources = super(NotebookExporter, self).from_notebook_node(nb, resources, **kw)
        resources["output_suffix"] = (".nbconvert" if self.nbformat_version == nb_copy.nbformat
                                      else f".v{self.nbformat_version}")
        output = nbformat.versions[self.nbformat_version].writes_json(
            nbformat.convert(nb_copy, self.nbformat_version))
        return output if output.endswith("\n") else output + "\n", resources
