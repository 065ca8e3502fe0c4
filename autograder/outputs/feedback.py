"""The kit's feedback pages: nbgrader's generate_feedback with a template and two preprocessors of its own.

* `FeedbackExporter` (c.GenerateFeedback.exporter_class): nbgrader's HTMLExporter with the template
  autograder/templates/kit_feedback (each part's title (c.GraderSettings.part_titles), id and score in the
  index and above its cell, written answers not graded yet said so, FAIL lines in red and wrapped, and no
  `Out[1]: 2` under a check cell: that result is the part's score for nbgrader, already in the heading) and MathJax 2 from the course's own copy: the files of the
  pinned `jupyter-server-mathjax` package, copied once into feedback/_static/mathjax/, which each page loads
  by a relative path, so maths renders from file:// with no network.
* `FeedbackGrades` (in c.GenerateFeedback.preprocessors, in place of nbgrader's GetGrades): GetGrades, plus
  whether each grade still waits for a grader (`needs_manual_grade`) and the points that wait, which the template
  shows (the total is out of the points graded so far, the rest named as not graded yet; a hand grade that waits for
  review counts as its autograded score alone, as in grades.csv and the Canvas file: export.so_far).
* `StripRubric`: the rubric `AddRubric` (autograder/nbgrader_glue/preprocessors/rubric.py) put into the autograded copy
  for the formgrader never reaches a student's page.

Cost: a page is rendered as nbconvert's HTMLExporter renders it, minus its last step, which parses the whole
page again with BeautifulSoup to add alt text and tab stops: on the kit's pages that step adds nothing, and it
runs only on a page where it could change something (`needs_soup_pass`, `soup_keeps`, `plain_notebook`). Syntax
highlighting and markdown are memoized per process, since the given cells come back the same in every
student's page, FeedbackGrades reads the notebook's grades and comments in one query each
(autograder/nbgrader_glue/gradebook_lookups.py), and the notebook is validated once, after the preprocessors, instead of when
it is read and after each of them (exporters.ValidatesOnce). docs/scaling.md has the CPU per page.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Hashable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup
from bs4.builder import HTMLTreeBuilder
from jinja2 import FileSystemLoader, pass_context
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbgrader.preprocessors import GetGrades, NbGraderPreprocessor
from traitlets import default

from ..nbgrader_glue.exporters import ValidatesOnce
from ..nbgrader_glue.gradebook_lookups import LookupsPrefetched
from ..settings import GraderSettings
from .export import grade_so_far, so_far, waits_for_grader
from .inert import code_as_run

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
READABLE = TEMPLATES / "readable"  # readable.css: contrast, links and wrapping every page of the kit shares
MATHJAX_DIR = "_static/mathjax"  # under feedback/
MATHJAX_QUERY = "?config=TeX-AMS-MML_HTMLorMML-full,Safe"


def mathjax_source() -> Path:
    """The MathJax 2 files the pinned jupyter-server-mathjax package ships."""
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).resolve().parent / "static"


def install_mathjax(feedback: Path) -> Path:
    """Copy MathJax into feedback/_static/mathjax once (atomically: feedback processes run side by side)."""
    target = feedback / MATHJAX_DIR
    if (target / "MathJax.js").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".mathjax-", dir=target.parent))
    try:
        shutil.copytree(mathjax_source(), scratch / "mathjax")
        for folder, _, files in os.walk(scratch / "mathjax"):  # readable by whoever is given the page
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
        os.rename(scratch / "mathjax", target)
    except OSError:
        if not (target / "MathJax.js").is_file():
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


class Memo:
    """Results of a pure function by key, for one process; emptied once keys and results pass `limit` characters.

    The bound keeps a process that writes feedback for a large share of a class (or for one student's huge
    cells) from holding every page's text: the given cells fill it again within a page."""

    def __init__(self, limit: int = 32_000_000) -> None:
        self.limit, self.size = limit, 0
        self.items: dict[Hashable, Any] = {}

    def get(self, key: Hashable, compute: Callable[[], Any], size: int) -> Any:
        """The result remembered for `key`, else `compute()`, remembered (`size`: characters it holds)."""
        if key not in self.items:
            if self.size + size > self.limit:
                self.items.clear()
                self.size = 0
            self.items[key] = compute()
            self.size += size
        return self.items[key]


