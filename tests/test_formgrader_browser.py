"""Issues 13 and 18: neither a hostile written answer nor a hostile student id takes over the instructor's Jupyter
server through the formgrader.

A class (the reference, the reference whose markdown is all payloads, a folder named with an escape sequence
and markup, which make grade refuses, and a notebook with an escape sequence in a grade_id) is graded by
`python -m autograder class` on a fresh course copy. Then:

* always: the formgrader page (the kit's `kit_formgrade` template over the autograded notebook) and the
  feedback page of the hostile student hold nothing active that the honest student's pages do not
  (script elements, on* attributes, active URLs, iframes, forms, style attributes; parsed with html.parser);
* with a browser (Debian's /usr/bin/chromium, driven by Playwright; skipped, saying why, without one):
  a Jupyter server started for the test serves the formgrader page, and headless Chromium opens it and the
  feedback page. No payload may run (they set document.title and console.log a marker), no request may
  reach /api/contents or /api/terminals, and no file may appear in the course root (a payload PUTs one
  through /api/contents with the _xsrf cookie). A control page, the same notebook rendered without
  SanitizeMarkdown, shows the payloads do run when nothing stops them. The grading page typesets maths from the
  server's own MathJax, asks no other server for anything (a cursor style's url() among them), and a written
  answer's maths drawn out of its line covers none of the answer's score and comment fields;
* issue 31: every formgrader page the kit serves (Manage Assignments, Manage Submissions, the Gradebook's three
  levels, Manage Students and a student's two, the grading page), with its dialogs and folding panels open, has
  no critical or serious axe-core violation (tests/axe.py; the lists hold the hostile ids below, as text);
* issue 18: two hostile ids and a hostile name, put in the gradebook through nbgrader's API, on Manage
  Students, a student's page, the Gradebook's list and the grading page, served with the kit's
  autograder.nbgrader_glue.formgrader_guard: nothing runs, nothing reaches /api/contents, the ids read as text; the
  control renders the student page as nbgrader does, and the id runs.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from axe import assert_page_readable, blocking_violations
from markupsafe import escape
from nbformat.v4 import new_markdown_cell, new_output, new_raw_cell
from test_catalogue_hostile import fresh_course
from test_inert import CONTROLS, SEQUENCE_SHOWN, hostile_grade_id_notebook
from test_sanitize_markdown import (
    ACROSS_CELLS,
    LAYOUT_CHARACTERS,
    MARKER,
    ODD_NAMES,
    PAYLOADS,
    TROJAN_ANSWER,
    active_content,
)

from bench.course import gradebook_scores
from conftest import ASSIGNMENT, FULL, NOTEBOOK, ROOT, grade_class, solution_notebook

pytestmark = pytest.mark.slow

HONEST, HOSTILE = "ada", "mallory"
TIMESTAMP = "2026-11-20 12:00:00.000000 UTC\n"
OWNED = "owned.txt"  # what the payloads try to write into the course root through /api/contents
# Student ids that run SCRIPT where a page prints them unescaped: one in an inline script's string
# (var student_id = "eve";SCRIPT;"";), one in HTML. SCRIPT has no quote, space or slash, so each id also names a
# folder (autograded/<id>/): they are put in the gradebook through nbgrader's API, as a gradebook from elsewhere
# would hold them, to test the pages' own defence.
SCRIPT = (f"document.title=`{MARKER}`;fetch(`\\x2fapi\\x2fcontents\\x2f{OWNED}`,{{method:`PUT`,"
          "headers:{[`X-XSRFToken`]:document.cookie.split(`_xsrf=`)[1].split(`;`)[0]},"
          "body:JSON.stringify({type:`file`,format:`text`,content:`x`})})")
HOSTILE_IDS = (f'eve";{SCRIPT};"', f"<svg onload={SCRIPT}>")
HOSTILE_NAME = f"<img src=x onerror={SCRIPT}>"  # the first id's first and last names
# A submitted/ folder named as an attacker would: make grade refuses it (autograder/intake/student_ids.py); its escape
# sequence sets the terminal's title if printed raw.
OSCAR = "oscar"
REFUSED = f"trudy\x1b]0;{MARKER}\x07<svg onload=console.log(`{MARKER}`)>"
# Maths that MathJax draws out of its line (\\smash, \\rlap, \\lower, a tall \\bbox), a "PASS" box over whatever is
# around its cell (a check's FAIL line, the score fields), and maths styled with a cursor from the network.
COVER = ("$\\smash{\\rlap{\\lower{1em}{\\bbox[#e8f5e9]{\\begin{array}{l}"
         + "\\\\".join(["\\text{PASS: every check passed}\\hspace{60em}"] * 40) + "\\end{array}}}}}$")
COVER_ABOVE = COVER.replace("\\lower{1em}", "\\raise{12em}")  # the same box raised over the rubric above the answer
REMOTE_CURSOR = "$\\style{cursor:url(https://remote.invalid/x.png),auto}{\\text{point here}}$"
# For each element a selector finds: "" where the page shows it at its centre, else what is drawn over it there.
ON_TOP = """selector => [...document.querySelectorAll(selector)].map(shown => {
    shown.scrollIntoView({block: "center"});
    const box = shown.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return [shown.id || shown.textContent.slice(0, 60),
            shown.contains(hit) ? "" : (hit ? hit.outerHTML.slice(0, 80) : "nothing")];
})"""
ANSWERS = {  # the written answers (graded by hand in the formgrader): the payloads aimed at the instructor
    "answer_zeroing": PAYLOADS["script"] + f"\n\nAccumulation: $\\mathbf{{w}}$ keeps `a < b`.\n\n{COVER} {REMOTE_CURSOR}"
                      f" {COVER_ABOVE}",
    "answer_outside_graph": PAYLOADS["img-onerror"] + "\n\n" + PAYLOADS["javascript-link"] + "\n\n" + TROJAN_ANSWER,
    "answer_shared_weight": PAYLOADS["svg-onload"] + "\n\n" + PAYLOADS["style-overlay"],
}


def hostile_notebook() -> dict:
    """The reference (full marks for its code) with every markdown cell a payload, an HTML output and a raw cell."""
    nb = solution_notebook()
    others = [PAYLOADS[name] for name in sorted(PAYLOADS)]
    plain = 0
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "markdown":
            if grade_id in ANSWERS:
                cell.source = ANSWERS[grade_id]
            else:
                cell.source = others[plain % len(others)]
                plain += 1
        elif grade_id == "demo_worked_example":  # an output that would run if ClearOutput did not clear it
            cell.outputs = [new_output("display_data", data={
                "text/html": f"<script>document.title='{MARKER}';console.log('{MARKER}')</script>",
                "text/plain": "x"})]
    nb.cells += [new_markdown_cell(cell) for cell in ACROSS_CELLS["cut-off-tag"]]  # a payload only on the page
    nb.cells += [new_markdown_cell(ODD_NAMES[name]) for name in ("vt-script", "kelvin-script")]  # focused on load
    nb.cells.append(new_raw_cell(f"<img src=x onerror=\"console.log('{MARKER}')\">raw"))
    return nb


@pytest.fixture(scope="module")
def graded_run():
    """The graded class and what `make grade` printed: ada, mallory, a folder named outside the safe alphabet, and
    oscar, whose notebook has an escape sequence in a grade_id (not graded: its reason names the grade_id)."""
    course = fresh_course()
    for student, nb in ((HONEST, solution_notebook()), (HOSTILE, hostile_notebook()), (REFUSED, solution_notebook()),
                        (OSCAR, hostile_grade_id_notebook())):
        folder = course / "submitted" / student / ASSIGNMENT.name
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_text(json.dumps(nb, indent=1))
        (folder / "timestamp.txt").write_text(TIMESTAMP)
    shutil.copy2(ROOT / "jupyter_server_config.py", course / "jupyter_server_config.py")
    start = time.monotonic()
    run = grade_class(course)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    print(f"\n[formgrader] class of 4 graded in {time.monotonic() - start:.1f} s")
    yield course, run
    shutil.rmtree(course, ignore_errors=True)


@pytest.fixture(scope="module")
def graded(graded_run):
    return graded_run[0]


def formgrade_html(course: Path, student: str, notebook: Path | None = None, kit: bool = True) -> str:
    """The formgrader's page for `student`, rendered as its SubmissionHandler renders it (no server): with the
    template the kit serves (autograder/nbgrader_glue/formgrader_pages.py), or with nbgrader's own `formgrade` (`kit=False`)."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    from autograder.nbgrader_glue.formgrader_pages import kit_exporter

    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    exporter = HTMLExporter(config=config)
    notebook = notebook or course / "autograded" / student / ASSIGNMENT.name / NOTEBOOK
    resources = {"assignment_id": ASSIGNMENT.name, "notebook_id": Path(NOTEBOOK).stem, "submission_id": "x",
                 "index": 0, "total": 2, "base_url": "", "student": student, "last_name": None,
                 "first_name": None, "notebook_path": "/" + str(notebook.relative_to(course))}
    html, _ = (kit_exporter(exporter) if kit else exporter).from_filename(str(notebook), resources=resources)
    return html


