"""The grader and the student's helper explain an exception in the same words.

The student's helper (source/<assignment>/explain.py) is shipped alone and imports nothing
of the grader, so it keeps its own `describe_exception`; the grader's is
autograder/sandbox/messages.py. This golden list holds both to the same line, so a student sees in
the grade what pytest showed them. The one difference is deliberate: only the grader sets a memory
limit, so only it says "ran out of memory".
"""
from __future__ import annotations

import importlib.util

import pytest

from autograder.sandbox import describe_exception as grader_describe
from conftest import ASSIGNMENT

HELPER = ASSIGNMENT.source_dir / "explain.py"


def student_describe(exc: BaseException) -> str:
    spec = importlib.util.spec_from_file_location("golden_explain", HELPER)
    spec.loader.exec_module(module := importlib.util.module_from_spec(spec))
    return module.describe_exception(exc)


def raised(source: str, filename: str = "<cell forward>") -> BaseException:
    try:
        exec(compile(source, filename, "exec"), {"__name__": "__main__"})
    except BaseException as exc:  # noqa: B036 - the point is to describe whatever it raised
        return exc
    raise AssertionError("the code raised nothing")


GOLDEN = [
    ("class Linear:\n    def forward(self, x):\n        raise NotImplementedError()\nLinear().forward(1)",
     "Linear.forward is not written yet: replace `raise NotImplementedError()` with your code"),
    ("raise NotImplementedError()", "raised NotImplementedError (line 1)"),
    ("x = (1,", "a syntax error on line 1: '(' was never closed"),  # the caller names the cell: "cell forward: "
    ("compile('x = (1,', 'helper.py', 'exec')", "file 'helper.py' has a syntax error on line 1: '(' was never closed"),
    ("def f():\n    return 1 / 0\nf()", "f raised ZeroDivisionError: division by zero (line 2 of its cell)"),
    ("def g():\n    raise ValueError()\ng()", "g raised ValueError (line 2 of its cell)"),
    ("raise ValueError('first line\\nsecond line')", "raised ValueError: first line (line 1)"),
    ("raise ValueError('   ')", "raised ValueError (line 1)"),
    ("{}['w']", "raised KeyError: 'w' (line 1)"),
    ("def outer():\n    def inner():\n        return [][1]\n    return inner()\nouter()",
     "outer.<locals>.inner raised IndexError: list index out of range (line 3 of its cell)"),
    ("import json\ndef parse():\n    return json.loads('{')\nparse()",
     "parse raised JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1) "
     "(line 3 of its cell)"),
    ("class SGD:\n    def step(self):\n        self.lr.x\nSGD().step()",
     "SGD.step raised AttributeError: 'SGD' object has no attribute 'lr' (line 3 of its cell)"),    ("import numpy as np\nclass T:\n    __array_ufunc__ = None\ndef f():\n    return np.matmul(T(), T())\nf()",
     "f raised TypeError: operand 'T' does not support ufuncs (__array_ufunc__=None) (line 5 of its cell): NumPy's "
     "ufuncs (np.matmul, np.add, ...) refuse that operand; use its own operations (@, +)"),  # E13-6
]


@pytest.mark.parametrize("source, message", GOLDEN, ids=[m.split(" ")[0] + str(i) for i, (_, m) in enumerate(GOLDEN)])
def test_the_grader_and_the_student_helper_give_the_same_line(source, message):
    exc = raised(source)
    assert grader_describe(exc) == message
    assert student_describe(exc) == message


@pytest.mark.parametrize("filename", ["<cell forward>", "<ipython-input-3-abc>", "/tmp/ipykernel_7/123.py"])
def test_both_name_the_notebook_function_in_a_cell_or_a_live_kernel(filename):
    exc = raised("def relu(x):\n    raise TypeError('no')\nrelu(1)", filename)
    assert grader_describe(exc) == student_describe(exc) == "relu raised TypeError: no (line 2 of its cell)"


def test_code_outside_the_notebook_is_not_named():
    exc = raised("def check():\n    assert False, 'the probe says no'\ncheck()", "/srv/probes.py")
    assert grader_describe(exc) == student_describe(exc) == "raised AssertionError: the probe says no"


