"""Probes for the exercise answer cells (grade cells test_exercise_count and test_exercise_second_step).

Like probes.py, a probe only reports what the student's code left, as plain data, and compares nothing:
the tests compare it with the reference's answers in the grader's process.
"""
import math


def exercise_answers(ns, names):
    """For each name: whether the notebook defines it, its type's name, and its value as a float when it is
    a real number (None otherwise: not a number, a bool, or not finite)."""
    found = {}
    for name in names:
        if name not in ns:
            found[name] = {"defined": False, "type": "", "number": None}
            continue
        value = ns[name]
        number = None
        if not isinstance(value, bool):
            try:
                number = float(value)
            except (TypeError, ValueError, OverflowError):
                number = None
        found[name] = {"defined": True, "type": type(value).__name__,
                       "number": number if number is not None and math.isfinite(number) else None}
    return found