def feedback_page(course: Path, student: str) -> Path:
    return course / "feedback" / student / ASSIGNMENT.name / Path(NOTEBOOK).with_suffix(".html").name


def test_the_hostile_student_keeps_full_marks_for_honest_code(graded):
    assert gradebook_scores(graded)[HOSTILE] == pytest.approx(FULL)


def test_the_autograded_notebook_keeps_no_student_output(graded):
    nb = nbformat.read(graded / "autograded" / HOSTILE / ASSIGNMENT.name / NOTEBOOK, as_version=4)
    html_outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                    if "text/html" in o.get("data", {})]
    assert not html_outputs, "ClearOutput left a student's HTML output"
    raw = [c.source for c in nb.cells if c.cell_type == "raw"]
    assert raw == ["<img>raw"], raw


@pytest.mark.parametrize("page", ["formgrader", "feedback"])
def test_the_hostile_pages_hold_nothing_active_the_honest_pages_do_not(graded, page):
    if page == "formgrader":
        honest, hostile = formgrade_html(graded, HONEST), formgrade_html(graded, HOSTILE)
    else:
        honest, hostile = (feedback_page(graded, s).read_text() for s in (HONEST, HOSTILE))
    extra = Counter(active_content(hostile)) - Counter(active_content(honest))
    assert not extra, sorted(extra)
    assert "Full marks, click anywhere" in hostile, "the overlay's text is kept, as text"
    assert "\\mathbf{w}" in hostile and "<code>a &lt; b</code>" in hostile, "an answer's maths and code read as written"
    # a bidirectional control in an answer's code or prose is shown as its escape (test_sanitize_markdown.TROJAN_ANSWER)
    assert not LAYOUT_CHARACTERS.findall(hostile) and hostile.count("The layer's output \\u2067") == 2