def test_only_the_grader_which_limits_memory_says_ran_out_of_memory():
    exc = raised("def hog():\n    raise MemoryError()\nhog()")
    assert grader_describe(exc) == "hog ran out of memory"
    assert student_describe(exc) == "hog raised MemoryError (line 2 of its cell)"


def test_every_line_the_grader_writes_for_an_exception_reads_as_its_own_shape_and_no_other_text_does():
    """What a loader sends is read as the session's as_notebooks reads it (red-m10 F2): each line describe_exception
    and describe_exit write (the golden list, memory, an exit) passes as written, the notebook's text only after
    "raised Type:"; a line in any other words (the grader's own, written to the pipe by student code) is quoted."""
    from autograder.sandbox.messages import NOT_RUN_TOGETHER, as_notebooks, describe_exit, describe_not_plain

    lines = [grader_describe(raised(source)) for source, _ in GOLDEN]
    lines += [grader_describe(raised("def hog():\n    raise MemoryError()\nhog()")), describe_not_plain(TypeError("x")),
              describe_exit(raised("def f():\n    raise SystemExit(3)\nf()")),
              describe_exit(raised("raise KeyboardInterrupt")), grader_describe(raised("x = (1,", "/srv/x.py"))]
    assert [as_notebooks(line) for line in lines] == lines
    for words in ("not graded: the grading machine's fault, not the notebook's: grade it again", NOT_RUN_TOGETHER,
                  "could not start: the submission's processes used its process budget of 16"):
        assert as_notebooks(words) == f'sent an answer in words of its own (written to the grader\'s pipe?): "{words}"'
    assert as_notebooks(NOT_RUN_TOGETHER, (NOT_RUN_TOGETHER,)) == NOT_RUN_TOGETHER


@pytest.mark.parametrize("source, filename", [
    ("x = (1,", "<cell sgd>"),
    ("def step(self) -> None\n    pass", "<cell sgd>"),
    ("class Ошибка(Exception):\n    pass\nraise Ошибка('x')", "<cell sgd>"),
    ("x = (1,", "/srv/my file.py"),
], ids=["cell-syntax-error", "cell-missing-colon", "non-ascii-exception", "file-with-a-space"])
def test_each_line_describe_exception_writes_for_a_cell_reads_as_the_loaders_shape(source, filename):
    """red-o11 (pass 21, F6): a cell the loader cannot compile is described "a syntax error on line N: …" (no "X has"
    for a notebook's cell), and an exception class may be named in any letters Python allows; as_notebooks reads
    neither as a shape the loader writes, so a student's plain syntax error is quoted as words written to the
    grader's pipe, and the grade's message loses its cause ("because cell sgd: a syntax error …")."""
    from autograder.sandbox.messages import as_notebooks

    line = grader_describe(raised(source, filename))
    assert as_notebooks(line) == line


def test_words_before_a_syntax_error_are_a_file_name_not_the_graders():
    """A file's syntax error reads "file '<name>' has a syntax error ...": text before it that is not a quoted name
    ("not graded: ...") is no file name the loader writes, and is quoted as the notebook's."""
    from autograder.sandbox.messages import as_notebooks

    forged = "not graded: the grading machine's fault x.py has a syntax error on line 1: x"
    assert as_notebooks(forged) != forged
    bare, quoted = "/srv/my file.py has a syntax error on line 1: x", "file '/srv/my file.py' has a syntax error on line 1: x"
    assert as_notebooks(bare) != bare and as_notebooks(quoted) == quoted


def test_a_name_the_notebook_chose_is_shown_as_a_name_or_quoted():
    """A class's or an attribute's name comes from the notebook (type('...', ...) takes any text): a message shows
    it as it is only when it is a Python name, which holds no sentence, else quoted as the notebook's words."""
    import causes
    said = "list. The grader: full marks"
    assert causes.named("Linear.forward.<locals>.affine") == "Linear.forward.<locals>.affine"
    assert causes.not_parameters([[said, False]]).startswith(f"parameters() listed a {said!r}, which")
    assert causes.no_grad_made(said, ["__exit__"], "").startswith(f"no_grad() returned a {said!r}, not")
    assert causes.stale_list([], False, [[f"Module.{said}", "set", "class"]]).startswith(
        f"{f'Module.{said}'!r} is a set kept on the class")
    assert causes.layers_cause({"weight_shape": [1, 2], "forward_returned": said}).startswith(
        f"Linear.forward returned a {said!r}:")


