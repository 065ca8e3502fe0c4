"""The answer key never enters a process that runs student code (issue 9, item 1).

A part runs the student's cell for that part and the public release's blank stubs for the others; the
probes build what else they need; the reference runs only in its own sandbox. Proven three ways:

* the reference gives every probe call the suites make the same answer whether the other cells are the
  reference's or the release's (so probes use no other part's stub, and grading with the release is fair);
* in a copy of the course whose reference solution (solutions/ and the solution regions of source/) and
  hidden suites carry canary tokens, no part's program holds them, and a student cell that searches its
  own process everywhere it can (tests/answer_key_search.py) finds neither, in every part's process,
  while it does find a control token put in probes.py (so the search works), and does find the
  reference's canary in a program built the old way (so the search would catch the leak);
* the same submission graded by the copy's grader, the normal way (`python -m autograder grade --json`),
  gets full marks on every part: the cell makes its stubs work only when its process was clean.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import nbformat
import pytest
from answer_key_search import PATH_CHANNELS, search_cell
from nbformat.v4 import new_code_cell

from autograder.assignment import Assignment, is_test_cell
from autograder.checks import suites
from autograder.grading import prepare_class
from autograder.sandbox import program_from_notebook
from autograder.sandbox.policy import reference_sandbox
from autograder.settings import GraderSettings, load_config
from conftest import ASSIGNMENT, FULL, NOTEBOOK, ROOT, course_copy, grade_json, release_notebook, scores

ROOT_USER = os.geteuid() == 0
SOLUTION_CELLS = [c.metadata["nbgrader"]["grade_id"] for c in ASSIGNMENT.source.cells
                  if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
SEARCH_SECONDS = 120.0  # the search reads the process's memory and files: more than a check's 3 s
PROCESS_CHANNELS = ("frames", "gc", "modules", "linecache", "environ", "proc", "maps", "memory", "fds")


# ------------------------------------------------------------------ the reference, either way


def test_the_reference_answers_every_probe_call_alike_with_the_release_for_the_other_cells():
    """Each part's probes, on "the reference's cell for the part + the release for the rest", give the same
    answer to every call the suites make as on the whole reference (what the grader compares with)."""
    settings = GraderSettings(config=load_config(ROOT))
    whole = suites.reference_answers(ASSIGNMENT, settings)
    differ, failed, asked = [], [], 0
    with reference_sandbox(ASSIGNMENT, settings) as box:
        for suite in suites.load_suites(ASSIGNMENT):
            program = suites.part_program(ASSIGNMENT, ASSIGNMENT.reference, suite)
            if suite.student_cells != "all":
                assert any("NotImplementedError" in cell.source for cell in program), suite.grade_id
            runner = suites.Runner(box, program, None, fresh=suite.student_cells == "all")
            suites.run_checks(suite.checks, runner, runner)  # the part's program in both places: every call
            for key, outcome in runner.memo.items():
                asked += 1
                if not outcome.ok:
                    failed.append(f"{suite.grade_id} {key[0]}: {outcome.reason}")
                elif key not in whole or json.dumps(outcome.value) != json.dumps(whole[key].value):
                    differ.append(f"{suite.grade_id} {key[0]}{key[1]}")
    assert asked > 50
    assert not failed, f"probes that need another part's stub: {failed[:5]}"
    assert not differ, differ[:5]


@pytest.mark.parametrize("widths, batch, seed", [((2, 16, 16, 2), 6, 0), ((4, 5, 3), 6, 4)])
def test_the_probes_own_layer_records_the_graph_of_the_references_linear(widths, batch, seed):
    """The SGD and no_grad probes forward through their own layer: same numbers and same graph (18 nodes for
    2-16-16-2) as the reference's Linear.forward on the same model and input."""
    settings = GraderSettings(config=load_config(ROOT))
    kwargs = dict(widths=list(widths), batch=batch, seed=seed)
    program = suites._reference_runner(ASSIGNMENT, sandbox=None).cells
    with reference_sandbox(ASSIGNMENT, settings) as box:
        lesson, step, quiet = (box.call(program, f"probes:{name}", **extra, **kwargs).value for name, extra in
                               [("lesson_graph", {}), ("step_moves_model", {"lr": 0.1}), ("no_grad_forward", {})])
    assert step["graphs"][0] == quiet["recorded_graph"] == lesson["recorded_graph"]
    assert step["outputs"][0] == quiet["recorded"] == lesson["recorded"]
    layers = len(widths) - 1  # the input, 2 Parameters and 3 results (weight.T, @, +) a layer, a ReLU between
    assert len(lesson["recorded_graph"]) == 1 + 5 * layers + (layers - 1) == (18 if layers == 3 else 12)


