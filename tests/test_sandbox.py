"""The sandbox: which cells run, what comes back when student code misbehaves, and that a fault of the machine
under it is the grader's failure, never an answer."""
from __future__ import annotations

import copy
import errno
import gc
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sandbox_probes
from nbformat.v4 import new_code_cell, new_raw_cell

from autograder.checks.suites import _binds
from autograder.sandbox import Cell, Limits, Sandbox, ipython_cleanup, program_from_notebook
from autograder.sandbox.cputime import HURRIED_NICE
from autograder.sandbox.program import annotations_as_text, bound_names, namespace_lines, run_before
from autograder.sandbox.protocol import EVERY_NAME
from conftest import (
    ASSIGNMENT,
    CAP_SYS_NICE,
    ROOT,
    command_lines,
    holds_capability,
    needs_level,
    release_notebook,
    solution_notebook,
)

PROBES = ROOT / "tests" / "sandbox_probes.py"


def names(cells: list[Cell]) -> list[str]:
    return [cell.name for cell in cells]


def grade_ids(notebook) -> list[str]:
    return [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]


def test_program_skips_tests_and_demos_and_keeps_added_cells_where_they_stand():
    notebook = release_notebook()
    after_test = grade_ids(notebook).index("test_parameters") + 1
    notebook.cells.insert(after_test, new_code_cell("def helper():\n    return 1\n%matplotlib inline"))
    notebook.cells.insert(0, new_code_cell("first = 1"))
    program = program_from_notebook(notebook)
    assert names(program) == ["0", "imports", "parameter", "module", "linear", "relu_sequential",
                              str(after_test + 1), "exercise_count", "sgd", "exercise_second_step", "no_grad"]
    assert program[6].source.endswith("\n%matplotlib inline"), "as written: the sandbox reads IPython's syntax"


def test_given_cells_come_from_the_source_and_other_parts_from_the_reference():
    notebook = release_notebook()
    notebook.cells[grade_ids(notebook).index("parameter")].source = "Parameter = None"
    program = program_from_notebook(notebook, ASSIGNMENT.source, solution_notebook(), ["sgd"])
    text = {cell.name: cell.source for cell in program}
    assert "class Parameter(Tensor)" in text["parameter"]
    assert "NotImplementedError" in text["sgd"] and "NotImplementedError" not in text["module"]


def test_a_deleted_solution_cell_is_named():
    notebook = release_notebook()
    del notebook.cells[grade_ids(notebook).index("sgd")]
    text = {cell.name: cell.source for cell in program_from_notebook(notebook, ASSIGNMENT.source, solution_notebook())}
    assert "the cell sgd is missing from the notebook" in text["sgd"]


def test_a_solution_cell_is_taken_as_make_grade_takes_it_the_last_copy_and_code_again():
    """nbgrader's autograde keeps a pasted cell's last copy (DropDuplicateIds) and makes a code cell the student
    turned raw code again (OverwriteCellsAtOnce): `grade` and Gradescope run the same program as make grade."""
    notebook = release_notebook()
    sgd = grade_ids(notebook).index("sgd")
    notebook.cells.insert(sgd + 1, copy.deepcopy(notebook.cells[sgd]))
    notebook.cells[sgd + 1].source = "SGD = 'the last copy'"
    notebook.cells[grade_ids(notebook).index("no_grad")] = new_raw_cell("no_grad = 'raw'", metadata=copy.deepcopy(
        notebook.cells[grade_ids(notebook).index("no_grad")].metadata))
    program = program_from_notebook(notebook, ASSIGNMENT.source, solution_notebook())
    text = {cell.name: cell.source for cell in program}
    assert text["sgd"] == "SGD = 'the last copy'" and text["no_grad"] == "no_grad = 'raw'"
    assert names(program)[names(program).index("sgd") - 1] == str(sgd), "the earlier copy runs where it stands"


def test_a_prose_cell_or_an_answer_the_student_made_code_is_not_run():
    """make grade's nbgrader autograde makes them markdown again (OverwriteCellsAtOnce): `grade` and Gradescope run
    neither (red-p4, pass 18: the right Linear in a prose cell made code scored 18/18 there, 13.55/18 in make grade)."""
    notebook = solution_notebook()
    for grade_id in ("text_relu_and_sequential_given", "answer_zeroing"):
        notebook.cells[grade_ids(notebook).index(grade_id)] = new_code_cell(
            "MADE_CODE = 1", metadata=copy.deepcopy(notebook.cells[grade_ids(notebook).index(grade_id)].metadata))
    program = program_from_notebook(notebook, ASSIGNMENT.source, release_notebook(), ("linear", "sgd"))
    assert not any("MADE_CODE" in cell.source for cell in program)


def test_a_cell_too_deep_for_pythons_ast_leaves_the_program_a_part_runs_to_the_sandbox():
    """red-a18 X27-a18-4 (pass 27): program._futures parses a student's cell whose text holds "__future__" (a comment
    will do) and _parsed catches SyntaxError and ValueError only; a long `a + a + ...` (100,000 terms, 200 KB) raises
    RecursionError ("maximum recursion depth exceeded during ast construction") in the grader's own process, for every
    part that takes that cell blank: `python -m autograder grade` ends with "the grader failed, not the notebook ... no
    score was given" (exit 3). IPython fails that cell alone as it parses it, and the cells below still run."""
    notebook = solution_notebook()
    sgd = notebook.cells[grade_ids(notebook).index("sgd")]
    sgd.source = "# from __future__ import nothing\n" + sgd.source + "\n\ntotal = a" + " + a" * 100_000 + "\n"
    program = program_from_notebook(notebook, ASSIGNMENT.source, release_notebook(), ("linear",))
    assert any(cell.name == "sgd" for cell in program)


@pytest.fixture(scope="module")
def box():
    # the course folder on the path as the grader gives it (policy.py): the notebook imports engine.py from it
    with Sandbox(modules={"sandbox_probes": PROBES}, path=[ASSIGNMENT.release_dir],
                 limits=Limits(seconds=1, memory_mb=256, output_kb=64)) as sandbox:
        yield sandbox


def binds_after_sgd(box: Sandbox, cell: str, name: str) -> bool:
    """Whether the program of a right notebook whose cell sgd is `cell` (with `{right}` for its right code), run in
    the sandbox up to cell sgd, binds `name`."""
    right = solution_notebook().cells[grade_ids(solution_notebook()).index("sgd")].source
    notebook = solution_notebook()
    notebook.cells[grade_ids(notebook).index("sgd")].source = cell.format(right=right)
    program = program_from_notebook(notebook, ASSIGNMENT.source, release_notebook(), ("sgd",))
    outcome = box.call(program[:names(program).index("sgd") + 1], sandbox_probes.bound, name=name)
    assert outcome.ok and not any(error.startswith("cell sgd") for error in outcome.load_errors), outcome
    return outcome.value


@pytest.mark.parametrize("cell", ["%%time\n{right}", "\n%%capture out\n{right}",
                                  "{right}\nWIDE = (1\n        != 2)\nNOTE = '''\n!not a shell escape\n'''\n",
                                  "{right}\nif False:\n    !pip install numpy\n%matplotlib inline"])
def test_a_right_cell_with_magics_runs_as_jupyter_runs_it(box, cell):
    """IPython reads `%` and `!` as escapes only where a statement begins, and runs the body of `%%time` (red-p4,
    pass 18: a right cell sgd under %%time, or with a line `!= 2)` inside brackets, lost 7 points)."""
    assert binds_after_sgd(box, cell, "SGD")


@pytest.mark.parametrize("cell, name", [("{right}\n%time TIMED = SGD\n", "TIMED"), ("np.zeros_like?\n{right}", "SGD"),
                                        ("{right}\nSGD??\n", "SGD")], ids=["line-time", "help", "help-twice"])
def test_ipython_syntax_that_jupyter_runs_in_a_right_cell_runs(box, cell, name):
    """`%time x = ...` runs its statement in the notebook's namespace (IPython's run_line_magic('time', ...)), and a
    line ending in `?` is IPython's help, the rest of the cell running (red-s5, pass 18: `%time count_64_32_10 = ...`
    cost exercise_count, 17/18; `np.zeros_like?` atop cell sgd, 10.82/18)."""
    assert binds_after_sgd(box, cell, name)


@pytest.mark.parametrize("cell, name", [("{right}\nTIMED = %time SGD\n", "TIMED"), ("np.*zeros*?\n{right}", "SGD"),
                                        ("files = !ls\n{right}", "SGD"), ("%%prun -q\n{right}", "SGD")],
                         ids=["assigned-time", "help-search", "assigned-shell", "cell-prun"])
def test_ipython_assignments_and_searches_in_a_right_cell_do_not_stop_it(box, cell, name):
    """IPython (9.18 here, TransformerManager) reads `x = %time expr` as x = the expression's value, `files = !ls` as
    the command's output, and `np.*zeros*?` as a search (psearch): in the sandbox each was a syntax error that cost
    the whole cell, a right cell sgd 10.82/18; `%%prun` runs its body in the notebook's namespace (InteractiveShell:
    it binds), and the sandbox commented it out whole, 10.82/18 "cell sgd defines no SGD" (red-u6, pass 19)."""
    assert binds_after_sgd(box, cell, name)


@pytest.mark.parametrize("cell, name, binds", [
    ("TIMED = %time 1 + 1", "TIMED", True), ("%prun -s cumulative -q PRUNED = 1", "PRUNED", True),
    ("%%prun -q\nPRUNED = 1", "PRUNED", True), ("%%capture out\nCAUGHT = 1", "out", True),
    ("%%capture out\nCAUGHT = 1", "CAUGHT", True), ("files = !ls", "files", True),
    ("%%bash\nBASH = 1", "BASH", False), ("%%timeit\nLOOPED = 1", "LOOPED", False),
    ("%timeit LOOPED = 1", "LOOPED", False), ("%%writefile notes.txt\nNOTE = 1", "NOTE", False),
    ("def f():\n    %time LOCAL = 1\nf()", "LOCAL", False),
    ("    def HELPER():\n        pass\n    OTHER = 1", "HELPER", True), (">>> def HELPER():\n...     pass", "HELPER", True),
    ("In [1]: HELPER = 1", "HELPER", True), ("HELPER = np.zeros_like?", "HELPER", False),
    ("HELPER = 1; np?", "HELPER", False), ("TIMED = %time HELPER = 1", "HELPER", True),
    ("\r\n    HELPER = 1\r\n", "HELPER", True), ("%%time\r\nHELPER = 1\r\n", "HELPER", True),
    ("%%time\t\nHELPER = 1", "HELPER", True),
    ("\x0c\n\tHELPER = 1", "HELPER", True), ("\n  %%time\n  HELPER = 1", "HELPER", True),
    ("In [3]: def HELPER():\n   ...:     pass", "HELPER", True), ("  >>> HELPER = 1", "HELPER", True),
    ('def HELPER():\n    """\n    >>> HELPER()\n    """\n    ...', "HELPER", True),
    ("HELPER = np.zeros_like(\n    x)?", "HELPER", False), ("HELPER = 1  # really?", "HELPER", True),
    ("TIMED = %prun -q HELPER = 1", "HELPER", True), ("TIMED = %time HELPER = 1", "TIMED", True),
    ("TIMED = %timeit -o HELPER = 1", "HELPER", False),
    ("%%time\n    HELPER = 1", "HELPER", True), ("%%capture out\n%%time\nHELPER = 1", "HELPER", True),
    ("from math import pi", "pi", True), ("from math import pi as HELPER, tau", "tau", True),
    ("from math import pi as HELPER", "pi", False), ("import math, itertools", "itertools", True),
    ("import os.path", "path", False), ("ZERO, ONE = 0.0, 1.0", "ONE", True), ("(A, *HELPER) = 1, 2", "HELPER", True),
    ("A = HELPER = 1", "HELPER", True), ("A = dict(HELPER=1)", "HELPER", False), ("A, HELPER == 1, 2", "HELPER", False),
], ids=["assigned-time", "line-prun", "cell-prun", "capture-name", "capture-body", "assigned-shell", "bash",
        "cell-timeit", "line-timeit", "writefile", "time-in-def", "red-f8-indented-cell", "red-f8-classic-prompt",
        "red-f8-ipython-prompt", "red-f8-help-after-assignment", "red-f8-help-after-statement",
        "red-f8-time-of-an-assignment", "red-f8-crlf-blank-then-indented", "red-f8-crlf-cell-magic",
        "red-f8-tab-after-cell-magic", "formfeed-blank-then-indented", "indented-cell-magic",
        "ipython-prompts-continued", "indented-classic-prompt", "doctest-in-a-docstring-stays",
        "help-over-brackets", "question-in-a-comment", "prun-of-an-assignment", "time-of-an-assignment-target",
        "timeit-of-an-assignment", "cell-magic-over-an-indented-body", "cell-magic-over-a-cell-magic",
        "red-b12-3-from-import", "red-b12-3-from-import-second", "red-b12-3-from-import-aliased",
        "red-b12-3-import-second", "red-b12-3-dotted-import", "red-b12-3-unpacked", "red-b12-3-starred-in-brackets",
        "red-b12-3-chained", "red-b12-3-keyword-argument", "red-b12-3-comparison"])
def test_the_graders_reading_binds_what_ipython_binds_in_the_sandbox(box, cell, name, binds):
    """The grader reads what a cell binds line by line, never running IPython's transformer (bound_names, and the
    lending's namespace_lines): it agrees with what the cell binds run in the sandbox as Jupyter runs it.
    red-f8 (pass 20): IPython dedents a cell whose first line is indented and strips `>>>`/`In [1]:` prompts, and a
    line ending in `?` is help on its last name alone (the statement before it never runs); the linear reading did
    none of these, so a helper in an indented cell module was never lent to zero_grad (a right notebook, 16/18).
    IPython also takes `\r\n` or `\f` lines as blank before an indented first line (the sandbox's pre-check did
    not, a syntax error) and reads `%%time\r` or `%%time\t` as %%time (the reading commented the cell out)."""
    assert box.call([Cell("c", cell)], sandbox_probes.bound, name=name).value is binds
    assert (name in bound_names(cell)) is binds
    assert _binds(namespace_lines(cell), name) is binds


@pytest.mark.parametrize("cell, binds", [
    ("if True:\n    HELPER = 1", True), ("try:\n    HELPER = 1\nexcept ValueError:\n    pass", True),
    ("for HELPER in (1,):\n    pass", True), ("for i, (HELPER, j) in [(1, (2, 3))]:\n    pass", True),
    ("for i in (HELPER for HELPER in (1,)):\n    pass", False),
    ("import contextlib\nwith contextlib.nullcontext(1) as HELPER:\n    pass", True),
    ("print((HELPER := 1))", True), ("print(\n    HELPER := 1)", True),
    ("def f():\n    global HELPER\n    HELPER = 1\n\n\nf()", True),
    ("def f():\n    for HELPER in (1,):\n        pass\n\n\nf()", False),
    ("from math import (  # black's style\n    pi as HELPER,\n)", True),
    ("try:\n    1 / 0\nexcept ZeroDivisionError as HELPER:\n    pass", False),
    ("x = [\n    1,  # HELPER = 1\n]", False), ('s = """\nHELPER = 1\n"""', False),
], ids=["red-b13-1-if", "red-b13-1-try", "red-b13-1-for", "red-b13-1-for-nested-targets", "comprehension-target",
        "red-b13-1-with-as", "red-b13-1-walrus", "walrus-in-brackets-over-lines", "red-b13-1-global-in-a-function",
        "for-in-a-function", "red-b13-1-import-in-brackets-over-lines", "except-as", "comment-in-brackets",
        "string-over-lines"])
def test_the_graders_reading_of_a_block_at_the_top_level_binds_what_the_cell_binds_in_the_sandbox(box, cell, binds):
    """red-b13 1 (pass 23): a block at the top level (if, try, for, with) binds in the notebook's namespace, and so do
    a walrus target, `global` in a function the cell calls and an import in brackets over several lines; the grader's
    linear reading (namespace_lines, _binds) read only a plain statement at column 0, so a helper bound that way in a
    cell the part took blank was never lent (right notebooks 16/18). It agrees with the cell run in the sandbox."""
    assert box.call([Cell("c", cell)], sandbox_probes.bound, name="HELPER").value is binds
    assert _binds(namespace_lines(cell), "HELPER") is binds


def test_the_graders_reading_of_compound_statements_is_linear():
    """The forms red-b13 1 added (for targets, `as`, walrus, global, a statement over several lines) over 1 MB lines:
    the student's code is searched in the grader's own process, so no pattern may backtrack per character (a
    pattern that did would take minutes here; namespace_lines' own linear reading is not timed)."""
    lines = ("for " + "a, " * 300_000 + "in x:", "for " + " " * 1_000_000, "with x" + " as" * 300_000,
             "global " + "a, " * 300_000, "for " + "(" * 1_000_000, "print(" + "a :" * 300_000, "\t" * 1_000_000 + "as",
             "from m import (\n" + "    a,  # b\n" * 50_000 + ")", "def f():\n" + "    global a\n" * 50_000)
    for line in lines:
        statements = namespace_lines(line)
        started = time.process_time()
        assert _binds(statements, "zz") is False
        assert time.process_time() - started < 0.25, line[:40]


