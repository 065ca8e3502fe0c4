"""Feedback pages without nbconvert's BeautifulSoup pass are the pages stock nbconvert writes (autograder/outputs/feedback.py).

The demo class `make grade` grades, and three hostile students, are graded by `python -m autograder class` on a
fresh course copy; then three of them get a grader's comment, two holding markup. Each autograded notebook is then
exported twice in this process, from the same gradebook: by the kit's FeedbackExporter, and as the kit exported
it before (`Stock`: HTMLExporter.from_notebook_node with its soup pass, HTMLExporter.markdown2html, nbgrader's
GetGrades._get_score followed by a second query). Then, page by page:

* the stock page is the kit's page as BeautifulSoup writes it back: the same tree, so the same text, attributes,
  alt texts and tab stops; where the soup pass had something to do (an image, a `jp-Notebook` class, markup that
  does not nest, a comment with markup), the kit ran it, and the two pages are the same bytes;
* parsed with html.parser, both give every <img> an alt, the same tabindex to every input wrapper and output div
  (classic's and lab's), and the same visible text.

Without grading (milliseconds): the highlight memo returns pygments' HTML, `soup_keeps` judges fragments as
BeautifulSoup would rewrite them, `plain_notebook` sends raw cells, rich outputs and marked-up comments to the
soup pass, the memo keeps within its bound, and the released notebook renders to the same page both ways.
"""
from __future__ import annotations

import copy
import json
import shutil
from html.parser import HTMLParser

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import GetGrades
from test_catalogue_hostile import fresh_course

from autograder.assignment import find_assignment
from autograder.classroom.demo import ROSTER, with_answers, write_demo_class
from autograder.classroom.feedback_pages import GenerateFeedbackFor
from autograder.outputs import feedback
from autograder.outputs.feedback import FeedbackExporter, MemoHighlight, needs_soup_pass, plain_notebook, soup_keeps
from autograder.settings import load_config
from conftest import ASSIGNMENT, NOTEBOOK, ROOT, grade_class, release_notebook, solution_notebook

PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAAAAAAAA"  # a 2x2 PNG's signature and header
# Written answers that SanitizeMarkdown leaves (or makes) inert, each making the soup pass matter or not.
HOSTILE = {
    "mallory": {  # images: an alt is missing, so the page takes the soup pass
        "answer_zeroing": f'Raw <img src="{PNG}"> and <IMG SRC="{PNG}"> without alt, and ![pasted]({PNG}).',
    },
    "trudy": {  # markup that does not nest, which the sanitiser writes back nested: no soup pass needed
        "answer_zeroing": "</div></div>closes the page's own divs",
        "answer_outside_graph": '<div class="highlight">never closed',
    },
    "eve": {  # markup that does nest: classes the sanitiser keeps or drops, encoded or not; the fast path
        "answer_zeroing": ('<div class="highlight">kept</div> <div class="jp-Notebook"><div class="jp-Cell-inputWrapper">'
                           'classes dropped</div></div> <span class="&#107;">encoded k</span> <b>bold</b> H<sub>2</sub>O'
                           '<br> $a<b$ `<img src=x>` &amp; &nbsp; &#39;'),
        "answer_outside_graph": "| a | b |\n| --- | :-: |\n| <q>1</q> | 2 |\n\n```python\nx = '<img>'\n```",
    },
}
# A grader's comment is not sanitised: markup that gets tab stops from the soup pass, literally and encoded, and
# a comment without markup, which keeps its page on the fast path.
COMMENTS = {
    "mallory": '<div class="jp-Notebook"><div class="jp-Cell-inputWrapper">a grader\'s markup</div></div>',
    "alan": '<div class="jp&#45;Notebook"><div class="jp-OutputArea-output">encoded</div></div>',
    "barbara": "Well argued; compare `step()` & *no_grad()*.",
}
SOUP_PASS = {"mallory", "alan"}  # alan's page: for the comment alone
INPUT_WRAPPERS = ("jp-Cell-inputWrapper", "input_area", "inner_cell")
OUTPUT_DIVS = ("jp-OutputArea-output", "output_area", "output_subarea")


class BeforeGrades(GetGrades):
    """FeedbackGrades as it was: nbgrader's _get_score, then the same row read again (and the points that wait for
    a grader added up, for the total)."""

    def preprocess(self, nb, resources):
        self.not_graded = 0.0
        nb, resources = super().preprocess(nb, resources)
        resources["nbgrader"]["kit_not_graded"] = self.not_graded
        return nb, resources

    def _get_score(self, cell, resources) -> None:
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        cell.metadata.setdefault("kit", {})["needs_manual_grade"] = bool(grade.needs_manual_grade)
        self.not_graded += grade.max_score if grade.needs_manual_grade else 0.0