def test_the_payloads_are_active_without_sanitising(graded):
    """The control for the two tests above: the submitted notebook itself, rendered, is full of active content."""
    submitted = graded / "submitted" / HOSTILE / ASSIGNMENT.name / NOTEBOOK
    extra = Counter(active_content(formgrade_html(graded, HOSTILE, submitted))) - Counter(
        active_content(formgrade_html(graded, HONEST)))
    assert {"<script>", "<img onerror>", "<svg>", "<iframe>", "<form>", "<div style>"} <= set(extra), sorted(extra)


def test_a_folder_named_outside_the_safe_alphabet_is_refused_with_one_line(graded_run):
    """make grade adds no student whose id could be markup, a formula or a terminal sequence to the gradebook, and
    its summary prints no escape sequence (the folder's name, oscar's grade_id)."""
    from nbgrader.api import Gradebook

    course, run = graded_run
    refused = [line for line in run.stdout.splitlines() if "is not a safe student id" in line]
    assert len(refused) == 1 and refused[0].startswith(f"Not graded: {ascii(REFUSED)}: "), run.stdout[-2000:]
    assert ascii(REFUSED) in refused[0], "the reason names the folder with its escape sequence made visible"
    assert not set(run.stdout) & set(CONTROLS), "the summary printed an escape sequence raw"
    assert "4 submissions, 2 graded" in run.stdout and "Not graded: oscar: " in run.stdout, run.stdout[-2000:]
    assert f"linear{SEQUENCE_SHOWN}" in run.stdout, "oscar's reason names the grade_id, its controls as escapes"
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "dl01") as gb:
        ids = {s.id for s in gb.students}  # (hostile_rows adds two more, later)
        assert {HONEST, HOSTILE, OSCAR} <= ids and REFUSED not in ids
    assert not (course / "feedback" / REFUSED).exists() and not (course / "autograded" / REFUSED).exists()


