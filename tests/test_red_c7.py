"""red-c7 (pass 20): attacks on the one intake that got through, each a failing test stating the finding."""
from __future__ import annotations

import json
import os

from conftest import ASSIGNMENT, NOTEBOOK


def test_a_lease_the_student_holds_on_their_inbound_notebook_is_not_the_machines_failure(tmp_path):
    """In nbgrader's exchange inbound the student owns their files, and a process of theirs (their hub server) may
    hold a write lease on one (fcntl F_SETLEASE, F_WRLCK: any owner may). The intake's open (O_NONBLOCK) then fails
    with EWOULDBLOCK, which is not in files.FILES_OWN: StagingFault, and the exchange collect logs "not collected,
    the grader's failure" for a cause that is the student's own file."""
    import fcntl
    import signal
    import time
    from dataclasses import replace

    from autograder.intake.files import IntakeRules, StagingFault, take_submission

    inbound = tmp_path / "inbound" / f"eve+{ASSIGNMENT.name}+2026-11-20 12:00:00.000000 UTC"
    inbound.mkdir(parents=True)
    notebook = inbound / NOTEBOOK
    notebook.write_text('{"mine": 1}')
    holder = os.fork()
    if holder == 0:  # the student's process: holds the lease until killed
        signal.signal(signal.SIGIO, signal.SIG_IGN)
        fcntl.fcntl(os.open(notebook, os.O_WRONLY), fcntl.F_SETLEASE, fcntl.F_WRLCK)
        time.sleep(30)
        os._exit(0)
    try:
        time.sleep(0.5)
        rules = replace(IntakeRules(NOTEBOOK, 2048 * 1024), linked_files=False)  # the exchange collect's rules
        try:
            intake = take_submission(inbound.parent, (inbound.name,), tmp_path / "staged", rules)
        except StagingFault as fault:
            raise AssertionError(f"the student's own lease was taken for the machine's failure: {fault}") from None
        assert intake.notebook is None and intake.reason, intake
    finally:
        os.kill(holder, signal.SIGKILL)
        os.waitpid(holder, 0)


def test_grade_path_grades_the_file_it_checked_not_what_the_path_names_after(tmp_path, monkeypatch):
    """`python -m autograder grade PATH` (and the pytest plugin) check the file through the intake's door
    (read_regular: no link followed, bounded), then read it again by its path (Path.read_text: links followed, no
    bound). A student who owns the folder PATH is in (their home on a hub, the exchange inbound) renames a link to
    the reference solution over it between the two reads (inotify tells them when the first read closed the file):
    the reference is graded as theirs. Here the swap is made right after the check."""
    from autograder.intake import validate
    from conftest import ROOT

    reference = ROOT / "solutions" / ASSIGNMENT.name / NOTEBOOK
    theirs = tmp_path / "eve" / NOTEBOOK
    theirs.parent.mkdir()
    theirs.write_text(json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "mine"}],
                                  "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    checked = validate.submission_problem

    def then_swapped(path, max_bytes=None):
        problem = checked(path, max_bytes)
        swap = theirs.with_name("swap")
        swap.symlink_to(reference)
        os.replace(swap, theirs)  # rename(2) of the student's link over their file
        return problem

    monkeypatch.setattr(validate, "submission_problem", then_swapped)
    submission = validate.read_submission(str(theirs), theirs, 2048 * 1024)
    sources = ["".join(cell["source"]) for cell in submission.notebook["cells"]] if submission.notebook else []
    assert sources == ["mine"] or submission.error, ("the file graded is the reference the link names, not the "
                                                     f"file checked: {len(sources)} cells read")


def test_the_exchange_collect_never_calls_a_students_lease_the_graders_failure(tmp_path, monkeypatch):
    """End to end, as the student (uid 65534, `nobody`, owner of their inbound folder, not root): their process
    holds a write lease on their newer inbound notebook while the instructor presses Collect. The log says "not
    collected, the grader's failure ... collect again once it is fixed" for a cause that is the student's."""
    import fcntl
    import signal
    import time

    from test_intake import LATER, NOBODY, SUBMITTED, exchange, inbound

    collected, collect = exchange(tmp_path, monkeypatch)
    inbound(tmp_path, SUBMITTED, NOBODY, '{"mine": 1}')
    assert collect()["success"]
    newer = inbound(tmp_path, LATER, NOBODY, '{"mine": 2}')
    holder = os.fork()
    if holder == 0:  # the student's own process (opened here: pytest's tmp_path is closed to other users)
        try:
            mine = os.open(newer / NOTEBOOK, os.O_WRONLY)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            signal.signal(signal.SIGIO, signal.SIG_IGN)
            fcntl.fcntl(mine, fcntl.F_SETLEASE, fcntl.F_WRLCK)  # as the file's owner, not root
            time.sleep(30)
        finally:
            os._exit(0)
    try:
        time.sleep(0.5)
        log = collect()["log"]
    finally:
        os.kill(holder, signal.SIGKILL)
        os.waitpid(holder, 0)
    assert "the grader's failure" not in log, log[-600:]
