"""Every rule the grader scores has a public check (issue 10, item 2).

Over the whole single-fault catalogue (tests/catalogue_bugs.py): each bug fails at least one public check
of a part it loses, and each correct variant passes every public check. The public checks are the student's
own (test_<part>.py beside the notebook), run by the student's runner (conftest.catalogue_public_results).
"""
from __future__ import annotations

import pytest
from catalogue_bugs import BUGS


def failing(results: dict) -> list[str]:
    return [f"{part}::{name}: {message}" for part, checks in results.items()
            for name, (passed, message) in checks.items() if not passed]


@pytest.mark.parametrize("bug", [b for b in BUGS if b.loses], ids=lambda b: b.id)
def test_every_bug_fails_a_public_check_of_a_part_it_loses(bug, catalogue_public_results):
    results = catalogue_public_results[bug.id]
    lost = {part[len("test_"):] for part in bug.loses}
    assert [line for line in failing(results) if line.split("::")[0] in lost], (
        f"{bug.did}: the grader takes points from {sorted(lost)} but every public check passes")


@pytest.mark.parametrize("bug", [b for b in BUGS if not b.loses], ids=lambda b: b.id)
def test_every_correct_variant_passes_every_public_check(bug, catalogue_public_results):
    results = catalogue_public_results[bug.id]
    assert not failing(results), f"{bug.did}:\n" + "\n".join(failing(results))
