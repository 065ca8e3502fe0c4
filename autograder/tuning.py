"""How `make grade` runs nbgrader in several processes at once: safely, and without repeated work.

Each grading process records its students through nbgrader's own autograde and Gradebook API.
`shared_url` makes that safe; `tune_nbgrader` removes three costs nbgrader pays again for every
notebook, without changing what it does:

* Engines. nbgrader opens a new SQLAlchemy engine for every Gradebook it makes (about nine per
  notebook), and a compiled query is cached on its engine, so every query would be compiled again.
  Its Gradebooks get one engine per URL for the life of the process instead. (Gradebook.close
  disposes of the engine's connections; the engine and its cache stay usable.)
* Tables. Every Gradebook nbgrader makes runs `Base.metadata.create_all` on its engine, which asks the
  database about each of its tables (about twenty queries, nine Gradebooks a notebook: most of the SQL a
  notebook costs). With one engine per URL, the tables it made or found stay made for the life of the
  process (nothing drops them while grading), so it runs once per engine.
* Indexes. nbgrader's tables index a grade and a comment by (cell, notebook) only, so every lookup of a
  submitted notebook's grades or comments, and each score nbgrader sums per notebook with every query of
  one (its column properties), reads every grade of the class: the cost of a notebook grows with the class.
  Four indexes on the columns those queries select by (`INDEXES`) are made with the tables, if missing; they
  change no row and no query's result, only how SQLite finds the rows.
* Schema checks. nbgrader's CheckCellMetadata calls `jsonschema.validate` for every cell, and that
  checks the schema itself before each use, which is most of the step's time. Each distinct schema
  is checked once and its validator kept (what jsonschema's documentation advises for repeated
  validation); every cell is still validated.
"""
from __future__ import annotations

import json
from typing import Any

import jsonschema
import nbgrader.api
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from sqlalchemy import Engine, Index, create_engine
from sqlalchemy.schema import CreateIndex

LOCK_WAIT_SECONDS = 60


def shared_url(db_url: str) -> str:
    """`db_url` with a lock wait, when it is a SQLite file without other options.

    SQLite lets one writer in at a time, and by default a writer that finds the file locked fails
    at once. With the wait, the others take their turn (up to a minute), so no submission is lost.
    """
    if db_url.startswith("sqlite:") and "?" not in db_url:
        return f"{db_url}?timeout={LOCK_WAIT_SECONDS}"
    return db_url


_ENGINES: dict[tuple, Engine] = {}
_VALIDATORS: dict[str, Any] = {}
_validate_checking_the_schema = jsonschema.validate


def _engine_for(url: str, **options: Any) -> Engine:
    key = (url, tuple(sorted(options.items())))
    if key not in _ENGINES:
        _ENGINES[key] = create_engine(url, **options)
    return _ENGINES[key]


def _validate(instance: Any, schema: Any, cls: Any = None, *args: Any, **kwargs: Any) -> None:
    """jsonschema.validate, with each distinct schema checked once."""
    if cls is not None or args or kwargs:
        return _validate_checking_the_schema(instance, schema, cls, *args, **kwargs)
    key = json.dumps(schema, sort_keys=True)
    if key not in _VALIDATORS:
        checker = validator_for(schema)
        checker.check_schema(schema)
        _VALIDATORS[key] = checker(schema)
    error = best_match(_VALIDATORS[key].iter_errors(instance))
    if error is not None:
        raise error


_TABLES_MADE: set[Any] = set()  # the engines create_all has run on (kept alive here, as in _ENGINES)
_create_all = nbgrader.api.Base.metadata.create_all
_api = nbgrader.api
INDEXES = [Index("kit_grade_notebook", _api.Grade.__table__.c.notebook_id),
           Index("kit_comment_notebook", _api.Comment.__table__.c.notebook_id),
           Index("kit_submitted_notebook_assignment", _api.SubmittedNotebook.__table__.c.assignment_id),
           Index("kit_submitted_assignment_student", _api.SubmittedAssignment.__table__.c.student_id)]


def _create_all_once(bind: Any = None, **options: Any) -> None:
    """Base.metadata.create_all, run once per shared engine; the INDEXES made too if missing (IF NOT EXISTS: the
    pool's processes may make them at once)."""
    if bind is not None and not options and bind in _TABLES_MADE:
        return
    _create_all(bind=bind, **options)
    if bind is not None and not options:
        with bind.begin() as connection:
            for index in INDEXES:
                connection.execute(CreateIndex(index, if_not_exists=True))
        _TABLES_MADE.add(bind)


def tune_nbgrader() -> None:
    """From now on, in this process and those it forks: shared engines, tables made once per engine, schemas
    checked once."""
    nbgrader.api.create_engine = _engine_for
    nbgrader.api.Base.metadata.create_all = _create_all_once  # the MetaData instance's own attribute
    jsonschema.validate = _validate
