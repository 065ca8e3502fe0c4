"""Run an assignment's hidden suites against submissions and collect reports.

The suites live in autograder/<assignment>/, one file per grade cell (test_step.py scores the
grade cell `test_step`). They are written as pytest tests: each `test_*` function, expanded by its
`pytest.mark.parametrize` marks, is one check, and takes the fixtures `student` and `reference`.
Each file names the solution cells it takes from the student (`STUDENT_CELLS`); every other solution
cell comes from the public release (blank stubs), and the probes call only the stub their part grades,
so a bug costs one part and the reference never runs next to student code. A check asks a runner to
run a probe (a function of probes.py) in the sandbox and compares the plain data that comes back with
the reference's answers (fetched from a sandbox that runs the reference alone), here, in the grader's
process.

The grader runs the checks itself rather than through pytest, so that a part's probe calls can go
to the sandbox as one batch: it runs every check of the part, noting the answers they wait for,
fetches those in one batch, and runs the waiting checks again, until none waits.

What every grading process of a class shares is one PreparedClass (the suites, the reference's answers,
the redactor), made once by grading.prepare_class before the pool forks; a Grader is made from it, by
the batched grader and by the pytest plugin (autograder/checks/pytest_plugin.py) alike.
"""
from __future__ import annotations

import functools
import inspect
import re
import sys
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping

from ..assignment import Assignment
from ..outputs.grader_failure import grader_failure
from ..outputs.redaction import Redactor
from ..report import CheckResult, Status
from ..sandbox import MISSING, NOT_RUN_AFTER_TIME_OUT, NOT_WRITTEN, Cell, Outcome, Sandbox, program_from_notebook
from ..sandbox.policy import reference_sandbox, student_sandbox
from ..sandbox.program import (
    annotations_as_text,
    bound_names,
    defining_cells,
    demonstrated_names,
    held_cells,
    last_copies,
    namespace_lines,
    read_as_python,
    run_before,
    standing_below,
    task_names,
)
from ..sandbox.protocol import EVERY_NAME
from ..settings import GraderSettings
from ..submission import Submission
from .answer_form import NOT_IN_FORM, answer_fault, form_of
from .modules import import_file
from .parametrize import MARKS_ONLY, Check, expand, uses_marks_only


class CheckFailed(AssertionError):
    """Student code did not give an answer; the message is the one-line reason."""


class CheckNotRun(CheckFailed):
    """The answer a check asked for was never computed (an earlier check of the part ran out of time, a budget
    of the submission was spent): the check is not run, and the message says why."""


class GraderBug(RuntimeError):
    """A check's own code raised on answers in the forms their probes write (answer_form.py): the grader's fault,
    which ends the submission's grading with no score (outputs/grader_failure.py), never a failed check."""


class _Waiting(BaseException):
    """A check asked for an answer not fetched yet. (Not an Exception: no check may catch it.)"""


# ------------------------------------------------------------------------ the suites


@dataclass(frozen=True)
class Suite:
    grade_id: str
    student_cells: tuple[str, ...] | str
    checks: list[Check]
    lent: tuple[str, ...] = ()  # of student_cells, those lent to the part (Grader.settle), which it does not grade

    def lending(self, cells: tuple[str, ...]) -> Suite:
        """The part with the student's own copy of `cells` lent to it."""
        return replace(self, student_cells=(*self.student_cells, *cells), lent=(*self.lent, *cells))


def import_suite(path: Path) -> ModuleType:
    """One hidden suite file as a module: the one way the grader and the pytest plugin import it.

    Imported from its file directly, so no import hook (such as pytest's assertion rewriter in the
    kit's own tests) rewrites it: its code must never appear in a message. Its folder is on sys.path
    while it runs, for the modules it imports by name (probes.py, causes.py).
    """
    folder = str(path.parent)
    sys.path.insert(0, folder)
    stand_in = "pytest" not in sys.modules and uses_marks_only(path.read_text())
    if stand_in:  # pytest's marks without importing pytest (parametrize.MARKS_ONLY says why)
        sys.modules["pytest"] = MARKS_ONLY
    try:
        return import_file(f"hidden_{path.parent.name}_{path.stem}", path)
    finally:
        sys.path.remove(folder)
        if stand_in:
            del sys.modules["pytest"]


def load_suites(assignment: Assignment) -> list[Suite]:
    """The hidden suites of `assignment`, one per suite file, in the order of their names."""
    suites = []
    for path in sorted(assignment.suite_dir.glob("test_*.py")):
        module = import_suite(path)
        tests = [value for name, value in vars(module).items() if name.startswith("test_") and callable(value)]
        suites.append(Suite(path.stem, getattr(module, "STUDENT_CELLS", "all"),
                            [check for test in tests for check in expand(test)]))
    return suites


# ---------------------------------------------------------------------- running them


_BATCHING: ContextVar[bool] = ContextVar("batching", default=False)  # True while run_checks runs checks

# A name the code did not find, as a reason gives it: Python's NameError anywhere (the notebook's code, or a
# cell as it loaded), or a probe's own look-up of a notebook name (a KeyError raised outside the notebook's code).
_NAME_ERROR = re.compile(r"NameError: name '(\w+)' is not defined")
_PROBE_LOOKUP = re.compile(r"raised KeyError: '(\w+)'")
# A stub the part took blank from the release, reached from the student's own cell (step() written under
# `with no_grad():`, an exercise computed with the student's classes), which the student wrote in another cell:
# Grader.settle grades the part again with that cell when the cell is sound, so one that stays blank is not.
BLANK_HERE = "is blank in this part: a part runs your other cells only once their own parts pass in full"
_NOT_WRITTEN = re.compile(r"([A-Za-z_][\w.]*) " + re.escape(NOT_WRITTEN))
# What else a blank stub gives where the student's own cell gives more: an attribute its class lacks (a method the
# student's cell module adds to Module, a class attribute of SGD), a signature that is not the student's (a default
# argument of Linear.__init__). Python's words (3.10+: a call's TypeError names the function by its qualified name).
_NO_ATTRIBUTE = re.compile(r"AttributeError: (?:'\w+' object|type object '\w+') has no attribute '(\w+)'")
_CALLED = re.compile(r"TypeError: ([A-Za-z_][\w.]*)\(\) (?:missing|takes|got)")