class Stock(FeedbackExporter):
    """The kit's exporter with nbconvert's own page and markdown steps: the soup pass on every page, no memo."""

    from_notebook_node = HTMLExporter.from_notebook_node
    markdown2html = HTMLExporter.markdown2html


@pytest.fixture(scope="module")
def course():
    course = fresh_course()
    assignment = find_assignment(course, ASSIGNMENT.name)
    students = write_demo_class(assignment, course / "submitted")
    for student, answers in HOSTILE.items():
        notebook = with_answers(solution_notebook(), release_notebook(), answers)
        folder = course / "submitted" / student / ASSIGNMENT.name
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_text(json.dumps(notebook, indent=1))
    run = grade_class(course)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "dl01") as gb:
        for student, comment in COMMENTS.items():
            gb.find_comment("answer_zeroing", "modules_and_sgd", ASSIGNMENT.name, student).manual_comment = comment
        gb.db.commit()
    assert set(students) == {*ROSTER, "blank"}
    yield course, sorted([*students, *HOSTILE])
    shutil.rmtree(course, ignore_errors=True)


def export(course, student: str, exporter_class, grades=None) -> str:
    """`student`'s feedback page, as generate_feedback's converter makes it (with `grades` for FeedbackGrades)."""
    config = load_config(course)
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = ASSIGNMENT.name
    app = GenerateFeedbackFor(coursedir=coursedir, config=config, students=[student])
    exporter = exporter_class(parent=app, config=app.config)
    for preprocessor in app.preprocessors:
        exporter.register_preprocessor(grades if grades and preprocessor.endswith(".FeedbackGrades") else preprocessor)
    path = str(course / "autograded" / student / ASSIGNMENT.name / NOTEBOOK)
    return exporter.from_filename(path, resources=app.init_single_notebook_resources(path))[0]


@pytest.fixture(scope="module")
def pages(course):
    root, students = course
    return {student: (export(root, student, FeedbackExporter), export(root, student, Stock, BeforeGrades))
            for student in students}


def tab_stops(page: str) -> list[tuple[str, str | None]]:
    """Each input wrapper and output div of `page`, in order, with its tabindex."""
    soup = BeautifulSoup(page, "html.parser")
    return [(" ".join(div.get("class", [])), div.get("tabindex")) for div in soup.find_all("div")
            if set(div.get("class", [])) & {*INPUT_WRAPPERS, *OUTPUT_DIVS}]


def visible_text(page: str) -> str:
    soup = BeautifulSoup(page, "html.parser")
    for hidden in soup(["script", "style", "head"]):
        hidden.decompose()
    return soup.get_text()


@pytest.mark.slow
def test_the_stock_page_is_the_kit_page_written_back_by_beautifulsoup(pages):
    for student, (kit, stock) in pages.items():
        if student in SOUP_PASS:
            assert kit == stock, f"{student}'s page needed the soup pass"
        else:  # (and that pass was left out: its page is not BeautifulSoup's)
            assert str(BeautifulSoup(kit, "html.parser")) == stock != kit, student


@pytest.mark.slow
def test_every_image_has_alt_text_and_the_tab_stops_agree(pages):
    for student, (kit, stock) in pages.items():
        for page in (kit, stock):
            assert all(img.has_attr("alt") for img in BeautifulSoup(page, "html.parser").find_all("img")), student
        assert tab_stops(kit) == tab_stops(stock), student
        assert len(tab_stops(kit)) > 20, student
    mallory = BeautifulSoup(pages["mallory"][0], "html.parser")
    assert len(mallory.find_all("img")) == 3 and mallory.find("img", alt="pasted")
    for student in ("mallory", "alan"):  # the comment's wrapper or output div, and nothing else
        assert [tabindex for (_, tabindex) in tab_stops(pages[student][0]) if tabindex] == ["0"], student


@pytest.mark.slow
def test_the_visible_text_is_the_same(pages):
    for student, (kit, stock) in pages.items():
        assert visible_text(kit) == visible_text(stock), student
    assert "classes dropped" in visible_text(pages["eve"][0]) and "Linear.forward()" in visible_text(pages["ada"][0])
    assert "Well argued; compare step() & no_grad()." in visible_text(pages["barbara"][0])


