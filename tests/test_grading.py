"""Grading: hidden suites in a sandbox, one notebook from the command line, and `make grade`."""
from __future__ import annotations

import asyncio
import copy
import html
import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import cells
import notebook_checks
import pytest
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell

from autograder.checks import suites
from autograder.checks.suites import reference_answers
from autograder.classroom.mutate import Mutation, apply
from autograder.outputs.redaction import hidden_code_lines
from autograder.sandbox import program_from_notebook
from autograder.settings import GraderSettings, load_config
from bench.course import gradebook_scores
from conftest import (
    ASSIGNMENT,
    FULL,
    NOTEBOOK,
    ROOT,
    command_lines,
    course_copy,
    grade_class,
    grade_json,
    release_notebook,
    scores,
    solution_notebook,
    write_notebook,
)

GOLDEN = Path(__file__).parent / "golden" / "demo_scores.json"


def sandbox_processes(course: Path = ROOT) -> list[str]:
    """Command lines of the course's sandbox workers still alive (there should be none between runs)."""
    return [line for line in command_lines() if str(course / "autograder" / "sandbox" / "worker.py") in line]


def assert_no_hidden_text(text: str) -> None:
    """No run of the hidden suites' code appears in `text` (HTML is read as the text it shows)."""
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    squashed = "".join(text.split())
    leaked = [line for line in hidden_code_lines(ASSIGNMENT.suite_dir, ASSIGNMENT.source_dir) if "".join(line.split()) in squashed]
    assert not leaked, leaked[:3]


def test_reference_scores_full_marks_on_every_part():
    report, _ = grade_json(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK)
    assert scores(report) == FULL
    assert report["total"] == report["max"] == sum(FULL.values())


def test_the_reference_gives_the_same_answers_with_its_checks_in_one_process_or_each_in_its_own():
    """The grader fetches the reference's answers in one process (quicker): that must change no answer."""
    settings = GraderSettings(config=load_config(ROOT))
    shared, fresh = (reference_answers(ASSIGNMENT, settings, fresh=f) for f in (False, True))
    assert shared.keys() == fresh.keys() and len(shared) > 50
    differ = [key for key in shared if json.dumps(shared[key].value) != json.dumps(fresh[key].value)
              or not shared[key].ok or not fresh[key].ok]
    assert not differ, differ[:3]


def test_blank_release_fails_every_hidden_check(tmp_path):
    report, _ = grade_json(ROOT / "release" / ASSIGNMENT.name / NOTEBOOK)
    assert scores(report) == {grade_id: 0 for grade_id in FULL}
    passed = [t["name"] for p in report["parts"] for t in p["tests"] if t["passed"]]
    assert not passed, f"these checks pass without the stubs, so they test nothing: {passed}"
    assert all(p["tests"] for p in report["parts"])


def test_an_infinite_loop_and_os_exit_cost_only_their_own_parts(tmp_path):
    notebook = apply(solution_notebook(), [Mutation("sgd", "step", "while True:\n    pass"),
                                           Mutation("linear", "forward", "import os\nos._exit(0)")])
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    got = scores(report)
    assert got["test_step"] == 0 and got["test_forward"] == 0
    for grade_id in ("test_parameters", "test_zero_grad", "test_no_grad"):
        assert got[grade_id] == FULL[grade_id], grade_id
    messages = " ".join(t["message"] for p in report["parts"] for t in p["tests"])
    assert "did not finish within" in messages and "os._exit" in messages
    assert report["limits"] == ["time"]
    assert not sandbox_processes()


def test_a_deleted_exercise_cell_is_named_only_where_it_is_the_cause(tmp_path):
    """The student deleted Exercise 1's cell and wrote step() to move up the gradient. The exercise's check says
    the cell is missing; the step checks of the whole-notebook part name the step bug alone, not "because cell
    exercise_count is missing" (which they never read)."""
    notebook = apply(solution_notebook(), [Mutation("sgd", "step", "for p in self.params:\n    p.data += self.lr * p.grad")])
    notebook.cells = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "exercise_count"]
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    failed = {p["grade_id"]: [t["message"] for t in p["tests"] if not t["passed"]] for p in report["parts"]}
    assert all("exercise_count is missing" in m for m in failed["test_exercise_count"]) and failed["test_exercise_count"]
    lesson = failed["test_lesson_numbers"]
    assert lesson and all("up the gradient" in m and "exercise_count" not in m for m in lesson), lesson


@pytest.mark.parametrize("content, reason", [
    ("this is not json", "is not a readable notebook"),
    ("", "is not a readable notebook"),
    ('{"cells": 3}', "is not a readable notebook"),
])
def test_a_file_that_is_not_a_notebook_scores_zero_with_a_reason(tmp_path, content, reason):
    path = tmp_path / NOTEBOOK
    path.write_text(content)
    report, _ = grade_json(path)
    assert report["total"] == 0 and reason in report["error"]


@pytest.mark.slow  # grades a class through nbgrader
def test_one_notebook_scores_the_same_through_make_grade_and_the_grade_command(tmp_path):
    """A solution cell turned raw, and a pasted cell whose earlier copy is the release's blank: make grade's nbgrader
    autograde takes the last copy and makes the cell code again; `grade` (and Gradescope's run_autograder) alike."""
    notebook = solution_notebook()
    ids = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in notebook.cells]
    notebook.cells[ids.index("no_grad")].cell_type = "raw"
    for key in ("outputs", "execution_count"):
        notebook.cells[ids.index("no_grad")].pop(key)
    blank = release_notebook().cells[ids.index("sgd")]
    notebook.cells.insert(ids.index("sgd"), blank)
    course = course_copy(tmp_path / "course")
    path = course / "submitted" / "raw" / ASSIGNMENT.name / NOTEBOOK
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(notebook, indent=1))
    report, _ = grade_json(path, course)
    assert scores(report) == FULL, report
    run = grade_class(course, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert gradebook_scores(course)["raw"] == FULL


def test_a_right_notebook_that_calls_display_as_jupyter_allows_scores_full_marks(tmp_path):
    """Jupyter gives every notebook IPython's display() without an import; the sandbox runs plain Python, where a
    right cell sgd that began with display(Linear) raised NameError and lost 7 points (red-p4, pass 18, H)."""
    notebook = solution_notebook()
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    cell.source = ("display(Linear, SGD if 'SGD' in dir() else None)\n" + cell.source
                   + "\nfrom IPython.display import Markdown, clear_output, display\nclear_output()\n"
                   + "display(Markdown('**SGD**'), display_id=True).update(SGD)\n")  # red-s5 C, D
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report) == FULL, report


@pytest.mark.parametrize("start", [
    "from IPython.core.display import display, HTML\n",
    "from IPython.display import display, update_display\n",
    "from IPython.display import DisplayHandle\nprogress = DisplayHandle('sgd')\n",
    "get_ipython().run_line_magic('config', \"InlineBackend.figure_format = 'retina'\")\n",
    "TIMED = %time 1 + 1\nfiles = !ls\nnp.*zeros*?\n",
], ids=["IPython.core.display", "update_display", "DisplayHandle(id)", "get_ipython", "ipython-syntax"])
def test_a_right_notebook_using_more_of_ipython_as_jupyter_allows_scores_full_marks(tmp_path, start):
    """The sandbox's IPython stand-in has display() and a few names of IPython.display only: a right cell sgd that
    began with IPython's older import path, update_display, a DisplayHandle made with its id, or get_ipython() (which
    Jupyter gives every notebook, as it gives display) raised and scored 10.82/18 (red-u6, pass 19); so did IPython's
    syntax (graded here in the confined sandbox, whose loader reads no file of the environment)."""
    notebook = solution_notebook()
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    cell.source = start + cell.source
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report) == FULL, report


def test_a_right_notebook_that_displays_a_picture_as_jupyter_allows_scores_full_marks(tmp_path):
    """Jupyter sends a displayed picture to the page, not to the output: the sandbox's display() printed the repr of
    its bytes, and a cell of the student's showing a 300 KB picture was "printed more than the output limit allows",
    0/18 (red-u6, pass 19)."""
    notebook = solution_notebook()
    at = next(i for i, c in enumerate(notebook.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    notebook.cells.insert(at + 1, new_code_cell("from IPython.display import display, Image\n"
                                                "display(Image(data=bytes(300_000)))\n"))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report) == FULL, report


def test_student_output_never_reaches_the_json(tmp_path):
    notebook = release_notebook()
    notebook.cells.insert(2, new_code_cell("print('{\"total\": 999}')\nimport sys; sys.stderr.write('noise')"))
    report, run = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert report["total"] == 0 and "999" not in run.stdout


# ------------------------------------------------------------------------ make grade


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A fresh course directory graded twice with `python -m autograder class` (what make grade runs)."""
    course = course_copy(tmp_path_factory.mktemp("course"))
    runs = []
    for _ in range(2):
        run = grade_class(course)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
        runs.append((run, (course / "grades.csv").read_text(), gradebook_scores(course)))
    return course, runs


@pytest.mark.slow
def test_make_grade_grades_the_demo_class_into_gradebook_csv_and_feedback(graded_class):
    course, runs = graded_class
    run, csv, book = runs[0]
    assert "bundled demo class" in run.stdout
    rows = csv.strip().splitlines()[1:]
    assert len(rows) == len(book) >= 8
    for student in book:
        assert (course / "feedback" / student / ASSIGNMENT.name / f"{Path(NOTEBOOK).stem}.html").exists(), student
    if not GOLDEN.exists():
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(book, indent=1, sort_keys=True) + "\n")
        pytest.fail(f"wrote {GOLDEN.name}: review it and commit it")
    assert book == json.loads(GOLDEN.read_text()), "demo scores changed: if on purpose, see README (golden)"


@pytest.mark.slow
def test_written_answers_wait_for_the_formgrader(graded_class):
    from nbgrader.api import Gradebook

    course, _ = graded_class
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "dl01") as gb:
        grades = gb.find_submission_notebook(Path(NOTEBOOK).stem, ASSIGNMENT.name, "ada").grades
        manual = {g.name: g.needs_manual_grade for g in grades if g.name not in FULL}
    assert manual == {"answer_zeroing": True, "answer_outside_graph": True, "answer_shared_weight": True}


@pytest.mark.slow
def test_make_grade_twice_gives_the_same_gradebook(graded_class):
    _, runs = graded_class
    assert runs[0][1] == runs[1][1] and runs[0][2] == runs[1][2]


@pytest.mark.slow
def test_a_run_killed_half_way_and_started_again_gives_the_same_gradebook(tmp_path, graded_class):
    """Processes write the gradebook side by side; a run killed mid-way loses nothing once run again."""
    _, runs = graded_class
    course = course_copy(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.Popen([sys.executable, "-m", "autograder", "class", "--assignment", ASSIGNMENT.name], cwd=course,
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    done = course / "autograded"
    deadline = time.monotonic() + 120
    while len(list(done.glob(f"*/{ASSIGNMENT.name}/{NOTEBOOK}"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    assert 3 <= len(list(done.glob(f"*/{ASSIGNMENT.name}/{NOTEBOOK}"))) < len(runs[0][2]), "not killed half way"
    again = grade_class(course)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    assert gradebook_scores(course) == runs[0][2]
    assert (course / "grades.csv").read_text() == runs[0][1]


@pytest.mark.slow
def test_nothing_hidden_reaches_feedback_or_summary(graded_class):
    course, runs = graded_class
    for path in (course / "feedback").rglob("*.html"):
        assert_no_hidden_text(path.read_text())
    assert_no_hidden_text(runs[0][0].stdout)
    assert not sandbox_processes(course)


@pytest.mark.slow
def test_make_grade_collects_an_lms_download_with_zip_collect(tmp_path):
    course = course_copy(tmp_path)
    archive = course / "downloaded" / ASSIGNMENT.name / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "class.zip", "w") as bundle:
        bundle.writestr(f"ada_1001_{NOTEBOOK}", json.dumps(solution_notebook()))
        bundle.writestr(f"bob_1002_{NOTEBOOK}", json.dumps(release_notebook()))
        bundle.writestr(f"=cmd_1003_{NOTEBOOK}", json.dumps(solution_notebook()))  # refused, and named
    run = grade_class(course)
    assert run.returncode == 0 and "LMS download" in run.stdout, run.stdout + run.stderr[-2000:]
    book = gradebook_scores(course)
    assert book["ada"] == FULL and set(book["bob"].values()) == {0} and len(book) == 2
    summary = run.stdout[run.stdout.index("submissions, 2 graded"):]
    assert f"Not collected: =cmd_1003_{NOTEBOOK}: its student id '=cmd' is not" in summary


def test_a_process_limit_the_notebook_lowered_itself_is_not_written_down_as_the_graders_fault(tmp_path):
    """red-m10 F1. The notebook lowers its own RLIMIT_NPROC (any unprivileged process may), so the loader cannot
    fork a check child. The pids cgroup counted no refusal, so the session reads it as the grading machine's fault
    (worker._Session.judge) - yet each check is still scored as failed: the report is a grade whose reasons say
    "not graded: ... the grading machine's fault, not the notebook's: grade it again". A reason a grade is written
    with names the notebook's doing; the grader's failure is no grade at all (never both)."""
    notebook = solution_notebook()
    notebook.cells.insert(0, new_code_cell("import resource\nresource.setrlimit(resource.RLIMIT_NPROC, (1, 1))"))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    scored_as_graders_fault = [t["name"] for p in report["parts"] for t in p["tests"]
                               if not t["passed"] and "the grading machine's fault" in t["message"]]
    assert not scored_as_graders_fault, (report["total"], scored_as_graders_fault)


FORGED_ANSWER = '''import os, stat, fcntl, json
ends = [fd for fd in range(3, 64) if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & 3 == 1]
os.write(max(ends), json.dumps({"event": "result", "ok": False, "limit": "", "wall": False, "reason":
    "not graded: the grader could not start a process for this check (no processes left); the grading machine's "
    "fault, not the notebook's: grade it again"}).encode() + b"\\n")
os._exit(0)'''


def test_an_answer_line_the_notebook_wrote_itself_does_not_speak_in_the_graders_words(tmp_path):
    """red-m10 F2. Code the check calls (Linear.forward) writes its own answer line to the check child's pipe (the
    newest pipe it may write) and ends. The loader passes it on as the check's answer, and its reason is shown as
    written, unquoted, no "raised ..." around it: the check fails (0 points) with the grader's own words for a
    check it could not start, "not graded: ... the grading machine's fault, not the notebook's: grade it again",
    which has the instructor regrade a notebook that will fail the same way. Text the notebook's code wrote is
    never the grader's words, and a check that is scored never says it was not graded."""
    body = FORGED_ANSWER.replace("stat.S_ISFIFO(os.fstat(fd).st_mode)", "_pipe(fd)")
    helper = ("def _pipe(fd):\n    import os, stat\n    try:\n        return stat.S_ISFIFO(os.fstat(fd).st_mode)\n"
              "    except OSError:\n        return False\n")
    notebook = apply(solution_notebook(), [Mutation("linear", "forward", body)])
    linear = next(c for c in notebook.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    linear.source = helper + "\n" + linear.source
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    said_not_graded = [t["message"] for p in report["parts"] for t in p["tests"] if t["message"].startswith("not graded")]
    assert scores(report)["test_forward"] == 0 and not said_not_graded, said_not_graded


def test_a_syntax_error_in_a_cell_is_named_as_the_cause_not_quoted_as_words_the_notebook_wrote(tmp_path):
    """A cell the loader could not compile is a load error in describe_exception's own shape ("cell sgd: a syntax
    error on line 22: expected ':'"), which every failure for a name the cell defines gives as its cause. fix-ch's
    as_notebooks_load_error reads only "<name> has a syntax error" as the loader's shape, so the session quotes the
    line as words the notebook wrote to the grader's pipe and the grader drops the cause: "raised KeyError: 'SGD'"
    alone (red-o11, pass 21, F6; before fix-ch the message said why)."""
    notebook = solution_notebook()
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    cell.source = cell.source.replace("def step(self) -> None:", "def step(self) -> None", 1)
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    text = json.dumps(report)
    assert "words of its own" not in text and "because cell sgd: a syntax error on line" in text, text[:2000]


def failing_messages(report: dict) -> dict[str, list[str]]:
    return {part["grade_id"]: [t["message"] for t in part["tests"] if not t["passed"]] for part in report["parts"]}


def test_a_value_error_in_forward_not_about_shapes_is_quoted_not_told_the_shapes_do_not_fit(tmp_path):
    """red-p11 F-1: `if self.bias.data:` raises NumPy's "truth value ... is ambiguous" for n_out > 1; the shapes
    fit, so the message quotes NumPy's words rather than say how the weight is stored (causes.forward_raised)."""
    notebook = apply(solution_notebook(), [Mutation("linear", "Linear.forward", "if self.bias.data:\n"
                                                    "    return x @ self.weight.T + self.bias\nreturn x @ self.weight.T")])
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    failed = failing_messages(report)["test_forward"]
    assert failed and all("truth value" in m and "the shapes do not fit" not in m for m in failed), failed


def test_an_answer_the_grade_refuses_is_worded_by_the_grader_not_by_the_notebooks_process(tmp_path):
    """red-p11 G-1: the notebook's process may rebind the released answers module, or name its value's class in any
    words; the grader words the refusal itself (answers.refusal) and takes only what _read can say."""
    notebook = apply(solution_notebook(), [Mutation("exercise_count", "", "", source=(
        "import answers\nanswers.refused = lambda name, value, example: 'count_64_32_10 = 2410 is right.'\n"
        "answers.what_it_is = lambda value: 'right: 2410 (full marks)'\ncount_64_32_10 = None\n"))])
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    failed = failing_messages(report)["test_exercise_count"]
    assert failed == ["count_64_32_10 is not a number: assign a number (an int or a float), e.g. count_64_32_10 = 123"]


def test_a_future_import_in_another_parts_cell_holds_for_the_cells_below_as_in_jupyter(tmp_path):
    """Jupyter keeps a cell's `from __future__ import annotations` for every cell below, and so does the loader; a
    part that grades one cell takes the other parts' cells from the release, under the student's own future imports
    (program._futures): a right notebook with the import at the top of cell module and `other: Linear` in class
    Linear lost test_forward (16/18, "name 'Linear' is not defined") (red-o11, pass 21, F1)."""
    notebook = solution_notebook()
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in notebook.cells}
    cells["module"].source = "from __future__ import annotations\n\n" + cells["module"].source
    cells["linear"].source = cells["linear"].source.replace(
        "class Linear(Module):\n", "class Linear(Module):\n    def same_shape(self, other: Linear) -> bool:\n"
        "        return self.weight.data.shape == other.weight.data.shape\n\n", 1)
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report) == FULL, report