@pytest.mark.parametrize("cell", [
    "print(helper_not_defined)\n\nHELPER = 1\n", "HELPER = 1\nprint(helper_not_defined)\n",
    "x = (\n    helper_not_defined)\nHELPER = 1\n", "if True:\n    HELPER = 1\n    helper_not_defined\n    HELPER = 2\n",
    "import sys\nsys.exit(0)\nHELPER = 1\n", "HELPER = 1\ndef f(:\n    pass\n",
    # the loader's own observation (pass 26, X25-a16-2), where the load error's words said less
    "HELPER = 1\nreturn\n", "def f():\n    raise ValueError\n\n\nf()\nHELPER = 1\n", "class HELPER:\n    1 / 0\n",
    "for _ in [0]:\n    try:\n        1 / 0\n    except ZeroDivisionError as error:\n        saved = error\n"
    "    HELPER = 1\n    raise saved\n",
    "import contextlib\nwith contextlib.nullcontext():\n    HELPER = 1\n    raise ValueError\n",
    "%%time\nHELPER = 1\nraise ValueError('late')\n", "%%time\nraise ValueError('early')\nHELPER = 1\n",
], ids=["first-line-raises", "last-line-raises", "raises-in-a-statement-over-lines", "raises-in-a-block", "sys-exit",
        "syntax-error", "compiler-error-after-a-statement-ran", "raised-in-a-function-called-above",
        "raised-in-a-class-body", "raised-again-in-the-block-that-saved-it", "raised-in-a-with-block",
        "raised-in-a-cell-magics-body", "raised-first-in-a-cell-magics-body"])
def test_the_graders_reading_of_what_a_cell_bound_before_it_stopped_agrees_with_the_sandbox(box, cell):
    """red-b15 X24-b15-3 (pass 24): a stub replaces what the student's copy of its cell binds as the whole notebook ran
    (the loader says where each cell stopped, Outcome.stops; program.run_before reads what it ran before): a cell whose
    first line raises binds nothing its text defines below, as in Jupyter."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    stops = outcome.stops
    assert "c" in stops, outcome.load_errors
    assert _binds(namespace_lines(run_before(cell, stops["c"])), "HELPER") is outcome.value


@pytest.mark.parametrize("cell", [
    "class _Wrap:\n    global HELPER\n    HELPER = 1\n    raise ValueError\n",
    "class _Wrap:\n    globals()['HELPER'] = 1\n    raise ValueError\n",
    "if True:\n    class _Wrap:\n        global HELPER\n        HELPER = 1\n        raise ValueError\n",
    "raise ValueError\nHELPER = 1\n",
], ids=["class-body-global", "globals-in-a-class-body", "class-body-global-in-an-if", "raised-above-it"])
def test_the_loader_tells_the_names_a_stopped_cell_bound_as_it_ran(box, cell):
    """red-a19 X28-a19-1 (pass 28): the lines above where a cell stopped do not show a name it bound from a class body
    (`global HELPER`, globals()[...]), so the loader tells the names it saw the cell's run bind (Outcome.bound)."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert "c" in outcome.stops, outcome.load_errors
    assert ("HELPER" in outcome.bound["c"]) is outcome.value, outcome


@pytest.mark.parametrize("cell, names", [
    ("del HELPER\nraise ValueError\n", ["HELPER"]),
    ("class _Name(str):\n    pass\n\n\ndel globals()['HELPER']\nglobals()[_Name('HELPER')] = 2\nraise ValueError\n",
     ["HELPER"]),
    ("class _Key:\n    def __hash__(self):\n        return hash('HELPER')\n\n    def __eq__(self, other):\n"
     "        return True\n\n\ndel HELPER\nglobals()[_Key()] = 2\nraise ValueError\n", [EVERY_NAME]),
], ids=["deleted", "str-subclass-key", "other-key-equal-to-a-name"])
def test_the_loader_tells_a_deletion_and_a_key_of_another_class(box, cell, names):
    """red-b22 X31-b22-1 (pass 31): a stopped cell binds a name a later cell finds also by deleting it (builtins'
    then), by a key of a str subclass (str's hash and ==), or of a class whose == makes it equal a name (read as
    EVERY_NAME)."""
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert "c" in outcome.stops, outcome.load_errors
    assert {name for name in outcome.bound["c"] if name in ("HELPER", EVERY_NAME)} == set(names), outcome


@pytest.mark.parametrize("cell", [
    "HELPER = 1\nraise SyntaxError('not really', ('<cell>', 1, 1, ''))\n",
    "HELPER = 1\ncompile('x = (', '<cell>', 'exec')\n",
    "try:\n    1 / 0\nexcept ZeroDivisionError as error:\n    saved = error\nHELPER = 1\nraise saved\n",
    "HELPER = 1\rraise ValueError('late')\r",
], ids=["syntax-error-raised", "syntax-error-compiled", "saved-exception-raised-again", "lines-ended-by-a-bare-cr"])
def test_a_cell_that_raises_at_its_end_is_read_as_binding_what_it_bound(box, cell):
    """red-a16 X25-a16-2 (pass 25): suites.stopped reads the line a load error names as where the cell stopped, but
    that line is the innermost notebook frame of the exception's traceback, which the cell chooses: a SyntaxError the
    cell raises as it runs reads as the cell's own syntax error (IPython ran none of it), and an exception caught at
    line 2 and raised again at the end names line 2; and run_before splits the cell on LF only, so a cell whose lines
    a bare CR ends (Python's and the loader's line ends too) is one line, cut whole. Each cell here bound HELPER before it raised (Jupyter runs it down
    to its last line); the grader reads it as binding nothing, so a stub standing in for it replaces none of its names."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert outcome.value is True, outcome
    stops = outcome.stops
    read = run_before(cell, stops["c"]) if "c" in stops else cell
    assert _binds(namespace_lines(read), "HELPER") is True, (outcome.load_errors, stops)


@pytest.mark.parametrize("cell", [
    "for round in range(2):\n    if round:\n        raise ValueError('second round')\n    HELPER = 1\n",
    "i = 0\nwhile True:\n    if i:\n        raise ValueError('second round')\n    HELPER = 1\n    i += 1\n",
    "try:\n    raise ValueError('first')\nfinally:\n    HELPER = 1\n",
    "try:\n    1 / 0\nexcept ZeroDivisionError:\n    HELPER = 1\n    raise\n",
    "try:\n    raise ExceptionGroup('g', [ValueError()])\nexcept* ValueError:\n    HELPER = 1\n    raise\n",
], ids=["loop-second-round", "while-second-round", "finally-below-the-raise", "bare-raise-in-the-handler",
        "except-star-raised-again"])
def test_a_cell_whose_block_ran_lines_below_where_it_stopped_is_read_as_binding_them(box, cell):
    """red-a18 X27-a18-1 (pass 27): stopped_at gives the line where the exception left the running statement's frame,
    and run_before reads the cell as having run only the lines above that line's statement. In a block the line order
    is not the run's order: a loop's second round raises above a line its first round ran; a `finally` body, or a
    handler that re-raises with a bare `raise` (no new traceback entry), runs below the line the traceback names. Each
    cell here bound HELPER (Jupyter too); the grader reads it as binding nothing, so a stub standing in for it replaces
    none of its names (X25-a16-2 again: 13.59 against Jupyter's 11)."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert outcome.value is True, outcome
    stops = outcome.stops
    read = run_before(cell, stops["c"]) if "c" in stops else cell
    assert _binds(namespace_lines(read), "HELPER") is True, (outcome.load_errors, stops)


@pytest.mark.parametrize("cell", [
    "HELPER = 1\nimport asyncio\n\n\ndef stop():\n    raise KeyboardInterrupt\n\n\n"
    "asyncio.get_running_loop().call_soon(stop)\n",
    "HELPER = 1\nimport asyncio\nimport sys\nasyncio.get_running_loop().call_soon(sys.exit)\n",
], ids=["keyboard-interrupt-from-a-callback", "system-exit-from-a-callback"])
def test_a_cell_that_ran_to_its_end_is_not_read_as_one_that_does_not_parse(box, cell):
    """red-a18 X27-a18-2 (pass 27): a callback the cell puts on the notebook's event loop (call_soon) runs after the
    cell's coroutine has returned, inside run_until_complete; asyncio raises a KeyboardInterrupt or SystemExit from it
    again, so it leaves cell_runner.run_cell, and child._load reads any exception leaving run_cell as a cell that does
    not parse: its stop at line 1. The cell ran to its end and bound HELPER; the grader reads it as binding nothing."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert outcome.value is True, outcome
    stops = outcome.stops
    read = run_before(cell, stops["c"]) if "c" in stops else cell
    assert _binds(namespace_lines(read), "HELPER") is True, (outcome.load_errors, stops)


@pytest.mark.parametrize("cell", [
    "import asyncio\nimport sys\nasyncio.get_running_loop().call_soon(sys.exit)\n",
    "exec('import sys; sys.exit(3)')\n",
], ids=["sys-exit-from-a-callback", "sys-exit-in-exec"])
def test_a_sys_exit_with_no_frame_of_the_cell_is_not_told_as_words_the_notebook_wrote_to_the_grader(box, cell):
    """red-a18 X27-a18-3 (pass 27): describe_cell_exit leaves out "(line N)" when no frame of the cell's is in the
    SystemExit's traceback (sys.exit put on the event loop, or called in an exec'd string), and as_notebooks_load_error
    does not know that shape: the student reads 'sent an answer in words of its own (written to the grader's pipe?):
    "cell c: called sys.exit(None), which stops the cell there"', a charge of forging the grader's protocol."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert outcome.load_errors and "called sys.exit" in outcome.load_errors[0], outcome
    assert "words of its own" not in outcome.load_errors[0], outcome.load_errors


@pytest.mark.parametrize("cell, line", [
    ("\n\n%%time\nA = 1\nB = (\n", 5), ("%time A = 1 + \\\n    2\nB = )\n", 3), ("np.zeros?\n\nx = )", 3),
    ("%%prun -q\nA = 1\nraise ValueError('late')", 3), ("x = 1\n%time y = 1 / 0", 2),
    ("\r\r%time A = 1\nraise ValueError('late')", 4),  # red-j10: blank lines a bare CR ends (Python's lines too)
], ids=["cell-magic-body", "continued-magic", "help", "raised-in-body", "raised-in-line-magic", "cr-blank-lines"])
def test_a_cell_with_ipython_syntax_is_named_by_its_own_line_numbers(box, cell, line):
    """IPython drops leading blank lines, joins a magic continued by backslashes and makes a cell magic's body a
    string: the student's message still names the line of the cell they wrote."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.bound, name="A")
    assert f"line {line}" in outcome.load_errors[0], outcome.load_errors


def test_get_ipython_is_a_stand_in_shell_on_the_notebooks_namespace(box):
    """Jupyter gives every notebook get_ipython(): its magics that run code run it in the notebook's namespace, a
    shell command gives no lines, anything else does nothing (red-u6, pass 19: NameError, 10.82/18)."""
    cell = ("ip = get_ipython()\nX = ip.run_line_magic('time', '1 + 1')\nip.run_cell_magic('capture', '', 'Y = 2')\n"
            "Z = [ip.getoutput('ls'), ip.system('ls'), ip.run_line_magic('config', 'A.b = 1'),\n"
            "     ip.kernel.do_shutdown(True), type(ip).__name__, list(ip.getoutput('ls').grep('x'))]\n"
            "RESULT = [X, Y, Z]")
    assert box.call([Cell("c", cell)], sandbox_probes.value, name="RESULT").value == [
        2, 2, [[], None, None, None, "ZMQInteractiveShell", []]]


def test_ipythons_modules_are_quiet_stand_ins_even_once_its_transformer_ran(box):
    """Every module under IPython answers every name, and what display() shows never reaches the output (Jupyter
    sends it to the page): a 300 KB picture within a 64 KB output limit. The transformer the sandbox loads for
    `%time` is not the package the notebook imports."""
    cell = ("%time A = 1\nimport IPython, sys\nfrom IPython.display import display, Audio, update_display\n"
            "from IPython.core.display_functions import display as shown\nfrom IPython.core.display import HTML\n"
            "handle = display(Audio(b'x' * 300_000), display_id=True)\nhandle.update(HTML('x' * 300_000))\n"
            "update_display(1, display_id='a')\nshown(b'x' * 300_000)\nIPython.display.clear_output()\n"
            "STANDINS = [getattr(IPython, '__file__', None), [m for m in sys.modules if 'inputtransformer' in m]]")
    outcome = box.call([Cell("c", cell)], sandbox_probes.value, name="STANDINS")
    assert outcome.ok and not outcome.load_errors and outcome.value == [None, []], outcome


@pytest.mark.parametrize("cell", ["from IPython.display import *\ndisplay(Markdown('**Exercise 1**'))\nSHOWN = HTML",
                                  "import IPython\nSHOWN = IPython.__version__"], ids=["star-import", "version"])
def test_a_right_cell_taking_names_from_ipythons_modules_as_jupyter_gives_them_runs(box, cell):
    """red-f8 (pass 20): Jupyter's `from IPython.display import *` binds Markdown, HTML, Image, display (IPython.display
    has them all), and IPython.__version__ is a string; the stand-in modules answer names only when asked by name, so
    the star binds nothing (a right exercise_count cell showing Markdown, 17/18: "name 'Markdown' is not defined")."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.bound, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome.load_errors


@pytest.mark.parametrize("cells", [["%%capture cap\nprint(32 * 65 + 10 * 33)", "SHOWN = int(cap.stdout) == 2410"],
                                   ["T = %timeit -o -n1 -r1 sum(range(10))", "SHOWN = T.best >= 0"],
                                   ["%env SEED=3", "import os\nSHOWN = os.environ['SEED'] == '3'"],
                                   ["32 * 65 + 10 * 33", "SHOWN = _ == 2410"],
                                   ["1", "x = 2", "None", "3", "SHOWN = (_, __, ___) == (3, 1, '')"],
                                   ["1", "2;  # a semicolon: no output", "SHOWN = _ == 1"],
                                   ["%%capture --no-stdout cap\nprint('seen')\nimport sys\nprint('err', file=sys.stderr)",
                                    "SHOWN = (cap.stdout, cap.stderr) == ('', 'err\\n')"],
                                   ["T = %timeit -q 1", "SHOWN = T is None"]],
                         ids=["capture-stdout", "timeit-result", "env", "last-output", "outputs-before",
                              "semicolon-quiet", "capture-flags", "timeit-without-o"])
def test_what_a_magic_gives_back_in_jupyter_a_right_cell_can_read_in_the_sandbox(box, cells):
    """red-f8 (pass 20): Jupyter's %%capture binds what the body printed (cap.stdout), `%timeit -o` returns a
    TimeitResult and `%env A=1` sets os.environ; the stand-in shell binds a Quiet, the statement's value and
    nothing, so a right Exercise 1 read back from cap.stdout scored 17/18 (the public checks: all pass). A cell's last
    expression is Jupyter's output `_` for the next cell: `count_64_32_10 = _` below a right count, 17/18 (NameError;
    the public checks' own shell gives '', "count_64_32_10 is a str")."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome.load_errors


@pytest.mark.parametrize("cell", ["import asyncio\n\n\nasync def count():\n    await asyncio.sleep(0)\n    return 2410\n\n\n"
                                  "SHOWN = await count() == 2410",
                                  "async def numbers():\n    yield 2410\n\nasync for n in numbers():\n    SHOWN = n == 2410",
                                  "import asyncio\n\n\nasync def count():\n    await asyncio.sleep(0.01)\n    return 2410\n\n\n"
                                  "SHOWN = await asyncio.gather(count(), asyncio.create_task(count())) == [2410, 2410]"],
                         ids=["await", "async-for", "timer-and-task"])
def test_a_cells_top_level_await_runs_as_in_jupyter(box, cell):
    """red-j10 (pass 21): Jupyter runs a cell's top-level `await` (IPython's autoawait, on by default: run_cell
    compiles with PyCF_ALLOW_TOP_LEVEL_AWAIT and runs the coroutine); the sandbox compiles the cell as a module,
    "'await' outside function": a right Exercise 1 `count_64_32_10 = await count()` scores 17/18."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


@pytest.mark.parametrize("cells", [["import asyncio\n\n\nasync def count():\n    return 2410\n\n\n"
                                    "task = asyncio.ensure_future(count())\nloop = asyncio.get_running_loop()\n"
                                    "SHOWN = await task == 2410 and task.get_loop() is loop"],
                                   ["import asyncio\nloop = asyncio.get_running_loop()", "await asyncio.sleep(0)\n"
                                    "SHOWN = asyncio.get_running_loop() is loop"],
                                   ["import asyncio\n\n\nasync def count():\n    return 2410\n\n\n"
                                    "try:\n    asyncio.run(count())\nexcept RuntimeError as error:\n"
                                    "    SHOWN = 'running event loop' in str(error)"]],
                         ids=["await-cell", "plain-cell", "asyncio-run"])