_HIGHLIGHTED = Memo()  # (source, lexer, magics language, formatter options) -> HTML
_MARKDOWN = Memo()  # (source, renderer options) -> (HTML, soup_keeps)


class MemoHighlight:
    """nbconvert's `highlight_code` filter (Highlight2HTML), remembering what it made for the process.

    Safe: Highlight2HTML's HTML depends only on the source, the lexer (the call's language, else the notebook's,
    and the cell's `magics_language` for an IPython lexer) and its formatter options, which the key holds; pygments
    keeps no state between calls."""

    def __init__(self, highlight: Highlight2HTML) -> None:
        self.highlight = highlight

    def __call__(self, source: str, language: str | None = None, metadata: dict | None = None) -> str:
        lexer = language or self.highlight.pygments_lexer
        key = (source, lexer, (metadata or {}).get("magics_language"),
               repr(sorted(self.highlight.extra_formatter_options.items())))
        return _HIGHLIGHTED.get(key, lambda: self.highlight(source, language, metadata), 6 * len(source))


# nbconvert's soup pass (HTMLExporter.from_notebook_node, nbconvert 7.17): what it adds, and to what.
ALT_TEXT = "No description has been provided for this image"
NOTEBOOK_CLASS = "jp-Notebook"  # the tab stops' ancestor: soupsieve matches class names case-sensitively
TAB_STOPS = (f".{NOTEBOOK_CLASS} div.jp-Cell-inputWrapper", f".{NOTEBOOK_CLASS} div.jp-OutputArea-output")
# An <img> element needs `<img` in the page, in some case: a tag name takes no character reference.
_IMAGE_TAG = re.compile(r"<img", re.IGNORECASE)


def needs_soup_pass(page: str) -> bool:
    """Whether nbconvert's soup pass could add an alt text or a tab stop to `page`, outside its markdown.

    The kit's template extends nbconvert's classic one, which writes no `jp-Notebook` class (the lab template's),
    so the tab stops' selectors match nothing it writes; cell tags become classes through escape_html, which
    leaves that name as it is, so the name itself is looked for. The classic template writes an <img> only for
    image outputs, which the sanitize steps clear (nbgrader's ClearOutput; the grade cells get outputs back, as
    the grader's text) and `plain_notebook` refuses. An image in markdown (SanitizeMarkdown keeps a student's
    inline data: images, with or without alt; a grader's comment is not sanitized) gives the page an <img>:
    such a page takes the soup pass, alt or not. Markdown's classes, encoded or not, are `soup_keeps`'s."""
    return bool(_IMAGE_TAG.search(page)) or NOTEBOOK_CLASS in page


def soup_pass(page: str, log) -> str:
    """nbconvert's own pass (HTMLExporter.from_notebook_node): alt text on every <img>, tab stops on inputs and
    outputs, and the page written again from BeautifulSoup's tree."""
    soup = BeautifulSoup(page, features="html.parser")
    missing_alt = soup.select("img:not([alt])")
    for element in missing_alt:
        element.attrs["alt"] = ALT_TEXT
    if missing_alt:
        log.warning("Alternative text is missing on %s image(s).", len(missing_alt))
    for selector in TAB_STOPS:
        for element in soup.select(selector):
            element.attrs["tabindex"] = "0"
    return str(soup)


class _SoupView(HTMLParser):
    """A fragment as BeautifulSoup's html.parser tree sees it: whether its tags nest as that tree keeps them (each
    end tag closes the last open element, void elements (BeautifulSoup's list) have none, nothing else is
    self-closed, nothing is left open), and whether an element has the class `jp-Notebook` (attribute values
    decoded, as BeautifulSoup decodes them, so `jp&#45;Notebook` counts)."""

    VOID = HTMLTreeBuilder.DEFAULT_EMPTY_ELEMENT_TAGS or set()  # typed as optional; html.parser's builder sets it

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.kept = True

    def handle_starttag(self, tag, attrs):
        self.kept &= not any(name == "class" and NOTEBOOK_CLASS in re.findall(r"\S+", value or "")
                             for name, value in attrs)
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:  # BeautifulSoup closes <p/> at once, a browser keeps it open
            self.kept = False

    def handle_endtag(self, tag):
        self.kept &= bool(self.open) and tag not in self.VOID and self.open.pop() == tag