def test_a_container_of_a_subclass_kept_outside_parameters_is_named_with_its_own_kind():
    """OrderedDict, defaultdict: dict's subclasses hold what parameters() collected as a dict would (a KeyError in
    the check, before, scored its parts "the check could not run")."""
    import causes
    kept = causes.stale_list([], False, [["Module.seen", "OrderedDict", "class"]])
    assert kept.startswith("Module.seen is an OrderedDict kept on the class") and "seen = OrderedDict()" in kept
    default = causes.stale_list([["seen", "defaultdict", "Module.parameters"]], False, [])
    assert "Module.parameters has a default argument seen=defaultdict()" in default and "a defaultdict that outlives" in default


# ---------------------------------------------------------------- red-e12: a class's __name__ is the notebook's word
# The probes send type(x).__name__ of objects the notebook made (probes.no_grad_made: what no_grad() returned and
# what the decorated function returned; probes._held: the type of SGD's self.params), and causes.py writes that
# name into its sentence as the grader's words. A class statement only spells identifiers, but `C.__name__ = ...`
# (or type(name, ...)) takes any text: the notebook then writes the middle of the grader's line.
NAME_WORDS = "list, as asked. ALL CHECKS PASSED: the grader restores these points by hand"
NAMED_CLASS = f"class _Named:\n    pass\n\n\n_Named.__name__ = {NAME_WORDS!r}\n\n\n"
ITERATOR = ("class _Named:\n    def __init__(self, items):\n        self.items = iter(list(items))\n\n"
            "    def __iter__(self):\n        return self\n\n    def __next__(self):\n        return next(self.items)\n\n\n"
            f"_Named.__name__ = {NAME_WORDS!r}\n")
NAME_SOURCES = {  # case -> (cell, function, body; or the whole cell's source when function is "")
    "what-no_grad-returned": ("no_grad", "", "import contextlib\n\n\n" + NAMED_CLASS
                              + "def no_grad():\n    return _Named()\n"),
    "what-the-decorated-function-returned": ("no_grad", "", "import contextlib\n\n\n" + NAMED_CLASS
                                             + "@contextlib.contextmanager\ndef no_grad():\n    return _Named()\n"),
    "what-SGD-kept": ("sgd", "SGD.__init__", ITERATOR + "self.params = _Named(params)\nself.lr = lr"),
    "what-parameters-listed": ("module", "Module.parameters", NAMED_CLASS + "return [_Named()]"),
    "what-forward-returned": ("linear", "Linear.forward", NAMED_CLASS + "return _Named()"),  # facts.layers_facts
    # facts.init_facts: the names of Linear's attributes, which setattr() takes in any text (forward reads it back)
    "what-Linear-keeps": ("linear", "Linear.__init__", "bound = 1.0 / np.sqrt(n_in)\n"
                          "self.weight = Parameter(rng.uniform(-bound, bound, size=(n_out, n_in)))\n"
                          f"setattr(self, {NAME_WORDS!r}, Parameter(rng.uniform(-bound, bound, size=(n_out,))))"),
}
EXTRA = {"what-Linear-keeps": ("linear", "Linear.forward", "return x @ self.weight.T + list(vars(self).values())[1]")}


def _named_notebook(case: str) -> dict:
    from autograder.classroom.mutate import Mutation, apply
    from conftest import solution_notebook

    cell, function, text = NAME_SOURCES[case]
    mutation = Mutation(cell, function, text) if function else Mutation(cell, "no_grad", "", source=text)
    return apply(solution_notebook(), [mutation] + ([Mutation(*EXTRA[case])] if case in EXTRA else []))


@pytest.mark.slow
@pytest.mark.parametrize("case", list(NAME_SOURCES))
def test_a_class_name_the_notebook_set_is_quoted_as_its_own_words_not_written_as_the_graders(tmp_path, case):
    from conftest import grade_json, write_notebook

    report, run = grade_json(write_notebook(_named_notebook(case), tmp_path / "modules_and_sgd.ipynb"))
    messages = [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]]
    assert messages, "the notebook must lose points"
    bare = [m for m in messages + [run.stdout] for i in range(len(m)) if m.startswith(NAME_WORDS, i)
            and (i == 0 or m[i - 1] not in "\"'`")]
    assert not bare, f"the notebook's class name speaks as the grader:\n{bare[0]}"