def test_every_cell_runs_on_the_notebooks_event_loop_as_in_jupyter(box, cells):
    """red pass 21 F3: ipykernel runs every cell on its running loop (IPython's run_cell_async awaits a cell with
    top-level `await` whole there); the sandbox ran only the awaiting statements on its loop, so
    asyncio.ensure_future() and get_running_loop() above the `await` raised "no running event loop" (a right
    Exercise 1 scored 17/18), and asyncio.run(), which fails in any Jupyter cell, ran."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


def test_a_cell_that_raises_stop_iteration_on_the_event_loop_is_told_so(box):
    """A cell runs inside a coroutine on the loop; raised out of one, StopIteration becomes a RuntimeError (PEP 479),
    which IPython's run_code never lets happen (it catches the cell's error inside its coroutine): so neither does
    the sandbox, and `next(iter([]))` at a cell's top level is told as what it raised."""
    outcome = box.call([Cell("c", "SHOWN = 1\nnext(iter([]))")], sandbox_probes.value, name="SHOWN")
    assert outcome.value == 1 and outcome.load_errors == ["cell c: raised StopIteration (line 2)"], outcome


@pytest.mark.parametrize(("cells", "error"), [
    (["from __future__ import barry_as_FLUFL", "SHOWN = 1 <> 2"], ""),
    (["from __future__ import barry_as_FLUFL", "%time SHOWN = 1 <> 2"], ""),
    (["from __future__ import annotations", "%%time\ndef f(x: Undefined):\n    pass\nSHOWN = f.__annotations__ == "
      "{'x': 'Undefined'}"], ""),
    (["from __future__ import barry_as_FLUFL", "SHOWN = True\nSHOWN = 1 != 2"], "use '<>' instead of '!='"),
    (["SHOWN = 'ran'\nfrom __future__ import barry_as_FLUFL\nSHOWN = 1 <> 2"], "syntax error")],
    ids=["cell-below", "under-time", "annotations-under-time", "not-equal-below", "same-cell"])
def test_barry_as_flufl_holds_for_the_cells_below_as_in_ipython(box, cells, error):
    """red pass 21 F5: IPython parses a cell with its compiler's future flags (CachingCompiler.ast_parse), so once a
    cell imported barry_as_FLUFL the cells below may write `<>` and not `!=`; the cell that imports it is parsed
    before it runs, without it (IPython 9.18: a SyntaxError, nothing of the cell runs). The sandbox parsed each cell
    with no future flag: `<>` below the import raised SyntaxError. IPython's %time compiles with its shell's compiler
    too, so a notebook's future imports hold in a magic's statement (`from __future__ import annotations` also)."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    if not error:
        assert outcome.value is True and not outcome.load_errors, outcome
    else:  # the whole cell is a syntax error: none of it ran
        assert not outcome.ok and len(outcome.load_errors) == 1 and error in outcome.load_errors[0], outcome


@pytest.mark.parametrize("cell", ["def f(x: int) -> None:\n    pass\nSHOWN = f.__annotations__['x'] is int",
                                  "%%time\ndef f(x: int) -> None:\n    pass\nSHOWN = f.__annotations__['x'] is int",
                                  "try:\n    def f(x: Undefined):\n        pass\n    SHOWN = False\nexcept NameError:\n    SHOWN = True"],
                         ids=["plain", "under-time", "undefined-name"])
def test_a_cells_annotations_are_evaluated_as_in_jupyter(box, cell):
    """red-f8 (pass 20): compile() inherits the future flags of the code that calls it, and child.py and
    ipython_shell.py begin with `from __future__ import annotations`: every cell ran with postponed annotations
    (strings, never evaluated), where Jupyter (Python 3.11, no such import in the notebook) evaluates them: an
    annotation naming nothing raises NameError there and nothing here."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


def test_a_notebooks_own_future_import_holds_for_the_cells_below_as_in_jupyter(box):
    """red-j10 (pass 21): Jupyter compiles every cell with the future flags the cells above turned on (IPython's
    CachingCompiler is a codeop.Compile, which keeps them); the sandbox compiles each cell on its own
    (dont_inherit). A right notebook whose module cell begins `from __future__ import annotations` and whose Linear
    has a method annotated `-> Linear` runs whole in Jupyter and scores 13/18: "name 'Linear' is not defined"."""
    cells = [Cell("module", "from __future__ import annotations\n\nclass Module:\n    pass"),
             Cell("linear", "class Linear(Module):\n    def same(self, other: Linear) -> bool:\n        return True\n\n\n"
                            "SHOWN = Linear.same.__annotations__ == {'other': 'Linear', 'return': 'bool'}")]
    outcome = box.call(cells, sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


@pytest.mark.parametrize("cell", ["[ins] In [3]: SHOWN = True", "# Exercise 1\n[nav] In [3]: SHOWN = True\n",
                                  "\u2028SHOWN = True\n"],
                         ids=["first-line", "second-line", "leading-line-separator"])
def test_a_cell_ipythons_clean_up_changes_runs_as_jupyter_runs_it(box, cell):
    """red-j10 (pass 21): IPython's ipython_prompt strips a vi-mode prompt (`[ins] In [3]: `) on a cell's first or
    second line, and leading_empty_lines drops a first line that str.splitlines ends at U+2028 (or U+0085, \x1c);
    the grader's reading (ipython_cleanup) does both too, but the sandbox's pre-check (_COULD_BE) sees neither, so
    the cell runs untransformed: "syntax error on line 2", a right Exercise 1 scored 17/18 while the grader's
    reading says the cell binds count_64_32_10."""
    outcome = box.call([Cell("c", cell)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


@pytest.mark.parametrize("cells", [["SHOWN = True\r5"], ["count = 2410\rcount", "SHOWN = _ == 2410"]],
                         ids=["runs", "shown"])
def test_a_cell_whose_lines_end_in_a_bare_cr_runs_as_in_jupyter(box, cells):
    """red-j10 (pass 21): Python and IPython break lines at a bare CR too; ipython_outputs._quiet looks for the cell's
    last expression's line among its "\n" lines: IndexError, which fails the whole cell. A right Exercise 1 whose
    lines end in CR and which shows count_64_32_10 at its end scores 17/18, "raised IndexError: list index out of
    range": the grader's own fault, told as the student's cell's."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


def test_a_file_written_by_writefile_is_importable_as_in_jupyter(box):
    """Jupyter's %%writefile writes the file in the notebook's folder, which is on sys.path: the sandbox writes it
    in the session's working folder and imports it from there."""
    program = [Cell("a", "%%writefile helper_written.py\ndef helper():\n    return 42\n"),
               Cell("b", "import helper_written\nHELPED = helper_written.helper()")]
    assert box.call(program, sandbox_probes.value, name="HELPED").value == 42


CLEANUP_CELLS = ["    def f():\n        pass\n    g = 1", ">>> def f():\n...     pass", "In [1]: x = 1\n   ...: y = 2",
                 "\r\n    x = 1\r\n", "\x0c\n    x = 1", "  >>> a\n  ... b\n  c", 'def f():\n    """\n    >>> f()\n    """\n    ...',
                 ">>> x = '''\n... a\n... '''", '"""\n>>> x\n"""\n>>> y = 1\n... z', "x = 1\nIn [2]: y", "\tx = 1\n  y = 2",
                 "[nav] In [4]: z = 3", "    x = '''\n>>> kept\n    '''"]


@pytest.mark.parametrize("cell", CLEANUP_CELLS)
def test_the_graders_clean_up_of_a_cell_is_ipythons(cell):
    """The grader's reading starts from a cell cleaned up as IPython cleans it before reading its syntax (leading
    blank lines, a dedent of the whole cell, doctest and IPython prompts): the same text as IPython's own
    cleanup_transforms give, on cells of each kind (red-f8, pass 20: an indented or prompted cell was read as it
    stood, so its helper was never lent)."""
    from IPython.core import inputtransformer2

    lines = (cell if cell.endswith("\n") else cell + "\n").splitlines(keepends=True)
    for transform in inputtransformer2.TransformerManager().cleanup_transforms:
        lines = transform(lines)
    assert ipython_cleanup.cleaned(cell).lstrip("\n") == "".join(lines).lstrip("\n")


def test_the_graders_clean_up_is_linear_where_ipythons_is_not():
    """IPython's doctest prompt stripper copies a line's text before each triple quote on it: 300 KB of them after
    a `>>>` line cost it 15 s. The grader's clean-up reads only a line's first one; a cell magic's body is read again
    as a cell (IPython runs it as one), 30,000 of them nested read at most 8 deep (no recursion past it)."""
    started = time.process_time()
    namespace_lines(">>> x\n" + " " * 150_000 + '"""' * 50_000)
    assert _binds(namespace_lines("%%capture\n" * 30_000 + "x = 1"), "x") is False
    for line in ("x = " * 100_000, "x =" + " " * 300_000, "a, " * 100_000 + "=", "import " + " " * 300_000 + "z"):
        assert _binds(line, "zz") is False  # red-b12 3: targets and imports
    assert time.process_time() - started < 1


def test_ipythons_transformer_runs_in_the_sandbox_on_the_submissions_time_never_in_the_graders():
    """IPython's transformer is superlinear on hostile input (100 magics atop 300 KB of lines: about a minute):
    the grader's own reading of a cell is linear, and the sandbox's run of it is bounded by the cell's limit."""
    cell = "%time x = 1\n" * 100 + "y = 1\n" * 50_000
    started = time.process_time()
    assert _binds(namespace_lines(cell), "x") and _binds(namespace_lines(cell), "y")
    assert not _binds(namespace_lines("%time x = 1\n" + " " * 300_000 + "z"), "z")  # one line, no assignment in it
    assert time.process_time() - started < 1
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=0.5)) as sandbox:
        outcome = sandbox.call([Cell("c", cell)], sandbox_probes.bound, name="y")
    assert outcome.limit == "time" and "cell c did not finish within 0.5 s" in outcome.reason, outcome


CODE = """\
def loop():
    while True:
        pass
def leave():
    import os
    os._exit(3)
def quit():
    import sys
    sys.exit(0)
def hog():
    import numpy as np
    return np.ones(50 * 10**9 // 8).sum()
def chatter():
    while True:
        print("x" * 10**6)
def crash():
    import ctypes
    ctypes.string_at(0)
def daemon():
    import subprocess
    subprocess.Popen(["sleep", "313"], start_new_session=True)
    return 1
"""


def call(box: Sandbox, function: str):
    return box.call([Cell("tricks", CODE + f"result = {function}()")], sandbox_probes.value, name="result")


@pytest.mark.parametrize("function, reason, limit", [
    ("leave", "ended the process (os._exit(3)?)", ""),
    ("crash", "crashed (SIGSEGV)", ""),
])
def test_a_cell_that_misbehaves_at_load_ends_in_one_line(box, function, reason, limit):
    started = time.monotonic()
    outcome = call(box, function)
    assert not outcome.ok and reason in outcome.reason and outcome.limit == limit
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("function, reason", [
    ("loop", "did not finish within 1 s of CPU time (an infinite loop?)"),
    ("chatter", "printed more than the output limit allows"),
])
def test_a_cell_over_its_time_or_output_limit_at_load_stops_only_that_cell(box, function, reason):
    """red-c26 X35-c26-2, X35-c26-15 (pass 35): the loader stops a cell where it runs once it used its CPU time or
    printed past the output limit, and the cells below run, as the public checks' runner stops one (the session used
    to end the load there: every check of every part failed, 0/18 for a student's own longer training cell). The cell
    below runs with its own allowance, and neither the loader's timer nor its handler reads as one the cell left."""
    started = time.monotonic()
    outcome = box.call([Cell("tricks", CODE + f"result = {function}()"), Cell("after", "x = 2")], sandbox_probes.value,
                       name="x")
    assert outcome.ok and outcome.value == 2, outcome
    assert outcome.load_errors == [f"cell tricks: {reason}"], outcome
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("cell", [
    "import signal\nsignal.signal(signal.SIGPROF, signal.SIG_DFL)\n",
    "import signal\nsignal.signal(signal.SIGPROF, lambda *args: None)\n",
    "import signal\nsignal.signal(signal.SIGPROF, lambda *args: None)\nsignal.setitimer(signal.ITIMER_PROF, 5)\n",
], ids=["handler-as-before", "handler-of-its-own", "handler-and-timer-of-its-own"])
def test_the_loaders_own_cpu_timer_is_never_read_as_one_a_cell_left(box, cell):
    """The loader arms ITIMER_PROF with a SIGPROF handler of its own for each cell (child._run_limited) and disarms it
    before it looks for what the cell left (cell_runner.left_running): a cell that sets SIGPROF's handler as it was
    before (SIG_DFL, at which the loader's timer would end the process), or one of its own, leaves nothing running,
    and so does one that arms ITIMER_PROF in the loader's place (disarmed with it: its handler never runs); the next
    cell runs. (Before, the loader's timer, left armed for a cell's own handler, was read as "a timer armed".)"""
    outcome = box.call([Cell("prof", cell), Cell("after", "x = 2")], sandbox_probes.value, name="x")
    assert outcome.ok and outcome.value == 2 and outcome.load_errors == [], outcome


def test_a_cell_that_catches_the_loaders_stop_and_runs_on_ends_the_load(box):
    """A cell whose bare `except` catches the loader's stop at its CPU time and loops on: the session's own limit
    per cell, a little looser (worker.LOADING_GRACE), ends the load there, as before the loader stopped cells."""
    started = time.monotonic()
    spin = "while True:\n    try:\n        while True:\n            pass\n    except:\n        pass\n"
    outcome = box.call([Cell("tricks", spin), Cell("after", "x = 2")], sandbox_probes.value, name="x")
    assert not outcome.ok and outcome.limit == "time", outcome
    assert "cell tricks did not finish within 1 s of CPU time" in outcome.reason, outcome
    assert time.monotonic() - started < 8


def test_a_cell_that_calls_sys_exit_at_load_stops_only_that_cell(box):
    """As in Jupyter, whose kernel catches SystemExit (nbgrader's autograde runs the next cells): E13-1."""
    outcome = box.call([Cell("tricks", CODE + "result = quit()"), Cell("after", "x = 2")], sandbox_probes.value,
                       name="x")
    assert outcome.ok and outcome.value == 2, outcome
    assert outcome.load_errors == ["cell tricks: quit called sys.exit(0) (line 9 of its cell), which stops the cell there"]


def test_exit_that_ends_the_kernel_stops_its_cell_and_is_named_as_called(box):
    """red-c15 X24-c15-5, measured again by fix-exits (nbclient 0.11, ipykernel 7.4): exit() ends the kernel 0.1 s
    later, so nbgrader cannot grade the notebook; the grade stops its cell only, the cells below run, naming the call
    the notebook made. exit(True) and quit(3) keep the kernel, and nothing happens; a module the notebook wrote finds
    no builtin exit, as IPython's BuiltinTrap hides it."""
    cells = [Cell("a", "exit()\nx = 1\n"), Cell("b", "quit(3)\nexit(True)\nimport builtins\n"
                                                      "hidden = hasattr(builtins, 'exit') or hasattr(builtins, 'quit')\n")]
    outcome = box.call(cells, sandbox_probes.value, name="hidden")
    assert outcome.ok and outcome.value is False, outcome
    assert outcome.load_errors == ["cell a: called exit() (line 1), which stops the cell there"]


def test_an_exception_at_load_ends_only_its_cell(box):
    outcome = box.call([Cell("a", "x = 1 / 0"), Cell("b", "hog()")], sandbox_probes.value, name="x")
    assert outcome.load_errors[0] == "cell a: raised ZeroDivisionError: division by zero (line 1)"
    assert "NameError" in outcome.load_errors[1]


def test_memory_beyond_the_limit_is_refused(box):
    outcome = call(box, "hog")
    assert "hog ran out of memory" in outcome.load_errors[0]


def test_a_checks_state_does_not_leak_into_the_next(box):
    program = [Cell("state", "counter = [0]")]
    assert [box.call(program, sandbox_probes.bump).value for _ in range(3)] == [1, 1, 1]


def test_processes_the_student_starts_are_ended(box):
    assert call(box, "daemon").value == 1  # the daemon is running now
    box.call([Cell("other", "x = 0")], sandbox_probes.value, name="x")  # a new program ends the old one
    time.sleep(0.2)
    assert not [args for args in command_lines() if "sleep 313" in args]


def test_a_loop_in_a_fresh_batch_costs_its_call_alone_and_the_loader_goes_on(box):
    calls = [(sandbox_probes.parent, {}), (sandbox_probes.run, {"name": "loop"}), (sandbox_probes.parent, {}),
             (sandbox_probes.value, {"name": "x"})]
    started = time.monotonic()
    before, looped, after, x = box.call_many([Cell("tricks", CODE + "x = 7")], calls, fresh=True)
    assert looped.limit == "time" and looped.reason == "the check did not finish within 1 s of CPU time (an infinite loop?)"
    assert before.ok and after.ok and before.value == after.value  # the same loader: nothing was loaded again
    assert x.value == 7 and time.monotonic() - started < 5  # its 1 s of CPU time, at a busy machine's pace


def test_a_submission_that_ran_out_of_time_runs_ahead_of_the_others_until_its_session_ends(box):
    """A time-out marks the submission the class will wait for: the kernel runs its later checks first (a loader
    forked after it; the batch's own next child only when the worker heard of the time-out before the loader forked
    it, a race no grade depends on), and the next submission's session starts at the usual priority."""
    calls = [(sandbox_probes.priority, {}), (sandbox_probes.run, {"name": "loop"}), (sandbox_probes.priority, {})]
    box.begin()
    before, looped, after = box.call_many([Cell("tricks", CODE)], calls, fresh=True)
    later = box.call([Cell("other", "x = 0")], sandbox_probes.priority)  # a new loader, forked from the session
    box.end()
    next_submission = box.call([Cell("other", "x = 0")], sandbox_probes.priority)
    assert looped.limit == "time"
    hurried = HURRIED_NICE if holds_capability(CAP_SYS_NICE) else before.value
    assert (later.value, next_submission.value) == (hurried, before.value)
    assert after.value in (before.value, hurried)


def test_a_loader_that_student_code_wedged_is_stopped_by_the_worker_and_the_batch_goes_on(box):
    wedge = ("import selectors\ndef spin(*args):\n    while True:\n        pass\n"
             "selectors.PollSelector.select = spin\nx = 7")  # the loader's timer waits through it
    started = time.monotonic()
    first, second = box.call_many([Cell("wedge", wedge)], [(sandbox_probes.value, {"name": "x"})] * 2, fresh=True)
    assert first.limit == second.limit == "time" and "did not finish within 1 s of CPU time" in first.reason
    assert time.monotonic() - started < 15  # each stopped a CPU second after its limit, not by the 10 s backstop


@pytest.mark.parametrize("fresh", [False, True])
def test_a_check_stopped_by_the_wall_clock_backstop_runs_again_once_then_says_so(fresh):
    sleeper = "import time\ndef nap():\n    time.sleep(60)\nstarted = 1"
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=0.5)) as sandbox:
        started = time.monotonic()
        napped, where = sandbox.call_many([Cell("sleeper", sleeper)], [(sandbox_probes.run, {"name": "nap"}),
                                                                       (sandbox_probes.value, {"name": "started"})],
                                              fresh=fresh)
        took = time.monotonic() - started
    assert napped.limit == "time" and napped.reason == (
        "the check did not finish within 1 s of wall-clock time (not counting waits for a CPU), though it used less "
        "than its 0.5 s of CPU time: waiting or sleeping?")
    assert 2 <= took < 4  # two backstops of 2 x 0.5 s: it ran twice
    # After it, a batch that shares one process stops; one whose calls run a child each goes on.
    assert where.value == 1 if fresh else (where.not_run and
                                           where.reason == "not run: an earlier check of this part ran out of time")


