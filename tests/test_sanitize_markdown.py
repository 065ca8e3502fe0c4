"""SanitizeMarkdown: honest markdown reads as written, hostile markdown renders inert (fast, no grading)."""
from __future__ import annotations

import base64
import json
import re
import struct
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from chromium import offline
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from autograder.nbgrader_glue.preprocessors.page_budget import STYLE_SWITCHES
from autograder.nbgrader_glue.preprocessors.sanitize_markdown import SanitizeMarkdown, render
from autograder.outputs.inert import escape
from conftest import ASSIGNMENT, ROOT, release_notebook, solution_notebook

HONEST = r"""**My answer.** The gradient $\mathbf{w}$ *accumulates*: each call adds to `p.grad`, so

$$\sum_i x_i < 1$$

holds only after `zero_grad()`. Compare `a < b` with `x<y>` and `if a<b and c>d:`.

- first, the loss<br>then the step
- H<sub>2</sub>O and x<sup>2</sup>, ~~wrong~~ right

1. one
2. two

| layer | shape |
|:--|--:|
| `Linear(2, 3)` | $3 \times 2$ |

> quoted from the lesson: $a > b$

```python
if a < b:
    print("<b>")
```

See <https://pytorch.org> or [the docs](https://numpy.org/doc/) and ![plot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAAAAAAAA).
"""

# Each payload tries what issue 13 names; MARKER is what a script that ran would leave behind.
MARKER = "PWNED-13"
PUT = ("fetch('/api/contents/owned.txt',{method:'PUT',headers:{'X-XSRFToken':"
       "(document.cookie.match(/_xsrf=([^;]*)/)||[])[1]},body:JSON.stringify({type:'file',format:'text',content:'x'})})")
PAYLOADS = {
    "script": f"<script>document.title='{MARKER}';console.log('{MARKER}');{PUT}</script>",
    "img-onerror": f"<img src=x onerror=\"document.title='{MARKER}';console.log('{MARKER}');{PUT}\">",
    "svg-onload": f"<svg onload=\"document.title='{MARKER}';console.log('{MARKER}')\"><script>console.log('{MARKER}')</script></svg>",
    "javascript-link": f"[click me](javascript:document.title='{MARKER}') and [ref][r]\n\n[r]: javascript:console.log('{MARKER}')",
    "iframe": f"<iframe src=\"javascript:parent.document.title='{MARKER}'\"></iframe><iframe srcdoc=\"<script>parent.document.title='{MARKER}'</script>\"></iframe>",
    "form": "<form action=\"/api/terminals\" method=\"post\"><input type=\"submit\" value=\"Grade\"><button formaction=\"/api/contents\">go</button></form>",
    "style-overlay": "<div style=\"position:fixed;top:0;left:0;width:100%;height:100%;z-index:9999;background:white\">Full marks, click anywhere</div>"
                     "<style>.scoring-buttons{display:none}</style><div class=\"modal-backdrop\">x</div>",
    "object-embed": "<object data=\"javascript:alert(1)\"></object><embed src=\"data:text/html,<script>alert(1)</script>\">",
    "meta-base-link": "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\"><base href=\"https://evil.example/\">"
                      "<link rel=\"stylesheet\" href=\"https://evil.example/x.css\">",
    "data-and-vbscript-urls": "<a href=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">a</a> "
                              "<a href=\"vbscript:msgbox(1)\">b</a> <a href=\" JaVaScRiPt:alert(1)\">c</a> "
                              "<a href=\"java&#x09;script:alert(1)\">d</a> ![e](javascript:alert(1))",
    "math-and-code-mixed": f"Honest $a<b$ and `c<d`, then <img src=x onerror=\"console.log('{MARKER}')\"> "
                           f"and <details open ontoggle=\"console.log('{MARKER}')\"><summary>s</summary>t</details>",
    "mxss": f"<noscript><p title=\"</noscript><img src=x onerror=console.log('{MARKER}')>\"></noscript>"
            f"<math><mtext><table><mglyph><style><img src=x onerror=console.log('{MARKER}')>",
    "comment-breakout": f"<!--><img src=x onerror=console.log('{MARKER}')>-->",
    "svg-image": "![x](data:image/svg+xml;base64," + base64.b64encode(b"<svg onload='alert(1)'/>").decode() + ")",
    # the pages' soup pass keeps the last of two attributes of a name, a browser the first; and reads `style==`
    "twice-named": f"<a href=\"https://numpy.org/\" HREF=\"javascript:console.log('{MARKER}')\">x</a> "
                   "<span class=\"k\" class=\"modal-backdrop in\">y</span>",
    # html.parser ends an end tag at its first ">", even in quotes: what follows is markup to it alone, which
    # BeautifulSoup writes back for the browser
    "end-tag-quote": f"<div>\nExplained above.\n</div x=\"> <![CDATA[ x> <img src=x onerror=console.log('{MARKER}')> ]]> \">",
    # a fragment's parse drops <body> and <html>; a page's adds their attributes to its own
    "body-onload": f"<body onload=\"document.title='{MARKER}';console.log('{MARKER}')\">",
    "html-attributes": f"<HTML style=\"filter:opacity(0)\" onmouseover=\"console.log('{MARKER}')\">",
}

ACTIVE_TAGS = {"script", "iframe", "frame", "object", "embed", "form", "input", "button", "textarea", "select",
               "style", "meta", "base", "link", "svg", "math", "applet", "noscript", "template", "portal"}


class _Finder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ACTIVE_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = (value or "").strip()
            if name.startswith("on") or name in ("style", "srcdoc", "formaction", "action"):
                self.found.append(f"<{tag} {name}>")
            if name in ("href", "src", "data", "xlink:href") and value:
                url = "".join(value.split()).lower()
                scheme = urlsplit(url).scheme
                if scheme not in ("", "http", "https", "mailto") and not (
                        tag == "img" and url.startswith(("data:image/png;", "data:image/jpeg;", "data:image/gif;"))):
                    self.found.append(f"<{tag} {name}={value[:40]}>")

    handle_startendtag = handle_starttag


def active_content(fragment: str) -> list[str]:
    """What in an HTML fragment could run script, send a request or cover the page (parsed, not matched)."""
    finder = _Finder()
    finder.feed(fragment)
    finder.close()
    return finder.found


@pytest.fixture()
def sanitizer():
    return SanitizeMarkdown()


def test_an_honest_answer_reads_as_written(sanitizer):
    assert sanitizer.sanitize_markdown(HONEST) == HONEST
    html = render(HONEST)
    for kept in (r"$\mathbf{w}$", r"$$\sum_i x_i &lt; 1$$", "<code>a &lt; b</code>", "<code>x&lt;y&gt;</code>",
                 "<sub>2</sub>", "<sup>2</sup>", "<br>", "<em>accumulates</em>", "<table>", "<blockquote>",
                 'href="https://numpy.org/doc/"', "<del>wrong</del>", 'src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAAAAAAAA"'):
        assert kept in html, kept


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_a_hostile_payload_renders_inert(sanitizer, name):
    source = PAYLOADS[name]
    assert active_content(render(source)) or name in ("mxss", "comment-breakout", "end-tag-quote"), (
        "the payload itself is not active")
    cleaned = sanitizer.sanitize_markdown(source)
    assert cleaned != source
    html = render(cleaned)
    assert not active_content(html), (cleaned, html)
    assert sanitizer.sanitize_markdown(cleaned) == cleaned, "sanitising twice changes nothing more"


# What stands between two markdown cells on the feedback page and in the formgrader.
BETWEEN_CELLS = '</div></div>\n<div class="cell"><div class="text_cell_render rendered_html">'
# Cells harmless one by one that, one after another on a page, are not: a tag cut off at a cell's end takes the
# page's markup up to a quote, and the next cell supplies its attributes; an element left open folds what follows
# (the next cell, its score box, the graders' rubric) into it.
ACROSS_CELLS = {
    "cut-off-tag": ["Honest text.\n\n<details title='x", f"' open ontoggle=console.log('{MARKER}') x="],
    "cut-off-raw": [new_raw_cell("<details title='x"), f"' open ontoggle=console.log('{MARKER}') x="],
    "left-open": ["My answer.\n\n<details>", "The next cell, folded away."],
}


@pytest.mark.parametrize("name", sorted(ACROSS_CELLS))
def test_a_cell_leaves_no_tag_or_element_open_for_the_next(sanitizer, name):
    cells = [new_markdown_cell(cell) if isinstance(cell, str) else cell for cell in ACROSS_CELLS[name]]
    nb, _ = sanitizer.preprocess(new_notebook(cells=cells), {})
    rendered = [render(cell.source) if cell.cell_type == "markdown" else cell.source for cell in nb.cells]
    assert not active_content(BETWEEN_CELLS.join(rendered)), rendered
    for html in rendered:
        assert html.count("<details") == html.count("</details>") and not html.rstrip().endswith(("'", '"')), html
    assert "Honest text." in rendered[0] or "My answer." in rendered[0] or name == "cut-off-raw"


# A tag name ends only at HTML's own whitespace (tab, LF, FF, space), "/" or ">", and only its ASCII letters are
# lowered: an element named "x\x0b" or "xK" (K: the Kelvin sign), with whatever attributes it has.
ODD_NAMES = {f"{name}-{attribute}": f"<div>\n<{tag} tabindex=1 autofocus {payload}>Gradients add up.</{tag}>\n</div>"
             for name, tag in [("vt", "x\x0b"), ("nbsp", "x\xa0"), ("ideographic", "x\u3000"), ("nel", "x\x85"),
                               ("kelvin", "X\u212a")]
             for attribute, payload in [("script", f"onfocus=\"console.log('{MARKER}')\""),
                                        ("sheet", 'style="position:fixed;top:0;left:0;width:100%;height:100%"')]}


def test_the_pages_soup_pass_reads_a_kept_cells_attributes_as_a_browser_does(sanitizer):
    from bs4 import BeautifulSoup

    cleaned = sanitizer.sanitize_markdown('## Answer\n\n<h2 id=="top">x</h2>')  # BeautifulSoup: id="top"
    ids = [tag.get("id") for tag in BeautifulSoup(render(cleaned), features="html.parser").find_all(True)]
    assert "top" not in ids, cleaned