def nbgrader_pages(guarded: bool):
    """nbgrader's formgrader Jinja environment and HTMLExporter, built as its extension builds them; `guarded`:
    as autograder.nbgrader_glue.formgrader_guard leaves them."""
    from jinja2 import Environment, FileSystemLoader
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    from autograder.nbgrader_glue.formgrader_guard import guard

    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    settings = {"nbgrader_jinja2_env": Environment(loader=FileSystemLoader([handlers.template_path])),
                "nbgrader_exporter": HTMLExporter(config=config)}
    if guarded:
        assert guard(settings)
    return settings["nbgrader_jinja2_env"], settings["nbgrader_exporter"]


@pytest.mark.parametrize("guarded", [True, False], ids=["guarded", "nbgrader as it is"])
def test_the_guard_makes_nbgrader_show_a_hostile_id_as_text(graded, guarded):
    """The student page Manage Students links to and the grading page, for each hostile id and for an honest
    one; without the guard (the control) nbgrader prints the hostile ones as markup or script."""
    env, exporter = nbgrader_pages(guarded)
    notebook = graded / "autograded" / HONEST / ASSIGNMENT.name / NOTEBOOK

    def pages(student: str, name: str | None) -> dict[str, str]:
        resources = {"assignment_id": ASSIGNMENT.name, "notebook_id": Path(NOTEBOOK).stem, "submission_id": "x",
                     "index": 0, "total": 2, "base_url": "", "student": student, "last_name": name,
                     "first_name": name, "notebook_path": f"/autograded/{student}/{NOTEBOOK}"}
        return {"student": env.get_template("manage_students_assignments.tpl").render(base_url="", student_id=student),
                "grading": exporter.from_filename(str(notebook), resources=resources)[0]}

    honest = pages(HONEST, None)
    ran = []
    for student, name in ((HOSTILE_IDS[0], HOSTILE_NAME), (HOSTILE_IDS[1], None)):
        for page, text in pages(student, name).items():
            extra = Counter(active_content(text)) - Counter(active_content(honest[page]))
            breakout = f'"eve";{SCRIPT}' in text  # the id's quote closed the page's script string
            shown = name if page == "grading" and name else student  # the grading page shows the names it has
            ran += [(page, student[:5])] if extra or breakout else []
            if guarded:
                assert shown not in text and str(escape(shown)) in text, f"{page}: the id or name is shown, as text"
    if guarded:
        assert not ran, ran
    else:  # the control: each page runs one of them
        assert {page for page, _ in ran} == {"student", "grading"}, ran