# A wedged machine, simulated in the worker (tests/wedge/): (a) confinement that never ends, (b) a kernel that
# refuses the filter, (c) a kernel that kills the loader while it confines itself, (d) a killed process never reaped.
MACHINE_FAULTS = {
    "confinement that never ends": "wedge.never_confined",
    "filter refused": "wedge.filter_refused",
    "loader killed while confined": "wedge.loader_killed",
    "killed process never reaped": "wedge.never_reaped",
    "no process for a loader": "wedge.loader_fork_refused",
}


def test_each_cell_of_a_load_has_its_own_cpu_allowance():
    """red-c24 X33-c24-5 (pass 33): the loader's soft CPU limit was set once for the whole load (seconds + 2), though
    the session times each cell on its own and docs/grading.md gives each cell `seconds`: three cells of 2 s of a 3 s
    limit were killed on the third ("used more CPU time than the limit allows"), 0/18. Here four cells of 0.9 s each
    under a 1 s limit (3.6 s, past the 3 s one allowance) load, as each is within its own."""
    busy = "import time\nstarted = time.process_time()\nwhile time.process_time() - started < 0.9:\n    pass\n"
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=1)) as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell(str(n), busy) for n in range(4)] + [Cell("end", "DONE = 1\n")],
                               sandbox_probes.value, name="DONE")
    assert outcome.value == 1, outcome


@pytest.mark.parametrize("wedge", MACHINE_FAULTS.values(), ids=MACHINE_FAULTS.keys())
def test_a_machine_fault_is_the_graders_failure_within_a_bound_never_a_checks_answer(wedge):
    # its own time-out, were the machine sound (the 0/18 of a wedge): the session's, for a loop that catches the
    # loader's stop of the cell and runs on (the loader stops a plain loop itself, and the load goes on)
    looping = Cell("loop", "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n"
                           "        pass")
    with Sandbox(modules={"sandbox_probes": PROBES}, path=[ROOT / "tests"], preload=[wedge],
                 limits=Limits(seconds=1)) as sandbox:
        sandbox.begin()
        started = time.monotonic()
        with pytest.raises(RuntimeError, match=r"^the submission's sandbox failed: .*: the grading machine's fault, "
                                               r"not the notebook's$"):
            sandbox.call([looping], sandbox_probes.value, name="x")
        assert time.monotonic() - started < 30  # a 1 s limit, and 10 s for a killed process, twice at most


def test_a_session_the_kernel_killed_ends_its_namespaces_parent_by_the_same_signal():
    from autograder.sandbox.isolation import _mirror

    parent = os.fork()
    if parent == 0:  # the process outside the namespaces, which waits for the session
        try:
            session = os.fork()
            if session == 0:  # the session, process 1 of its namespaces, killed (as the OOM killer may pick it)
                os.kill(os.getpid(), signal.SIGKILL)
            _mirror(session)
        finally:
            os._exit(99)
    _, status = os.waitpid(parent, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status


@pytest.mark.parametrize("budgets,kills_before,kills_after,outcome", [
    (["memory budget"], 1, 2, "the notebook's sandbox was killed by the kernel: the submission's processes together "
                              "used their memory budget of 200 MB"),
    # The budget's OOM killer killed a process of the submission's before this request (its last word said so):
    # the session's death during the request is still the machine's.
    (["memory budget"], 1, 1, None),
    ([], 0, 0, None),
])
def test_a_session_killed_during_a_check_is_the_memory_budgets_when_its_cgroup_killed_meanwhile_else_the_graders(
        budgets, kills_before, kills_after, outcome):
    from autograder.sandbox.protocol import Ended

    sandbox = Sandbox(modules={}, isolation={"path": "isolation.py", "budgets": {"memory_mb": 200}})
    sandbox.session = sandbox.submission = True
    sandbox.asked, sandbox.oom_kills = time.monotonic(), kills_before
    if outcome is None:
        with pytest.raises(RuntimeError, match=r"^the submission's sandbox failed: .*: the grading machine's fault"):
            sandbox._outcomes(Ended(budgets, kills_after), 2, 10.0)
    else:
        answers = sandbox._outcomes(Ended(budgets, kills_after), 2, 10.0)
        assert [(a.ok, a.reason, a.limit) for a in answers] == [(False, outcome, "memory budget")] * 2
    assert not sandbox.session and sandbox.submission  # the next call goes on in a new session of the same worker


def test_a_loader_the_memory_budget_killed_before_its_first_cell_is_the_submissions_not_the_graders():
    with Sandbox(modules={"sandbox_probes": PROBES}, path=[ROOT / "tests"], preload=["wedge.loader_oom_killed"],
                 limits=Limits(seconds=1)) as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("seven", "x = 7")], sandbox_probes.value, name="x")
        sandbox.end()
    assert (outcome.ok, outcome.reason) == (False, "the notebook's process was killed by the kernel before its first "
                                                   "cell: the submission's processes together used their memory "
                                                   "budget of 1024 MB")


def test_a_loader_the_kernel_holds_when_the_session_ends_is_the_graders_failure():
    with Sandbox(modules={"sandbox_probes": PROBES}, path=[ROOT / "tests"], preload=["wedge.never_reaped"],
                 limits=Limits(seconds=1)) as sandbox:
        assert sandbox.call([Cell("seven", "x = 7")], sandbox_probes.value, name="x").value == 7
        with pytest.raises(RuntimeError, match=r"^the submission's sandbox failed: the loader \d+ had not ended 10 s "
                                               r"after it was killed \(the kernel holds it\)"):
            sandbox.end()  # the grade its answers would make is not kept: Grader.grade raises with it


def test_a_worker_the_kernel_holds_after_its_kill_is_named_not_waited_for_without_end(monkeypatch):
    sandbox = Sandbox(modules={"sandbox_probes": PROBES})
    sandbox.start()
    worker = sandbox.worker

    def held(timeout: float | None = None) -> int:
        raise subprocess.TimeoutExpired(worker.args, timeout)

    monkeypatch.setattr(worker, "wait", held)  # its kill never takes
    try:
        with pytest.raises(RuntimeError, match=f"^the sandbox worker {worker.pid} had not ended 10 s after it was "
                                               r"killed \(the kernel holds it\): the grading machine's fault"):
            sandbox.close()
    finally:
        monkeypatch.undo()
        worker.kill()
        worker.wait()


# Forty processes woken together every 10 ms: each waits on the run queue for the others, seconds of waits a second
# between them, for a few milliseconds of CPU time, while the check itself sleeps. (The filter denies pinning them to
# one CPU: seccomp.py.)
HERD = """\
import os, time
def nap():
    for _ in range(40):
        if os.fork() == 0:
            while True:
                time.sleep(0.01 - time.time() % 0.01)
    time.sleep(60)
started = 1"""


def test_processes_that_wait_for_a_cpu_side_by_side_do_not_hold_the_wall_clock_backstop_off():
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=0.5)) as sandbox:
        started = time.monotonic()
        napped = sandbox.call([Cell("herd", HERD)], sandbox_probes.run, name="nap")
        took = time.monotonic() - started
    assert napped.limit == "time" and "wall-clock time" in napped.reason, napped
    assert took < 6  # two backstops of 2 x 0.5 s (it runs again once), not the minutes its CPU time would allow


def test_the_folder_student_code_starts_in_goes_with_the_sandbox_even_after_its_worker_was_killed():
    sandbox = Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=1))
    leave = "import os\nopen('left', 'w').write('x')\nfolder = os.getcwd()"
    folder = Path(sandbox.call([Cell("leave", leave)], sandbox_probes.value, name="folder").value)
    assert (folder / "left").read_text() == "x"
    os.kill(sandbox.worker.pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match="the grading machine's fault"):  # finds its worker gone: the grader's
        sandbox.call([Cell("again", "x = 2")], sandbox_probes.value, name="x")
    assert sandbox.call([Cell("again", "x = 2")], sandbox_probes.value, name="x").value == 2  # a new one, same folder
    sandbox.close()
    del sandbox
    gc.collect()
    assert not folder.exists()


def test_a_worker_that_gives_no_word_in_time_is_said_to_be_late_not_ended(monkeypatch):
    """A worker that is not ready by STARTUP_SECONDS (a loaded machine's imports, or a start held up, as a stale
    uid's sweep once was: red-a13 X23-1) is killed and named so, not as one that ended by itself."""
    import autograder.sandbox as sandbox_module

    monkeypatch.setattr(sandbox_module, "STARTUP_SECONDS", 0.01)  # no worker imports numpy so fast
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=1)) as sandbox:
        with pytest.raises(RuntimeError, match="the sandbox worker was not ready within 0.01 s"):
            sandbox.begin()


SPARSE = 8192  # read-only pages 2 MB apart: each one the zero page (no RSS) and a page of page tables of its own


def _sparse_child(ready_w: int) -> None:
    import mmap
    # read-only and private: no commit charge, however large
    area = mmap.mmap(-1, SPARSE << 21, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=mmap.PROT_READ)
    for index in range(SPARSE):
        area[index << 21]
    os.write(ready_w, b"x")
    time.sleep(60)


def test_memory_without_a_cgroup_counts_page_tables_and_the_sessions_looks_are_spaced_by_their_cost():
    """The session's looks are not charged to the submission (their number would follow the machine's load:
    test_busy_machine.py); what one costs sets how long until the next (isolation.LOOK_SPACING)."""
    from autograder.sandbox import cputime
    from autograder.sandbox.isolation import LOOK_SPACING, Budgets, Isolation

    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            _sparse_child(ready_w)
        finally:
            os._exit(0)
    os.close(ready_w)
    try:
        assert os.read(ready_r, 1) == b"x"
        tables = SPARSE * 4096  # at least: a page of page tables for each page read
        resident = int(Path(f"/proc/{child}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        proportional = int(next(line.split()[1] for line in Path(f"/proc/{child}/smaps_rollup").read_text().splitlines()
                                if line.startswith("Pss:"))) * 1024
        assert cputime.tree_memory(os.getpid(), 1 << 40) >= resident + tables  # RSS, within the bound
        assert cputime.tree_memory(os.getpid(), 0) >= proportional + tables  # PSS, past it
        isolation = Isolation(Budgets(memory_mb=1), [], "uid")
        before, started = time.monotonic(), time.thread_time()
        assert isolation.over(os.getpid()) == "memory budget"
        cost, after = time.thread_time() - started, time.monotonic()
        assert before + cputime.TICK <= isolation.looked <= after + max(cputime.TICK, LOOK_SPACING * cost)
        assert isolation.over(os.getpid()) == ""  # not looked at again so soon
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(ready_r)


@pytest.mark.parametrize("events, killed_by_budget", [
    ("max 12\noom 1\noom_kill 1\n", 1),  # the budget ran out and its OOM killer killed
    ("max 0\noom 0\noom_kill 1\n", 0),  # the machine-wide OOM killer killed a process of the submission's
    ("max 5\noom 1\noom_kill 3\n", 1),  # one kill the budget's, two the machine's
])
def test_only_the_budgets_own_oom_kills_count_as_the_memory_budget(tmp_path, events, killed_by_budget):
    """cgroup v2's memory.events counts in oom_kill the machine-wide OOM killer's kills too: a machine short of
    memory is the grader's failure, never the submission's memory budget (isolation._Cgroups.events and hit)."""
    from autograder.sandbox.isolation import _Cgroups

    (tmp_path / "memory.events").write_text(events)
    cgroups = object.__new__(_Cgroups)
    cgroups.counters = {"memory.events": [os.open(tmp_path / "memory.events", os.O_RDONLY)]}
    try:
        assert cgroups.events()["oom_kill"] == killed_by_budget
        assert ("memory budget" in cgroups.hit()) == (killed_by_budget > 0)
    finally:
        os.close(cgroups.counters["memory.events"][0])


@pytest.mark.parametrize("oom_control, failcnt, killed_by_budget", [
    ("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "40\n", 1),  # the budget ran out and its OOM killer killed
    # a limit above the kit's cgroups (a container's --memory, the machine) ran out: its OOM killer chose a process of
    # the submission's, which had never reached its budget (failcnt 0)
    ("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "0\n", 0),
])
def test_on_cgroup_v1_only_the_budgets_own_oom_kills_count_as_the_memory_budget(tmp_path, oom_control, failcnt,
                                                                                  killed_by_budget):
    """cgroup v1's memory.oom_control counts in oom_kill every OOM kill of the cgroup's processes, the machine's
    and a parent cgroup's too (the kernel's __oom_kill_process counts each in the victim's cgroup): as on v2, a
    machine or container short of memory is never the submission's memory budget (red-b7 pass 20: beside a
    neighbour holding its memory in many small processes, an honest check of 300 MB under a container's limit was
    told "the submission's processes together used their memory budget of 1024 MB")."""
    from autograder.sandbox.isolation import _Cgroups

    (tmp_path / "memory.oom_control").write_text(oom_control)
    (tmp_path / "memory.failcnt").write_text(failcnt)
    cgroups = object.__new__(_Cgroups)
    cgroups.counters = {name: [os.open(tmp_path / name, os.O_RDONLY)] for name in ("memory.oom_control", "memory.failcnt")}
    try:
        assert cgroups.events()["oom_kill"] == killed_by_budget
        assert ("memory budget" in cgroups.hit()) == (killed_by_budget > 0)
    finally:
        for fds in cgroups.counters.values():
            os.close(fds[0])


@pytest.mark.parametrize("budget_kills, other_kills, status, described", [
    (0, 1, signal.SIGKILL, None),  # the machine's (or a container's) OOM killer, the budget never ran out
    (1, 1, signal.SIGKILL, "was killed by the kernel: the submission's processes together used their memory budget"),
    (0, 1, signal.SIGSEGV, "crashed (SIGSEGV)"),  # not a kill: the OOM killer chose another process
    (0, 0, signal.SIGKILL, "was killed (SIGKILL), by none of the grader's limits"),  # its own doing (os.kill)
])
def test_a_check_an_oom_killer_not_the_budgets_killed_is_the_graders_failure(budget_kills, other_kills, status,
                                                                            described):
    """A machine short of memory, or a limit above the kit's cgroups (a container's --memory), has the kernel's
    OOM killer choose a process, perhaps an honest check of a submission that kept within its budget, beside a
    neighbour that holds its memory in many small processes: a kill no budget of the grader's made, counted in
    the cgroup all the same (isolation._Cgroups.events). It was the check's failure; it is the grading machine's,
    which the grader raises (red-b7 pass 20, M1)."""
    from types import SimpleNamespace

    from autograder.sandbox import worker

    session = object.__new__(worker._Session)
    counts = {"oom_kill": budget_kills, "other_oom_kill": other_kills, "fork_refused": 0}
    session.isolation = SimpleNamespace(cgroups=SimpleNamespace(events=lambda: counts),
                                        budgets=SimpleNamespace(memory_mb=1024))
    session.seen = dict.fromkeys(counts, 0)
    if described is None:
        with pytest.raises(RuntimeError, match="not for the submission's memory budget: the grading machine's fault"):
            session.describe_status(status)
    else:
        assert session.describe_status(status).startswith(described)

def test_the_time_a_session_waits_for_the_graders_next_request_is_not_the_submissions():
    """The wall-clock backstop charges what the submission's processes spend waiting or sleeping, not the time its
    session sits idle between two requests while the grader's own process explains failures, starts the reference's
    sandbox, or is not running at all (an instructor's Ctrl-Z, swapped out): red-p2 pass 16, #1."""
    cells = [Cell("honest", "x = 1")]
    # the course folder on the path as the grader gives it (policy.py): the notebook imports engine.py from it
    with Sandbox(modules={"sandbox_probes": PROBES}, path=[ASSIGNMENT.release_dir],
                 limits=Limits(seconds=1, memory_mb=256, output_kb=64)) as sandbox:
        sandbox.begin(1.0)  # a budget of 1 s of CPU time: its backstop is 2 s of wall-clock time
        first = sandbox.call(cells, sandbox_probes.value, name="x")
        time.sleep(2.5)  # the grader's side, between two requests of the submission's
        second = sandbox.call(cells, sandbox_probes.value, name="x")
        sandbox.end()
    assert (first.ok, first.value) == (True, 1)
    assert (second.ok, second.value) == (True, 1), second.reason


SPINNER = """\
def spin():
    import os, resource, signal
    pid = os.fork()
    if pid == 0:  # past its CPU rlimit, a process that ignores SIGXCPU and raises the soft limit goes on
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        while True:
            pass
    return pid
"""


def test_a_process_left_spinning_between_requests_is_charged_and_killed_once_it_spends_the_budget():
    """Between two requests no check's limit runs: the session charges what the submission left running and kills
    it once the budget is spent, while the grader is still away; the next request runs nothing."""
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=1)) as sandbox:
        sandbox.begin(1.0)
        spinner = sandbox.call([Cell("spinner", SPINNER)], sandbox_probes.run, name="spin")
        deadline = time.monotonic() + 30  # the grader's side: the spinner's 1 s of CPU time at a busy machine's pace
        while (alive := os.path.exists(f"/proc/{spinner.value}")) and time.monotonic() < deadline:
            time.sleep(0.2)
        later = sandbox.call([Cell("other", "x = 1")], sandbox_probes.value, name="x")
        sandbox.end()
    assert spinner.ok and not alive
    assert later.not_run and later.reason == "not run: the submission used its 1 s of CPU time", later


