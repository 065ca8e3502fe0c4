"""SanitizeMarkdown: a student's markdown must render inert in the formgrader and on the feedback page."""
from __future__ import annotations

import html
import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import nh3
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from pygments.lexers import find_lexer_class_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound
from traitlets import Bool, Int, List, Unicode

from ...assignment import course_assignment
from ...outputs.inert import text_as_read
from .overwrite_cells_at_once import released_metadata
from .page_budget import HIGHLIGHT_CHARS, PageBudget

# What nbconvert's markdown renderer (mistune with nbconvert's maths, tables, lists, code highlighting,
# heading anchors) produces from plain markdown, plus the inline HTML students use in written answers.
TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre",
    "q", "s", "samp", "small", "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
}
ATTRIBUTES = {
    "a": {"href", "title", "class"},
    "abbr": {"title"},
    "img": {"src", "alt", "title", "width", "height"},
    "ol": {"start"},
    "th": {"style", "align"},
    "td": {"style", "align"},
    "code": {"class"},
    "div": {"class"},
    "span": {"class"},
    **{f"h{level}": {"id"} for level in range(1, 7)},
}
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")
LINK_SCHEMES = ("http", "https", "mailto")
# An alt text of only spaces (JavaScript's \s, which axe-core reads it with, also holds U+FEFF) is neither a
# description nor the empty alt of a decorative picture: axe-core's image-alt, a critical violation on both pages.
# The allowlist drops it, so the picture is one with no alt, which both pages' soup pass (nbconvert's, and the
# feedback page's `soup_pass`) gives nbconvert's text for a picture with no description.
BLANK_ALT = re.compile(r"[\s\ufeff]+")
# Ids of the formgrader and feedback pages themselves: a heading must not take one (the formgrader's scripts find
# score boxes by id, and the kit's its alert that a score was saved on a page regraded since; the feedback page's
# contents links jump to its own).
PAGE_IDS = {"notebook", "notebook-container", "statusmessage", "header", "toc", "top", "kit-answer-changed"}
# The ids the pages give each grade: the formgrader's score, extra credit and comment fields, the feedback page's
# comment anchor.
GRADE_IDS = ("{}", "{}_extra_credit", "{}-comment", "comment-{}")


def reserved_ids(grade_ids) -> set[str]:
    """The ids no heading may take on pages that show grades `grade_ids`."""
    return PAGE_IDS | {form.format(grade_id) for grade_id in grade_ids for form in GRADE_IDS}


# Classes nbconvert's renderer writes: code highlighting (Pygments' token classes), heading anchors, a code
# block's language. No other class: the page's own (Bootstrap's `modal`, `navbar-fixed-top`) could lay an
# overlay over the score boxes.
CLASSES = {"span": set(STANDARD_TYPES.values()) - {""}, "div": {"highlight"}, "a": {"anchor-link"}}
LANGUAGE_CLASS = re.compile(r"language-[A-Za-z0-9_+#.-]{1,40}")
# The Pygments lexers the pages may highlight with, by the names nbconvert looks them up by. Many lexers take time
# that grows with the square of a run in the code (autoit: 7 s of CPU for 8 KB of spaces, over 100 s for 16 KB;
# IPython's ipython3, which Jupyter names in every notebook it saves: 0.7 s for 8 KB of `*`, a minute for 48 KB),
# and the pages highlight while they are written and each time the formgrader shows one. These take linear time
# (256 KB of any of tests/test_sanitize_markdown.py's runs in about a second or less). None of them hands code to
# a lexer named in it: Markdown's does, highlighting each fenced block inside with the lexer its fence names.
LEXERS = ("python", "py", "python3", "py3", "pycon", "pytb", "py3tb", "numpy", "text", "bash", "sh", "json",
          "latex", "tex")
CODE_LEXER = "python"  # what the pages highlight code cells with when the notebook names a lexer not in LEXERS

_VERDICTS: dict = {}  # (source, policy) -> inert(): see SanitizeMarkdown.inert


def render(source: str, attachments: dict | None = None) -> str:
    """`source` rendered as the formgrader and feedback templates render a markdown cell (markdown2html)."""
    return rendered(source, attachments)[0]