class Runner:
    """What a check calls: run a probe on one program, return plain data or fail with a reason.

    A probe called again with the same arguments gives the same answer (probes are seeded), so
    each answer is asked for once, and every check that asks gets that same object: checks must
    not change it. Within run_checks, an answer not fetched yet stops the check (`_Waiting`) and is
    noted; `fetch` then asks the sandbox for every noted answer in one batch. Outside it (a check
    pytest runs itself, autograder/checks/pytest_plugin.py), an answer not fetched yet is fetched at once, alone.
    """

    def __init__(self, sandbox: Sandbox, cells: list[Cell], submission: Submission | None, fresh: bool = True,
                 together: bool = False, borrowed: frozenset[str] = frozenset(), one_cell: bool = False,
                 defined_by: Mapping[str, str] | None = None, own_copies: Mapping[str, str] | None = None,
                 demonstrated: Mapping[str, str] | None = None, release_order: tuple[str, ...] = ()) -> None:
        """`borrowed`: the names of the program's solution cells taken from the public release, not from the
        student (part_program): what their blank stubs raise as they load is no cause of the student's.
        `one_cell`: the part grades one cell of the student's, so that cell missing explains its every failure;
        in a part that grades the whole notebook a missing cell explains only a name its checks did not find.
        `defined_by`: the cell each name comes from in the released notebook (defining_cells), so that a name
        not found is explained by that cell. `own_copies`: the student's own text of each borrowed cell, only
        searched (never run) for a name of the student's own that the part did not find (a helper written below
        Module and called by zero_grad; Grader.unblamed keeps only the sound ones once the lending ends).
        `demonstrated`: the demonstration each name comes from (demonstrated_names), which no part runs: a name not
        found that only one defines is told so. `release_order`: the grade ids of the cells the student's notebook
        holds, in the released notebook's order, to tell a cell the student moved (defined_below)."""
        self.sandbox, self.cells, self.submission, self.fresh = sandbox, cells, submission, fresh
        self.one_cell = one_cell
        self.defined_by = dict(defined_by or {})
        self.borrowed = tuple(f"cell {name}:" for name in sorted(borrowed))  # how their load errors start
        self.blank_cells = frozenset(borrowed)
        self.own_copies = dict(own_copies or {})
        self.demonstrated = dict(demonstrated or {})
        self.release_order = release_order
        self.binding: dict[tuple[str, str], bool] = {}  # (where, name) -> _binds, once (binds)
        self.statements: dict[str, str] = {}  # where -> its namespace_lines, once (binds)
        self.run_time: dict[str, bool] = {}  # where -> _binds_at_run_time, once (own_name_named)
        self.own_errors: list[str] = []  # what the student's cells this part runs raised as they loaded
        self.together = together and fresh  # within run_checks, a fresh part's calls first run together in one child
        self.fetched_together: set[tuple[str, str]] = set()
        self.memo: dict[tuple[str, str], Outcome] = {}
        self.wanted: dict[tuple[str, str], tuple[Callable, dict]] = {}
        self.timed_out = False
        self.missing = ""  # the load error of a solution cell missing from the notebook, once an answer shows one

    def run(self, probe: Callable, **kwargs: Any) -> Any:
        key = (probe.__name__, repr(sorted(kwargs.items())))
        if key not in self.memo:
            if self.timed_out:
                raise CheckNotRun(NOT_RUN_AFTER_TIME_OUT)
            self.wanted.setdefault(key, (probe, kwargs))
            if _BATCHING.get():
                raise _Waiting
            self.fetch()
        outcome = self.memo[key]
        if outcome.ok:
            return outcome.value
        if self.submission is None:
            raise RuntimeError(f"the reference solution failed {probe.__name__}: {outcome.reason}")
        raise (CheckNotRun if outcome.not_run else CheckFailed)(self.explain(outcome))

    def fetch(self) -> bool:
        """Fetch every answer noted as wanted, in one batch; False when none was."""
        if not self.wanted:
            return False
        keys, calls = list(self.wanted), list(self.wanted.values())
        self.wanted.clear()
        together = self.together and _BATCHING.get()  # a check pytest runs itself fetches alone
        outcomes = self.sandbox.call_many(self.cells, calls, fresh=self.fresh, together=together)
        for index, (key, (probe, kwargs), outcome) in enumerate(zip(keys, calls, outcomes)):
            self.memo[key] = _in_form(outcome, probe, kwargs)
            self.missing = self.missing or next((e for e in outcome.load_errors if MISSING in e), "")
            self.own_errors = self.own_errors or self.student_errors(outcome)
            if together and index > 0:  # not the submission's answer yet: a limit it hit counts if it is hit alone
                self.fetched_together.add(key)  # (the first call of a batch ran as it would alone: its answer counts)
                continue
            if outcome.limit and self.submission is not None:
                self.submission.limits.append(outcome.limit)
            self.timed_out = self.timed_out or (outcome.limit == "time" and not self.fresh)
        return True

    def run_alone(self) -> bool:
        """Forget the answers fetched together but the first of each batch (which ran as it would alone): each
        call is fetched again in a child of its own. False when no such answer was fetched together."""
        if not self.fetched_together:
            return False
        for key in self.fetched_together:
            del self.memo[key]
        self.fetched_together.clear()
        self.together = False
        return True

    def explain(self, outcome: Outcome) -> str:
        """The reason, plus its cause when a name was not found: what the cell that defines the name in the
        released notebook did (why_undefined). A name no such cell defines is the code's that raised, which the
        reason names. Another reason of the kind gets the load error of a cell missing from the notebook, or
        else of the first cell that failed."""
        reason = self.blank_named(outcome.reason)
        name = _NAME_ERROR.search(reason) or _PROBE_LOOKUP.fullmatch(reason)
        if name:
            cause = self.blank_named(self.why_undefined(name[1], outcome.load_errors))
            return f"{reason} (because {cause})" if cause else reason
        errors = self.student_errors(outcome)
        if any(word in reason for word in ("KeyError", "is missing")) and errors:
            return f"{reason} (because {self.missing or errors[0]})"
        return reason

    def student_errors(self, outcome: Outcome) -> list[str]:
        """What the student's cells raised as they loaded (not the release's stubs this part borrowed)."""
        return [self.blank_named(error) for error in outcome.load_errors if not error.startswith(self.borrowed)]

    def blank_named(self, text: str) -> str:
        """`text`, where it says a stub is not written yet that this part took blank from the release (the
        released notebook defines it in a borrowed cell, and no cell the part runs after that one binds it),
        saying instead that it is blank in this part: the student wrote it, and its own part grades it. So too
        where a call of such a stub raised a TypeError (its signature is the release's, not the student's)."""
        def name(match: re.Match) -> str:
            cell = self.stub_cell(match[1])
            return f"{match[1]} {_blank(cell)}" if cell else match[0]
        text = _NOT_WRITTEN.sub(name, text)
        called = _CALLED.search(text)
        cell = self.stub_cell(called[1]) if called and BLANK_HERE not in text else None
        return self.own_name_named(f"{text} ({called[1].split('.')[0]} {_blank(cell)})" if called and cell else text)

    def stub_cell(self, name: str) -> str | None:
        """The borrowed cell whose blank stub `name` (or its class, `Linear.forward`) is in this part, if it is."""
        top = name.split(".")[0]
        cell = self.defined_by.get(top)
        return cell if cell in self.blank_cells and not self.bound_after(cell, top) else None

    def bound_after(self, blank_cell: str, name: str) -> bool:
        """Whether a cell of the student's that the part runs after `blank_cell` binds `name`, so that the stub is
        not what the name holds. The program runs in the notebook's order: a binding in an earlier cell (a draft
        of no_grad above class SGD) is replaced by the stub where the student's own copy of its cell binds the name
        too (part_program), and the stub is then what the part called."""
        names = [cell.name for cell in self.cells]
        later = self.cells[names.index(blank_cell) + 1:] if blank_cell in names else self.cells
        return any(self.binds(cell.name, cell.source, name) for cell in later if cell.name not in self.blank_cells)

    def binds(self, where: str, text: str, name: str) -> bool:
        """_binds, searched once per cell and name while the runner lives (every failed check's reason may name
        the same stub again, and the cell may be megabytes long: the grader's own time), among the statements
        that run in the notebook's namespace (namespace_lines: a local of a function named like the stub binds
        nothing another cell calls)."""
        key = (where, name)
        if key not in self.binding:
            if where not in self.statements:
                self.statements[where] = namespace_lines(text)
            self.binding[key] = _binds(self.statements[where], name)
        return self.binding[key]

    def own_name_named(self, text: str) -> str:
        """`text`, where it says a name is not defined that the student's own copy of a cell this part took blank
        binds at the top level (_binds; not the copy of the released cell that defines the name, whose stub the part
        runs and binds it: a released cell below also importing the student's name does not hide it), or that an object has no attribute the
        student's own copy of such a cell defines (a method, a class attribute: _defines_attribute), with that cell
        named as blank in this part: Grader.settle then grades the part again with that cell when it is sound.
        Failing that, a name a demo cell defines is said to be one (grading runs none); else the first own copy that
        may bind names no statement shows, as it runs (_binds_at_run_time: a helper pushed into the namespace through
        get_ipython().push(), which Jupyter runs as any other binding), is named so: what the cell bound is then the
        lent run's to show, never the grader's reading of the student's words, and the lent grading counts only
        when it passes as many checks or more."""
        name, attribute = _NAME_ERROR.search(text), _NO_ATTRIBUTE.search(text)
        missing = name or attribute
        if not missing or BLANK_HERE in text:
            return text
        released = self.defined_by.get(missing[1]) if name else None  # its stub, when borrowed, binds it (why_undefined)
        cell = next((cell for cell, own in self.own_copies.items() if cell != released and (
            self.binds(f"your {cell}", own, missing[1]) if name
            else self.defines_attribute(cell, own, missing[1]))), None)
        if cell:
            return f"{text} (your cell {cell} defines {missing[1]}, and it {_blank(cell)})"
        if not name or name[1] in self.defined_by:  # else why_undefined names the released cell that defines it
            return text
        demo = self.demonstrated.get(missing[1])  # (red-b12 5: mlp() of demo_count_parameters)
        if demo:
            return f"{text} ({missing[1]} is defined in demo cell {demo}; grading runs no demo cell)"
        cell = next((cell for cell, own in self.own_copies.items() if self.binds_at_run_time(cell, own)), None)
        return f"{text} (your cell {cell} may bind {missing[1]} as it runs, and it {_blank(cell)})" if cell else text

    def binds_at_run_time(self, where: str, text: str) -> bool:
        """_binds_at_run_time, searched once per cell while the runner lives (the cell may be megabytes long)."""
        if where not in self.run_time:
            self.run_time[where] = _binds_at_run_time(text)
        return self.run_time[where]

    def defines_attribute(self, cell: str, text: str, name: str) -> bool:
        """_defines_attribute on the student's own copy of `cell`, searched once per cell and name (binds)."""
        key = (f"your {cell}'s classes", name)
        if key not in self.binding:
            self.binding[key] = _defines_attribute(read_as_python(text), name)
        return self.binding[key]

    def because(self) -> str:
        """' (because <what the student's first cell that raised as it loaded raised>)', or '': why a name the
        check looks for may be missing (an exercise's cell that stopped before assigning it)."""
        return f" (because {self.missing or self.own_errors[0]})" if self.missing or self.own_errors else ""

    def why_undefined(self, name: str, load_errors: list[str], seen: frozenset[str] = frozenset()) -> str:
        """Why `name` was not found ('' when the facts do not say): the load error of the cell that defines it
        in the released notebook, or what that error's own missing name comes from (a class whose base class
        is missing), or that the cell, loaded, has no line that binds it (_binds). A stub borrowed from the release is never
        the cause, nor a cell the student added."""
        cell = self.defined_by.get(name)
        if cell is None or cell in seen:
            return ""
        error = next((e for e in load_errors if e.startswith(f"cell {cell}:")), "")
        if error:
            deeper = _NAME_ERROR.search(error)
            needed = deeper[1] if deeper else ""
            below = self.defined_below(cell, needed) if needed else ""
            if below:  # the student's order (a stub stands where the student's copy of its cell does)
                return f"cell {cell} stands above cell {below} in your notebook, so {needed} is not defined yet when it runs"
            cause = self.why_undefined(deeper[1], load_errors, seen | {cell}) if deeper else ""
            return cause or ("" if error.startswith(self.borrowed) else error)
        text = next((c.source for c in self.cells if c.name == cell), None)
        return "" if text is None or self.binds(cell, text, name) else f"cell {cell} defines no {name}"

    def defined_below(self, cell: str, name: str) -> str:
        """The cell that defines `name` in the released notebook, if the student moved one of the two: it stands
        above `cell` in the release, and in the student's notebook (this part runs its order, as Jupyter does) below
        it; else ''. A cell the student deleted stands nowhere, whatever stands in for it (release_order holds none)."""
        definer = self.defined_by.get(name)
        placed = [c.name for c in self.cells]
        released = self.release_order
        return definer if (definer in placed and cell in placed and definer in released and cell in released
                           and placed.index(definer) > placed.index(cell)
                           and released.index(definer) < released.index(cell)) else ""


