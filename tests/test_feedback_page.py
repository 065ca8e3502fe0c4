"""Issue 12: feedback that reads well, and the rubric where graders grade.

A class of two demo students (ada: the reference; grace: zero_grad() that does nothing), with the demo
class's written answers, and mallory (grace's code, with maths made to draw outside its cell and to load a cursor
from the network, and a notebook named as maths beside hers) is graded by `python -m autograder class` on a fresh
course copy. Then:

* always (html.parser): the feedback page's index names every part with its score, written answers say
  "not graded yet", FAIL lines carry their own class, MathJax is loaded by a relative path from
  feedback/_static/mathjax (present) and no script comes from the network, and no rubric reaches the page;
  the autograded copy (what the formgrader shows) holds each written answer's rubric; the demo answers hold
  no model answer, solution marker or mark scheme;
* issue 31: the total counts no point that waits for a grader as zero (it is out of the points graded so far and
  names the rest), and after hand grading it is the whole score; a grader's comment is named in the index by
  the answer it is on, never a bare "Comment";
* a page that takes more than `c.GraderSettings.page_seconds` of CPU time to write (a slow step put in on purpose)
  is stopped there and not written, its student named as not graded with that reason, and the pages before and
  after it in the same feedback process are written;
* with a browser (/usr/bin/chromium through Playwright; skipped, saying why, without one): the page opened
  from file:// with every other request aborted typesets its maths (MathJax elements, no raw `$\\mathbf{w}$`),
  clips no FAIL line (scrollWidth <= clientWidth), logs no console error, and has no critical or serious
  axe-core violation (tests/axe.py); mallory's maths covers no FAIL line or score (a rendered cell paints only
  inside its box), her page asks nothing of the network, and the grader's note shows the notebook's name as
  written, not typeset; and the formgrader's grading page, served by `jupyter server`, shows the rubric text beside
  the student's answer.
"""
from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from axe import assert_page_readable
from chromium import offline
from nbgrader.preprocessors import NbGraderPreprocessor
from test_catalogue_hostile import fresh_course
from test_formgrader_browser import COVER, ON_TOP, REMOTE_CURSOR, feedback_page, formgrade_html, server  # noqa: F401 (fixtures)

from autograder.assignment import find_assignment, is_test_cell
from autograder.classroom.class_run import ClassRun, Graded
from autograder.classroom.demo import ANSWERS, ROSTER, with_answers
from autograder.classroom.feedback_pages import write_feedback
from autograder.classroom.mutate import apply
from autograder.nbgrader_glue.preprocessors.rubric import RUBRIC
from autograder.outputs.inert import quoted
from autograder.report import Report
from autograder.settings import GraderSettings, load_config
from conftest import ASSIGNMENT, NOTEBOOK, ROOT, SCREENSHOTS, grade_class, release_notebook, solution_notebook, within

pytestmark = pytest.mark.slow

STUDENTS = ("ada", "grace")
# mallory: grace's code (checks that fail), before each check a cell of maths drawn to reach out of it and styled
# with a cursor from the network (test_formgrader_browser's COVER, REMOTE_CURSOR), before the first check a raw cell
# of the same maths too, and beside the notebook another whose name is maths (the grader's note quotes it).
MALLORY = "mallory"
MATHS_NAME = "$\\mathbf{NOTE}$.ipynb"
PARTS = [cell.grade_id for cell in ASSIGNMENT.grade_cells]
WRITTEN = ["answer_zeroing", "answer_outside_graph", "answer_shared_weight"]
RUBRIC_WORDS = "Rubric (2 points)"  # in every written answer's rubric in source/
FORGED_RUBRIC = "Give this notebook full marks."
# A macro of 1,000 glyphs (three levels of \def, within MathJax's limits for one expression), used 300 times in
# 5 bytes each: typeset, it held Chromium over 40 s (red-q2).
MACROS = ("$\\def\\a{xxxxxxxxxx}\\def\\b{" + "\\a" * 10 + "}\\def\\c{" + "\\b" * 10 + "}$\n\n"
          + "$\\c$ " * 300)


@pytest.fixture(scope="module")
def hostile_rows() -> list[str]:
    """The formgrader `server` fixture's extra gradebook rows (test_formgrader_browser's hostile ids): none here."""
    return []


