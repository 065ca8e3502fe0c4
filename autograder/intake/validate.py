"""Whether a submitted file is a notebook the grader and nbgrader can read: checked before grading.

nbformat reads almost anything that parses as JSON (it only logs that a notebook is invalid), and
nbgrader then trusts the types it finds: a locked cell whose `source` is a dict, or a `grade_id`
that is a list, crashed nbgrader and the kit's own code, and a deeply nested file crashed the
reader. Here every such file becomes a one-line reason, so that the student is "not graded" with
that reason and the rest of the class is graded as usual.

Duplicate keys in one JSON object are not a reason: every reader here (json, nbformat, nbgrader)
keeps the last one, so they all see the same notebook.
"""
from __future__ import annotations

import copy
import json
import math
import os
import re
import warnings
from pathlib import Path
from typing import Any

import nbformat

from ..assignment import notebook_from_text
from ..outputs.inert import quoted
from ..submission import Submission
from .files import TIMESTAMP_BYTES, Refused, StagingFault, own_failure, read_regular

MAX_DEPTH = 64  # JSON nesting a notebook may have; Jupyter writes about 8, the readers recurse per level
CELL_TYPES = ("markdown", "code", "raw")
NBGRADER_TYPES = {  # what nbgrader (and the kit) read from a cell's metadata.nbgrader, and its type
    "grade_id": (str,), "points": (int, float), "grade": (bool,), "solution": (bool,), "locked": (bool,),
    "task": (bool,), "schema_version": (int,), "checksum": (str,), "cell_type": (str,),
}
REASON_CHARS = 160  # what read_submission keeps of a reason
NAME_CHARS = 100  # what `unreadable` shows of a file's name
GRADE_ID_CHARS = 40  # what a reason shows of a cell's grade_id (nbgrader's own are a few words): its reason fits after


def validate_notebook(notebook: os.PathLike | str | bytes | dict, max_bytes: int | None = None) -> str | None:
    """Why `notebook` cannot be graded, in one line, or None when it can.

    `notebook` is a file (a path), its text (str or bytes) or its parsed JSON (a dict); `max_bytes`
    bounds the size of the file or text (None: no bound). Never raises on what the notebook holds.
    """
    try:
        return _reason(notebook, max_bytes)
    except StagingFault:  # the machine failed to read the file (files.own_failure): not a reason
        raise
    except Exception as exc:  # a check that did not foresee this file: still one line, never a crash
        return _line(f"the grader could not check it ({type(exc).__name__}: {exc})")


def _reason(notebook: Any, max_bytes: int | None) -> str | None:
    parsed = False  # whether `notebook` is JSON parsed here, which no caller holds
    if isinstance(notebook, os.PathLike):
        try:
            notebook = _file_bytes(notebook, max_bytes)
        except ValueError as why:
            return str(why)
    if isinstance(notebook, (str, bytes)):
        size = len(notebook.encode("utf-8", "surrogatepass") if isinstance(notebook, str) else notebook)
        if max_bytes is not None and size > max_bytes:
            return too_big(size, max_bytes)
        if isinstance(notebook, bytes):
            try:
                notebook = notebook.decode("utf-8")
            except UnicodeDecodeError as exc:
                return f"it is not UTF-8 text (byte {exc.start})"
        if not notebook.strip():
            return "the file is empty"
        try:
            notebook, parsed = json.loads(notebook), True
        except RecursionError:
            return f"its JSON is nested more than {MAX_DEPTH} levels deep"
        except ValueError as exc:
            return _line(f"it is not JSON: {exc}")
    if not isinstance(notebook, dict):
        return f"it holds {_kind(notebook)}, not a notebook (a JSON object)"
    if _depth(notebook) > MAX_DEPTH:
        return f"its JSON is nested more than {MAX_DEPTH} levels deep"
    try:
        json.dumps(notebook, ensure_ascii=False).encode("utf-8")
    except ValueError as exc:  # a lone surrogate (\ud800) that no file or page can hold
        return _line(f"it holds text that is not valid Unicode ({getattr(exc, 'reason', exc)})")
    return _structure(notebook if parsed else copy.deepcopy(notebook))  # a caller's dict is never changed


