"""red-c7 (pass 20): attacks on the one intake that got through, each a failing test stating the finding."""
from __future__ import annotations

import json
import os

from test_collect import archive_dir, collect, course, lms_zip  # noqa: F401

from conftest import ASSIGNMENT, NOTEBOOK


def test_a_hand_copy_is_kept_when_the_lms_upload_has_another_name(tmp_path):
    """Carol's Canvas upload is my_work.ipynb (graded as the notebook, renamed). The instructor puts the right
    notebook in her folder by hand (newer than the LMS copy): the next make grade's collection must keep it, as it
    keeps a hand copy of an upload named as the notebook (test_a_hand_copy_of_the_notebook_in_another_case_...)."""
    root = course(tmp_path)
    lms_zip(root, {"carol_222_100_my_work.ipynb": b'{"lms": 1}'})
    collect(root)
    folder = root / "submitted" / "carol_222" / ASSIGNMENT.name
    assert (folder / "my_work.ipynb").read_bytes() == b'{"lms": 1}'
    (folder / NOTEBOOK).write_bytes(b'{"by hand": 1}')  # newer than the LMS copy
    lines = collect(root)
    assert (folder / NOTEBOOK).is_file(), ("the instructor's hand copy was deleted by the collection", lines,
                                           sorted(p.name for p in folder.iterdir()))


def test_uploads_whose_names_no_pattern_reads_are_still_the_uploaders_for_the_caps(tmp_path):
    """As test_one_students_many_uploads_never_spend_the_downloads_entry_cap, but Eve names each upload so that
    the owner lookup reads none of them as hers (`1_junk0.txt`: Canvas writes aaroneve_34567_1000_1_junk0.txt, and a
    file name after the ids that starts with digits and `_` matches no pattern): each counts as a student of its
    own, so her 200 uploads spend the download's entries and her classmates after her are not collected."""
    root = course(tmp_path, "c.BoundedExtractor.max_entries = 100", "c.BoundedExtractor.max_submission_files = 5")
    files = {f"aaroneve_34567_{1000 + i}_1_junk{i}.txt": b"x" for i in range(200)}
    files.update({f"s{i}_{i}_modules_and_sgd.ipynb": b"{}" for i in range(10)})
    lms_zip(root, files)
    lines = collect(root)
    collected = sorted(p.parent.name for p in (root / "submitted").glob(f"*/{ASSIGNMENT.name}"))
    assert collected == sorted(f"s{i}" for i in range(10)), (collected, [line[:160] for line in lines][:8])


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


def test_a_time_stamp_the_instructor_wrote_beside_a_collected_notebook_stays(tmp_path):
    """Ann's Canvas upload is LATE: the collection writes timestamp.txt with the LMS's time. The instructor grants an
    extension by writing her time stamp by hand (docs/instructors.md, "The late policy": "A submission's time is its
    timestamp.txt (from the LMS, or one you put beside the notebook)"). The next make grade's collection compares
    only the notebook (unchanged), deletes the folder and writes the LATE time stamp again: the extension is undone
    without a line saying so, and she is graded late again."""
    root = course(tmp_path)
    lms_zip(root, {"obrienann_LATE_23456_7_modules_and_sgd.ipynb": b"{}"})
    collect(root)
    stamp = root / "submitted" / "obrienann_23456" / ASSIGNMENT.name / "timestamp.txt"
    assert stamp.is_file()
    stamp.write_text("2026-11-01 12:00:00 UTC")  # the instructor's: on time by the extension
    lines = collect(root)
    assert stamp.read_text() == "2026-11-01 12:00:00 UTC", (stamp.read_text(), lines)


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


def test_a_collection_leaves_an_unchanged_students_folder_in_place(tmp_path):
    """Every make grade collects the download again, and _transfer_files deletes and rewrites each student's folder
    even when the LMS copy is the one already there. A run reading that folder meanwhile (make regrade, the
    formgrader's Autograde button, a second make grade) finds it gone: "its folder could not be read (No such file
    or directory)", the student's reason, a zero, recorded with the fingerprint of the unchanged folder, so no later
    run grades it again (/work/pass20/red-c7/F-collect-during-intake.py: 2 of 516 intakes beside one collection of
    200 students)."""
    root = course(tmp_path)
    lms_zip(root, {"ada_1_modules_and_sgd.ipynb": b'{"lms": 1}'})
    collect(root)
    folder = root / "submitted" / "ada" / ASSIGNMENT.name
    held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)  # as an intake reading it holds it
    try:
        collect(root)
        assert os.fstat(held).st_nlink > 0, "an unchanged student's folder was deleted and written again by the collection"
    finally:
        os.close(held)
