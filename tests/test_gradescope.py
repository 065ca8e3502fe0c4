"""The Gradescope autograder (autograder/gradescope/, `make gradescope`), run as Gradescope would run it.

The zip is unpacked into a temporary folder laid out like /autograder (source/ the zip, submission/,
results/); setup.sh is not run (it installs a Python), the kit's venv python3 is first on PATH instead,
and AUTOGRADER_ROOT points run_autograder at the folder. Each run's results.json is checked field by
field against Gradescope's specification (gradescope-autograders.readthedocs.io, "Specifications").
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from catalogue_bugs import BUGS, LESSON
from catalogue_hostile import HOSTILE
from traitlets import TraitError

from autograder.classroom.mutate import apply
from autograder.gradescope.build import build_zip
from autograder.gradescope.run import results_json
from autograder.nbgrader_glue.preprocessors.rubric import _MARK_SCHEME, _SOLUTION
from autograder.outputs.redaction import hidden_code_lines
from autograder.report import CheckResult, PartResult, Report, Status
from autograder.settings import GraderSettings, load_config
from conftest import ASSIGNMENT, FULL, NOTEBOOK, ROOT, grade_json, release_notebook, solution_notebook, write_notebook

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
TOP_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
            "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
             "visibility", "extra_data"}
PARTS_TOTAL = sum(FULL.values())  # every autograded point


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    settings = GraderSettings(config=load_config(ROOT))
    return build_zip(ASSIGNMENT, settings, tmp_path_factory.mktemp("zip") / "gradescope.zip")


def unpacked(autograder_zip: Path) -> Path:
    """A folder laid out like /autograder, the zip unpacked into its source/."""
    home = Path(tempfile.mkdtemp(prefix="gradescope-"))
    home.chmod(0o755)  # the grading slot's uid must reach source/release and the kit's venv
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(home / "source")
    for name in ("setup.sh", "run_autograder"):  # zipfile drops the mode bits Gradescope's unzip keeps
        (home / "source" / name).chmod(0o755)
    return home


@pytest.fixture(scope="module")
def gradescope(autograder_zip):
    """A function that grades {file name: content} as Gradescope would and returns (results.json, run)."""
    home = unpacked(autograder_zip)
    yield grader_at(home)
    shutil.rmtree(home, ignore_errors=True)


def grader_at(home: Path):
    def run(files: dict[str, str | Path], **environ: str) -> tuple[dict, subprocess.CompletedProcess]:
        for folder in ("submission", "results"):
            shutil.rmtree(home / folder, ignore_errors=True)
            (home / folder).mkdir(mode=0o755)
        for name, content in files.items():  # a Path: a symbolic link to it, as a GitHub submission keeps one
            if isinstance(content, Path):
                (home / "submission" / name).symlink_to(content)
            else:
                (home / "submission" / name).write_text(content)
        env = {**os.environ, **environ, "AUTOGRADER_ROOT": str(home),
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        done = subprocess.run([str(home / "source" / "run_autograder")], cwd=home, env=env,
                              capture_output=True, text=True, timeout=120)
        results = home / "results" / "results.json"
        assert results.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
        return json.loads(results.read_text()), done

    return run


def notebook_text(nb: dict) -> str:
    return json.dumps(nb, indent=1) + "\n"


def check_spec(data: dict) -> dict[str, float]:
    """results.json as Gradescope's specification has it; returns each part's score."""
    assert set(data) <= TOP_KEYS, set(data) - TOP_KEYS
    assert isinstance(data["score"], (int, float)) and not isinstance(data["score"], bool)
    assert isinstance(data["execution_time"], int) and data["execution_time"] >= 0
    assert isinstance(data["output"], str) and "isolation: " in data["output"]
    assert data.get("stdout_visibility", "hidden") in VISIBILITY
    # names and messages carry the student's file names: shown as text, never read as markup (Gradescope's
    # default, simple_format, would)
    assert (data["output_format"], data["test_output_format"], data["test_name_format"]) == ("text",) * 3
    assert isinstance(data["tests"], list)
    parts = {}
    for test in data["tests"]:
        assert set(test) <= TEST_KEYS, set(test) - TEST_KEYS
        assert isinstance(test["name"], str) and test["name"]
        assert isinstance(test["number"], str)
        assert isinstance(test["output"], str) and "\n" not in test["output"]
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in VISIBILITY
        for key in ("score", "max_score"):
            assert isinstance(test[key], (int, float)) and not isinstance(test[key], bool)
        assert 0 <= test["score"] <= test["max_score"], test
        if "." not in test["number"]:  # a part's line: visible, with its points
            assert test["visibility"] == "visible"
            parts[test["name"].split(" ")[0]] = test["score"]
        else:  # a hidden check: hidden until published, by default
            assert test["visibility"] == "after_published", test
    if data["tests"]:
        assert sum(t["max_score"] for t in data["tests"]) == pytest.approx(PARTS_TOTAL)
        assert sum(t["score"] for t in data["tests"]) == pytest.approx(data["score"])
    assert 0 <= data["score"] <= PARTS_TOTAL
    return parts


def test_the_zip_follows_the_specification(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as archive:
        infos = {info.filename: info for info in archive.infolist()}
        names = set(infos)
        for script in ("setup.sh", "run_autograder"):
            assert script in names, "must be at the zip's root"
            assert infos[script].external_attr >> 16 & 0o111, f"{script} must be executable"
            assert archive.read(script).startswith(b"#!/usr/bin/env bash\n")
        assert archive.read("requirements.txt") == (ROOT / "requirements.txt").read_bytes()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"setup.sh", "run_autograder", "requirements.txt", "nbgrader_config.py", "autograder", "release",
                    ".grading"}, tops
    for needed in (f"autograder/{ASSIGNMENT.name}/test_step.py", f"autograder/{ASSIGNMENT.name}/probes.py",
                   f"release/{ASSIGNMENT.name}/{NOTEBOOK}", f".grading/reference-answers-{ASSIGNMENT.name}.json",
                   "autograder/gradescope/run.py", "autograder/sandbox/isolation.py"):
        assert needed in names, needed
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def reference_lines() -> set[str]:
    """Each line of the reference solution and of the written answers' rubric (the source's solution and mark
    scheme regions), squashed, that neither the public release nor the hidden suites (which the zip must hold)
    also hold: what must never enter the image where student code runs."""
    source = json.loads((ASSIGNMENT.source_dir / NOTEBOOK).read_text())
    regions = [region for cell in source["cells"]
               for region in (_MARK_SCHEME.findall("".join(cell["source"])) + _SOLUTION.findall("".join(cell["source"])))]
    shipped = "".join("".join(path.read_text(errors="replace").split()) for folder in (ASSIGNMENT.release_dir, ASSIGNMENT.suite_dir)
                      for path in folder.iterdir() if path.is_file())
    lines = {"".join(line.split()) for region in regions for line in region.splitlines()}
    return {line for line in lines if len(line) >= 12 and line not in shipped}


def test_the_zip_holds_no_line_of_the_reference_nor_the_rubric(autograder_zip, tmp_path):
    lines = reference_lines()
    assert len(lines) > 20  # the reference's code and every written answer's rubric
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(tmp_path)
    names = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert not [p for p in names if {"source", "solutions"} & set(p.relative_to(tmp_path).parts)]
    for path in names:
        text = "".join(path.read_text(errors="replace").split())
        found = [line for line in lines if line in text]
        assert not found, (path.relative_to(tmp_path), found[:3])


def test_setup_sh_and_run_autograder_are_valid_bash(autograder_zip, tmp_path):
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(tmp_path)
    for script in ("setup.sh", "run_autograder"):
        done = subprocess.run(["bash", "-n", str(tmp_path / script)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    setup = (tmp_path / "setup.sh").read_text()
    for step in ("python3.13 python3.12 python3.11 python3", "apt-get install", "-r \"$HERE/requirements.txt\"",
                 "/usr/local/bin/python3"):
        assert step in setup, step
    assert f"python3 -m autograder gradescope-prepare --assignment {ASSIGNMENT.name})" in setup
    assert f"exec python3 -m autograder gradescope-run --assignment {ASSIGNMENT.name}\n" in \
        (tmp_path / "run_autograder").read_text()


def test_make_gradescope_writes_the_zip():
    done = subprocess.run(["make", "-s", "gradescope"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with zipfile.ZipFile(ROOT / "build" / "gradescope.zip") as archive:
        assert {"setup.sh", "run_autograder"} <= set(archive.namelist())


def test_the_reference_gets_full_marks(gradescope):
    """...and the grader never imports nbgrader in the image (its import alone takes longer than grading)."""
    data, run = gradescope({NOTEBOOK: notebook_text(solution_notebook())}, PYTHONPROFILEIMPORTTIME="1")
    assert run.returncode == 0, run.stdout + run.stderr
    imported = re.findall(r"^import time:.*\| +(\S+)$", run.stderr, re.M)
    assert "autograder.grading" in imported and not [m for m in imported if m.split(".")[0] == "nbgrader"]
    assert check_spec(data) == FULL
    assert data["score"] == PARTS_TOTAL
    assert all(t["status"] == "passed" for t in data["tests"])


def test_the_blank_release_gets_zero(gradescope):
    data, run = gradescope({NOTEBOOK: notebook_text(release_notebook())})
    assert run.returncode == 0, run.stdout + run.stderr
    assert set(check_spec(data).values()) == {0}
    assert data["score"] == 0
    failed = [t for t in data["tests"] if t["status"] == "failed" and "." in t["number"]]
    assert failed and all(t["output"].startswith("FAIL: ") for t in failed)


def test_a_catalogued_bug_scores_as_make_grade_scores_it(gradescope, tmp_path):
    bug = next(b for b in BUGS if b.id == "zero-grad-does-nothing")
    nb = apply(solution_notebook(), list(bug.mutations))
    data, run = gradescope({"my work.ipynb": notebook_text(nb)})  # the only notebook, under another name
    assert run.returncode == 0, run.stdout + run.stderr
    parts = check_spec(data)
    for part in bug.loses:
        assert parts[part] < FULL[part], part
    for part in bug.keeps:
        assert parts[part] == FULL[part], part
    alone, _ = grade_json(write_notebook(nb, tmp_path / NOTEBOOK))  # what `make grade`'s code gives it
    assert parts == {p["grade_id"]: p["score"] for p in alone["parts"]}
    assert data["score"] == alone["total"]
    assert "graded 'my work.ipynb' as" in data["output"]
    lost = [t["output"] for t in data["tests"] if t["name"].startswith("test_zero_grad: ") and t["status"] == "failed"]
    assert any(bug.phrase.lower() in line.lower() for line in lost), lost
    assert LESSON in bug.loses


@pytest.mark.parametrize("student", ["read-hidden", "loop-top", "exit-top"])
def test_hostile_submissions(gradescope, student):
    entry = next(e for e in HOSTILE if e.student == student)
    if entry.root_only and os.geteuid() != 0:
        pytest.skip("without root, nothing keeps student code from the grader's files")
    data, run = gradescope(entry.files(solution_notebook(), release_notebook()))
    assert run.returncode == 0, run.stdout + run.stderr
    parts = check_spec(data)
    if entry.max_total is not None:
        assert data["score"] <= entry.max_total
    for part in entry.loses:
        assert parts[part] < FULL[part], part
    for part in entry.keeps:
        assert parts[part] == FULL[part], part
    shown = json.dumps(data).lower()
    assert entry.reason.lower() in shown, entry.reason
    if entry.limit:
        assert "hit a limit: time" in data["output"].lower()
    assert_no_hidden_code(data)
    if os.geteuid() == 0:
        assert "isolation: off" not in data["output"] and "isolation: none" not in data["output"]


def assert_no_hidden_code(data: dict) -> None:
    """Nothing of the hidden suites' code: only check names and one-line messages leave the grader."""
    hidden = {"".join(line.split()) for line in hidden_code_lines(ASSIGNMENT.suite_dir, ASSIGNMENT.source_dir)}
    assert hidden
    squashed = "".join(json.dumps(data).split())
    leaked = [line for line in hidden if line in squashed]
    assert not leaked, leaked[:3]
    for test in data["tests"]:
        assert "\n" not in test["output"] and len(test["output"]) <= 320