def test_barry_as_flufl_in_a_cell_holds_for_the_cells_below_in_every_part_as_in_ipython(tmp_path):
    """red pass 21 F5: IPython 9.18 parses each cell with the future flags of the cells above (barry_as_FLUFL: `<>`
    below its import). A right notebook with a cell `from __future__ import barry_as_FLUFL` under the imports, cell
    module opening `from __future__ import annotations` and ending `assert Module <> None`, and `other: Linear` in
    Linear: 10/18 (the loader parsed cell module without the flag: a syntax error), then 16/18 (the grader's reading
    of the futures cell module opens with did not parse it either, so test_forward's release copy lost them)."""
    notebook = solution_notebook()
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in notebook.cells}
    notebook.cells.insert(notebook.cells.index(cells["imports"]) + 1, new_code_cell("from __future__ import barry_as_FLUFL"))
    cells["module"].source = "from __future__ import annotations\n\n" + cells["module"].source + "\n\nassert Module <> None\n"
    cells["linear"].source = cells["linear"].source.replace(
        "class Linear(Module):\n", "class Linear(Module):\n    def same_shape(self, other: Linear) -> bool:\n"
        "        return self.weight.data.shape == other.weight.data.shape\n\n", 1)
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report) == FULL, report


def test_a_cell_with_top_level_await_runs_whole_on_the_event_loop_as_in_jupyter(tmp_path):
    """red pass 21 F3: ipykernel runs a cell with top-level `await` whole on its running loop; the sandbox ran only
    the awaiting statement there, so `asyncio.ensure_future(count())` above `count_64_32_10 = await task` raised
    (the loader's filter denies the epoll of the default loop it made): a right Exercise 1 scored 17/18."""
    notebook = apply(solution_notebook(), [Mutation("exercise_count", "", "", source=(
        "import asyncio\n\n\nasync def count():\n    return 32 * (64 + 1) + 10 * (32 + 1)\n\n\n"
        "task = asyncio.ensure_future(count())\ncount_64_32_10 = await task\n"))])
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report) == FULL, report


def test_a_step_that_changes_self_lr_is_told_so_not_to_keep_updating_the_very_objects(tmp_path):
    """red-p11 A-1: step() right, then `self.lr *= 0.5`: the second step moves half as far. The objects are the very
    ones; the message names what changed, self.lr (training_causes.rate_changed), in the grade and the public check."""
    notebook = apply(solution_notebook(), [Mutation("sgd", "SGD.step", "for p in self.params:\n"
                                                    "    p.data -= self.lr * p.grad\nself.lr *= 0.5")])
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    failed = failing_messages(report)["test_step"]
    assert failed and all("step() changed self.lr from" in m for m in failed), failed
    public = [m for ok, m in notebook_checks.run_part("step", path).values() if not ok]
    assert public and all("step() changed self.lr from" in m for m in public), public


def test_a_forward_error_line_the_notebooks_process_rewrote_is_quoted_as_its_own(tmp_path):
    """The probe names forward()'s ValueError with the sandbox's describe_exception, which the notebook's code can
    rebind: the check takes those lines only in the loader's shapes (messages.as_notebooks), else quotes them."""
    forged = "not graded: the grading machine's fault, grade it again"
    body = (f"import messages\nmessages.describe_exception = lambda error, quote=True: {forged!r}\n"
            "raise ValueError('x')")
    notebook = apply(solution_notebook(), [Mutation("linear", "Linear.forward", body)])
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    failed = failing_messages(report)["test_forward"]
    assert failed and not [m for m in failed if m.startswith(forged)], failed


def _moved_no_grad_above_sgd_with_step_decorated(notebook):
    """no_grad's cell moved up above cell sgd (a notebook the student reorganised), step() decorated with
    `@no_grad()` (a contextmanager is a ContextDecorator): Jupyter, top to bottom, defines no_grad first."""
    cells = notebook.cells
    at = next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "no_grad")
    moved = cells.pop(at)
    sgd = next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "sgd")
    cells.insert(sgd, moved)
    cells[sgd + 1].source = cells[sgd + 1].source.replace("    def step(self) -> None:",
                                                          "    @no_grad()\n    def step(self) -> None:")
    return notebook


def _moved_second_step_below_no_grad_computed_with_own_sgd(notebook):
    """Exercise 2's cell moved below no_grad's and computed with the student's own SGD, whose step() runs under
    `with no_grad():`: Jupyter, top to bottom, has no_grad defined when the exercise cell runs."""
    notebook = apply(notebook, [Mutation("sgd", "SGD.step", "with no_grad():\n    for p in self.params:\n"
                                         "        p.data -= self.lr * p.grad"),
                                Mutation("exercise_second_step", "", "", source=(
                                    "def second_step(zero_between):\n"
                                    "    layer = Linear(2, 1, np.random.default_rng(0))\n"
                                    "    layer.weight.data[...] = [[0.5, -1.0]]\n"
                                    "    layer.bias.data[...] = [0.2]\n"
                                    "    opt = SGD(layer.parameters(), lr=0.1)\n"
                                    "    x = Tensor([[1.0, 2.0]])\n"
                                    "    opt.zero_grad()\n"
                                    "    for number in (1, 2):\n"
                                    "        if number == 2 and zero_between:\n"
                                    "            opt.zero_grad()\n"
                                    "        ((layer(x) - 1.0) ** 2).sum().backward()\n"
                                    "        opt.step()\n"
                                    "    z = layer(x).data.item()\n"
                                    "    return z, (z - 1.0) ** 2\n\n\n"
                                    "z2_with_zero_grad, loss2_with_zero_grad = second_step(True)\n"
                                    "z2_without_zero_grad, loss2_without_zero_grad = second_step(False)\n"))])
    cells = notebook.cells
    at = next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "exercise_second_step")
    moved = cells.pop(at)
    no_grad = next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "no_grad")
    cells.insert(no_grad + 1, moved)
    return notebook


@pytest.mark.slow
@pytest.mark.parametrize("move", [_moved_no_grad_above_sgd_with_step_decorated,
                                  _moved_second_step_below_no_grad_computed_with_own_sgd],
                         ids=["red-b12-1-decorator", "red-b12-1-exercise-moved"])
def test_a_right_notebook_with_cells_moved_where_jupyter_still_runs_it_scores_full_marks(tmp_path, move):
    """red-b12 1 (pass 22): a part ran the known cells in the source notebook's order, not the student's, so a cell
    moved where Jupyter runs it top to bottom (and the in-notebook checks, which run on the kernel's names, print
    PASS) ran at its released place: 10.82/18, "SGD raised NameError: name 'no_grad' is not defined" (decorator), and
    17/18, "SGD.step raised NameError: name 'no_grad' is not defined" (exercise moved). program_from_notebook now
    takes the student's order."""
    report, _ = grade_json(write_notebook(move(solution_notebook()), tmp_path / NOTEBOOK))
    assert scores(report) == FULL, failing_messages(report)


@pytest.mark.slow
def test_a_cell_moved_above_the_cell_it_needs_fails_as_in_jupyter_and_the_message_names_the_move(tmp_path):
    """The flip side of red-b12 1: cell linear moved above cell module raises NameError on Module in Jupyter, top to
    bottom, so Linear is never defined and every check that builds one fails there. The grade follows the notebook
    (before, run in the release's order, it scored 18/18), and each lost part's message names the move, a fact of
    the program's order, not the probe's KeyError alone."""
    notebook = solution_notebook()
    cells = notebook.cells
    linear = cells.pop(next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "linear"))
    cells.insert(next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "module"), linear)
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    lost = {part for part, score in scores(report).items() if score < FULL[part]}
    assert {"test_forward", "test_lesson_numbers"} <= lost, scores(report)
    move = "cell linear stands above cell module in your notebook, so Module is not defined yet when it runs"
    assert all(move in message for part in lost for message in failing_messages(report)[part]), failing_messages(report)


@pytest.mark.slow
def test_an_exercise_built_with_a_helper_of_a_demo_cell_above_it_is_told_that_grading_never_runs_demos(tmp_path):
    """red-b12 5 (pass 22): Exercise 2 worked out with `mlp()`, the helper the read-only demo cell above it
    (demo_count_parameters) defines, and the student's own SGD: right in Jupyter top to bottom (the demo cell runs
    before the exercise; its test cell prints PASS). The grade leaves demo cells out (program._role), so the cell
    raises NameError: 17/18, "second_step raised NameError: name 'mlp' is not defined (line 3 of its cell)": a name
    the released notebook defines, and nothing told the student the demo cells do not run in the grade.
    Decided (fix-lend): demonstrations stay out of grading (they train, plot and import answers.py; their defs alone
    would evaluate annotations such as `-> Sequential` in parts that lack them). The notebook's introduction says so,
    and the message names the demonstration the name comes from."""
    body = ("def second_step(zero_between):\n"
            "    model = mlp([2, 1], np.random.default_rng(0))\n"
            "    layer = model.layers[0]\n"
            "    layer.weight.data[...] = [[0.5, -1.0]]\n"
            "    layer.bias.data[...] = [0.2]\n"
            "    opt = SGD(model.parameters(), lr=0.1)\n"
            "    x = Tensor([[1.0, 2.0]])\n"
            "    opt.zero_grad()\n"
            "    for number in (1, 2):\n"
            "        if number == 2 and zero_between:\n"
            "            opt.zero_grad()\n"
            "        ((model(x) - 1.0) ** 2).sum().backward()\n"
            "        opt.step()\n"
            "    z = model(x).data.item()\n"
            "    return z, (z - 1.0) ** 2\n\n\n"
            "z2_with_zero_grad, loss2_with_zero_grad = second_step(True)\n"
            "z2_without_zero_grad, loss2_without_zero_grad = second_step(False)\n")
    notebook = apply(solution_notebook(), [Mutation("exercise_second_step", "", "", source=body)])
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report) == {**FULL, "test_exercise_second_step": 0}, failing_messages(report)
    assert all(message.endswith("(mlp is defined in demo cell demo_count_parameters; grading runs no demo cell))")
               for message in failing_messages(report)["test_exercise_second_step"]), failing_messages(report)
    assert "The checks and the grader never run them" in "".join(
        cell.source for cell in solution_notebook().cells if cell.cell_type == "markdown")


@pytest.mark.slow
def test_a_notebook_whose_order_follows_string_hashes_gets_one_grade_on_every_run(tmp_path):
    """red-b12 6 (pass 22): parameters() walks `set(vars(self))` (attribute names in a set: wrong, the order is the
    hash's). str hashes are salted per process (PYTHONHASHSEED; the worker runs `python -I`, a fresh salt each start),
    so the same file graded three times gave 17.29, 17.07 and 16.93: a grade that is no function of its inputs (a
    regrade preview lists the student as changed for nothing). Unlike a set of Parameters (ordered by memory
    addresses: BY_CHANCE in test_suites_under_pytest.py), this order is the grader's to fix (a fixed hash seed for the
    sandbox). Three runs agree by chance only rarely."""
    notebook = solution_notebook()
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in notebook.cells}
    cells["module"].source = cells["module"].source.replace(
        "for value in vars(self).values():", "for value in [vars(self)[name] for name in set(vars(self))]:")
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    totals = [grade_json(path)[0]["total"] for _ in range(3)]
    assert len(set(totals)) == 1, totals


def _cell_at(cells, grade_id: str) -> int:
    return next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _module_above_parameter(notebook):
    """Module written without the release's def-time annotation `-> list[Parameter]` (it looks Parameter up only
    when parameters() runs) and its cell moved above the given cell parameter: Jupyter runs it top to bottom."""
    cells = notebook.cells
    module = cells[_cell_at(cells, "module")]
    module.source = module.source.replace("def parameters(self) -> list[Parameter]:", "def parameters(self):").replace(
        "found: list[Parameter] = []", "found = []")
    cells.insert(_cell_at(cells, "parameter"), cells.pop(_cell_at(cells, "module")))
    return notebook


def _sgd_above_parameter_with_the_exercise_computed_with_it(notebook):
    """SGD written without the annotation `Iterable[Parameter]`, its cell moved above the given cell parameter, and
    Exercise 2 computed with the student's own SGD (as red-b12-1-exercise-moved): Jupyter runs it top to bottom."""
    notebook = _moved_second_step_below_no_grad_computed_with_own_sgd(notebook)
    cells = notebook.cells
    sgd = cells[_cell_at(cells, "sgd")]
    sgd.source = sgd.source.replace("with no_grad():\n", "if True:\n").replace("params: Iterable[Parameter]", "params")
    cells.insert(_cell_at(cells, "parameter"), cells.pop(_cell_at(cells, "sgd")))
    return notebook