def test_a_budget_spent_in_one_part_leaves_none_for_the_parts_after_it():
    """One budget per submission: once a part's checks spent the backstop, a later part (another program) runs
    nothing (red-p2 pass 16 saw parts pass after it: they were graded before it, the grader grading parts in
    their files' order, the report showing them in the notebook's)."""
    napper = "import time\ndef nap():\n    time.sleep(0.7)\n    return 1"
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=1)) as sandbox:
        sandbox.begin(1.0)  # its backstop: 2 s of wall-clock time; each nap is under the check's own 2 s
        naps = [sandbox.call([Cell("napper", napper)], sandbox_probes.run, name="nap") for _ in range(6)]
        later = sandbox.call([Cell("other", "x = 1")], sandbox_probes.value, name="x")
        sandbox.end()
    stopped = [nap.ok for nap in naps].index(False)  # the third at the earliest; later on a busy machine
    assert stopped >= 2 and naps[stopped].limit == "time budget", naps[stopped]
    assert later.not_run and "the submission took 2 s of wall-clock time" in later.reason, later


STOPPED_GRADER = """\
import sys
import sandbox_probes
import autograder.sandbox
from autograder.sandbox import Cell, Limits, Sandbox
autograder.sandbox.MARGIN_SECONDS = 2.0  # the grader waits for a check's reply 6 s: 2 x 2 x the 1 s budget, and this
# two naps (1.4 s) well within the session's 2 s of backstop, which the 8 s stop alone would pass
napper = "import time\\ndef nap():\\n    time.sleep(0.7)\\n    return 'x' * 300_000\\nready = 1"  # more than a pipe holds
with Sandbox(modules={"sandbox_probes": sys.argv[1]}, limits=Limits(seconds=1)) as sandbox:
    sandbox.begin(1.0)
    assert sandbox.call([Cell("napper", napper)], sandbox_probes.value, name="ready").ok  # started and loaded
    print("asking", flush=True)
    outcomes = [sandbox.call([Cell("napper", napper)], sandbox_probes.run, name="nap") for _ in range(2)]
    print([(outcome.ok, outcome.reason) for outcome in outcomes], flush=True)
"""


def test_a_grader_stopped_during_a_check_leaves_its_session_running_and_charges_nothing():
    """Ctrl-Z stops the terminal's foreground job, the grader's process group: the sandbox's worker has a group of
    its own, so the session serves the check it was on and then waits for the grader's next request, which its
    backstop does not count (a stopped session would count the 8 s stop against its 2 s of backstop); and the
    grader's wait for the reply does not count its own stop either (8 s against its 6 s)."""
    grader = subprocess.Popen([sys.executable, "-c", STOPPED_GRADER, str(PROBES)], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True, start_new_session=True, env={**os.environ, "PYTHONPATH": f"{ROOT}/tests"})
    try:
        assert grader.stdout.readline() == "asking\n"
        time.sleep(0.3)  # within the first nap
        os.killpg(grader.pid, signal.SIGSTOP)
        time.sleep(8)
        os.killpg(grader.pid, signal.SIGCONT)
        out, _ = grader.communicate(timeout=60)
    finally:
        grader.kill()
    assert out.strip() == "[(True, ''), (True, '')]"


def test_a_grade_id_of_another_type_is_a_cell_the_student_added():
    """The intake refuses such metadata (test_malformed); the program never depends on that."""
    notebook = release_notebook()
    notebook.cells.insert(0, new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": ["sgd"]}}))
    program = program_from_notebook(notebook, ASSIGNMENT.source, release_notebook())
    assert program[0].source == "x = 1"


@pytest.mark.parametrize("folder", ["/srv/cours-été/release", "/home/józef/kurs/.venv", "/srv/kit with space/release"])
def test_a_mount_point_of_the_sessions_root_is_read_back_as_its_path(monkeypatch, folder):
    """The session remounts every mount point of its root read-only by the path /proc/self/mountinfo gives, which
    writes a path's bytes as they are but for space, tab, newline and backslash (octal escapes). A course (or its
    venv) under a folder whose name is not ASCII was read as mojibake (`cours-Ã©tÃ©`): the mount failed, no session
    could start at the namespaces levels, and `make grade` refused the class or, where the interpreter is reachable,
    graded it at uid+landlock, weaker than the machine allows (red-b7 pass 20)."""
    import io

    from autograder.sandbox import isolation

    written = folder.replace(" ", "\\040")
    line = f"42 41 0:5 {written} {written} ro,nosuid,nodev,relatime shared:1 - ext4 /dev/vda1 rw\n"
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *args, **kwargs: io.StringIO(line)
                        if path == "/proc/self/mountinfo" else real_open(path, *args, **kwargs))
    assert isolation._mount_points() == [(folder, isolation.MS_NOSUID | isolation.MS_NODEV)]


def test_a_worker_that_ends_during_a_check_for_no_reason_of_the_submissions_is_the_graders_failure():
    """The worker is the grader's (root, outside the submission's namespaces and cgroups: student code can neither
    signal it nor write its replies), so one that ends while it serves a request (the machine's OOM killer chose it,
    an administrator's kill, a fault of its own) is a machine fault like a session killed during a check: no check's
    answer. It was every call's failed check, "stopped the grader's worker process", a 0 written down as the grade
    (red-b7 pass 20: the worker sent SIGKILL from outside during a sleeping check)."""
    import threading

    code = Cell("slow", "import time\ndef work():\n    time.sleep(2)\n    return 'answered'")
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=3)) as sandbox:
        sandbox.begin()
        assert sandbox.call([code], sandbox_probes.run, name="work").value == "answered"
        threading.Timer(1.0, lambda: os.kill(sandbox.worker.pid, signal.SIGKILL)).start()
        with pytest.raises(RuntimeError, match="the grading machine's fault"):
            outcome = sandbox.call([code], sandbox_probes.run, name="work")
            raise AssertionError(f"a check's answer: {outcome}")


def test_a_thread_kept_waiting_for_a_cpu_is_charged_its_running_time_by_the_backstop(monkeypatch):
    """The kernel adds a thread's wait for a CPU to its schedstat (run_delay) only when the thread runs again, so a
    thread that a much heavier neighbour lets run for 2 ms every 200 ms shows its waits in jumps of 198 ms, between
    readings 50 ms apart. Stopwatch took each jump off only up to the time since the reading before, so three
    quarters of the waits counted as running: an honest check burning 1 s of CPU on a CPU shared with a neighbour 28
    times its weight (an autogroup at nice -15, standing for 28 busy sessions, a hog's processes each in a session
    of its own) failed "did not finish within 6 s of wall-clock time ... waiting or sleeping?" (37 s; at nice -20,
    25.5 s twice), the same check at a ninth of the neighbour's weight passed (red-b7 pass 20)."""
    # it ran 2 ms every fourth reading: the kernel adds the 198 ms it waited before
    seconds = _backstop_seconds(monkeypatch, 1, lambda reading: 0.198 if reading % 4 == 0 else 0.0)
    assert seconds < 0.5  # it ran 60 ms in all (the last reading's wait not seen yet: at most 50 ms more)


def test_waits_of_threads_side_by_side_are_taken_off_the_backstop_once(monkeypatch):
    """Fifty threads woken together on one CPU each wait for the others: their waits, summed, grow fifty times
    faster than the clock. Only the time during which some thread waited is taken off, so the backstop still
    counts the time they all sleep (a herd that waits 10 ms of every 50 is charged 4.8 s of 6)."""
    assert _backstop_seconds(monkeypatch, 50, lambda reading: 0.01) == pytest.approx(6 * 0.8)


def _backstop_seconds(monkeypatch, threads: int, waited: Callable[[int], float]) -> float:
    """What cputime.Stopwatch charges after 6 s of readings 50 ms apart, at each of which every one of `threads`
    threads shows waited(reading) seconds more of waits for a CPU."""
    from autograder.sandbox import cputime

    clock = {"now": 0.0, "waited": 0.0}
    monkeypatch.setattr(cputime, "time_now", lambda: clock["now"])
    monkeypatch.setattr(cputime, "tree_waits", lambda pid: {(pid, str(task)): clock["waited"] for task in range(threads)})
    stopwatch = cputime.Stopwatch(1234)
    for reading in range(1, 121):
        clock["now"], clock["waited"] = reading * 0.05, clock["waited"] + waited(reading)
        stopwatch.seconds()
    return stopwatch.seconds()


def test_the_graders_last_resort_leaves_out_waits_for_a_cpu_but_not_cpu_time(monkeypatch):
    """The grader kills a worker that gives no reply within what the limits allow: a wedged one. Counted in
    wall-clock time, a check a neighbour 88 times its weight starved (11 ms of CPU a second) reached it and was
    charged the request's wall-clock time, its whole budget ("stopped: the sandbox gave no answer within 58 s"),
    though its session's backstop left the waits out (fix-sx pass 20). It counts as that backstop does; processes
    that keep each other waiting still use CPU time, which it counts."""
    import autograder.sandbox as sandbox_package
    from autograder.sandbox import cputime

    clock = {"now": 0.0, "waited": 0.0, "cpu": 0.0}
    monkeypatch.setattr(cputime, "time_now", lambda: clock["now"])
    monkeypatch.setattr(cputime, "tree_waits", lambda pid: {(pid, "1"): clock["waited"]})
    monkeypatch.setattr(sandbox_package, "tree_seconds", lambda pid: clock["cpu"])
    waited = sandbox_package._Waited(1234)
    for second in range(1, 89):  # the grader looks every second
        clock["now"], clock["waited"], clock["cpu"] = second, clock["waited"] + 0.989, clock["cpu"] + 0.011
        waited.seconds()
    assert waited.seconds() < 2
    clock["cpu"] += 100
    assert waited.seconds() >= 100


# red-j10 (pass 21) J1, J4, J7, J8, J9: the stand-in shell and the notebook's namespace behave as Jupyter's
@pytest.mark.parametrize("cells", [["_ = 32 * (64 + 1) + 10 * (32 + 1)", "64 * 32", "SHOWN = _ == 2410"],
                                   ["for _ in range(3):\n    pass", "32 * (64 + 1) + 10 * (32 + 1)", "SHOWN = _ == 2"],
                                   ["a, _ = divmod(7, 2)", "5", "SHOWN = (_, __) == (1, '')"]],
                         ids=["assigned-then-shown", "loop-then-shown", "unpacked-then-shown"])
def test_an_underscore_the_notebook_bound_itself_stays_as_in_jupyter(box, cells):
    """red-j10 (pass 21): once a notebook binds `_` itself, Jupyter's displayhook stops moving `_`, `__`, `___`
    (IPython's DisplayHook.update_user_ns: update_unders is False when a user's `_` is not the hook's own); the
    sandbox's displayhook moved them always. A right Exercise 1 (`_ = 2410`, a shown `64 * 32`, then
    `count_64_32_10 = _`) scores 17/18, and a wrong one whose `_` a loop bound scores 18/18 (2 in Jupyter)."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome.load_errors


@pytest.mark.parametrize("cells", [["helper = 'count_helper'", "%%writefile {helper}.py\nCOUNT = 2410\n",
                                    "from count_helper import COUNT\nSHOWN = COUNT == 2410"],
                                   ["name = 'cap'", "%%capture $name\nprint(2410)", "SHOWN = int(cap.stdout) == 2410"],
                                   ["value = '2410'", "%env COUNT=$value", "import os\nSHOWN = os.environ['COUNT'] == '2410'"]],
                         ids=["writefile-braces", "capture-dollar", "env-dollar"])
def test_a_magics_line_is_expanded_from_the_notebooks_names_as_in_jupyter(box, cells):
    """red-j10 (pass 21): IPython expands `$name` and `{expression}` in a magic's line from the notebook's names
    (InteractiveShell.var_expand, for every magic but the few marked @no_var_expand: %time, %timeit, %prun, %debug);
    the stand-in shell takes the line as written. A right Exercise 1 that writes its helper with
    `%%writefile {helper}.py` and imports it scores 17/18 ("No module named 'count_helper'")."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


@pytest.mark.parametrize("cells", [["A = 1", "%reset -f", "SHOWN = 'A' not in globals()"],
                                   ["A = 1", "%xdel A", "SHOWN = 'A' not in globals()"]],
                         ids=["reset", "xdel"])
def test_a_magic_that_deletes_the_notebooks_names_deletes_them_as_in_jupyter(box, cells):
    """red-j10 (pass 21; fix-sb left %reset as doing nothing): Jupyter's %reset -f empties the notebook's namespace and
    %xdel deletes a name; the stand-in shell does nothing, so a notebook with `%reset -f` above cell linear, every
    later cell a NameError in Jupyter, scores 18/18."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


@pytest.mark.parametrize("cells", [["get_ipython().push({'A': 1})", "SHOWN = A == 1"],
                                   ["get_ipython().run_cell('A = 1')", "SHOWN = A == 1"],
                                   ["get_ipython().ex('A = 1')", "SHOWN = A == 1"],
                                   ["A = 1", "SHOWN = get_ipython().ev('A + 1') == 2"],
                                   ["SHOWN = get_ipython().user_global_ns is globals()"],
                                   ["%%writefile helper_run.py\nA = 1\n", "%run helper_run.py", "SHOWN = A == 1"],
                                   ["%%writefile shown_helper.py\ndef f():\n    display(1)\n    return get_ipython() is not None\n",
                                    "import shown_helper\nSHOWN = shown_helper.f()"]],
                         ids=["push", "run-cell", "ex", "ev", "user-global-ns", "writefile-then-run", "builtins-in-a-module"])
def test_the_shells_own_ways_to_the_namespace_work_as_in_jupyter(box, cells):
    """red-j10 (pass 21): Jupyter's shell binds names with push(), run_cell(), ex(), reads them with ev() and
    user_global_ns; the stand-in answers each with a quiet None (Quiet.__getattr__), so a right Exercise 1
    `get_ipython().push({'count_64_32_10': 2410})` scores 17/18 ("the notebook defines no count_64_32_10"). %run of
    a file %%writefile made binds its names in Jupyter too (fix-sb left %run doing nothing), and a module the
    notebook wrote finds display() and get_ipython() among the builtins, where IPython puts them while a cell runs."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


@pytest.mark.parametrize("cells", [["import pickle\nclass Box:\n    def __init__(self, v):\n        self.v = v",
                                    "SHOWN = pickle.loads(pickle.dumps(Box(3))).v == 3"],
                                   ["import sys\nA = 1", "SHOWN = sys.modules['__main__'].A == 1"]],
                         ids=["pickle", "main-module"])