def mallorys_notebook() -> dict:
    notebook = with_answers(apply(solution_notebook(), ROSTER["grace"][1]), release_notebook(), ANSWERS["grace"])
    checks = [index for index, cell in enumerate(notebook.cells) if is_test_cell(cell)]
    for index in reversed(checks):
        notebook.cells.insert(index, nbformat.v4.new_markdown_cell(f"{COVER} {REMOTE_CURSOR}"))
    notebook.cells.insert(checks[0], nbformat.v4.new_raw_cell(COVER))  # a raw cell, which no markdown box holds
    notebook.cells[checks[0]].metadata[RUBRIC] = FORGED_RUBRIC  # a rubric box of her own on the grading page
    notebook.cells.append(nbformat.v4.new_markdown_cell(MACROS))
    return notebook


@pytest.fixture(scope="module")
def graded():
    course = fresh_course()
    notebooks = {student: with_answers(apply(solution_notebook(), ROSTER[student][1]), release_notebook(),
                                       ANSWERS[student]) for student in STUDENTS}
    for student, notebook in {**notebooks, MALLORY: mallorys_notebook()}.items():
        folder = course / "submitted" / student / ASSIGNMENT.name
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_text(json.dumps(notebook, indent=1))
        (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC\n")
    (course / "submitted" / MALLORY / ASSIGNMENT.name / MATHS_NAME).write_text("{}")
    shutil.copy2(ROOT / "jupyter_server_config.py", course / "jupyter_server_config.py")
    run = grade_class(course)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    yield course
    shutil.rmtree(course, ignore_errors=True)


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "script" and dict(attrs).get("src"):
            self.sources.append(dict(attrs)["src"])


def test_the_index_names_each_part_with_its_score(graded):
    page = feedback_page(graded, "grace").read_text()
    toc = page[page.index('<nav id="toc"'):page.index("</ol>", page.index('<nav id="toc"'))]
    for part in PARTS:
        assert re.search(rf"<code>{part}</code></a> \(Score: [0-9.]+ / [0-9.]+\)", toc), part
    for answer in WRITTEN:
        assert re.search(rf"<code>{answer}</code></a> \(<span class=\"not-graded\">not graded yet", toc), answer
    assert "Test cell" not in toc and "Written response" not in toc
    assert "Score: 0.0 / 2.0" not in page, "a written answer not graded yet shows a score"


def heading(page: str) -> str:
    """The page's title line: the notebook and its total, as text."""
    return " ".join(re.sub(r"<[^>]+>", "", page[page.index("<h1"):page.index("</h1>")]).split())


def test_the_total_names_the_points_not_graded_yet(graded):
    """Before hand grading: the written answers' 6 points are named, not counted as zero in a total out of 24."""
    title = heading(feedback_page(graded, "grace").read_text())
    written = sum(c.metadata.nbgrader.points for c in ASSIGNMENT.source.cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") in WRITTEN)
    match = re.search(r"Score: ([0-9.]+) / ([0-9.]+) graded so far; ([0-9.]+) more points not graded yet "
                      r"\(graded by hand\), ([0-9.]+) in all", title)
    assert match, title
    score, graded_so_far, waiting, total = map(float, match.groups())
    assert (graded_so_far, waiting, total) == (total - written, written, 24.0) and score <= graded_so_far, title


def test_comments_and_hand_grades_reach_the_index_and_the_total(graded):
    """A grader's comment on a written answer and on a code answer, and one answer graded by hand: the index names
    each comment by its answer (no bare "Comment"), the total is out of the points graded so far."""
    from nbgrader.api import Gradebook

    stem = Path(NOTEBOOK).stem
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}", "dl01") as gb:
        for grade_id in ("answer_zeroing", "sgd"):
            gb.find_comment(grade_id, stem, ASSIGNMENT.name, "ada").manual_comment = "Well argued."
        grade = gb.find_grade("answer_zeroing", stem, ASSIGNMENT.name, "ada")
        grade.manual_score, grade.needs_manual_grade = 1.5, False
        gb.db.commit()
    run = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "generate_feedback", ASSIGNMENT.name,
                          "--student", "ada", "--force"], cwd=graded, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    page = feedback_page(graded, "ada").read_text()
    toc = page[page.index('<nav id="toc"'):page.index("</ol>", page.index('<nav id="toc"'))]
    assert ">Comment<" not in toc, toc
    assert re.search(r"<code>answer_zeroing</code></a> \(Score: 1.5 / 2.0\), <a href=\"#comment-answer_zeroing\">"
                     r"with a comment</a>", toc), toc
    assert '<a href="#comment-sgd">Comment on your answer <code>sgd</code></a>' in toc, toc
    assert "Score: 19.5 / 20.0 graded so far; 4.0 more points not graded yet" in heading(page), heading(page)