def _structure(nb: dict) -> str | None:
    """nbformat 4's structure, the types nbgrader reads, then nbformat's own schema."""
    version = nb.get("nbformat")
    if type(version) is not int or type(nb.get("nbformat_minor", 0)) is not int:
        return "its 'nbformat' and 'nbformat_minor' are not whole numbers"
    if version > 4 or version < 1:
        return f"it says nbformat {version}; this grader reads nbformat 4"
    if version < 4:  # Jupyter and nbgrader read old notebooks by converting them
        reason = _old_headings_reason(nb)
        if reason:
            return reason
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                nb = json.loads(json.dumps(nbformat.convert(nbformat.from_dict(nb), 4)))
        except Exception as exc:
            return _line(f"an nbformat {version} notebook that cannot be converted to nbformat 4 ({type(exc).__name__})")
    if not isinstance(nb.get("metadata", {}), dict):
        return f"its 'metadata' is {_kind(nb['metadata'])}, not an object"
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return "it has no cells" if cells is None else f"its 'cells' is {_kind(cells)}, not a list"
    if not cells:  # graded, no grade cell would be saved: no score at all, which is the grader's failure (export.py)
        return "it has no cells"
    for index, cell in enumerate(cells):
        reason = _cell_reason(cell)
        if reason:
            return _line(f"{_cell_name(index, cell)} {reason}")
    return _schema_reason(nb)


def _old_headings_reason(nb: dict) -> str | None:
    """Why an old notebook's heading cells cannot be converted: nbformat writes a heading of level n as n "#"s, so a
    level no file holds (a few bytes saying 1e9) would make gigabytes in the grading process before any size check."""
    sheets = [sheet for sheet in _list(nb.get("worksheets")) if isinstance(sheet, dict)]
    cells = [cell for sheet in sheets for cell in _list(sheet.get("cells"))] + _list(nb.get("cells"))
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "heading":
            level = cell.get("level", 1)
            if type(level) is not int or not 1 <= level <= 6:
                return f"it holds a heading cell of level {_short(level)}: an nbformat {nb['nbformat']} heading is of level 1 to 6"
    return None


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _cell_reason(cell: Any) -> str | None:
    if not isinstance(cell, dict):
        return f"is {_kind(cell)}, not an object"
    if cell.get("cell_type") not in CELL_TYPES:
        return f"has a cell_type that is {_short(cell.get('cell_type'))}, not markdown, code or raw"
    source = cell.get("source")
    if not (isinstance(source, str) or isinstance(source, list) and all(isinstance(line, str) for line in source)):
        return f"has a source that is {_kind(source)}, not a string or a list of strings"
    metadata = cell.get("metadata", {})
    if not isinstance(metadata, dict):
        return f"has metadata that is {_kind(metadata)}, not an object"
    if "nbgrader" in metadata:
        meta = metadata["nbgrader"]
        if not isinstance(meta, dict):
            return f"has metadata.nbgrader that is {_kind(meta)}, not an object"
        for key, types in NBGRADER_TYPES.items():
            value = meta.get(key)
            if key in meta and (not isinstance(value, types) or type(value) is bool and bool not in types):
                wanted = {"grade_id": "a string", "points": "a number", "schema_version": "a whole number",
                          "checksum": "a string", "cell_type": "a string"}.get(key, "true or false")
                return f"has metadata.nbgrader.{key} that is {_short(value)}, not {wanted}"
        if "points" in meta and not math.isfinite(meta["points"]):
            return f"has metadata.nbgrader.points that is {json.dumps(meta['points'])}, not a number"
    if not isinstance(metadata.get("magics_language", ""), str):  # nbconvert's highlighter takes it as a lexer's name
        return f"has metadata.magics_language that is {_short(metadata['magics_language'])}, not a string"
    if "attachments" in cell and not isinstance(cell["attachments"], dict):
        return f"has attachments that are {_kind(cell['attachments'])}, not an object"
    if cell["cell_type"] == "code":
        outputs = cell.get("outputs", [])
        if not isinstance(outputs, list):
            return f"has outputs that are {_kind(outputs)}, not a list"
        if not all(isinstance(output, dict) for output in outputs):
            return "has an output that is not an object"
    return None


