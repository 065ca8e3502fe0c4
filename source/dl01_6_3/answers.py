"""Whether an exercise's answer is right, without this file holding the answer.

The public checks of the two exercises (test_exercise_*.py), the lesson-numbers checks and the notebook's
demonstrations ask `is_right(name, value)`; what counts as a number is `number`'s to say, for them and for the
course's grader alike. Each answer is kept as a salted SHA-256 of its first DIGITS
significant digits, so no file beside the notebook prints or computes an exercise's answer in clear before
yours passes. Standard library only.
"""
from __future__ import annotations

import hashlib
import math
import numbers
import re

DIGITS = 4
SALT = "dl01_6_3 modules and sgd"
ANSWERS = {
    "count_64_32_10": "bf63b756e3c471f51886e2efee8f8c31d1433270ffa6a52c6e0ea676d73abf1d",
    "z2_with_zero_grad": "a425e4572331128c3757f399916e88a45504f0303198ddba2bcff91fa6f2fc8a",
    "loss2_with_zero_grad": "dd6d566c764b6e07d596375e436d9971690ec0af2b1a783ff738f685695f9c8d",
    "z2_without_zero_grad": "a66a5ad78def0bba8cc1115868de2b5f500abeaf44483c856b69da269439902f",
    "loss2_without_zero_grad": "d7dd3e553834a0e68f94095f735a92012811d9adac873b923457cea1fcda6db0",
}


def _digest(name: str, text: str) -> str:
    return hashlib.sha256(f"{SALT}:{name}:{text}".encode()).hexdigest()


def _near(value: float, tolerance: float):
    """Every number of DIGITS significant digits within `tolerance` of `value`, as text, magnitudes 1e-6 up."""
    low, high = value - tolerance, value + tolerance
    for exponent in range(-6, 16):
        step = 10.0 ** (exponent - DIGITS + 1)
        for sign in (1, -1):
            start, stop = sorted((sign * 10.0 ** exponent, sign * 10.0 ** (exponent + 1)))
            first, last = max(low, start), min(high, stop)
            if first > last:  # no overlap; a huge value's edge over `step` would be inf, which has no ceil
                continue
            for k in range(math.ceil(first / step), math.floor(last / step) + 1):
                yield f"{k * step:.{DIGITS}g}"


def _read(value) -> tuple[float | None, str]:
    """`value` as a float when it is a number, as the exercises ask ("assign a number"): a real number
    (numbers.Real: an int, a float, a NumPy scalar, a Fraction) that is finite; else None and what it is,
    for the message (a bool, text such as '123', an array, a Decimal; a NaN; an int too large for a float)."""
    kind = type(value).__name__
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None, f"a {kind}"
    try:
        found = float(value)
    except (OverflowError, TypeError, ValueError):  # an int too large for a float; a Real without float()
        return None, f"a {kind} with no float value (too large for a float?)"
    return (found, "") if math.isfinite(found) else (None, f"{found} (a {kind} that is not a finite number)")


def number(value) -> float | None:
    """An exercise's answer as a float when it is a number (see _read), None for anything else. The course's
    grader reads an answer with this too, so the grade and these checks take the same answers."""
    return _read(value)[0]


def what_it_is(value) -> str:
    """What `value` is, as `number` read it, when `number` does not take it ('' when it does)."""
    return _read(value)[1]


# The shapes _read says what a value is in: the course's grader reads them from the notebook's process, which
# may say anything, and takes only these (a type's name as Python spells a class statement's).
_SAID = re.compile(r"a [^\W\d]\w*(?: with no float value \(too large for a float\?\))?"
                   r"|-?(?:nan|inf) \(a [^\W\d]\w* that is not a finite number\)")


def refused(name: str, value, example: str) -> str:
    """The message when `number` does not take `value`, the answer `name` holds: what it is, as `number` read it."""
    return refusal(name, what_it_is(value), example)


def refusal(name: str, what: str, example: str) -> str:
    """`refused`'s message from what_it_is's words `what`; words in no shape of _read's say only "not a number"."""
    what = what if _SAID.fullmatch(what) else "not a number"
    return f"{name} is {what}: assign a number (an int or a float), e.g. {name} = {example}"


def is_right(name: str, value, rel_tol: float = 0.0, abs_tol: float = 0.0) -> bool:
    """Whether `value` is the answer to the exercise variable `name`: a number (`number`) equal to it (its
    DIGITS significant digits), or within the tolerances of math.isclose."""
    found = number(value)
    if found is None:
        return False
    tolerance = max(rel_tol * abs(found) * 1.02, abs_tol)  # a little wider: isclose below decides
    texts = [f"{found:.{DIGITS}g}"] + list(_near(found, tolerance) if tolerance else [])
    return any(_digest(name, text) == ANSWERS[name] and math.isclose(found, float(text), rel_tol=rel_tol,
                                                                   abs_tol=abs_tol) for text in texts)