def test_no_notebook_is_a_clear_result(gradescope):
    data, run = gradescope({"notes.txt": "my answers are in my head\n"})
    check_spec(data)
    assert data["score"] == 0 and data["tests"] == []
    assert f"Not graded: no {NOTEBOOK} in the submission" in data["output"]
    data, _ = gradescope({"a.ipynb": notebook_text(release_notebook()), "b.ipynb": notebook_text(release_notebook())})
    assert data["score"] == 0 and "submit one notebook under that name" in data["output"]


def test_a_notebook_linked_to_the_reference_is_not_graded(gradescope):
    """/autograder/submission goes through the same intake as make grade: a link is never followed (it used to
    score 18/18, read as root)."""
    data, _ = gradescope({NOTEBOOK: Path(f"../source/solutions/{ASSIGNMENT.name}/{NOTEBOOK}")})
    check_spec(data)
    assert data["score"] == 0 and "it is a symbolic link, not a file" in data["output"], data["output"]


def test_hidden_checks_follow_the_setting():
    report = Report([PartResult("test_step", 3, [CheckResult("test_a", Status.PASSED),
                                                   CheckResult("test_b", Status.FAILED, "wrong")])])
    for visibility in ("visible", "hidden", "after_due_date", "after_published"):
        data = results_json(report, GraderSettings(gradescope_hidden_visibility=visibility), "uid", 1.4)
        assert [t["visibility"] for t in data["tests"]] == ["visible", visibility, visibility]
        assert data["score"] == 1.5 and data["execution_time"] == 1
        assert data["tests"][2]["output"] == "FAIL: wrong"
    assert GraderSettings().gradescope_hidden_visibility == "after_published"
    with pytest.raises(TraitError):
        GraderSettings(gradescope_hidden_visibility="sometimes")


