"""A probe's answer is checked against the form the probe writes before any check reads it (autograder/checks/
answer_form.py), and what a check's own code raises on an answer in that form is the grader's failure, never a grade.

* the forms: what each shape of the vocabulary takes and refuses, and every probe declares one;
* an answer in no form its probe writes (the notebook rewrote it in the sandbox) is the submission's failure of that
  part, named as such, and costs no other part;
* a check that raises on a well-formed answer (a grader bug, injected here as E12-2 was: a look-up of the type name of
  a container an OrderedDict parameters() kept) ends the notebook's grading as the grader's failure, with no score.
"""
from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.checks.answer_form import NOT_IN_FORM, answer_fault, form_of
from autograder.checks.parametrize import Check
from autograder.checks.suites import GraderBug, run_checks
from conftest import ASSIGNMENT, ROOT, course_copy, grade_json, solution_notebook, write_notebook

SUITES = ROOT / "autograder" / ASSIGNMENT.name


def test_each_shape_of_the_vocabulary_takes_what_a_probe_writes_and_refuses_the_rest():
    assert answer_fault([int, ...], [1, 2, 3]) == "" and answer_fault([int, ...], []) == ""
    assert answer_fault([int, ...], [1, True]) == "the answer[1] is True, not a whole number"
    assert answer_fault([str, bool], ["a", False]) == "" and "holds 1 items, not 2" in answer_fault([str, bool], ["a"])
    assert answer_fault((float, None), None) == answer_fault((float, None), 2) == answer_fault(float, 2.5) == ""
    assert answer_fault(range(-1, 3), -1) == "" and "from -1 to 2" in answer_fault(range(-1, 3), 3)
    assert answer_fault(("class", "self"), "self") == "" and answer_fault(("class", "self"), "selfish")
    assert answer_fault(np.ndarray, [[1.0, float("nan")], [2, 3.0]]) == "" and answer_fault(np.ndarray, 1.5) == ""
    assert "not an array" in answer_fault(np.ndarray, [[1.0], [2.0, 3.0]])  # ragged: np.allclose would raise
    assert "not an array" in answer_fault(np.ndarray, [[1.0], ["2"]])
    form = {"z": [float] * 3, "stop": False}
    assert answer_fault(form, {"z": [1, 2, 3.5], "stop": False}) == ""
    assert answer_fault(form, {"z": [1, 2, 3.5]}) == "the answer has no 'stop'"
    assert answer_fault(form, {"z": [1, 2, 3.5], "stop": False, "x": 1}) == "the answer holds 1 keys the probe never writes"
    assert answer_fault(form, {"z": [1, 2], "stop": False}) == "the answer['z'] holds 2 items, not 3"
    said = "ALL CHECKS PASSED"  # what the notebook wrote is never quoted: only its kind
    assert said not in answer_fault({"a": int}, {"a": said}) and said not in answer_fault({"a": int}, {said: 1})


def test_every_probe_declares_the_form_of_its_answer():
    sys.path.insert(0, str(SUITES))
    try:
        import exercise_probes
        import probes
    finally:
        sys.path.remove(str(SUITES))
    found = [(name, value) for module in (probes, exercise_probes) for name, value in vars(module).items()
             if inspect.isfunction(value) and not name.startswith("_") and value.__module__ == module.__name__]
    assert len(found) > 15
    assert [name for name, probe in found if getattr(probe, "answers", None) is None] == []
    assert form_of(probes.parameter_pattern_repeated, {"seed": 0, "calls": "AAB"})["patterns"] == [[probes.INDEX, ...]] * 3
    with pytest.raises(TypeError, match="declares no form of its answer"):
        form_of(probes._plain, {})


class _Answers:
    """A runner whose probe answers nothing but `value`: what run_checks's checks read."""

    def __init__(self, value):
        self.value, self.missing, self.one_cell = value, "", False

    def run(self, probe, **kwargs):
        return self.value

    def fetch(self):
        return False

    def run_alone(self):
        return False


def test_a_check_that_raises_on_a_well_formed_answer_is_a_grader_bug_not_a_failed_check():
    def test_reads_a_key_no_probe_writes(student, reference):
        student.run(None)["none_grads"]

    def test_asserts(student, reference):
        assert student.run(None)["skipped"], "parameters() skipped a subclass"

    answers = _Answers({"skipped": False})
    [failed] = run_checks([Check("test_asserts", test_asserts, {})], answers, answers)
    assert not failed.passed and failed.message == "parameters() skipped a subclass"
    with pytest.raises(GraderBug, match=r"the hidden check test_reads_a_key_no_probe_writes raised KeyError: "
                                        r"'none_grads' \(a grader bug\)"):
        run_checks([Check("test_reads_a_key_no_probe_writes", test_reads_a_key_no_probe_writes, {})], answers, answers)


def test_a_reference_answer_a_check_finds_wrong_is_a_grader_bug_not_a_failed_check():
    """The checks' tests of the reference's own answers (reported.reference_holds) were assertions, written as the
    student's failed check: a wrong reference is the grader's failure."""
    from autograder.checks.suites import load_suites

    [suite] = [suite for suite in load_suites(ASSIGNMENT) if suite.grade_id == "test_exercise_count"]
    answers = _Answers({"count_64_32_10": {"defined": True, "number": 2410.0, "what": ""}})
    assert [result.passed for result in run_checks(suite.checks, answers, answers)] == [True]
    wrong = _Answers({"count_64_32_10": {"defined": True, "number": 2411.0, "what": ""}})
    with pytest.raises(GraderBug, match=r"the reference's count is wrong \(a grader bug\)"):
        run_checks(suite.checks, answers, wrong)


