"""A notebook as a program: the list of cells the sandbox runs, taken from a submission, the
trusted source and the public release (which cell comes from which is what keeps the answer key out)."""
from __future__ import annotations
import __future__

import ast
import functools
import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from . import ipython_cleanup, ipython_magics

MISSING = "is missing from the notebook"  # how a solution cell the student deleted is named (suites.py says why)


@dataclass(frozen=True)
class Cell:
    """One piece of a program: `name` is shown in messages as "cell <name>" (a grade_id, or the
    index of a cell the student added)."""

    name: str
    source: str


# How the grader reads IPython's syntax for the names a cell binds (never to run it: the sandbox runs IPython's own
# transformer, ipython_syntax.py), line by line: a line that begins a statement with an escape (a magic, a shell
# command, IPython's autocall quotes, `??SGD`); a statement whose last token is `?` (`np.zeros_like?`, and
# `x = 1; np?`, all of which IPython makes help on its last name); an assignment of a magic's or a command's output
# (`x = %time expr`, `files = !ls`), which binds its target (and what %time's statement binds).
_ESCAPED = re.compile(r"^([ \t]*)([%!,;/?].*)$")
_AS_COMMENT = re.compile(r"^([ \t]*)(.*)$")
_ASSIGNED = re.compile(r"^([ \t]*[^=%!#'\"\s][^=%!#'\"\n]*=[ \t]*)[%!].*$")  # one way to split a line: linear
_LINE_MAGIC = re.compile(r"^([ \t]*)%(\w+)(.*)$")
_IPYTHON_LINE = re.compile(r"^[ \t]*[%!,;/]|\?|=[ \t]*[%!]", re.MULTILINE)


def _statements(source: str) -> list[tuple[bool, bool, int]]:
    """For each line of `source`, (whether it begins a statement: outside brackets, strings and a backslash's
    continuation, where IPython reads `%` and `!` as escapes (a line of `!= 2)` inside brackets is code); whether it
    ends one whose last token is `?`, no comment after it: help, which IPython's HelpEnd makes of the whole statement;
    where its comment begins, or its length if none). Linear."""
    lines, depth, quote, continued = [], 0, "", False
    for line in source.split("\n"):
        start, last, at = depth == 0 and not quote and not continued, "", 0
        continued = False
        while at < len(line):
            char = line[at]
            if quote:
                if char == "\\":
                    continued = at + 1 == len(line)
                    at += 2
                elif line.startswith(quote, at):
                    at, quote = at + len(quote), ""
                else:
                    at += 1
                continue
            if char == "#":
                last = "#"
                break
            if char in "\"'":
                quote = line[at:at + 3] if line[at:at + 3] in ('"""', "'''") else char
                at, last = at + len(quote), char
                continue
            depth = depth + 1 if char in "([{" else max(0, depth - 1) if char in ")]}" else depth
            continued = char == "\\" and at + 1 == len(line)
            last = char if not char.isspace() else last
            at += 1
        if len(quote) == 1 and not continued:  # a one-quote string ends with its line (else a SyntaxError)
            quote = ""
        lines.append((start, last == "?" and depth == 0 and not quote and not continued, at))
    return lines


def namespace_lines(source: str) -> str:
    """The statements of `source` run in the notebook's namespace, one a line: not in the body of a def or a class (a
    local or an attribute there binds no name another cell can call) but a `global` statement there (the function
    binds that name in the namespace), and in a block at the top level (`if`, `try`, `for`, `with`: its lines are
    indented, and bind in the namespace). A statement over several lines (in brackets, a string, after a backslash)
    is read as one line, its comments dropped (an import in brackets binds each name it lists, `f(\n    y=3)` binds
    no y). IPython's syntax is read as what it binds (read_as_python). Linear, never parsed."""
    source = read_as_python(source)
    kept: list[list[str]] = []  # each statement kept, as the pieces of its lines
    scope, keeping = -1, False  # the indentation of the def or class whose body the lines are in (-1: none)
    for line, (start, _, comment) in zip(source.split("\n"), _statements(source)):
        code = line[:comment]
        if not start:
            if keeping:  # a line inside the statement kept last
                kept[-1].append(code)
            continue
        indent = len(line) - len(line.lstrip())
        keeping = bool(code.strip()) and (scope < 0 or indent <= scope or _GLOBAL.match(code) is not None)
        if keeping:
            kept.append([code])
            if scope < 0 or indent <= scope:
                scope = indent if re.match(r"[ \t]*(?:async[ \t]+)?(?:def|class)\b", code) else -1
    return "\n".join(" ".join(pieces) for pieces in kept)