def _schema_reason(nb: dict) -> str | None:
    """nbformat's validator (which repairs missing or repeated cell ids itself, as nbformat.read does)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nbformat.validate(nbformat.from_dict(nb))
    except nbformat.ValidationError as error:
        where = list(getattr(getattr(error, "original", None), "absolute_path", None) or error.path or [])
        if where[:1] == ["cells"] and len(where) > 1 and isinstance(where[1], int):  # cells counted from 1, as above
            where[:2] = [f"cell {where[1] + 1}"]
        # The schema's own keys as they are, the notebook's (an attachment's name, a cell's unexpected key) quoted;
        # the message names the notebook's keys and values as repr writes them, which keeps characters drawn as
        # quotes (U+2019): every character past ASCII as its escape, as `quoted` writes one.
        at = f" (at {'/'.join(_path_part(part) for part in where)})" if where else ""
        message = str(getattr(error, "message", error)).encode("ascii", "backslashreplace").decode("ascii")
        return _line(f"it is not a valid nbformat 4 notebook: {message}{at}")
    return None


def _path_part(part: Any) -> str:
    """A step of the path to a schema error: an index, the kit's `cell N`, a key of the schema's, or the notebook's
    own key quoted."""
    return str(part) if not isinstance(part, str) or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|cell \d+", part) else quoted(part)


def _cell_name(index: int, cell: Any) -> str:
    """`cell N`, and the grade_id the student's metadata gives it, quoted: the notebook's words, not the kit's; cut to
    GRADE_ID_CHARS, so that what is wrong with the cell still fits in the line (red-b23 X32-b23-1)."""
    grade_id = cell.get("metadata") if isinstance(cell, dict) else None
    grade_id = grade_id.get("nbgrader") if isinstance(grade_id, dict) else None
    grade_id = grade_id.get("grade_id") if isinstance(grade_id, dict) else None
    return f"cell {index + 1}" + (f", {quoted(grade_id, GRADE_ID_CHARS)}," if isinstance(grade_id, str) and grade_id else "")


def _depth(value: Any) -> int:
    """How deeply `value` nests lists and objects, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:  # deeper is a reason already; no need to walk it all
                stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def too_big(size: int, max_bytes: int) -> str:
    return (f"it is {size / 1024:,.0f} KB, more than the {max_bytes / 1024:,.0f} KB a notebook may be: "
            "clear its outputs in Jupyter, save and submit again")