@pytest.mark.slow
def test_the_pages_make_grade_wrote_are_the_kit_pages(course, pages):
    root, students = course
    for student in students:
        if student not in COMMENTS:  # the comments were added after make grade
            written = (root / "feedback" / student / ASSIGNMENT.name / NOTEBOOK.replace(".ipynb", ".html")).read_text()
            assert written == pages[student][0], student


# ------------------------------------------------------------------------------ without grading


class CountingHighlight(Highlight2HTML):
    calls = 0

    def __call__(self, source, language=None, metadata=None):
        CountingHighlight.calls += 1
        return super().__call__(source, language, metadata)


def test_the_highlight_memo_returns_what_pygments_makes():
    from IPython.lib.lexers import IPython3Lexer
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    memo = MemoHighlight(CountingHighlight(pygments_lexer="ipython3"))
    cells = [cell.source for cell in release_notebook().cells if cell.cell_type == "code"] + ["", "x = '<img>' & 1"]
    for source in cells + cells:
        expected = highlight(source or " ", IPython3Lexer(), HtmlFormatter(cssclass=" highlight hl-ipython3"))
        assert memo(source, metadata={}) == expected
    assert CountingHighlight.calls == len(set(cells)), "each distinct cell is highlighted once"
    shell = highlight("ls -l\n", get_lexer_by_name("bash"), HtmlFormatter(cssclass=" highlight hl-ipython3"))
    assert memo("ls -l\n", metadata={"magics_language": "bash"}) == shell
    assert memo("ls -l\n", language="python") != shell  # the same source, another lexer: another entry
    assert memo("ls -l\n") == highlight("ls -l\n", IPython3Lexer(), HtmlFormatter(cssclass=" highlight hl-ipython3"))


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_startendtag(self, tag, attrs):  # <br> and <br/> alike
        self.tags.append(tag)

    def handle_endtag(self, tag):
        self.tags.append("/" + tag)


def tags(fragment: str) -> list[str]:
    """The start and end tags of `fragment`, in order, as html.parser reads them."""
    parser = _Tags()
    parser.feed(fragment)
    parser.close()
    return parser.tags


NESTING = [  # (fragment, whether it nests as BeautifulSoup's tree keeps it)
    ("<p>plain <b>bold</b> <code>&lt;img&gt;</code><br>H<sub>2</sub>O</p>\n", True),
    ('<div class="highlight"><pre><span class="k">def</span></pre></div>', True),
    ("<!-- a comment --><p>x</p>", True),
    ("</div></div>oops", False),  # stray end tags, which BeautifulSoup drops and a browser obeys
    ('<div class="highlight">never closed', False),
    ("<b><i>x</b></i>", False),
    ("line<br></br>", False),  # a browser makes a second <br> of `</br>`
    ("<p/>x", False),  # a browser leaves the <p> open
]


@pytest.mark.parametrize(("fragment", "nested"), NESTING)
def test_soup_keeps_a_fragment_exactly_when_beautifulsoup_writes_its_tags_back(fragment, nested):
    assert soup_keeps(fragment) is nested
    assert (tags(str(BeautifulSoup(fragment, "html.parser"))) == tags(fragment)) is nested


@pytest.mark.parametrize("fragment", [
    "<!-- never closed", "<p>x</p><b",  # left in html.parser's rawdata: the page around it would be read otherwise
    '<div class="a jp-Notebook">x</div>', '<div class="jp&#45;Notebook">x</div>',  # tab stops inside
])
def test_soup_keeps_no_unfinished_markup_nor_the_lab_class(fragment):
    assert not soup_keeps(fragment)
    assert soup_keeps('<div class="jp-notebook">x</div>'), "class names match case-sensitively"


def test_needs_soup_pass_sees_images_in_any_case_and_the_lab_class():
    assert needs_soup_pass('<p><IMG src="x"></p>') and needs_soup_pass('<div class="x jp-Notebook">')
    assert not needs_soup_pass('<div class="input_area"><pre>&lt;img&gt;</pre></div>')


def test_only_a_plain_notebook_skips_the_soup_pass():
    notebook = release_notebook()
    code = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    notebook.cells[code].metadata.setdefault("nbgrader", {})["comment"] = "Well argued & *clear*."
    assert plain_notebook(notebook)
    for change in (
        lambda nb: nb.cells.append(nbformat.v4.new_raw_cell("<b>raw")),
        lambda nb: nb.cells[code].outputs.append(nbformat.v4.new_output("display_data", {"image/png": "iVBO"})),
        lambda nb: nb.cells[code].metadata.nbgrader.update(comment="see <b>this</b>"),
    ):
        changed = copy.deepcopy(notebook)
        change(changed)
        assert not plain_notebook(changed)