def rendered(source: str, attachments: dict | None = None, lexers: tuple[str, ...] | None = None,
             url_chars: int | None = None, highlight_chars: int = HIGHLIGHT_CHARS) -> tuple[str, bool, int]:
    """`source` rendered as `render` does, but a code block in a language whose lexer is not among `lexers` (when
    given), or past `highlight_chars` of such blocks, without highlighting; whether there was such a block; and the
    characters of the blocks in a language a lexer has. Past `url_chars` characters of link and image URLs (when
    given), RepeatedUrls is raised."""
    renderer = _LexerBoundRenderer(lexers, url_chars, highlight_chars, escape=False, attachments=attachments or {})
    return MarkdownWithMath(renderer=renderer).render(source), renderer.other_lexer, renderer.highlighted


# Markdown writes a link's or an image's whole URL again at each use: a reference (`[a]: URL` once, then `![][a]`,
# 7 characters, each time) and an `attachment:` image do so for a URL the cell holds once. 55 KB of markdown made
# 49 MB of HTML, and a cell within max_cell_kb could make hundreds of MB (a 1.8 MB attachment, gigabytes), in the
# grading process and on both pages. A cell's URLs may come to URL_FACTOR times what it holds, plus URL_SLACK.
URL_FACTOR = 4
URL_SLACK = 4096


class RepeatedUrls(ValueError):
    """A cell whose links and images render more URL than it may (URL_FACTOR)."""


def url_chars_allowed(source: str, attachments: dict) -> int:
    """How many characters of link and image URLs a cell of `source` with `attachments` may render: URL_FACTOR
    times what the cell takes in the notebook."""
    return URL_FACTOR * (len(source) + (len(json.dumps(attachments)) if attachments else 0)) + URL_SLACK


def is_lexer(name: str) -> bool:
    """Whether nbconvert's renderer finds a Pygments lexer (IPython's among them) by `name`."""
    try:
        find_lexer_class_by_name(name)
    except ClassNotFound:
        return False
    return True