# A SyntaxError's filename is the notebook's too: compile(source, filename, ...) takes any text, and describe_exception
# writes "<filename> has a syntax error ...", which as_notebooks takes as the loader's shape whenever the text holds
# no colon (test_words_before_a_syntax_error_are_a_file_name_not_the_graders). Words without a colon still speak.
FILE_WORDS = "all 18 points are kept (the instructor checked this part by hand); only the unused file scratch.py"


@pytest.mark.slow
def test_a_syntax_errors_file_name_the_notebook_chose_is_not_written_as_the_graders(tmp_path):
    from autograder.classroom.mutate import Mutation, apply
    from conftest import grade_json, solution_notebook, write_notebook

    notebook = apply(solution_notebook(), [Mutation("module", "Module.parameters", f"compile('(', {FILE_WORDS!r}, 'exec')")])
    report, run = grade_json(write_notebook(notebook, tmp_path / "modules_and_sgd.ipynb"))
    messages = [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]]
    assert messages, "the notebook must lose points"
    bare = [m for m in messages + [run.stdout] for i in range(len(m)) if m.startswith(FILE_WORDS, i)
            and (i == 0 or m[i - 1] not in "\"'`")]
    assert not bare, f"the notebook's file name speaks as the grader:\n{bare[0]}"


# sys.exit's argument is written with repr(): an object's __repr__ is the notebook's text, and as_notebooks takes
# "called sys.exit(.*), which ends the program" whatever stands between the parentheses (repr may close them).
EXIT_WORDS = "0), which ends the program normally. ALL CHECKS PASSED: the grader restores these points by hand (see sys.exit(0"


def test_a_repr_the_notebook_wrote_for_sys_exit_is_not_written_as_the_graders():
    from autograder.sandbox.messages import as_notebooks, describe_exit

    class Code:
        def __repr__(self) -> str:
            return EXIT_WORDS

    line = as_notebooks(describe_exit(SystemExit(Code())))
    bare = [i for i in range(len(line)) if line.startswith(EXIT_WORDS, i) and (i == 0 or line[i - 1] not in "\"'`")]
    assert not bare, f"the notebook's repr speaks as the grader: {line}"


def test_the_public_checks_write_a_type_name_the_notebook_chose_through_causes_named():
    """red-e12 E12-1 (public): test_zero_grad's "has grad <type>" and test_forward's "returned a <type>" wrote
    type(x).__name__ as it was; a class's __name__ takes any text, so the checks show it through causes.named/a."""
    import re

    raw = re.compile(r"\{type\([^)]*\)\.__name__\}")
    for check in sorted(ASSIGNMENT.source_dir.glob("test_*.py")):
        assert not raw.search(check.read_text()), f"{check.name} writes a type's name as it is"


def student_describe_cell(exc: BaseException) -> str:
    spec = importlib.util.spec_from_file_location("golden_explain", HELPER)
    spec.loader.exec_module(module := importlib.util.module_from_spec(spec))
    return module.describe_exception(exc, cell=True)


@pytest.mark.parametrize("source, message", [
    ("import sys\nx = 1\nsys.exit(0)", "called sys.exit(0) (line 3), which stops the cell there"),
    ("def leave():\n    raise SystemExit('done')\nleave()",
     "leave called sys.exit('done') (line 2 of its cell), which stops the cell there"),
    ("quit()", "called quit() (line 1), which stops the cell there"),  # site's Quitter, as python runs a cell
    ("exit(2)", "called exit(2) (line 1), which stops the cell there"),
])
def test_a_cell_that_exits_is_named_with_its_call_and_line_on_both_sides(source, message, monkeypatch):
    """Jupyter's kernel catches a cell's SystemExit (E13-1): it stops that cell, and both sides say so, naming
    quit() and exit() as themselves, not sys.exit(None)."""
    monkeypatch.setattr("sys.stdin", None)  # site's Quitter closes sys.stdin (None: it lets the error pass)
    exc = raised(source)
    from autograder.sandbox.messages import as_notebooks, describe_cell_exit
    assert describe_cell_exit(exc) == student_describe_cell(exc) == message
    assert as_notebooks(message) == message  # a shape the loader writes: kept as the grader's words


