"""The single-fault catalogue (tests/catalogue_bugs.py) through the hidden suites: every entry in one batch.

One batch of the hidden suites grades every entry, as `make grade` grades a class (student code
still runs in the sandbox, as `nobody` when this runs as root). Each entry then must lose exactly the parts
it names, keep every other part at full marks, and say what went wrong in the student's terms.
"""
from __future__ import annotations

import pytest
from catalogue_bugs import BUGS, PARTS

from autograder.classroom.mutate import apply
from conftest import FULL, ROOT, solution_notebook

BY_ID = {bug.id: bug for bug in BUGS}

# What issue 4 asks the catalogue to hold at least (bugs, then correct variants).
REQUIRED = [
    "zero-grad-does-nothing", "step-tensor-ops", "step-plus", "step-zeroes-grads", "forward-weight-in-out",
    "forward-no-bias", "parameters-no-dedup", "parameters-not-recursive", "parameters-blind-to-lists",
    "no-grad-no-finally", "no-grad-restores-true",
    "parameters-generator", "step-new-array", "zero-grad-fill", "zero-grad-ellipsis", "no-grad-class",
    "forward-bias-first",
]


@pytest.fixture(scope="module")
def graded(catalogue_reports) -> dict[str, dict]:
    """Every entry's report (to_json), from one run of the hidden suites over the whole catalogue (conftest)."""
    return catalogue_reports


def failures(report: dict, parts) -> str:
    return "\n".join(f"{p['grade_id']} {t['name']}: {t['message']}"
                     for p in report["parts"] if p["grade_id"] in parts for t in p["tests"] if not t["passed"])


def entry(bug, gap: str):
    marks = [pytest.mark.xfail(strict=True, reason=f"gap: {gap}")] if gap else []
    return pytest.param(bug, id=bug.id, marks=marks)


def test_catalogue_holds_what_issue_4_asks_for():
    missing = [name for name in REQUIRED if name not in BY_ID]
    assert not missing, missing
    assert len(BY_ID) == len(BUGS), "entry ids must be unique"
    assert not [name for name in REQUIRED[11:] if not BY_ID[name].correct], "correct variants must lose nothing"


@pytest.mark.parametrize("bug", [b for b in BUGS if b.mutations], ids=lambda b: b.id)
def test_each_mutation_changes_the_reference(bug):
    reference = solution_notebook()
    assert apply(reference, list(bug.mutations)) != reference, f"{bug.id} changed nothing"


@pytest.mark.parametrize("bug", [entry(b, b.gap) for b in BUGS])
def test_entry_loses_its_parts_keeps_the_others_and_names_the_mistake(graded, bug):
    report = graded[bug.id]
    assert "error" not in report and "limits" not in report, report.get("error") or report.get("limits")
    scores = {p["grade_id"]: (p["score"], p["max_score"]) for p in report["parts"]}
    assert set(scores) == set(PARTS)
    kept = [part for part in bug.loses if scores[part][0] >= scores[part][1]]
    assert not kept, f"{bug.did}: full marks on {kept}, which it must lose"
    lost = [part for part in bug.keeps if scores[part][0] < scores[part][1]]
    assert not lost, f"{bug.did}: lost {lost}, which it must keep:\n{failures(report, lost)}"
    feedback = failures(report, bug.loses)
    assert bug.phrase.lower() in feedback.lower(), f"{bug.did}: no {bug.phrase!r} in\n{feedback}"


@pytest.mark.parametrize("bug", [entry(b, b.absent_gap) for b in BUGS if b.absent], )
def test_feedback_blames_no_other_misconception(graded, bug):
    feedback = failures(graded[bug.id], PARTS)
    assert bug.absent.lower() not in feedback.lower(), f"{bug.did}: the feedback says {bug.absent!r}:\n{feedback}"


def test_readme_table_gives_each_entry_its_score(graded):
    """docs/catalogues.md's bug table stays true: each row shows the total the entry gets today."""
    rows = {line.split("|")[1].strip(" `"): line for line in (ROOT / "docs" / "catalogues.md").read_text().splitlines()
            if line.startswith("| `")}
    wrong = []
    for bug in BUGS:
        total = f"{graded[bug.id]['total']:g}/{sum(FULL.values()):g}"
        row = rows.get(bug.id, "")
        if total not in row and "about" not in row:
            wrong.append(f"{bug.id}: docs/catalogues.md says {row.split('|')[3].strip() if row else 'nothing'!r}, grader gives {total}")
    assert not wrong, "\n".join(wrong)