@pytest.mark.parametrize("answer", [
    "My answer.\n\n</div></div></div>\n\nStill my answer.",
    "My answer.\n\n" + "<b><div></b></div>" * 4 + "\n\nStill my answer.",  # html.parser's tree: </b> closes <div>
    "My answer.\n\n<div>\nx\n</div y=\"> </ div></ div><span hidden> \">\n\nStill my answer.",
], ids=["stray", "misnested", "end-tag-quote"])
def test_a_cell_closes_none_of_the_pages_elements(sanitizer, answer):
    from bs4 import BeautifulSoup

    cleaned = sanitizer.sanitize_markdown(answer)
    soup = str(BeautifulSoup(render(cleaned), features="html.parser"))  # what the browser gets
    assert soup.count("</div") <= soup.count("<div") and "hidden" not in soup and "Still my answer." in soup, soup


def test_a_raw_cell_leaves_no_formatting_element_open(sanitizer):
    nb, _ = sanitizer.preprocess(new_notebook(cells=[new_raw_cell('<p><a href="https://example.org/">x</p>')]), {})
    assert nb.cells[0].source.count("<a ") == nb.cells[0].source.count("</a>") == 1, nb.cells[0].source


@pytest.mark.parametrize("name", sorted(ODD_NAMES))
def test_a_tag_named_past_pythons_idea_of_whitespace_is_not_kept_whole(sanitizer, name):
    cleaned = sanitizer.sanitize_markdown(ODD_NAMES[name])
    assert cleaned != ODD_NAMES[name] and "onfocus" not in cleaned and "position" not in cleaned, cleaned
    assert "Gradients add up." in render(cleaned)


def test_the_honest_part_of_a_hostile_answer_is_kept(sanitizer):
    html = render(sanitizer.sanitize_markdown(PAYLOADS["math-and-code-mixed"]))
    assert "$a&lt;b$" in html and "<code>c&lt;d</code>" in html and not active_content(html)
    assert "Full marks, click anywhere" in render(sanitizer.sanitize_markdown(PAYLOADS["style-overlay"]))


def test_a_heading_cannot_take_a_score_box_id(sanitizer):
    nb = solution_notebook()
    # the formgrader's and the feedback page's; the grading page's alert that a score was saved on a page regraded
    # meanwhile (answers_shown.js: red-q4, pass 18, a heading folded in a <details> took the warning)
    headings = ["answer_zeroing", "comment-answer_zeroing", "top", "toc", "kit-answer-changed"]
    nb.cells[:0] = [new_markdown_cell(f"# {heading}") for heading in headings]
    nb, _ = sanitizer.preprocess(nb, {})
    for cell, heading in zip(nb.cells, headings):
        assert f'id="{heading}"' not in render(cell.source), heading


def test_an_image_naming_a_missing_attachment_does_not_stop_the_page(sanitizer):
    cleaned = sanitizer.sanitize_markdown("![x](attachment:nowhere.png)")
    render(cleaned)  # nbconvert raises on the original, which would stop the feedback page and the formgrader


def picture(width: int, height: int, body: bytes = b"") -> str:
    """A PNG's signature and header naming `width` x `height` pixels (the CRC unchecked: the kit reads the header
    only), then `body`, base64."""
    header = struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0) + bytes(4)
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + header + body).decode()


def png_of(width: int, height: int) -> bytes:
    """A PNG a browser decodes: `width` x `height` grey pixels."""
    import io

    from PIL import Image
    buffer = io.BytesIO()
    Image.new("L", (width, height), 128).save(buffer, "PNG")
    return buffer.getvalue()


def test_attachments_keep_raster_images_only_and_raw_html_cells_are_cleaned(sanitizer):
    png = picture(1, 1)
    md = new_markdown_cell("![a](attachment:a.png) ![b](attachment:b.svg)")
    md.attachments = {"a.png": {"image/png": png}, "b.svg": {"image/svg+xml": "PHN2Zy8+", "text/html": "<script>"}}
    raw = new_raw_cell(f"<b>bold</b><script>console.log('{MARKER}')</script>")
    latex = new_raw_cell("\\section{<script>}", metadata={"raw_mimetype": "text/latex"})
    nb, _ = sanitizer.preprocess(new_notebook(cells=[md, raw, latex]), {})
    assert nb.cells[0].attachments == {"a.png": {"image/png": png}}
    assert not active_content(render(nb.cells[0].source, nb.cells[0].attachments))
    assert nb.cells[1].source == "<b>bold</b>"
    assert nb.cells[2].source == "\\section{<script>}"  # not rendered by the HTML exporter: left as it is


URL = {"data-image": "data:image/png;base64," + "A" * 20000, "https-link": "https://example.org/" + "x" * 20000,
       "attachment": "attachment:a.png", "https-link-title": 'https://example.org/ "' + "T" * 20000 + '"'}


@pytest.mark.parametrize("kind", sorted(URL))
def test_a_url_used_by_many_references_is_not_rendered_again_at_each(sanitizer, kind):
    """Markdown writes a link's or an image's whole URL at each use: a reference (7 characters) to a long one
    defined once, or to an attachment, made 55 KB of markdown 49 MB of HTML, in the grading process and on both
    pages. Such a cell is shown as its text."""
    use = "[.][a]" if kind.startswith("https-link") else "![][a]"  # a link's title is written at each use too
    source = f"An answer.\n\n[a]: {URL[kind]}\n\n" + f"{use}\n" * 300
    attachments = {"a.png": {"image/png": "A" * 20000}} if kind == "attachment" else {}
    cell = new_markdown_cell(source, attachments=attachments) if attachments else new_markdown_cell(source)
    nb, _ = sanitizer.preprocess(new_notebook(cells=[cell]), {})
    page = render(nb.cells[0].source, nb.cells[0].get("attachments"))
    assert len(page) < 4 * (len(source) + 20000), f"{len(page)} characters of HTML from {len(source)}"
    assert "An answer." in page


def test_an_honest_cell_using_a_picture_twice_and_a_link_often_reads_as_written(sanitizer):
    png = picture(640, 480, bytes(3000))
    source = ("The loss before ![loss](attachment:loss.png) and after ![loss](attachment:loss.png).\n\n"
              + "See [the docs][np] and again [the docs][np].\n" * 20 + "\n[np]: https://numpy.org/doc/stable/reference/\n")
    assert sanitizer.sanitize_markdown(source, {"loss.png": {"image/png": png}}) == source


def test_the_notebooks_pictures_are_shown_within_a_budget_of_pixels():
    """A browser decodes a picture to 4 bytes a pixel: a PNG naming 100,000 x 100,000 pixels over a few bytes of
    compressed zeros would take 40 GB of the instructor's browser. The student's pictures share 50 megapixels a
    notebook, read from their headers (a phone's photo of 48 MP is shown): a cell past them, or with a picture whose
    size cannot be read, is shown as its text; the release's pictures do not count."""
    notebook = solution_notebook()
    photo, bomb = answers(notebook)[:2]
    photo.source, photo.attachments = "My working: ![page](attachment:p.png)", {"p.png": {"image/png": picture(8000, 6000)}}
    bomb.source = f"![plot](data:image/png;base64,{picture(100_000, 100_000)})"
    inline_jpeg = base64.b64encode(b"\xff\xd8\xff\xc0\x00\x11\x08" + struct.pack(">HH", 10_000, 10_000)).decode()
    notebook.cells.append(new_markdown_cell(f"![x](data:image/jpeg;base64,{inline_jpeg})"))  # past what is left
    notebook.cells.append(new_markdown_cell("![x](data:image/png;base64,AAAA)"))  # no size to read
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert answers(notebook)[0].source == "My working: ![page](attachment:p.png)"
    assert [cell.source.startswith("```") for cell in [answers(notebook)[1], *notebook.cells[-2:]]] == [True] * 3
    assert all("<img" not in render(cell.source, cell.get("attachments")) for cell in notebook.cells[-2:])


@pytest.mark.parametrize("mimetype", [5, ["text/html"], None, {"type": "text/html"}])
def test_a_raw_mimetype_that_is_not_text_is_taken_as_absent(sanitizer, mimetype):
    """nbconvert's page templates, like the sanitiser, call the raw mimetype's .lower(): one that is not text is
    removed, and the cell cleaned as a raw cell without one (which the HTML exporter emits)."""
    raw = new_raw_cell(f"<b>bold</b><script>console.log('{MARKER}')</script>", metadata={"raw_mimetype": mimetype})
    nb, _ = sanitizer.preprocess(new_notebook(cells=[raw]), {})
    assert nb.cells[0].source == "<b>bold</b>" and "raw_mimetype" not in nb.cells[0].metadata


@pytest.mark.parametrize("fence", ["```autoit\n{}\n```", "~~~markdown\n```autoit\n{}\n```\n~~~"])
def test_a_fenced_block_in_a_lexer_of_quadratic_time_is_shown_plain(sanitizer, fence):
    """Pygments' autoit lexer takes 7 s of CPU for 8 KB of spaces and grows with their square: a cell fenced in it is
    not kept whole, and its page renders the block plain; so is one fenced in markdown around it, whose lexer hands
    each block inside to the lexer its fence names. A block in Python, or in a language no lexer has, stays."""
    source = "Some *text*\n\n" + fence.format(" " * 8000 + "x")
    start = time.process_time()
    page = render(sanitizer.sanitize_markdown(source))
    assert time.process_time() - start < 1.5, "the page highlights with a lexer whose time grows faster than the code"
    assert "<em>text</em>" in page and "x" in page and not active_content(page)
    honest = "```python\nx = 1\n```\n\n```pseudo\nstep\n```"
    assert sanitizer.sanitize_markdown(honest) == honest


@pytest.mark.parametrize("language_info", [{"name": "python", "pygments_lexer": "ipython3"}, None,
                                           {"name": "python", "pygments_lexer": "autoit"}, {"name": "markdown"}])
def test_code_cells_are_highlighted_with_a_lexer_of_linear_time(sanitizer, language_info):
    """IPython's lexer, which Jupyter names in every notebook it saves and nbconvert takes when none is named, takes
    0.7 s of CPU for 8 KB of `*` and grows with its square; autoit's, with a run of spaces: the page highlights code
    with Python's. A code cell's magics_language, which picks the lexer under IPython's, is removed. Markdown's
    lexer would hand a cell's ```autoit block to autoit's."""
    from nbconvert import HTMLExporter

    cells = [new_code_cell("*" * 16000, metadata={"magics_language": "autoit"}), new_code_cell(" " * 16000 + "x"),
             new_code_cell("```autoit\n" + " " * 16000 + "x\n```")]
    nb = new_notebook(cells=cells, metadata={"language_info": language_info} if language_info else {})
    nb, _ = sanitizer.preprocess(nb, {})
    assert all("magics_language" not in cell.metadata for cell in nb.cells)
    start = time.process_time()
    HTMLExporter(template_name="classic").from_notebook_node(nb)
    assert time.process_time() - start < 3, "the page highlights with a lexer whose time grows faster than the code"


