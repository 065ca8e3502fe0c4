"""The class page (`make class-page`, autograder/outputs/class_page.py) after `make grade` on the demo class.

The page is checked with html.parser (structure, every plot a PNG), and rendered in headless Chromium
(Debian's /usr/bin/chromium through Playwright, as tests/test_formgrader_browser.py does): no console
error, every plot shown, and neither it nor the page a student who could not be graded gets has a critical or
serious axe-core violation (tests/axe.py). Without a browser that part is skipped, saying so; the html.parser
checks ran.
"""
from __future__ import annotations

import base64
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from axe import assert_page_readable

from autograder.classroom.demo import write_demo_class
from conftest import ASSIGNMENT, NOTEBOOK, ROOT, SCREENSHOTS, course_copy, grade_class

pytestmark = pytest.mark.slow
BROKEN = "broken"  # a student whose file is not a notebook: "could not be graded"
NAMED = '<b onmouseover="x">'  # a message-like string a student controls must come out escaped


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images, self.ids, self.scripts, self.rows, self.items = [], set(), 0, {}, {}
        self._table = self._list = None
        self._cells: list[str] | None = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "img":
            self.images.append(attrs)
        if tag == "script" or any(name.startswith("on") for name in attrs):
            self.scripts += 1
        if tag == "table":
            self._table = attrs.get("id")
            self.rows[self._table] = []
        if tag == "ul":
            self._list = attrs.get("id")
            self.items[self._list] = []
        if tag == "tr":
            self._cells = []
        if tag in ("td", "th", "li"):
            self._text = ""

    def handle_data(self, data):
        self._text += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cells is not None:
            self._cells.append(self._text.strip())
        if tag == "tr" and self._cells is not None:
            self.rows[self._table].append(self._cells)
            self._cells = None
        if tag == "li" and self._list:
            self.items[self._list].append(" ".join(self._text.split()))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    course = course_copy(tmp_path_factory.mktemp("course"))
    submitted = course / "submitted"
    write_demo_class(ASSIGNMENT, submitted)
    twin = submitted / "twin" / ASSIGNMENT.name  # the same work as edsger: one mistake that two students share
    twin.mkdir(parents=True)
    (twin / NOTEBOOK).write_bytes((submitted / "edsger" / ASSIGNMENT.name / NOTEBOOK).read_bytes())
    (submitted / BROKEN / ASSIGNMENT.name).mkdir(parents=True)
    (submitted / BROKEN / ASSIGNMENT.name / NOTEBOOK).write_text("this is not json {")
    graded = grade_class(course)
    assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-3000:]
    made = subprocess.run([sys.executable, "-m", "autograder", "class-page"], cwd=course, capture_output=True, text=True,
                          timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    page = course / "reports" / f"{ASSIGNMENT.name}.html"
    assert page.is_file() and f"Wrote {page}" in made.stdout
    course.joinpath("summary.txt").write_text(graded.stdout)
    return course, page


def first_failures(course) -> dict[str, dict[str, str]]:
    """student -> part -> its first failing check's message, read from the reports grading wrote."""
    from autograder.outputs.class_page import first_failures
    from autograder.report import Report

    return {path.parent.parent.name: first_failures(Report.load(path))
            for path in (course / "autograded").glob(f"*/{ASSIGNMENT.name}/report.json")}


def test_the_page_holds_every_section(report):
    course, page = report
    parsed = Page()
    parsed.feed(page.read_text())
    assert {"histogram", "pass-rates", "parts", "messages", "limits", "not-graded", "summary"} <= parsed.ids
    assert parsed.scripts == 0, "the page runs nothing"
    assert len(parsed.images) == 2
    for image in parsed.images:
        assert image["src"].startswith("data:image/png;base64,")
        assert base64.b64decode(image["src"].split(",", 1)[1]).startswith(b"\x89PNG\r\n\x1a\n")
        assert image.get("alt")
    parts = parsed.rows["parts"][1:]
    assert [row[0] for row in parts] == [cell.grade_id for cell in ASSIGNMENT.grade_cells]
    assert [row[1] for row in parts][3:5] == ["SGD.zero_grad()", "SGD.step()"], "titles beside the ids"
    assert all(row[3].endswith("%") for row in parts)
    messages = parsed.rows["messages"][1:]
    assert messages and all(row[0].isdigit() and int(row[0]) >= 1 for row in messages)
    counts = [int(row[0]) for row in messages]
    assert counts == sorted(counts, reverse=True), "most frequent first"
    top_count, top_parts, top_message = int(messages[0][0]), messages[0][1], messages[0][2]
    assert top_count >= 2, "twin and edsger share their mistakes"
    failures = first_failures(course)
    seen_by = {student for student, parts in failures.items() if top_message in parts.values()}
    assert len(seen_by) == top_count, (top_parts, top_message, seen_by)
    shown = [row[2] for row in messages]
    assert len(shown) == len(set(shown)), "one row per message, however many parts it failed"
    assert all(message in shown for message in failures["alan"].values())  # each first failure has its row
    assert any(item.startswith("donald: ") and "time" in item for item in parsed.items["limits"]), parsed.items["limits"]
    broken = [item for item in parsed.items["not-graded"] if item.startswith(f"{BROKEN}: ")]
    assert broken and "not a readable notebook" in broken[0], parsed.items["not-graded"]


def test_student_text_is_escaped():
    from collections import Counter

    from autograder.outputs.class_page import ClassData, render

    data = ClassData("a", [("test_x", 2.0)], 2.0, scores={NAMED: 1.0}, part_scores={NAMED: {"test_x": 1.0}},
                     messages=Counter({NAMED: 1}), message_parts={NAMED: {"test_x"}}, limits={NAMED: {"time"}},
                     not_graded={"s": NAMED}, titles={"test_x": NAMED})
    page = render(data)
    assert NAMED not in page and "&lt;b onmouseover=" in page


def test_the_histogram_counts_whole_students():
    from autograder.outputs.class_page import ClassData, histogram

    data = ClassData("a", [("test_x", 18.0)], 18.0, scores={"s1": 18.0, "s2": 18.0, "s3": 3.0})
    ticks = histogram(data).axes[0].get_yticks()
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks


def test_the_summary_and_the_report_give_one_mean(report):
    course, page = report
    summary = (course / "summary.txt").read_text()
    mean = summary.split("graded; mean ", 1)[1].split(" ", 1)[0]
    assert f"mean autograded score {mean} of" in page.read_text(), (mean, summary)


def test_one_rounding_rule_for_the_mean():
    from autograder.outputs.counts import mean_points

    assert mean_points([11.255]) == "11.26" and mean_points([11.25, 11.26]) == "11.26"  # halves round up
    assert mean_points([13.2, 18, 0.38 + 0.82]) == mean_points([13.2, 18.0, 1.2]) == "10.80"
    assert mean_points([]) == "0.00"


def test_make_class_page_runs_the_cli():
    done = subprocess.run(["make", "-n", "class-page"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and "-m autograder class-page --assignment dl01_6_3" in done.stdout


def test_the_page_renders_in_a_browser(report, browser):
    _, page_path = report
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(page_path.as_uri(), wait_until="load", timeout=30000)
        widths = page.eval_on_selector_all("img", "els => els.map(e => e.complete ? e.naturalWidth : 0)")
        title = page.title()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "class-report.png"), full_page=True)
    finally:
        context.close()
    assert not errors, errors
    assert len(widths) == 2 and all(width > 0 for width in widths), widths
    assert title == f"{ASSIGNMENT.name}: where the class stands"


@pytest.mark.parametrize("name", ["class page", "not-graded page"])
def test_the_pages_read_for_everyone(report, browser, name):
    course, page_path = report
    if name == "not-graded page":  # the feedback page of a student whose file is not a notebook
        page_path = course / "feedback" / BROKEN / ASSIGNMENT.name / Path(NOTEBOOK).with_suffix(".html").name
    assert_page_readable(browser, page_path.as_uri(), name)