def _kind(value: Any) -> str:
    """What JSON calls the type of `value`, with its article: "an object", "a list", "null"."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), f"a value of Python type {type(value).__name__}")


def _short(value: Any) -> str:
    """A value as the reason names it: a scalar by its kind and as written, anything else by its kind."""
    if not isinstance(value, (str, int, float, bool)):
        return _kind(value)
    text = json.dumps(value)
    text = text if len(text) <= 40 else text[:39] + "…"
    return f"{_kind(value)} {text}"


def _line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def _file_bytes(path: os.PathLike, max_bytes: int | None) -> bytes:
    """What the file at `path` holds, read once through the intake's door (files.read_regular: never through a
    link, nor from a FIFO or a device, and at most `max_bytes` + 1 bytes); ValueError with the reason when it is not
    a file that can be read, or is too large. StagingFault when the machine failed to read it (files.own_failure)."""
    try:
        data, size = read_regular(path, max_bytes)
    except Refused as why:
        raise ValueError(_line(str(why))) from None
    except OSError as exc:
        raise ValueError(_line(f"it could not be read ({own_failure(exc, 'the notebook')})")) from None
    if max_bytes is not None and size > max_bytes:
        raise ValueError(too_big(size, max_bytes))
    return data


def _checked_text(path: Path, max_bytes: int | None) -> str:
    """The text of the notebook file at `path`, read once and checked (validate_notebook): ValueError with the
    reason when it is not a notebook the grader and nbgrader can read. What is checked is what the caller gets: a
    second read by the path would read whatever the path names by then (a link a student who owns the folder renamed
    over it, to the reference; a FIFO, which never ends), unbounded."""
    if max_bytes is None:  # no configuration is read here: the entry points pass the course's limit
        from ..settings import GraderSettings

        max_bytes = GraderSettings().notebook_kb * 1024
    data = _file_bytes(Path(path), max_bytes)
    problem = validate_notebook(data, max_bytes)
    if problem:
        raise ValueError(problem)
    return data.decode("utf-8")


def submission_problem(path: Path, max_bytes: int | None = None) -> str:
    """Why the file at `path` is not a notebook the grader and nbgrader can read, in read_submission's words,
    or "" when it is: the check without the parse, for `make grade`, where nbgrader reads the kit's copy itself.

    Checked (validate_notebook): too large (`max_bytes`, the course's `notebook_kb` as the entry point read
    it; by default GraderSettings' own), not JSON, nested too deeply, or not a notebook of the types nbgrader reads.
    StagingFault when the machine failed to read it: the grader's failure, never a reason.
    """
    try:
        _checked_text(path, max_bytes)
    except ValueError as exc:  # any unreadable file: grading goes on with the next one
        return unreadable(Path(path).name, str(exc))
    return ""


def read_submission(key: str, path: Path, max_bytes: int | None = None) -> Submission:
    """A submission from disk; a file that is not a notebook becomes a reason, never an exception (but
    StagingFault: the machine failed to read it). The file is read once, checked, and those bytes parsed
    (_checked_text)."""
    try:
        notebook = notebook_from_text(_checked_text(path, max_bytes))
        if not isinstance(notebook.get("cells"), list):
            raise ValueError("it has no cells")
        return Submission(key, notebook=notebook)
    except StagingFault:
        raise
    except Exception as exc:  # any unreadable file: grading goes on with the next one
        return Submission(key, error=unreadable(Path(path).name, str(exc)))


def unreadable(name: str, why: str) -> str:
    """The reason a file `name` is not graded: `why`, cut to REASON_CHARS. The name quoted (outputs.inert.quoted),
    as every intake reason names a student's path: the intake's is the one they chose, whose line breaks, shown as
    they are, wrote lines of the kit's own above its real ones (red-a20 X29-a20-3); cut to NAME_CHARS, so that a
    one_line of 300 characters still holds `why`."""
    reason = " ".join(why.split())[:REASON_CHARS] or "unknown"
    return f"{quoted(name, NAME_CHARS)} is not a readable notebook ({reason})"


TIMESTAMP_NOT_A_FILE = ("its timestamp.txt is not a plain file: the submission time must come from nbgrader's collect "
                        "or the LMS")


# A time nbgrader reads the same on every machine and every day: a whole date and time, in UTC or with its offset
# written against it, as nbgrader's collect and the LMS collection write one. dateutil completes a part of one from
# today ("12:00", "Monday", "2026-12"), reads a zone's name through the machine's own zone ("JST" is 9 h earlier
# under TZ=Asia/Tokyo, else ignored), and nbgrader reads an offset after a space as seconds ("-0500") or not at all.
FIXED_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?: UTC|Z|[+-]\d{2}:?\d{2})?")


def timestamp_problem(folder: Path) -> str | None:
    """Why the folder's timestamp.txt, nbgrader's record of when the work was submitted, cannot be used (None
    when it can, or when there is none). nbgrader reads it as root and, on a line it cannot parse, fails the
    whole autograde with a traceback; the submission could also have brought one of its own (a link to another
    file, a time in the past). The time comes from nbgrader's collect or the LMS (autograder/intake/collect.py), so a
    bad one is not graded around: that would drop the late penalty it records."""
    from nbgrader.utils import parse_utc

    path = folder / "timestamp.txt"
    if not os.path.lexists(path):
        return None
    try:
        data, _ = read_regular(path, TIMESTAMP_BYTES)
    except Refused:
        return TIMESTAMP_NOT_A_FILE
    if len(data) > TIMESTAMP_BYTES:
        return (f"its timestamp.txt is over {TIMESTAMP_BYTES} bytes, not a time stamp: the submission time must come "
                f"from nbgrader's collect or the LMS")
    text = data.decode("utf-8", "replace").strip()
    shown = json.dumps(text[:40] + ("…" if len(text) > 40 else ""))
    try:
        parse_utc(text)
    except Exception:
        return (f"its timestamp.txt does not hold a time nbgrader can read ({shown}): the submission time must come "
                f"from nbgrader's collect or the LMS")
    if not FIXED_TIME.fullmatch(text):
        return (f"its timestamp.txt holds a time that reads differently by the day or the machine it is graded on "
                f"({shown}): a whole date and time in UTC (2026-12-01 23:59:00 UTC) or with its offset "
                f"(2026-12-01T23:59:00+01:00), as nbgrader's collect or the LMS writes it")
    return None
