"""grading.ClassGrading: the prepared class, handed to nbgrader in each pass's resources, and each process's own
warm Grader of it. The Grader and prepare_class are stand-ins here (no sandbox starts): what is checked is
who makes, finds and closes what. And cpu_bound, which a feedback process writes its pages with, and a grading
process grades its students with: each item within a bound of CPU time, in a child that goes on from item to item;
a class graded for real, one student's autograde slowed on purpose, is graded but for that student."""
from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets.config import Config

import conftest
from autograder import grading
from autograder.assignment import find_assignment
from autograder.checks.suites import PreparedClass
from autograder.classroom.cpu_bound import each_within
from autograder.classroom.grade_class import grade_class
from autograder.classroom.pool import run_pool
from autograder.classroom.student_autograde import StagedAutograde
from autograder.grading import ClassGrading
from autograder.nbgrader_glue.exporters import ValidateOnceExporter
from autograder.nbgrader_glue.preprocessors import run_hidden_suites
from autograder.nbgrader_glue.preprocessors.run_hidden_suites import GRADING_RESOURCE, RunHiddenSuites
from autograder.report import Report
from autograder.settings import GraderSettings, load_config
from conftest import ASSIGNMENT, NOTEBOOK, ROOT, course_copy, solution_notebook, within, write_notebook


class FakeGrader:
    """Records what is graded and whether it was closed, in the process that made it."""

    def __init__(self, prepared, student_box=None) -> None:
        self.pid, self.graded, self.closed = os.getpid(), [], False

    def grade(self, submission) -> None:
        self.graded.append(submission.key)

    def close(self) -> None:
        self.closed = True


def prepared() -> PreparedClass:
    return PreparedClass(ASSIGNMENT, GraderSettings(config=load_config(ROOT)), [], {}, str)


