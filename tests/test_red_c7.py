"""red-c7 (pass 20): attacks on the one intake that got through, each a failing test stating the finding."""
from __future__ import annotations

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