_BLANK_CELL = re.compile(re.escape(BLANK_HERE) + r", and not all of cell (\S+)'s do")  # the cell _blank names


def _blank(cell: str) -> str:
    """What a cell the part took blank is, with the cell named: its stubs are named (SGD.zero_grad) where a part
    reached them, and another part of that cell may be the one that fails (test_step)."""
    return f"{BLANK_HERE}, and not all of cell {cell}'s do"


def _binds(text: str, name: str) -> bool:
    """Whether a statement of `text` binds `name`, at any indentation (namespace_lines gives only the statements run
    in the notebook's namespace, a block's at the top level among them): class, def, an assignment, an import, a for
    target, `global`, an `as` target (`with … as`, `import … as`; not `except … as`, whose name the block's end
    deletes), a walrus target. An assignment binds each name of its target list (`ZERO, ONE = ...`, `(A, *B) = ...`)
    and of a chain (`a = b = 0`); an import each name it lists (`import math, itertools`, `from M import X, Y as Z`: X
    and Z), a dotted module its first part (`import a.b`: a); a for each name of its target list. The student's code is
    only searched here, line by line in linear time, never parsed: parsing is the sandbox's (code nested past the
    parser's depth, or megabytes of it, would cost the grader's own time and memory). Hence each part of a line the
    patterns repeat cannot be read two ways (a chain's target starts with no blank, an import's names are found by a
    lazy scan from one start, the scan for `as` and `:=` is the one pattern that starts with no indentation), so no
    backtracking multiplies."""
    word = re.escape(name)
    imported = rf"(?:from[ \t]+[\w.]+[ \t]+)?import[ \t](?:[^\n#;]*?[ \t,(])?{word}\b(?![ \t]+as\b)"
    target = r"\*?[\w.]+(?:\[[^\]\n]*\])?"  # a name, attribute or subscript in a target list
    assigned = (rf"(?:[\w.*\[\]][\w., \t*\[\]]*=(?!=)[ \t]*)*(?:[(\[][ \t]*)?(?:{target}[ \t]*,[ \t]*)*\*?{word}[ \t]*"
                rf"(?::[^=\n]*|,[^=\n(<>!]*|[)\]][ \t]*)?=(?!=)")  # (not a keyword argument, nor a comparison)
    looped = rf"(?:async[ \t]+)?for[ \t(\[]+(?:{target}[ \t)\]]*,[ \t(\[]*)*\*?{word}\b(?![ \t]*[.\[(])"
    declared = rf"global[ \t]+(?:\w+[ \t]*,[ \t]*)*{word}\b"
    named = rf"(?![ \t]*except\b)[^\n#]*?(?:[ \t]as[ \t]+{word}\b|(?<![\w.]){word}[ \t]*:=)"  # `as`, walrus
    return re.search(rf"^(?:[ \t]*(?:(?:async[ \t]+)?(?:class|def)[ \t]+{word}\b|{assigned}|{imported}|{looped}"
                     rf"|{declared})|{named})", text, re.MULTILINE) is not None