def soup_keeps(fragment: str) -> bool:
    """Whether the soup pass would give `fragment` no tab stop and write it back with the same tags, wherever it
    sits in a page.

    Where a fragment does not nest (a stray `</div>`, an unclosed <b>, `</br>`, an unfinished comment left in
    rawdata), BeautifulSoup's tree closes or drops tags where a browser would not, so the soup pass changes what
    the browser shows: such a page takes the soup pass, as stock nbconvert gives it."""
    if "<" not in fragment:
        return True
    view = _SoupView()
    view.feed(fragment)
    return view.kept and not view.open and not view.rawdata


def with_verdict(fragment: str) -> tuple[str, bool]:
    """`fragment`, and whether the soup pass keeps it (`soup_keeps`)."""
    return fragment, soup_keeps(fragment)


def plain_notebook(nb) -> bool:
    """Whether the notebook puts only escaped text and sanitised markdown on its page, besides the template's.

    Raw cells and rich outputs (HTML, SVG, images, JavaScript) reach the page as they are; the sanitize steps leave
    none in the kit's autograded notebooks. A grader's comment is markdown nobody sanitised: in one with markup,
    html.parser (the soup pass's reader) and a browser may read a tag differently (for the cells, SanitizeMarkdown
    keeps only markup that nh3, on a browser's parser, keeps whole, and `soup_keeps` reads each with html.parser).
    A notebook with any of these takes the soup pass."""
    for cell in nb.cells:
        comment = cell.metadata.get("nbgrader", {}).get("comment") or ""
        if cell.cell_type == "raw" or "<" in comment:
            return False
        for output in cell.get("outputs", []):
            if set(output.get("data", {})) - {"text/plain"}:
                return False
    return True


# The filters the readable templates call beyond nbconvert's, on both pages (formgrader_pages.kit_exporter too).
PAGE_FILTERS = {"code_as_run": code_as_run}


class FeedbackExporter(ValidatesOnce, HTMLExporter):
    """nbgrader's feedback HTML with the kit's template and an offline MathJax, at a fraction of the cost."""

    _soup_keeps_markdown = True  # the soup pass keeps this page's markdown so far (markdown2html)
    _plain_notebook = False  # this page's notebook is a `plain_notebook` (_preprocess)

    @default("template_name")
    def _template_name_default(self):
        return "kit_feedback"

    @default("extra_loaders")
    def _extra_loaders_default(self):
        return [FileSystemLoader(READABLE)]  # readable.css, which the formgrader's pages share (formgrader_pages.py)

    def default_filters(self):
        return [*super().default_filters(), *PAGE_FILTERS.items()]

    def _init_resources(self, resources):
        resources = super()._init_resources(resources)
        info = resources.get("nbgrader", {})
        course = getattr(getattr(self.parent, "coursedir", None), "root", None)
        if course and info.get("student") and info.get("assignment"):
            install_mathjax(Path(course) / "feedback")
            # The page is feedback/<student>/<assignment>/<notebook>.html
            resources["kit_mathjax_url"] = f"../../{MATHJAX_DIR}/MathJax.js{MATHJAX_QUERY}"
        else:
            resources["kit_mathjax_url"] = f"{mathjax_source().as_uri()}/MathJax.js{MATHJAX_QUERY}"
        resources["kit_part_titles"] = GraderSettings(config=self.config).part_titles
        return resources

    def from_notebook_node(self, nb, resources=None, **kw):
        """HTMLExporter.from_notebook_node (nbconvert 7.17), with `highlight_code` memoized, and its soup pass only
        where it could change the page (`needs_soup_pass`, `soup_keeps`, `plain_notebook`).

        Elsewhere that pass adds nothing and writes the same tree back, differing from the template's output only
        in form (attributes sorted and double-quoted, `<br/>`, character references as characters), which a
        browser reads to the same document: every tag nests, so BeautifulSoup closes or drops none, and html.parser
        reads the markup as a browser does (for the cells, only markup nh3 keeps whole and html.parser reads as
        nested, `soup_keeps`; `plain_notebook`, for the rest). tests/test_feedback_equivalence.py checks that the stock page is this page written back by
        BeautifulSoup."""
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight = self.filters.get("highlight_code") or MemoHighlight(Highlight2HTML(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        self.register_filter("highlight_code", highlight)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources))
        self._soup_keeps_markdown = True  # markdown2html clears it
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        if self._soup_keeps_markdown and self._plain_notebook and not needs_soup_pass(page):
            return page, resources
        return soup_pass(page, self.log), resources

    def _preprocess(self, nb, resources):
        """The preprocessors' notebook (with the graders' comments), and whether it is a `plain_notebook`."""
        nb, resources = super()._preprocess(nb, resources)
        self._plain_notebook = plain_notebook(nb)
        return nb, resources

    @pass_context
    def markdown2html(self, context, source):
        """HTMLExporter.markdown2html, memoized for the process, noting HTML the soup pass would change (`soup_keeps`).

        Safe: with no attachments and no embedded images, nbconvert's renderer reads nothing but the source and
        the options in the key (the notebook's `path` only locates images to embed); each call builds a fresh
        renderer, so nothing carries over from one cell to the next."""
        render = super().markdown2html
        if context.get("cell", {}).get("attachments") or self.embed_images:
            html, kept = with_verdict(render(context, source))
        else:
            key = (source, self.anchor_link_text, self.exclude_anchor_links, repr(sorted(self.lexer_options.items())))
            html, kept = _MARKDOWN.get(key, lambda: with_verdict(render(context, source)), 6 * len(source))
        self._soup_keeps_markdown &= kept
        return html


