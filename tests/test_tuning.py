"""autograder/nbgrader_glue/tuning.py: nbgrader's Gradebooks share one engine per URL and make their tables once, and what
they record is the same."""
import os
import sys

from nbgrader.api import Gradebook
from sqlalchemy import event

from autograder.nbgrader_glue.tuning import _ENGINES, tune_nbgrader


def test_the_second_gradebook_asks_no_schema_questions_and_sees_the_first_ones_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")  # alembic, for a new db
    tune_nbgrader()
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    statements: list[str] = []
    with Gradebook(url) as first:
        engine = first.engine
        event.listen(engine, "before_cursor_execute", lambda conn, cursor, sql, *rest: statements.append(sql))
        first.add_student("ada", first_name="Ada")
    made = len(statements)
    with Gradebook(url) as second:
        assert second.engine is engine and engine in _ENGINES.values()
        assert second.find_student("ada").first_name == "Ada"
    schema = [sql for sql in statements[made:] if "PRAGMA" in sql.upper()]
    assert len(schema) <= 1, schema  # the table list nbgrader reads itself; no question per table
    assert len(statements) - made < 8, statements[made:]


def test_a_gradebook_gets_the_indexes_and_its_grade_lookups_use_them(tmp_path, monkeypatch):
    """An existing gradebook.db, made by nbgrader alone, gets INDEXES on its first tuned Gradebook, and the lookups
    of a submitted notebook's grades and comments use them instead of reading every row."""
    import sqlite3

    from autograder.nbgrader_glue.tuning import INDEXES

    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    path = tmp_path / "gradebook.db"
    with sqlite3.connect(path):  # nbgrader's own tables, made without the kit's indexes
        pass
    url = f"sqlite:///{path}"
    Gradebook(url).close()
    with sqlite3.connect(path) as db:
        for index in INDEXES:
            db.execute(f"drop index if exists {index.name}")
    tune_nbgrader()
    _ENGINES.clear()  # a new engine for this file, as in a new process
    with Gradebook(url):
        pass
    with sqlite3.connect(path) as db:
        names = {row[0] for row in db.execute("select name from sqlite_master where type = 'index'")}
        assert {index.name for index in INDEXES} <= names
        for table in ("grade", "comment"):
            plan = " ".join(str(row) for row in db.execute(f"explain query plan select * from {table} where notebook_id = 'x'"))
            assert f"kit_{table}_notebook" in plan, plan


def test_a_gradebook_closed_keeps_its_connection_for_the_next_but_not_across_a_fork_or_a_new_file(tmp_path, monkeypatch):
    """Gradebook.close hands the connection back to the shared engine's pool; a forked child does not use the
    parent's; a gradebook.db removed and made again is opened again."""
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    tune_nbgrader()
    path = tmp_path / "gradebook.db"
    url = f"sqlite:///{path}"
    connects: list[int] = []
    with Gradebook(url) as first:
        event.listen(first.engine, "connect", lambda *args: connects.append(os.getpid()))
        first.add_student("ada")
    with Gradebook(url) as second:
        assert second.find_student("ada").id == "ada"
    assert connects == []  # the first one's connection, from the pool
    pid = os.fork()
    if pid == 0:  # the child opens its own connection, and sees the rows
        try:
            with Gradebook(url) as child:
                ok = child.find_student("ada").id == "ada" and connects == [os.getpid()]
        finally:
            os._exit(0 if ok else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    path.unlink()
    with Gradebook(url) as third:  # a new file: a new connection, no rows
        assert [s.id for s in third.students] == [] and connects == [os.getpid()]