def _defines_attribute(text: str, name: str) -> bool:
    """Whether `text` gives a class or an object the attribute `name`: a line that binds it at any indentation (a
    method, a class attribute: _binds), or an assignment to it on an object (`self.name = `). Linear, never parsed."""
    return _binds(text, name) or re.search(rf"\.{re.escape(name)}[ \t]*(?::[^=\n:]*)?=(?!=)", text) is not None


# What binds a name in the notebook's namespace that no statement names (Jupyter runs each as any other binding):
# the shell's push(), ex(), run_cell() and user_ns, the namespace as globals() or the module __main__, exec(), the
# builtins, and %run's script; a star import, which binds the names its module holds (`from numpy import *`: zeros_like).
# Not vars() nor setattr(), which a right Module reads or writes its own attributes with.
_RUN_TIME_BINDING = re.compile(r"\bget_ipython\b|\b(?:globals|exec)[ \t]*\(|\bimport[ \t]+__main__\b"
                               r"|\bsys\.modules\b|\bbuiltins\b|%run\b"
                               r"|\bimport[ \t]*\*")


def _binds_at_run_time(text: str) -> bool:
    """Whether `text` may bind names as it runs that no line of it binds as a statement (_RUN_TIME_BINDING), at any
    depth: a function the cell calls may push its helper. Searched, never parsed (_binds says why); linear."""
    return _RUN_TIME_BINDING.search(text) is not None


def _in_form(outcome: Outcome, probe: Callable, kwargs: dict) -> Outcome:
    """`outcome`, or where its answer is in no form `probe` writes (answer_form.py), no answer but the reason: the
    notebook rewrote what the probe sent back, and no check reads it."""
    fault = answer_fault(form_of(probe, kwargs), outcome.value) if outcome.ok else ""
    return replace(outcome, ok=False, value=None, reason=f"{NOT_IN_FORM}: {fault}") if fault else outcome


@functools.cache
def _fixtures(test: Callable) -> tuple[str, ...]:
    """The runners `test` asks for by name, as pytest gives its fixtures (a check added mid-term may take `student`
    alone): never by place."""
    return tuple(name for name in ("student", "reference") if name in inspect.signature(test).parameters)


def _result(check: Check, student: Runner, reference: Runner) -> CheckResult | None:
    """Run one check; None while it waits for an answer. A check fails by an assertion only (a CheckFailed among
    them): anything else its code raises, on answers in their probes' forms, is a GraderBug, and no result."""
    try:
        fixtures = {"student": student, "reference": reference}
        check.test(**{name: fixtures[name] for name in _fixtures(check.test)}, **check.params)
    except _Waiting:
        return None
    except CheckNotRun as error:
        return CheckResult(check.name, Status.NOT_RUN, failure_message(error, student.missing if student.one_cell else ""))
    except AssertionError as error:
        return CheckResult(check.name, Status.FAILED, failure_message(error, student.missing if student.one_cell else ""))
    except Exception as error:
        raise GraderBug(f"the hidden check {check.name} raised {type(error).__name__}: {str(error).strip()} "
                        "(a grader bug)") from error
    return CheckResult(check.name, Status.PASSED, "")


def failure_message(error: BaseException, missing: str = "") -> str:
    """A failed check's one line: the assertion's message (a CheckFailed's reason); with `missing` (the load error
    of a solution cell missing from the notebook), that cause too. Anything else a check pytest runs itself raised
    is a grader bug (_result's GraderBug), named as the grader's failure."""
    if not isinstance(error, AssertionError):
        return grader_failure(error)
    message = (str(error).strip() or f"{type(error).__name__} in the check").splitlines()[0]
    if missing and "missing" not in message:  # the cause, not its consequence
        message = f"{message} (because {missing})"
    return message


def run_checks(checks: list[Check], student: Runner, reference: Runner) -> list[CheckResult]:
    """Every check's result. A part whose calls the student's runner fetches together (all in one child of
    the loaded program, Runner.together) keeps those results only if every check passes; otherwise every
    check runs again, each call in a child of its own, and those results count: what one call leaves behind
    never costs another, and a part that passes costs one process, not one a call."""
    results = _run_rounds(checks, student, reference)
    if not all(result.passed for result in results) and student.run_alone():
        results = _run_rounds(checks, student, reference)
    return results