_GLOBAL = re.compile(r"[ \t]*global[ \t]")  # a statement in a function that binds in the notebook's namespace


def run_before(source: str, line: int) -> str:
    """The lines of `source` above the statement that holds line `line` (1 and up): what a cell ran before that
    statement stopped it (a cell whose first line raises binds nothing of what its text defines below). Its lines are
    Python's, which the loader's line numbers count: a bare CR and a CR LF end one each, as an LF does. A line below
    its last (cell_runner: a block read as run whole, a cell the loop stopped after it ran) keeps every line."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if line > len(lines):
        return "\n".join(lines)
    lines = lines[:line]
    starts = [at for at, (start, _, _) in enumerate(_statements("\n".join(lines))) if start]
    return "\n".join(lines[:starts[-1] if starts else 0])


_NESTED = 8  # cell magics read one inside another at most: each reads its body again (linear times this)


@functools.lru_cache(maxsize=64)  # a part's cells are read again for each part and lending round
def read_as_python(source: str) -> str:
    """`source` as plain Python that binds the names IPython's run of it binds, for reading only (linear): cleaned
    up as IPython cleans it (dedented, unprompted: ipython_cleanup), its line ends Python's; a cell magic whose body
    IPython runs in the notebook's namespace (ipython_magics.BINDING) keeps its body, read as a cell of its own, its
    line made what it binds (%%capture's name); any other cell magic (or one nested past _NESTED) is comments
    whole; each statement is _line_as_python's."""
    return _read(source, _NESTED)


def _read(source: str, nested: int) -> str:
    source = ipython_cleanup.cleaned(source).replace("\r\n", "\n").replace("\r", "\n")
    if not _IPYTHON_LINE.search(source):  # most cells: no line IPython reads otherwise
        return source
    lines = source.split("\n")
    first = next((at for at, line in enumerate(lines) if line.strip()), 0)
    magic = ipython_cleanup.cell_magic(lines[first])
    if magic:
        name, line = magic
        if name not in ipython_magics.BINDING or not nested:
            return "\n".join("# " + line for line in lines)
        captured = ipython_magics.captured_name(line) if name == "capture" else ""
        head = f"{captured} = None" if captured else (ipython_magics.statement(name, line) or "pass")
        # IPython runs the body as a cell of its own: cleaned up and read again (`%%time` over an indented body)
        return "\n".join(lines[:first] + [head, _read("\n".join(lines[first + 1:]), nested - 1)])
    statements = _statements("\n".join(lines))
    helped, read = False, [""] * len(lines)  # helped: the statement being read is help, which binds no name
    for at in range(len(lines) - 1, -1, -1):  # backwards: a statement is known to be help at its last line
        start, help_end, _ = statements[at]
        helped = help_end if at + 1 == len(lines) or statements[at + 1][0] else helped
        line = lines[at]
        if helped:
            read[at] = _AS_COMMENT.sub(r"\1pass  # \2", line) if start else "# " + line
        else:
            read[at] = _line_as_python(line) if start else line
    return "\n".join(read)


def _line_as_python(line: str) -> str:
    """A line that begins a statement, as what it binds: %time's and %prun's statement as it is, an assignment of
    a magic's or a command's output as an assignment (and, of %time's or %prun's, the statement it runs), any other
    escape or help made a comment after `pass` (a block it alone made stays one)."""
    magic = _LINE_MAGIC.match(line)
    statement = ipython_magics.statement(magic[2], magic[3]) if magic and magic[2] in ipython_magics.BINDING else None
    if magic and statement:
        return magic[1] + statement
    assigned = _ASSIGNED.match(line)
    if not assigned:
        return _ESCAPED.sub(r"\1pass  # \2", line)
    runs = _LINE_MAGIC.match(line[len(assigned[1]):])
    statement = ipython_magics.statement(runs[2], runs[3]) if runs and runs[2] in ipython_magics.BINDING else None
    indent = line[:len(line) - len(line.lstrip())]
    return f"{indent}{statement}\n{assigned[1]}None" if statement else f"{assigned[1]}None"


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
    hosted: Iterable[str] = (),
) -> list[Cell]:
    """The code to run for `notebook`, its known cells in the order the student's notebook holds them.

    Test cells and cells tagged `demo` are left out (the checks replace the first; the second only
    illustrate). Given cells come from `source`, so an edited copy changes nothing. Solution cells
    named in `student_cells` come from `notebook`; the others from `release`, the public release
    (blank stubs), so a check of one part runs no other part's code, the student's or the reference's:
    the grader's probes build what else they need. No solution cell is ever taken from `source`
    (the instructor's copy holds the answers): one missing from `release` raises. Cells the student
    added run where they stand, after the known cell before them. Without `source` and `release`
    the notebook is its own source and release. A solution cell in `hosted` is one the notebook does not hold whose
    code another cell of the student's holds (suites.hosts: cell linear merged into cell module): taken from the
    student, it is empty, its code running where the student put it, never a cell that raises as missing.
    A known cell is taken as `make grade`'s nbgrader autograde takes it, so that every route grades alike: the
    last copy of a grade id (DropDuplicateIds makes the earlier ones cells the student added), a code cell the
    student made markdown or raw is code again, and a markdown cell made code is markdown again, never run
    (OverwriteCellsAtOnce).
    """
    source = source or notebook
    release = release or notebook
    take_all = student_cells == "all"
    wanted = set() if take_all else set(student_cells)
    elsewhere = set(hosted)
    blank_text = {_nbgrader(c).get("grade_id"): _text(c) for c in release.get("cells", [])}

    student_text: dict[str, str] = {}
    added: dict[str | None, list[Cell]] = {}  # extra cells, keyed by the known cell before them
    known = {_nbgrader(c).get("grade_id") for c in source["cells"]} - {None}
    code = {_nbgrader(c).get("grade_id") for c in source["cells"] if c.get("cell_type") == "code"} - {None}
    last = last_copies(notebook)
    anchor = None
    for index, cell in enumerate(notebook.get("cells", [])):
        gid = _nbgrader(cell).get("grade_id")
        if isinstance(gid, str) and gid in code and last[gid] == index:  # as nbgrader's autograde takes it
            student_text[gid] = _text(cell)
            anchor = gid
        elif isinstance(gid, str) and gid in known and last[gid] == index:  # prose or an answer, made markdown again
            anchor = gid
        elif cell.get("cell_type") == "code":  # added by the student, or an earlier copy of a known cell
            added.setdefault(anchor, []).append(Cell(str(index), _text(cell)))

    program = list(added.get(None, []))
    for gid, cell in _in_students_order(source["cells"], last):
        role = _role(cell)
        if _runs(cell):
            if role != "solution":
                text = _text(cell)
            elif take_all or gid in wanted:
                missing = "" if gid in elsewhere else f"raise RuntimeError('the cell {gid} {MISSING}')"
                text = student_text.get(gid, missing)
            else:  # the release's copy, under the student's own __future__ imports
                text = _futures(student_text.get(gid, "")) + annotations_as_text(blank_text.get(
                    gid, f"raise RuntimeError('the cell {gid} is missing from the release')"))
            program.append(Cell(gid, text))
        program.extend(added.get(gid, []))
    return program