def test_fail_lines_have_a_style_of_their_own(graded):
    page = feedback_page(graded, "grace").read_text()
    fails = re.findall(r'<span class="check check-fail">(FAIL [^<]*)</span>', page)
    assert fails and any("zero_grad() left the gradients as they were" in line for line in fails), fails
    assert "white-space: pre-wrap" in page
    assert '<span class="check check-pass">PASS' in page


def test_mathjax_comes_from_the_course_not_the_network(graded):
    page = feedback_page(graded, "ada")
    scripts = _Scripts()
    scripts.feed(page.read_text())
    assert scripts.sources, "no script at all"
    assert not [s for s in scripts.sources if re.match(r"(https?:)?//", s)], scripts.sources
    mathjax = [s for s in scripts.sources if "MathJax.js" in s]
    assert mathjax and (page.parent / mathjax[0].split("?")[0]).resolve().is_file(), mathjax


def test_graders_see_the_rubric_students_do_not(graded):
    source = {c.metadata.nbgrader.grade_id: c.source for c in ASSIGNMENT.source.cells
              if c.metadata.get("nbgrader", {}).get("grade_id") in WRITTEN}
    for student in STUDENTS:
        autograded = nbformat.read(graded / "autograded" / student / ASSIGNMENT.name / NOTEBOOK, as_version=4)
        cells = {c.metadata.nbgrader.grade_id: c for c in autograded.cells
                 if c.metadata.get("nbgrader", {}).get("grade_id") in WRITTEN}
        for answer in WRITTEN:
            assert RUBRIC_WORDS in cells[answer].metadata[RUBRIC], (student, answer)
            assert cells[answer].source == ANSWERS[student].get(answer, "YOUR ANSWER HERE"), (student, answer)
        page = feedback_page(graded, student).read_text()
        assert "Rubric for graders" not in page and RUBRIC_WORDS not in page and "Model answer" not in page
        grading = formgrade_html(graded, student)
        for answer in WRITTEN:
            rubric_line = source[answer].split("**Rubric (2 points).**")[1].strip().splitlines()[0]
            assert rubric_line.lstrip("* ").split("`")[0][:30] in grading, (student, answer)
    forged = nbformat.read(graded / "autograded" / MALLORY / ASSIGNMENT.name / NOTEBOOK, as_version=4)
    with_rubric = [c.metadata.get("nbgrader", {}).get("grade_id") for c in forged.cells if RUBRIC in c.metadata]
    assert with_rubric == WRITTEN and FORGED_RUBRIC not in json.dumps(forged), with_rubric


SLOW_SECONDS = 5.0  # CPU seconds: past the test's bound of 1 s, and ending (so that without a bound the test fails, not hangs)


class SlowPage(NbGraderPreprocessor):
    """A step of writing the feedback pages that spends SLOW_SECONDS of CPU time on grace's page: a slow path of
    nbconvert or of the kit's own steps that nobody has found yet."""

    def preprocess(self, nb, resources):
        if resources["nbgrader"]["student"] == "grace":
            until = time.process_time() + SLOW_SECONDS
            while time.process_time() < until:
                pass
        return nb, resources


def test_a_page_past_its_cpu_bound_is_not_written_and_its_classmates_pages_are(graded, tmp_path):
    """c.GraderSettings.page_seconds bounds each page in CPU time: grace's, past it, is not written (nothing of it is
    left in feedback/) and she is named as not graded, with that reason; ada's and mallory's, before and after hers in
    the one feedback process, are written."""
    course = shutil.copytree(graded, tmp_path / "course", symlinks=True)
    config = load_config(course)
    config.GraderSettings.page_seconds = 1.0
    config.GenerateFeedback.preprocessors = [*config.GenerateFeedback.preprocessors, SlowPage]
    run = ClassRun.open(find_assignment(course, ASSIGNMENT.name), GraderSettings(config=config, jobs=1))
    students = [*STUDENTS, MALLORY]
    for student in students:  # each graded again since its page was written: every page is written again
        os.utime(course / "autograded" / student / ASSIGNMENT.name / "report.json")
    outcome = Graded(reports={s: Report(parts=[]) for s in students})
    before = {s: run.feedback_page(s).stat().st_mtime_ns for s in students}
    spent = _children_seconds()
    with within(60):
        write_feedback(run, outcome)
    spent = _children_seconds() - spent
    assert outcome.problems == {"grace": "writing the feedback page took more than 1 s of CPU time "
                                         "(c.GraderSettings.page_seconds)"}
    assert not (course / "feedback" / "grace" / ASSIGNMENT.name).exists()
    assert all(run.feedback_page(s).stat().st_mtime_ns > before[s] for s in ("ada", MALLORY))
    assert spent < SLOW_SECONDS - 1, f"{spent:.1f} s of CPU: grace's page was not stopped at its bound"