def _run_rounds(checks: list[Check], student: Runner, reference: Runner) -> list[CheckResult]:
    """Run every check, fetch what they wait for in one batch each, run the waiting again, until none waits."""
    results: list[CheckResult | None] = [None] * len(checks)
    waiting = list(range(len(checks)))
    batching = _BATCHING.set(True)
    try:
        while waiting:
            for index in waiting:
                results[index] = _result(checks[index], student, reference)
            waiting = [index for index in waiting if results[index] is None]
            fetched = [runner.fetch() for runner in (reference, student)]
            if waiting and not any(fetched):
                raise RuntimeError(f"{checks[waiting[0]].name} waits for an answer it never asked for (a grader bug)")
    finally:
        _BATCHING.reset(batching)
    return [result for result in results if result is not None]  # all of them: none is waiting


def _reference_runner(assignment: Assignment, sandbox: Sandbox, fresh: bool = True) -> Runner:
    """A runner on the whole reference solution (every cell the reference's own), with no answer yet.

    Its sandbox runs the reference alone: no student code ever runs next to it. Where the course holds no
    reference (the Gradescope zip), only the answers it was shipped with (_ShippedAnswers).
    """
    if not assignment.has_reference:
        return _ShippedAnswers(sandbox, [], None, fresh=fresh)
    program = program_from_notebook(assignment.reference, assignment.source, student_cells="all")
    return Runner(sandbox, program, None, fresh=fresh)


class _ShippedAnswers(Runner):
    """The reference where only its answers were shipped: a call not among them is the grader's failure (a
    RuntimeError, so no score is given), never an answer made up."""

    def fetch(self) -> bool:
        if not self.wanted:
            return False
        probe = next(iter(self.wanted))[0]
        raise RuntimeError(f"the reference's answer to a {probe} call is not among the answers shipped with the "
                           "grader: build the zip again with make gradescope")


def part_program(assignment: Assignment, notebook: dict, suite: Suite, stops: Mapping[str, int] | None = None,
                 found: Mapping[str, str] | None = None, bound: Mapping[str, list[str]] | None = None) -> list[Cell]:
    """What one part runs for a submission: the student's cells the suite names, and for every other
    solution cell the public release's blank stub, never the reference (nothing of the answer key may
    enter a process that runs student code). Its probes call only the stub they grade.
    A stub stands in for the student's own copy of its cell, so it replaces only the names that copy binds: a name the
    copy does not bind (an emptied cell no_grad, or a deleted one, whose no_grad the student wrote atop cell sgd)
    keeps what the cells above bound, as in the notebook run top to bottom (_keeping), and so does a name the copy binds
    only below the line that stopped it as the whole notebook ran (`stops`: Grader.settle's, a first line that raises),
    unless the sandbox saw the cell bind it as it ran (`bound`, the loader's: a def's or class body's `global`, or
    globals()[...], which the lines above the stop do not show; a stopped cell it holds no names of is read as binding
    every name).
    A cell of the student's that the part runs but does not grade, below the part's test cell, gives it nothing of what
    the graded cells' tasks name (_held_below). A graded cell the notebook does not hold takes the cell that holds its
    code from the student (`found`: hosts, by default read here; taken), and where its stub stands in for it, that cell
    is its own copy (the stub replaces the Linear of the merged cell module, never to put back a draft above it:
    red-a16 X25-a16-3)."""
    stops = stops or {}
    found = hosts(assignment, notebook, stops) if found is None else found
    program = program_from_notebook(notebook, assignment.source, assignment.release,
                                    taken(suite.student_cells, found), found)
    if suite.student_cells == "all":
        return _held_below(assignment, notebook, suite, program, found)
    released = _released(assignment)
    stubs = {gid: annotations_as_text(text) for gid, text in released.items()
             if gid not in taken(suite.student_cells, found)}
    copies = {cell.name: cell for cell in program_from_notebook(
        notebook, assignment.source, assignment.release, (*stubs, *found.values()), found)}
    own = {gid: namespace_lines(_ran(copies[found.get(gid, gid)], stops)) for gid in stubs if gid in copies}
    seen = {gid: _seen_bound(found.get(gid, gid), stops, bound or {}) for gid in own}
    program = [replace(cell, source=_keeping(cell.source, stubs[cell.name], [
        name for name in sorted(bound_names(stubs[cell.name]))
        if not (_binds(own[cell.name], name) or name in seen[cell.name] or EVERY_NAME in seen[cell.name])]))
        if cell.name in stubs else cell for cell in program]
    return _held_below(assignment, notebook, suite, program, found)


def _held_below(assignment: Assignment, notebook: dict, suite: Suite, program: list[Cell], found: Mapping[str, str]
                ) -> list[Cell]:
    """`program`, the part's, with each cell of the student's that it runs but does not grade (a cell lent to it, the
    cell that holds a lent cell's code, `found`: hosts; a cell the student added) held (_holding) where it stands below
    the part's test cell in the student's notebook, as Jupyter runs that cell before it; where the notebook holds no
    such test cell, wherever it stands below a graded cell. The test cell, not the graded cell: a fix the student
    added between cell sgd and test_step (`SGD.step = ...`), or a cell linear that sets Module.parameters above
    test_parameters, has run when Jupyter's test cell runs, and a wrong cell so mended costs no part there either.
    The part that grades the whole notebook grades every solution cell (a momentum SGD tried at its end, below
    test_lesson_numbers, costs no part: red-a16 X25-a16-1)."""
    released = _released(assignment)
    trusted = {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in assignment.source.cells
               if cell.metadata.get("nbgrader", {}).get("solution")}
    graded: dict[str, frozenset[str]] = {}  # by the cell that holds the graded code (its host, when merged into one)
    for gid in released if suite.student_cells == "all" else suite.student_cells:
        if gid in released and gid not in suite.lent:
            host = found.get(gid, gid)
            graded[host] = graded.get(host, frozenset()) | task_names(trusted.get(gid, ""), released[gid])
    lent = set(taken(suite.lent, found))  # and the cells that hold their code (red-a16 X25-a16-4)
    known = {cell.metadata.get("nbgrader", {}).get("grade_id") for cell in assignment.source.cells}
    ungraded = {cell.name for cell in program if cell.name not in graded and (cell.name in lent or cell.name not in known)}
    below = standing_below(notebook, assignment.source, suite.grade_id)
    return _holding(program, graded, ungraded if below is None else ungraded & below)


def _released(assignment: Assignment) -> dict[str, str]:
    """{grade id: the public release's text} of the assignment's solution cells."""
    return {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in assignment.release.cells
            if cell.metadata.get("nbgrader", {}).get("solution")}


