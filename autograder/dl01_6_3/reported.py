"""What the hidden suites take from a probe's answer before they compare it: as many items as they asked for.

A probe reports one item per Parameter (a gradient, a shape, a fact), for Parameters the check itself made,
so honest code, right or wrong, cannot change how many. Student code shares its process with the probe and
can rewrite the answer; an empty list would then leave a comparison made with zip() or all() nothing to
compare, and pass. Each such list goes through `per_parameter` first.
"""


def per_parameter(answer, count):
    """`answer`, checked to hold `count` items (one per Parameter the check made)."""
    assert isinstance(answer, list) and len(answer) == count, (
        f"the check's answer holds {len(answer) if isinstance(answer, list) else 'no list of'} items for the "
        f"{count} Parameters it made: the notebook changed what the check reports")
    return answer
