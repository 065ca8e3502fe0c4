"""Probes for the exercise answer cells (grade cells test_exercise_count and test_exercise_second_step).

Like probes.py, a probe only reports what the student's code left, as plain data, and compares nothing:
the tests compare it with the reference's answers in the grader's process.
"""


def exercise_answers(ns, names):
    """For each name: whether the notebook defines it, its type's name, and its value as a float when it is a
    number, None otherwise. What counts as a number is the public answers.number's to say (the release folder
    is on the sandbox's path), the rule the student's own checks apply: one rule, so the grade and the public
    check take the same answers."""
    from answers import number

    return {name: {"defined": True, "type": type(ns[name]).__name__, "number": number(ns[name])} if name in ns
            else {"defined": False, "type": "", "number": None} for name in names}