@pytest.mark.parametrize("guard_first", [True, False], ids=["guard first", "guard last"])
def test_the_formgrader_pages_come_from_the_kits_templates(graded, guard_first):
    """autograder.nbgrader_glue.formgrader_pages, in either order with the guard: the .tpl pages extend the kit's base.tpl (a lang,
    landmarks) and stay escaped, and the grading page is kit_formgrade's (named score fields), its names escaped."""
    from autograder.nbgrader_glue.formgrader_guard import guard
    from autograder.nbgrader_glue.formgrader_pages import use_kit_templates

    env, exporter = nbgrader_pages(guarded=False)
    settings = {"nbgrader_jinja2_env": env, "nbgrader_exporter": exporter}
    for adjust in ((guard, use_kit_templates) if guard_first else (use_kit_templates, guard)):
        assert adjust(settings)
    before = (env.loader, settings["nbgrader_exporter"].exporter)  # the guard's wrapper, in either order
    assert use_kit_templates(settings) and (env.loader, settings["nbgrader_exporter"].exporter) == before
    student = env.get_template("manage_students_assignments.tpl").render(base_url="", student_id=HOSTILE_IDS[1])
    assert '<html lang="en">' in student and "<main" in student and 'role="none"' in student
    assert HOSTILE_IDS[1] not in student and str(escape(HOSTILE_IDS[1])) in student
    notebook = graded / "autograded" / HONEST / ASSIGNMENT.name / NOTEBOOK
    resources = {"assignment_id": ASSIGNMENT.name, "notebook_id": Path(NOTEBOOK).stem, "submission_id": "x",
                 "index": 0, "total": 2, "base_url": "", "student": HOSTILE_IDS[1], "last_name": None,
                 "first_name": None, "notebook_path": f"/autograded/{HONEST}/{NOTEBOOK}"}
    grading = settings["nbgrader_exporter"].from_filename(str(notebook), resources=resources)[0]
    assert '<html lang="en">' in grading and 'aria-label="Score for answer_zeroing, out of 2.0"' in grading
    assert HOSTILE_IDS[1] not in grading and str(escape(HOSTILE_IDS[1])) in grading


# ------------------------------------------------------------------------------ in a browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(graded, hostile_rows):
    """`jupyter server` at the course root (the formgrader is its nbgrader extension, and the kit's
    autograder.nbgrader_glue.formgrader_guard), stopped by its pid; the gradebook holds `hostile_rows`."""
    port, token = free_port(), secrets.token_hex(16)
    log = (graded.parent / f"{graded.name}-server.log").open("w+")
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter"), "server", "--no-browser", "--allow-root", f"--port={port}",
         "--ip=127.0.0.1", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={graded}",
         f"--config={graded / 'jupyter_server_config.py'}"],
        cwd=graded, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail("jupyter server did not start:\n" + Path(log.name).read_text()[-3000:])
                time.sleep(0.2)
        yield base, token
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        os.unlink(log.name)


def visit(browser, url: str, wait_for_request: str = "", login: str = ""):
    """Open `url` in a fresh context (after `login`); what it logged, requested, popped up, and its final title."""
    context = browser.new_context()
    page = context.new_page()
    if login:  # as the instructor does: log in to the server (its cookie is for the whole server), then grade
        page.goto(login, wait_until="load", timeout=30000)
    seen = {"console": [], "requests": [], "dialogs": [], "responses": {}}
    page.on("console", lambda message: seen["console"].append(message.text))
    page.on("request", lambda request: seen["requests"].append(f"{request.method} {request.url}"))
    page.on("response", lambda response: seen["responses"].setdefault(response.url, response))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    try:
        if wait_for_request:
            with page.expect_response(lambda r: wait_for_request in r.url, timeout=20000):
                page.goto(url, wait_until="load", timeout=30000)
        else:
            page.goto(url, wait_until="load", timeout=30000)
        page.wait_for_timeout(1500)  # onerror/onload handlers and fetches fire after load
        seen["title"] = page.title()
        seen["text"] = page.text_content("body") or ""  # hidden elements too (the formgrader hides names)
        seen["hrefs"] = page.eval_on_selector_all("#notebook a[href], body a[href]", "els => els.map(e => e.href)")
        seen["backbone"] = page.evaluate("typeof window.Backbone")
    finally:
        context.close()
    return seen