def grading_page(tmp_path, notebook) -> tuple[str, float]:
    """The formgrader's grading page of `notebook` (as mallory's autograded copy), and the CPU seconds it took."""
    from test_formgrader_browser import formgrade_html

    path = tmp_path / "autograded" / "mallory" / ASSIGNMENT.name / "modules_and_sgd.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    start = time.process_time()
    page = formgrade_html(tmp_path, "mallory", notebook=path)
    return page, time.process_time() - start


def test_a_long_code_cell_is_shown_as_text_on_the_grading_page(tmp_path):
    """A highlighted token is a span, and the grading page goes through BeautifulSoup whole, on every view: 64 KB of
    `a.a.a` in a code cell the student added took 3 s of CPU a render, linearly (about 85 s at the 2 MB limit). Past
    16 KB (the release's longest code cell is under 2 KB) a cell is shown as escaped text; shorter ones as before."""
    notebook = solution_notebook()
    long = "a" + ".a" * 128_000 + "  # <b>not markup</b>"
    notebook.cells.insert(1, new_code_cell(long))
    page, seconds = grading_page(tmp_path, notebook)
    assert seconds < 3, "the page highlights a long cell token by token"
    assert '<div class="highlight"><pre>' + long.replace("<", "&lt;").replace(">", "&gt;") + "</pre></div>" in page
    assert '<span class="k">class</span>' in page  # the solution's own cells are highlighted


def answers(notebook) -> list:
    return [cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith("answer_")]


def test_the_notebooks_fenced_blocks_share_one_highlighting_budget(tmp_path):
    """Written answers are never cut, and a fenced block in Python is highlighted token by token, the grading page
    then going through BeautifulSoup whole on every view: three answers of 127 KB of ```python `a.a.a` cost 16 s a
    view, and eight of the student's own cells of 16 KB each (within the markdown budget) 5.2 s. The student's fenced
    blocks share the notebook's first 16 KB (as one code cell), in one block or in many, in answers or in their own
    cells; the rest are shown plain. A short one stays highlighted, and so do the release's own."""
    notebook = solution_notebook()
    long = ["```python\n" + "a" + ".a" * 64_000 + "\n```", "\n\n".join(["```python\n" + "a" + ".a" * 8000 + "\n```"] * 8)]
    for n, cell in enumerate(answers(notebook)):
        cell.source = long[n % 2]
    notebook.cells[30:30] = [new_markdown_cell("```python\n" + "a" + ".a" * 8000 + "\n```") for _ in range(8)]
    short = "```python\nx = 1\n```"
    assert SanitizeMarkdown().sanitize_markdown(short) == short
    released = [cell.source for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("locked")]
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert [cell.source for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("locked")] == released
    page, seconds = grading_page(tmp_path, notebook)
    assert page.count('<span class="n">a</span>') <= 16384 // 2, "the page highlights past the notebook's 16 KB"
    assert seconds < 3, "the page highlights the student's fenced blocks token by token"
    assert page.count("a.a.a.a") >= 3 + 8


@pytest.mark.parametrize("definition", [
    r"$\def\a{xxxxxxxxxx}\def\b{\a\a\a\a\a\a\a\a\a\a}\def\c{\b\b\b\b\b\b\b\b\b\b}$",
    r"$\newcommand{\c}[1]{#1#1#1#1}$", r"\(\renewcommand\c{x}\)", r"$\let\c\alpha$", r"$$\gdef\c{x}$$",
    r"$\require{begingroup}\global\def\c{x}$", r"$\DeclareMathOperator{\c}{xxxx}$",
    r"$\newenvironment{c}{x}{x}$", r"&#36;&#92;def\c{xxxxxxxxxx}&#36;", r"<b>$\def</b>\c{x}$"],
    ids=["def", "newcommand", "renewcommand", "let", "gdef", "require-global", "operator", "environment",
         "character-reference", "tag-between"])
def test_a_macro_the_student_defines_is_shown_as_text(sanitizer, definition):
    """MathJax typesets each expression within its own maxMacros and maxBuffer, not the page's: three levels of `\\def`
    made each 5-byte `$\\c$` typeset 1,000 glyphs, and three answers of 100 uses held Chromium 43 s on the feedback
    page. A cell of the student's that defines a macro is shown as its text, in a code block MathJax leaves alone."""
    source = definition + "\n\n" + "$\\c$ " * 100
    cleaned = sanitizer.sanitize_markdown(source)
    assert cleaned.startswith("```\n") and definition in cleaned, cleaned[:200]
    page = render(cleaned)
    assert page.startswith("<pre><code>") and page.count("</code></pre>") == 1


def test_a_raw_cell_that_defines_a_macro_is_shown_as_text():
    """The pages put an HTML raw cell in as it is, and MathJax typesets the whole page: the same rule holds."""
    notebook = solution_notebook()
    notebook.cells.append(new_raw_cell("<p>$\\def\\c{xxxxxxxxxx}$ $\\c$ $\\c$</p>"))
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert notebook.cells[-1].source == "<pre>&lt;p&gt;$\\def\\c{xxxxxxxxxx}$ $\\c$ $\\c$&lt;/p&gt;</pre>"


def test_maths_without_a_definition_reads_as_written(sanitizer):
    honest = r"Since $\left(\frac{\partial L}{\partial w}\right)$ and $$\lVert w \rVert \leq 1 \iff \text{let}$$"
    assert sanitizer.sanitize_markdown(honest) == honest


def test_the_notebooks_maths_is_typeset_within_a_budget():
    """Plain `$xx$` costs MathJax about 1.5 ms an expression, so answers of 128 KB of it would keep the page busy for
    minutes. The student's cells share 1,000 marks (`$`, `$$`, `\\(`, `\\[`, `\\begin{`) a notebook: a cell whose maths
    would take it past them is shown as its text; a later cell within what is left is typeset; the release's maths
    does not count."""
    notebook = solution_notebook()
    for cell in answers(notebook):
        cell.source = "$xx$ " * 300  # 600 marks each
    notebook.cells.append(new_markdown_cell("$y$ and $$z$$"))
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    shown = [cell.source.startswith("```") for cell in answers(notebook)]
    assert shown == [False, True, True]
    assert notebook.cells[-1].source == "$y$ and $$z$$"
    released = release_notebook()
    assert sum(cell.source.count("$") for cell in released.cells if cell.cell_type == "markdown") > 100


@pytest.mark.parametrize("kind, cells", [
    ("markdown", 34_000 * ["<b>1"]), ("markdown", 940 * ["*a" * 1000]),
    ("code", 130 * ["a." * 8184]), ("code", 16_000 * ["x"])],
    ids=["markdown-34000-tiny", "markdown-940-of-2KB", "code-130-just-under-16KB", "code-16000-tiny"])
def test_the_pages_show_a_budget_of_the_students_own_cells(tmp_path, kind, cells):
    """The grading page renders the student's cells on every view. Markdown costs it about 13 µs a byte and a cell at
    least 0.6 ms: a notebook of the student's own markdown within its size limit cost 20 to 26 s a view. Highlighted
    code costs about 40 µs a byte and a cell about 1 ms: 2 MB of own code cells each just under the 16 KB that are
    highlighted cost 77 s a view, 2 MB of tiny ones 13 s. Past CapStudentMarkdown's budget for the kind (128 KB of
    markdown and raw, 64 KB of code, each cell counted as at least 1 KB) the rest is left off the autograded copy, in
    one note where the first left-off cell stood; every cell of the release, the answers among them, stays."""
    from autograder.nbgrader_glue.preprocessors.cap_student_markdown import CapStudentMarkdown

    budget, note = {"markdown": (128, "markdown or raw cells"), "code": (64, "code cells")}[kind]
    notebook = solution_notebook()
    released = [(c.cell_type, c.source) for c in notebook.cells]
    notebook.cells[30:30] = [(new_code_cell if kind == "code" else new_markdown_cell)(text) for text in cells]
    capped, _ = CapStudentMarkdown().preprocess(notebook, {})
    own = [c for c in capped.cells if not c.metadata.get("nbgrader")]
    assert [(c.cell_type, c.source) for c in capped.cells if c.metadata.get("nbgrader")] == released
    assert all(c.cell_type == kind for c in own[:-1]) and own[-1].cell_type == "markdown"
    assert sum(max(len(c.source), 1024) for c in own[:-1]) <= budget * 1024 and len(own) <= budget + 1
    assert own[-1].source.startswith(f"*{len(cells) - len(own) + 1} more {note} of the student's own")
    assert capped.cells.index(own[-1]) == 30 + len(own) - 1
    _, seconds = grading_page(tmp_path, capped)
    assert seconds < 5, f"the grading page renders the student's {kind} past the budget"


def test_each_kind_of_the_students_own_cells_has_its_note_where_it_was_first_left_off():
    from autograder.nbgrader_glue.preprocessors.cap_student_markdown import CapStudentMarkdown

    notebook = solution_notebook()
    notebook.cells[10:10] = [new_markdown_cell("m" * 2048) for _ in range(70)]
    notebook.cells[85:85] = [new_code_cell("c" * 2048) for _ in range(40)]  # after five more of the release's
    capped, _ = CapStudentMarkdown().preprocess(notebook, {})
    notes = [(index, c.source.split(" of the")[0]) for index, c in enumerate(capped.cells)
             if c.cell_type == "markdown" and "not shown here" in c.source]
    assert notes == [(10 + 64, "*6 more markdown or raw cells"), (10 + 64 + 1 + 5 + 32, "*8 more code cells")]


@pytest.mark.parametrize("folder", ["source", "release", "solutions"])
def test_the_instructors_markdown_is_unchanged(folder):
    path = ROOT / folder / "dl01_6_3" / "modules_and_sgd.ipynb"
    nb = nbformat.read(path, as_version=4)
    before = [(c.cell_type, c.source) for c in nb.cells]
    assert sum(kind == "markdown" for kind, _ in before) >= 20
    nb, _ = SanitizeMarkdown().preprocess(nb, {})
    assert [(c.cell_type, c.source) for c in nb.cells] == before


def test_the_released_notebook_renders_inert_already():
    for cell in release_notebook().cells:
        if cell.cell_type == "markdown":
            assert not active_content(render(cell.source)), cell.source[:80]