def hosts(assignment: Assignment, notebook: dict, stops: Mapping[str, int] | None = None) -> dict[str, str]:
    """{a solution cell the student's notebook does not hold: the student's cell that holds its code}: of the student's
    solution cells and added cells with a line that binds each name the cell's release stub binds (_binds), the last in
    the notebook's order above the test cell that follows the missing cell in the release (where the student kept one;
    else the last of all), each read as far as the whole notebook's run ran it (`stops`: Grader.settle's). Merge Cells
    keeps the upper cell's metadata (cell linear merged into cell module is cell module, holding Module then Linear),
    and Jupyter runs the code where it stands, so what that test cell meets is the last binding above it, never a draft
    the student wrote above the merged cell, nor a scratch cell that stopped before its binding (red-a16 X25-a16-3):
    the part that grades the missing cell grades that code, never a stand-in that raises (red-b15 X24-b15-1). A stub
    that binds no name (an exercise's, whose answer its task names) has none: an answer is assigned in its own cell,
    as its message says. Read once per notebook (_hosting), however many parts ask (red-a16 X25-a16-5)."""
    held, released = held_cells(notebook), _released(assignment)
    named = {gid: names for gid, text in released.items() if gid not in held and (names := sorted(bound_names(text)))}
    if not named:
        return {}
    order = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in assignment.source.cells]
    tests = {gid for cell, gid in zip(assignment.source.cells, order) if cell.cell_type == "code"
             and cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"].get("solution")}
    places, stops = last_copies(notebook), stops or {}
    below = {gid: next((places[test] for test in order[order.index(gid) + 1:] if test in tests and test in places), None)
             for gid in named}
    kept = held & set(released)
    cells = tuple((cell.name, places[cell.name] if cell.name in kept else int(cell.name), _ran(cell, stops))
                  for cell in program_from_notebook(notebook, assignment.source, assignment.release)
                  if cell.name in kept or cell.name not in order)  # (a cell the student added is named by its index)
    return dict(_hosting(tuple((gid, tuple(names), below[gid]) for gid, names in named.items()), cells))


def _seen_bound(cell: str, stops: Mapping[str, int], bound: Mapping[str, list[str]]) -> list[str]:
    """The names the sandbox saw `cell` bind as it ran, where the whole notebook's run stopped it (the loader sends
    those of the first LOAD_BOUND cells that stopped: another reads as binding EVERY_NAME); else none needed (the
    cell is read whole)."""
    return list(bound.get(cell, [EVERY_NAME])) if cell in stops else []


def _ran(cell: Cell, stops: Mapping[str, int]) -> str:
    """What of `cell` the whole notebook's run ran: the lines above the one that stopped it (`stops`), or all of it."""
    return run_before(cell.source, stops[cell.name]) if cell.name in stops else cell.source


@functools.lru_cache(maxsize=4)  # every part of a submission asks (part_program); a cell may be megabytes long
def _hosting(named: tuple[tuple[str, tuple[str, ...], int | None], ...], cells: tuple[tuple[str, int, str], ...]
             ) -> tuple[tuple[str, str], ...]:
    """hosts' (missing cell, host) pairs: `named`, each missing cell with its stub's names and the place of the test
    cell below it in the notebook (None: none kept); `cells`, the candidates' (name, place, text) in the notebook's
    order. Each text is read (namespace_lines) at most once."""
    lines: dict[str, str] = {}

    def binds(name: str, text: str, names: tuple[str, ...]) -> bool:
        if name not in lines:
            lines[name] = namespace_lines(text)
        return all(_binds(lines[name], word) for word in names)

    found = []
    for gid, names, below in named:
        binding = [(name, place) for name, place, text in cells if binds(name, text, names)]
        above = [name for name, place in binding if below is None or place < below]
        if binding:
            found.append((gid, (above or [name for name, _ in binding])[-1]))
    return tuple(found)


def taken(cells: tuple[str, ...] | str, found: Mapping[str, str]) -> tuple[str, ...] | str:
    """The cells a part that grades `cells` takes from the student: those, and the cell that holds the code of one the
    notebook does not hold (`found`: hosts; a cell the student added, named by its index, runs in every part)."""
    return cells if cells == "all" else (*cells, *(found[cell] for cell in cells if cell in found))


_KEPT = "__kept_from_your_cells_above"  # what the cells above bound of a stub's names, while the stub runs


def _keeping(text: str, stub: str, names: list[str]) -> str:
    """The release's copy `text` (the stub, under the student's __future__ imports), its `names` bound again after it
    runs to what they held before it, where they held anything."""
    if not names:
        return text
    futures = text[:len(text) - len(stub)]
    return f"{futures}{_KEPT} = {_held(names)}\n{stub}\nglobals().update({_KEPT})\ndel {_KEPT}\n"


def _held(names: list[str]) -> str:
    """An expression: what `names` hold in the notebook's namespace now, those that hold anything."""
    return f"{{name: globals()[name] for name in {tuple(names)!r} if name in globals()}}"


_HELD = "__held_for_the_cells_this_part_grades"  # puts back what a graded cell's names held before a lent cell below

# The grader's cell before such a lent cell: what the names hold now, and each class and function among them as it is
# (a class's own attributes, a function's code and defaults), kept in a closure, which no look through the namespace
# for a dict holding "SGD" finds; the cell after it calls the closure. A function of the notebook's namespace, so its
# globals() are the notebook's.
_HOLD = """\
def {held}(names={names!r}, function=type(lambda: None)):
    held = {{name: globals()[name] for name in names if name in globals()}}
    classes = [(value, dict(vars(value))) for value in held.values() if isinstance(value, type)]
    functions = [(value, value.__code__, value.__defaults__, value.__kwdefaults__)
                 for value in [*held.values(), *(value for _, own in classes for value in own.values())]
                 if isinstance(value, function)]

    def put_back():
        [globals().pop(name, None) for name in names]
        globals().update(held)
        for cls, own in classes:
            [delattr(cls, name) for name in set(vars(cls)) - set(own)]
            [setattr(cls, name, value) for name, value in own.items() if vars(cls).get(name, put_back) is not value]
        for value, code, defaults, keywords in functions:
            value.__code__, value.__defaults__, value.__kwdefaults__ = code, defaults, keywords
    return put_back


{held} = {held}()
"""


def _holding(program: list[Cell], graded: Mapping[str, frozenset[str]], ungraded: set[str]) -> list[Cell]:
    """`program`, each cell of `ungraded` (_held_below's) that runs below a cell of `graded` (the names its task binds,
    by cell) between two cells of the grader's: those names (SGD for cell sgd, count_64_32_10 for Exercise 1) hold
    after that cell what they held before it, bound or not, and a class or function they hold is put back as it was (a
    method the cell sets on SGD is undone). In Jupyter the part's test cell runs before any cell below it: a lent cell
    there gives the part what the graded cell calls of it (no_grad, for a step() under `with no_grad():`), and a cell
    the student added there a helper, never a class or an answer of its own in place of the graded one (a right SGD
    copied to the end of cell no_grad, or set on SGD there: red-b13 4, red-b15 X24-b15-2; a right count there:
    X24-b15-6; `SGD.step = ...` in a cell added below test_step, or a momentum SGD below every test cell: red-a16
    X25-a16-1), so one wrong step() costs its part whether or not it calls no_grad. The held cell itself runs as the
    student wrote it (its lines are its messages', a cell magic stays its first line): the grader's code is in cells
    of its own, which bind nothing else once the cell after it has run."""
    names: list[str] = []  # the names of the graded cells above
    held: list[Cell] = []
    for cell in program:
        if cell.name in ungraded and names:
            held += [Cell(f"{cell.name} (before it)", _HOLD.format(held=_HELD, names=tuple(names))), cell,
                     Cell(f"{cell.name} (after it)", f"{_HELD}()\ndel {_HELD}\n")]
        else:
            held.append(cell)
        names += sorted(graded.get(cell.name, ()))
    return held


def reference_answers(assignment: Assignment, settings: GraderSettings, fresh: bool = False) -> dict[tuple[str, str], Outcome]:
    """The reference's answer to every probe call its checks make, with the reference in the student's
    place too, so every call a correct submission leads to is answered (grading.prepare_class fetches
    them once for the class).

    Not `fresh`, the calls share one process: the reference leaves nothing behind that changes an
    answer (tests/test_grading.py checks that both ways give the same answers).
    """
    with reference_sandbox(assignment, settings) as sandbox:
        runner = _reference_runner(assignment, sandbox, fresh)
        for suite in load_suites(assignment):
            run_checks(suite.checks, runner, runner)
    return runner.memo


@dataclass(frozen=True, eq=False)
class PreparedClass:
    """What every grading process of a class shares, made once by grading.prepare_class before the pool
    forks (the processes inherit it), and handed to each Grader: the assignment and the settings the
    entry point built, the hidden suites, the reference's answers, and the redactor of every message.

    A call only a wrong submission leads to is not among the answers: a Grader fetches it (in a fresh
    child of its reference sandbox) when a check asks for it.
    """

    assignment: Assignment
    settings: GraderSettings
    suites: list[Suite]
    reference_answers: dict[tuple[str, str], Outcome]
    redactor: Redactor


class Grader:
    """Grades submissions of a prepared class one after another in this process, with two warm sandboxes.

    The one way to grade with the hidden suites: the batched grader (grade) and the pytest plugin (a
    session, then part_runner and run_checks, part by part) both make one from a PreparedClass. The
    reference's answers are kept for every submission it grades; its sandbox starts only if a check asks
    for one not fetched yet.
    """

    def __init__(self, prepared: PreparedClass, student_box: Sandbox | None = None) -> None:
        """`student_box`: the class's student sandbox, made (and perhaps started) before; by default a new one."""
        self.prepared = prepared
        self.student_box = student_box or student_sandbox(prepared.assignment, prepared.settings)
        self.student_box.start()  # its worker imports numpy while this process goes on
        self.reference_box = reference_sandbox(prepared.assignment, prepared.settings)
        self.reference = _reference_runner(prepared.assignment, self.reference_box)
        self.reference.memo.update(prepared.reference_answers)
        self.solution_cells = frozenset(cell.metadata["nbgrader"]["grade_id"] for cell in prepared.assignment.release.cells
                                        if cell.metadata.get("nbgrader", {}).get("solution"))
        self.defined_by = defining_cells(prepared.assignment.source, prepared.assignment.release)
        self.release_order = tuple(gid for cell in prepared.assignment.source.cells
                                   if (gid := cell.metadata.get("nbgrader", {}).get("grade_id")))
        self.demonstrated = demonstrated_names(prepared.assignment.source)
        self.owners = {cell: [suite.grade_id for suite in prepared.suites  # the parts that grade each cell
                              if suite.student_cells != "all" and cell in suite.student_cells]
                       for cell in self.solution_cells}
        self.stops: dict[str, int] = {}  # the submission's cells the whole notebook's run stopped, and where (settle)
        self.bound: dict[str, list[str]] = {}  # the names each of those bound as it ran, as the sandbox saw (settle)
        self.hosts: dict[str, str] = {}  # the submission's hosts with those stops, read once for every part (settle)

    def begin_session(self) -> None:
        """Give the next submission a session of its own (a fresh confined process tree) for all its parts,
        with the time budget for all of them."""
        self.student_box.begin(self.prepared.settings.budget_seconds)

    def end_session(self, submission: Submission) -> None:
        """End the submission's session (what it left running ends with it); the limits it hit go to its
        `limits`."""
        submission.limits += self.student_box.end()

    def part_runner(self, submission: Submission, suite: Suite) -> Runner:
        """The runner on the part's program for `submission`, in the student sandbox's current session.

        A part that takes one cell from the student runs its checks one after another in one process:
        what that cell leaves behind stays within its part. A part that takes the whole notebook starts
        each check afresh, so state one cell's bug leaves behind cannot cost checks about other cells
        (run_checks first runs them together in one child, and keeps that only if every check passes).
        """
        notebook = submission.notebook
        assert notebook is not None, "only a notebook that was read is graded"
        cells = part_program(self.prepared.assignment, notebook, suite, self.stops, self.hosts, self.bound)
        fresh = suite.student_cells == "all"
        borrowed = frozenset() if fresh else self.solution_cells - set(taken(suite.student_cells, self.hosts))
        own = {cell.name: cell.source for cell in part_program(self.prepared.assignment, notebook, replace(
            suite, student_cells=tuple(sorted(borrowed))), found=self.hosts) if cell.name in borrowed}
        held = held_cells(notebook)
        return Runner(self.student_box, cells, submission, fresh=fresh, together=fresh, borrowed=borrowed,
                      one_cell=not fresh, defined_by=self.defined_by, own_copies=own, demonstrated=self.demonstrated,
                      release_order=tuple(gid for gid in self.release_order if gid in held))

    def grade(self, submission: Submission) -> None:
        """Fill in `submission.results` (by grade_id) and `submission.limits`, in one session (settle)."""
        self.begin_session()
        for grade_id, (_, results) in self.settle(submission).items():
            submission.results[grade_id] = results
        self.end_session(submission)

    def settle(self, submission: Submission) -> dict[str, tuple[Runner, list[CheckResult]]]:
        """Every part's runner and results, in the submission's current session: each part as its own cells alone
        give it, in the suites' order, then again with sound cells lent where that needs them (lend), round after
        round while a part has more sound cells to take: a cell whose parts pass in full only once lent (a right
        step() under a right no_grad()) is sound, and lent in turn (to an exercise computed with SGD). When no
        single cell is left to lend, cells that each need another's are tried as a set (lend_together). Then no message
        names a cell never lent as the cause (unblamed). Where the run of a part that grades the whole notebook stopped
        a cell of the student's (stopped) tells what that cell binds where a stub stands in for it (with the names the
        sandbox saw it bind: bound), and which cell holds
        the code of a missing one (hosts, read once for every part with those stops): a part graded before that was
        known is graded again if its program changes (rare: a cell whose run stopped above a line that binds what a
        cell above bound too)."""
        parts = {}
        assert submission.notebook is not None, "only a notebook that was read is graded"
        self.stops, self.bound, self.hosts = {}, {}, hosts(self.prepared.assignment, submission.notebook)
        for suite in self.prepared.suites:
            runner = self.part_runner(submission, suite)
            parts[suite.grade_id] = (runner, run_checks(suite.checks, runner, self.reference))
            if suite.student_cells == "all":
                outcome = next(iter(runner.memo.values()), None)
                self.stops.update(outcome.stops if outcome else {})
                self.bound.update(outcome.bound if outcome else {})
        self.hosts = hosts(self.prepared.assignment, submission.notebook, self.stops)
        for suite in self.prepared.suites if self.stops else ():
            runner = self.part_runner(submission, suite)
            if runner.cells != parts[suite.grade_id][0].cells:
                parts[suite.grade_id] = (runner, run_checks(suite.checks, runner, self.reference))
        tried: dict[str, tuple[str, ...]] = {}  # part -> the sound cells it was last graded with
        while True:
            results = {grade_id: part[1] for grade_id, part in parts.items()}
            lent = False
            for suite in self.prepared.suites:
                cells = self.sound_cells(suite, results)
                if not cells or cells == tried.get(suite.grade_id):
                    continue
                tried[suite.grade_id], lent = cells, True
                again = self.lend(submission, suite, results[suite.grade_id], cells)
                if again:
                    parts[suite.grade_id] = again
            if not lent:
                together = self.lend_together(submission, results)
                if not together:  # (a set that held is sound from then on, so none is tried twice)
                    return self.unblamed(parts)
                parts.update(together)

    def unblamed(self, parts: dict[str, tuple[Runner, list[CheckResult]]]) -> dict[str, tuple[Runner, list[CheckResult]]]:
        """`parts` once no cell is left to lend, each runner left the student's own copies of only the sound cells, and
        a part whose messages may have named another (Runner.own_name_named) checked again on the answers it holds (no
        call runs again). A cell named as one that binds the name not found, or the attribute, is the grader's reading
        of the student's text, which a lent run confirms or not; a cell never lent (a part of its own fails) is one no
        run ever showed to be the cause (a `globals()` it prints, a `self.params =` of another class): the message is
        then the error alone, never a claim nothing checked (red-b13 3)."""
        results = {grade_id: part[1] for grade_id, part in parts.items()}
        sound = {cell for cell in self.solution_cells if self.sound(cell, results)}
        for suite in self.prepared.suites:
            runner, checked = parts[suite.grade_id]
            unsound = set(runner.own_copies) - sound
            runner.own_copies = {cell: text for cell, text in runner.own_copies.items() if cell in sound}
            if unsound and not all(result.passed for result in checked):
                parts[suite.grade_id] = (runner, run_checks(suite.checks, runner, self.reference))
        return parts

    def sound_cells(self, suite: Suite, results: Mapping[str, list[CheckResult]]) -> tuple[str, ...]:
        """The cells the part took blank to lend it, when its checks reached such a stub (BLANK_HERE: a right step()
        under the student's `with no_grad():`, an exercise counted with the student's classes): the student's own
        cells every part that grades them passed in full (`results`: each part's so far), so the answer key still never
        meets the student's code, and a cell any part found wrong stays blank: one mistake still costs one part."""
        if suite.student_cells == "all" or not any(BLANK_HERE in result.message for result in results[suite.grade_id]):
            return ()
        return tuple(cell for cell in sorted(self.solution_cells - set(suite.student_cells)) if self.sound(cell, results))

    def sound(self, cell: str, results: Mapping[str, list[CheckResult]]) -> bool:
        """Whether some part grades `cell` and every part that does passed in full."""
        return bool(self.owners[cell]) and all(all(r.passed for r in results[part]) for part in self.owners[cell])

    def lend_together(self, submission: Submission, results: Mapping[str, list[CheckResult]]
                      ) -> dict[str, tuple[Runner, list[CheckResult]]]:
        """The cells the parts named blank (_BLANK_CELL) that no part found wrong (each check of theirs that failed,
        failed on a stub or helper the part took blank), lent together to their own parts, each but its own: cells
        that each pass only with another lent (no_grad() calling a helper of cell sgd while step() runs under
        no_grad()), which no single lend reaches. Kept when every part of those cells then passes in full, so they
        are sound together; a cell whose part still fails is dropped from the set and the rest tried again, so a
        wrong cell is never lent and one mistake still costs one part. Those parts' runners and results, or {}."""
        named = {cell for part in results.values() for result in part for cell in _BLANK_CELL.findall(result.message)}
        cells = {cell for cell in named if self.owners.get(cell) and not self.sound(cell, results) and not any(
            not r.passed and BLANK_HERE not in r.message for part in self.owners[cell] for r in results[part])}
        while cells:
            graded = {}
            for suite in self.prepared.suites:
                if suite.student_cells != "all" and cells & set(suite.student_cells) and not all(
                        r.passed for r in results[suite.grade_id]):
                    lent = (set(self.sound_cells(suite, results)) | cells) - set(suite.student_cells)
                    runner = self.part_runner(submission, suite.lending(tuple(sorted(lent))))
                    graded[suite.grade_id] = (runner, run_checks(suite.checks, runner, self.reference))
            now = {**results, **{part: again for part, (_, again) in graded.items()}}
            sound = {cell for cell in cells if self.sound(cell, now)}
            if sound == cells:
                return graded
            cells = sound
        return {}

    def lend(self, submission: Submission, suite: Suite, results: list[CheckResult],
             cells: tuple[str, ...]) -> tuple[Runner, list[CheckResult]] | None:
        """The part graded again with the student's own copy of `cells` (sound_cells), and the runner and results
        when that passes as many checks as `results` or more (its messages then name the part's own mistake, not
        a stub that was in fact sound); else None."""
        runner = self.part_runner(submission, suite.lending(cells))
        again = run_checks(suite.checks, runner, self.reference)
        return (runner, again) if sum(r.passed for r in again) >= sum(r.passed for r in results) else None

    def close(self) -> None:
        self.student_box.close()
        self.reference_box.close()
