"""What the grade makes of the saved notebook's cells, by the release's copy of them or nbgrader's metadata as the
release wrote it: which cells it runs as code, and what in place of what Jupyter runs (graded_cells), which given
cells you edited (edited_given), and the names a cell binds (bound_by). Standard library only.
"""
from __future__ import annotations

import ast
import hashlib
import json
import sys
import warnings
from pathlib import Path

RELEASE_KEY = "release_cells"  # the release's cells, in the notebook's metadata (make release writes them)


def saved_cells(path: Path) -> tuple[list[dict], list[dict] | None]:
    """The cells of the notebook saved at `path`, and the release's as it keeps them (RELEASE_KEY; None if not)."""
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    return notebook["cells"], notebook.get("metadata", {}).get(RELEASE_KEY)


def schema_reason(path: Path) -> str | None:
    """Why nbformat's schema refuses the notebook saved at `path`, in the grade's words (autograder/intake/validate.py
    _schema_reason: it does not grade such a notebook), or None; None too without nbformat (Jupyter installs it)."""
    # jsonschema's IRI format, which nbformat's schema never uses, takes seconds to import (rfc3987_syntax builds a
    # grammar): left out while nbformat imports jsonschema, so that the checks stay fast
    skipped_iri = "rfc3987_syntax" not in sys.modules
    sys.modules.setdefault("rfc3987_syntax", None)  # None: an ImportError, which jsonschema takes as "not installed"
    try:
        import nbformat
    except ImportError:
        return None
    finally:
        if skipped_iri:
            sys.modules.pop("rfc3987_syntax", None)
    try:
        with warnings.catch_warnings():  # nbformat repairs missing or repeated cell ids, as the grade's does
            warnings.simplefilter("ignore")
            nbformat.validate(nbformat.from_dict(json.loads(Path(path).read_text(encoding="utf-8"))))
    except nbformat.ValidationError as error:
        where = list(getattr(getattr(error, "original", None), "absolute_path", None) or error.path or [])
        if where[:1] == ["cells"] and len(where) > 1 and isinstance(where[1], int):  # cells counted from 1
            where[:2] = [f"cell {where[1] + 1}"]
        at = f" (at {'/'.join(map(str, where))})" if where else ""
        return f"it is not a valid nbformat 4 notebook: {getattr(error, 'message', error)}{at}"
    except Exception:  # not JSON, or not a notebook: loading it in the child says why
        return None
    return None