def test_the_notebooks_namespace_is_the_main_module_as_in_jupyter(box, cells):
    """red-j10 (pass 21): in Jupyter sys.modules['__main__'] is the notebook's own module (its names the cells'),
    so pickle finds `__main__.Linear`; in the sandbox it is the worker's module: a right Exercise 1 that saves and
    loads its layers with pickle scores 17/18 ("Can't pickle <class '__main__.Linear'>: attribute lookup")."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


@pytest.mark.parametrize("cells", [["y = 1", "%time s = '{y}$y'", "SHOWN = s == '{y}$y'"],
                                   ["def f():\n    x = 'fx'\n    get_ipython().run_line_magic('env', 'K=$x')\nf()",
                                    "import os\nSHOWN = os.environ['K'] == 'fx'"],
                                   ["A = 1\n_b = 2", "%reset -s -f", "SHOWN = ('A' in globals(), '_b' in globals()) == (False, True)"],
                                   ["A = 1", "%reset -f", "SHOWN = get_ipython() is not None and '_' not in globals() "
                                                          "and 'A' not in globals() and __name__ == '__main__'"],
                                   ["A = [1]\nB = A\nC = [1]", "%xdel A", "SHOWN = ('B' in globals(), C) == (False, [1])"],
                                   ["r = get_ipython().run_cell('1/0')\n"
                                    "SHOWN = (r.success, type(r.error_in_exec).__name__) == (False, 'ZeroDivisionError')"],
                                   ["r = get_ipython().run_cell('6 * 7')\nSHOWN = (r.result, _) == (42, 42)"],
                                   ["%%writefile bad_run.py\nA = 1\nraise ValueError('x')\n", "%run bad_run.py\nB = 2",
                                    "SHOWN = (A, B) == (1, 2)"],
                                   ["%%writefile name_run.py\nN = __name__\nimport sys\nARGV = sys.argv[1:]\n",
                                    "%run name_run.py a b", "SHOWN = (N, ARGV, '__file__' in globals()) == ('__main__', ['a', 'b'], False)"],
                                   ["SHOWN = (_, __, ___) == ('', '', '')"]],
                         ids=["time-not-expanded", "expanded-from-the-callers-locals", "reset-soft", "reset-hard",
                              "xdel-every-name-of-the-object", "run-cell-error", "run-cell-result", "run-error-goes-on",
                              "run-as-main-with-args", "unders-begin-empty"])
def test_the_shells_magics_and_api_follow_ipythons_rules(box, cells):
    """The stand-in shell does what IPython 9.18's InteractiveShell does with each (every expected value checked with
    its run_cell): %time's line is not expanded (@no_var_expand), a magic's line is expanded from the caller's locals
    too; %reset -s deletes the notebook's own names, %reset -f every name but the shell's own, `_` too; %xdel every
    name of the object; run_cell keeps the error that ended its cell (the caller goes on) and the value it showed;
    %run runs the file as `__main__` with its arguments, an error in it printed (the cell goes on); `_`, `__`, `___`
    begin as ''."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True and not outcome.load_errors, outcome


FILL_PROCESS_BUDGET = ("import os, time\nfor _ in range(20):\n    try:\n        pid = os.fork()\n    except OSError:\n"
                       "        break\n    if pid == 0:\n        time.sleep(60)\n        os._exit(0)\nx = 1")


@pytest.mark.parametrize("level", [pytest.param("uid", marks=needs_level("uid")), None])
def test_sleepers_that_fill_the_process_budget_are_the_notebooks_doing_at_every_level(level):
    """red-m10 F1b. Where no pids cgroup counts the submission's processes (`uid`, `uid+landlock`), its process
    budget is the uid's RLIMIT_NPROC (Isolation.drop). A notebook whose sleepers fill it leaves the loader no process
    for the check: at `namespaces+cgroups` that reads "process budget", but without the cgroup's count the session
    calls it "not graded: ... the grading machine's fault, not the notebook's" with no limit, and the check is
    scored as failed with those words (the same budget, the same notebook, two owners)."""
    from test_isolation import box

    with box(level, budget_processes=16) as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("student", FILL_PROCESS_BUDGET)], sandbox_probes.value, name="x")
        sandbox.end()
    assert (outcome.limit, outcome.reason) == (
        "process budget", "could not start: the submission's processes used its process budget of 16"), sandbox.level


def _judging_session(monkeypatch, refused_by_cgroup: int = 0):
    """A session as the worker forks it, at namespaces+cgroups, whose pids cgroup counted `refused_by_cgroup`
    refused forks: what `judge` reads is its own (the loader's line is only the notebook's data)."""
    from types import SimpleNamespace

    from autograder.sandbox import worker

    session = object.__new__(worker._Session)
    counts = {"oom_kill": 0, "other_oom_kill": 0, "fork_refused": refused_by_cgroup}
    cgroups = SimpleNamespace(events=lambda: counts, hit=lambda: [])
    session.isolation = SimpleNamespace(cgroups=cgroups, budgets=SimpleNamespace(processes=16, memory_mb=1024),
                                        process_limit=lambda: None, uid=os.getuid())
    session.seen = dict.fromkeys(counts, 0)
    session.config = SimpleNamespace(limits=Limits(seconds=1, memory_mb=256, output_kb=64))
    monkeypatch.setattr(worker.process_limits, "process_limit_of", lambda pid: 1 << 62)
    return worker, session


def test_a_check_child_no_process_could_be_forked_for_is_charged_from_what_the_session_sees(monkeypatch):
    """red-m10 F1/F2. "fork" is the loader's word, and student code may write it (or lower its own RLIMIT_NPROC,
    or replace os.fork) - so the session decides whose doing it was from what it reads itself: the pids cgroup's
    count, the loader's limits in /proc, and a fork of its own. Only when the session cannot fork either is it
    the machine's (no score); never a failed check in the grader's words, never the notebook's word for it."""
    from autograder.sandbox.protocol import Result

    claim = Result(False, None, "not graded: the grading machine's fault, not the notebook's: grade it again", "fork")
    worker, session = _judging_session(monkeypatch, refused_by_cgroup=1)
    assert (session.judge(claim, 1, 60).reason, session.judge(claim, 1, 60).limit) == (
        "could not start: the submission's processes used its process budget of 16", "process budget")
    worker, session = _judging_session(monkeypatch)
    monkeypatch.setattr(worker.process_limits, "process_limit_of", lambda pid: 1)
    assert session.judge(claim, 1, 60).reason == "could not start: the notebook lowered its own process limit (RLIMIT_NPROC) to 1"
    worker, session = _judging_session(monkeypatch)  # the session forked a process of its own: the machine had one
    assert session.judge(claim, 1, 60).reason.startswith("could not start: the notebook's process could not start one")
    monkeypatch.setattr(worker.forks, "fork", lambda: (_ for _ in ()).throw(worker.forks.GraderForkError(11, "none")))
    with pytest.raises(RuntimeError, match="could not start a check's process .*: the grading machine's fault"):
        session.judge(claim, 1, 60)


GRADERS_WORDS = "not graded: the grader could not start a process for this check; the grading machine's fault"


@pytest.mark.parametrize("limit, wall, status, reason", [
    ("", False, None, 'sent an answer in words of its own (written to the grader\'s pipe?): "' + GRADERS_WORDS + '"'),
    ("memory", False, None, 'sent an answer in words of its own (written to the grader\'s pipe?): "'
                            + GRADERS_WORDS + '"'),
    ("time", False, None, "the check did not finish within 1 s of CPU time (an infinite loop?)"),
    ("time", True, None, "the check did not finish within 2 s of wall-clock time (not counting waits for a CPU), "
                         "though it used less than its 1 s of CPU time: waiting or sleeping?"),
    ("output", False, None, "printed more than the output limit allows"),
    ("", False, 0, "ended the process (os._exit(0)?) before the check finished"),
])
def test_a_reason_a_process_of_student_code_sent_never_speaks_in_the_graders_words(monkeypatch, limit, wall, status,
                                                                                   reason):
    """red-m10 F2. An answer line is written by a process that ran student code (a loader or check child), which
    may write its own: the words of every limit are the session's, and any other reason is kept only in a shape
    the loader writes (describe_exception's, where the notebook's text follows "raised Type:"), else quoted."""
    from autograder.sandbox.protocol import Result

    _, session = _judging_session(monkeypatch)
    judged = session.judge(Result(False, None, GRADERS_WORDS, limit, wall, status), 1, 60)
    assert (judged.reason, judged.limit, judged.wall) == (reason, limit, wall)


def test_a_wall_clock_stop_the_session_could_not_have_seen_is_the_notebooks_word_not_a_free_rerun(monkeypatch):
    """red-m10 F2. The wall-clock backstop's stop has the call run again once, alone. A line that claims it 0.1 s
    after the call could start (WALL_FACTOR times 1 s is the soonest it can pass) is the notebook's own word: no
    rerun, no limit, quoted."""
    from autograder.sandbox.protocol import Result

    _, session = _judging_session(monkeypatch)
    judged = session.judge(Result(False, None, GRADERS_WORDS, "time", True), 1, 0.1)
    assert (judged.limit, judged.wall) == ("", False)
    assert judged.reason.startswith('sent an answer in words of its own (written to the grader\'s pipe?): "the check ')


CHECK_PIPES = ("def pipes():\n    import os, stat, fcntl\n    found = 0\n    for fd in range(3, 256):\n        try:\n"
               "            mode, flags = os.fstat(fd).st_mode, fcntl.fcntl(fd, fcntl.F_GETFL)\n        except OSError:\n"
               "            continue\n        found += stat.S_ISFIFO(mode) and flags & os.O_ACCMODE == os.O_WRONLY\n"
               "    return found")


def test_a_check_child_can_write_to_its_own_answer_pipe_alone(box):
    """red-m10 F2: the check child held the loader's results pipe too, so code the check calls could write lines
    to the session past the loader. It holds only the pipe its answers go to (the loader reads them as its)."""
    outcome = box.call([Cell("pipes", CHECK_PIPES)], sandbox_probes.run, name="pipes")
    assert (outcome.ok, outcome.value) == (True, 1), outcome.reason


WRITE_OWN_LINE = ("import os, stat, fcntl, json\nfor fd in range(3, 64):\n    try:\n"
                  "        writable = stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & 3 == 1\n"
                  "    except OSError:\n        continue\n    if writable:\n"
                  "        os.write(fd, json.dumps(LINE).encode() + b'\\n')\n        os._exit(0)\n")


@pytest.mark.parametrize("line, reason", [
    ({"event": "fatal", "reason": GRADERS_WORDS, "limit": ""},
     f'cell forger sent an answer in words of its own (written to the grader\'s pipe?): "{GRADERS_WORDS}"'),
    ({"event": "loaded", "errors": [GRADERS_WORDS, "cell forger: raised ValueError: " + GRADERS_WORDS]}, None),
])
def test_what_a_loader_says_of_its_cells_is_the_notebooks_data(line, reason):
    """red-m10 F2, while the program loads: a cell may write the loader's own line (its end, its cells' errors) to
    the pipe it holds. The session names the cell itself and keeps the rest only in a shape the loader writes."""
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=1, memory_mb=256, output_kb=64)) as sandbox:
        outcome = sandbox.call([Cell("forger", f"LINE = {line!r}\n" + WRITE_OWN_LINE)], sandbox_probes.value, name="x")
    if reason is not None:
        assert outcome.reason == reason
    else:
        assert outcome.load_errors == [
            f'sent an answer in words of its own (written to the grader\'s pipe?): "{GRADERS_WORDS}"',
            "cell forger: raised ValueError: " + GRADERS_WORDS]


def test_a_wait_from_before_a_thread_took_its_leaders_id_is_not_taken_off_the_backstop_again(monkeypatch):
    """A thread that is not its process's leader takes the leader's id when it execs (the kernel's de_thread): the
    key (pid, pid) then reads that thread's run_delay, all it ever waited. Stopwatch took the jump as a wait that
    ended at that reading, so a wait banked long before (while loading, and taken off there already) was taken off
    again: a sleeping cell with a 1 s backstop beside six such processes, each revealing 1 s every 0.8 s, ran 14.4 s,
    not 2.1 s, for 2 s of CPU time (red-h9 pass 20, /work/pass20/red-h9/held_backstop.py); with the kit's 3 s limit
    and 64 processes, a few minutes per program loaded for a tenth of the budget."""
    from autograder.sandbox import cputime

    clock = {"now": 0.0}
    waits = {(7, "7"): 0.01, (7, "8"): 5.0}  # its thread banked 5 s before the stopwatch was made, then slept
    monkeypatch.setattr(cputime, "time_now", lambda: clock["now"])
    monkeypatch.setattr(cputime, "tree_waits", lambda pid: dict(waits))
    stopwatch = cputime.Stopwatch(7)
    for reading in range(1, 61):  # 3 s of readings 50 ms apart: nothing runs, nothing waits
        clock["now"] = reading * 0.05
        stopwatch.seconds()
    waits.clear()
    waits[7, "7"] = 5.0  # thread 8 execs: it is the leader now, with its own run_delay
    assert stopwatch.seconds() == pytest.approx(3.0)


@pytest.mark.parametrize("leader, gone, now, taken_off", [
    (0.01, 5.0, 0.2, 0.19),  # a thread that banked 5 s ended; the leader it never reached waited 0.19 s
    (6.0, 5.0, 6.5, 0.5),  # the leader's own reading is the larger baseline: never more than either allows
])
def test_a_leader_is_taken_off_what_it_waited_since_the_reading_before_when_one_of_its_threads_ended(
        monkeypatch, leader, gone, now, taken_off):
    """The other side of the rule for a thread that took its leader's id: a thread that ended is the leader only
    if the leader's waits now reach that thread's, and never more is taken off than either thread waited since."""
    from autograder.sandbox import cputime

    clock = {"now": 0.0}
    waits = {(7, "7"): leader, (7, "8"): gone}
    monkeypatch.setattr(cputime, "time_now", lambda: clock["now"])
    monkeypatch.setattr(cputime, "tree_waits", lambda pid: dict(waits))
    stopwatch = cputime.Stopwatch(7)
    clock["now"] = 3.0
    waits.clear()
    waits[7, "7"] = now
    assert stopwatch.seconds() == pytest.approx(3.0 - taken_off)


def test_a_process_one_walk_of_the_tree_missed_is_not_taken_off_all_it_waited_when_the_next_finds_it(monkeypatch):
    """A walk of the process tree misses a process whose parent ends meanwhile (it is between two parents) or
    whose siblings' children list it read after a thread ended: the next walk finds it, with everything it ever
    waited (red-h9 pass 20). A thread found for the first time is new, all its waits taken off, only if it started
    after the reading before; else its waits so far are its baseline."""
    from autograder.sandbox import cputime

    clock = {"now": 0.0, "ticks": 1000}
    waits = {(7, "7"): 0.0}
    started = {(9, "9"): 900, (11, "11"): 1320}  # 9 is older than the stopwatch, 11 started after the 2nd reading
    monkeypatch.setattr(cputime, "time_now", lambda: clock["now"])
    monkeypatch.setattr(cputime, "boot_ticks", lambda: clock["ticks"])
    monkeypatch.setattr(cputime, "tree_waits", lambda pid: dict(waits))
    monkeypatch.setattr(cputime, "task_started", lambda pid, task: started[pid, task])
    stopwatch = cputime.Stopwatch(7)
    clock["now"], clock["ticks"] = 3.0, 1300
    waits[9, "9"] = 5.0  # it banked 5 s long before, and the first walk missed it
    assert stopwatch.seconds() == pytest.approx(3.0)
    clock["now"], clock["ticks"] = 3.5, 1350
    waits[11, "11"] = 0.25  # new since, and waited
    assert stopwatch.seconds() == pytest.approx(3.25)


@pytest.mark.parametrize("between", [
    {(7, "7"): 0.01},  # the leader read before the exec, its thread looked for after: not found
    {(7, "7"): 0.01, (7, "8"): 0.01},  # or, for a moment, the ended old leader found under the thread's id
])
def test_a_thread_that_execs_while_the_tree_is_read_is_not_taken_off_its_waits_again(monkeypatch, between):
    """A reading walks a process's threads one by one: a thread that execs meanwhile may be found in neither, or
    its id may name the old leader until the kernel releases it. At the next reading the thread is the leader, with
    everything it ever waited: the baseline is still the largest reading of that thread, not only the last one."""
    from autograder.sandbox import cputime

    clock = {"now": 0.0}
    waits = {(7, "7"): 0.01, (7, "8"): 5.0}  # its thread banked 5 s before the stopwatch was made
    monkeypatch.setattr(cputime, "time_now", lambda: clock["now"])
    monkeypatch.setattr(cputime, "tree_waits", lambda pid: dict(waits))
    stopwatch = cputime.Stopwatch(7)
    clock["now"] = 1.0
    waits.clear()
    waits.update(between)
    stopwatch.seconds()
    clock["now"] = 1.05
    waits.clear()
    waits[7, "7"] = 5.0  # thread 8 is the leader now
    assert stopwatch.seconds() == pytest.approx(1.05)


def test_a_stopwatch_remembers_a_bounded_number_of_ended_threads_and_still_takes_off_no_wait_again(monkeypatch):
    """Every ended thread of a live process may be the leader at a later reading, so the stopwatch remembers them
    (while their waits are above the leader's). A process may start and end threads without end: past ENDED_KEPT,
    their largest wait is the leader's baseline, so nothing one of them waited before is taken off again, and the
    leader's own waits past it still are."""
    from autograder.sandbox import cputime

    clock = {"now": 0.0}
    threads = {(7, str(8 + n)): 1.0 + n / 1000 for n in range(cputime.ENDED_KEPT + 20)}
    waits = {(7, "7"): 0.0, **threads}
    monkeypatch.setattr(cputime, "time_now", lambda: clock["now"])
    monkeypatch.setattr(cputime, "tree_waits", lambda pid: dict(waits))
    stopwatch = cputime.Stopwatch(7)
    clock["now"] = 1.0
    waits.clear()
    waits[7, "7"] = 0.0  # they ended, or one of them is execing
    stopwatch.seconds()
    assert len(stopwatch.seen) <= cputime.ENDED_KEPT + 1
    clock["now"] = 1.05
    waits[7, "7"] = threads[7, "20"]  # it was thread 20
    assert stopwatch.seconds() == pytest.approx(1.05)
    clock["now"] = 2.05
    waits[7, "7"] = max(threads.values()) + 0.5  # the leader waited past the largest of them: 0.5 s of it counts
    assert stopwatch.seconds() == pytest.approx(1.55)