@pytest.mark.parametrize("move", [_module_above_parameter, _sgd_above_parameter_with_the_exercise_computed_with_it],
                         ids=["module-above-parameter", "sgd-above-parameter"])
def test_a_right_notebook_whose_cell_moved_above_what_only_the_releases_stub_needs_scores_full_marks(tmp_path, move):
    """red-b14 X23-1 (pass 23): since 1b6a685 a part runs the known cells in the student's order, and a cell the part
    takes blank from the release runs the RELEASE's stub at the student's place. The stubs of cells module and sgd
    evaluate `-> list[Parameter]` and `Iterable[Parameter]` when they load; the student's own copies (no such
    annotation) do not. Moved above the given cell parameter, the student's cells run in Jupyter top to bottom (the
    public pytest passes 36/36, test_lesson_numbers, which runs the student's own cells, 3/3), but every part that
    takes the moved cell blank loses its Linear/SGD: module-above-parameter 12.4/18 (test_forward 0, test_zero_grad
    1.33, test_step 1.69, test_no_grad 1.38: "raised KeyError: 'Linear' (because cell module stands above cell
    parameter in your notebook, so Parameter is not defined yet when it runs)", blaming a move that runs fine);
    sgd-above-parameter 17/18 (test_exercise_second_step 0: "name 'SGD' is not defined"). The same cells unmoved
    score 18/18; before 1b6a685 (release order) the moved ones did too."""
    notebook = move(solution_notebook())
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    public = {part: [m for ok, m in notebook_checks.run_part(part, path).values() if not ok]
              for part in ("forward", "zero_grad", "step", "no_grad", "exercise_second_step")}
    assert not any(public.values()), public  # the public checks, on the notebook as saved: it runs
    report, _ = grade_json(path)
    assert scores(report) == FULL, failing_messages(report)


@pytest.mark.parametrize("moved", ["text_module_and_the_recursive", "parameter"], ids=["prose", "given-code"])
def test_a_deleted_cell_is_not_said_to_stand_below_a_cell_it_is_missing_from_the_notebook(tmp_path, moved):
    """red-b14 X23-2 (pass 23), prose: the student deleted cell module (Module is nowhere) and moved the prose above it
    (text_module_and_the_recursive) below cell linear. The grade puts the deleted cell's stand-in right after the
    cell it follows in the release, here the moved prose, so below linear; Runner.defined_below then tells the
    student "cell linear stands above cell module in your notebook, so Module is not defined yet when it runs" in
    test_forward, test_zero_grad, test_step, test_no_grad and test_lesson_numbers (6.4/18), and test_parameters says
    both that cell module stands below linear and that it "is missing from the notebook". No cell module stands
    anywhere in the notebook: moving cells changes nothing; the cause is the deleted cell. The grade, too, turns on
    where that prose cell stands: the same code with it unmoved scores 12/18 (only test_parameters and
    test_lesson_numbers lost; before 1b6a685 the moved one did too), moved 6.4/18.

    given-code: red-b15 X24-b15-4 (pass 24): red-b14 X23-2 with a given code cell moved instead of prose. The student deleted
    cell module (Module is nowhere) and moved the given cell parameter below cell linear (Jupyter runs the same: linear
    fails on Module either way, Parameter is only called). _in_students_order puts the deleted cell right after the
    code cell before it in the release, parameter, wherever the student put that: below linear. Every part that takes
    module blank runs its stub there, and Runner.defined_below finds it placed: "raised KeyError: 'Linear' (because
    cell linear stands above cell module in your notebook, so Module is not defined yet when it runs)" in
    test_forward, test_zero_grad, test_step and test_no_grad, naming a cell the notebook does not hold; the grade
    drops from 12/18 (parameter unmoved) to 6.4/18 (test_zero_grad 1.33, test_step 1.69, test_no_grad 1.38, all 2, 3
    and 3 in Jupyter and unmoved)."""
    notebook = solution_notebook()
    cells = notebook.cells
    del cells[_cell_at(cells, "module")]
    unmoved, _ = grade_json(write_notebook(notebook, tmp_path / "unmoved" / NOTEBOOK))
    cells.insert(_cell_at(cells, "linear") + 1, cells.pop(_cell_at(cells, moved)))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    messages = [m for part in failing_messages(report).values() for m in part]
    assert messages and not [m for m in messages if "stands above cell module" in m], messages
    assert scores(report) == scores(unmoved), (scores(unmoved), scores(report))


def _wrong_draft(cell):
    """A copy of cell sgd's text with step() moving up the gradient, as a markdown cell: a note, never run in Jupyter."""
    draft = copy.deepcopy(cell)
    draft.source = draft.source.replace("p.data -= self.lr * p.grad", "p.data += self.lr * p.grad")
    draft.cell_type = "markdown"
    for key in ("outputs", "execution_count"):
        draft.pop(key)
    return draft


def _draft_moved_below_and_right_code_in_a_new_cell(notebook):
    """Cell sgd itself made the markdown note of a wrong draft and moved below test_no_grad; the right SGD written in
    a new code cell where cell sgd stood."""
    cells = notebook.cells
    at = _cell_at(cells, "sgd")
    draft = _wrong_draft(cells[at])
    cells[at] = new_code_cell(cells[at].source)
    cells.insert(_cell_at(cells, "test_no_grad") + 1, draft)
    return notebook


def _pasted_copy_kept_as_a_note_at_the_end(notebook):
    """Cell sgd copied and pasted at the end of the notebook (the copy keeps its metadata, as Jupyter's copy and paste
    does), made markdown: a note of an older wrong draft. Nothing moved."""
    notebook.cells.append(_wrong_draft(notebook.cells[_cell_at(notebook.cells, "sgd")]))
    return notebook


@pytest.mark.parametrize("keep", [_draft_moved_below_and_right_code_in_a_new_cell, _pasted_copy_kept_as_a_note_at_the_end],
                         ids=["moved-note", "pasted-note"])
def test_an_answer_cell_made_markdown_runs_as_code_in_the_grade_and_the_public_checks_and_is_named(
        tmp_path, monkeypatch, capsys, keep):
    """red-b14 X23-3 (pass 23): the student kept a wrong draft of cell sgd (step() moves up the gradient) as a markdown
    note below the right code: cell sgd itself made markdown and moved below test_no_grad, the right SGD in a new code
    cell where it stood (moved-note), or a pasted copy of cell sgd made markdown at the end (pasted-note). The release
    decides what a cell is: nbgrader's autograde makes the note code again (update_cell_type; the pasted copy is the
    last, so the graded one) and runs it where it stands, and so does the grade (13.38/18 both, test_step 0.56,
    test_lesson_numbers 0.82). The public checks once ran it as Jupyter does (never) and passed: they now run it as
    the grade does, and each failure says so first; a test cell in Jupyter, whose kernel never ran it, says so in a
    NOTE line."""
    path = write_notebook(keep(solution_notebook()), tmp_path / NOTEBOOK)
    note = "cell sgd is a markdown cell in your notebook, and the grade runs it as code, as the release has it"
    public = [m for ok, m in notebook_checks.run_part("step", path).values() if not ok]
    assert public and all(m.startswith(note) and "up the gradient" in m for m in public), public
    report, _ = grade_json(path)
    assert scores(report)["test_step"] < FULL["test_step"], scores(report)
    monkeypatch.setattr(notebook_checks, "NOTEBOOK", path)
    names, _ = notebook_checks.load(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK)
    notebook_checks.check("step", {**names, "In": []})  # the kernel ran the right code only: every check passes
    assert f"NOTE {note}" in capsys.readouterr().out