def test_the_memo_empties_itself_past_its_limit():
    memo = feedback.Memo(limit=10)
    assert memo.get("a", lambda: "A", 6) == "A" and memo.get("a", lambda: "other", 6) == "A"
    assert memo.get("b", lambda: "B", 6) == "B" and "a" not in memo.items and memo.size == 6


def test_the_released_notebook_renders_offline_the_same_both_ways():
    """No course, no gradebook: the kit's exporter on the plain release, against the stock soup pass."""
    notebook = nbformat.read(str(ASSIGNMENT.root / "release" / ASSIGNMENT.name / NOTEBOOK), as_version=4)
    for cell in notebook.cells:  # what GetGrades would read from a gradebook
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader.score = 0.0
    resources = {"nbgrader": {"notebook": "modules_and_sgd", "score": 0, "max_score": 24, "late_penalty": 0}}
    config = GenerateFeedbackFor(config=load_config(ROOT)).config  # the templates' folders, nbgrader's CSS
    kit = FeedbackExporter(config=config).from_notebook_node(notebook, resources=dict(resources))[0]
    stock = Stock(config=config).from_notebook_node(notebook, resources=dict(resources))[0]
    assert str(BeautifulSoup(kit, "html.parser")) == stock


class _OneGrade:
    """A gradebook holding one grade, waiting for a grader (what FeedbackGrades reads of it)."""

    def find_grade(self, grade_id, notebook, assignment, student):
        return type("Grade", (), {"score": 0.0, "auto_score": None, "max_score": 2.0, "needs_manual_grade": True})()


@pytest.mark.parametrize("kit", ["not an object", ["needs_manual_grade"], {"needs_manual_grade": False, "x": 1}])
def test_a_students_own_kit_metadata_is_not_read_for_the_page(kit):
    """`metadata.kit` is the key the page reads a grade's state from (`needs_manual_grade`), and a submission may hold
    one of its own on any cell: a string or a list there stopped the student's feedback page (and `make grade` named
    it nbgrader's failure). The page's key is the kit's alone, whatever the submission held."""
    from autograder.outputs.feedback import FeedbackGrades

    grades = FeedbackGrades()
    grades._prefetched = _OneGrade()
    grades.notebook_id, grades.assignment_id, grades.student_id = "n", "a", "s"
    cell = nbformat.v4.new_markdown_cell("my answer", metadata={"nbgrader": {"grade_id": "answer_x", "grade": True},
                                                               "kit": copy.deepcopy(kit)})
    grades._get_score(cell, {})
    assert cell.metadata["kit"] == {"needs_manual_grade": True, "in_review": False}


@pytest.mark.parametrize("grade, shown, total", [
    # a written answer graded 2, flagged for review (the student rewrote it): its points wait again (X26-a17-5)
    ({"auto_score": None, "manual_score": 2.0, "score": 2.0, "needs_manual_grade": True}, (0.0, True, False), (0.0, 2.0)),
    # an override of 2.5 on a part whose code changed since: the checks' 1.5 of the code now, the override in review
    ({"auto_score": 1.5, "manual_score": 2.5, "score": 2.5, "needs_manual_grade": True}, (1.5, False, True), (1.5, 0.0)),
    ({"auto_score": 1.5, "manual_score": 2.5, "score": 2.5, "needs_manual_grade": False}, (2.5, False, False), (2.5, 0.0)),
], ids=["flagged written answer", "flagged override", "override"])
def test_a_grade_waiting_for_review_counts_as_its_autograded_score_alone(grade, shown, total):
    """The page's cell and total and grades.csv's raw_score (so the Canvas partial total) take a grade from one rule
    (export.grade_so_far): a hand grade flagged for review counts as its autograded score alone."""
    from autograder.outputs.export import so_far
    from autograder.outputs.feedback import FeedbackGrades

    row = type("Grade", (), {"max_score": 2.0, **grade})()
    grades = FeedbackGrades()
    grades._prefetched = type("Book", (), {"find_grade": lambda self, *names: row})()
    grades.notebook_id, grades.assignment_id, grades.student_id = "n", "a", "s"
    cell = nbformat.v4.new_code_cell("x", metadata={"nbgrader": {"grade_id": "part", "grade": True}})
    grades._get_score(cell, {})
    assert (cell.metadata.nbgrader.score, cell.metadata.kit["needs_manual_grade"], cell.metadata.kit["in_review"]) == shown
    assert so_far([row]) == total