@pytest.mark.parametrize("stub", [
    "class Linear(Module):\n    weight: Parameter\n\n    def forward(self, x: Tensor) -> Tensor:\n"
    "        raise NotImplementedError()\n",
    "def parameters(self) -> list[\n        Parameter]:\n    raise NotImplementedError()\n",
], ids=["class-body-annotation", "annotation-over-two-lines"])
def test_a_release_stub_with_its_annotations_as_text_loads_where_no_name_they_read_is_defined(stub):
    """red-b15 X24-b15-5 (pass 24; latent: no stub of dl01_6_3 has one): annotations_as_text must make a stub load
    wherever the student's copy of its cell loads (red-b14 X23-1: cell module moved above cell parameter), so it writes
    each annotation as text. It writes only a function's one-line annotations: a class attribute's (`weight:
    Parameter`, evaluated as the class body runs) and one over two lines are left as code, so such a stub, moved above
    the cell that defines what it reads, raises NameError where the student's copy without them runs, and every part
    that takes it blank loses the class (X23-1 again, for the next assignment's stubs)."""
    namespace = {"Module": object, "Tensor": object}
    exec(compile(annotations_as_text(stub), "<stub>", "exec", dont_inherit=True), namespace)  # as a cell compiles


def _helper_notebook_cell() -> str:
    notebook = {"cells": [{"cell_type": "code", "id": "h", "metadata": {}, "source": "HELPER = 41\n", "outputs": [],
                           "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return "%%writefile helper_run.ipynb\n" + json.dumps(notebook)


def test_run_of_a_notebook_binds_its_names_in_the_grade_as_in_jupyter_and_the_public_checks(box):
    """red-b18 X27-b18-1: `%run helper.ipynb` (a notebook the notebook wrote with %%writefile) runs that notebook's
    cells in Jupyter and in the public checks (checks_shell.py hands %run to IPython, which reads .ipynb as a
    notebook): HELPER is bound. The grade's %run (ipython_names.run) reads the file as Python text, prints the error
    and binds nothing: the public checks pass a part the grade fails."""
    program = [Cell("a", _helper_notebook_cell()), Cell("b", "%run helper_run.ipynb")]
    assert box.call(program, sandbox_probes.bound, name="HELPER").value is True


def test_run_m_of_a_package_runs_its_main_in_the_grade_as_in_jupyter_and_the_public_checks(box):
    """red-b18 X27-b18-2: `%run -m pkg` runs pkg/__main__.py in IPython (the public checks and Jupyter, as
    `python -m pkg`); the grade's %run runs pkg/__init__.py instead (importlib's spec origin), so the names bound
    differ (MAIN in Jupyter and the public checks, INIT in the grade)."""
    program = [Cell("a", "import os\nos.makedirs('pkg_run_b18', exist_ok=True)"),
               Cell("b", "%%writefile pkg_run_b18/__init__.py\nINIT = 1\n"),
               Cell("c", "%%writefile pkg_run_b18/__main__.py\nMAIN = 2\n"),
               Cell("d", "import importlib\nimportlib.invalidate_caches()\n%run -m pkg_run_b18")]
    assert box.call(program, sandbox_probes.bound, name="MAIN").value is True


_FAILING_NOTEBOOK = {"cells": [{"cell_type": "code", "metadata": {}, "source": ["D = 1\n", "1/0\nE = 2"]},
                               {"cell_type": "code", "metadata": {}, "source": "F = 1"}],
                     "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.parametrize("cells", [["%%writefile bad_run.ipynb\n" + json.dumps(_FAILING_NOTEBOOK), "%run bad_run.ipynb\nAFTER = 1",
                                    "SHOWN = (D, 'E' in globals(), 'F' in globals(), 'AFTER' in globals()) == (1, False, False, False)"],
                                   ["%%writefile notjson_run.ipynb\nhello",
                                    "try:\n    get_ipython().run_line_magic('run', 'notjson_run.ipynb')\n"
                                    "except Exception as e:\n    ERR = (type(e).__name__, str(e))",
                                    "SHOWN = ERR == ('NotJSONError', \"Notebook does not appear to be JSON: 'hello\\\\n'\")"],
                                   ["%%writefile f_run.ipy\nFILE = __file__\nNAME = __name__\n%time T = 1\n", "%run f_run.ipy",
                                    "SHOWN = (FILE, NAME, T, '__file__' in globals()) == ('f_run.ipy', '__main__', 1, False)"],
                                   ["import os\nos.makedirs('pkg_args_run', exist_ok=True)", "%%writefile pkg_args_run/__init__.py\n",
                                    "%%writefile pkg_args_run/__main__.py\nimport sys\nARGS = sys.argv[1:]\n",
                                    "import importlib\nimportlib.invalidate_caches()\n%run -m pkg_args_run -v a\nFIRST = ARGS\n"
                                    "%run -n -m pkg_args_run -n -- b", "SHOWN = (FIRST, ARGS) == (['-v', 'a'], ['b'])"]],
                         ids=["notebook-error-stops-the-cell", "notebook-not-json", "ipy-in-the-namespace", "module-args"])
def test_run_of_a_notebook_a_ipy_file_or_a_module_follows_ipythons_rules(box, cells):
    """fix-run (X27-b18-1): %run of a notebook or a .ipy file runs its code cells as cells of the notebook's own, as
    IPython 9.18's safe_execfile_ipy with raise_exceptions (every expected value checked with its shell): the first
    error stops the rest and the calling cell; a file nbformat cannot read raises its error (NotJSONError, its words);
    `__file__` is the file's name meanwhile, `__name__` the notebook's. (X27-b18-2) `%run -m module args`: the words
    after the module are its arguments, as IPython puts `--` after `-m module` (unless the line has one)."""
    outcome = box.call([Cell(str(i), c) for i, c in enumerate(cells)], sandbox_probes.value, name="SHOWN")
    assert outcome.value is True, outcome


_BIND_LATER = "def _bind(*args):\n    globals()['HELPER'] = 2\n\n\n"


def test_a_stopped_cell_whose_cycle_binds_as_it_is_collected_is_read_as_binding_it(box):
    """red-a23 X32-a23-1 (pass 32): a cell can leave code that binds a name after its stop in a __del__ on a reference
    cycle, which the garbage collector runs at some later moment. (A profile hook and a call_soon callback on the
    running loop bind before the loader reads the cell, so those are seen.) The loader collects at the stop, before
    it reads the names, so a stub standing in for the cell replaces the name."""
    cell = (_BIND_LATER + "class _Late:\n    def __del__(self):\n        _bind()\n\n\n_late = _Late()\n_late.me = _late\n"
            "del _late\nraise ValueError\n")
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert "c" in outcome.stops, outcome.load_errors
    assert "HELPER" in outcome.bound["c"], outcome


def test_a_stopped_cell_that_leaves_a_hook_in_a_library_class_is_read_as_binding_every_name(box):
    """red-a26 X35-a26-12 (pass 35): left_hooks compares the hooks Python calls, the loop's own attributes and every
    loaded module's entries, but no class's attributes: a stopped cell that replaces a method of a library class
    (here asyncio.BaseEventLoop.create_task, which the notebook's loop calls to run the next cell) with one that puts
    the method back and binds HELPER is read as binding only the names its lines bound. Measured before the fix:
    bound['c'] lacks HELPER, and the next cell's run binds HELPER = 2 (the call answers 2). The same hook in
    numpy.random's entry reads as binding every name (red-a25 X34-a25-4). In a whole notebook (cell module's wrong
    Module held in a class, a right one in an added cell above, the hook binding the wrong Module): 13.59/18 with
    Exercise 1 1/1, where Jupyter (nbclient, allow_errors), whose kernel loop calls the hooked create_task too, fails
    parameters, exercise_count and lesson_numbers; after the fix (hooks() copies the loop's classes' attributes)
    12.59/18, Exercise 1 0/1."""
    cell = ("import asyncio\n_create = asyncio.BaseEventLoop.create_task\n\n\n"
            "def _hooked(self, *args, **kwargs):\n    asyncio.BaseEventLoop.create_task = _create\n"
            "    globals()['HELPER'] = 2\n    return _create(self, *args, **kwargs)\n\n\n"
            "asyncio.BaseEventLoop.create_task = _hooked\nraise ValueError\n")
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell), Cell("d", "HELPER_SEEN = HELPER\n")],
                       sandbox_probes.value, name="HELPER")
    assert "c" in outcome.stops and {"HELPER", EVERY_NAME} & set(outcome.bound["c"]), outcome


@pytest.mark.parametrize("setting, read, jupyter", [
    ("import numpy as np\nnp.seterr(all='raise')\n", "HELPER = np.geterr()['divide']\n", "raise"),
    ("import decimal\ndecimal.getcontext().prec = 5\n", "HELPER = decimal.getcontext().prec\n", 5),
], ids=["numpy-seterr", "decimal-precision"])
def test_what_a_cell_sets_in_its_context_holds_in_the_cells_below_as_in_jupyter(box, setting, read, jupyter):
    """red-a26 X35-a26-13 (pass 35): run_cell runs each cell as a task of the notebook's loop, and a task runs in a
    copy of the context, so what a cell sets in a context variable is gone at the next cell: numpy 2's error state
    (np.seterr, np.errstate's), decimal's context. Jupyter's kernel keeps it (nbclient: a cell's np.seterr(all='raise')
    prints 'raise' in the next cell's np.geterr(); decimal's prec 5 prints 5). Measured in the loader: 'warn', and 28.
    The checks' calls run in neither (the loader's own context): the reference with np.seterr(all='raise') at the end
    of cell imports and a line in Linear.forward that overflows (np.float64(1e308) * 10, unused) grades 18/18, where
    Jupyter (nbclient, allow_errors) fails test_forward and test_lesson_numbers (FloatingPointError)."""
    outcome = box.call([Cell("a", setting), Cell("d", read)], sandbox_probes.value, name="HELPER")
    assert outcome.value == jupyter, outcome


def test_what_a_cell_with_a_top_level_await_sets_in_its_context_is_gone_after_it_as_in_jupyter(box):
    """red-a26 X35-a26-13 (pass 35), the other side: ipykernel runs a cell with a top-level `await` as a task of its
    own (asyncio.ensure_future), in a copy of the kernel's context, so what it sets there is gone at the next cell.
    nbclient: after a cell's np.seterr(all='raise'), a cell `await asyncio.sleep(0)` then np.seterr(all='ignore')
    prints 'ignore', and the next cell prints 'raise'. The loader runs such a cell in a copy of the notebook's
    context too."""
    outcome = box.call([Cell("a", "import asyncio\nimport numpy as np\nnp.seterr(all='raise')\n"),
                        Cell("b", "await asyncio.sleep(0)\nnp.seterr(all='ignore')\nSEEN = np.geterr()['divide']\n"),
                        Cell("d", "HELPER = (SEEN, np.geterr()['divide'])\n")], sandbox_probes.value, name="HELPER")
    assert outcome.value == ["ignore", "raise"], outcome


def test_a_task_factory_of_the_old_signature_a_cell_sets_does_not_stop_the_cells_below(box):
    """X35-a26-13's fix runs each cell's task in the notebook's context (loop.create_task(..., context=)), which passes
    a task factory the context: one of the signature before Python 3.11, (loop, coro), raised TypeError and stopped
    every cell below unrun (measured: the next cell's HELPER unbound). Jupyter runs a cell without a task (none of the
    factory's) and its kernel calls create_task without a context: the cells below run."""
    outcome = box.call([Cell("a", "import asyncio\nasyncio.get_running_loop().set_task_factory("
                                  "lambda loop, coro: asyncio.Task(coro, loop=loop))\n"),
                        Cell("d", "HELPER = 7\n")], sandbox_probes.value, name="HELPER")
    assert outcome.value == 7 and not outcome.load_errors, outcome


_LEFT_RUNNING = {  # code a cell leaves to run at a moment of its own, and the loader's words for it
    "signal-handler": (_BIND_LATER + "import signal\nsignal.signal(signal.SIGALRM, _bind)\n"
                       "signal.setitimer(signal.ITIMER_REAL, 0.3)\nraise ValueError\n", "a timer armed"),
    "timer": ("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nsignal.setitimer(signal.ITIMER_REAL, 5)\n",
              "a timer armed"),
    "loop-callback-of-a-whole-cell": ("import asyncio\nasyncio.get_running_loop().call_later(5, print)\n",
                                      "a task or callback waiting on the event loop"),
}


@pytest.mark.parametrize("left", list(_LEFT_RUNNING))
def test_a_cell_that_leaves_code_running_ends_the_load_with_the_cell_named(box, left):
    """red-a23 X32-a23-1 (pass 32), red-a24 X33-a24-1 (pass 33): a cell (stopped or whole) that leaves a signal
    handler set, a timer armed or a callback on the event loop leaves code that may bind any name, or change any
    object, at any moment after: a part's checks raced it, and the grade changed from run to run (16.36/18 about one
    run in three, where Jupyter fails Exercise 1). The loader ends the load there, and answers every call with the cell and what it
    left: no later cell or check runs beside that code, so every run of the notebook gets the same answer; a stub
    standing in for the cell binds every name (the code it left might have bound any)."""
    cell, words = _LEFT_RUNNING[left]
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell), Cell("d", "HELPER = 3\n")], sandbox_probes.value,
                       name="HELPER")
    assert not outcome.ok and outcome.reason.startswith(f"cell c left {words} when it ended"), outcome
    assert outcome.bound.get("c") == [EVERY_NAME] and "c" in outcome.stops, outcome  # a stub in its place binds all


def test_a_cell_cannot_arm_a_posix_timer_that_interrupts_a_later_cell(box):
    """red-a26 X35-a26-9 (pass 35): left_running sees a timer through signal.getitimer only (setitimer's three), and
    a handler only where it changed. A cell armed a POSIX timer (timer_create and timer_settime through ctypes) that
    sends SIGINT 50 ms later, whose handler (Python's default_int_handler) is the one every cell started with:
    left_running saw nothing, the load went on, and a KeyboardInterrupt stopped whichever cell or line the loader was
    running by then (on a slower machine, another). Measured before the fix: cell d (`time.sleep(0.3)`, then
    HELPER = 3) stopped at its line 2, "cell d: raised KeyboardInterrupt", blamed for cell c's timer. The filter now
    denies timer_create, and timerfd_create (a descriptor that becomes readable at a moment of its own), with EPERM
    (seccomp.py): cell d runs whole."""
    cell = ("import ctypes\nimport signal\n\n\nclass _Event(ctypes.Structure):\n"
            "    _fields_ = [('value', ctypes.c_void_p), ('signo', ctypes.c_int), ('notify', ctypes.c_int),\n"
            "                ('pad', ctypes.c_char * 48)]\n\n\n_libc = ctypes.CDLL(None, use_errno=True)\n"
            "_timer = ctypes.c_void_p()\n_spec = (ctypes.c_long * 4)(0, 0, 0, 50_000_000)  # 50 ms, once\n"
            "refused = [(_libc.timer_create(1, ctypes.byref(_Event(None, signal.SIGINT, 0)), ctypes.byref(_timer)),\n"
            "            ctypes.get_errno())]\n"
            "_libc.timer_settime(_timer, 0, ctypes.byref(_spec), None)\n"
            "refused.append((_libc.timerfd_create(1, 0), ctypes.get_errno()))\n")
    later = Cell("d", "import time\ntime.sleep(0.3)\nHELPER = 3\n")
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell), later], sandbox_probes.value, name="refused")
    assert outcome.value == [[-1, errno.EPERM], [-1, errno.EPERM]] and outcome.load_errors == [], outcome


# Code a whole cell leaves waiting on the loop where left_running did not look (red-a26 X35-a26-10, X35-a26-11)
_READER_LEFT = ("import asyncio\nimport os\nimport time\n_r, _w = os.pipe()\nif os.fork() == 0:\n"
                "    time.sleep(0.1)\n    os.write(_w, b'x')\n    os._exit(0)\n\n\ndef _readable():\n"
                "    asyncio.get_running_loop().remove_reader(_r)\n    globals()['HELPER'] = 2\n\n\n"
                "asyncio.get_running_loop().add_reader(_r, _readable)\n")
_STOP_CALLBACK_FAKED = ("import asyncio\n\n\nclass _Fake:\n    def cancelled(self):\n        globals()['HELPER'] = 2\n"
                        "        return True\n\n    def get_loop(self):\n        return self\n\n"
                        "    def stop(self):\n        pass\n\n\n"
                        "asyncio.get_running_loop().call_later(0.05, asyncio.base_events._run_until_complete_cb, _Fake())\n")