def test_each_process_grades_with_a_grader_of_its_own_and_closes_only_its_own(monkeypatch):
    monkeypatch.setattr(grading, "Grader", FakeGrader)
    class_grading = ClassGrading(prepared())
    mine = class_grading.grader()
    assert class_grading.grader() is mine  # warm: one per process
    pid = os.fork()
    if pid == 0:  # as a process of the pool: its own Grader; closing it leaves the parent's alone
        ok = class_grading.grader() is not mine and class_grading.grader().pid == os.getpid()
        theirs = class_grading.grader()
        class_grading.close()
        os._exit(0 if ok and theirs.closed and not mine.closed else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert class_grading.grader() is mine and not mine.closed
    class_grading.close()
    assert mine.closed and class_grading.grader() is not mine  # closed: a new one if asked again
    class_grading.close()


def test_the_class_crosses_nbconverts_copies_of_the_resources_as_itself():
    class_grading = ClassGrading(prepared())
    resources = {GRADING_RESOURCE: class_grading, "nbgrader": {"student": "ada"}}
    copied = copy.deepcopy(resources)
    assert copied[GRADING_RESOURCE] is class_grading and copied["nbgrader"] is not resources["nbgrader"]


class RecordingGrading(ClassGrading):
    """A ClassGrading that records the notebooks it is handed, and its closings, instead of grading in a sandbox."""

    def __init__(self, prepared_class=None) -> None:
        super().__init__(prepared())
        self.graded: list[str] = []
        self.closed = 0

    def grade_one(self, submission) -> Report:
        self.graded.append(submission.key)
        return Report.from_submission(ASSIGNMENT.grade_cells, submission)

    def close(self) -> None:
        self.closed += 1


def pass_resources(tmp_path, student: str, class_grading=None) -> tuple[Config, dict]:
    """The configuration and first resources of StagedAutograde's pass over `student`'s staged notebook."""
    config = Config({"CourseDirectory": {"root": str(ROOT), "submitted_directory": str(tmp_path / "staged"),
                                         "autograded_directory": str(tmp_path / "autograded")}})
    converter = StagedAutograde(coursedir=CourseDirectory(config=config), config=config)
    converter.grading = class_grading
    notebook = tmp_path / "staged" / student / ASSIGNMENT.name / NOTEBOOK
    return config, converter.init_single_notebook_resources(str(notebook))


def test_the_converter_hands_the_prepared_class_to_run_hidden_suites(tmp_path, monkeypatch):
    monkeypatch.setattr(run_hidden_suites, "prepare_class", lambda *args: pytest.fail("the class was prepared again"))
    handed = RecordingGrading()
    config, resources = pass_resources(tmp_path, "ada", handed)
    assert resources[GRADING_RESOURCE] is handed
    RunHiddenSuites(config=config).preprocess(solution_notebook(), copy.deepcopy(resources))
    assert handed.graded == [f"ada/{Path(NOTEBOOK).stem}"] and handed.closed == 0  # the pool's process closes it
    assert (tmp_path / "autograded" / "ada" / ASSIGNMENT.name / "report.json").is_file()


def test_nbgrader_on_its_own_prepares_the_class_once_for_its_notebooks(tmp_path, monkeypatch):
    """No class in the resources (`nbgrader autograde`, the formgrader's button): the class is prepared on the run's
    first notebook and every later one is graded with it, though nbgrader makes the preprocessor again for each;
    the sandboxes close after each notebook."""
    made: list[RecordingGrading] = []

    def prepare(assignment, settings):
        assert assignment == ASSIGNMENT and isinstance(settings, GraderSettings)
        return "prepared"

    def recording(prepared_class):
        made.append(RecordingGrading(prepared_class))
        return made[-1]

    monkeypatch.setattr(run_hidden_suites, "prepare_class", prepare)
    monkeypatch.setattr(run_hidden_suites, "ClassGrading", recording)
    exporter = None
    for student in ("ada", "alan"):
        config, resources = pass_resources(tmp_path, student)
        assert resources[GRADING_RESOURCE] is None
        exporter = exporter or ValidateOnceExporter(config=config)  # one for the run, as nbgrader's converter makes
        RunHiddenSuites(parent=exporter).preprocess(solution_notebook(), resources)  # one a notebook, as nbgrader
    assert len(made) == 1 and [key.split("/")[0] for key in made[0].graded] == ["ada", "alan"]
    assert made[0].closed == 2  # its sandboxes, after each notebook: nothing else would close them


def test_an_item_past_its_cpu_bound_is_stopped_alone_and_the_next_goes_on(tmp_path):
    """A page that never ends (here, work that loops) is stopped at its bound of CPU time; the items before it were
    done in the same child (what one page warms serves the next), those after it in a new one; work that raised
    is said."""

    def work(item: str) -> None:
        if item == "loops":
            while True:
                pass
        if item == "raises":
            raise ValueError(item)
        (tmp_path / item).write_text(str(os.getpid()))

    with within(30):
        stopped, succeeded = each_within(["first", "second", "loops", "raises", "last"], work, 0.5)
    assert stopped == ["loops"] and not succeeded
    done = {path.name: path.read_text() for path in tmp_path.iterdir()}
    assert sorted(done) == ["first", "last", "second"]
    assert done["first"] == done["second"] != done["last"] and str(os.getpid()) not in done.values()
    assert each_within(["first", "second"], work, 0.5) == ([], True)


def test_an_items_cpu_time_is_the_childs_own_not_its_childrens(tmp_path):
    """A grading child's sandboxes have limits of their own, and a worker it reaps brings all of its CPU time in at
    once: what processes of the child's own spent is not the item's."""

    def work(item: str) -> None:
        subprocess.run([sys.executable, "-c", "import time\nuntil = time.process_time() + 1.5\n"
                        "while time.process_time() < until: pass"], check=True)
        time.sleep(1.5)  # using no CPU time: the parent reads the child's once more meanwhile
        (tmp_path / item).touch()

    with within(30):
        assert each_within(["starts a process"], work, 0.5) == ([], True)
    assert (tmp_path / "starts a process").exists()


def busy(seconds: float) -> None:
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass


def test_a_pool_item_past_its_cpu_bound_answers_for_itself_and_the_process_goes_on(tmp_path):
    """run_pool with a bound (a grading process): the item that loops is stopped and answered for as too slow, the
    next is taken by a new child, and `finish`, once the items run out, is bounded by nothing (it writes pages, each
    within a bound of its own)."""

    def work(item: str) -> str:
        if item == "loops":
            while True:
                pass
        return f"{item} done"

    def finish() -> None:
        busy(1.0)
        (tmp_path / f"finished-{os.getpid()}").touch()

    with within(30):
        answers = sorted(run_pool(["first", "loops", "last"], work, 1, None, finish, 0.3, lambda item: f"{item} too slow"))
    assert answers == [(0, "first done"), (1, "loops too slow"), (2, "last done")]
    assert len(list(tmp_path.iterdir())) == 1, "finish runs once, in the child that took the last item"


SLOW_SECONDS = 10.0  # CPU seconds: past the test's bound of 3 s, and ending (so that without a bound the test fails, not hangs)


class SlowStep(NbGraderPreprocessor):
    """A step of nbgrader's autograde that spends SLOW_SECONDS of CPU time on grace's notebook (a slow path of nbgrader
    or nbformat that nobody has found yet), then leaves a mark beside the course that it ended."""

    def preprocess(self, nb, resources):
        if resources["nbgrader"]["student"] == "grace":
            busy(SLOW_SECONDS)
            (Path.cwd().parent / "slow-step-ended").touch()  # the test's folder: the course is its working one
        return nb, resources


def test_an_autograde_past_its_cpu_bound_stops_that_student_alone(tmp_path, monkeypatch, capsys):
    """c.GraderSettings.autograde_seconds bounds nbgrader's autograde of each student in CPU time: grace's, past it,
    is stopped there (the slow step never ends) and she is not graded, with that reason; ada and hopper, before and
    after her in the one grading process, are graded."""
    course = course_copy(tmp_path / "course")
    for student in ("ada", "grace", "hopper"):
        write_notebook(solution_notebook(), course / "submitted" / student / ASSIGNMENT.name / NOTEBOOK)
    config = load_config(course)
    config.GraderSettings.autograde_seconds = 3.0
    steps = config.Autograde.autograde_preprocessors
    config.Autograde.autograde_preprocessors = [steps[0], SlowStep, *steps[1:]]  # after the checks ran in the sandbox
    monkeypatch.chdir(course)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    with within(300):
        assert grade_class(find_assignment(course, ASSIGNMENT.name), GraderSettings(config=config, jobs=1)) == 0
    reason = "nbgrader's autograde of it took more than 3 s of CPU time (c.GraderSettings.autograde_seconds)"
    assert f"Not graded: grace: {reason}" in capsys.readouterr().out
    assert not (tmp_path / "slow-step-ended").exists(), "grace's autograde was not stopped at its bound"
    reports = {s: Report.load(course / "autograded" / s / ASSIGNMENT.name / "report.json") for s in ("ada", "grace", "hopper")}
    assert reports["grace"].error == reason and not reports["grace"].grader_fault
    assert all(not reports[s].error and reports[s].parts for s in ("ada", "hopper"))


class FailsThenSlow(NbGraderPreprocessor):
    """A step of nbgrader's autograde that fails on grace's notebook the first time (the grader's own failure, which
    make grade tries once more) and is slow the second (SlowStep's SLOW_SECONDS)."""

    def preprocess(self, nb, resources):
        if resources["nbgrader"]["student"] == "grace":
            tried = Path.cwd().parent / "failed-once"
            if not tried.exists():
                tried.touch()
                raise KeyError("something no one foresaw")
            busy(SLOW_SECONDS)
            (Path.cwd().parent / "slow-step-ended").touch()
        return nb, resources


def test_a_student_tried_once_more_is_tried_within_the_same_bound(tmp_path, monkeypatch, capsys):
    """A student whose autograde failed for the grader's reason is tried once more, alone: within autograde_seconds
    too, never unbounded in make grade's own process."""
    course = course_copy(tmp_path / "course")
    for student in ("ada", "grace"):
        write_notebook(solution_notebook(), course / "submitted" / student / ASSIGNMENT.name / NOTEBOOK)
    config = load_config(course)
    config.GraderSettings.autograde_seconds = 3.0
    steps = config.Autograde.autograde_preprocessors
    config.Autograde.autograde_preprocessors = [steps[0], FailsThenSlow, *steps[1:]]
    monkeypatch.chdir(course)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    with within(300):
        grade_class(find_assignment(course, ASSIGNMENT.name), GraderSettings(config=config, jobs=1))
    assert (tmp_path / "failed-once").exists(), "grace's first autograde did not fail as the test meant"
    assert not (tmp_path / "slow-step-ended").exists(), "grace's second autograde was not stopped at its bound"
    reason = "nbgrader's autograde of it took more than 3 s of CPU time (c.GraderSettings.autograde_seconds)"
    assert f"Not graded: grace: {reason}" in capsys.readouterr().out
    assert not Report.load(course / "autograded" / "ada" / ASSIGNMENT.name / "report.json").error


def test_a_fresh_course_whose_download_gives_no_one_says_why_in_lines_never_a_traceback(tmp_path):
    """A fresh course (no gradebook yet) and an LMS download from which nobody is collected (a notebook no LMS
    pattern names): nbgrader never entered the assignment, and the summary still says what happened, and why."""
    course = course_copy(tmp_path / "course")
    archive = course / "downloaded" / ASSIGNMENT.name / "archive"
    archive.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK, archive / NOTEBOOK)
    run = conftest.grade_class(course, timeout=300)  # what make grade runs
    assert run.returncode == 0 and "Traceback" not in run.stdout + run.stderr, run.stderr[-2000:]
    assert "0 submissions, 0 graded; mean" in run.stdout and " of 18 autograded points" in run.stdout, run.stdout
    assert f"Not collected: {NOTEBOOK}: its name matches none of the LMS's patterns" in run.stdout, run.stdout