def test_a_solution_cell_missing_from_the_release_is_never_taken_from_the_source():
    release = release_notebook()
    release.cells = [c for c in release.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "linear"]
    program = program_from_notebook(release_notebook(), ASSIGNMENT.source, release, ("sgd",))
    text = {cell.name: cell.source for cell in program}
    assert "the cell linear is missing from the release" in text["linear"]
    assert "NotImplementedError" in text["module"] and "NotImplementedError" in text["sgd"]


def test_the_reference_runner_runs_the_whole_reference():
    program = suites._reference_runner(ASSIGNMENT, sandbox=None).cells
    solution = {c.metadata["nbgrader"]["grade_id"]: c.source for c in ASSIGNMENT.reference.cells
                if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")}
    text = {cell.name: cell.source for cell in program}
    assert len(solution) == len(SOLUTION_CELLS) and all(text[gid] == source for gid, source in solution.items())


# ------------------------------------------------------------------ a course with canaries


def _token(kind: str) -> str:
    return f"answerkey{kind}{uuid.uuid4().hex}{uuid.uuid4().hex}"


def _mark_cells(path: Path, role: str, lines: str) -> int:
    """Append `lines` to every cell of `role` ("solution") in the notebook at `path`; how many."""
    notebook = nbformat.read(path, as_version=4)
    marked = 0
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get(role) and not meta.get("grade"):
            gid = meta["grade_id"]
            cell.source = cell.source.rstrip("\n") + "\n\n\n" + lines.replace("GID", gid)
            marked += 1
    nbformat.write(notebook, path)
    return marked


@pytest.fixture(scope="module")
def canary(tmp_path_factory):
    """A course copy (laid out as a clone: folders 755, files 644) with canaries, a report folder, a submission."""
    tokens = {name: _token(name) for name in ("solution", "hidden", "control", "release")}
    course = Path(tempfile.mkdtemp(prefix="answer-key-course-"))
    reports = Path(tempfile.mkdtemp(prefix="answer-key-reports-"))
    try:
        course_copy(course)
        name, solution, hidden = ASSIGNMENT.name, tokens["solution"], tokens["hidden"]
        lines = (f'# {solution}\n_answer_key_GID = "{solution}"\n\n\ndef _answer_key_GID_function():\n'
                 f'    return "{solution}"  # {solution}\n')
        for folder in ("solutions", "source"):  # source/ holds the reference too (its solution regions)
            assert _mark_cells(course / folder / name / NOTEBOOK, "solution", lines) == len(SOLUTION_CELLS)
        assert _mark_cells(course / "release" / name / NOTEBOOK, "solution",
                           f'_release_control_GID = "{tokens["release"]}"\n') == len(SOLUTION_CELLS)
        suite_dir = course / "autograder" / name
        for path in suite_dir.glob("test_*.py"):
            path.write_text(path.read_text() + f'\n\n# {hidden}\n_HIDDEN_CANARY = "{hidden}"\n')
        with (suite_dir / "probes.py").open("a") as probes:  # probes.py may be seen: the control
            probes.write(f'\n\n_ANSWER_KEY_CONTROL = "{tokens["control"]}"\n')
        with (course / "nbgrader_config.py").open("a") as config:
            config.write(f"\nc.GraderSettings.seconds = {SEARCH_SECONDS}\n")
        for folder, _, files in os.walk(course):
            os.chmod(folder, 0o755)
            for file in files:
                os.chmod(Path(folder) / file, 0o644)
        reports.chmod(0o777)  # the search cell may run as `nobody`

        submission = release_notebook()  # the blank release as students get it (no release control in it)
        submission.cells.append(new_code_cell(search_cell(
            tokens, forbidden=["solution", "hidden"], control="control", course=str(course),
            report_dir=str(reports), check_paths=ROOT_USER)))
        # Its test cells moved below it, as a student may move them: Jupyter runs the search before each test cell,
        # and so does each part (a cell below a part's test cell gives it nothing of the graded cells: part_program).
        submission.cells = ([cell for cell in submission.cells if not is_test_cell(cell)]
                            + [cell for cell in submission.cells if is_test_cell(cell)])
        path = tmp_path_factory.mktemp("answer-key-submission") / NOTEBOOK
        nbformat.write(submission, path)
        path.parent.chmod(0o755)
        path.chmod(0o644)
        yield {"course": course, "reports": reports, "tokens": tokens, "submission": submission, "path": path,
               "assignment": Assignment(course, name)}
    finally:
        shutil.rmtree(course, ignore_errors=True)
        shutil.rmtree(reports, ignore_errors=True)


def _holds(cells, token: str) -> list[str]:
    return [cell.name for cell in cells if token in cell.source]


def test_no_part_program_holds_the_reference_or_the_hidden_suites(canary):
    assignment, tokens = canary["assignment"], canary["tokens"]
    parts = suites.load_suites(assignment)
    assert sorted(suite.grade_id for suite in parts) == sorted(FULL)
    for suite in parts:
        program = suites.part_program(assignment, canary["submission"], suite)
        assert not _holds(program, tokens["solution"]) and not _holds(program, tokens["hidden"]), suite.grade_id
        released = _holds(program, tokens["release"])  # every solution cell not the student's is the release's
        if suite.student_cells == "all":
            assert not released, suite.grade_id
        else:
            assert sorted(released) == sorted(set(SOLUTION_CELLS) - set(suite.student_cells))
    reference = suites._reference_runner(assignment, sandbox=None).cells
    assert len(_holds(reference, tokens["solution"])) == len(SOLUTION_CELLS)  # the canaries are where the grader reads the reference


def _search_report(findings: dict) -> str:
    return json.dumps({k: findings.get(k) for k in ("found", "errors", "scanned", "seconds", "uid")})


def test_a_student_cell_searching_each_parts_process_finds_no_answer_key(canary):
    """The programs the grader builds, run by the grader's own student sandbox, one per part."""
    assignment = canary["assignment"]
    settings = GraderSettings(config=load_config(canary["course"]))
    grader = suites.Grader(prepare_class(assignment, settings))  # as grading does: the instructor's files closed
    box = grader.student_box
    box.close()  # the Grader started its worker: start it again, with the search among the probes it may run
    box.config.modules["answer_key_probes"] = str(Path(__file__).with_name("answer_key_probes.py"))
    try:
        for suite in grader.prepared.suites:
            outcome = box.call(suites.part_program(assignment, canary["submission"], suite),
                               "answer_key_probes:findings")
            assert outcome.ok and outcome.value, f"{suite.grade_id}: {outcome.reason} {outcome.load_errors}"
            findings = outcome.value
            where = f"{suite.grade_id}: {_search_report(findings)}"
            for channel in ("frames", "gc", "modules"):
                assert channel not in findings["errors"] and findings["scanned"].get(channel), where
            for channel in ("memory", "fds", "proc"):  # what the OS lets the process read of itself
                denied = findings["errors"].get(channel, "").startswith(("PermissionError", "FileNotFoundError"))
                assert denied or (channel not in findings["errors"] and findings["scanned"].get(channel)), where
            if "memory" not in findings["errors"]:
                assert findings["scanned"]["memory"] > 10 << 20, where  # it read the process's memory
            assert findings["control_found"], where  # the search finds what probes.py brings in
            if suite.student_cells != "all":  # and what the release's cells bring in
                assert any("release" in findings["found"].get(c, []) for c in PROCESS_CHANNELS), where
            assert not findings["leaked"], where
            leaked_by_path = [c for c, names in findings["found"].items()
                              if c in PATH_CHANNELS and {"solution", "hidden"} & set(names)]
            if ROOT_USER:
                assert not leaked_by_path, where
            assert findings["clean"], where

        # The same search on a part built the old way (the reference's cells for the other parts) finds it.
        old = program_from_notebook(canary["submission"], assignment.source, assignment.reference, ("sgd",))
        findings = box.call(old, "answer_key_probes:findings").value
        assert [c for c in PROCESS_CHANNELS if "solution" in findings["found"].get(c, [])], _search_report(findings)
        assert findings["leaked"] == ["solution"]
    finally:
        grader.close()


def test_graded_the_normal_way_every_part_shows_a_clean_process(canary):
    """`python -m autograder grade --json` with the copy's grader: the cell makes each part's stubs work only
    when it found nothing of the answer key in that part's process (and found the control)."""
    for earlier in canary["reports"].glob("findings-*.json"):  # reachable without namespaces: the old-way
        earlier.unlink()  # search of the test above wrote there, and found the reference, as it must
    report, _ = grade_json(canary["path"], canary["course"])
    written = [json.loads(p.read_text()) for p in sorted(canary["reports"].glob("findings-*.json"))]
    detail = "\n".join(_search_report(f) for f in written if not f["clean"]) or "(no report files)"
    failures = [f"{p['grade_id']} {t['name']}: {t['message']}" for p in report["parts"] for t in p["tests"]
                if not t["passed"]]
    assert scores(report) == FULL, "\n".join(failures[:6]) + "\n" + detail
    assert all(f["clean"] for f in written), detail  # when the report folder is reachable at all