@pytest.mark.parametrize("cell", [_READER_LEFT, _STOP_CALLBACK_FAKED], ids=["reader", "stop-callback-faked"])
def test_a_cell_that_leaves_a_reader_or_a_faked_stop_callback_on_the_loop_ends_the_load_with_the_cell_named(box, cell):
    """red-a26 X35-a26-10 (pass 35): left_running reads the loop's waiting code from its ready queue and its timers
    (_ready, _scheduled) only; a callback the loop calls when a descriptor becomes readable (add_reader) waits in the
    selector's map. A cell that ran whole registers one that binds HELPER on a pipe a process it forked writes to
    0.1 s later, so that it fires at a moment of its own: left_running saw nothing, the load went on, and the callback
    bound HELPER = 2 at the first poll of the loop after the write (a later cell's; Jupyter's kernel loop's: between
    cells). Measured before the fix: the call answers 2, ok. (A pipe already readable at the cell's end fires within
    the cell's own run: the loop polls once more before it stops.)

    red-a26 X35-a26-11 (pass 35): left_running passes over a waiting handle whose callback is asyncio's
    _run_until_complete_cb (_STOP_LOOP: run_until_complete's own, left when a callback raised out of the loop). A cell
    that ran whole schedules that very function 50 ms later with an argument of its own: an object whose cancelled()
    binds HELPER and whose get_loop() gives an object with a stop() that does nothing. left_running reads the handle
    as the loader's, the load goes on, and HELPER = 2 is bound at whichever cell's loop runs once 50 ms have passed (on
    a slower machine, another). Measured before the fix: the call answers 2, ok. Now only the callback whose argument
    is the loader's own future of the cell is passed over."""
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell), Cell("d", "import time\ntime.sleep(0.3)\n"),
                        Cell("e", "HELPER_SEEN = HELPER\n")], sandbox_probes.value, name="HELPER")
    assert not outcome.ok and outcome.reason.startswith(
        "cell c left a task or callback waiting on the event loop when it ended"), outcome


# What a cell replaces of what left_running looks through before it leaves code running: the module functions
# cell_runner calls (signal.getsignal and getitimer) are the notebook's modules' entries, and asyncio's
# Handle.cancelled a library class's attribute (the loop itself reads the handle's _cancelled, never the method).
_BLINDED = {
    "signal-handler-getsignal-replaced": (
        "import signal as _signal\n_handlers = {n: _signal.getsignal(n) for n in _signal.valid_signals()\n"
        "             if n not in (_signal.SIGKILL, _signal.SIGSTOP)}\n"
        "_signal.getsignal = _handlers.__getitem__\n_signal.getitimer = lambda which: (0.0, 0.0)\n",
        _LEFT_RUNNING["signal-handler"]),
    "timer-getitimer-replaced": ("import signal as _signal\n_signal.getitimer = lambda which: (0.0, 0.0)\n",
                                 _LEFT_RUNNING["timer"]),
    "loop-callback-handle-cancelled-replaced": (
        "import asyncio as _asyncio\n_asyncio.Handle.cancelled = lambda self: True\n",
        _LEFT_RUNNING["loop-callback-of-a-whole-cell"]),
}


@pytest.mark.parametrize("blinded", list(_BLINDED))
def test_a_cell_cannot_hide_what_it_leaves_running_by_replacing_what_left_running_calls(box, blinded):
    """red-a26 X35-a26-3 (pass 35): left_running reads what a cell left through functions the notebook can reach and
    replace: signal.getsignal and signal.getitimer, each an entry of a module the notebook imports too (the same
    object: cell_runner's `import signal`), and asyncio's Handle.cancelled (a class attribute; the loop runs a handle
    whose _cancelled is False whatever the method says). A cell that replaces them, then sets a SIGALRM handler
    binding HELPER 0.3 s later and raises, or arms a timer, or leaves a call_later callback, is read as leaving
    nothing running: the load goes on, the cells below run beside that code (measured before the fix: the call's
    answer is HELPER from the last cell, the outcome ok). A cell that ran whole is not even read by left_hooks, which
    would see the module entries replaced. Now left_running reads _signal's functions and Handle's slots, taken at
    import. (red-a26's fourth case, os.listdir replaced to hide a forked process, no longer applies: a process a cell
    leaves running does not end the load since X35-a26-8.)"""
    prelude, (cell, words) = _BLINDED[blinded][0], _BLINDED[blinded][1]
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", prelude + cell), Cell("d", "HELPER = 3\n")],
                       sandbox_probes.value, name="HELPER")
    assert not outcome.ok and outcome.reason.startswith(f"cell c left {words} when it ended"), outcome


@pytest.mark.parametrize("cell", [
    "import ctypes, os, platform\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "pid = libc.syscall(220 if platform.machine() == 'aarch64' else 56, 0x8000 | 17, 0, 0, 0, 0)\n"
    "if pid == 0:\n    os._exit(0)\nrefused = pid, ctypes.get_errno()\n",
    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nrefused = libc.prctl(36, 0, 0, 0, 0), ctypes.get_errno()\n",
], ids=["clone-a-sibling", "unset-the-subreaper"])
def test_a_cell_cannot_start_a_process_out_of_its_parents_sight(box, cell):
    """Every process a check starts stays below the check's own process (a subreaper), whose CPU time and waits are
    the check's: a clone whose child would be the caller's sibling (CLONE_PARENT), and unsetting
    PR_SET_CHILD_SUBREAPER, fail with EPERM (seccomp.py)."""
    outcome = box.call([Cell("a", cell)], sandbox_probes.value, name="refused")
    assert outcome.value == [-1, errno.EPERM], outcome


def test_a_cell_that_sets_a_signal_handler_and_arms_no_timer_does_not_end_the_load(box):
    """red-c26 X35-c26-1 (pass 35): a cell that sets a SIGINT handler (to stop a training loop cleanly on Ctrl-C) and
    arms no timer leaves no code that runs at a moment of its own: only the notebook's own code could signal the
    loader. The load ended there ("cell c left a signal handler set"), 0/18 for the reference with that cell, where
    Jupyter and the public checks pass every test; now it goes on."""
    cell = "import signal\n\n\ndef _stop(signum, frame):\n    raise KeyboardInterrupt\n\n\nsignal.signal(signal.SIGINT, _stop)\n"
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell), Cell("d", "HELPER = 3\n")], sandbox_probes.value,
                       name="HELPER")
    assert outcome.ok and outcome.value == 3, outcome


def test_a_checked_call_that_leaves_a_timer_armed_fails_with_that_named(box):
    """The same for the notebook's code a check calls: a method that arms a timer and returns leaves it to change
    what the next check of the same process sees; that call's answer is the failure, named."""
    cell = Cell("a", "import signal\n\n\ndef start():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                     "    signal.setitimer(signal.ITIMER_REAL, 5)\n    return 1\n")
    outcome = box.call([cell], sandbox_probes.run, name="start")
    assert not outcome.ok and outcome.reason.startswith("the notebook code this check called left a timer armed"), \
        outcome


@pytest.mark.parametrize("cell", [
    "import threading\nthreading.Thread(target=print).start()\n",
    "from concurrent.futures import ThreadPoolExecutor\nwith ThreadPoolExecutor(2) as pool:\n    list(pool.map(abs, [1]))\n",
], ids=["thread", "thread-pool"])
def test_a_thread_does_not_start_and_the_cell_says_why(box, cell):
    """red-b22 X31-b22-2 (pass 31), red-a25 X34-a25-3 (pass 34): a thread a cell leaves running binds names at moments
    of its own (16.36/18 about one run in three where Jupyter gives 11), and one cannot be told from an idle library
    thread (tqdm's monitor, an executor's workers) that an honest cell leaves: the system-call filter starts none
    (seccomp.py), so the cell stops where it starts one, named, and every run gets the same grade."""
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell), Cell("d", "HELPER = 3\n")], sandbox_probes.value,
                       name="HELPER")
    assert outcome.value == 3 and "c" in outcome.stops, outcome
    assert any("can't start new thread" in error and "grading starts no thread" in error
               for error in outcome.load_errors), outcome.load_errors


@pytest.mark.parametrize("cell", [
    _BIND_LATER + "import asyncio\n\n\nasync def _late():\n    for _ in range(3):\n        await asyncio.sleep(0)\n"
    "    _bind()\n\n\n_task = asyncio.ensure_future(_late())\nraise ValueError\n",
    _BIND_LATER + "import asyncio\nasyncio.get_running_loop().call_later(0.001, _bind)\nraise ValueError\n",
    _BIND_LATER + "import sys\n_here = sys._getframe().f_code.co_filename\n\n\n"
    "def _hook(event, args):\n    if event == 'exec' and getattr(args[0], 'co_filename', _here) != _here:\n"
    "        _bind()\n\n\nsys.addaudithook(_hook)\nraise ValueError\n",
    _BIND_LATER + "import sys\n_here = sys._getframe().f_code.co_filename\n\n\ndef _trace(frame, event, arg):\n"
    "    if frame.f_code.co_name == '<module>' and frame.f_code.co_filename != _here:\n        _bind()\n\n\n"
    "sys.settrace(_trace)\nraise ValueError\n",
    _BIND_LATER + "import builtins\n_import = builtins.__import__\n\n\ndef _late_import(*args, **kwargs):\n"
    "    _bind()\n    return _import(*args, **kwargs)\n\n\nbuiltins.__import__ = _late_import\nraise ValueError\n",
    _BIND_LATER + "import json\n_dumps = json.dumps\n\n\ndef _late(*args, **kwargs):\n    _bind()\n"
    "    return _dumps(*args, **kwargs)\n\n\njson.dumps = _late\nraise ValueError\n",
    _BIND_LATER + "import asyncio\n\n\ndef _factory(loop, coro, **kwargs):\n    _bind()\n"
    "    return asyncio.Task(coro, loop=loop, **kwargs)\n\n\nasyncio.get_running_loop().set_task_factory(_factory)\n"
    "raise ValueError\n",
], ids=["loop-task", "loop-call-later", "audit-hook", "settrace", "builtins-import", "module-function-replaced",
        "loop-task-factory"])
def test_a_stopped_cell_that_leaves_code_on_the_loop_or_an_audit_hook_is_read_as_binding_it(box, cell):
    """red-a24 X33-a24-1 / X33-a24-2 (pass 33): left_pending reads a stopped cell as binding every name when it left a
    thread, a signal handler or a timer, but not when it left a task or a timed callback on the notebook's event loop
    (cell_runner._loop, which runs again in the next cell, as ipykernel's loop runs right after the cell in Jupyter),
    nor an audit hook (sys.addaudithook: it fires on the next cell's `exec`, in Jupyter and in the loader alike), a
    trace function (sys.settrace, on the next cell's frame) or a builtins.__import__ (at the next import). Such
    a cell binds HELPER before the next cell runs, in Jupyter and in the loader's whole run, but is read as binding
    none of it."""
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert "c" in outcome.stops, outcome.load_errors
    assert {"HELPER", EVERY_NAME} & set(outcome.bound["c"]), outcome


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12's")
def test_a_stopped_cell_that_takes_a_sys_monitoring_tool_id_is_read_as_binding_every_name(box):
    """sys.monitoring (Python 3.12+) calls a tool's callbacks at later events (the next cell's calls, lines,
    returns), which may bind any name: a stopped cell that took a tool id binds every name (left_hooks)."""
    cell = "import sys\nsys.monitoring.use_tool_id(3, 'trap')\nraise ValueError\n"
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert outcome.bound["c"] == [EVERY_NAME], outcome


@pytest.mark.parametrize("cell", [
    "import email.mime.text\nimport numpy as np\nrng = np.random.default_rng(0)\nraise ValueError\n",
    "from tqdm import tqdm\nfor _ in tqdm(range(2)):\n    pass\nraise ValueError\n",
], ids=["imports-and-numpy", "tqdm"])
def test_a_stopped_cell_that_imports_and_calls_libraries_is_read_as_binding_its_own_names(box, cell):
    """A stopped cell that imports a module new to the process (its package gains the submodule), or draws from numpy
    and tqdm, replaced no entry of a module loaded before it: it is read as binding the names it bound, not every
    name (left_hooks)."""
    outcome = box.call([Cell("a", "HELPER = 1\n"), Cell("c", cell)], sandbox_probes.bound, name="HELPER")
    assert "c" in outcome.stops, outcome.load_errors
    assert EVERY_NAME not in outcome.bound["c"], outcome


def test_a_displayhook_a_cell_sets_is_not_called_for_the_cells_below_it(box):
    """red-a24 X33-a24-3 (pass 33): IPython's DisplayTrap sets sys.displayhook to the shell's own while each cell runs
    and puts back the one before it at the cell's end, so a hook a cell sets takes that cell's own last value only
    (nbclient: HOOKED is 1, and the next cell's 2 is shown as usual). The loader sets its DisplayHook once
    (ipython_display.install) and never again, so a later cell's last value (any expression, print(...)'s None too)
    runs the notebook's hook: HOOKED is 2, code run after its cell ended."""
    cells = [Cell("a", "import sys\nsys.displayhook = lambda v: globals().__setitem__('HOOKED', v)\n1"), Cell("b", "2")]
    outcome = box.call(cells, sandbox_probes.value, name="HOOKED")
    assert outcome.value == 1, outcome


@pytest.mark.parametrize("left", [
    "import asyncio\n\n\nasync def _spin():\n    try:\n        while True:\n            await asyncio.sleep(0)\n"
    "    finally:\n        globals()['HELPER'] = 2\n\n\nasyncio.ensure_future(_spin())\n",
    "import asyncio\n_loop = asyncio.get_running_loop()\n_close = _loop.close\n\n\ndef _closing():\n"
    "    globals()['HELPER'] = 2\n    _close()\n\n\n_loop.close = _closing\n",
], ids=["task-finally", "loop-close-replaced"])
def test_a_task_left_pending_on_the_notebook_loop_runs_no_code_in_a_check_child(box, left):
    """red-a24 X33-a24-4 (pass 33): a cell (run whole) leaves a task on the notebook's loop that yields with
    asyncio.sleep(0) forever (no reference cycle: only the loop's ready queue holds it) and has a `finally:`. In
    Jupyter the kernel's loop keeps running it, and its `finally` never runs while the notebook is graded. A check
    child closes the loop (cell_runner.close_loop): the ready queue is cleared, the task freed at once, its coroutine
    closed, and the `finally` runs there, before the probe: HELPER is 2 in every fresh call, 1 in the loader. So too a
    `close` the cell set on the loop object itself (asyncio.get_running_loop().close = ...): close_loop calls it. The
    loader now ends the load at a cell that leaves a task waiting (its timing is Jupyter's loop's), and a check child
    closes the loop's pipe and keeps the loop, calling none of its methods."""
    outcome = box.call([Cell("a", left + "HELPER = 1\n")], sandbox_probes.value, name="HELPER")
    if "ensure_future" in left:  # a task that never ends: the load ends at its cell, named (left_running)
        assert outcome.reason.startswith("cell a left a task or callback waiting on the event loop"), outcome
    else:
        assert outcome.value == 1, outcome


def test_an_object_only_a_stopped_cells_traceback_holds_lives_on_after_the_load(box):
    """red-a24 X33-a24-5 (pass 33): IPython keeps the last error's traceback (sys.last_traceback, sys.last_exc), and
    with it the frames it passes through and their locals, so in Jupyter an object only a raising function's local
    holds outlives its cell: its __del__ does not run while the notebook's later cells and checks run (nbclient: the
    cell's mend of Module never happens, test_parameters and test_lesson_numbers fail). The loader drops the last
    stopped cell's exception when _load returns, so the __del__ runs then, after every cell and before any probe:
    HELPER is 2."""
    cell = ("HELPER = 1\n\n\nclass _Late:\n    def __del__(self):\n        globals()['HELPER'] = 2\n\n\n"
            "def _fail():\n    late = _Late()\n    raise ValueError('not yet')\n\n\n_fail()\n")
    outcome = box.call([Cell("a", cell), Cell("b", "x = 1\n")], sandbox_probes.value, name="HELPER")
    assert "a" in outcome.stops, outcome.load_errors
    assert outcome.value == 1, outcome


@pytest.mark.parametrize("honest", [
    "from tqdm import tqdm\n\nfor _ in tqdm(range(3)):\n    pass\n",
    "import asyncio\nimport time\n\nnow = await asyncio.get_running_loop().run_in_executor(None, time.monotonic)\n",
    "from concurrent.futures import ThreadPoolExecutor\n\npool = ThreadPoolExecutor(2)\nr = list(pool.map(abs, [-1, -2]))\n",
], ids=["tqdm", "run-in-executor-awaited", "thread-pool-kept"])
def test_a_cell_that_runs_a_tqdm_loop_to_its_end_does_not_end_the_load(box, honest):
    """red-a25 X34-a25-3 (pass 34): tqdm (requirements.txt: 4.70.1, in the course's environment) starts a monitor
    thread (tqdm._monitor.TMonitor, a daemon that only touches tqdm's own bars) with its first bar, and keeps it for
    the life of the process, the bar closed or not. An honest cell `for _ in tqdm(range(3)): pass` was read as leaving
    a thread running: the load ended there, and every call was answered "cell a left a thread running when it
    ended...". The filter now starts no thread: tqdm turns its monitor off and runs; an awaited run_in_executor and a
    ThreadPoolExecutor kept for later stop their cell, named (test_a_thread_does_not_start_and_the_cell_says_why), and
    the cells below run as in Jupyter."""
    cells = [Cell("a", honest), Cell("b", "HELPER = 1\n")]
    outcome = box.call(cells, sandbox_probes.value, name="HELPER")
    assert outcome.value == 1, outcome