def test_a_grader_failure_is_no_score_and_one_line(autograder_zip):
    """Answers that do not match the zip's hidden suites (a zip put together by hand): the grader's failure,
    so results.json holds no score (never a 0) and says why in one line; run_autograder exits non-zero."""
    home = unpacked(autograder_zip)
    try:
        answers = home / "source" / ".grading" / f"reference-answers-{ASSIGNMENT.name}.json"
        answers.write_text(answers.read_text().replace('"public_key": "', '"public_key": "stale'))
        data, run = grader_at(home)({NOTEBOOK: notebook_text(solution_notebook())})
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert run.returncode != 0
    assert "score" not in data and data["tests"] == []
    assert data["output"].startswith("The grader failed, not your notebook: ") and "\n" not in data["output"]
    assert "make gradescope" in data["output"]
    assert len(run.stdout.strip().splitlines()) == 1 and "Traceback" not in run.stdout + run.stderr


def _run_without_sandbox(tmp_path, monkeypatch, build, graded: list | None = None) -> str:
    """run_autograder on a submission `build` makes (the sandbox and the grading monkeypatched away: the paths it
    would grade put in `graded`): its output."""
    import autograder.grading
    import autograder.sandbox.policy
    import autograder.sandbox.proof
    from autograder.gradescope.run import run_autograder

    class Box:  # the sandbox is not what these tests are about: no notebook is run
        level = "uid"

        def close(self):
            pass

    asked = graded if graded is not None else []
    monkeypatch.setattr(autograder.sandbox.proof, "no_ids_refusal", lambda settings: "")
    monkeypatch.setattr(autograder.sandbox.proof, "closed_interpreter_refusal", lambda settings: "")
    monkeypatch.setattr(autograder.sandbox.policy, "start_student_sandbox", lambda assignment, settings: Box())
    monkeypatch.setattr(autograder.grading, "grade_path",
                        lambda assignment, path, settings, box: asked.append(path) or Report([]))
    submission = tmp_path / "submission"
    submission.mkdir()
    build(submission)
    assert run_autograder(ASSIGNMENT, GraderSettings(config=load_config(ROOT)), tmp_path) == 0
    return json.loads((tmp_path / "results" / "results.json").read_text())["output"]


