"""Probes for the exercise answer cells (grade cells test_exercise_count and test_exercise_second_step).

Like probes.py, a probe only reports what the student's code left, as plain data, and compares nothing:
the tests compare it with the reference's answers in the grader's process.
"""


def exercise_answers(ns, names):
    """For each name: whether the notebook defines it, its value as a float when it is a number (None otherwise),
    and what it is when it is not one (the grader words the message: answers.refusal). What counts as a number,
    and what a value that is not one is said to be, is the public answers.py's to say (the release folder is on the sandbox's path), the
    rule the student's own checks apply: one rule, so the grade and the public check take the same answers and
    say the same of those they refuse."""
    from answers import number, what_it_is

    return {name: {"defined": True, "number": number(ns[name]), "what": what_it_is(ns[name])}
            if name in ns else {"defined": False, "number": None, "what": ""} for name in names}


# The answer's form (autograder/checks/answer_form.py; probes.py says why), read in the grader's process.
exercise_answers.answers = lambda names: {  # type: ignore[attr-defined]  # a function's attribute, as probes._answers sets
    name: ({"defined": True, "number": (float, None), "what": str}, {"defined": False, "number": None, "what": ""})
    for name in names}