def _grading(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _checksum(cell: dict, cell_type: str) -> str:
    """nbgrader's checksum of a locked cell, as if its type were `cell_type`."""
    grading = _grading(cell)
    facts = ["".join(cell.get("source", "")), cell_type, *(str(bool(grading.get(k))) for k in (
        "grade", "solution", "locked")), str(grading.get("grade_id"))]
    return hashlib.md5("".join(facts).encode()).hexdigest()


def edited_given(cell: dict) -> bool:
    """Whether a cell of the saved notebook is a given one (locked) whose text or type is not the released one, by
    nbgrader's checksum of it: the grade runs the released copy (notebook_checks.load notes it)."""
    checksum = _grading(cell).get("checksum")  # none in a copy nbgrader did not release (the solutions)
    return bool(_grading(cell).get("locked") and checksum) and _checksum(cell, cell.get("cell_type", "")) != checksum


def skipped(cell: dict) -> bool:
    """A test cell or a demonstration (tag `demo`): the public checks run neither."""
    grading = _grading(cell)
    return "demo" in cell.get("metadata", {}).get("tags", []) or bool(grading.get("grade") and not grading.get("solution"))


def left_out(saved: list, release: list | None) -> list[str]:
    """The text of each saved cell the grade leaves out, one a cell: the last copy of each of the `release`'s tests
    and demonstrations (the release's kinds; a saved cell's own metadata makes no cell of the student's one)."""
    kinds = {_grading(cell).get("grade_id"): cell for cell in release or saved}
    last = {_grading(cell).get("grade_id"): cell for cell in saved}  # a grade id's last copy is that cell
    return [_text(cell).strip() for name, cell in last.items() if isinstance(name, str) and skipped(kinds.get(name, {}))]


def graded_as_code(cell: dict) -> bool:
    """Whether the release made a saved cell code, read from its own metadata (where no copy of the release is at
    hand): an autograded answer (a solution that is not a grade) is code, a written one (solution and grade) markdown,
    as the release has them; a given cell is code if its checksum as code says so (or it still is); a cell the
    student added is what it is."""
    grading = _grading(cell)
    if grading.get("solution"):
        return not grading.get("grade")
    return cell.get("cell_type") == "code" or bool(grading.get("locked") and grading.get("checksum") == _checksum(
        cell, "code"))


def graded_cells(saved: list, release: list | None, as_graded: bool = False) -> tuple[list, list]:
    """([(name, source)] of the cells the grade runs as code, in its order, but the release's tests and
    demonstrations; [(note, source)] for each cell the grade runs otherwise than Jupyter), from the `saved` notebook's
    cells as nbgrader's autograde takes them (docs/grading.md): only the last copy of a grade id is that cell (the
    earlier ones are cells the student added, run whatever their own metadata says); the `release` decides what it
    is: its type, and the text of a given cell made markdown (a deleted one runs its released copy where the grade
    stands it: _deleted_given). Without a release (a notebook of an older release: RELEASE_KEY), graded_as_code and
    edited_given read what the release made a cell. `as_graded`: a given code cell runs as released (as the grade
    runs it), not as edited."""
    ids = [_grading(cell).get("grade_id") for cell in saved]
    last = {name: at for at, name in enumerate(ids) if isinstance(name, str)}
    released = {_grading(cell).get("grade_id"): cell for cell in release or saved}
    deleted = _deleted_given(release or [], last)
    runs, notes = [], []
    for at, (name, cell) in enumerate([*zip(ids, saved), (None, {})]):  # the last: past the saved cells
        past, ours = at == len(saved), released.get(name, {})
        if not past and (last.get(name) != at or not ours):  # the student's own cell, or an earlier copy of one
            runs += [(str(at), _text(cell))] if cell.get("cell_type") == "code" else []
            continue
        while deleted and deleted[0][0] < (at, 0, 0):  # the grade runs these right before this kept known cell
            gone, text = _grading(deleted[0][1]).get("grade_id"), _text(deleted.pop(0)[1])
            runs.append((gone, text))
            notes.append((f"you deleted the given cell {gone}: the grade runs the released copy of it", text))
        if not past and not skipped(ours):
            code = ours.get("cell_type") == "code" if release else graded_as_code(cell)
            # a given cell Jupyter runs nothing of (made markdown) runs its released copy; kept code, it runs as Jupyter
            # runs it, the note leading its failures (what you changed, the grade never runs), unless `as_graded`
            released_copy = _grading(ours).get("locked") and (as_graded or cell.get("cell_type") != "code")
            runs += [(name, _text(ours) if released_copy else _text(cell))] if code else []
            notes += [(note, _text(cell)) for note in [_note(name, cell, ours if release else None, code)] if note]
    return runs, notes


def _deleted_given(release: list, last: dict) -> list:
    """[(place, cell)] of the given code cells of the `release` the student deleted (`last`: the place of each grade
    id's last copy in the saved notebook), sorted by where the grade runs their released copies, by its rule
    (autograder/sandbox/program.py _in_students_order, whose place this is): between the kept cells around it in the
    release among those the grade runs (given and solution code cells: a test cell or a demonstration moved about
    moves no code), right after the one before it (place (its place, 1, ...), -1 for none), or right before the one
    after it (place (its place, -1, ...)) where the student moved that one above the one before; side by side, in
    the release's order. A kept known cell at `at` sorts as (at, 0, 0)."""
    kept = [last.get(_grading(cell).get("grade_id")) if cell.get("cell_type") == "code" and not skipped(cell) else None
            for cell in release]
    places = []
    for index, cell in enumerate(release):
        if _grading(cell).get("grade_id") in last or not (cell.get("cell_type") == "code" and _grading(cell).get(
                "locked") and not skipped(cell)):
            continue
        before = next((at for at in reversed(kept[:index]) if at is not None), -1)
        after = next((at for at in kept[index + 1:] if at is not None), None)
        places.append(((after, -1, index) if after is not None and after < before else (before, 1, index), cell))
    return sorted(places, key=lambda place: place[0])


def _note(name: str, cell: dict, released: dict | None, code: bool) -> str:
    """What the grade runs in place of what Jupyter runs, for a known cell you changed: the released copy of a given
    code cell you edited (by its `released` copy, else by its checksum), or an answer cell of another type than the
    release's ("" for any other cell)."""
    kind, given = cell.get("cell_type"), _grading(cell).get("locked")
    if code and given and (edited_given(cell) if released is None else (released.get("cell_type"), _text(
            released)) != (kind, _text(cell))):
        return f"you edited the given cell {name}: the grade runs the released copy of it"
    if given or code == (kind == "code"):
        return ""
    graded = "code" if code else "markdown"
    return (f"cell {name} is a {kind} cell in your notebook, and the grade runs it as {graded}, as the release has "
            f"it: make it a {graded} cell again (keep notes and code of your own in cells of your own)")


def _text(cell: dict) -> str:
    return "".join(cell.get("source", ""))


def bound_by(source: str) -> frozenset | None:
    """The names a cell binds at its top level (classes, functions, imports, assignments): a check that reads none
    of them does not run that cell's code. None when it is not plain Python (every check may depend on it)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        else:
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return frozenset(names)