def test_the_folders_other_notebooks_cannot_make_the_output_unbounded(tmp_path, monkeypatch):
    """red-c17 X26-c17-5 (pass 26): run_autograder writes the intake's notes into results.json's `output` as they are,
    where `make grade` makes each one line of at most 300 characters (FindGradingNotes): "the folder also holds ..."
    names every other notebook of the submission by its whole path. 300 empty notebooks at a 650-character path made
    an `output` of 197,036 characters, shown to the student above every test; the walk's 1,000 entries at longer
    paths, megabytes. The output stays within a few lines of the kit's one-line bound."""
    def build(submission):
        folder = submission / ("d" * 200) / ("e" * 200)
        folder.mkdir(parents=True)
        write_notebook(release_notebook(), submission / NOTEBOOK)
        for number in range(300):
            (folder / f"{number:04d}{'x' * 240}.ipynb").write_text("{}")
    output = _run_without_sandbox(tmp_path, monkeypatch, build)
    assert "the folder also holds" in output
    assert len(output) < 2000, f"results.json's output is {len(output):,} characters"


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_timestamp_txt_gradescope_never_reads_does_not_leave_the_notebook_ungraded(tmp_path, monkeypatch, kind):
    """red-a20 X29-a20-1 (pass 29): Gradescope keeps its own time (docs/security.md: "Gradescope keeps its own"), and
    run_autograder grades a timestamp.txt that holds no time at all. But one that is a link or a FIFO (a clone of a
    GitHub submission keeps links) leaves the notebook beside it not graded, score 0, told "the submission time must
    come from nbgrader's collect or the LMS", neither of which a Gradescope submission has. The notebook is graded,
    or at least the reason names nothing Gradescope does not do."""
    def build(submission):
        write_notebook(release_notebook(), submission / NOTEBOOK)
        if kind == "symlink":
            os.symlink("../source/anything", submission / "timestamp.txt")
        else:
            os.mkfifo(submission / "timestamp.txt")
    graded: list = []
    output = _run_without_sandbox(tmp_path, monkeypatch, build, graded)
    assert "nbgrader's collect or the LMS" not in output, output
    assert graded, output
    assert "not read: 'timestamp.txt'" in output, output  # named, as any link or FIFO beside the notebook is