def standing_below(notebook: Mapping, source: Mapping, grade_id: str) -> frozenset[str] | None:
    """The cells of the student's `notebook` below its copy of `grade_id` (the last, which nbgrader's autograde takes),
    named as program_from_notebook names them: a known cell of the trusted `source` by its grade id, any other (a cell
    the student added, an earlier copy, a grade id the source has none of) by its index; None when the notebook holds
    no `grade_id`. What Jupyter runs only after that cell has run."""
    last = last_copies(notebook)
    if grade_id not in last:
        return None
    known = {_nbgrader(c).get("grade_id") for c in source["cells"]} - {None}
    gids = [_nbgrader(c).get("grade_id") for c in notebook.get("cells", [])]
    return frozenset(gid if isinstance(gid, str) and gid in known and last[gid] == index else str(index)
                     for index, gid in enumerate(gids) if index > last[grade_id])


def _runs(cell: Mapping) -> bool:
    """Whether a part's program holds the (trusted) source cell: a code cell, not a test cell (the checks replace it)
    nor a demonstration (it only illustrates)."""
    return cell.get("cell_type") == "code" and _role(cell) not in ("test", "demo")


def last_copies(notebook: Mapping) -> dict[str, int]:
    """{grade id: the place of its last copy} in the student's `notebook` (the one nbgrader's autograde grades). The
    student's metadata: a grade id of another type is no cell's."""
    return {gid: index for index, gid in enumerate(_nbgrader(c).get("grade_id") for c in notebook.get("cells", []))
            if isinstance(gid, str)}


