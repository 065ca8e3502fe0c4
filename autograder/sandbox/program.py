"""A notebook as a program: the list of cells the sandbox runs, taken from a submission, the
trusted source and the public release (which cell comes from which is what keeps the answer key out)."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterable, Mapping

MISSING = "is missing from the notebook"  # how a solution cell the student deleted is named (suites.py says why)


@dataclass(frozen=True)
class Cell:
    """One piece of a program: `name` is shown in messages as "cell <name>" (a grade_id, or the
    index of a cell the student added)."""

    name: str
    source: str


_MAGIC = re.compile(r"^(\s*)([%!])")


def _strip_magics(source: str) -> str:
    """Comment out IPython magics and shell escapes: plain Python cannot run them."""
    if source.lstrip().startswith("%%"):
        return "\n".join("# " + line for line in source.splitlines())
    return "\n".join(_MAGIC.sub(r"\1# \2", line) for line in source.splitlines())


def _nbgrader(cell: Mapping) -> Mapping:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _text(cell: Mapping) -> str:
    """A cell's source: saved notebooks may store it as a list of lines."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _role(cell: Mapping) -> str:
    """given | solution | test | demo | other, from a (trusted) source cell's metadata."""
    meta = _nbgrader(cell)
    if "demo" in cell.get("metadata", {}).get("tags", []):
        return "demo"
    if meta.get("solution"):
        return "solution"
    if meta.get("grade"):
        return "test"
    if meta.get("locked"):
        return "given"
    return "other"


def program_from_notebook(
    notebook: Mapping,
    source: Mapping | None = None,
    release: Mapping | None = None,
    student_cells: Iterable[str] | str = "all",
) -> list[Cell]:
    """The code to run for `notebook`, in the order of the trusted `source` notebook.

    Test cells and cells tagged `demo` are left out (the checks replace the first; the second only
    illustrate). Given cells come from `source`, so an edited copy changes nothing. Solution cells
    named in `student_cells` come from `notebook`; the others from `release`, the public release
    (blank stubs), so a check of one part runs no other part's code, the student's or the reference's:
    the grader's probes build what else they need. No solution cell is ever taken from `source`
    (the instructor's copy holds the answers): one missing from `release` raises. Cells the student
    added run where they stand, after the known cell before them. Without `source` and `release`
    the notebook is its own source and release.
    A known cell is taken as `make grade`'s nbgrader autograde takes it, so that every route grades alike: the
    last copy of a grade id (DropDuplicateIds makes the earlier ones cells the student added), and a code cell
    the student made markdown or raw is code again (OverwriteCellsAtOnce).
    """
    source = source or notebook
    release = release or notebook
    take_all = student_cells == "all"
    wanted = set() if take_all else set(student_cells)
    blank_text = {_nbgrader(c).get("grade_id"): _text(c) for c in release.get("cells", [])}

    student_text: dict[str, str] = {}
    added: dict[str | None, list[Cell]] = {}  # extra cells, keyed by the known cell before them
    code = {_nbgrader(c).get("grade_id") for c in source["cells"] if c.get("cell_type") == "code"} - {None}
    last = {gid: index for index, gid in enumerate(_nbgrader(c).get("grade_id") for c in notebook.get("cells", []))}
    anchor = None
    for index, cell in enumerate(notebook.get("cells", [])):
        gid = _nbgrader(cell).get("grade_id")
        if isinstance(gid, str) and gid in code and last[gid] == index:  # as nbgrader's autograde takes it
            student_text[gid] = _text(cell)
            anchor = gid
        elif cell.get("cell_type") == "code":  # added by the student, or an earlier copy of a known cell
            added.setdefault(anchor, []).append(Cell(str(index), _strip_magics(_text(cell))))

    program = list(added.get(None, []))
    for cell in source["cells"]:
        gid, role = _nbgrader(cell).get("grade_id"), _role(cell)
        if not gid:  # prose, or (without a separate source) a cell the student added: placed above
            continue
        if cell.get("cell_type") == "code" and role not in ("test", "demo"):
            if role != "solution":
                text = _text(cell)
            elif take_all or gid in wanted:
                text = student_text.get(gid, f"raise RuntimeError('the cell {gid} {MISSING}')")
            else:
                text = blank_text.get(gid, f"raise RuntimeError('the cell {gid} is missing from the release')")
            program.append(Cell(gid, _strip_magics(text)))
        program.extend(added.get(gid, []))
    return program



def bound_names(text: str) -> set[str]:
    """The names a cell's code binds in the notebook's namespace (classes, functions, assignments, imports, at
    any depth but inside a function, class or comprehension); none for code that does not parse."""
    try:
        stack: list[ast.AST] = [ast.parse(_strip_magics(text))]
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return names


def defining_cells(source: Mapping, release: Mapping) -> dict[str, str]:
    """{name: grade_id of the first cell that defines it} for the cells a program runs: the names each binds in
    the trusted `source` that its released cell names too (an exercise's answer is named in its task), so
    no name only the answer key holds is ever told. Where a name the checks did not find should come from."""
    released = {_nbgrader(c).get("grade_id"): _text(c) for c in release.get("cells", [])}
    found: dict[str, str] = {}
    for cell in source["cells"]:
        gid = _nbgrader(cell).get("grade_id")
        if not gid or cell.get("cell_type") != "code" or _role(cell) in ("test", "demo"):
            continue
        public = released.get(gid, "")
        for name in sorted(bound_names(_text(cell))):
            if re.search(rf"\b{re.escape(name)}\b", public):
                found.setdefault(name, gid)
    return found