class _TotalSoFar(NbGraderPreprocessor):
    """The notebook's total as the page shows it, worked out where GetGrades.preprocess calls its cells' loop
    (this class follows GetGrades in FeedbackGrades's MRO), so within its gradebook session: the points graded so
    far and those that wait for a grader, from every grade of the submitted notebook, the rows the cells were read
    from (PrefetchedGradebook.grades), by export.so_far, the reckoning of grades.csv's raw_score and the Canvas
    file's partial total."""

    def preprocess(self, nb, resources):
        nb, resources = super().preprocess(nb, resources)
        grades = self.gradebook.grades(self.notebook_id, self.assignment_id, self.student_id)
        resources["nbgrader"]["kit_so_far"], resources["nbgrader"]["kit_not_graded"] = so_far(grades)
        return nb, resources


class FeedbackGrades(LookupsPrefetched, GetGrades, _TotalSoFar):
    """GetGrades, and whether each grade still waits for the formgrader; the notebook's grades and comments read
    at once (autograder/nbgrader_glue/gradebook_lookups.py)."""

    def preprocess(self, nb, resources):
        """GetGrades.preprocess, with the total out of the points graded so far (`_TotalSoFar`): the points still
        waiting for a grader (`kit_not_graded`) are named on the page, never counted as zero, and a hand grade
        flagged for review counts as its autograded score alone, as in grades.csv and the Canvas file."""
        nb, resources = super().preprocess(nb, resources)
        grades = resources["nbgrader"]
        # nbgrader's is the notebook's score less the penalty; the points so far may be fewer than it takes off
        grades["score"] = max(0.0, grades.pop("kit_so_far") - grades["late_penalty"])
        return nb, resources

    def _get_score(self, cell, resources) -> None:
        """GetGrades._get_score (nbgrader 0.9.6), reading needs_manual_grade from the same row: one query a grade.
        A part whose hand grade waits for review shows the score it counts for so far (export.grade_so_far)."""
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        waiting = waits_for_grader(grade)
        cell.metadata.nbgrader["score"] = grade_so_far(grade)[0]
        cell.metadata.nbgrader["points"] = grade.max_score
        # The kit's key, written whole: the submission's own `kit` (a string stopped the student's page, which the
        # summary then named as nbgrader's failure) is never read.
        cell.metadata["kit"] = {"needs_manual_grade": waiting, "in_review": bool(grade.needs_manual_grade) and not waiting}