def assert_nothing_ran(seen: dict, course: Path) -> None:
    assert MARKER not in seen["title"], seen["title"]
    assert not [m for m in seen["console"] if MARKER in m], seen["console"]
    assert not seen["dialogs"], seen["dialogs"]
    # By path: the formgrader's own API calls may hold a hostile id's text in theirs.
    reached = [r for r in seen["requests"]
               if urllib.parse.urlsplit(r.split(" ", 1)[1]).path.startswith(("/api/contents", "/api/terminals"))]
    assert not reached, reached
    assert not [h for h in seen["hrefs"] if h.lower().startswith(("javascript:", "data:", "vbscript:"))], seen["hrefs"]
    assert not (course / OWNED).exists()


def test_the_formgrader_page_runs_no_payload_in_a_browser(graded, server, browser):
    from nbgrader.api import Gradebook

    base, token = server
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}", "dl01") as gb:
        submission_id = gb.find_submission_notebook(Path(NOTEBOOK).stem, ASSIGNMENT.name, HOSTILE).id
    start = time.monotonic()
    url = f"{base}/formgrader/submissions/{submission_id}/"
    seen = visit(browser, url, wait_for_request="/formgrader/api/grades", login=f"{base}/api/status?token={token}")
    print(f"\n[formgrader] page opened and watched in {time.monotonic() - start:.1f} s; "
          f"{len(seen['requests'])} requests")
    assert_nothing_ran(seen, graded)
    # It shows the answers SanitizeMarkdown wrote at grading time: their format characters as escapes.
    assert not LAYOUT_CHARACTERS.findall(seen["text"]) and "The layer's output \\u2067" in seen["text"]
    # The formgrader still works under the course's CSP: its scripts loaded and it talked to its own API.
    assert seen["backbone"] == "function" or seen["backbone"] == "object", seen["backbone"]
    grades = [r.status for u, r in seen["responses"].items() if "/formgrader/api/grades" in u]
    assert grades == [200], grades
    page = next(r for u, r in seen["responses"].items() if f"/formgrader/submissions/{submission_id}" in u)
    assert page.status == 200
    assert "object-src 'none'" in (page.headers.get("content-security-policy") or ""), page.headers


def test_the_feedback_page_runs_no_payload_in_a_browser(graded, browser):
    seen = visit(browser, feedback_page(graded, HOSTILE).as_uri())
    assert_nothing_ran(seen, graded)


def test_the_same_payloads_run_without_sanitising(graded, browser, tmp_path):
    """Control: the submitted notebook rendered by the same template, opened the same way, does run them."""
    page = tmp_path / "unsanitised.html"
    page.write_text(formgrade_html(graded, HOSTILE, graded / "submitted" / HOSTILE / ASSIGNMENT.name / NOTEBOOK))
    seen = visit(browser, page.as_uri())
    assert MARKER in seen["title"] or any(MARKER in m for m in seen["console"]), seen["console"][:5]


def test_the_formgrader_typesets_maths_from_the_servers_own_mathjax(graded, server, browser):
    """Written answers' maths renders in the formgrader with no network: MathJax comes from the server's copy, and
    the answer's cursor style asks nothing of another server. It draws only inside its own cell: the score, extra
    credit and comment fields below it and the rubric above it stay on top of the answer's "PASS" boxes."""
    from nbgrader.api import Gradebook

    base, token = server
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}", "dl01") as gb:
        submission_id = gb.find_submission_notebook(Path(NOTEBOOK).stem, ASSIGNMENT.name, HOSTILE).id
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    console: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda message: console.append(message.text))
    try:
        page.goto(f"{base}/api/status?token={token}", wait_until="load", timeout=30000)
        page.goto(f"{base}/formgrader/submissions/{submission_id}/", wait_until="load", timeout=30000)
        page.wait_for_function("window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 && "
                               "document.querySelector('.MathJax, .MathJax_Display')", timeout=20000)
        typeset = page.eval_on_selector_all(".MathJax", "els => els.length")
        page.get_by_text("point here").first.hover()  # a cursor image loads when the pointer is over it
        page.wait_for_timeout(500)
        fields = page.evaluate(ON_TOP, "[id^='answer_zeroing'], .kit-rubric")
        covered = [field for field in fields if field[1]]
    finally:
        context.close()
    local = [url for url in requests if "/static/jupyter_server_mathjax/MathJax.js" in url]
    assert local and not [url for url in requests if not url.startswith(base)], requests
    assert len([field for field in fields if field[0].strip().startswith("Rubric for graders")]) == 3, fields
    assert not covered, covered
    assert not [line for line in console if "404" in line or "Refused" in line], console
    assert typeset >= 1  # $\mathbf{w}$ in the hostile student's first written answer