class _LexerBoundRenderer(IPythonRenderer):
    """nbconvert's renderer, noting a code block whose language names a lexer outside `lexers`, or past the cell's
    first `highlight_chars` of such blocks (what is left of the notebook's), which it renders plain (the pages would
    highlight it)."""

    def __init__(self, lexers: tuple[str, ...] | None, url_chars: int | None = None,
                 highlight_chars: int = HIGHLIGHT_CHARS, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lexers = lexers
        self.highlight_chars = highlight_chars
        self.other_lexer = False
        self.highlighted = 0  # characters of the cell's fenced blocks in a language a lexer has
        self.url_chars = url_chars  # what is left of the cell's URL_FACTOR, None: unbounded

    def _spend(self, chars: int) -> None:
        if self.url_chars is not None:
            self.url_chars -= chars
            if self.url_chars < 0:
                raise RepeatedUrls("the cell's links and images repeat more URL than it holds")

    def link(self, text: str, url: str, title: str | None = None) -> str:
        self._spend(len(url) + len(title or ""))  # a title is written again at each use, as the URL is
        return super().link(text, url, title)

    def image(self, text: str, url: str, title: str | None = None) -> str:
        html = super().image(text, url, title)  # an attachment's data is put in here
        self._spend(len(html))
        return html

    def block_code(self, code: str, info: str | None = None) -> str:
        words = (info or "").strip().split(maxsplit=1)  # as nbconvert reads the language
        if self.lexers is not None and words and not (info or "").startswith("mermaid") and is_lexer(words[0]):
            self.highlighted += len(code)  # the cell's, all blocks together: one answer may hold many
            if words[0].lower() not in self.lexers or self.highlighted > self.highlight_chars:
                self.other_lexer = True
                info = None
        return super().block_code(code, info=info)


# What an HTML fragment may hold that a browser reads as a tag name, and as a URL scheme or a style property once
# its character references are decoded and the tabs and newlines URL parsers drop are gone: over-approximated, in
# time linear in the fragment.
# A tag name as HTML's tokenizer reads it: after "<" or "</", an ASCII letter, then up to HTML's own whitespace (tab,
# LF, FF, space; CR is LF by then), "/" or ">". Anything else belongs to the name (Python's \s is wider: \x0b, NBSP).
_TAG_NAME = re.compile(r"</?([A-Za-z][^\t\n\f\r />]*)")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def _parsed(name: str) -> str:
    """A tag's name as the tokenizer makes it: NUL as U+FFFD, ASCII letters lowered and nothing else (the Kelvin
    sign stays itself)."""
    return name.replace("\x00", "\ufffd").translate(_ASCII_LOWER)


def tag_names(fragment: str) -> set[str]:
    """Every element name a parse of `fragment` may make: each tag's name as parsed, and as written."""
    names = {match[1] for match in _TAG_NAME.finditer(fragment)}
    return names | {_parsed(name) for name in names}


def kept_whole(fragment: str) -> str:
    """`fragment` as nh3 (html5ever) parses and writes it back when it removes nothing: every tag name, URL scheme
    and style property the fragment may hold allowed, every attribute, comment and script kept. It differs from
    the fragment cleaned under the allowlist exactly when the allowlist removed something."""
    names = tag_names(fragment)
    words = {word.lower() for word in _WORD.findall(re.sub(r"[\t\n\r]", "", html.unescape(fragment)))}
    return nh3.clean(fragment, tags=names, clean_content_tags=set(), generic_attribute_prefixes={""},
                     url_schemes=words, strip_comments=False, link_rel=None,
                     # nh3 filters style attributes only without <style> tags; the allowlist drops those anyway
                     filter_style_properties=None if "style" in names else words)


# What follows a cell's HTML on a page is more markup (the next cell, the page's own): a fragment is judged with a
# boundary after it, which it must leave standing on its own. A tag cut off at the fragment's end (which html5ever
# drops there, but which swallows the page's next markup up to a quote) or an element left open (which would fold the
# next cell, or the rubric, into it) fails to. Its text first has the parser open again a formatting element an end
# tag closed too early (`<p><a href=...>x</p>`), as the page's next text would.
BOUNDARY = "\n<hr>"
_END_TAG = re.compile(r"</([A-Za-z][^\t\n\f\r />]*)")


def closed_and_whole(fragment: str, cleaned: str) -> bool:
    """Whether the allowlist removed nothing from `fragment` (`cleaned` is it cleaned) and the fragment closes every
    element and tag it opens and no other, so that it leaves the page around it and markup after it as they were.

    A fragment's parse drops what a page's parse acts on: `<body>` and `<html>` (whose attributes, an `onload`
    among them, a page adds to its own), and an end tag with nothing to close in the fragment (which closes the
    page's own elements). So every tag must name an element of the allowlist, and every end tag stay."""
    if any(_parsed(name) not in TAGS for name in tag_names(fragment)):
        return False
    whole = kept_whole(fragment + BOUNDARY)
    ends = Counter(_parsed(name) for name in _END_TAG.findall(fragment))
    kept = Counter(_parsed(name) for name in _END_TAG.findall(whole))
    if whole != cleaned + BOUNDARY or any(kept[name] < count for name, count in ends.items()):
        return False
    # Both pages pass their HTML through BeautifulSoup (on html.parser) before a browser reads it, and the browser
    # reads what BeautifulSoup's tree writes back. html.parser reads some markup otherwise (the last of two attributes
    # of a name, where a browser keeps the first; `id=="top"`; an end tag ends at its first `>`, even in quotes; `</ x>`
    # is an end tag) and its tree nests otherwise (`<b><div></b>`). So it must read the fragment as it reads nh3's
    # writing of it, which nests as a browser's tree does: the same tags, attributes, text and nothing else. Only now,
    # on a fragment nh3 took whole (no comment, no tag left open: none of html.parser's slow paths).
    return _soup_events(fragment) == _soup_events(cleaned)


# What axe-core (the pages' accessibility check, tests/axe.py) holds a serious violation that markup the allowlist keeps
# could make: a list or a definition list holding what is not its item ("list", "definition-list"), an item outside its
# list ("listitem", "dlitem"), a link or a <summary> with no text ("link-name", "summary-name"), a control inside a
# <summary> ("nested-interactive").
LIST_CHILDREN = {"ul": {"li"}, "ol": {"li"}, "dl": {"dt", "dd"}}
ITEM_PARENTS = {"li": {"ul", "ol"}, "dt": {"dl"}, "dd": {"dl"}}
VOID = {"br", "hr", "img"}


def readable(fragment: str) -> bool:
    """Whether `fragment` (HTML that nests, nh3's writing) breaks none of the structure a page needs to be read with a
    screen reader or a keyboard (LIST_CHILDREN), in one pass over its tags."""
    stack: list[list] = []  # [tag, whether it has text (a link or a summary)], open elements
    names: dict[str, list[list]] = {"a": [], "summary": []}  # the open links and summaries, innermost last
    for event in _soup_events(fragment):
        kind, parent = event[0], stack[-1][0] if stack else ""  # "": the cell's top level
        if kind == "start":
            tag, attributes = event[1], dict(event[2])
            if (tag not in LIST_CHILDREN.get(parent, (tag,)) or parent not in ITEM_PARENTS.get(tag, (parent,))
                    or names["summary"] and tag in ("a", "details", "summary")):
                return False
            if tag in VOID:
                if tag == "img" and (attributes.get("alt") or "").strip():
                    for opened in names.values():
                        if opened:
                            opened[-1][1] = True
                continue
            element = [tag, tag == "a" and "href" not in attributes]  # an <a> with no href is no link
            stack.append(element)
            if tag in names:
                names[tag].append(element)
        elif kind == "end":
            if not stack or stack[-1][0] != event[1]:
                return False
            tag, named = stack.pop()
            if tag in names:
                names[tag].pop()
                if not named:
                    return False
        elif kind == "text" and event[1].strip():
            if parent in LIST_CHILDREN:
                return False
            for opened in names.values():
                if opened:
                    opened[-1][1] = True
        elif kind != "text":
            return False
    return not stack


class _SoupEvents(HTMLParser):
    """What BeautifulSoup's html.parser builder is told: each start tag with its attributes (the last of a name),
    each end tag, the text (as one run between tags), and whatever else it reads (comments, declarations)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[tuple] = []

    def _add(self, *event) -> None:
        self.events.append(event)

    def handle_starttag(self, tag, attrs):
        self._add("start", tag, sorted(dict(attrs).items(), key=lambda item: item[0]))

    def handle_startendtag(self, tag, attrs):  # `<br />` as `<br>`: nh3 writes void elements without the slash
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self._add("end", tag)

    def handle_data(self, data):
        if self.events and self.events[-1][0] == "text":
            self.events[-1] = ("text", self.events[-1][1] + data)
        else:
            self._add("text", data)

    def handle_comment(self, data):
        self._add("comment", data)

    def handle_decl(self, decl):
        self._add("declaration", decl)

    def handle_pi(self, data):
        self._add("instruction", data)

    def unknown_decl(self, data):
        self._add("unknown", data)


def _soup_events(fragment: str) -> list[tuple]:
    reader = _SoupEvents()
    reader.feed(fragment)
    reader.close()
    return reader.events


class SanitizeMarkdown(NbGraderPreprocessor):
    """Make every markdown cell (and HTML raw cell) render inert, leaving honest markdown as it was written.

    Why: nbgrader's formgrader and feedback templates render markdown cells with nbconvert's
    ``markdown2html``, which passes raw HTML through and keeps ``javascript:`` link targets. A
    ``<script>`` or ``<img onerror=...>`` in a written answer would run in the formgrader on the Jupyter
    server's origin, with the instructor's session (files through /api/contents, terminals through
    /api/terminals), and in the student's feedback page. ``HTMLExporter.sanitize_html`` does not reach
    those templates' markdown block.

    How: an HTML sanitiser must not be run on markdown text (it would eat the ``<`` of ``$a<b$`` and of
    code spans, and the ``>`` of quotes). Instead each cell is rendered exactly as the templates render
    it (nbconvert's own mistune renderer and maths parser), and the HTML is cleaned with ``nh3`` (the
    Ammonia sanitiser) under an allowlist. When the cleaned HTML holds the same tags, attributes and
    text as the rendered HTML (compared as parsed events, so quoting and end tags do not matter), and the HTML
    closes every element and tag it opens (markup after it on the page, such as the next cell or the graders'
    rubric, stays outside it), the markdown was already inert and its source is left byte for byte: maths, code spans, emphasis,
    lists, tables, ``<br>``, ``<sub>`` and ``<sup>`` read as written, and the instructor's locked cells
    are untouched. Otherwise the cell's source becomes the cleaned HTML, on one line inside a ``<div>``
    (newlines as ``&#10;``) so that markdown passes it through unchanged; the result is rendered and
    checked again, and if it still does not hold, the cell becomes the student's text as a code block,
    and failing that a one-line note. Every cell the formgrader shows therefore renders to HTML that the
    allowlist leaves as it is.

    Dropped: scripts, ``<style>``, style attributes (but ``text-align`` on table cells, which markdown
    tables produce), event handlers (``on*``), iframes, object, embed, forms and inputs, meta, base,
    link, svg and MathML, comments, every URL but http(s)/mailto/``#anchor`` links (so a markdown
    ``[x](javascript:...)`` loses its target), classes other than those nbconvert writes (Pygments'
    highlighting, heading anchors, a code block's language: the page's own, such as Bootstrap's
    ``modal``, could lay an overlay over the score boxes), and a heading id equal to one the pages give a
    grade of the release (the formgrader's scripts find score and comment boxes by id, a deleted cell's among
    them). Maths is left to MathJax, which both pages load with its ``Safe`` extension (no
    ``\\href{javascript:...}``, no cursor style).

    Images: only inline ``data:image/png|jpeg|gif`` (what Jupyter makes of a pasted picture; attachments
    of other types, SVG included, are dropped). Remote and relative images are dropped: they are not
    part of the submission, could change after grading, and a remote one tells its server when the
    instructor looks (a tracking pixel). An alt text of only spaces is dropped (BLANK_ALT).

    Repeated URLs: a link's or an image's URL is written at each use, and a reference or an attachment lets a
    cell use one many times (URL_FACTOR): a cell whose links and images render more than it may is shown as its text.

    Highlighting: a page highlights code with the Pygments lexer the notebook names (`language_info`, a code cell's
    ``magics_language``, a fenced block's language), and many lexers take time that grows with the square of the
    code (LEXERS). So code cells are highlighted with a lexer of `lexers` (else ``python``), and a markdown cell
    with a fenced block in another lexer's language, or past the notebook's HIGHLIGHT_CHARS of the student's fenced
    blocks, is not kept whole (its cleaned HTML holds those blocks plain).

    Maths and pictures: a cell of the student's that defines a TeX macro, or whose maths would take the notebook
    past its MATHS_MARKS, or whose pictures (by their headers' sizes) past its IMAGE_PIXELS, is shown as its text in
    a code block, which MathJax does not typeset (page_budget.py).

    Structure: HTML the allowlist keeps whole but a screen reader or a keyboard cannot follow (`readable`: an empty
    link or <summary>, a list holding what is not its item, a link inside a <summary>) is not kept whole either: the
    cell is shown as its text (an HTML raw cell as escaped text).

    Combining marks and format characters: a browser lays out one character with thousands of marks in time that
    grows faster than their number, and a bidirectional control (U+202E) reorders the rest of its paragraph, in a code
    span, a fenced block or prose alike (Trojan Source). In the student's cells the marks past MARKS_PER_CHARACTER
    after one character, and every format character but the two joiners (Persian, the Indic scripts and emoji need
    them), are written as their escapes (`inert.text_as_read`), as code cells show them.

    Raw cells the HTML exporter emits (no raw mimetype, or text/html) are cleaned with the same
    allowlist; other raw cells are not rendered and are left alone. A raw mimetype that is not text is removed,
    and the cell cleaned as one without. Code cell outputs are cleared
    earlier by nbgrader's ClearOutput.
    """

    enabled = Bool(True, help="Sanitise markdown and raw cells.").tag(config=True)
    image_types = List(Unicode(), list(IMAGE_TYPES),
                       help="Image types kept as inline data: URLs and as cell attachments.").tag(config=True)
    link_schemes = List(Unicode(), list(LINK_SCHEMES),
                        help="URL schemes a link may point to (besides #anchors on the page).").tag(config=True)
    note = Unicode("*[This cell was removed by the grader: it could not be shown safely.]*",
                   help="What replaces a cell that neither cleaning nor a code block makes safe.").tag(config=True)
    lexers = List(Unicode(), list(LEXERS), help="Pygments lexers (by name, lower case) the pages may highlight "
                                                 "code with; another named by the notebook is not used (LEXERS: "
                                                 "many lexers take time that grows with the square of the "
                                                 "code).").tag(config=True)
    max_cell_kb = Int(128, help="A longer markdown or raw cell is replaced by `note` unread: nh3 (html5ever) takes "
                                "time that grows faster than linearly with a text run of many character "
                                "references, so each cell it reads is bounded.").tag(config=True)

    _reserved_ids: set = PAGE_IDS

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.budget = PageBudget()  # the notebook's: preprocess starts each notebook with a new one

    def preprocess(self, nb, resources):
        # Every grade of the release, not only the notebook's: nbgrader keeps the grade of a cell the student
        # deleted, and the formgrader still shows its score box, which a heading of that id would take over.
        grade_ids = {cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells} - {None}
        assignment = resources.get("nbgrader", {}).get("assignment")
        if assignment:
            release = course_assignment(Path(CourseDirectory(parent=self).root), assignment).release
            grade_ids |= released_metadata(release).keys()
        self._reserved_ids = reserved_ids(grade_ids)
        self.budget = PageBudget()
        if self.enabled:
            self.bound_code_highlighting(nb)
        return super().preprocess(nb, resources)

    def bound_code_highlighting(self, nb) -> None:
        """The pages highlight code cells with a lexer of `lexers`: nbconvert's choice, `language_info`'s
        `pygments_lexer` else its `name` (none: ipython3), and a code cell's `magics_language` under an IPython
        lexer, made so."""
        info = nb.metadata.setdefault("language_info", {"name": CODE_LEXER})
        if str(info.get("pygments_lexer", info.get("name", ""))).lower() not in self.lexers:
            info["pygments_lexer"] = CODE_LEXER
        for cell in nb.cells:
            cell.metadata.pop("magics_language", None)

    def preprocess_cell(self, cell, resources, cell_index):
        students = _students(cell)
        if cell.cell_type == "markdown":
            if "attachments" in cell:
                cell.attachments = self.clean_attachments(cell.attachments)
            cell.source = self.sanitize_markdown(cell.source, cell.get("attachments") or {}, students)
        elif cell.cell_type == "raw":
            cell.pop("attachments", None)
            if not isinstance(cell.metadata.get("raw_mimetype", ""), str):  # as absent here and on the pages, whose
                del cell.metadata["raw_mimetype"]  # templates call its .lower() too
            if cell.metadata.get("raw_mimetype", "").lower() in ("", "text/html"):
                if self.too_long(cell.source):
                    cell.source = ""
                    return cell, resources
                if students:
                    cell.source = text_as_read(cell.source)
                cleaned = self.clean(cell.source)
                if students and not self.budget.shows(cell.source, cleaned):
                    cell.source = "<pre>" + html.escape(cell.source) + "</pre>"  # as text: MathJax skips a <pre>
                elif not closed_and_whole(cell.source, cleaned):
                    cell.source = cleaned if closed_and_whole(cleaned, self.clean(cleaned)) and readable(cleaned) else ""
                elif not readable(cleaned):  # as text, as the page budget shows it
                    cell.source = "<pre>" + html.escape(cell.source) + "</pre>"
        return cell, resources

    def too_long(self, source: str) -> bool:
        return len(source) > self.max_cell_kb * 1024  # characters: never fewer than its bytes' KB would allow

    # ------------------------------------------------------------------ the policy

    def clean_attachments(self, attachments: dict) -> dict:
        kept = {}
        for name, bundle in attachments.items():
            images = {mime: data for mime, data in bundle.items() if mime in self.image_types}
            if images:
                kept[name] = images
        return kept

    def allowed_url(self, tag: str, value: str) -> bool:
        url = value.strip()
        if tag == "img":
            match = re.match(r"data:([a-z/]+);base64,[A-Za-z0-9+/=\s]*$", url, re.IGNORECASE)
            return match is not None and match[1].lower() in self.image_types
        if url.startswith("#"):
            return True
        return urlsplit(url).scheme.lower() in self.link_schemes

    def filter_attribute(self, tag: str, attribute: str, value: str) -> str | None:
        if attribute in ("href", "src"):
            return value if self.allowed_url(tag, value) else None
        if attribute == "class":
            names = value.split()
            ok = all(name in CLASSES.get(tag, ()) or (tag == "code" and LANGUAGE_CLASS.fullmatch(name)) for name in names)
            return value if ok else None
        if attribute == "id":
            return None if value in self._reserved_ids else value
        if attribute == "alt" and BLANK_ALT.fullmatch(value):
            return None
        return value

    def clean(self, fragment: str) -> str:
        """`fragment` (HTML) with everything outside the allowlist removed."""
        return nh3.clean(fragment, tags=TAGS, attributes=ATTRIBUTES, url_schemes={"http", "https", "mailto", "data"},
                         attribute_filter=self.filter_attribute, filter_style_properties={"text-align"},
                         link_rel=None, strip_comments=True, clean_content_tags={"script", "style"})

    def inert(self, source: str, attachments: dict,
              highlight_chars: int = HIGHLIGHT_CHARS) -> tuple[bool, str, int]:
        """Whether `source` renders to HTML the allowlist keeps whole (with `highlight_chars` of fenced blocks
        highlighted), that HTML cleaned, and the characters of its fenced blocks a lexer has."""
        key = None
        if not attachments:  # the released markdown comes back in every submission: judge it once a process
            key = (source, tuple(self.image_types), tuple(self.link_schemes), frozenset(self._reserved_ids),
                   tuple(self.lexers), highlight_chars)
            if key in _VERDICTS:
                return _VERDICTS[key]
        page, other_lexer, highlighted = rendered(source, attachments, tuple(self.lexers),
                                                  url_chars_allowed(source, attachments), highlight_chars)
        cleaned = self.clean(page)
        verdict = not other_lexer and closed_and_whole(page, cleaned) and readable(cleaned), cleaned, highlighted
        if key is not None:
            if len(_VERDICTS) > 4096:
                _VERDICTS.clear()
            _VERDICTS[key] = verdict
        return verdict

    def sanitize_markdown(self, source: str, attachments: dict | None = None, students: bool = True) -> str:
        """`source` itself when it is inert, else the closest inert markdown (see the class docstring). A cell of the
        `students` spends the notebook's budget of maths and highlighting; the release's own cells do not."""
        if not self.enabled:
            return source
        if self.too_long(source):
            return self.note
        if students:
            source = text_as_read(source)
        attachments = attachments or {}
        try:
            ok, cleaned, highlighted = self.inert(source, attachments,
                                                  self.budget.highlight_chars if students else HIGHLIGHT_CHARS)
        except Exception:  # e.g. an image naming a missing attachment, which stops nbconvert; RepeatedUrls
            ok, cleaned, highlighted = False, None, 0
        typeset = not students or self.budget.shows(source, cleaned)
        if students and typeset:
            self.budget.spend_highlighting(highlighted)
        if ok and typeset:
            return source
        candidates = []
        if cleaned is not None and typeset:
            candidates.append("<div>" + cleaned.strip().replace("\r", "").replace("\n", "&#10;") + "</div>")
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", source)), default=0))
        candidates.append(f"{fence}\n{source}\n{fence}")
        candidates.append("<pre>" + html.escape(source).replace("\n", "&#10;").replace("$", "&#36;") + "</pre>")
        for candidate in candidates:
            try:
                if self.inert(candidate, {})[0]:
                    return candidate
            except Exception:
                continue
        return self.note


def _students(cell) -> bool:
    """Whether a cell holds the student's text: any but the release's locked cells, whose source OverwriteCellsAtOnce
    put back from the gradebook (a written answer is a solution cell; the student's own have no nbgrader metadata)."""
    meta = cell.metadata.get("nbgrader") or {}
    return not (meta.get("locked") and not meta.get("solution"))