def held_cells(notebook: Mapping) -> frozenset[str]:
    """The grade ids the student's `notebook` holds: a known cell not among them is one the student deleted, which
    stands nowhere in the notebook (whatever stands in for it in a part)."""
    return frozenset(last_copies(notebook))


def _in_students_order(cells: list[Mapping], last: Mapping[str, int]) -> list[tuple[str, Mapping]]:
    """(grade id, cell) of the trusted cells with a grade id, in the order the student's notebook holds them (`last`:
    the place of each grade id's last copy), as Jupyter and nbgrader's autograde run them top to bottom. A known cell
    the student deleted stands between the kept cells that surround it in the release among those a part runs (given
    and solution code cells: prose, a test cell or a demonstration moved about moves no code a part runs, red-a16
    X25-a16-6): right after the one before it, or right before the one after it where the student moved that one above
    the one before (cell module deleted, the given cell parameter moved below linear: Jupyter runs the same), so what
    it stands in for is defined for the cell that follows it in the release. Deleted cells side by side keep their
    order. The public checks stand a deleted given cell in by this same rule (the release's cells._deleted_given)."""
    known = [(str(gid), cell) for cell in cells if (gid := _nbgrader(cell).get("grade_id"))]  # (else prose, or
    kept = [last[gid] if gid in last and _runs(cell) else None  # a cell the student added, with no separate
            for gid, cell in known]  # source); the place of each known cell a part runs that the student kept
    places = []
    for index, (gid, cell) in enumerate(known):
        if gid in last:
            place = (last[gid], 0, 0)
        else:
            before = next((at for at in reversed(kept[:index]) if at is not None), -1)
            after = next((at for at in kept[index + 1:] if at is not None), None)
            place = (after, -1, index) if after is not None and after < before else (before, 1, index)
        places.append((place, gid, cell))
    return [(gid, cell) for _, gid, cell in sorted(places, key=lambda place: place[0])]


@functools.lru_cache(maxsize=64)  # the release's few stubs, for every part of every submission
def annotations_as_text(stub: str) -> str:
    """The release's stub `stub` (trusted) with each annotation Python evaluates as the cell runs (_evaluated) written
    as a string of its text, in place (its lines as they were, for messages): a stub stands where the student's own
    copy of its cell stands, which may be above a cell its annotations name (`-> list[Parameter]`, a cell module the
    student moved above the given cell parameter and wrote without them). The student's copy runs there in Jupyter;
    the stub must load there too. One over several lines becomes strings of its lines in brackets, a line each."""
    try:
        tree = ast.parse(stub)
    except SyntaxError:
        return stub
    lines = stub.split("\n")
    for node in sorted(_evaluated(tree), key=lambda n: (n.lineno, n.col_offset), reverse=True):  # spans stay put
        top, bottom = node.lineno - 1, (node.end_lineno or node.lineno) - 1  # (ast.parse gives each node its end)
        start, stop = node.col_offset, node.end_col_offset or 0
        first, last = lines[top].encode(), lines[bottom].encode()  # ast's columns count UTF-8 bytes
        spanned = [first[start:stop].decode()] if top == bottom else [
            first[start:].decode(), *lines[top + 1:bottom], last[:stop].decode()]
        strings = [ascii(text + "\n") for text in spanned[:-1]] + [ascii(spanned[-1])]
        if len(strings) > 1:  # in brackets, the lines of one string
            strings[0], strings[-1] = "(" + strings[0], strings[-1] + ")"
        strings[0] = first[:start].decode() + strings[0]
        strings[-1] += last[stop:].decode()
        lines[top:bottom + 1] = strings
    return "\n".join(lines)