@pytest.fixture(scope="module")
def hostile_rows(graded):
    """HOSTILE_IDS in the gradebook through nbgrader's API, each with a submission and an autograded notebook (the
    honest one's); the first named HOSTILE_NAME. Their submission ids."""
    from nbgrader.api import Gradebook

    submissions = []
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}", "dl01") as gb:
        for student, name in zip(HOSTILE_IDS, (HOSTILE_NAME, None)):
            gb.add_student(student, first_name=name, last_name=name)
            gb.add_submission(ASSIGNMENT.name, student)
            submissions.append(gb.find_submission_notebook(Path(NOTEBOOK).stem, ASSIGNMENT.name, student).id)
            shutil.copytree(graded / "autograded" / HONEST, graded / "autograded" / student)
    return submissions


def formgrader_pages(submissions: list[str]) -> dict[str, tuple[str, str, list[str]]]:
    """page: (its path, the formgrader API response it waits for, what it must show as text)."""
    student = "/formgrader/manage_students/{}"
    return {
        "manage-students": ("/formgrader/manage_students", "/formgrader/api/students", [*HOSTILE_IDS, HOSTILE_NAME, HONEST]),
        "student-script": (student.format(urllib.parse.quote(HOSTILE_IDS[0], safe="")), "", [HOSTILE_IDS[0]]),
        "student-html": (student.format(urllib.parse.quote(HOSTILE_IDS[1], safe="")), "", [HOSTILE_IDS[1]]),
        "gradebook": (f"/formgrader/gradebook/{ASSIGNMENT.name}/{Path(NOTEBOOK).stem}",
                      "/formgrader/api/submitted_notebooks/", [HOSTILE_NAME, HOSTILE_IDS[1], HONEST]),  # names if any
        "grading-names": (f"/formgrader/submissions/{submissions[0]}/", "/formgrader/api/grades", [HOSTILE_NAME]),
        "grading-id": (f"/formgrader/submissions/{submissions[1]}/", "/formgrader/api/grades", [HOSTILE_IDS[1]]),
    }


@pytest.mark.parametrize("name", ["manage-students", "student-script", "student-html", "gradebook", "grading-names",
                                  "grading-id"])
def test_the_formgrader_shows_a_hostile_id_as_text_in_a_browser(graded, server, browser, hostile_rows, name):
    """Manage Students, a student's page, the Gradebook's list and the grading page, each opened as the instructor
    opens them: no script runs, no request reaches /api/contents, no file is written, and the id reads as text."""
    base, token = server
    path, api, shown = formgrader_pages(hostile_rows)[name]
    start = time.monotonic()
    seen = visit(browser, base + path, wait_for_request=api, login=f"{base}/api/status?token={token}")
    print(f"\n[formgrader] {name} page opened and watched in {time.monotonic() - start:.1f} s")
    assert_nothing_ran(seen, graded)
    for text in shown:
        assert text in seen["text"], (text[:12], seen["text"][-800:])