# The module cell of the reference, and a rewrite of what the loader sends back from inside the notebook's process
# (the probes themselves run from code compiled before the notebook's: sandbox/child.py): the answer of test_parameters'
# probe says "every one" where the probe writes the list of the Parameters found. Before answers were checked against
# their form, the check's own `-1 not in pattern` raised TypeError, written as "the check could not run".
FORGED = """

import sys as _sys

_loader = _sys.modules.get("child")
if _loader is not None and not hasattr(_loader, "real_write"):
    _loader.real_write = _loader.write

    def _write(fd, message, real=_loader.real_write):
        value = getattr(message, "value", None)
        if isinstance(value, dict) and "plain_tensors" in value:
            value["pattern"] = "every one"
        return real(fd, message)

    _loader.write = _write
"""


@pytest.mark.slow
def test_an_answer_the_notebook_forged_fails_its_part_with_the_reason_named(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    cell["source"] = "".join(cell["source"]) + FORGED
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))
    parts = {part["grade_id"]: part for part in report["parts"]}
    forged = [t["message"] for t in parts["test_parameters"]["tests"] if not t["passed"]]
    assert forged and all(m == f"{NOT_IN_FORM}: the answer['pattern'] is a text, not a list" for m in forged), forged
    assert {p: part["score"] for p, part in parts.items() if part["score"] != part["max_score"]} == {
        "test_parameters": parts["test_parameters"]["score"]}  # the rest is untouched


# E12-2's grader bug, injected again into a copy of the course: the check of parameters() looks the type name of a
# container parameters() kept up in a table of list, dict and set (causes.stale_list did, before it named OrderedDict).
E12_2 = ('def stale(found, wrong):\n',
         'def stale(found, wrong):\n    [{"list": 0, "dict": 1, "set": 2}[kind] for _, kind, _ in found["kept"]]\n')

@pytest.mark.slow
def test_a_grader_bug_on_a_well_formed_answer_gives_no_score_and_names_the_grader(tmp_path):
    from catalogue_bugs import BUGS

    from autograder.classroom.mutate import apply

    course = course_copy(tmp_path / "course")
    suite = course / "autograder" / ASSIGNMENT.name / "test_parameters.py"
    suite.write_text(suite.read_text().replace(*E12_2))
    [bug] = [b for b in BUGS if b.id == "parameters-seen-ordered-dict-on-instance"]
    notebook = write_notebook(apply(solution_notebook(), list(bug.mutations)), tmp_path / ASSIGNMENT.notebook_name)
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(notebook), "--json"], cwd=course,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 3 and done.stdout == "", done.stdout[-2000:]
    [line] = done.stderr.strip().splitlines()
    assert "the grader failed, not the notebook" in line and "KeyError: 'OrderedDict'" in line
    assert "(a grader bug)" in line and "no score was given" in line
    report, _ = grade_json(Path(ROOT / "solutions" / ASSIGNMENT.name / ASSIGNMENT.notebook_name), course)
    assert report["total"] == report["max"]  # the bug is reached by that answer alone: the reference is graded
    assert json.dumps(report).count("could not run") == 0


# red-f14 X23-f14-1: an honest wrong Linear.forward whose output is transposed, (n_out, batch), sends answers in
# the probe's form (ARRAY takes any shape); test_square_layer_multiplies_by_the_transposed_weight then calls
# np.allclose(got, x @ w + b) before any shape check, NumPy raises ValueError (shapes (4,3) (3,4)), and the whole
# notebook ends as "the grader failed" with no score (exit 3) instead of losing the forward part. Measured on main
# 28dcb74: rc 3, GraderBug ... test_square_layer_multiplies_by_the_transposed_weight[5] raised ValueError; the same
# for `return self.weight @ x.T` (that check again) and `return x` (test_bias_is_added_to_every_row: (4,3) vs (4,5)).
@pytest.mark.parametrize("body", ["return (x @ self.weight.T + self.bias).T", "return self.weight @ x.T", "return x"])
def test_a_wrong_shaped_forward_output_loses_the_forward_part_not_the_whole_grade(tmp_path, body):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    right = "return x @ self.weight.T + self.bias\n"
    assert right in "".join(cell["source"])
    cell["source"] = "".join(cell["source"]).replace(right, body + "\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))  # asserts rc 0
    parts = {part["grade_id"]: part for part in report["parts"]}
    assert parts["test_forward"]["score"] < parts["test_forward"]["max_score"]


# red-f14 X23-f14-1 (on purpose): the released notebook, untouched, grades 0/18; the same notebook with one line in
# Linear.forward, `return (x @ self.weight.T + self.bias).T`, ends as the grader's failure with no score (exit 3; in
# the class run auto_score None, not 0), so a student avoids a zero at will. Measured on main 28dcb74.
def test_a_blank_notebook_cannot_trade_its_zero_for_no_score_by_one_wrong_shape(tmp_path):
    from conftest import release_notebook

    notebook = release_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    stub = "        raise NotImplementedError()"
    assert "".join(cell["source"]).rstrip().endswith(stub.strip())
    cell["source"] = "".join(cell["source"]).rstrip()[: -len(stub)] + "        return (x @ self.weight.T + self.bias).T\n"
    report, _ = grade_json(write_notebook(notebook, tmp_path / ASSIGNMENT.notebook_name))  # asserts rc 0
    forward = next(part for part in report["parts"] if part["grade_id"] == "test_forward")
    # a score, not the grader's failure: only what the transposed forward does right (it changes no weight) counts
    assert report["total"] <= forward["score"] < 0.5, report["total"]
