"""autograder/nbgrader_glue/tuning.py: nbgrader's Gradebooks share one engine per URL and make their tables once, and what
they record is the same; the patch is applied where nbgrader grades, never by importing the package."""
import os
import subprocess
import sys
import textwrap

from nbgrader.api import Gradebook
from sqlalchemy import event

from autograder.nbgrader_glue.tuning import tune_nbgrader
from conftest import ASSIGNMENT, ROOT


def test_the_second_gradebook_asks_no_schema_questions_and_sees_the_first_ones_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")  # alembic, for a new db
    engines = tune_nbgrader().engines
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    statements: list[str] = []
    with Gradebook(url) as first:
        engine = first.engine
        event.listen(engine, "before_cursor_execute", lambda conn, cursor, sql, *rest: statements.append(sql))
        first.add_student("ada", first_name="Ada")
    made = len(statements)
    with Gradebook(url) as second:
        assert second.engine is engine and engine in engines.values()
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
    tune_nbgrader().engines.clear()  # a new engine for this file, as in a new process
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


# In a fresh interpreter: the whole package imported (the suites and the worker's own modules aside), then what
# `make grade` does before its pool forks (classroom.student_autograde.autograder_for), then a forked process.
IMPORT_THEN_GRADE = textwrap.dedent("""
    import importlib, os, pkgutil, sys
    import jsonschema, nbgrader.api, sqlalchemy
    import autograder

    def patched():
        return {"create_engine": nbgrader.api.create_engine is not sqlalchemy.create_engine,
                "create_all": "create_all" in vars(nbgrader.api.Base.metadata),
                "close": nbgrader.api.Gradebook.close.__module__ != "nbgrader.api",
                "check_course": nbgrader.api.Gradebook.check_course.__module__ != "nbgrader.api",
                "validate": jsonschema.validate is not jsonschema.validators.validate}

    for module in pkgutil.walk_packages(autograder.__path__, "autograder."):
        worker_only = module.name in ("autograder.sandbox.child", "autograder.sandbox.cell_runner") \
            or module.name.startswith("autograder.sandbox.ipython_")
        if ".dl01_6_3" not in module.name and not worker_only:  # the worker's: they import their siblings by name
            importlib.import_module(module.name)
    from autograder.nbgrader_glue.tuning import current_tuning
    print("import", sorted(k for k, v in patched().items() if v), current_tuning())

    from pathlib import Path
    from autograder.assignment import find_assignment
    from autograder.checks.suites import PreparedClass
    from autograder.classroom.student_autograde import autograder_for
    from autograder.grading import ClassGrading
    from autograder.intake.files import IntakeRules
    from autograder.settings import GraderSettings, load_config
    root = Path.cwd()
    assignment, config = find_assignment(root, sys.argv[1]), load_config(root)
    grading = ClassGrading(PreparedClass(assignment, GraderSettings(config=config), [], {}, str))
    autograder_for(grading, config, root / "submitted", IntakeRules(assignment.notebook_name, 1024))
    print("grading", sorted(k for k, v in patched().items() if v), type(current_tuning()).__name__)
    in_parent = patched()
    pid = os.fork()
    if pid == 0:
        os._exit(0 if patched() == in_parent else 1)
    print("forked", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
""")


def test_importing_the_package_patches_nothing_and_a_grading_process_is_tuned():
    run = subprocess.run([sys.executable, "-c", IMPORT_THEN_GRADE, ASSIGNMENT.name], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [
        "import [] None",
        "grading ['check_course', 'close', 'create_all', 'create_engine'] GradebookTuning",
        "forked 0"], run.stdout