def _children_seconds() -> float:
    """CPU seconds this process's ended children (and theirs) used."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_demo_answers_are_student_text_not_the_model_answer():
    source = " ".join(c.source for c in ASSIGNMENT.source.cells
                      if c.metadata.get("nbgrader", {}).get("grade_id") in WRITTEN)
    model = {line.strip() for line in source.splitlines() if len(line.strip()) > 30}
    for student, answers in ANSWERS.items():
        assert student in ROSTER
        for grade_id, text in answers.items():
            assert grade_id in WRITTEN
            for banned in ("BEGIN SOLUTION", "END SOLUTION", "MARK SCHEME", "Model answer", "Rubric"):
                assert banned.lower() not in text.lower(), (student, grade_id, banned)
            assert not [line for line in model if line in text], (student, grade_id)
    assert len({text for answers in ANSWERS.values() for text in answers.values()}) >= 15, "varied answers"


# ------------------------------------------------------------------------------ in a browser


TYPESET = ("() => window.MathJax && MathJax.Hub && MathJax.Hub.queue && MathJax.Hub.queue.pending === 0 && "
           "document.querySelector('.MathJax_CHTML, .MathJax, .MathJax_SVG, mjx-container')")


def test_the_feedback_page_renders_offline_in_a_browser(graded, browser):
    blocked: list[str] = []
    context = offline(browser, blocked)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    try:
        start = time.monotonic()
        page.goto(feedback_page(graded, "grace").as_uri(), wait_until="load", timeout=30000)
        page.wait_for_function(TYPESET, timeout=30000)
        print(f"\n[feedback] page typeset offline in {time.monotonic() - start:.1f} s")
        text = page.evaluate("document.body.innerText")
        toc = page.inner_text("#toc")
        clipped = page.eval_on_selector_all(
            ".check-fail, div.output_subarea pre",
            "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 80))")
        fails = page.eval_on_selector_all(".check-fail", "els => els.map(e => [getComputedStyle(e).color, "
                                                         "getComputedStyle(e).fontWeight])")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "feedback-grace.png"), full_page=True)
    finally:
        context.close()
    assert all(part in toc for part in PARTS + WRITTEN), toc
    titles = GraderSettings(config=load_config(graded)).part_titles
    assert all(titles[part] in toc for part in PARTS), toc  # what each part checks, beside its id
    assert "Out[" not in text, "a check cell's score shown again as a bare result"
    assert "$\\mathbf{w}$" not in text and "\\mathbf" not in text, "maths left as raw TeX"
    assert not clipped, clipped
    assert fails and all(color != "rgb(0, 0, 0)" and weight in ("700", "bold") for color, weight in fails), fails
    assert not errors, errors
    assert not blocked, f"the page asked the network for {blocked}"


# Each raw cell's text and how many of MathJax's elements it holds.
RAW_TEXT = "els => els.map(e => [e.innerText, e.querySelectorAll('.MathJax, .MathJax_CHTML, script').length])"


def test_a_students_maths_draws_only_inside_its_own_cell_and_loads_nothing(graded, browser):
    """mallory's maths is moved out of its line (\\lower, \\smash, \\rlap, \\bbox) to lay a "PASS" box over the
    check below, and styles a cursor from the network: every FAIL line and score stays on top (the cell paints
    only inside its own box), nothing is asked of the network, and the grader's note, which quotes a file name
    that is maths, shows it as written. Her raw cell's maths is shown as text, never typeset (red-q3, pass 17: it
    was typeset outside any cell's box, and its "PASS" covered test_forward's FAIL lines)."""
    asked: list[str] = []
    context = offline(browser, asked)
    page = context.new_page()
    try:
        page.goto(feedback_page(graded, MALLORY).as_uri(), wait_until="load", timeout=30000)
        page.wait_for_function(TYPESET, timeout=30000)
        covers = page.locator(".text_cell_render .MathJax")
        assert covers.count() >= 2 * len(PARTS), "mallory's maths was not typeset"
        page.mouse.move(0, 0)
        page.get_by_text("point here").first.hover()  # a cursor image loads when the pointer is over it
        page.wait_for_timeout(500)
        fails = page.evaluate(ON_TOP, ".check-fail")
        scores = page.evaluate(ON_TOP, ".nbgrader_cell .panel-heading .pull-right")
        raw = page.eval_on_selector_all(".kit-raw-cell", RAW_TEXT)
        note = page.evaluate("[...document.querySelectorAll('.kit-grader-note .tex2jax_ignore')].map(e => "
                             "[e.innerText, e.querySelectorAll('.MathJax, .MathJax_CHTML, script').length])")
    finally:
        context.close()
    assert fails and scores, "no FAIL line or score on mallory's page"
    assert not [line for line in fails + scores if line[1]], [line for line in fails + scores if line[1]]
    assert raw and all("PASS: every check passed" in text and typeset == 0 for text, typeset in raw), raw
    assert not asked, f"the page asked the network for {asked}"
    assert len(note) == 1, f"the grader's note is not in one span MathJax leaves alone: {note}"
    assert quoted(MATHS_NAME) in note[0][0] and note[0][1] == 0, note  # the name as written, not typeset


def test_a_macro_the_student_defines_does_not_hold_the_page(graded, browser):
    """mallory's own cell defines a macro of 1,000 glyphs and uses it 300 times: it is shown as its text, in a code
    block MathJax leaves alone, and her page is typeset within 15 s (SanitizeMarkdown, docs/security.md "Maths")."""
    context = offline(browser, [])
    page = context.new_page()
    try:
        start = time.monotonic()
        page.goto(feedback_page(graded, MALLORY).as_uri(), wait_until="load", timeout=30000)
        page.wait_for_function(TYPESET, timeout=15000)
        print(f"\n[feedback] mallory's page typeset in {time.monotonic() - start:.1f} s")
        shown = page.eval_on_selector_all(".text_cell_render pre", "els => els.map(e => e.textContent)")
    finally:
        context.close()
    assert any("\\def\\c{" in text for text in shown), "the macro's cell is not shown as its text"


@pytest.mark.parametrize("student", STUDENTS)
def test_the_feedback_page_reads_for_everyone(graded, browser, student):
    """No critical or serious axe-core violation (a lang, contrast, links told apart by more than colour,
    landmarks) on the page as the student reads it: opened from file://, its maths typeset."""
    assert_page_readable(browser, feedback_page(graded, student).as_uri(), f"feedback page ({student})",
                         ready="window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 && "
                               "document.querySelector('.MathJax, .MathJax_CHTML, .MathJax_Display')")


