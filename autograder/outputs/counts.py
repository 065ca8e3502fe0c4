"""How `make grade`'s summary and the class page write a count and the class's mean score."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def counted(n: int, noun: str) -> str:
    """'1 submission', '9 submissions': a count with its noun (nouns that take an s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def mean_points(scores: list[float]) -> str:
    """The class's mean score as every page and the summary show it: two decimals, halves rounded up.

    Computed in decimal from each score to 4 places (as grades.csv holds it), so the gradebook's floats
    and the CSV's text give the same figure."""
    if not scores:
        return "0.00"
    total = sum((Decimal(repr(round(float(score), 4))) for score in scores), Decimal(0))
    return str((total / len(scores)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