def test_it_runs_in_the_autograde_sanitize_step_after_locked_cells_are_restored():
    from autograder.settings import load_config

    steps = list(load_config(ROOT).Autograde.sanitize_preprocessors)
    name = "autograder.nbgrader_glue.preprocessors.sanitize_markdown.SanitizeMarkdown"
    assert steps.index(name) > steps.index("autograder.nbgrader_glue.preprocessors.overwrite_cells_at_once.OverwriteCellsAtOnce")
    assert steps.index("nbgrader.preprocessors.ClearOutput") < steps.index(name)


# Markup left open, comments that never end, character references: what made a hand-written html.parser pass
# quadratic (a cell of `<!--x>` repeated: 25, 50, 100 KB cost 0.15, 0.68, 2.3 s; at the notebook size limit,
# minutes). nh3 (html5ever) reads each in one pass, but takes time that grows faster than linearly with one text
# run of many character references (`&#`), so no cell it reads is longer than SanitizeMarkdown.max_cell_kb.
ADVERSARIAL = ["<!--x>", "<a ", '<a title="', "&#", "*a"]


@pytest.mark.slow
@pytest.mark.parametrize("run", ADVERSARIAL)
def test_adversarial_markdown_at_the_notebook_size_limit_is_sanitised_in_bounded_time(run):
    """A notebook at the size limit, its markdown cells as long as a cell may be, every one the pattern repeated."""
    from autograder.settings import GraderSettings

    sanitizer = SanitizeMarkdown()
    cell = run * (sanitizer.max_cell_kb * 1024 // len(run))
    cells = [new_markdown_cell(f"{index} {cell}"[:len(cell)]) for index in range(GraderSettings().notebook_kb // sanitizer.max_cell_kb)]
    start = time.process_time()
    nb, _ = sanitizer.preprocess(new_notebook(cells=cells), {})
    assert time.process_time() - start < 40, "the sanitiser's time grew faster than its input"
    assert sanitizer.inert(nb.cells[0].source, {})[0]
    assert sanitizer.sanitize_markdown("x" * (sanitizer.max_cell_kb * 1024 + 1)) == sanitizer.note  # not read


def test_the_sanitiser_parses_html_with_nh3_first():
    """No hand-written HTML pass: html.parser reads only a fragment nh3 took whole, as the pages' soup pass does."""
    text = (ROOT / "autograder" / "nbgrader_glue" / "preprocessors" / "sanitize_markdown.py").read_text()
    assert text.count("HTMLParser") == 2  # imported, and read by the one class that mirrors the soup pass
    assert text.index("_soup_events(fragment)") > text.index("whole = kept_whole(")


def test_a_heading_cannot_take_the_score_box_of_a_grade_cell_the_student_deleted(sanitizer):
    """nbgrader keeps the grade of a deleted cell and the formgrader shows its score box: a heading named after it
    would take the box's id, and the formgrader's scripts would save the written answer's score to that grade."""
    from autograder.settings import load_config

    nb = release_notebook()
    nb.cells = [cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade_id") != "test_no_grad"]
    headings = ["test_no_grad", "test_no_grad_extra_credit", "test_no_grad-comment", "comment-test_no_grad"]
    nb.cells[:0] = [new_markdown_cell(f"### {heading}") for heading in headings]
    sanitizer = SanitizeMarkdown(config=load_config(ROOT))
    nb, _ = sanitizer.preprocess(nb, {"nbgrader": {"assignment": ASSIGNMENT.name}})
    for cell, heading in zip(nb.cells, headings):
        assert f'id="{heading}"' not in render(cell.source), heading


@pytest.mark.parametrize("form", ["$$ {} $$", "$$ {}\n\n\n {} $$", "\\begin{{equation*}} {} \\end{{equation*}}"],
                         ids=["display", "display-with-blank-lines", "environment"])
def test_the_notebooks_maths_is_bounded_in_size_as_well_as_in_marks(form):
    """MathJax lays a display expression out on one line, in time that grows about with the square of its width: one
    `$$...$$` of 16 KB in each written answer (6 marks of the 1,000) held Chromium 52 to 56 s on the feedback page and
    68 s on the grading page (red-q4, pass 18; 8 KB each: 15 to 17 s; red-s5: the same with blank lines inside the
    block, or as an environment on one line, counted nothing). The student's cells share a bound on the maths they
    put on a page, as they share its marks: past it a cell is shown as its text."""
    notebook = solution_notebook()
    for cell in answers(notebook):
        cell.source = "My answer: " + form.format(*["\\frac{a_{1}}{b^{2}}+" * 420 + "x"] * form.count("{}"))
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    shown = [cell.source.startswith("```") for cell in answers(notebook)]
    assert any(shown), f"{sum(len(cell.source) for cell in answers(notebook))} characters of maths typeset"


@pytest.mark.parametrize("maths", [
    "My answer:\n\n$$\n" + "\n\n".join(["\\frac{a_{1}}{b^{2}}+" * 20] * 40) + "\n\nx\n$$\n",  # one <p>, blank lines
    "My answer: \\begin{equation*}" + "\\frac{a_{1}}{b^{2}}+" * 800 + "x\\end{equation*}",  # `\end{` is no mark
], ids=["blank-lines-in-a-block", "one-environment"])
def test_an_expression_split_by_blank_lines_or_in_an_environment_counts_its_size(maths):
    """MathJax typesets a `$$` block whole across its blank lines (nbconvert keeps it in one paragraph), and an
    environment from `\\begin{` to `\\end{`: 3 answers of 8 KB so held Chromium 11 to 14 s, of 16 KB 57 s (red-s5, pass
    18), each counted 0 of the notebook's maths characters."""
    notebook = solution_notebook()
    for cell in answers(notebook):
        cell.source = maths
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert any(cell.source.startswith(("```", "<pre>")) for cell in answers(notebook)), "48 KB of maths typeset"


@pytest.mark.parametrize("maths", ["x^{" * 200 + "x" + "}" * 200, "\\sqrt{" * 220 + "x" + "}" * 220,
                                   "\\overline{" * 300 + "x" + "}" * 300, "\\sqrt" * 220 + " x"],
                         ids=["superscripts", "roots", "overlines", "roots-without-braces"])
def test_maths_nested_deeper_than_a_browser_lays_out_is_shown_as_text(sanitizer, maths):
    """MathJax lays each level of an expression out as boxes inside boxes of the page, and Chromium's renderer crashes
    (a sad tab, in under a second) laying out a few hundred levels: `$$x^{x^{...}}$$` 200 deep, 801 characters and 2
    of the notebook's 1,000 marks, in one written answer crashed both the feedback page and the grading page as they
    opened (red-d8, pass 20; 150 deep typesets). Such a cell is shown as its text, as a too long one is."""
    source = f"My answer:\n\n$${maths}$$\n"
    cleaned = sanitizer.sanitize_markdown(source)
    assert cleaned.startswith(("```", "<pre>")), f"maths {maths.count('{')} levels deep typeset ({len(maths)} chars)"


@pytest.mark.parametrize("maths", ["\\Large a" * 600, "\\tiny1" * 500, "\\displaystyle a" * 500],
                         ids=["size-switches", "size-switches-before-digits", "style-switches"])
def test_maths_nested_by_switches_deeper_than_a_browser_lays_out_is_shown_as_text(sanitizer, maths):
    """MathJax 2 opens a new style box for each size or style switch (`\\Large`, `\\tiny`, `\\displaystyle`), holding
    the rest of the group, so a run of them nests without a brace: `$$\\Large a\\Large a...$$` 600 deep (4.8 KB, 2
    marks) crashed Chromium's renderer on both pages (a sad tab in under a second; 300 deep typesets), its depth
    counted 1 (red-l10, pass 21)."""
    source = f"My answer:\n\n$${maths}$$\n"
    cleaned = sanitizer.sanitize_markdown(source)
    assert cleaned.startswith(("```", "<pre>")), f"maths {len(maths)} chars of switches typeset, nesting each in the next"


def test_the_style_switches_counted_are_those_the_pinned_mathjax_nests():
    """The switches the page budget counts as a level each are read from the pinned MathJax's own TeX input: every
    control word its macro table maps to SetStyle or SetSize (each pushes a style item holding the rest of its group),
    so a MathJax with another switch fails here rather than on a student's page."""
    import jupyter_server_mathjax

    jax = (Path(jupyter_server_mathjax.__file__).parent / "static/jax/input/TeX/jax.js").read_text()
    nesting = {"\\" + name for name in re.findall(r'\b([A-Za-z]+):\["Set(?:Style|Size)"', jax)}
    assert nesting and nesting == STYLE_SWITCHES


def test_a_pictures_pixels_are_those_the_browser_decodes():
    """Chromium grows a GIF to a first frame larger than its logical screen, and libjpeg skips `FF` fill bytes before a
    marker (the JPEG below has a fake 1 x 1 frame inside an APP1 segment where a walk that takes `FF FF` for a
    marker with a length lands): both showed 4000 x 4000 in Chromium, both counted 1 pixel (red-s5, pass 18)."""
    from autograder.nbgrader_glue.preprocessors.pictures import picture_pixels
    size = 4000
    gif = (b"GIF89a" + struct.pack("<HH", 1, 1) + b"\x80\x00\x00" + b"\x00\x00\x00\xff\xff\xff"
           + b"\x2c" + struct.pack("<HHHH", 0, 0, size, size) + b"\x00\x02\x02\x4c\x01\x00\x3b")

    def frame(width: int, height: int) -> bytes:
        return b"\xff\xc0\x00\x0b\x08" + struct.pack(">HH", height, width) + b"\x01\x01\x11\x00"

    payload = bytearray(0xE2FF - 2)
    landing = 4 + 0xE1E2 - 7  # where the walk lands, within the payload (which starts at byte 7)
    payload[landing:landing + 13] = frame(1, 1)
    jpeg = b"\xff\xd8\xff\xff\xe1" + struct.pack(">H", 0xE2FF) + bytes(payload) + frame(size, size) + b"\xff\xd9"
    assert picture_pixels("gif", gif) in (None, size * size)
    assert picture_pixels("jpeg", jpeg) in (None, size * size)


@pytest.mark.parametrize("lead", [" ", "&#9;", "\n", "&#11;", "&#31; "],
                         ids=["space", "tab-reference", "newline", "vertical-tab-reference", "unit-separator"])
def test_a_picture_whose_url_begins_with_whitespace_counts_its_pixels(lead):
    """A browser strips the whitespace around an image's URL (Chromium showed a 3 x 5 PNG so), the allowlist checks
    the URL stripped, and nh3 keeps it as written: `<img src=" data:image/png;...">` of 100,000 x 100,000 was kept on
    both pages, counting 0 of IMAGE_PIXELS (red-u6, pass 19). The URL parser strips every C0 control and space around a
URL, Python's strip() some of them: a picture counts as the browser reads its URL."""
    notebook = solution_notebook()
    answers(notebook)[0].source = f'My plot: <img src="{lead}data:image/png;base64,{picture(100_000, 100_000)}">'
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert answers(notebook)[0].source.startswith(("```", "<pre>")), "a 40 GB picture shown"


@pytest.mark.parametrize("pictures", [[40_000_000], [100_000] * 400], ids=["one-tall-picture", "many-tall-pictures"])
def test_the_notebooks_pictures_cannot_push_the_page_past_a_browsers_layout(tmp_path, browser, pictures):
    """Chromium lays a page out within 33,554,432 px (its largest layout coordinate): a written answer holding a 1 x 1
    PNG at `height="40000000"` (attributes the allowlist keeps; 1 pixel of IMAGE_PIXELS) took both pages there, and
    every cell after it was laid out at that one coordinate, at the page's very end and over one another: the later
    answers, their score boxes and the checks' results out of sight (red-l10, pass 21). On both pages, as Chromium
    lays them out, each cell stands below the one before it, and the page well within that coordinate."""
    dot = base64.b64encode(png_of(1, 1)).decode()
    plot = "My plot: " + "<br>".join(f'<img src="data:image/png;base64,{dot}" width="1" height="{height}">'
                                 for height in pictures[:len(pictures) // 4 or 1])
    notebook = new_notebook(cells=[new_markdown_cell(f"{plot}\n\n**Question {number}**") for number in range(1, 5)])
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert notebook.cells[0].source.startswith(plot), "the pictures were not shown"
    for name, url in both_pages(tmp_path, notebook).items():
        height, tops = looked_at(browser, url, lambda page: page.evaluate(
            "[document.documentElement.scrollHeight, [...document.querySelectorAll('.cell')]"
            ".map(cell => cell.getBoundingClientRect().top + scrollY)]"))
        assert height < 33_554_432 // 2, f"the {name} page stands {height:,} px tall"
        assert len(tops) > 2 and tops == sorted(set(tops)), f"the {name} page's cells at {tops}"


def test_a_notebooks_pictures_are_few_enough_to_stand_within_a_browsers_layout():
    """The pages draw each picture at most PICTURE_HEIGHT tall (readable.css), and each costs at least PICTURE_FLOOR
    pixels of the budget: 1 x 1 pictures, however many, stand well within Chromium's 33,554,432 px all together."""
    from autograder.nbgrader_glue.preprocessors.page_budget import PICTURE_HEIGHT, PageBudget
    css = (ROOT / "autograder/templates/readable/readable.css").read_text()
    assert f".text_cell_render img {{ max-height: {PICTURE_HEIGHT}px;" in css
    budget, dot = PageBudget(), f'<img src="data:image/png;base64,{picture(1, 1)}">'
    shown = 0
    while shown < 100_000 and budget.shows("My plot", dot * 100):
        shown += 100
    assert shown * PICTURE_HEIGHT < 33_554_432 // 2, f"{shown:,} pictures shown"


@pytest.mark.parametrize("maths", ["$\\rule{1pt}{40000000pt}$", "$\\Rule{1px}{40000000px}{0px}$",
                                   "$\\lower{40000000pt}{x}$", "$\\Space{0pt}{40000000pt}{0pt}$",
                                   '$\\mmlToken{mspace}[height="40000000pt"]{}$', '$\\mmlToken{mspace}[height="4000"]{}$',
                                   "$\\hskip 4000000pt \\kern-40000mm x$", "$\\begin{array}{c}a\\\\[40000000pt]b\\end{array}$"],
                         ids=["rule", "Rule", "lower", "Space", "mspace", "mspace-unitless", "skip", "row-space"])
def test_maths_that_draws_past_a_browsers_layout_is_shown_as_text(sanitizer, maths):
    """MathJax draws a rule as tall as it is told (the Safe extension bounds style lengths, not a rule's): a written
    answer of `$\\rule{1pt}{40000000pt}$` (24 characters, 2 marks) took both pages to Chromium's largest layout
    coordinate, 33,554,432 px, every cell after it laid out at the page's end, over the others (red-l10, pass 21)."""
    source = f"My answer: {maths}"
    assert sanitizer.sanitize_markdown(source).startswith(("```", "<pre>")), f"{maths} typeset"


@pytest.mark.parametrize("maths", ["$\\unicode[4000000,0]{x41}$", "$\\unicode[0,4000000]{x41}$",
                                   "$\\mmlToken{mspace}[height=4000000]{}$"],
                         ids=["unicode-height", "unicode-depth", "mspace-unquoted"])
def test_maths_whose_unitless_length_draws_past_a_browsers_layout_is_shown_as_text(sanitizer, maths):
    """red-c17 X26-c17-1 (pass 26): MATHS_LENGTH_EM reads a unitless number as a length only before a quote, but
    MathJax reads two more: \\unicode's optional [height,depth] (in em) and an unquoted \\mmlToken attribute
    (`[height=4000000]`, of the font size). `My answer: $\\unicode[4000000,0]{x41}$` was kept as written, and in
    Chromium the feedback page stood 33,554,432 px tall with every later cell at that one coordinate (cells' tops
    [91, 33554432, 33554432]), as the `\\rule` of red-l10 (pass 21) did."""
    source = f"My answer: {maths}"
    assert sanitizer.sanitize_markdown(source).startswith(("```", "<pre>")), f"{maths} typeset"


@pytest.mark.parametrize("maths", ["$\\rule{1pt}4000000pt$", "$\\Space 0pt 4000000pt 0pt$", "$\\rule{1pt}{4000000,5pt}$",
                                   "$\\begin{array}{c}a\\\\[4 000 000pt]b\\end{array}$", "$\\rule[4000000]{1pt}{1pt}$",
                                   "$\\enclose{box}[padding=4 000 000]{x}$", "$\\cancel[padding:4000000]{x}$",
                                   "$\\bbox[1,4000000pt]{x}$", "$\\mmlToken{mspace}[width=0,height=4000000.5.5]{}$"],
                         ids=["after-a-brace", "after-a-length", "decimal-comma", "spaced", "rule-raise", "enclose",
                              "cancel", "after-a-comma", "two-points"])
def test_maths_whose_length_mathjax_reads_as_written_is_shown_as_text(sanitizer, maths):
    """MathJax reads a dimension after the one before it (`\\rule{1pt}4000000pt`: GetDimen takes one without braces),
    with a decimal comma, or with its spaces dropped (`\\\\[..]`, \\enclose and \\unicode drop them); \\rule's
    `[raise]`, \\enclose's and \\cancel's attributes without a unit; and a MathML length up to a second point."""
    assert sanitizer.sanitize_markdown(f"My answer: {maths}").startswith(("```", "<pre>")), f"{maths} typeset"


def test_maths_lengths_are_read_in_linear_time():
    """Every length pattern is possessive, and a comma or a space run is read by one pattern at most twice."""
    from autograder.nbgrader_glue.preprocessors.page_budget import _longest_length

    for text in ["{" + "1," * 60_000, "{1pt" * 30_000, "\\unicode[" + "1 " * 60_000, "\\mmlToken=" + "1," * 60_000]:
        start = time.monotonic()
        _longest_length(text)
        assert time.monotonic() - start < 5, text[:20]


def test_maths_of_ordinary_lengths_is_typeset(sanitizer):
    """The lengths an honest answer draws stay within MATHS_LENGTH_EM: a strut, a space, a row's spacing, a length in
    centimetres."""
    source = "My answer: $\\rule{0pt}{2em}\\hspace{1cm}\\begin{array}{c}a\\\\[2pt]b\\end{array} \\quad r = 30 cm$"
    assert sanitizer.sanitize_markdown(source) == source
    source = "My answer: $\\frac{\\cancel{2}x}{\\cancel{2}} = x$ for $n = 1000$ samples, $10^{1000}$, a [1000, 784] batch"
    assert sanitizer.sanitize_markdown(source) == source  # numbers with no unit, in no place of a length


def test_a_picture_whose_decoding_repeats_past_its_pixels_is_shown_as_text(sanitizer):
    """libjpeg decodes each scan of a progressive JPEG over the whole picture, and takes a scan repeated (its
    successive approximation out of order) with a warning: a 2000 x 2000 picture of one colour, its last scan (14
    bytes of runs of empty blocks) repeated 3,000 times, 75 KB in a written answer and 4 Mpx of IMAGE_PIXELS, took
    Chromium 12.4 s and 12.7 s to decode (red-l10, pass 21); the pixels bound a picture's memory, not its work."""
    import io

    from PIL import Image
    buffer = io.BytesIO()
    Image.new("L", (2000, 2000), 128).save(buffer, "JPEG", progressive=True)
    jpeg = buffer.getvalue()
    scan = jpeg[jpeg.rfind(b"\xff\xda"):-2]  # the last scan, up to the end of image
    jpeg = jpeg[:-2] + scan * 3000 + b"\xff\xd9"
    source = f'My plot: <img src="data:image/jpeg;base64,{base64.b64encode(jpeg).decode()}">'
    assert sanitizer.sanitize_markdown(source).startswith(("```", "<pre>")), f"{len(jpeg) // 1024} KB of scans shown"


@pytest.mark.parametrize("kind", ["gif", "png"])
def test_an_animations_frames_each_count_their_pixels(sanitizer, kind):
    """A browser decodes every frame of an animated GIF or PNG, over and over as it plays: 4 frames of 4000 x 4000
    (52 and 89 KB) are 64 Mpx of decoding, past IMAGE_PIXELS, though each frame alone is 16 Mpx."""
    import io

    from PIL import Image
    frames = [Image.new("L", (4000, 4000), shade * 60) for shade in range(4)]
    buffer = io.BytesIO()
    frames[0].save(buffer, kind.upper(), save_all=True, append_images=frames[1:])
    source = f'My plot: <img src="data:image/{kind};base64,{base64.b64encode(buffer.getvalue()).decode()}">'
    assert sanitizer.sanitize_markdown(source).startswith(("```", "<pre>")), "an animation's frames shown"


def mathjax_configuration(page: str) -> dict:
    """What a page's `text/x-mathjax-config` scripts hand MathJax.Hub.Config, merged (each a JSON object)."""
    configuration: dict = {}
    for script in re.findall(r'<script type="text/x-mathjax-config">(.*?)</script>', page, re.DOTALL):
        for call in re.finditer(r"MathJax\.Hub\.Config\(", script):
            configuration.update(json.JSONDecoder().raw_decode(script, call.end())[0])
    return configuration


def feedback_html(notebook) -> str:
    """The feedback page of `notebook` as the course's FeedbackExporter renders it (bootstrap's CSS found where
    nbgrader's GenerateFeedback points it)."""
    import nbgrader

    from autograder.outputs.feedback import FeedbackExporter
    from autograder.settings import load_config
    config = load_config(ROOT)
    config.FeedbackExporter.extra_template_paths = [
        str(Path(nbgrader.__file__).parent / "server_extensions/formgrader/static/node_modules/bootstrap/dist/css")]
    resources = {"nbgrader": {"notebook": "modules_and_sgd", "score": 0, "max_score": 1, "late_penalty": 0}}
    return FeedbackExporter(config=config).from_notebook_node(notebook, resources=resources)[0]


def test_both_pages_typeset_only_what_the_page_budget_counts(tmp_path):
    """MathJax 2's tex2jax typesets `\\ref{..}` and `\\eqref{..}` outside any delimiter when processRefs is on (its
    default), each an expression: three answers of 4,000 `\\eqref{a} ` (40 KB each) were kept as written, spent none
    of the notebook's maths, and held Chromium 41 s and 25 s on the feedback page (red-u6, pass 19). Both pages (as
    rendered) carry one MathJax configuration, and everything tex2jax starts an expression at under it (with the
    pinned MathJax's defaults) is a mark the page budget counts."""
    from test_formgrader_browser import formgrade_html

    from autograder.nbgrader_glue.preprocessors.page_budget import MARK
    from autograder.outputs.feedback import mathjax_source
    notebook = new_notebook(cells=[new_markdown_cell("My answer: $a$ by \\eqref{main}.")])
    nbformat.write(notebook, tmp_path / "notebook.ipynb")
    feedback = mathjax_configuration(feedback_html(notebook))
    grading = mathjax_configuration(formgrade_html(tmp_path, "mallory", tmp_path / "notebook.ipynb"))
    assert feedback == grading and "tex2jax" in feedback, (feedback, grading)
    pinned = (mathjax_source() / "extensions" / "tex2jax.js").read_text()
    defaults = {name: value == "true" for name, value in re.findall(r"(process\w+):(true|false)", pinned)}
    tex2jax = {**defaults, **feedback["tex2jax"]}
    starts = [pair[0] for pair in tex2jax["inlineMath"] + tex2jax["displayMath"]]
    starts += ["\\begin{x}"] * tex2jax["processEnvironments"] + ["\\ref{x}", "\\eqref{x}"] * tex2jax["processRefs"]
    assert all(MARK.match(start) for start in starts), [start for start in starts if not MARK.match(start)]


def test_a_jpeg_with_a_stuffed_zero_before_its_first_marker_counts_the_frame_libjpeg_reads():
    """libjpeg takes `FF 00` where a marker should be for garbage and scans on to the next `FF`; a walk that reads 00 as
    a marker with a length lands wherever the next two bytes say (here a fake 1 x 1 frame inside an APP1 segment
    libjpeg skips): Chromium showed a 4000 x 4000 JPEG so built, counted 1 pixel (red-u6, pass 19)."""
    from autograder.nbgrader_glue.preprocessors.pictures import picture_pixels
    size = 4000

    def frame(width: int, height: int) -> bytes:
        return b"\xff\xc0\x00\x0b\x08" + struct.pack(">HH", height, width) + b"\x01\x01\x11\x00"

    app1_body = bytes(8) + frame(1, 1) + bytes(8)  # the walk lands at byte 18, the payload starting at byte 10
    app1 = b"\xff\xe1" + struct.pack(">H", 2 + len(app1_body)) + app1_body
    jpeg = b"\xff\xd8" + b"\xff\x00\x00\x0e" + app1 + frame(size, size) + b"\xff\xd9"
    assert picture_pixels("jpeg", jpeg) in (None, size * size)


@pytest.mark.parametrize("before_the_frame", [
    b"\xff\xd8",  # a second SOI
    b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00",  # SOS: scan data before any frame
    b"\xff\xd9",  # EOI
    b"\xff\x02\x00\x04\x00\x00",  # a marker libjpeg does not know
    b"\xff\xe1\x00\x01",  # a length shorter than itself
], ids=["soi", "sos", "eoi", "unknown-marker", "short-length"])
def test_a_jpeg_libjpeg_would_stop_on_before_its_frame_counts_as_unreadable(before_the_frame):
    """Where libjpeg's marker reader stops with an error before the first frame, a walk that reads on would count a
    frame libjpeg never reaches: such a picture is unreadable (its cell shown as text), as it is to the browser."""
    from autograder.nbgrader_glue.preprocessors.pictures import picture_pixels
    frame = b"\xff\xc0\x00\x0b\x08" + struct.pack(">HH", 1, 1) + b"\x01\x01\x11\x00"
    assert picture_pixels("jpeg", b"\xff\xd8" + before_the_frame + frame + b"\xff\xd9") is None



# Markup a written answer may hold that the allowlist keeps whole, and the axe-core rule (impact serious) each breaks
# on the page that shows it: a link with no text (a screen reader reads out its URL), a list holding what is not an
# item, an item with no list, a definition list holding a paragraph, a link inside a <summary> (a control in a
# control), a <summary> with no text, and text in Pygments' whitespace class (the allowlist's CLASSES), which the
# pages' CSS draws #bbb on #f8f8f8: words a grader barely sees.
STUDENT_MARKUP_AXE = {
    "link-name": "See [](https://example.com) here.",
    "list": "<ul><div>not an item</div></ul>",
    "listitem": "<li>an item with no list</li>",
    "definition-list": "<dl><p>a paragraph</p></dl>",
    "nested-interactive": '<details><summary><a href="https://example.com">x</a></summary>y</details>',
    "summary-name": "<details><summary></summary>y</details>",
    # Pygments' whitespace colour (#bbb), kept for a student's own span: words at 1.8:1 on the code's #f8f8f8
    "color-contrast": '<div class="highlight"><span class="w">faint words the grader barely sees</span></div>',
}


def both_pages(tmp_path: Path, notebook) -> dict[str, str]:
    """The feedback page and the grading page of `notebook`, written under tmp_path: their file: URLs."""
    from test_formgrader_browser import formgrade_html  # it imports this module

    nbformat.write(notebook, tmp_path / "notebook.ipynb")
    pages = {"feedback": feedback_html(notebook),
             "grading": formgrade_html(tmp_path, "mallory", tmp_path / "notebook.ipynb")}
    for name, html in pages.items():
        (tmp_path / f"{name}.html").write_text(html)
    return {name: (tmp_path / f"{name}.html").as_uri() for name in pages}


def looked_at(browser, url: str, look, asked: list[str] | None = None, timeout: int = 30000, **options):
    """What `look(page)` finds on the page at `url`, loaded in a context of its own (new_context `options`) that
    reaches no network (what the page asks of it goes in `asked`), closed after, however the look ended."""
    context = offline(browser, asked, **options)
    try:
        page = context.new_page()
        page.goto(url, wait_until="load", timeout=timeout)
        return look(page)
    finally:
        context.close()


def axe_on_both_pages(tmp_path, browser, notebook) -> dict[str, list[str]]:
    """The ids of axe-core's critical and serious violations on the feedback page and the grading page of
    `notebook`, in headless Chromium with the network closed."""
    from axe import blocking_violations

    return {name: looked_at(browser, url, lambda page, name=name: sorted({v["id"] for v in blocking_violations(page, name)}))
            for name, url in both_pages(tmp_path, notebook).items()}


@pytest.mark.slow
def test_a_written_answer_cannot_make_the_pages_unreadable(tmp_path, browser):
    """docs/maintainers.md: axe-core finds no critical or serious violation on the feedback page and the formgrader's
    pages. A written answer's markdown that the allowlist keeps whole may still break one (red-d12 F1, pass 22):
    each of STUDENT_MARKUP_AXE, shown on the feedback page and the grading page, gives a serious violation."""
    notebook = new_notebook(cells=[new_markdown_cell(f"**Question {number}**\n\n{markup}")
                                   for number, markup in enumerate(STUDENT_MARKUP_AXE.values(), 1)])
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    # each still shown, whole or (the structure a page needs broken) as its text
    assert all(markup in cell.source for cell, markup in zip(notebook.cells, STUDENT_MARKUP_AXE.values()))
    broken = {name: sorted(set(found) & set(STUDENT_MARKUP_AXE)) for name, found in axe_on_both_pages(tmp_path, browser, notebook).items()}
    assert broken == {"feedback": [], "grading": []}, broken


def test_a_picture_with_a_blank_alt_text_cannot_make_the_pages_unreadable(tmp_path, browser):
    """red-c17 X26-c17-2 (pass 26): `readable` reads a blank alt text as no text only inside a link or a summary, and
    the soup pass adds an alt text only where there is none: a written answer's `<img src="data:..." alt=" ">` is
    kept whole, and axe-core finds a critical violation (image-alt: an alt of only spaces is neither a description
    nor an empty, decorative one) on the feedback page and on the grading page."""
    dot = base64.b64encode(png_of(1, 1)).decode()
    markup = f'<img src="data:image/png;base64,{dot}" alt=" ">'
    notebook = new_notebook(cells=[new_markdown_cell(f"**Question 1**\n\nMy plot: {markup}")])
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert dot in notebook.cells[0].source  # still shown, whole or as its text
    broken = {name: sorted(set(found) & {"image-alt"}) for name, found in axe_on_both_pages(tmp_path, browser, notebook).items()}
    assert broken == {"feedback": [], "grading": []}, broken


@pytest.mark.parametrize("markup", ['<kbd><a href="https://example.com">a link</a></kbd>',
                                    '<div class="highlight"><kbd><span class="w">faint keys</span></kbd></div>'],
                         ids=["link-in-kbd", "token-in-kbd"])
def test_a_colour_inside_a_key_cannot_make_the_feedback_page_unreadable(tmp_path, browser, markup):
    """red-c17 X26-c17-3 (pass 26): readable.css gives links and Pygments' tokens colours that read on a white page,
    and Bootstrap draws a <kbd> white on #333: a written answer that nests one in the other (tags, a class and an
    href the allowlist keeps, each kept whole) puts dark words on the dark key, and axe-core finds a serious
    color-contrast violation on the feedback page (STUDENT_MARKUP_AXE's `.w` span held on a white page only)."""
    notebook = new_notebook(cells=[new_markdown_cell(f"**Question 1**\n\nPress {markup} to go on.")])
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    broken = {name: sorted(set(found) & {"color-contrast"})
              for name, found in axe_on_both_pages(tmp_path, browser, notebook).items()}
    assert broken == {"feedback": [], "grading": []}, broken


def contrast(pixels) -> float:
    """WCAG's contrast ratio between the lightest and the darkest of `pixels` (a PIL image): a text's colour and its
    background's, where the image holds both."""
    def luminance(rgb) -> float:
        linear = [c / 255 / 12.92 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    seen = sorted(luminance(rgb) for _, rgb in pixels.convert("RGB").getcolors(1 << 24))
    return (seen[-1] + 0.05) / (seen[0] + 0.05)


@pytest.mark.parametrize("block", ["<div>in a div</div>", "<ul><li>in a list</li></ul>"], ids=["div", "list"])
def test_a_block_inside_a_key_is_drawn_on_the_key(tmp_path, browser, block):
    """Bootstrap draws a <kbd> inline, white on #333: a block a written answer nests in one (kept whole) lay outside
    the key's dark box, its white words on the white page, invisible, and axe-core saw nothing (it took the key's
    background for the block's). What the page draws where the words are must hold them at 4.5:1 or more."""
    from PIL import Image

    notebook = new_notebook(cells=[new_markdown_cell(f"**Question 1**\n\nPress this:\n\n<div><kbd>{block}</kbd></div>")])
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert block in notebook.cells[0].source  # kept whole
    (tmp_path / "feedback.html").write_text(feedback_html(notebook))
    looked_at(browser, (tmp_path / "feedback.html").as_uri(), lambda page: page.locator(
        "kbd :text-is('%s')" % re.sub("<[^>]+>", "", block)).screenshot(path=tmp_path / "words.png"))
    assert contrast(Image.open(tmp_path / "words.png")) >= 4.5


@pytest.mark.parametrize("source", ["The loss falls from &#x202E;3 to 1 in the end.", "The loss falls from &rlm;3 - 1.",
                                    "My answer: a" + "&#769;" * 200, "My answer: a" + "&#127995;" * 200,
                                    "no&#x200B;space"],
                         ids=["bidi-override", "named-mark", "acute-marks", "skin-tones", "zero-width"])
def test_a_character_reference_cannot_bring_what_text_as_read_writes_as_an_escape(sanitizer, source):
    """red-c17 X26-c17-6 (pass 26): `text_as_read` writes a written answer's format characters, and its combining
    marks past MARKS_PER_CHARACTER, as their escapes, but reads characters, not character references: markdown
    passes `&#x202E;` and `&#769;` through as written, and the browser decodes them. So `&#x202E;` reverses the rest
    of the paragraph on both pages (Trojan Source, as U+202E itself did), and a cell of `a` and 8,000 `&#127995;`
    (72 KB, kept whole) is one character with 8,000 emoji modifiers, the run red-d13 X23-1 measured at 23 s of
    Chromium (its feedback page here: 103.6 s to load, on a busy machine). What the page's HTML holds, decoded as a browser decodes it,
    has neither."""
    from html import unescape

    from autograder.outputs.inert import MARKS_PER_CHARACTER, hidden

    shown = unescape(render(sanitizer.sanitize_markdown(source)))
    assert not [hex(ord(c)) for c in shown if hidden(c)], "a format character reaches the page"
    assert not re.search("[\u0300-\u036f\U0001f3fb-\U0001f3ff]{%d}" % (MARKS_PER_CHARACTER + 1), shown), \
        "a run of marks past MARKS_PER_CHARACTER reaches the page"


@pytest.mark.slow
@pytest.mark.parametrize("mark, count", [("\u0301", 60_000), ("\U0001F3FB", 12_000)], ids=["acute", "skin-tone"])
@pytest.mark.parametrize("where", ["markdown", "code"])
def test_one_long_run_of_marks_does_not_hold_the_page(tmp_path, browser, where, mark, count):
    """Chromium lays out one grapheme cluster in time that grows faster than its length: a letter with 4,000
    combining acute accents (U+0301) laid out in 0.1 s, 16,000 in 2.5 s, 60,000 (120 KB, within max_cell_kb; a
    written answer or a solution code cell is never cut) in 42 s, on the feedback page and the grading page alike
    (red-d12 F4, pass 22). Emoji modifiers (skin tones, U+1F3FB to U+1F3FF, category Sk, not marks) cost the same:
    4,000 after one letter in 4.4 s, 8,000 in 23 s, 16,000 in 116 s on a bare page (red-d13 X23-1, pass 23). No page
    budget counts them: the page, opened, is laid out within 10 s."""
    from playwright.sync_api import TimeoutError as LayoutTooSlow  # the browser fixture skipped without it

    cluster = "a" + mark * count
    cell = (new_markdown_cell(f"**My answer**: {cluster} b") if where == "markdown"
            else new_code_cell(f"x = 1  # {cluster} b"))
    notebook, _ = SanitizeMarkdown().preprocess(new_notebook(cells=[cell, new_markdown_cell("**The end**")]), {})
    # a code cell runs as written (the page writes the marks past 30 as escapes); the markdown shows them so
    shown = cluster if where == "code" else "a" + mark * 30 + escape(mark) * (count - 30)
    assert shown in notebook.cells[0].source, "the marks were not shown"
    (tmp_path / "feedback.html").write_text(feedback_html(notebook))
    start = time.monotonic()
    try:
        looked_at(browser, (tmp_path / "feedback.html").as_uri(), lambda page: page.evaluate(
            "[...document.querySelectorAll('.cell')].map(cell => cell.getBoundingClientRect().top)"), timeout=20000)
    except LayoutTooSlow:
        pass
    seconds = time.monotonic() - start
    assert seconds < 10, f"the page took {seconds:.1f} s (or more) to lay out"


# What lays a page's text out other than it is written: the bidirectional controls, the marks (U+200E, U+200F, U+061C),
# a zero-width space, a soft hyphen, a byte order mark and the tags (U+E0001 to U+E007F).
LAYOUT_CHARACTERS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b\xad\ufeff\U000e0001-\U000e007f]")
TROJAN = "''' The layer's output \u2067'''  ;return x @ self.weight.T"
# A written answer laid out other than it is written: a code span, a fenced block and prose (the test below, and
# test_formgrader_browser's served grading page).
TROJAN_ANSWER = (f"**My answer.** The line I changed: `{TROJAN}`\n\n```python\ndef forward(self, x):\n    {TROJAN}\n"
                 "    return x @ self.weight.T + self.bias\n```\n\nThe loss fell by \u200f3 - 1, \u202eregnol ton\u202c "
                 "and zero\u200b_grad\xad() \u2066\u2069\u061c\ufeff\U000e0041")


def test_code_on_the_pages_reads_as_it_runs(tmp_path):
    """Trojan Source (CVE-2021-42574): a bidirectional control in a string or comment reorders what the pages show of
    a code cell. In the Linear cell, `''' The layer's output \\u2067'''  ;return x @ self.weight.T` shows on both pages
    as a docstring that reads "The layer's output return x @ self.weight.T;", above the right `return ... + self.bias`,
    while Python returns early without the bias: an instructor who reads the code to judge a failed check (a regrade
    request, an override) reads other code than the checks ran (red-d12 F5, pass 22). The terminal and the pages' notes
    write such a character as its escape (inert.py); the code cells keep it."""
    from test_formgrader_browser import formgrade_html  # it imports this module

    code = f"class Linear(Module):\n    def forward(self, x):\n        {TROJAN}\n        return x @ self.weight.T + self.bias\n"
    notebook, _ = SanitizeMarkdown().preprocess(new_notebook(cells=[new_code_cell(code)]), {})
    nbformat.write(notebook, tmp_path / "notebook.ipynb")
    pages = {"feedback": feedback_html(notebook), "grading": formgrade_html(tmp_path, "mallory", tmp_path / "notebook.ipynb")}
    assert {name: LAYOUT_CHARACTERS.findall(page) for name, page in pages.items()} == {"feedback": [], "grading": []}


def test_a_written_answer_reads_on_the_pages_as_it_is_written(tmp_path):
    """Trojan Source in a written answer (red-d12 F5's leftover, pass 23): code cells showed their format characters as
    escapes, but a written answer, which both pages render from the same markdown, kept them. A code span or a
    fenced block the instructor reads (and may copy to run) read other than it is (`''' The layer's output \\u2067'''
    ;return x @ self.weight.T` as a docstring above the right return), and so did prose: an RLM (U+200F) before
    "3 - 1" shows "1 - 3", and an RLO (U+202E) reverses the rest of its paragraph. In the student's markdown and raw
    cells each is written as its escape, as in code; the joiners that Persian, the Indic scripts and emoji need stay."""
    honest = "**Persian, Hindi, an emoji.** می\u200cخواهم, \u0915\u094d\u200d\u0937, \U0001f469\u200d\U0001f4bb"
    notebook = solution_notebook()
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader.score = 0  # as autograded: the feedback page shows each score
    for cell, source in zip(answers(notebook), [TROJAN_ANSWER, honest, f"```\n{TROJAN}\n```"]):
        cell.source = source
    notebook.cells.insert(1, new_raw_cell(f"<pre>{TROJAN}</pre>"))
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert [cell.source for cell in answers(notebook)][1] == honest
    pages = {"feedback": feedback_html(notebook), "grading": grading_page(tmp_path, notebook)[0]}
    assert {name: LAYOUT_CHARACTERS.findall(page) for name, page in pages.items()} == {"feedback": [], "grading": []}
    for page in pages.values():
        assert page.count("The layer's output \\u2067") == 4 and "\\u200f3 - 1, \\u202eregnol ton\\u202c" in page
        assert honest.split("** ")[1] in page


@pytest.mark.slow
@pytest.mark.parametrize("cell", [
    new_code_cell("bound = 1.0 / np.sqrt(n_in)  # PyTorch's default range for nn.Linear's weight and bias: it keeps the "
                  "size of the outputs from growing with n_in, as the lesson says, and the weight is drawn first"),
    new_markdown_cell("My answer, with the line I changed:\n\n```python\nbound = 1.0 / np.sqrt(n_in)  # PyTorch's "
                      "default range for nn.Linear's weight and bias: it keeps the size of the outputs from growing with n_in, as the "
                      "lesson says, and the weight is drawn first\n```"),
], ids=["code-cell", "fenced-block"])
def test_a_long_line_of_code_leaves_the_pages_readable(tmp_path, browser, cell):
    """readable.css wraps a check's output, "never a box that scrolls sideways (which a keyboard cannot reach)", but
    not the code: one line of about 190 characters in a code cell of the student's, or in a fenced block of a written
    answer, is a <pre> that scrolls sideways and takes no keyboard focus, axe-core's `scrollable-region-focusable`
    (serious) on the feedback page (red-d12 F6, pass 22; the grading page, as rendered here, wraps it). An honest
    notebook has such lines."""
    notebook, _ = SanitizeMarkdown().preprocess(new_notebook(cells=[cell]), {})
    broken = axe_on_both_pages(tmp_path, browser, notebook)
    assert broken == {"feedback": [], "grading": []}, broken


@pytest.mark.slow
def test_a_students_maths_loads_no_picture_from_the_network(tmp_path, browser):
    """Remote pictures are dropped (SanitizeMarkdown's docstring: a remote one tells its server when the instructor
    looks, a tracking pixel), and the Safe extension keeps a cursor's url() from the network. But MathJax's `\\mmlToken`
    makes any MathML token element, `mglyph` among them, whose `src` the Safe extension lets through for http(s) and
    file: URLs: `$\\mmlToken{mglyph}[src="https://..."]{}$` in a written answer is kept whole, and the page, once
    typeset, asks the network for the picture (red-d12 F7, pass 22). Nothing on the page may ask the network."""
    pixel = "https://remote.invalid/pixel.png"
    answer = f'My answer: $x \\mmlToken{{mglyph}}[src="{pixel}", width="1px", height="1px", alt="x"]{{}}$ done.'
    notebook, _ = SanitizeMarkdown().preprocess(new_notebook(cells=[new_markdown_cell(answer)]), {})
    (tmp_path / "feedback.html").write_text(feedback_html(notebook))
    asked: list[str] = []

    def typeset(page):
        page.wait_for_function("window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0", timeout=30000)
        page.wait_for_timeout(1000)

    looked_at(browser, (tmp_path / "feedback.html").as_uri(), typeset, asked)
    assert not asked, f"the page asked the network for {asked}"


@pytest.mark.parametrize("markup", list(STUDENT_MARKUP_AXE.values())[:-1], ids=list(STUDENT_MARKUP_AXE)[:-1])
def test_markup_a_screen_reader_cannot_follow_is_shown_as_its_text(markup):
    """The structure axe-core holds serious (red-d12 F1, pass 22) is judged with the rest of a cell's HTML (`readable`):
    such a markdown cell of the student's is shown as its text in a code block, and such an HTML raw cell as escaped
    text, as the page budget shows one."""
    from html import escape

    notebook = new_notebook(cells=[new_markdown_cell(markup), new_raw_cell(markup)])
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert notebook.cells[0].source.startswith("```\n") and markup in notebook.cells[0].source
    if markup.startswith("<"):  # a raw cell is HTML: the empty link is markdown's
        assert notebook.cells[1].source == "<pre>" + escape(markup) + "</pre>"


def test_a_name_with_an_invisible_character_shows_on_the_pages_as_another_name(tmp_path):
    """red-d15 X24-d15-3 (pass 24): `+ self.bias\\u034f` (a combining grapheme joiner, Mn) is another name to Python, so
    the checks fail with "'Linear' object has no attribute 'bias͏'", but both pages show the Linear cell as the lesson's
    `+ self.bias`: Chromium draws U+034F at zero width (the line measured 101.5 px with and without it on the
    feedback page), and a Hangul filler (U+3164, Lo) as a blank. The pages write format characters as escapes
    (code_as_run), not these default-ignorable letters and marks, which Python takes in names."""
    from test_formgrader_browser import formgrade_html  # it imports this module

    invisible = re.compile("[\u034f\u17b4\u17b5\u180b-\u180d\ufe00-\ufe0f\U000e0100-\U000e01ef\u115f\u1160\u3164\uffa0]")
    code = ("class Linear(Module):\n    def forward(self, x):\n        return x @ self.weight.T + self.bias\u034f\n"
            "    def parameters(self):\n        return [self.weight, self.bias\u3164]\n")
    notebook, _ = SanitizeMarkdown().preprocess(new_notebook(cells=[new_code_cell(code)]), {})
    nbformat.write(notebook, tmp_path / "notebook.ipynb")
    pages = {"feedback": feedback_html(notebook), "grading": formgrade_html(tmp_path, "mallory", tmp_path / "notebook.ipynb")}
    assert {name: invisible.findall(page) for name, page in pages.items()} == {"feedback": [], "grading": []}


@pytest.mark.parametrize("tag", ["small", "sub", "sup", "code"])
def test_nested_small_print_cannot_hide_a_written_answers_words(tmp_path, browser, tag):
    """red-c18 X27-c18-2 (pass 27): <small>, <sub> and <sup> each draw their text smaller than their parent's, and
    the allowlist keeps any depth of them whole (readable() judges structure only, axe-core has no rule for a
    font's size). Thirty deep, a written answer's words are drawn at 0.1 px (<small>) or 0.003 px (<sub>, <sup>):
    nothing on either page shows them, yet they are the answer the notebook holds, which the instructor grades by
    what the page shows (and a regrade request, a plagiarism check or a search reads as written). What the page
    draws of a word in a written answer must be large enough to read (here: at least 6 px), and drawn inside its
    cell's box, which paints nothing outside itself (fix-css2: Bootstrap raises or lowers each <sub> and <sup> by a
    part of its size, thirty of them took the words 80 to 160 px off their line; <code> is drawn at 90% of its
    parent's size, thirty deep at 0.6 px)."""
    markup = f"<{tag}>" * 30 + "I copied this from a classmate." + f"</{tag}>" * 30
    notebook = new_notebook(cells=[new_markdown_cell(f"**Question 1**\n\nMy answer. {markup}")])
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert "I copied this from a classmate." in notebook.cells[0].source
    (tmp_path / "feedback.html").write_text(feedback_html(notebook))
    size, inside = looked_at(browser, (tmp_path / "feedback.html").as_uri(), lambda page: page.evaluate("""() => {
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
            const node = walker.currentNode;
            if (node.data.includes('I copied this')) {
                const range = document.createRange();
                range.selectNodeContents(node);
                const box = range.getBoundingClientRect();
                const cell = node.parentElement.closest('.text_cell_render').getBoundingClientRect();
                return [parseFloat(getComputedStyle(node.parentElement).fontSize),
                        box.top >= cell.top && box.bottom <= cell.bottom];
            }
        }
        return [null, null];
    }"""))
    assert size is not None and size >= 6, f"the words are drawn at {size} px"
    assert inside, "the words are drawn outside their cell's box"


# Where a word of a rendered cell is drawn, on a page 1000 px wide: out of sight when it lies past its cell's box
# (which paints nothing outside itself: readable.css's `contain: paint`) and nothing between them scrolls sideways.
WORD_OUT_OF_SIGHT = """(word) => {
    const found = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const node = walker.currentNode, at = node.data.indexOf(word);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + word.length);
        const box = range.getBoundingClientRect(), cell = node.parentElement.closest('.text_cell_render');
        const edge = cell.getBoundingClientRect();
        let scrolls = false;
        for (let e = node.parentElement; e && e !== cell.parentElement; e = e.parentElement) {
            const style = getComputedStyle(e);
            scrolls = scrolls || (['auto', 'scroll'].includes(style.overflowX) && e.scrollWidth > e.clientWidth);
        }
        found.push(!scrolls && (box.left >= edge.right || box.right > edge.right + 1));
    }
    return found;
}"""


@pytest.mark.parametrize("markup", [
    "My answer: " + "a" * 400 + "SECRETWORD and the rest.",
    "| " + " | ".join(f"c{n}" for n in range(60)) + " |\n|" + "---|" * 60 + "\n| " + " | ".join(["x" * 12] * 59)
    + " | SECRETWORD |",
    "My answer: `" + "a" * 400 + "SECRETWORD`",
], ids=["long-word", "wide-table", "code-span"])
def test_a_written_answer_wider_than_its_cell_is_not_cut_off_out_of_sight(tmp_path, browser, markup):
    """red-c18 X27-c18-3 (pass 27): each rendered markdown cell paints nothing outside its own box (readable.css's
    `contain: paint`, against maths moved over a FAIL line), and nothing scrolls it: what is wider than the cell is
    cut off, with no scroll bar to reach it and the page itself no wider (scrollWidth 1000). A word glued to 400
    letters, a table's 60th column or a long code span (all kept whole) are drawn 2,000 to 6,000 px to the right
    of the cell on both pages, unseen by the instructor who grades the answer, while the notebook holds them (an
    honest student's wide table is cut the same way). axe-core reports nothing. Every word must be drawn where it
    can be seen: inside the cell's box, or in a box that scrolls to it."""
    notebook = new_notebook(cells=[new_markdown_cell(f"**Question 1**\n\n{markup}")])
    notebook, _ = SanitizeMarkdown().preprocess(notebook, {})
    assert markup in notebook.cells[0].source  # kept whole
    hidden = {name: looked_at(browser, url, lambda page: page.evaluate(WORD_OUT_OF_SIGHT, "SECRETWORD"),
                              viewport={"width": 1000, "height": 900})
              for name, url in both_pages(tmp_path, notebook).items()}
    assert hidden == {"feedback": [False], "grading": [False]}, hidden


def test_a_table_too_wide_for_its_cell_scrolls_in_a_box_the_keyboard_reaches(tmp_path, browser):
    """fix-css2 (pass 27): a table still wider than its cell once every cell's words wrap (200 columns) scrolls
    sideways inside its own box (readable.css), which axe-core reports as serious (scrollable-region-focusable)
    unless the box takes the keyboard's focus: markdown_cell.j2 gives every table a tabindex, on both pages."""
    markup = "| " + " | ".join(f"c{n}" for n in range(200)) + " |\n|" + "---|" * 200 + "\n| " + " | ".join(["xx"] * 200) + " |"
    notebook, _ = SanitizeMarkdown().preprocess(new_notebook(cells=[new_markdown_cell(f"**Question 1**\n\n{markup}")]), {})
    broken = {name: sorted(set(found) & {"scrollable-region-focusable"})
              for name, found in axe_on_both_pages(tmp_path, browser, notebook).items()}
    assert broken == {"feedback": [], "grading": []}, broken