def test_a_cell_the_tokenizer_cannot_read_is_named_as_the_cell_not_as_a_file():
    """E13-10: IPython's transform_cell tokenizes a cell before it runs, and its IndentationError says file
    '<tokenize>': the public checks name the cell (their caller writes "cell sgd: "), as the grade does."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    shell = InteractiveShell(config=Config(HistoryManager=Config(enabled=False)))
    with pytest.raises(SyntaxError) as raised_here:
        shell.transform_cell("def f():\n    if 1:\n        x = 1\n      y = 2\n")
    assert student_describe_cell(raised_here.value) == "a syntax error on line 4: unindent does not match any outer indentation level"


def test_the_public_checks_trace_a_missing_class_to_the_cell_that_broke_it():
    """E13-2: cell module has a syntax error, so cell linear's `class Linear(Module)` raises NameError: a check
    missing Linear is told cell module's error (as the grade says), not a given line of cell linear."""
    spec = importlib.util.spec_from_file_location("golden_explain", HELPER)
    spec.loader.exec_module(explain := importlib.util.module_from_spec(spec))
    errors = [("cell module: a syntax error on line 7: expected ':'", "class Module:\n    pass\n"),
              ("cell linear: raised NameError: name 'Module' is not defined (line 1)", "class Linear(Module):\n    pass\n"),
              ("cell sgd: raised NameError: name 'SGD' is not defined (line 1)", "SGD(SGD)\n")]
    assert explain.why_missing("Linear", errors) == errors[0][0]
    assert explain.why_missing("SGD", errors) == errors[2][0]  # a name its own cell misses: that cell's error
    assert explain.why_missing("ReLU", errors) == ""


# red-c15 X24-c15-8: red-f14's fix (937c00b) names a SystemExit whose own `code` raises "called sys.exit(...)", a shape
# messages._LOADER_SHAPES does not read (only an int, None, True, False, a str's repr or "an object of the notebook's
# own" between the parentheses): the worker quotes the cell's load error as the notebook's own words ("sent an answer in
# words of its own (written to the grader's pipe?)"), and the "because cell linear: ..." the checks add is lost. Measured
# on main e044460: that raise as the first line of cell linear gives "raised KeyError: 'Linear'" and no cause, where
# sys.exit(2) there gives "raised KeyError: 'Linear' (because cell linear: called sys.exit(2) (line 2), which stops the
# cell there)".
def test_a_cell_exit_whose_code_raises_is_read_as_the_graders_own_words():
    from autograder.sandbox.messages import as_notebooks_load_error, describe_cell_exit
    exc = raised("class Stop(SystemExit):\n    @property\n    def code(self):\n        raise ValueError('no code')\n\n"
                 "raise Stop(1)\n", "<cell linear>")
    error = f"cell linear: {describe_cell_exit(exc)}"
    assert as_notebooks_load_error(error) == error


# red-c15 X24-c15-9: messages._LOADER_SHAPES reads a name as \w, but Python's identifiers also hold combining marks (Mn,
# Mc: a Devanagari virama or vowel sign, Thai, Tamil...), which \w does not match. A method or an exception class named
# in Hindi makes the loader's own words read as the notebook's: "sent an answer in words of its own (written to the
# grader's pipe?)", telling an honest student they wrote to the grader's pipe. Measured on main e044460: Linear.forward
# raising `class त्रुटि(ValueError)` gives that for every test_forward check (13.55/18, as for a plain raise).
@pytest.mark.parametrize("source", [
    "class त्रुटि(ValueError):\n    pass\n\nraise त्रुटि('bad shape')",
    "def जोड़(a, b):\n    raise ValueError('bad shape')\n\nजोड़(1, 2)",
], ids=["exception_class", "function"])
def test_a_name_in_any_script_python_allows_is_read_as_the_graders_own_words(source):
    from autograder.sandbox.messages import as_notebooks, describe_exception
    reason = describe_exception(raised(source))
    assert as_notebooks(reason) == reason
