"""autograder/tuning.py: nbgrader's Gradebooks share one engine per URL and make their tables once, and what
they record is the same."""
import os
import sys

from nbgrader.api import Gradebook
from sqlalchemy import event

from autograder.tuning import _ENGINES, tune_nbgrader


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
