"""How `make grade` runs nbgrader in several processes at once: safely, and without repeated work.

Each grading process records its students through nbgrader's own autograde and Gradebook API.
`shared_url` makes that safe; `tune_nbgrader` removes three costs nbgrader pays again for every
notebook, without changing what it does:

* Engines. nbgrader opens a new SQLAlchemy engine for every Gradebook it makes (about nine per
  notebook), and a compiled query is cached on its engine, so every query would be compiled again.
  Its Gradebooks get one engine per URL for the life of the process instead.
* Tables. Every Gradebook nbgrader makes runs `Base.metadata.create_all` on its engine, which asks the
  database about each of its tables (about twenty queries, nine Gradebooks a notebook: most of the SQL a
  notebook costs). With one engine per URL, the tables it made or found stay made for the life of the
  process (nothing drops them while grading), so it runs once per engine.
* Connections. nbgrader's `Gradebook.close` disposes of its engine's connections, so each of a notebook's nine
  Gradebooks opened the file again and SQLite read its schema again (1.5 of a Gradebook's 2.8 ms). A Gradebook
  now hands its connection back to the engine's pool when it closes; a forked process drops the connections it
  inherited unused (SQLAlchemy's advice for `fork`: a SQLite connection must not cross one), and opens its own.
* Course row. Each Gradebook asks for the course's row and makes it if missing (1.2 ms); once a process has
  seen it through an engine, nothing removes it while grading, so it is not asked again.
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
import os
from typing import Any

import jsonschema
import nbgrader.api
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from sqlalchemy import Engine, Index, create_engine, event
from sqlalchemy.exc import DisconnectionError
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
        if _ENGINES[key].url.get_backend_name() == "sqlite":
            _reconnect_if_replaced(_ENGINES[key])
    return _ENGINES[key]


def _file_of(engine: Engine) -> tuple[int, int] | None:
    """Which file a SQLite engine's database is now: (device, inode); None in memory, or before it exists."""
    if engine.url.database in (None, "", ":memory:"):
        return None
    try:
        stat = os.stat(engine.url.database)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _reconnect_if_replaced(engine: Engine) -> None:
    """A pooled connection to a SQLite file is used again only while the file is still the one it opened (which it
    holds open, so no new file can have its inode number): a gradebook.db removed and made again gets a new
    connection, and what the tuning knew of the old file (its tables, its course row) is forgotten."""
    @event.listens_for(engine, "connect")
    def remember(connection: Any, record: Any) -> None:
        record.info["kit_file"] = _file_of(engine)

    @event.listens_for(engine, "checkout")
    def check(connection: Any, record: Any, proxy: Any) -> None:
        if record.info.get("kit_file") != _file_of(engine):
            _TABLES_MADE.discard(engine)
            _COURSES_SEEN.difference_update({seen for seen in _COURSES_SEEN if seen[0] is engine})
            raise DisconnectionError("gradebook file replaced")


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


def _close_keeping_the_connection(self: nbgrader.api.Gradebook) -> None:
    """Gradebook.close without disposing of the shared engine: the session ends, its connection goes back to the
    engine's pool (rolled back: no lock is held)."""
    self.db.remove()


def _drop_inherited_connections() -> None:
    """In a process just forked: the pools' connections belong to the parent; let go of them unused."""
    for engine in _ENGINES.values():
        engine.dispose(close=False)


_COURSES_SEEN: set[tuple[Any, str]] = set()
_check_course = nbgrader.api.Gradebook.check_course


def _check_course_once(self: nbgrader.api.Gradebook, course_id: str = "default_course", **kwargs: Any) -> Any:
    """Gradebook.check_course, asked once per engine and course (its one caller, Gradebook.__init__, ignores what
    it returns)."""
    if kwargs or (self.engine, course_id) not in _COURSES_SEEN:
        course = _check_course(self, course_id, **kwargs)
        _COURSES_SEEN.add((self.engine, course_id))
        return course
    return None


def tune_nbgrader() -> None:
    """From now on, in this process and those it forks: shared engines that keep their connections, tables made
    once per engine, the course row asked for once, schemas checked once."""
    if nbgrader.api.create_engine is not _engine_for and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_drop_inherited_connections)
    nbgrader.api.create_engine = _engine_for
    nbgrader.api.Base.metadata.create_all = _create_all_once  # the MetaData instance's own attribute
    nbgrader.api.Gradebook.close = _close_keeping_the_connection
    nbgrader.api.Gradebook.check_course = _check_course_once
    jsonschema.validate = _validate