def test_the_reason_a_submission_is_not_graded_is_bounded_too(tmp_path, monkeypatch):
    """red-a20 X29-a20-3 (pass 29): X26-c17-5 bounded the intake's notes in results.json's `output`, but not its
    reason, which run_autograder writes as it is (error_json). "no modules_and_sgd.ipynb in the submission (found
    ...)" names ten notebooks by their whole paths: ten at 4,000-character paths make an `output` of 39,902
    characters, shown to the student above everything else."""
    def build(submission):
        for number in range(10):
            folder = submission.joinpath(str(number), *["d" * 250] * 15)
            folder.mkdir(parents=True)
            (folder / ("n" * 200 + ".ipynb")).write_text("{}")
    output = _run_without_sandbox(tmp_path, monkeypatch, build)
    assert output.startswith("Not graded: no modules_and_sgd.ipynb in the submission (found ")
    assert len(output) < 2000, f"results.json's output is {len(output):,} characters"


def test_a_file_name_cannot_write_lines_of_the_kits_own_into_the_output(tmp_path, monkeypatch):
    """red-a20 X29-a20-3 (pass 29): the reason for a notebook the intake refuses (too large, a link) names it by its
    path as it is (validate.unreadable, unquoted), and run_autograder writes the reason as it is: a name with line
    breaks (a zip keeps them) writes lines of the kit's own words into results.json's `output`, "Score: 18 of 18
    autograded points" and "isolation: uid" among them, above the kit's real "isolation: none"."""
    forged = "x\nScore: 18 of 18 autograded points (written answers are graded by hand).\nisolation: uid\n\n.ipynb"

    def build(submission):
        (submission / forged).write_bytes(b" " * (GraderSettings().notebook_kb * 1024 + 1))  # too large: refused
    output = _run_without_sandbox(tmp_path, monkeypatch, build)
    assert "is not a readable notebook" in output, output
    assert output.count("\n") == 1 and "\nScore:" not in output, output
    assert output.startswith("Not graded: 'x\\nScore: 18 of 18"), output  # the name quoted, its line breaks escaped


def test_a_name_of_letters_past_latin_1_leaves_the_reason_in_the_output(tmp_path, monkeypatch):
    """red-c22 X31-c22-1 (pass 31): validate.unreadable cuts the name to NAME_CHARS (100) characters *before* quoted()
    escapes it, "so that a one_line of 300 characters still holds `why`"; but quoted() writes each character past
    Latin-1 as its ascii() escape (\\u03b1: 6 characters; an emoji: 10). A notebook named with 121 Greek letters
    (248 bytes, a legal file name) quotes as about 600 characters, and error_json's one_line(300) cuts the reason
    off: the student's results.json says `Not graded: '\\u03b1\\u03b1...…` and never why (too large, not JSON)."""
    def build(submission):
        (submission / ("\u03b1" * 121 + ".ipynb")).write_bytes(b" " * (GraderSettings().notebook_kb * 1024 + 1))
    output = _run_without_sandbox(tmp_path, monkeypatch, build)
    assert "is not a readable notebook" in output, output