def test_the_student_page_runs_the_id_without_the_guard(browser, tmp_path):
    """Control: the student page as nbgrader renders it (no escaping), opened the same way, does run the id."""
    env, _ = nbgrader_pages(guarded=False)
    for number, student in enumerate(HOSTILE_IDS):
        page = tmp_path / f"student-{number}.html"
        page.write_text(env.get_template("manage_students_assignments.tpl").render(base_url="", student_id=student))
        seen = visit(browser, page.as_uri())
        assert MARKER in seen["title"], (student[:12], seen["console"][:5])


def readable_pages(course: Path) -> dict[str, str]:
    """Every formgrader page the kit serves, by name: its path from the server's root (the honest student's)."""
    from nbgrader.api import Gradebook

    stem = Path(NOTEBOOK).stem
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "dl01") as gb:
        submission_id = gb.find_submission_notebook(stem, ASSIGNMENT.name, HONEST).id
    return {
        "manage-assignments": "/formgrader",
        "manage-submissions": f"/formgrader/manage_submissions/{ASSIGNMENT.name}",
        "gradebook": "/formgrader/gradebook",
        "gradebook-assignment": f"/formgrader/gradebook/{ASSIGNMENT.name}",
        "gradebook-notebook": f"/formgrader/gradebook/{ASSIGNMENT.name}/{stem}",
        "manage-students": "/formgrader/manage_students",
        "student": f"/formgrader/manage_students/{HONEST}",
        "student-assignment": f"/formgrader/manage_students/{HONEST}/{ASSIGNMENT.name}",
        "grading": f"/formgrader/submissions/{submission_id}/",
    }


# What a page's state needs before the check: clicks (a dialog, the folding panels), then a JavaScript condition.
DIALOG_SHOWN = "document.querySelector('.modal.in') && getComputedStyle(document.querySelector('.modal.in')).opacity == 1"
PAGE_STATES = {
    "manage-assignments": ((), ""),
    "manage-assignments, instructions open": (("#headingOne a",), "document.querySelector('#collapseOne.in')"),
    "manage-assignments, configuration open": (("#headingConfig a",), "document.querySelector('#collapseConfig.in')"),
    "manage-assignments, editing": (("td.edit a",), DIALOG_SHOWN),
    "manage-assignments, adding": (("a:has-text('Add new assignment')",), DIALOG_SHOWN),
    "manage-submissions": ((), ""),
    "gradebook": ((), ""),
    "gradebook-assignment": ((), ""),
    "gradebook-notebook": ((), ""),
    "manage-students": ((), ""),
    "manage-students, adding": (("a:has-text('Add new student')",), DIALOG_SHOWN),
    "manage-students, editing": (("td.edit a",), DIALOG_SHOWN),
    "student": ((), ""),
    "student-assignment": ((), ""),
    "grading": ((), "document.querySelector('input.score')"),
    "grading, help": ((".help",), DIALOG_SHOWN),
}


@pytest.mark.parametrize("name", list(PAGE_STATES))
def test_every_formgrader_page_reads_for_everyone(graded, server, browser, name):
    """No critical or serious axe-core violation (a lang, contrast, links told apart by more than colour, labelled
    score fields, named icon links and dialogs, landmarks, list markup) on each page, as the instructor opens it,
    and with its dialogs and folding panels open."""
    base, token = server
    clicks, ready = PAGE_STATES[name]
    assert_page_readable(browser, base + readable_pages(graded)[name.split(",")[0]], name,
                         login=f"{base}/api/status?token={token}", clicks=clicks, ready=ready)


def test_nbgraders_own_grading_page_does_not_read_for_everyone(graded, browser, tmp_path):
    """Control for the test above: the same submission on nbgrader's own `formgrade` template, opened from a file,
    has the violations the kit's template removes (no lang, score fields without a name)."""
    page_file = tmp_path / "stock-grading.html"
    page_file.write_text(formgrade_html(graded, HONEST, kit=False))
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(page_file.as_uri(), wait_until="load", timeout=30000)
        found = {v["id"] for v in blocking_violations(page, "nbgrader's grading page")}
    finally:
        context.close()
    assert {"html-has-lang", "label"} <= found, found
