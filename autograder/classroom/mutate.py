"""Make a submission from the reference by rewriting one function: the demo class and the bug catalogue.

A mutation names a solution cell, a function or method in it, and a new body. Rewriting by the
syntax tree (not by text search) keeps mutations valid whatever the reference's exact wording.
"""
from __future__ import annotations

import ast
import copy
import textwrap
from dataclasses import dataclass
from typing import TypeVar

_Notebook = TypeVar("_Notebook", bound=dict)  # a plain dict or nbformat's NotebookNode: the copy is the same kind


@dataclass(frozen=True)
class Mutation:
    cell: str  # grade_id of the solution cell
    function: str  # "step", "Module.parameters" style names are matched on the last part
    body: str  # the new body, unindented; "" with `source` set replaces the whole cell
    source: str = ""


def replace_body(cell_source: str, function: str, body: str) -> str:
    """`cell_source` with the body of `function` (keeping its docstring) replaced by `body`."""
    name = function.rsplit(".", 1)[-1]
    tree = ast.parse(cell_source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            break
    else:
        raise ValueError(f"no function {function} in the cell")
    lines = cell_source.splitlines()
    first = node.body[0]
    has_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    start = first.end_lineno if has_doc else first.lineno - 1  # 0-based index of the first replaced line
    end = node.body[-1].end_lineno
    indent = " " * (node.col_offset + 4)
    new = textwrap.indent(textwrap.dedent(body).strip("\n"), indent).splitlines()
    return "\n".join(lines[:start] + new + lines[end:])


def apply(notebook: _Notebook, mutations: list[Mutation]) -> _Notebook:
    """A copy of `notebook` with each mutation applied to its cell."""
    result = copy.deepcopy(notebook)
    for mutation in mutations:
        for cell in result["cells"]:
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == mutation.cell:
                cell["source"] = mutation.source or replace_body(cell["source"], mutation.function, mutation.body)
                break
        else:
            raise ValueError(f"no cell {mutation.cell} in the notebook")
    return result
