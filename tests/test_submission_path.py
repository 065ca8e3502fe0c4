"""docs/submission-path.md against the code: every step names a function that exists, and one traced
`grade --json` run goes through the modules in the order the page lists, never calling back into one it left."""
from __future__ import annotations

import contextlib
import importlib
import io
import re
import sys

from conftest import ASSIGNMENT, NOTEBOOK, ROOT

PAGE = ROOT / "docs" / "submission-path.md"
STEP = re.compile(r"^\d+\. `([\w.]+)`", re.M)
VALUES = {"settings", "assignment", "submission", "checks.parametrize", "checks.modules", "outputs.inert"}  # values built once and handed down
# (submission: the notebook being graded, made by validate and filled in by suites; parametrize, modules: the suites'
# checks, imported from their files and expanded when they load; inert: text made safe to print): read, not visited


def steps(section: str) -> list[str]:
    """The `module.function` of each numbered step under the heading that starts with `section`."""
    text = PAGE.read_text()
    start = text.index(f"## {section}")
    end = text.find("\n## ", start + 1)
    return STEP.findall(text[start:end if end > 0 else None])


def resolve(name: str):
    """The object a step names: autograder.<name>, or a name of nbgrader's own (nbgrader.…)."""
    parts = name.split(".") if name.startswith("nbgrader.") else ["autograder", *name.split(".")]
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr)
        return found
    raise ImportError(name)


def kit_module(name: str) -> str:
    """A module of the kit as the page names it: its path under autograder, the sandbox counted as one."""
    name = name.removeprefix("autograder.")
    return "sandbox" if name.split(".")[0] == "sandbox" else name


def module_of(step: str) -> str:
    """The kit's module a step's function or class is defined in."""
    return kit_module(resolve(step).__module__)


def test_every_step_names_a_function_of_the_code():
    for section in ("`make grade`", "`python -m autograder grade"):
        listed = steps(section)
        assert len(listed) >= 6, (section, listed)
        for name in listed:
            assert callable(resolve(name)), name


def test_make_grade_never_returns_to_a_module_it_left():
    order = [module_of(s) for s in steps("`make grade`") if not s.startswith("nbgrader.")]
    turns = [m for i, m in enumerate(order) if m in order[:i] and order[i - 1] != m]
    assert turns == [], order
    assert order.index("grading") < order.index("checks.suites") < order.index("sandbox") < order.index("report")


def _kit_module(frame) -> str | None:
    name = frame.f_globals.get("__name__", "")
    if not name.startswith("autograder."):
        return None
    return kit_module(name)


def test_one_grade_json_run_visits_the_listed_modules_in_order_and_never_calls_back():
    """sys.setprofile over `python -m autograder grade PATH --json`, in this process: every call from one
    of the kit's modules into another goes to a module listed later (settings and assignment are values)."""
    from autograder import __main__ as cli

    order = [module_of(s) for s in steps("`python -m autograder grade")]
    calls: list[tuple[str, str, str]] = []
    after_grade_one: list[str] = []  # the modules grade_one hands the submission to, in order

    def profile(frame, event, arg):
        if event != "call":
            return
        callee = _kit_module(frame)
        if callee is None or callee in VALUES:
            return
        caller_frame = frame.f_back
        while caller_frame is not None and (_kit_module(caller_frame) is None or _kit_module(caller_frame) in VALUES):
            caller_frame = caller_frame.f_back
        caller = _kit_module(caller_frame) if caller_frame is not None else None
        if caller is not None and caller != callee:
            calls.append((caller, callee, frame.f_code.co_name))
            if after_grade_one and caller == "grading" and callee not in after_grade_one:
                after_grade_one.append(callee)
        if callee == "grading" and frame.f_code.co_name == "grade_one" and not after_grade_one:
            after_grade_one.append(callee)

    out = io.StringIO()
    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(out):
            code = cli.main(["grade", str(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK), "--json"])
    finally:
        sys.setprofile(None)  # grade_path closed its Grader
    assert code == 0 and '"total"' in out.getvalue()
    visited = {m for edge in calls for m in edge[:2]}
    assert visited == set(order), (sorted(visited), order)
    backwards = {(a, b, f) for a, b, f in calls if order.index(b) <= order.index(a)}
    assert not backwards, sorted(backwards)
    # prepare_class reads the kept answers before grade_one runs; sandbox and checks.answer_form are reached through
    # suites, intake.files through intake.validate
    reached_through = ("sandbox", "checks.answer_cache", "checks.answer_form", "intake.files")
    assert after_grade_one == [m for m in order[order.index("grading"):] if m not in reached_through], after_grade_one
