"""How `make grade` runs nbgrader in several processes at once: safely, and without repeated work.

Each grading process records its students through nbgrader's own autograde and Gradebook API.
`shared_url` makes that safe; `tune_nbgrader` removes costs nbgrader pays again for every notebook,
without changing what it does. nbgrader opens its Gradebooks inside its own converters and
preprocessors, where no subclass or setting reaches, so this is the kit's one process-wide patch: one
named function, applied where nbgrader grades (`make grade`'s grading processes, before the pool forks),
never by importing the package (tests/test_tuning.py checks both); what it keeps is one GradebookTuning.
(nbgrader's check of each cell's metadata against its schema is the other cost of that kind; a subclass
configured in its place removes it: preprocessors/check_cell_metadata.py.)

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
"""
from __future__ import annotations

import os
from typing import Any

import nbgrader.api
from sqlalchemy import Engine, Index, event
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


_create_all = nbgrader.api.Base.metadata.create_all  # nbgrader's own, as the tuning found them
_check_course = nbgrader.api.Gradebook.check_course
_create_engine = nbgrader.api.create_engine
_api = nbgrader.api
INDEXES = [Index("kit_grade_notebook", _api.Grade.__table__.c.notebook_id),
           Index("kit_comment_notebook", _api.Comment.__table__.c.notebook_id),
           Index("kit_submitted_notebook_assignment", _api.SubmittedNotebook.__table__.c.assignment_id),
           Index("kit_submitted_assignment_student", _api.SubmittedAssignment.__table__.c.student_id)]


class GradebookTuning:
    """What the tuning keeps in a process (module docstring): its engines, one per URL and options; the engines
    whose tables are made; the (engine, course) pairs whose course row is seen. The replacements
    tune_nbgrader puts in nbgrader's place are its methods."""

    def __init__(self) -> None:
        self.engines: dict[tuple, Engine] = {}
        self.tables_made: set[Engine] = set()
        self.courses_seen: set[tuple[Engine, str]] = set()

    def engine_for(self, url: str, **options: Any) -> Engine:
        """nbgrader.api.create_engine: one engine per URL and options, for the life of the process."""
        key = (url, tuple(sorted(options.items())))
        if key not in self.engines:
            self.engines[key] = _create_engine(url, **options)
            if self.engines[key].url.get_backend_name() == "sqlite":
                self._reconnect_if_replaced(self.engines[key])
        return self.engines[key]

    def _reconnect_if_replaced(self, engine: Engine) -> None:
        """A pooled connection to a SQLite file is used again only while the file is still the one it opened (which
        it holds open, so no new file can have its inode number): a gradebook.db removed and made again gets a new
        connection, and what the tuning knew of the old file (its tables, its course row) is forgotten."""
        @event.listens_for(engine, "connect")
        def remember(connection: Any, record: Any) -> None:
            record.info["kit_file"] = _file_of(engine)

        @event.listens_for(engine, "checkout")
        def check(connection: Any, record: Any, proxy: Any) -> None:
            if record.info.get("kit_file") != _file_of(engine):
                self.tables_made.discard(engine)
                self.courses_seen.difference_update({seen for seen in self.courses_seen if seen[0] is engine})
                raise DisconnectionError("gradebook file replaced")

    def drop_inherited_connections(self) -> None:
        """In a process just forked: the pools' connections belong to the parent; let go of them unused."""
        for engine in self.engines.values():
            engine.dispose(close=False)

    def create_all_once(self, bind: Any = None, **options: Any) -> None:
        """Base.metadata.create_all, run once per shared engine; the INDEXES made too if missing (IF NOT EXISTS: the
        pool's processes may make them at once)."""
        if bind is not None and not options and bind in self.tables_made:
            return
        _create_all(bind=bind, **options)
        if bind is not None and not options:
            with bind.begin() as connection:
                for index in INDEXES:
                    connection.execute(CreateIndex(index, if_not_exists=True))
            self.tables_made.add(bind)

    def check_course_once(self, gradebook: nbgrader.api.Gradebook, course_id: str = "default_course",
                          **kwargs: Any) -> Any:
        """Gradebook.check_course, asked once per engine and course (its one caller, Gradebook.__init__, ignores
        what it returns)."""
        if kwargs or (gradebook.engine, course_id) not in self.courses_seen:
            course = _check_course(gradebook, course_id, **kwargs)
            self.courses_seen.add((gradebook.engine, course_id))
            return course
        return None


def _file_of(engine: Engine) -> tuple[int, int] | None:
    """Which file a SQLite engine's database is now: (device, inode); None in memory, or before it exists."""
    if engine.url.database in (None, "", ":memory:"):
        return None
    try:
        stat = os.stat(engine.url.database)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _close_keeping_the_connection(self: nbgrader.api.Gradebook) -> None:
    """Gradebook.close without disposing of the shared engine: the session ends, its connection goes back to the
    engine's pool (rolled back: no lock is held)."""
    self.db.remove()


def current_tuning() -> GradebookTuning | None:
    """The tuning this process runs nbgrader with (made by tune_nbgrader, here or before a fork); None untuned."""
    current = getattr(nbgrader.api.create_engine, "__self__", None)
    return current if isinstance(current, GradebookTuning) else None


def tune_nbgrader() -> GradebookTuning:
    """The kit's one process-wide patch, applied only where nbgrader grades (classroom.student_autograde.autograder_for,
    before the pool forks): from now on, in this process and those it forks, nbgrader's Gradebooks share engines that
    keep their connections, make their tables once per engine and ask for the course row once. nbgrader makes its
    Gradebooks inside its own modules, so no subclass or setting reaches them. Applied once; its state is the
    GradebookTuning returned."""
    tuned = current_tuning()
    if tuned is not None:
        return tuned
    tuned = GradebookTuning()
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=tuned.drop_inherited_connections)

    def check_course(gradebook: nbgrader.api.Gradebook, course_id: str = "default_course", **kwargs: Any) -> Any:
        return tuned.check_course_once(gradebook, course_id, **kwargs)

    nbgrader.api.create_engine = tuned.engine_for
    nbgrader.api.Base.metadata.create_all = tuned.create_all_once  # the MetaData instance's own attribute
    nbgrader.api.Gradebook.close = _close_keeping_the_connection
    nbgrader.api.Gradebook.check_course = check_course
    return tuned