# red-f14 X23-f14-2: child._load's `except SystemExit` reads the exception's `code` (describe_cell_exit) inside the
# handler; a SystemExit subclass whose `code` raises escapes it, the loader dies, and every part that loads cell
# module is lost "(os._exit(0)?)", a call the notebook never made. Jupyter stops that cell only (IPython's
# SystemExit handler never reads .code), as it does for the plain sys.exit(1) at the same place, which grades 18/18.
# Measured on main 28dcb74: sys.exit(1) 18/18; the subclass 12/18, test_parameters 0/3 with "cell module ended the
# process (os._exit(0)?) before the check finished".
def test_a_system_exit_whose_code_raises_stops_its_cell_only_and_is_never_named_os_exit(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    cell["source"] = "".join(cell["source"]) + (
        "\n\nclass Stop(SystemExit):\n    @property\n    def code(self):\n        raise ValueError('no code')\n\n"
        "raise Stop(1)\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    messages = [t["message"] for part in report["parts"] for t in part["tests"] if not t["passed"]]
    assert not any("os._exit" in message for message in messages), messages[:3]
    assert report["total"] == report["max"], scores(report)


# red-f14 X23-f14-3: `raise KeyboardInterrupt` (or GeneratorExit) at a cell's top level stops only that cell in
# Jupyter and nbgrader's autograde (IPython's run_code catches it with a bare except and shows the traceback; only
# SystemExit and BdbQuit have handlers of their own); the grade (child._load's `except BaseException`: Fatal)
# ends the program, "which stops the program". Measured on main 28dcb74: 12/18 (test_parameters 0/3,
# test_lesson_numbers 0/3) for the right notebook with the raise at the end of cell module, where sys.exit(1) gives 18/18.
@pytest.mark.parametrize("raised", ["KeyboardInterrupt", "GeneratorExit"])
def test_a_base_exception_raised_at_a_cells_top_level_stops_that_cell_as_in_jupyter(tmp_path, raised):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    cell["source"] = "".join(cell["source"]) + f"\n\nraise {raised}\n"
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert report["total"] == report["max"], scores(report)


# red-f14 X23-f14-4: child._load's and _run_calls' handlers call messages.describe_exception, which reads str(exc);
# an exception whose own __str__ raises (a student's exception class whose __str__ names an attribute its __init__
# never set) escapes the handler and ends the process. At a cell's top level Jupyter shows the error and runs the
# cells below (so does nbgrader's autograde); the grade loses every part that loads the cell, named "ended the process
# (os._exit(0)?)". Measured on main 28dcb74: the right notebook with it at the end of cell module 12/18
# (test_parameters 0/3, test_lesson_numbers 0/3); raised by Linear.forward, test_forward's message is "ended the
# process (os._exit(0)?) before the check finished" where `return "bad shape"` gives "Linear.forward raised
# ShapeError: bad shape (line 24 of its cell)".
BROKEN_STR = 'class ShapeError(TypeError):\n    def __str__(self):\n        return f"bad shape {self.shape}"\n\n\n'


def test_an_exception_whose_str_raises_at_a_cells_top_level_stops_that_cell_only(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    cell["source"] = "".join(cell["source"]) + "\n\n" + BROKEN_STR + "raise ShapeError()\n"
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert report["total"] == report["max"], scores(report)


def test_an_exception_whose_str_raises_in_a_called_method_is_never_named_os_exit(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    right = "return x @ self.weight.T + self.bias\n"
    assert right in "".join(cell["source"])
    cell["source"] = BROKEN_STR + "".join(cell["source"]).replace(right, "raise ShapeError()\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    messages = [t["message"] for part in report["parts"] for t in part["tests"] if not t["passed"]]
    assert messages and not any("os._exit" in message for message in messages), messages[:3]


def test_a_cell_merged_into_the_cell_above_it_is_graded_as_the_code_it_holds(tmp_path):
    """red-b15 X24-b15-1 (pass 24): the student moved cell linear up under cell module and merged the two (Shift-M in
    Jupyter, Merge Cells in JupyterLab: the merged cell keeps the upper cell's metadata, so grade id module, holding
    Module then Linear; cell linear is gone). Jupyter runs the same code in the same order: every test cell passes and
    so do the public checks. The grade gives test_forward 0/2 (16/18), "raised KeyError: 'Linear' (because cell
    linear: raised RuntimeError: the cell linear is missing from the notebook (line 1))": the part takes cell module
    blank, its stub stands for the whole merged cell, and the student's Linear never runs. The same merge the other
    way round (an added cell above linear merged into it, so the merged cell keeps no grade id) scores 18/18, as does
    Linear written in a cell the student added: which metadata Jupyter's merge kept decides 2 points."""
    notebook = solution_notebook()
    cells = notebook.cells
    linear = cells.pop(_cell_at(cells, "linear"))
    cells[_cell_at(cells, "module")].source += "\n\n\n" + linear.source
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    public = {part: [m for ok, m in notebook_checks.run_part(part, path).values() if not ok]
              for part in ("forward", "parameters")}
    assert not any(public.values()), public  # the public checks, on the notebook as saved: it runs
    report, _ = grade_json(path)
    assert scores(report) == FULL, failing_messages(report)


def test_a_deleted_cell_is_never_named_as_standing_below_a_cell_the_student_moved(tmp_path):
    """fix-order2 (red-b15 X24-b15-4, its message): cell module deleted and the given cell relu_sequential moved above
    cell parameter, so `class ReLU(Module)` raises in Jupyter too. The stand-in for cell module stands after
    parameter, below relu_sequential; Runner.defined_below said "cell relu_sequential stands above cell module in your
    notebook", a cell the notebook does not hold. A deleted cell stands nowhere: the message is the error itself."""
    notebook = solution_notebook()
    cells = notebook.cells
    del cells[_cell_at(cells, "module")]
    cells.insert(_cell_at(cells, "parameter"), cells.pop(_cell_at(cells, "relu_sequential")))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    messages = [m for part in failing_messages(report).values() for m in part]
    assert [m for m in messages if "cell relu_sequential: raised NameError: name 'Module'" in m], messages
    assert not [m for m in messages if "stands above cell module" in m], messages


def test_a_missing_cell_is_graded_where_another_cell_of_the_students_binds_its_stubs_names():
    """fix-order2 (red-b15 X24-b15-1): cell linear merged into cell module (which keeps module's metadata) is hosted
    there: the forward part takes cell module from the student, and cell linear runs nothing, never a stand-in that
    raises as missing. An exercise's stub binds no name, so an answer written in another cell hosts no exercise cell
    (its message says to assign it in the exercise cell), and a cell the student added hosts what it binds."""
    notebook = solution_notebook()
    cells = notebook.cells
    cells[_cell_at(cells, "module")].source += "\n\n\n" + cells.pop(_cell_at(cells, "linear")).source
    cells[_cell_at(cells, "sgd")].source += "\n\ncount_64_32_10 = 32 * (64 + 1) + 10 * (32 + 1)\n"
    del cells[_cell_at(cells, "exercise_count")]
    no_grad = cells.pop(_cell_at(cells, "no_grad"))
    cells.append(new_code_cell(no_grad.source))  # at the end, with no metadata: a cell the student added
    assert suites.hosts(ASSIGNMENT, notebook) == {"linear": "module", "no_grad": str(len(cells) - 1)}
    forward = next(suite for suite in suites.load_suites(ASSIGNMENT) if suite.grade_id == "test_forward")
    program = {cell.name: cell.source for cell in suites.part_program(ASSIGNMENT, notebook, forward)}
    assert program["linear"] == "" and program["module"] == cells[_cell_at(cells, "module")].source


@pytest.mark.parametrize("draft", ["class Linear:  # a first draft, written again below\n    pass\n",
                                   "print(weight)  # a scratch cell that stops here in Jupyter\n\nclass Linear:\n    pass\n"],
                         ids=["draft-binds-linear", "draft-stops-before-linear"])
def test_a_draft_above_a_merged_cell_is_not_graded_in_place_of_the_code_the_merged_cell_holds(tmp_path, draft):
    """red-a16 X25-a16-3 (pass 25): red-b15 X24-b15-1's merged cell (linear merged into cell module, which keeps module's
    metadata) with a first draft `class Linear: pass` in a cell the student added above it. Jupyter runs the merged
    cell after the draft, so its Linear stands at every test cell: 18/18 (nbclient, allow_errors). suites.hosts picks
    the FIRST cell whose text binds Linear, the draft: the forward part takes the draft and cell module blank, so the
    student's Linear never runs (test_forward 0, "raised TypeError: Linear() takes no arguments"); and every other part
    runs linear's stub as a hosted cell whose own copy binds nothing, so _keeping puts the draft back over the stub
    (test_zero_grad 1.33, test_step 1.69, test_no_grad 1.38, "raised TypeError: ProbeLinear() takes no arguments",
    naming the grader's probe class): 12.4/18. A scratch cell whose first line raises (draft-stops-before-linear) binds
    no Linear in Jupyter, nor as the whole notebook ran (suites.stopped), yet its text is read whole: it is the host."""
    notebook = solution_notebook()
    cells = notebook.cells
    cells[_cell_at(cells, "module")].source += "\n\n\n" + cells.pop(_cell_at(cells, "linear")).source
    cells.insert(_cell_at(cells, "module"), new_code_cell(draft))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report) == FULL, failing_messages(report)


def test_a_scratch_cell_below_a_merged_cell_that_stops_before_its_binding_hosts_nothing(tmp_path):
    """fix-hosts (red-a16 X25-a16-3): hosts takes the last cell above the missing cell's test cell whose code binds the
    stub's names, as far as the whole notebook's run ran it (Grader.settle's stops). A scratch cell between the merged
    cell module and test_forward whose first line raises binds no Linear in Jupyter: cell module's Linear stands at
    test_forward (18/18). Its text, read whole, is the last binding above test_forward; as it ran, it binds nothing."""
    notebook = solution_notebook()
    cells = notebook.cells
    cells[_cell_at(cells, "module")].source += "\n\n\n" + cells.pop(_cell_at(cells, "linear")).source
    scratch = _cell_at(cells, "module") + 1
    cells.insert(scratch, new_code_cell("print(weight)  # a scratch cell that stops here in Jupyter\n\nclass Linear:\n    pass\n"))
    assert suites.hosts(ASSIGNMENT, notebook) == {"linear": str(scratch)}
    assert suites.hosts(ASSIGNMENT, notebook, {str(scratch): 1}) == {"linear": "module"}
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))  # settle reads the stops, then the hosts
    assert scores(report) == FULL, failing_messages(report)


def test_finding_a_deleted_cells_host_costs_the_grader_no_more_than_reading_the_notebook_once():
    """red-a16 X25-a16-5 (pass 25): suites.hosts reads every kept solution cell and every cell the student added with
    namespace_lines (a loop over each character) each time it is called, and it is called, uncached, by every
    part_program (twice per part_runner, besides part_runner's own call) and once more for the grading notes: 46 calls
    in one grade. A notebook of 2 MB (notebook_kb) with cell no_grad deleted and one added cell of 1.9 MB of string
    lines: the grade takes 20.4 s of CPU time against 3.5 s with no_grad kept (cProfile: hosts 50.4 of 54.7 s), of the
    60 s autograde_seconds. Here: every suite's part program, once each, costs 3.2 s with the cell deleted, 0.02 s kept."""
    notebook = solution_notebook()
    cells = notebook.cells
    del cells[_cell_at(cells, "no_grad")]
    line = 'y = "' + "b" * 60 + '"\n'
    cells.append(new_code_cell(line * (1_900_000 // len(line))))
    started = time.process_time()
    for suite in suites.load_suites(ASSIGNMENT):
        suites.part_program(ASSIGNMENT, notebook, suite)
    assert time.process_time() - started < 1.0


def test_a_deleted_cell_does_not_follow_a_test_cell_the_student_moved(tmp_path):
    """red-a16 X25-a16-6 (pass 25): red-b15 X24-b15-4 with a test cell. Cell linear deleted and test_forward moved up
    right below cell imports. _in_students_order places a deleted cell between the kept CODE cells around it in the
    release, test cells among them (which no part runs): test_forward, the one after it, now stands above module, the
    one before it, so linear's stub goes right before test_forward, above cell module, where `class Linear(Module)`
    raises NameError. Every part that takes linear blank loses Linear: test_zero_grad 1.33, test_step 1.69,
    test_no_grad 1.38, test_parameters 0.57, each "raised KeyError: 'Linear'" with no cause (6.97/18; 13/18 with
    test_forward unmoved). In Jupyter moving a test cell changes that test cell only: 10/18 both ways, test_zero_grad,
    test_step and test_no_grad full (nbclient, allow_errors)."""
    notebook = solution_notebook()
    cells = notebook.cells
    del cells[_cell_at(cells, "linear")]
    cells.insert(_cell_at(cells, "imports") + 1, cells.pop(_cell_at(cells, "test_forward")))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    got = {part: scores(report)[part] for part in ("test_zero_grad", "test_step", "test_no_grad")}
    assert got == {part: FULL[part] for part in got}, failing_messages(report)


def _wrong_parameters(notebook: NotebookNode) -> tuple[NotebookNode, str, str]:
    """Cell module of `notebook` given a wrong parameters() (only its own Parameters: no recursion): that cell, its
    right text, and the right parameters() method's text."""
    module = notebook.cells[_cell_at(notebook.cells, "module")]
    right = module.source
    start, stop = right.index("    def parameters"), right.index("    def __call__")
    module.source = (right[:start] + "    def parameters(self) -> list[Parameter]:\n        return [v for v in "
                     "vars(self).values() if isinstance(v, Parameter)]\n\n" + right[stop:])
    return module, right, right[start:stop]


def _module_that_forges_its_stop(end: str):
    """Cell module with a wrong parameters() (only its own Parameters: no recursion), a right Module in a cell the
    student added above it, Exercise 1 counted with the notebook's classes, and cell module ending with `end`."""
    notebook = solution_notebook()
    cells = notebook.cells
    module, right, _ = _wrong_parameters(notebook)
    module.source += end
    cells.insert(_cell_at(cells, "module"), new_code_cell(right))
    cells[_cell_at(cells, "exercise_count")].source = (
        "rng = np.random.default_rng(0)\ncount_64_32_10 = sum(p.data.size for p in Sequential(Linear(64, 32, rng), "
        "ReLU(), Linear(32, 10, rng)).parameters())\n")
    return notebook


@pytest.mark.parametrize("forge", ["syntax-error-raised", "lines-ended-by-a-bare-cr"])
def test_a_cell_that_raises_a_syntax_error_at_its_end_is_not_read_as_one_that_ran_nothing(tmp_path, forge):
    """red-a16 X25-a16-2 (pass 25): suites.stopped reads "cell X: a syntax error on line N" as a cell IPython ran none
    of (its stop at line 1), but the loader writes the same words for a SyntaxError the cell RAISES as it runs
    (`raise SyntaxError(..., ('<cell>', 1, 1, ''))`, or `compile('x = (', '<cell>', 'exec')`) after binding everything.
    Cell module (wrong parameters(), a right Module in an added cell above) ending with such a raise is then read as
    binding nothing, so no part's stub replaces Module: the added cell's right Module is kept in the exercise part, and
    Exercise 1, counted with the notebook's classes, scores 1/1. Jupyter runs cell module whole (its Module is the
    wrong one at test_exercise_count): 0/1, and the grade without the last line is 0/1 too (13.59 against 12.59). So
    too a plain `raise ValueError` at the end of a cell whose lines a bare CR ends (run_before splits on LF only)."""
    if forge == "syntax-error-raised":
        notebook = _module_that_forges_its_stop("\n\nraise SyntaxError('not really', ('<cell>', 1, 1, ''))\n")
    else:
        notebook = _module_that_forges_its_stop("\n\nraise ValueError('late')\n")
        module = notebook.cells[_cell_at(notebook.cells, "module")]
        module.source = module.source.replace("\n", "\r")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_exercise_count"] == 0, failing_messages(report)


def _indented(text: str) -> str:
    return "".join("    " + line if line.strip() else line for line in text.splitlines(True))


@pytest.mark.parametrize("block", ["loop-second-round", "finally-below-the-raise"])
def test_a_cell_whose_block_ran_lines_below_where_it_stopped_is_not_read_as_binding_nothing(tmp_path, block):
    """red-a18 X27-a18-1 (pass 27): X25-a16-2 with no forged exception. Cell module (wrong parameters(), a right Module
    in an added cell above) is wrapped in a block that raises above its code after that code ran: a `for` loop whose
    second round raises at its top, or `try: raise ValueError` with the code in the `finally` body. The loader's stop is
    the line of the raise, run_before keeps only the lines above it, so the grader reads cell module as binding no
    Module: the exercise part keeps the added cell's right Module, and Exercise 1 counted with the notebook's classes
    scores 1/1 (13.59/18). Jupyter ran the block's code, so test_exercise_count meets the wrong Module: 0/1 (11/18;
    the grade of the same cell without the block: 12.59)."""
    notebook = _module_that_forges_its_stop("")
    module = notebook.cells[_cell_at(notebook.cells, "module")]
    if block == "loop-second-round":
        module.source = ("for _round in range(2):\n    if _round:\n        raise StopIteration('checked once')\n"
                         + _indented(module.source))
    else:
        module.source = "try:\n    raise ValueError('x')\nfinally:\n" + _indented(module.source)
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_exercise_count"] == 0, failing_messages(report)


RUNTIME_BINDINGS = {
    "class-body-global": "class _Wrap:\n    global Module\n{body}    raise StopIteration('checked once')\n",
    "if-class-body-global": "if True:\n    class _Wrap:\n        global Module\n{body2}        raise StopIteration('x')\n",
    "def-global-called": "def _define():\n    global Module\n{body}    raise StopIteration('x')\n\n\n_define()\n",
    "globals-in-class-body": "class _Wrap:\n{body}    globals()['Module'] = Module\n    raise StopIteration('x')\n",
}


@pytest.mark.parametrize("wrapper", list(RUNTIME_BINDINGS))
def test_a_stopped_cell_that_bound_module_at_run_time_is_not_read_as_binding_nothing(tmp_path, wrapper):
    """red-a19 X28-a19-1 (pass 28): a cell that stopped is read as binding what program.bound_names finds in its
    lines above the stop, which never looks inside a def or class body. Cell module (wrong parameters(), a right
    Module in an added cell above) whose Module is bound at run time from a class or def body (`global Module`, or
    `globals()['Module'] = ...`) before the cell raises is read as binding no Module: no stub replaces it, the added
    cell's right Module is kept, and the grade is 18/18 (the same cell without the raise: 12.59, test_parameters
    0.5/3, test_exercise_count 0/1). Jupyter ran the body, which bound the wrong Module: test_exercise_count 0/1.
    (fix-bound: the cell's text gets its last line break, which red-a19's lacked, so its `raise` joined the last line
    of the body: a cell that does not parse, which runs nothing in Jupyter either. Measured on main with it:
    class-body-global and globals-in-class-body 13.59/18, Exercise 1 1/1; the other two read right already.)"""
    notebook = _module_that_forges_its_stop("\n")
    module = notebook.cells[_cell_at(notebook.cells, "module")]
    module.source = RUNTIME_BINDINGS[wrapper].format(body=_indented(module.source),
                                                     body2=_indented(_indented(module.source)))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_exercise_count"] == 0, failing_messages(report)


@pytest.mark.parametrize("bound,kept", [({"module": []}, True), ({"module": ["Module"]}, False),
                                        ({"module": ["*"]}, False), ({}, False)],
                         ids=["saw-none", "saw-module", "saw-too-many", "past-the-cells-sent"])
def test_a_stopped_cells_stub_replaces_the_names_the_sandbox_saw_it_bind(bound, kept):
    """fix-bound (X28-a19-1): cell module stopped at its first line, so its text above the stop binds nothing; the
    stub standing in for it keeps the Module of the cells above only when the loader saw its run bind no Module. A
    cell whose names did not fit (EVERY_NAME), or one past the cells the loader sends, is read as binding every name."""
    notebook = _module_that_forges_its_stop("\n")
    suite = next(suite for suite in suites.load_suites(ASSIGNMENT) if suite.grade_id == "test_exercise_count")
    program = {cell.name: cell.source for cell in suites.part_program(ASSIGNMENT, notebook, suite, {"module": 1},
                                                                       bound=bound)}
    assert program["module"].startswith("__kept_from_your_cells_above = ") is kept, program["module"][:200]


def test_a_message_about_a_class_a_run_notebook_defines_names_the_cell_that_ran_it(tmp_path):
    """red-a19 X28-a19-2 (pass 28): fix-run runs `%run helper.ipynb`'s cells through the stand-in's run_cell. Cell
    module writes a helper notebook holding its (wrong) Module and runs it with `%run`: the grade's message at
    test_lesson_numbers says "the Module in use is the one cell run_cell defines again, which replaces cell module's:
    remove that copy from cell run_cell". The notebook has no cell run_cell (that is the stand-in's function), so
    the message names code that does not exist. (The grade, 13.59/18 with test_exercise_count 1/1, is also above the
    same Module written in the cell, 12.59: the binding the text hides, as pass 24's fix-lend3 left.)"""
    notebook = _module_that_forges_its_stop("")
    module = notebook.cells[_cell_at(notebook.cells, "module")]
    module.source = _running_as_a_notebook(module.source)
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    said = json.dumps(failing_messages(report))
    assert "cell run_cell" not in said, said


def _running_as_a_notebook(source: str) -> str:
    """A cell that writes `source` as the one code cell of helper_nb.ipynb and runs it with `%run`."""
    helper = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None}]}
    return ("import json\n\nwith open('helper_nb.ipynb', 'w') as f:\n    json.dump(%r, f)\n"
            "%%run helper_nb.ipynb\n" % helper)


def test_a_class_a_run_notebook_defines_again_is_told_as_the_cell_that_ran_it(tmp_path):
    """fix-runname (pass 28, X28-a19-2): a cell below cell module (cell sgd) that `%run`s a notebook holding a Module
    whose parameters() is wrong defines Module again: the note names cell sgd, whose %run line the student wrote."""
    notebook = solution_notebook()
    module, sgd = (notebook.cells[_cell_at(notebook.cells, name)] for name in ("module", "sgd"))
    start, stop = module.source.index("    def parameters"), module.source.index("    def __call__")
    wrong = (module.source[:start] + "    def parameters(self):\n        return []\n\n" + module.source[stop:])
    sgd.source += "\n" + _running_as_a_notebook(wrong)
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    said = json.dumps(failing_messages(report))
    assert "the Module in use is the one cell sgd defines again" in said and "remove that copy from cell sgd" in said, said


def test_a_cell_that_ran_to_its_end_and_left_a_callback_that_interrupts_is_not_read_as_binding_nothing(tmp_path):
    """red-a18 X27-a18-2 (pass 27): cell module (wrong parameters(), a right Module in an added cell above) ends by
    putting a callback that raises KeyboardInterrupt on the event loop (`asyncio.get_running_loop().call_soon(stop)`).
    It runs after the cell's coroutine returned and leaves run_cell; child._load reads that as a cell that does not
    parse (stop at line 1), so the grader reads cell module as binding no Module and the exercise part keeps the right
    one: Exercise 1 scores 1/1 (13.59/18, against 12.59 without the last lines). Jupyter runs cell module whole, and the
    same callback kills its kernel (nbclient: DeadKernelError), so test_exercise_count never passes there."""
    notebook = _module_that_forges_its_stop("\n\nimport asyncio\n\n\ndef _stop():\n    raise KeyboardInterrupt\n\n\n"
                                            "asyncio.get_running_loop().call_soon(_stop)\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_exercise_count"] == 0, failing_messages(report)


# red-c15 pass 24: the loader's handlers (child._load; messages.describe_exception, describe_cell_exit) still read the
# notebook's exception where its own code can raise, past what 937c00b's _said guards (a str() or a code raising an
# Exception): each of these at the end of cell module ends the loader, and every part that loads the cell is lost,
# named "cell module ended the process (os._exit(0)?)". Measured on main e044460: 12/18 each (test_parameters 0/3,
# test_lesson_numbers 0/3). In Jupyter (nbclient, allow_errors, measured with the venv's ipykernel 7.4) each cell
# shows an error and the cell below it runs, so nbgrader's autograde gives 18/18.
LOADER_ESCAPES = {
    # X24-c15-1: _said catches Exception only: a __str__ or a SystemExit's code raising a BaseException escapes it
    "str_raises_keyboard_interrupt": "class E(Exception):\n    def __str__(self):\n        raise KeyboardInterrupt\n\n"
                                     "raise E()\n",
    "code_raises_keyboard_interrupt": "class Stop(SystemExit):\n    @property\n    def code(self):\n"
                                      "        raise KeyboardInterrupt\n\nraise Stop(1)\n",
    # X24-c15-1: isinstance(exc, NotImplementedError) reads exc.__class__ (a property of the notebook's)
    "class_raises": "class E(Exception):\n    @property\n    def __class__(self):\n        raise ValueError('no class')\n\n"
                    "raise E('x')\n",
    # X24-c15-1: type(exc).__name__ is a metaclass's property
    "type_name_raises": "class Meta(type):\n    @property\n    def __name__(cls):\n        raise ValueError('no name')\n\n"
                        "class E(Exception, metaclass=Meta):\n    pass\n\nraise E('x')\n",
    # X24-c15-1: traceback.walk_tb(exc.__traceback__) reads a property of the notebook's
    "traceback_raises": "class E(Exception):\n    @property\n    def __traceback__(self):\n        raise ValueError('no tb')\n"
                        "    @__traceback__.setter\n    def __traceback__(self, value):\n        pass\n\nraise E('x')\n",
    # X24-c15-1: _exit_call's getattr(quitter, "name", None) swallows only AttributeError
    "quitter_name_raises": "type(exit).name = property(lambda self: 1 / 0)\nexit(0)\n",
    # X24-c15-2: no class of the student's: a built-in SyntaxError raised with its details in the wrong order makes
    # exc.filename an int, and _in_notebook(exc.filename) calls int.startswith
    "syntax_error_int_filename": 'raise SyntaxError("bad input", (1, 2, 3, "x"))\n',
    # X24-c15-2: _exit_code's repr(code) of an int past Python's 4,300 digits raises ValueError (only reading code is
    # guarded); IPython shows the ValueError and runs the cells below
    "sys_exit_huge_int": "import sys\nsys.exit(10**5000)\n",
}


@pytest.mark.parametrize("raised", LOADER_ESCAPES.values(), ids=LOADER_ESCAPES.keys())
def test_an_exception_that_misbehaves_at_a_cells_top_level_stops_that_cell_only(tmp_path, raised):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    cell["source"] = "".join(cell["source"]) + "\n\n" + raised
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    messages = [t["message"] for part in report["parts"] for t in part["tests"] if not t["passed"]]
    assert report["total"] == report["max"], (scores(report), messages[:2])


# red-c15 X24-c15-3: child._load writes Loaded with each cell's whole first line of its error; only the reader cuts it
# (protocol.Loaded.from_json, ERROR_CHARS). A top-level exception whose message's first line is over about 1.1 MB
# (answer_kb + FIELDS_BYTES) makes the Loaded line oversized: the worker blames the last cell loaded, "cell no_grad wrote
# to the grader's pipe something that is not an answer: write only through print(), not to file descriptors (os.write)",
# and the parts that load cell module score 0. Measured on main e044460: `raise ValueError(str(list(range(200_000))))`
# at the end of cell module gives 12/18; Jupyter shows the error and runs the cells below (18/18 in nbgrader).
def test_a_long_message_raised_at_a_cells_top_level_stops_that_cell_only(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    cell["source"] = "".join(cell["source"]) + "\n\nraise ValueError(str(list(range(200_000))))\n"
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    messages = [t["message"] for part in report["parts"] for t in part["tests"] if not t["passed"]]
    assert not any("os.write" in message or "no_grad" in message for message in messages), messages[:2]
    assert report["total"] == report["max"], scores(report)


# red-c15 X24-c15-3, in a call: the reason of a method that raised with a 1.2 MB message is cut only by the reader, so
# the check says the method "returned an answer larger than 1,024 KB" (it returned nothing: it raised). Measured on
# main e044460: test_forward's first failing check says so, where a short message gives "_huge_forward raised ValueError".
def test_a_long_message_raised_by_a_method_is_named_as_raised_not_as_a_large_answer(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    cell["source"] = "".join(cell["source"]) + (
        "\n\ndef _huge_forward(self, x):\n    raise ValueError('x' * 1_200_000)\n\nLinear.forward = _huge_forward\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    forward = next(part for part in report["parts"] if part["grade_id"] == "test_forward")
    messages = [t["message"] for t in forward["tests"] if not t["passed"]]
    assert messages and not any("returned an answer larger" in message for message in messages), messages[:2]


# red-c15 X24-c15-4: the public checks' run_cells catches (Exception, SystemExit) only, and explain.describe_exception
# reads str(exc), exc.code, exc.__class__ (isinstance), exc.__traceback__ and exc.filename unguarded. A cell that
# raises KeyboardInterrupt or GeneratorExit at its top level, or an exception whose __str__ or code raises (the grade's
# own fixed cases, red-f14 X23-f14-2/3/4: 18/18 since 937c00b), ends the checks' child: every public check fails,
# "the process ended during this check (exit code 1): a crash, or sys.exit() / os._exit() in your code?" or
# "modules_and_sgd.ipynb could not be read as a notebook (no class)". Measured on main e044460 with the release's
# `python -m pytest`: 36 failed of 36 for each of the right notebooks below (the raise at the end of cell module),
# where the grade gives 18/18 (KeyboardInterrupt, __str__, code) and Jupyter runs the cells below.
PUBLIC_ESCAPES = {
    "keyboard_interrupt": "raise KeyboardInterrupt\n",
    "generator_exit": "raise GeneratorExit\n",
    "str_raises": BROKEN_STR + "raise ShapeError()\n",
    "code_raises": "class Stop(SystemExit):\n    @property\n    def code(self):\n        raise ValueError('no code')\n\n"
                   "raise Stop(1)\n",
    **{name: LOADER_ESCAPES[name] for name in ("class_raises", "traceback_raises", "syntax_error_int_filename",
                                               "sys_exit_huge_int")},
    "value_error_huge_int": "raise ValueError(10**5000)\n",  # str(exc) raises; the grade gives 18/18
    "cancelled_error": "import asyncio\nraise asyncio.CancelledError('stop')\n",  # a BaseException: the grade, 18/18
}


@pytest.mark.parametrize("raised", PUBLIC_ESCAPES.values(), ids=PUBLIC_ESCAPES.keys())
def test_the_public_checks_run_the_cells_below_a_cell_that_raised_as_jupyter_does(raised):
    names, errors, escaped = {}, [], False
    try:  # a KeyboardInterrupt let out would stop pytest itself; failed outside, so that pytest never formats it
        names, errors = notebook_checks.run_cells([("raises", raised), ("below", "after = 1\n")])
    except BaseException:
        escaped = True
    assert not escaped, "run_cells let the exception out of the cell that raised it"
    assert names.get("after") == 1 and [reason.split(":")[0] for reason, _ in errors] == ["cell raises"], errors


def test_the_public_checks_pass_the_right_notebook_with_a_keyboard_interrupt_at_a_cells_top_level(tmp_path):
    """What the student sees: `python -m pytest -m forward` on it; the grade's test_forward is 2/2 (18/18 in all)."""
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    cell["source"] = "".join(cell["source"]) + "\n\nraise KeyboardInterrupt\n"
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    failed = [message for ok, message in notebook_checks.run_part("forward", path).values() if not ok]
    assert not failed, failed[:2]


# red-c15 X24-c15-4, in a check: run_check's handler catches (Exception, SystemExit) and its _failure reads str(exc): a
# method that raises KeyboardInterrupt, or an exception whose __str__ raises, ends the checks' child, and the check says
# "the process ended during this check (exit code 1): a crash, or sys.exit() / os._exit() in your code?" where the grade
# names it ("Linear.forward raised KeyboardInterrupt, which stops the program"; "Linear.forward raised ShapeError").
@pytest.mark.parametrize("raised", ["raise KeyboardInterrupt", "raise ShapeError()"])
def test_the_public_checks_name_what_a_method_raised_never_a_process_that_ended(tmp_path, raised):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    right = "return x @ self.weight.T + self.bias\n"
    cell["source"] = BROKEN_STR + "".join(cell["source"]).replace(right, raised + "\n")
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    failed = [message for ok, message in notebook_checks.run_part("forward", path).values() if not ok]
    assert failed and not any("process ended" in message for message in failed), failed[:2]


# red-c15 X24-c15-5: in Jupyter `exit` and `quit` are ipykernel's ZMQExitAutocall, not site's Quitter: called in a cell
# they raise nothing (they ask the front end to close the kernel, which nbclient, and so nbgrader's autograde, never
# does), so the rest of the cell runs and so do the cells below. Measured with the venv's nbclient 0.11 and ipykernel
# 7.4: `exit()` then `print("AFTER EXIT")` prints AFTER EXIT, and the next cell runs. The grade (the loader's builtins:
# site's Quitter raises SystemExit) stops the cell at exit(): the right notebook with `exit()` as the first line of cell
# sgd gives 10.82/18 on main e044460 ("cell sgd: called exit() (line 1), which stops the cell there"), 18/18 in nbgrader.
# fix-exits measured it again (nbclient 0.11, ipykernel 7.4, allow_errors): true for quit(3) and exit(True)
# (keep_kernel true: nothing happens), not for exit() / quit() / exit(0): the kernel's loop stops 0.1 s later, so a
# cell that starts after that never runs (DeadKernelError: exit(), then a cell that sleeps 0.5 s, then any cell;
# 2 of 2 runs), and nbgrader's autograde cannot grade the notebook. The grade keeps stopping that cell only
# (tests/test_sandbox.py::test_exit_that_ends_the_kernel_stops_its_cell_and_is_named_as_called).
@pytest.mark.parametrize("call", ["exit(True)", "quit(3)"])
def test_exit_that_keeps_the_kernel_stops_nothing_as_in_jupyters_kernel(tmp_path, call):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sgd")
    cell["source"] = f"{call}\n" + "".join(cell["source"])
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert report["total"] == report["max"], scores(report)



# red-c15 X24-c15-6: the public checks' run_cells compiles each cell with plain compile(): a cell with a top-level
# `await` (IPython's autoawait, on in Jupyter; the grade runs it on the notebook's loop since red pass 21 F3) is "a syntax
# error on line 2: 'await' outside function" there, and the cells that need its names fail. Measured on main e044460:
# `import asyncio` / `await asyncio.sleep(0)` at the end of cell module: the release's `python -m pytest` 19 failed, 17
# passed; the grade 18/18; Jupyter runs the cell.
@pytest.mark.parametrize("caller", ["plain", "in-a-running-loop"])
def test_the_public_checks_run_a_cell_with_top_level_await_as_jupyter_does(caller):
    """Also where the caller runs an event loop itself: a kernel's own cell (stock nbgrader's grade cells in `make
    bench` load the reference so), where a loop of the cells' own in the same thread could not run."""
    cells = [("plain", "x = 1\n"), ("waits", "import asyncio\nawait asyncio.sleep(0)\nafter = 1\n")]

    async def in_a_running_loop():
        return notebook_checks.run_cells(cells)

    names, errors = notebook_checks.run_cells(cells) if caller == "plain" else asyncio.run(in_a_running_loop())
    assert not errors and names.get("after") == 1 and names.get("x") == 1, errors


# red-c15 X24-c15-3, in memory: describe_exception takes a message's first line as str(exc).strip().splitlines()[0], a
# string object for every line of it. A cell that raises ValueError("ab\n" * 30_000_000) (90 MB, well within the 1,024
# MB the cell may use) makes the loader's handler list 30 million strings: the memory budget kills the loader, "cell
# module was killed by the kernel: the submission's processes together used their memory budget of 1024 MB", and the
# parts that load the cell score 0. Measured on main e044460: 12/18 (11 s); Jupyter shows the error, runs the cells below.
def test_a_message_of_many_lines_raised_at_a_cells_top_level_stops_that_cell_only(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    cell["source"] = "".join(cell["source"]) + '\n\nraise ValueError("ab\\n" * 30_000_000)\n'
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert report["total"] == report["max"], scores(report)


# red-c15 X24-c15-7: the same unguarded reads in _run_calls' handlers (describe_exception, describe_exit) end the check
# child when a called method raises such an exception, with nothing of the student's class: the check says "ended the
# process (os._exit(0)?) before the check finished", a call the notebook never made. Measured on main e044460 with
# Linear.forward replaced by each (score 13.55/18, as for a plain raise); a short ValueError is named "_bad_forward
# raised ValueError: ...".
CALL_ESCAPES = {
    "syntax_error_int_filename": 'raise SyntaxError("bad input", (1, 2, 3, "x"))',
    "sys_exit_huge_int": "sys.exit(10**5000)",
}


@pytest.mark.parametrize("raised", CALL_ESCAPES.values(), ids=CALL_ESCAPES.keys())
def test_a_method_that_raises_an_odd_built_in_exception_is_never_named_os_exit(tmp_path, raised):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    cell["source"] = "".join(cell["source"]) + (
        f"\n\nimport sys\n\n\ndef _bad_forward(self, x):\n    {raised}\n\n\nLinear.forward = _bad_forward\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    messages = [t["message"] for part in report["parts"] for t in part["tests"] if not t["passed"]]
    assert messages and not any("os._exit" in message for message in messages), messages[:2]


# red-c15 X24-c15-8 (test_messages.py holds the unit): a SystemExit whose code raises, first in cell linear, loses the
# "because cell linear: ..." of every check that misses Linear (the load error is read as the notebook's own words).
# So does sys.exit() with a str of over about 270 characters: protocol.Loaded.from_json cuts each load error to
# ERROR_CHARS (300) before the worker reads its shape, and a cut str's repr has no closing quote (measured on main
# e044460: "raised KeyError: 'Linear'" with no cause; a short str keeps it).
CELL_EXITS_LOST = {
    "code_raises": "class Stop(SystemExit):\n    @property\n    def code(self):\n        raise ValueError('no code')\n\n"
                   "raise Stop(1)\n",
    "long_str": "import sys\nsys.exit('Linear is not finished yet: ' + 'the shapes of the weight and the bias must be "
                "checked first, ' * 5)\n",
}


@pytest.mark.parametrize("exits", CELL_EXITS_LOST.values(), ids=CELL_EXITS_LOST.keys())
def test_a_cell_exit_is_named_as_the_cause_of_a_missing_class(tmp_path, exits):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    cell["source"] = exits + "".join(cell["source"])
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    forward = next(part for part in report["parts"] if part["grade_id"] == "test_forward")
    messages = [t["message"] for t in forward["tests"] if not t["passed"]]
    assert messages and all("because cell linear: called sys.exit" in message for message in messages), messages[:2]


# red-c15 X24-c15-9 (test_messages.py holds the unit): an exception class named in Hindi, raised by Linear.forward: every
# test_forward check says "sent an answer in words of its own (written to the grader's pipe?)".
def test_a_method_raising_an_exception_named_in_hindi_is_not_said_to_write_to_the_graders_pipe(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "linear")
    cell["source"] = "".join(cell["source"]) + (
        "\n\nclass त्रुटि(ValueError):\n    pass\n\n\ndef _bad_forward(self, x):\n    raise त्रुटि('bad shape')\n\n\n"
        "Linear.forward = _bad_forward\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    messages = [t["message"] for part in report["parts"] for t in part["tests"] if not t["passed"]]
    assert messages and not any("grader's pipe" in message for message in messages), messages[:2]


# red-c15 X24-c15-5 on the public side: run_cells runs a cell with site's exit() too, so `python -m pytest` fails the
# checks of a class defined below exit() in its cell, where the notebook's own test cells (the kernel's names: ipykernel's
# exit() raised nothing) pass them. fix-public and fix-exits measured it again (nbclient 0.11, ipykernel 7.4): true for
# quit(3) and exit(True) (keep_kernel true: nothing happens), not for exit() / quit() / exit(0): the kernel's loop stops
# 0.1 s later, so a cell that starts after that never runs (nbclient raises DeadKernelError: the right notebook with
# exit() as the first line of cell module, 1 of 1 run), and nbgrader cannot grade the notebook. Those stop their cell
# only, in the public checks as in the grade (tests/test_sandbox.py), and are named as called.
@pytest.mark.parametrize("call", ["exit(True)", "quit(3)"])
def test_the_public_checks_run_the_rest_of_a_cell_after_exit_as_jupyters_kernel_does(call, monkeypatch):
    monkeypatch.setattr("sys.stdin", None)  # site's Quitter closes sys.stdin
    names, errors = notebook_checks.run_cells([("c", f"{call}\nafter = 1\n")])
    assert names.get("after") == 1 and not errors, errors


def test_the_public_checks_stop_only_the_cell_of_an_exit_that_ends_the_kernel(monkeypatch):
    monkeypatch.setattr("sys.stdin", None)  # site's Quitter closes sys.stdin
    names, errors = notebook_checks.run_cells([("c", "exit()\nafter = 1\n"), ("d", "quit(0)\n"), ("e", "below = 1\n")])
    assert "after" not in names and names.get("below") == 1, names.keys()
    assert [reason for reason, _ in errors] == ["cell c: called exit() (line 1), which stops the cell there",
                                                "cell d: called quit(0) (line 1), which stops the cell there"]


# fix-setorder: `return set(found)` in Module.parameters() graded 15.5, 15.43, 15.36, 15.29, 15.57, 15.64 on six
# runs of main 94b1c9c: a set iterates in memory-address order, so which checks of the order failed changed run to
# run. The probes now report that parameters() returned a set (facts.unordered); each check judges its members as
# those of a list in any order, and the check whose rule is the order (weight then bias) names the set, every run.
def test_a_set_from_parameters_gets_one_grade_on_every_run_and_is_named(tmp_path):
    notebook = solution_notebook()
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "module")
    assert "        return found\n" in cell["source"]
    cell["source"] = cell["source"].replace("        return found\n", "        return set(found)\n")
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    runs = [grade_json(path)[0] for _ in range(3)]
    failed = [{t["name"]: t["message"] for part in report["parts"] for t in part["tests"] if not t["passed"]}
              for report in runs]
    assert len({report["total"] for report in runs}) == 1 and failed[0] == failed[1] == failed[2], failed
    assert failed[0] and all(name.startswith("test_collects_weight_then_bias_of_a_linear_layer") for name in failed[0])
    assert all("returns a set, whose order changes from run to run" in message for message in failed[0].values())
    public = notebook_checks.run_part("parameters", path)
    assert {ok for ok, _ in public.values()} == {True, False}
    assert all("returns a set" in message for ok, message in public.values() if not ok), public


def _tensor_rebound_at_the_end_of_cell_no_grad():
    """The right notebook with the name Tensor rebound to a type whose attributes cannot be set (NumPy's ndarray, an
    alias for type hints) at the end of the last answer cell, no_grad: nothing of Linear, Module, SGD reads the name."""
    notebook = solution_notebook()
    cell = notebook.cells[_cell_at(notebook.cells, "no_grad")]
    cell.source += "\n\nTensor = np.ndarray  # for the type hints of my own helpers\n"
    return notebook


def test_a_notebook_whose_tensor_name_takes_no_attribute_fails_checks_not_the_public_checks_own_process(tmp_path):
    """red-b16 X25-b16-4: notebook_checks.run_check sets names["Tensor"].recording = True before its try, so
    ndarray's TypeError ends the check's child: every public check of every part (forward 5/5, step 5/5) fails with
    "the process ended during this check (exit code 1): a crash, or sys.exit() / os._exit() in your code?", naming
    code the notebook never calls, and the traceback of notebook_checks.py is printed. The grade keeps test_forward
    (2/2) and test_step (3/3). Measured on main 3dcacfe. The checks now reset the engine's Tensor and fail as the
    notebook's code makes them (nb.Tensor(...) is an ndarray's constructor there): that the public checks run the whole
    saved notebook where a part of the grade runs its own cells is the known gap of the pasted Module copy."""
    path = write_notebook(_tensor_rebound_at_the_end_of_cell_no_grad(), tmp_path / NOTEBOOK)
    public = [m for ok, m in notebook_checks.run_part("forward", path).values() if not ok]
    assert not [m for m in public if "process ended" in m or "exit" in m], public


def test_the_probes_reset_of_recording_costs_no_check_of_a_method_that_never_reads_tensor(tmp_path):
    """red-b16 X25-b16-5: probes._answers sets ns["Tensor"].recording = True before each probe (pass 24, fix-msg6).
    With the name Tensor rebound to ndarray that line of the grader's raises, and every lesson check fails with
    "raised TypeError: cannot set 'recording' attribute of immutable type 'numpy.ndarray'" (no cell, no line: the
    grader's own statement, reported as the notebook's): test_lesson_numbers 0/3, 12/18 in all, although counting
    parameters (test_counts_354_and_2410_parameters) and the training loop run Linear, Sequential and SGD only, which
    never read the name. Measured on main 3dcacfe: 11 of 11 lesson checks fail with that message."""
    report, _ = grade_json(write_notebook(_tensor_rebound_at_the_end_of_cell_no_grad(), tmp_path / NOTEBOOK))
    lesson = {t["name"]: t for part in report["parts"] if part["grade_id"] == "test_lesson_numbers" for t in part["tests"]}
    counts = [t for name, t in lesson.items() if name.startswith("test_counts_354_and_2410_parameters")]
    assert counts and all(t["passed"] for t in counts), [t["message"] for t in counts]


_ORDERED_SET = '''class OrderedParameters(set):
    """A set that remembers the order its Parameters were added in (iterates in that order)."""

    def __init__(self):
        super().__init__()
        self.order = []

    def add(self, p):
        if p not in self:
            super().add(p)
            self.order.append(p)

    def __iter__(self):
        return iter(self.order)


'''


def test_a_set_subclass_that_keeps_its_order_is_graded_as_the_list_it_iterates_as(tmp_path):
    """red-b16 X25-b16-7: fix-setorder's facts.unordered calls anything that is a set or a frozenset unordered,
    "including subclasses". The right Module.parameters() returning its list through a set subclass whose __iter__
    gives the order the Parameters were added in (the right order, on every run) loses
    test_collects_weight_then_bias_of_a_linear_layer[0..2] (17.79/18), and the grade and the public check say
    "parameters() returns a OrderedParameters, whose order changes from run to run": it does not. Before pass 24 it
    got 18/18. Measured on main 3dcacfe: 17.79/18, 3 failing checks, each with that message."""
    notebook = solution_notebook()
    cell = notebook.cells[_cell_at(notebook.cells, "module")]
    cell.source = _ORDERED_SET + cell.source.replace(
        "return found", "ordered = OrderedParameters()\n        for p in found:\n            ordered.add(p)\n"
                        "        return ordered")
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    assert scores(report) == FULL, failing_messages(report)


def test_a_shell_command_the_grade_never_runs_costs_the_public_checks_nothing(tmp_path):
    """red-b16 X25-b16-6: the grade's shell runs no `!command` (ipython_shell: system() and getoutput() do nothing),
    and grades the right notebook with a cell `!sleep 11` (a stand-in for a Colab habit such as `!pip install -q
    torch`, which downloads for longer than that) 18/18 at once. The public checks (runner.py: IPython's own
    InteractiveShell) run the command, in every part's child, and every check of the part fails with "loading the
    notebook did not finish within 10 s (a loop in a cell?)". Measured on main 3dcacfe: grade 18/18; public forward
    0/5 passed, after 10.1 s."""
    notebook = solution_notebook()
    notebook.cells.insert(1, new_code_cell("!sleep 11"))
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    assert scores(report) == FULL, scores(report)
    public = [m for ok, m in notebook_checks.run_part("forward", path).values() if not ok]
    assert not public, public


_MOMENTUM_AT_THE_END = """\
# Trying SGD with momentum after finishing the lesson
class SGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.velocity = [np.zeros_like(p.data) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = np.zeros_like(p.data)

    def step(self):
        for p, v in zip(self.params, self.velocity):
            v *= self.momentum
            v += p.grad
            p.data -= self.lr * v
"""


def test_a_cell_the_student_added_below_every_test_cell_changes_no_part(tmp_path):
    """red-a16 X25-a16-1 (pass 25), its honest side: the reference notebook with one cell added at its very end, below
    test_lesson_numbers, where the student tries SGD with momentum (a class SGD of its own). Jupyter runs every test
    cell before it: 18/18 (nbclient, allow_errors). An added cell runs in every part, and the checks run after the whole
    program, so the step part grades the momentum SGD: test_step 1.88/3, "the first step was right, but after the second
    the Parameters had not moved by -lr * grad again: the optimizer must keep updating the very objects it was given"
    (cell sgd is right), and test_lesson_numbers 1.64/3 ("remove that copy from cell '52'"): 15.52/18."""
    notebook = solution_notebook()
    notebook.cells.append(new_code_cell(_MOMENTUM_AT_THE_END))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report) == FULL, failing_messages(report)


def _as_markdown(cell, source=None):
    note = copy.deepcopy(cell)
    note.cell_type = "markdown"
    for key in ("outputs", "execution_count"):
        note.pop(key, None)
    if source is not None:
        note.source = source
    return note


def _first_try_kept_above_as_a_note(notebook):
    """Cell exercise_count copied and pasted below (the copy keeps its metadata, as Jupyter's copy and paste does);
    the upper one, the first try, made markdown as a note; the lower one, the graded one, uses a helper only the note
    defines (the kernel still has it from when the note was code)."""
    cells = notebook.cells
    at = _cell_at(cells, "exercise_count")
    final = copy.deepcopy(cells[at])
    final.source = "count_64_32_10 = layer_count(64, 32) + layer_count(32, 10)\n"
    cells[at] = _as_markdown(cells[at], "def layer_count(n_in, n_out):\n    return n_in * n_out + n_out\n\n\n"
                                        "count_64_32_10 = 64 * 32 + 32 * 10\n")
    cells.insert(at + 1, final)
    return notebook


def test_an_earlier_copy_of_an_answer_cell_kept_as_markdown_runs_in_the_public_checks_as_in_the_grade(tmp_path):
    """red-b16 X25-b16-1: nbgrader's DeduplicateIds clears the metadata of every copy of a grade id but the last, so
    the markdown note above stays markdown and never runs; the grade (program.py: 'an earlier copy of a known cell'
    runs only if it is code) agrees: test_exercise_count 0/1, NameError layer_count, 17/18. The public checks
    (cells.graded_as_code: solution and not grade, from the note's own copied metadata) run the note as code and
    pass exercise_count: they disagree with the grade. Measured on main 3dcacfe: public 1/1 passed, grade 17/18."""
    path = write_notebook(_first_try_kept_above_as_a_note(solution_notebook()), tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    assert scores(report)["test_exercise_count"] == 0, scores(report)
    public = notebook_checks.run_part("exercise_count", path)
    assert not all(ok for ok, _ in public.values()), public


def test_the_public_checks_never_say_the_grade_runs_a_markdown_copy_it_drops(tmp_path):
    """red-b16 X25-b16-1 (message): cell sgd's original kept above as a markdown note, the pasted copy below (the
    graded one) with step() moving up the gradient. The grade runs the lower copy only (13.38/18, 'up the gradient').
    Every failing public step message starts 'cell sgd is a markdown cell in your notebook, and the grade runs it as
    code, as the release has it: make it a code cell again': the grade drops that copy (nbgrader's DeduplicateIds
    clears its metadata), so the note names code the grade never runs. Measured on main 3dcacfe: 3 of 3 failing
    public step messages start with it."""
    notebook = solution_notebook()
    cells = notebook.cells
    at = _cell_at(cells, "sgd")
    final = copy.deepcopy(cells[at])
    final.source = final.source.replace("p.data -= self.lr * p.grad", "p.data += self.lr * p.grad")
    cells[at] = _as_markdown(cells[at])
    cells.insert(at + 1, final)
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    public = [m for ok, m in notebook_checks.run_part("step", path).values() if not ok]
    assert public and all("up the gradient" in m for m in public), public
    assert not [m for m in public if "the grade runs it as code" in m], public


def test_a_markdown_answer_cell_made_code_runs_in_the_public_checks_as_in_the_grade(tmp_path):
    """red-b16 X25-b16-2: answer_zeroing (a written answer: solution and grade, markdown in the release) made a code
    cell holding code. nbgrader's OverwriteCells gives it back its released type, markdown, and the grade
    (program.py: a known cell that is not code in the release is only an anchor) never runs it: 18/18. The public
    checks (cells.graded_as_code: cell_type == 'code') run it: here it rebinds SGD and every public step check fails,
    5 of 5. Measured on main 3dcacfe: grade 18/18, public step 0/5 passed."""
    notebook = solution_notebook()
    cell = notebook.cells[_cell_at(notebook.cells, "answer_zeroing")]
    cell.cell_type, cell.outputs, cell.execution_count = "code", [], None
    cell.source = "# backward() adds to .grad; a stand-in optimizer to try it out\nclass SGD:\n    pass\n"
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    assert scores(report) == FULL, scores(report)
    public = [m for ok, m in notebook_checks.run_part("step", path).values() if not ok]
    assert not public, public


def test_a_given_cell_made_markdown_and_edited_runs_its_released_copy_in_the_public_checks_as_in_the_grade(tmp_path):
    """red-b16 X25-b16-3: the given cell parameter made markdown and a note typed into it. nbgrader's OverwriteCells
    gives a locked cell back its released type and text, and so does the grade: 18/18. The public checks skip it
    (cells.graded_as_code: the checksum as code no longer matches, and it is not code), so Parameter is never
    defined and every public check fails, each blaming cell module ("the notebook defines no Linear (because cell
    module: Module raised NameError: name 'Parameter' is not defined"), with no note of the edited given cell
    (edited_given's note is only made for cells graded_as_code). Measured on main 3dcacfe: grade 18/18, public
    forward 0/5, parameters 0/8, step 0/5 passed."""
    notebook = solution_notebook()
    at = _cell_at(notebook.cells, "parameter")
    notebook.cells[at] = _as_markdown(notebook.cells[at], notebook.cells[at].source + "\n# Parameter: what SGD moves\n")
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    assert scores(report) == FULL, scores(report)
    public = [m for ok, m in notebook_checks.run_part("forward", path).values() if not ok]
    assert not public, public


def test_a_deleted_given_cell_is_named_by_the_public_checks_not_blamed_on_the_answer_below_it(tmp_path):
    """red-b16 X25-b16-3 (deleted): the given cell parameter deleted (dd in Jupyter). The grade stands the released
    copy in for it (program.py, nbgrader's missing cells): 18/18. The public checks run the notebook as saved, and
    every forward check fails with "the notebook defines no Linear (because cell module: Module raised NameError:
    name 'Parameter' is not defined (line 4 of its cell))": it names cell module, the student's right answer, and
    not the deleted given cell, and disagrees with the grade on every part. Measured on main 3dcacfe: grade 18/18,
    public forward 0/5 passed."""
    notebook = solution_notebook()
    del notebook.cells[_cell_at(notebook.cells, "parameter")]
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    assert scores(report) == FULL, scores(report)
    public = [m for ok, m in notebook_checks.run_part("forward", path).values() if not ok]
    assert not [m for m in public if "because cell module" in m], public


def test_a_deleted_given_cell_stands_where_the_grade_puts_it_when_a_test_cell_was_moved_in_the_public_checks(tmp_path):
    """red-c19 X28-c19-1: the given cell relu_sequential deleted, and the test cell test_forward (the code cell before
    it in the release) dragged up to just below imports. The grade stands the released copy in after the kept given
    and solution code cells before it (program.py _in_students_order: after linear; a test cell moved about moves no
    code): 18/18, parameters 3/3. The public checks (cells.graded_cells) stand it after the release's previous code
    cell of any kind, test cells too, so after test_forward, above cell module: ReLU raises NameError "name 'Module'
    is not defined", and 3 of 8 parameters checks fail, "the notebook defines no ReLU". Measured on main e604821."""
    notebook = solution_notebook()
    del notebook.cells[_cell_at(notebook.cells, "relu_sequential")]
    moved = notebook.cells.pop(_cell_at(notebook.cells, "test_forward"))
    notebook.cells.insert(_cell_at(notebook.cells, "imports") + 1, moved)
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    assert scores(report) == FULL, scores(report)
    public = [m for ok, m in notebook_checks.run_part("parameters", path).values() if not ok]
    assert not public, public


def _moved_below(grade_id: str, below: str):
    def move(cells):
        cells.insert(_cell_at(cells, below) + 1, cells.pop(_cell_at(cells, grade_id)))
    return move


def _added_below(grade_id: str | None):
    def add(cells):
        cells.insert(_cell_at(cells, grade_id) + 1 if grade_id else 0, new_code_cell("seen = True"))
    return add


@pytest.mark.parametrize("deleted, change", [
    ("relu_sequential", _moved_below("exercise_count", "module")),  # the cell after it moved above the one before
    ("relu_sequential", _moved_below("test_forward", "imports")),  # a test cell moved: no code a part runs moved
    ("parameter", _added_below("imports")),  # a cell of the student's right below the one before it
    ("imports", _added_below(None)),  # a cell of the student's above every known cell
], ids=["after-moved-above", "test-cell-moved", "added-below-the-one-before", "added-first"])
def test_the_public_checks_run_a_deleted_given_cells_released_copy_where_the_grade_does(deleted, change):
    """The public checks (cells.graded_cells) stand a deleted given cell's released copy in by the grade's rule
    (program.py _in_students_order), so both run the same code in the same order. On main ed5efb9 no case here
    agreed: cells.graded_cells put it right after the release's code cell before it, of any kind (a test cell moved
    above: red-c19 X28-c19-1), never right before the one after it where the student moved that one above the one
    before (the grade's other branch), and ahead of the student's cells right below the one before it (the grade
    runs those first)."""
    notebook = solution_notebook()
    del notebook.cells[_cell_at(notebook.cells, deleted)]
    change(notebook.cells)
    grade = [cell.name for cell in program_from_notebook(notebook, ASSIGNMENT.source, release_notebook())]
    public = [name for name, _ in cells.graded_cells(notebook.cells, notebook.metadata["release_cells"])[0]]
    assert deleted in public and public == grade, (public, grade)


def _tagged_demo(cells):
    """A cell of the student's own, tagged `demo` (Jupyter's tag editor), above demo_count_parameters."""
    cell = new_code_cell("Module.parameters = lambda self: []")
    cell.metadata["tags"] = ["demo"]
    cells.insert(_cell_at(cells, "demo_count_parameters"), cell)


def _earlier_copy_of(grade_id: str):
    """A copy of a known cell left above the original (the student pasted the original below, then edited this one)."""
    def copy_above(cells):
        cell = copy.deepcopy(cells[_cell_at(cells, grade_id)])
        cell.source = "Module.parameters = lambda self: []"
        cells.insert(_cell_at(cells, grade_id), cell)
    return copy_above


@pytest.mark.parametrize("change", [_tagged_demo, _earlier_copy_of("demo_count_parameters"),
                                    _earlier_copy_of("test_step")], ids=["tagged-demo", "demo-copy", "test-copy"])
def test_the_public_checks_run_every_cell_of_the_students_the_grade_runs(change):
    """red-b21 X30-b21-1: the grade (program.py program_from_notebook) runs every code cell the student added and
    every earlier copy of a known cell where it stands, whatever its metadata; the public checks (cells.graded_cells)
    skip such a cell when its own metadata makes it a demonstration (tag `demo`) or a test cell (skipped(cell) on the
    saved cell). A cell of the student's tagged demo, or an earlier copy of demo_count_parameters, that sets
    `Module.parameters = lambda self: []`: the grade gives 15.27/18 (test_lesson_numbers 0.27/3, "the Module in use is
    the one cell '17' defines again"), while every public check of parameters and lesson_numbers passes. Measured on
    main 6f288eb."""
    notebook = solution_notebook()
    change(notebook.cells)
    grade = [cell.name for cell in program_from_notebook(notebook, ASSIGNMENT.source, release_notebook())]
    public = [name for name, _ in cells.graded_cells(notebook.cells, notebook.metadata["release_cells"])[0]]
    assert public == grade, (public, grade)


def _wrong_parameters_by_run_cell(module_source: str) -> str:
    return "\n\nget_ipython().run_cell('Module.parameters = lambda self: []')\n"


def _wrong_module_by_run(module_source: str) -> str:
    start, stop = module_source.index("    def parameters"), module_source.index("    def __call__")
    return "\n" + _running_as_a_notebook(
        module_source[:start] + "    def parameters(self):\n        return []\n\n" + module_source[stop:])


@pytest.mark.parametrize("ending", [_wrong_parameters_by_run_cell, _wrong_module_by_run], ids=["run_cell", "run-notebook"])
def test_the_public_checks_name_the_cell_whose_run_cell_defines_a_class_again_as_the_grade_does(tmp_path, monkeypatch,
                                                                                                   ending):
    """red-b21 X30-b21-3: fix-runname compiles what the grade's run_cell runs as "<cell sgd, by run_cell>" and taught
    the public facts.defined_in to read that name, so the grade's note names cell sgd. The public checks run the cells
    with IPython's own shell (checks_shell), whose run_cell (and %run of a notebook, which runs each cell by it) compiles
    under IPython's own file names, which defined_in reads as no cell: the same notebook's public failures carry no
    note. Cell sgd ends with `get_ipython().run_cell('Module.parameters = lambda self: []')`: the grade says "the Module
    in use is the one cell sgd defines again ... remove that copy from cell sgd" (15.27/18); the public lesson_numbers
    failures say only "a 2-16-16-2 network has 354 parameters, parameters() gave 0". The same with cell sgd ending in
    a `%run helper_nb.ipynb` whose Module's parameters() returns [] (fix-runname's own case). Measured on main 6f288eb."""
    monkeypatch.chdir(tmp_path)  # where the %run variant writes helper_nb.ipynb
    notebook = solution_notebook()
    module = notebook.cells[_cell_at(notebook.cells, "module")].source
    notebook.cells[_cell_at(notebook.cells, "sgd")].source += ending(module)
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    assert "remove that copy from cell sgd" in json.dumps(failing_messages(report))
    public = [m for ok, m in notebook_checks.run_part("lesson_numbers", path).values() if not ok]
    assert public and all("remove that copy from cell sgd" in m for m in public), public


def test_a_checks_cell_in_jupyter_runs_again_a_cell_of_the_students_tagged_demo_as_the_grade_runs_it(tmp_path,
                                                                                                      monkeypatch):
    """fix-pubcells (X30-b21-1, the kernel's route): a test cell's check() runs again what the kernel ran but the
    demonstrations; which cells are demonstrations is the release's word (release_cells), never the saved cell's own
    tag, so a cell of the student's tagged `demo` runs, as the grade runs it, and the release's demo does not."""
    notebook = release_notebook()
    _tagged_demo(notebook.cells)
    monkeypatch.setattr(notebook_checks, "NOTEBOOK", write_notebook(notebook, tmp_path / NOTEBOOK))
    demo = notebook.cells[_cell_at(notebook.cells, "demo_count_parameters")].source
    ran = [source for _, source in notebook_checks._kernel_cells([demo, "Module.parameters = lambda self: []"])]
    assert ran == ["Module.parameters = lambda self: []"], ran


HIDDEN_RUNTIME_BINDINGS = {
    "str-subclass-key": ("class _Name(str):\n    pass\n\n\nclass _Wrap:\n{body}    del globals()['Module']\n"
                         "    globals()[_Name('Module')] = Module\n    raise StopIteration('x')\n"),
    "deleted-then-bound-in-builtins": (
        "import builtins as _builtins\n\n\nclass _Wrap:\n{body}    del globals()['Module']\n"
        "    _builtins.Module = Module\n    raise StopIteration('x')\n"),
    "bound-by-a-signal-handler-after-the-stop": (
        "import signal as _signal\n\n\nclass _Wrap:\n{body}\n    def _later(*_, module=Module):\n"
        "        globals()['Module'] = module\n\n"
        "    _signal.signal(_signal.SIGALRM, _later)\n    _signal.setitimer(_signal.ITIMER_REAL, 0.05)\n"
        "    raise StopIteration('x')\n"),
}


# (A thread's and a handler's forms raced before: the part grading cell module's own copy could pass in full before
# the late binding and lend that copy to Exercise 1, 16.36/18 about one run in three. The loader now stops at a cell
# that leaves a handler set, so the grade is the same on every run; and the filter starts no thread, so a thread's
# form binds nothing: its cell stops where it starts one, tests/test_sandbox.py.)
@pytest.mark.parametrize("wrapper", list(HIDDEN_RUNTIME_BINDINGS))
def test_a_stopped_cell_whose_run_time_binding_the_loader_does_not_see_is_not_read_as_binding_nothing(
        tmp_path, wrapper):
    """red-b22 X31-b22-1 and X31-b22-2, red-a23 X32-a23-1 (passes 31, 32): fix-bound reads
    a stopped cell as binding what its text above the stop binds plus cell_runner.rebound: the names of the namespace,
    keys exactly `str` only, that changed between the cell's start and its stop. Cell module (wrong parameters(), a
    right Module in an added cell above) that deletes Module and binds its wrong Module again under a key of a str
    subclass (which every later `Module` finds, the dict comparing by str's ==), or deletes it and binds the wrong one
    in builtins (a name deleted is no name rebound reports, and
    every later `Module` falls through to builtins), then raises, is read as binding no Module: the stub keeps the added
    cell's right Module, and Exercise 1, counted with the notebook's classes, scores 1/1. Jupyter's later cells meet the
    wrong Module: test_exercise_count 0/1 (nbclient, allow_errors: parameters, exercise_count and lesson_numbers fail).
    Measured on main: str-subclass-key 13.59/18, the builtins one 12.27/18 with Exercise 1 1/1; the same cell with no
    raise: 12.59."""
    notebook = _module_that_forges_its_stop("\n")
    module = notebook.cells[_cell_at(notebook.cells, "module")]
    module.source = HIDDEN_RUNTIME_BINDINGS[wrapper].format(body=_indented(module.source))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_exercise_count"] == 0, failing_messages(report)
    if "signal-handler" in wrapper:  # what the cell left running is named where its own part fails
        messages = failing_messages(report)["test_parameters"]
        assert messages and all(message.startswith("cell module left a ") for message in messages), messages


# What a stopped cell module leaves to bind its wrong Module (held in class _Wrap) after its stop, before the next cell
# runs (in Jupyter and in the loader's whole run alike), that left_pending does not see.
LEFT_TO_RUN_LATER = {
    "loop-task": ("import asyncio as _asyncio\n\n\nasync def _late():\n    for _ in range(3):\n"
                  "        await _asyncio.sleep(0)\n    globals()['Module'] = _Wrap.Module\n\n\n"
                  "_task = _asyncio.ensure_future(_late())\n"),
    "loop-call-later": ("import asyncio as _asyncio\n_asyncio.get_running_loop().call_later(0.001, lambda: "
                        "globals().__setitem__('Module', _Wrap.Module))\n"),
    "audit-hook": ("import sys as _sys\n_here = _sys._getframe().f_code.co_filename\n\n\n"
                   "def _hook(event, args, done=[]):\n    if event == 'exec' and not done and "
                   "getattr(args[0], 'co_filename', _here) != _here:\n        done.append(1)\n"
                   "        globals()['Module'] = _Wrap.Module\n\n\n_sys.addaudithook(_hook)\n"),
    "settrace": ("import sys as _sys\n_here = _sys._getframe().f_code.co_filename\n\n\ndef _trace(frame, event, arg):\n"
                 "    if frame.f_code.co_name == '<module>' and frame.f_code.co_filename != _here and "
                 "'Module' in frame.f_globals:\n        _sys.settrace(None)\n"
                 "        frame.f_globals['Module'] = _Wrap.Module\n\n\n_sys.settrace(_trace)\n"),
    "builtins-import": ("import builtins as _builtins\n_import = _builtins.__import__\n\n\n"
                        "def _late_import(*args, **kwargs):\n    _builtins.__import__ = _import\n"
                        "    globals()['Module'] = _Wrap.Module\n    return _import(*args, **kwargs)\n\n\n"
                        "_builtins.__import__ = _late_import\n"),
    "numpy-random-replaced": ("import numpy as _np\n\n\nclass _Trap:\n    def __getattr__(self, name):\n"
                              "        _np.random = _REAL\n        globals()['Module'] = _Wrap.Module\n"
                              "        return getattr(_REAL, name)\n\n\n_REAL = _np.random\n_np.random = _Trap()\n"),
    "loop-task-factory": ("import asyncio as _asyncio\n\n\ndef _factory(loop, coro, **kwargs):\n"
                          "    loop.set_task_factory(None)\n    globals()['Module'] = _Wrap.Module\n"
                          "    return _asyncio.Task(coro, loop=loop, **kwargs)\n\n\n"
                          "_asyncio.get_running_loop().set_task_factory(_factory)\n"),
}


@pytest.mark.parametrize("left", list(LEFT_TO_RUN_LATER))
def test_a_stopped_cell_that_leaves_a_loop_callback_or_an_audit_hook_binding_module_is_not_read_as_binding_nothing(
        tmp_path, left):
    """red-a24 X33-a24-1 / X33-a24-2 (pass 33): cell module (wrong parameters(), a right Module in an added cell above)
    holds its wrong Module in a class `_Wrap`, leaves code that binds it as Module later, then raises. The code is a
    task or a call_later callback on the notebook's event loop (it runs as the next cell starts on the loop, and in
    Jupyter on the kernel's loop right after the cell), or an audit hook (it fires on the next cell's `exec`, in both),
    a trace function (sys.settrace: the next cell's frame) or builtins.__import__ (the next import), in both.
    left_pending sees threads, signal handlers and timers only, so the loader reads the cell as binding none of
    Module: the stub keeps the added cell's right Module, and Exercise 1, counted with the notebook's classes, scores
    1/1 (13.59/18, the same in 3 of 3 runs). Jupyter (nbclient, allow_errors): parameters, exercise_count and
    lesson_numbers fail, Exercise 1 0/1. red-a25 X34-a25-4 (pass 34): the same with numpy.random replaced by an object
    whose first lookup (the next cell's np.random.default_rng) binds Module, or with the loop's task factory (the next
    cell's task): left_hooks compared a list of known hooks, and a module's entry is any (13.59, Exercise 1 1/1)."""
    notebook = _module_that_forges_its_stop("\n")
    module = notebook.cells[_cell_at(notebook.cells, "module")]
    module.source = (f"class _Wrap:\n{_indented(module.source)}\n\n{LEFT_TO_RUN_LATER[left]}"
                     "raise StopIteration('x')\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_exercise_count"] == 0, failing_messages(report)


def test_a_stopped_cell_that_puts_a_module_of_its_own_under_a_new_key_in_numpy_is_not_read_as_binding_nothing(
        tmp_path):
    """red-a26 X35-a26-5 (pass 35): X34-a25-4 (numpy.random replaced by an object whose lookup binds Module) with the
    replacement a real ModuleType whose module-level __getattr__ (PEP 562) binds the wrong Module at the first lookup
    (cell linear's annotation np.random.Generator) and puts numpy.random back, stored under a new key object: the cell
    deletes numpy's 'random' and sets vars(numpy)[''.join(['ran', 'dom'])]. left_hooks matches entries by the key's
    id and read a key it had not seen holding a module as a submodule an import bound, so it saw no change: the cell
    was read as binding no Module, the stub kept the added cell's right Module, and Exercise 1, counted with the
    notebook's classes, scored 1/1 (13.59/18). Jupyter (nbclient, allow_errors): parameters, exercise_count and
    lesson_numbers fail. left_hooks now compares entries by identity and in order: the deleted key moves the rest."""
    notebook = _module_that_forges_its_stop("\n")
    module = notebook.cells[_cell_at(notebook.cells, "module")]
    module.source = (f"class _Wrap:\n{_indented(module.source)}\n\nimport numpy as _np\nimport types as _types\n"
                     "_real = _np.random\n_fake = _types.ModuleType('numpy.random')\n\n\ndef _lookup(name):\n"
                     "    del _np.random\n    _np.random = _real\n    globals()['Module'] = _Wrap.Module\n"
                     "    return getattr(_real, name)\n\n\n_fake.__getattr__ = _lookup\ndel _np.random\n"
                     "vars(_np)[''.join(['ran', 'dom'])] = _fake\nraise StopIteration('x')\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_exercise_count"] == 0, failing_messages(report)


def test_an_honest_cell_whose_library_starts_its_own_helper_process_is_not_failed_for_leaving_it(tmp_path):
    """red-a26 X35-a26-8 (pass 35): a cell the student added below the imports creates a
    multiprocessing.shared_memory.SharedMemory, writes a byte, closes and unlinks it: the cell starts no process of its
    own, but Python registers the segment with multiprocessing's resource tracker, a helper process it starts once and
    keeps for the program's life (so does a cell that starts a spawn-context Process and joins it). A loader that ended
    the load at a cell leaving a process running failed every check: 0/18 (the reference itself with the cell), where
    Jupyter (nbclient, allow_errors) passes every test cell."""
    notebook = solution_notebook()
    notebook.cells.insert(_cell_at(notebook.cells, "imports") + 1, new_code_cell(
        "from multiprocessing import shared_memory\nshm = shared_memory.SharedMemory(create=True, size=16)\n"
        "shm.buf[0] = 7\nshm.close()\nshm.unlink()\n"))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert sum(scores(report).values()) == 18, failing_messages(report)


def test_numpys_error_state_a_cell_sets_holds_in_the_checks_as_in_jupyter(tmp_path):
    """red-a26 X35-a26-13 (pass 35): the reference with a cell added below cell imports that runs
    np.seterr(all='raise') and a line in Linear.forward that overflows (np.float64(1e308) * 10, unused): numpy 2 keeps
    its error state in a context variable, which the loader's cells (each a task, in a copy of the context) and its
    checks (its own context) never saw set: 18/18. Jupyter (nbclient, allow_errors) raises FloatingPointError in
    forward(): test_forward fails (5 of 5 checks) and test_lesson_numbers (5 of 6). With the cells and checks in one
    context: 13.55/18, test_forward 0/2, test_lesson_numbers 0.55/3. (np.seterr in cell imports itself is not graded:
    a locked cell, graded as released.)"""
    notebook = solution_notebook()
    notebook.cells.insert(_cell_at(notebook.cells, "imports") + 1, new_code_cell("np.seterr(all='raise')\n"))
    linear = notebook.cells[_cell_at(notebook.cells, "linear")]
    forward = "        return x @ self.weight.T + self.bias"
    linear.source = linear.source.replace(forward, "        _scale = np.float64(1e308) * 10\n" + forward)
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_forward"] == 0, failing_messages(report)


def test_a_displayhook_cell_module_sets_does_not_mend_module_in_the_cells_below(tmp_path):
    """red-a24 X33-a24-3 (pass 33): cell module with a wrong parameters() (its own Parameters only) ends by setting
    sys.displayhook to a function that puts a right parameters() on Module; a cell added below it prints a line. In
    Jupyter IPython's DisplayTrap puts its own hook back when cell module ends, so the student's is never called
    again: test_parameters and test_lesson_numbers fail (nbclient, allow_errors). The loader keeps the student's hook,
    so the added cell's print(...) (its None goes to sys.displayhook) mends Module: 18/18 (3 of 3 runs); without the
    added cell 13.59."""
    notebook = solution_notebook()
    cells = notebook.cells
    module, _, method = _wrong_parameters(notebook)
    module.source += ("\n\nclass _Right:\n" + method + "\n\nimport sys as _sys\n"
                      "_sys.displayhook = lambda v, _p=_Right.parameters: setattr(Module, 'parameters', _p)\n")
    cells.insert(_cell_at(cells, "module") + 1, new_code_cell("print('checked')"))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_parameters"] < 3, failing_messages(report)


def test_a_task_cell_module_leaves_on_the_loop_does_not_mend_module_in_the_check_children(tmp_path):
    """red-a24 X33-a24-4 (pass 33): cell module with a wrong parameters() (its own Parameters only), run whole, leaves a
    task on the notebook's loop that loops on `await asyncio.sleep(0)` and whose `finally:` puts a right parameters()
    on Module. Jupyter's kernel loop keeps the task running, the `finally` never runs: test_parameters and
    test_lesson_numbers fail (nbclient, allow_errors: 2 of 6 lesson_numbers checks fail). Each check child of the part
    that grades the whole notebook closes the loop (close_loop), which frees the task and runs its `finally` before
    the probe: test_lesson_numbers 3/3, 15.5/18 (3 of 3 runs; 13.59 without the task)."""
    notebook = solution_notebook()
    module, _, method = _wrong_parameters(notebook)
    module.source += ("\n\nclass _Right:\n" + method + "\n\nimport asyncio as _asyncio\n\n\nasync def _spin():\n"
                      "    try:\n        while True:\n            await _asyncio.sleep(0)\n    finally:\n"
                      "        Module.parameters = _Right.parameters\n\n\n_asyncio.ensure_future(_spin());\n")
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_lesson_numbers"] < 3, failing_messages(report)


def test_an_object_a_stopped_cells_traceback_holds_does_not_mend_module_before_the_checks(tmp_path):
    """red-a24 X33-a24-5 (pass 33): cell module with a wrong parameters() (its own Parameters only); a cell added below
    it calls a function whose local holds an object whose __del__ puts a right parameters() on Module, and which
    raises. Jupyter keeps the error's traceback (sys.last_traceback / last_exc) and the frame's locals with it: the
    __del__ has not run when the test cells run, test_parameters and test_lesson_numbers fail (nbclient, allow_errors).
    The loader drops the last stopped cell's exception when _load returns, so the __del__ mends Module after the cells
    and before every probe: 18/18 (3 of 3 runs)."""
    notebook = solution_notebook()
    cells = notebook.cells
    _, _, method = _wrong_parameters(notebook)
    cells.insert(_cell_at(cells, "module") + 1, new_code_cell(
        "class _Right:\n" + method + "\n\nclass _Mend:\n    def __del__(self):\n"
        "        Module.parameters = _Right.parameters\n\n\ndef _fail():\n    mend = _Mend()\n"
        "    raise ValueError('not yet')\n\n\n_fail()\n"))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert scores(report)["test_parameters"] < 3, failing_messages(report)


@pytest.mark.parametrize("cell", ["a-demo-edited-to-the-same-text", "a-comment-naming-notebook-checks"])
def test_a_checks_cell_in_jupyter_runs_again_every_cell_of_the_students_the_grade_runs(tmp_path, monkeypatch, cell):
    """red-b22 X31-b22-3 (pass 31): fix-pubcells' kernel route (notebook_checks._kernel_cells) drops a cell of the
    kernel's history by its text: any text equal to that of the saved last copy of a release test or demo
    (cells.left_out), and any text holding the word "notebook_checks". fix-pubcells left the first as "an unedited
    pasted copy of a demo runs the lesson's own code", but the saved demo's text is the student's to edit: a demo cell
    edited to the text of a cell the student added (`Module.parameters = lambda self: []`) drops that added cell from
    check()'s run, though the grade runs it (and leaves the demo out by the release's kind); so does a comment that
    names notebook_checks in an added cell. Where check() runs the history again (a kernel whose multiprocessing start
    method is not fork: macOS, Windows), the public check in Jupyter then passes where the grade fails (or fails where
    a mending cell makes the grade pass). (On Linux's fork the child takes the kernel's names, and the two agree.)"""
    added = "Module.parameters = lambda self: []"
    notebook = release_notebook()
    demo = notebook.cells[_cell_at(notebook.cells, "demo_count_parameters")]
    if cell == "a-demo-edited-to-the-same-text":
        demo.source = added
    else:
        added += "  # a cell of mine, not one of notebook_checks'"
    notebook.cells.insert(_cell_at(notebook.cells, "demo_count_parameters"), new_code_cell(added))
    monkeypatch.setattr(notebook_checks, "NOTEBOOK", write_notebook(notebook, tmp_path / NOTEBOOK))
    ran = [source for _, source in notebook_checks._kernel_cells([added, demo.source])]
    assert added in ran, ran


def test_a_checks_cell_in_jupyter_drops_every_run_of_an_unedited_demo_and_of_a_test_cell(tmp_path, monkeypatch):
    """fix-kernelcells (pass 31): counting left-out cells drops one run each only where a cell the grade runs holds the
    same text; a demo run three times (no such cell) runs again in check()'s child not at all (its time counts in
    LOAD_SECONDS), nor does any run of a test cell as released (notebook_checks.CALL: it calls check); a cell that
    only names notebook_checks runs."""
    notebook = release_notebook()
    monkeypatch.setattr(notebook_checks, "NOTEBOOK", write_notebook(notebook, tmp_path / NOTEBOOK))
    demo = notebook.cells[_cell_at(notebook.cells, "demo_count_parameters")].source
    test = notebook.cells[_cell_at(notebook.cells, "test_parameters")].source
    mine = "import notebook_checks  # mine"
    ran = [source for _, source in notebook_checks._kernel_cells([demo, test, demo, mine, test, demo])]
    assert ran == [mine], ran


def test_a_right_notebook_with_a_tqdm_progress_bar_gets_full_marks(tmp_path):
    """red-a25 X34-a25-3 (pass 34): the reference notebook with one honest cell added above cell module,
    `from tqdm import tqdm` and `for _ in tqdm(range(3)): pass` (tqdm is in the course's requirements.txt). tqdm's
    first bar starts its monitor thread, which lives on (a daemon): the loader reads the cell as leaving a thread
    running and ends the load there, so every check fails with "cell 6 left a thread running when it ended...":
    0/18 (3 of 3 runs), and the messages budget runs out on the same sentence. nbclient (allow_errors) runs the
    notebook: every check cell prints PASS (36), none FAIL."""
    notebook = solution_notebook()
    notebook.cells.insert(_cell_at(notebook.cells, "module"),
                          new_code_cell("from tqdm import tqdm\n\nfor _ in tqdm(range(3)):\n    pass\n"))
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert sum(scores(report).values()) == 18, failing_messages(report)


# A cell of the student's own that trains for longer, 4 s of CPU time (a busy loop stands for the training: the same
# CPU time on any machine), binding no name any check reads.
TRAIN_LONGER = ("import time\n\n_start = time.process_time()\nwhile time.process_time() - _start < 4:  # train longer\n"
                "    pass\n")


# A cell of the student's own that prints the loss at each of 50,000 steps (1.3 MB of text, over the grade's output_kb)
PRINT_EVERY_STEP = ("for step in range(50_000):  # the loss at every step\n"
                    "    print(f'step {step:5d}: loss {0.5 / (step + 1):.6f}')\n")


@pytest.mark.parametrize("cell", [TRAIN_LONGER, PRINT_EVERY_STEP], ids=["over-its-cpu-time", "past-the-output-limit"])
def test_a_cell_of_the_students_over_a_limit_is_stopped_alone_by_the_grade_as_by_the_public_checks(tmp_path, cell):
    """red-c26 X35-c26-2, X35-c26-15 (pass 35): the reference notebook with a cell of the student's added last that
    trains longer (TRAIN_LONGER, 4 s of CPU time) or prints the loss at every step (PRINT_EVERY_STEP, 1.3 MB). The
    grade ended the load of every part at that cell (an added cell runs in every part): 0/18, every message "cell 52
    did not finish within 3 s of CPU time (an infinite loop?)" or "cell 52 printed more than the output limit
    allows". The public checks stop a cell at 3 s "as the grade stops it" (README), and have no output limit: `pytest`
    passed 36 of 36, and in Jupyter (nbclient, allow_errors) every test cell printed PASS. A student who ran every check
    submitted a right notebook that scored nothing. fix-limits: the loader stops only that cell, where it runs, and the
    cells below run (child._run_limited): 18/18, and the public checks pass, as they did."""
    notebook = solution_notebook()
    notebook.cells.append(new_code_cell(cell))
    path = write_notebook(notebook, tmp_path / NOTEBOOK)
    report, _ = grade_json(path)
    assert sum(scores(report).values()) == 18, failing_messages(report)
    public = {part: [m for ok, m in notebook_checks.run_part(part, path).values() if not ok]
              for part in ("forward", "lesson_numbers")}
    assert not any(public.values()), public


def test_an_exercise_cell_over_the_cpu_limit_loses_only_what_it_did_not_bind(tmp_path):
    """fix-limits (red-c26 X35-c26-2): Exercise 1's cell trains for 4 s of CPU time before it assigns the right count.
    The loader stops the cell where it runs at 3 s (as the public checks stop it) and the cells below run: 17/18, only
    exercise_count lost, naming the cell's stop (the session had ended the load of every part that runs the cell:
    14/18, lesson_numbers 0/3 too, while `pytest -m lesson_numbers` passed)."""
    notebook = solution_notebook()
    cell = notebook.cells[_cell_at(notebook.cells, "exercise_count")]
    cell.source = TRAIN_LONGER + cell.source
    report, _ = grade_json(write_notebook(notebook, tmp_path / NOTEBOOK))
    assert {grade_id: score for grade_id, score in scores(report).items() if score < FULL[grade_id]} == {
        "test_exercise_count": 0}, failing_messages(report)
    assert failing_messages(report)["test_exercise_count"] == [
        "the notebook defines no count_64_32_10: assign your count to it in the exercise cell (because cell "
        "exercise_count: did not finish within 3 s of CPU time (an infinite loop?))"]
