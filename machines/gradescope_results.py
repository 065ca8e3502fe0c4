"""Check a results.json against Gradescope's specification and against what the submission should score.

The specification (gradescope-autograders.readthedocs.io, "Specifications", "Output format"): an object
with `score` (or per-test scores), optional `execution_time`, `output`, `stdout_visibility` and `tests`;
each test has `score` and `max_score`, and optionally `name`, `number`, `output`, `status` ("passed" or
"failed") and `visibility`; a visibility is one of "hidden", "after_due_date", "after_published" or
"visible". Gradescope takes the top-level `score` over the tests' sum, so the kit makes them agree.
"""
from __future__ import annotations

from typing import Any

VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}
STATUSES = {"passed", "failed"}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def spec_problems(data: Any) -> list[str]:
    """What in `data` breaks Gradescope's results.json format (empty when it keeps to it)."""
    if not isinstance(data, dict):
        return ["results.json is not a JSON object"]
    problems = []
    if not _number(data.get("score")):
        problems.append("no numeric score")
    if "execution_time" in data and not isinstance(data["execution_time"], int):
        problems.append("execution_time is not whole seconds")
    if "output" in data and not isinstance(data["output"], str):
        problems.append("output is not a string")
    if data.get("stdout_visibility", "hidden") not in VISIBILITIES:
        problems.append(f"stdout_visibility {data['stdout_visibility']!r}")
    tests = data.get("tests")
    if not isinstance(tests, list):
        return problems + ["tests is not a list"]
    for index, test in enumerate(tests):
        where = f"test {index} ({test.get('name', '?') if isinstance(test, dict) else '?'})"
        if not isinstance(test, dict):
            problems.append(f"{where} is not an object")
            continue
        if not (_number(test.get("score")) and _number(test.get("max_score"))):
            problems.append(f"{where}: score and max_score must be numbers")
        elif not 0 <= test["score"] <= test["max_score"]:
            problems.append(f"{where}: score {test['score']} outside 0..{test['max_score']}")
        if test.get("status", "passed") not in STATUSES:
            problems.append(f"{where}: status {test['status']!r}")
        if test.get("visibility", "visible") not in VISIBILITIES:
            problems.append(f"{where}: visibility {test['visibility']!r}")
        for key in ("name", "number", "output"):
            if key in test and not isinstance(test[key], str):
                problems.append(f"{where}: {key} is not a string")
    if _number(data.get("score")) and not problems:
        total = sum(t["score"] for t in tests)
        if abs(total - data["score"]) > 1e-6:
            problems.append(f"the tests add up to {total:g}, the score is {data['score']:g}")
    return problems


def check_results(data: Any, full: dict[str, float], expected: float | None = None, entry: Any = None) -> list[str]:
    """Problems with one submission's results.json: the format, the parts (`full`: grade_id -> points,
    each visible), the expected total, and a catalogued hostile `entry`'s bounds (tests/catalogue_hostile.py)."""
    problems = spec_problems(data)
    if problems:
        return problems
    parts = {t["name"].split(" ", 1)[0]: t for t in data["tests"] if t["max_score"] > 0}
    if {g: t["max_score"] for g, t in parts.items()} != full:
        problems.append(f"parts {sorted(parts)} out of {sum(full.values()):g}, not the notebook's {sorted(full)}")
    if any(t["visibility"] != "visible" for t in parts.values()):
        problems.append("a part's score is not visible")
    if "isolation: namespaces" not in data.get("output", ""):  # the bare image is root with every namespace
        problems.append(f"not isolated by namespaces: {data.get('output', '')[-80:]!r}")
    if expected is not None and abs(data["score"] - expected) > 1e-6:
        problems.append(f"scored {data['score']:g}, not {expected:g}")
    if entry is not None and not problems:
        scores = {g: t["score"] for g, t in parts.items()}
        if entry.max_total is not None and data["score"] > entry.max_total:
            problems.append(f"scored {data['score']:g}, more than {entry.max_total:g}")
        problems += [f"full marks on {p}" for p in entry.loses if scores[p] >= full[p]]
        problems += [f"lost points on {p}" for p in entry.keeps if scores[p] < full[p]]
        shown = " ".join([data["output"]] + [t.get("output", "") for t in data["tests"]]).lower()
        if entry.reason and entry.reason.lower() not in shown:
            problems.append(f"no {entry.reason!r} in results.json")
    return problems