def _evaluated(tree: ast.AST) -> list[ast.expr]:
    """The annotations in `tree` Python may evaluate as the cell runs: a function's arguments' and return's (at its
    def), a variable's (at the top level and in a class body: `weight: Parameter`; in a function body none is, so
    text there changes nothing). Not one already a string, nor one holding a walrus, whose text would bind nothing."""
    found: list[ast.expr | None] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [node.returns, *(a.annotation for a in ast.walk(node.args) if isinstance(a, ast.arg))]
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return [node for node in found if node is not None and not (isinstance(node, ast.Constant) and isinstance(
        node.value, str)) and not any(isinstance(inner, ast.NamedExpr) for inner in ast.walk(node))]


@functools.lru_cache(maxsize=64)  # each part's program asks again for the same cells: read each once
def _futures(text: str) -> str:
    """The __future__ imports of the student's cell `text`, a line each, for the release's copy that stands in for it:
    Jupyter's compiler keeps them for every cell below (cell_runner's does too), so the cells a part takes from the
    student compile as they do in the notebook. Each top-level one, wherever it stands: IPython compiles a cell one
    statement at a time, so one below `import math` or `%matplotlib inline` is no syntax error there."""
    if "__future__" not in text:
        return ""
    return "".join(f"from __future__ import {names}\n" for names in _future_names(_parsed(read_as_python(text))))


# what Python's parser raises for a text it does not read: a syntax error, a NUL byte (ValueError), a text too deep
# (RecursionError: "maximum recursion depth exceeded during ast construction") or too big (MemoryError) for it
UNPARSED = (SyntaxError, ValueError, RecursionError, MemoryError)


def _parsed(text: str) -> list[ast.stmt]:
    """The statements of `text` as Python parses it without barry_as_FLUFL, or else with it (a cell below the
    notebook's own `from __future__ import barry_as_FLUFL` writes `<>`, which IPython then parses), but for a cell
    that needs the import it makes itself (IPython parses a cell before it runs: a syntax error); none when it
    parses neither way (IPython runs none of it), nor when it is too deep or too big for Python's parser (the sandbox
    fails it there too, with the student's own error: never the grader's process)."""
    for flags in (0, __future__.barry_as_FLUFL.compiler_flag):
        try:
            body = compile(text, "<cell>", "exec", ast.PyCF_ONLY_AST | flags, dont_inherit=True).body
        except UNPARSED:
            continue
        return [] if flags and "barry_as_FLUFL" in ", ".join(_future_names(body)) else body
    return []


def _future_names(body: list[ast.stmt]) -> list[str]:
    """The features the top-level __future__ imports of `body` name, wherever they stand (_futures says why; one
    in a block is a syntax error in IPython too)."""
    return [", ".join(alias.name for alias in node.names) for node in body
            if isinstance(node, ast.ImportFrom) and node.module == "__future__"]


def bound_names(text: str) -> set[str]:
    """The names a cell's code binds in the notebook's namespace (classes, functions, assignments, imports, at
    any depth but inside a function, class or comprehension); none for code that does not parse (UNPARSED)."""
    try:
        stack: list[ast.AST] = [ast.parse(read_as_python(text))]
    except UNPARSED:
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
        if not gid or not _runs(cell):
            continue
        for name in sorted(task_names(_text(cell), released.get(gid, ""))):
            found.setdefault(name, gid)
    return found


@functools.lru_cache(maxsize=64)  # a part's program asks for the graded cells' names for every submission
def task_names(trusted: str, released: str) -> frozenset[str]:
    """The names the trusted copy of a cell binds that its released copy names too: what its task asks for (SGD; an
    exercise's answer, named in the comments of a release that binds nothing), never a name only the answer key
    holds."""
    return frozenset(name for name in bound_names(trusted) if re.search(rf"\b{re.escape(name)}\b", released))


def demonstrated_names(source: Mapping) -> dict[str, str]:
    """{name: grade_id of the first demonstration (a cell tagged `demo`) that defines it} for the functions and classes
    the demonstrations of the trusted `source` define at the top level (mlp(), count_nodes()): helpers a student may
    reuse, which no part's program holds (program_from_notebook leaves demonstrations out), so a message names them.
    Not their variables (`lr`, `model`): a name like those not found is the student's own slip far more often."""
    found: dict[str, str] = {}
    for cell in source["cells"]:
        if cell.get("cell_type") == "code" and _role(cell) == "demo":
            for node in ast.parse(read_as_python(_text(cell))).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found.setdefault(node.name, _nbgrader(cell).get("grade_id") or "demonstration")
    return found