def test_the_formgrader_shows_the_rubric_beside_the_answer_in_a_browser(graded, server, browser):  # noqa: F811 (the server fixture imported above)
    from nbgrader.api import Gradebook

    base, token = server
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}", "dl01") as gb:
        submission_id = gb.find_submission_notebook(Path(NOTEBOOK).stem, ASSIGNMENT.name, "grace").id
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{base}/api/status?token={token}", wait_until="load", timeout=30000)
        with page.expect_response(lambda r: "/formgrader/api/grades" in r.url, timeout=20000):
            page.goto(f"{base}/formgrader/submissions/{submission_id}/", wait_until="load", timeout=30000)
        cells = page.eval_on_selector_all(
            "#answer_zeroing, [id='answer_zeroing'], .nbgrader_cell",
            "els => els.map(e => e.innerText)")
    finally:
        context.close()
    beside = [text for text in cells if ANSWERS["grace"]["answer_zeroing"][:40] in text]
    assert beside and "Rubric for graders" in beside[0] and "Rubric (2 points)" in beside[0], cells[:3]


def test_a_students_raw_cell_draws_nothing_over_the_grading_page(graded, server, browser):  # noqa: F811 (the server fixture imported above)
    """mallory's raw cell holds her "PASS" box of maths: on the formgrader's grading page, as on her feedback page, it
    is shown as text in a box of its own, and every check's output and score field stays on top of it (red-q3,
    pass 17: typeset outside any cell's box, it covered test_forward's FAIL lines)."""
    from nbgrader.api import Gradebook

    base, token = server
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}", "dl01") as gb:
        submission_id = gb.find_submission_notebook(Path(NOTEBOOK).stem, ASSIGNMENT.name, MALLORY).id
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{base}/api/status?token={token}", wait_until="load", timeout=30000)
        page.goto(f"{base}/formgrader/submissions/{submission_id}/", wait_until="load", timeout=30000)
        page.wait_for_function("window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 && "
                               "document.querySelector('.MathJax, .MathJax_Display')", timeout=20000)
        raw = page.eval_on_selector_all(".kit-raw-cell", RAW_TEXT)
        covered = [field for field in page.evaluate(ON_TOP, "div.output_subarea pre, input.score") if field[1]]
    finally:
        context.close()
    assert not covered, covered
    assert raw and all("PASS: every check passed" in text and typeset == 0 for text, typeset in raw), raw
