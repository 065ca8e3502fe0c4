"""OverwriteCellsAtOnce: nbgrader's OverwriteCells, reading the notebook's source and graded cells in one query each."""
from __future__ import annotations

from nbgrader.preprocessors import OverwriteCells

from ..gradebook_lookups import LookupsPrefetched


class OverwriteCellsAtOnce(LookupsPrefetched, OverwriteCells):
    """nbgrader's OverwriteCells (locked cells, points and checksums put back from the gradebook), with its two
    lookups a cell answered from the notebook's rows, read at once (autograder/gradebook_lookups.py)."""
