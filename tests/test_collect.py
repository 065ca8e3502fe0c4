"""Collecting an LMS download as a hostile student would shape it: names, archives, ids, time stamps.

Each test builds its download here (autograder/intake/collect.py and unpack.py say what must hold) and runs
make grade's collect step in this process on a fresh course copy.
"""
from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from autograder.outputs.lms import CHOSEN, Roster, canvas_rows, read_roster
from conftest import ASSIGNMENT, NOTEBOOK, course_copy, sparse, within

LMS_TIME = (2026, 11, 20, 9, 30, 0)  # a zip entry's time: the LMS's time stamp of the upload


def course(tmp_path: Path, *settings: str) -> Path:
    """A fresh course, with `settings` appended to its nbgrader_config.py."""
    root = course_copy(tmp_path / "course")
    with (root / "nbgrader_config.py").open("a") as config:
        config.writelines(line + "\n" for line in settings)
    return root


def archive_dir(root: Path) -> Path:
    folder = root / "downloaded" / ASSIGNMENT.name / "archive"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def lms_zip(root: Path, files: dict[str, bytes], name: str = "submissions.zip",
            when: tuple = LMS_TIME) -> Path:
    """The LMS's download: `files` at its top level, each with the LMS's time `when`."""
    path = archive_dir(root) / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        for entry, data in files.items():
            bundle.writestr(zipfile.ZipInfo(entry, when), data, zipfile.ZIP_DEFLATED)
    return path


def zipped(files: dict[str, bytes]) -> bytes:
    """A student's own zip, as bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        for entry, data in files.items():
            bundle.writestr(entry, data)
    return out.getvalue()


def collect(root: Path) -> list[str]:
    """make grade's collect step on `root`; the summary's lines about the download."""
    from autograder.assignment import find_assignment
    from autograder.classroom.class_run import ClassRun
    from autograder.classroom.students import collect_class
    from autograder.settings import GraderSettings, load_config

    run = ClassRun.open(find_assignment(root, ASSIGNMENT.name), GraderSettings(config=load_config(root)))
    with contextlib.redirect_stderr(io.StringIO()) as stderr, contextlib.redirect_stdout(io.StringIO()) as stdout:
        origin, lines = collect_class(run)
    assert origin.startswith("the LMS download"), origin
    # nbgrader's own lines go to a file the summary names, never into the terminal's progress bars
    assert "ZipCollect" not in stderr.getvalue() + stdout.getvalue(), stderr.getvalue()[-500:]
    assert lines[-1] == f"Collect log: downloaded/{ASSIGNMENT.name}/collect.log"
    assert (root / "downloaded" / ASSIGNMENT.name / "collect.log").stat().st_size > 0
    return lines[:-1]


def submitted(root: Path) -> dict[str, bytes]:
    """Each student of submitted/ and their notebook's bytes."""
    folders = sorted((root / "submitted").glob(f"*/{ASSIGNMENT.name}"))
    return {f.parent.name: (f / NOTEBOOK).read_bytes() for f in folders if (f / NOTEBOOK).is_file()}


def refusal(lines: list[str], who: str) -> str:
    found = [line for line in lines if line.startswith(f"Not collected: {who}")]
    assert len(found) == 1, (who, lines)
    return found[0]


# ------------------------------------------------------------------------ identities are the LMS's

@pytest.mark.parametrize("as_zip", [True, False], ids=["zip", "loose"])
def test_a_classmates_name_inside_an_upload_is_not_theirs(tmp_path, as_zip):
    root = course(tmp_path)
    spoof = b'{"spoof": 1}'
    files = {
        "obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}',
        # Eve's upload: a zip holding a file named the way Canvas names Ann's
        "eveevil_34567_101_modules_and_sgd.zip": zipped({"obrienann_23456_999_modules_and_sgd.ipynb": spoof}),
        # and a folder of her own, for a Moodle-shaped download
        "Eve Evil_34567_assignsubmission_file_/Ann Obrien_23456_assignsubmission_file_/modules_and_sgd.ipynb": spoof,
        # a zip named as a student's under the generic pattern
        "eve_x_modules_and_sgd.zip": zipped({"obrienann_23456_998_modules_and_sgd.ipynb": spoof}),
    }
    if as_zip:
        lms_zip(root, files)
    else:  # the download's files as they are, the students' zips among them at archive/'s top level
        for name, data in files.items():
            (archive_dir(root) / name).parent.mkdir(parents=True, exist_ok=True)
            (archive_dir(root) / name).write_bytes(data)
    lines = collect(root)
    assert submitted(root) == {"obrienann_23456": b'{"ann": 1}', "eveevil_34567": spoof}, lines
    extracted = root / "downloaded" / ASSIGNMENT.name / "extracted"
    assert not list(extracted.rglob("*_99[89]_*")), "a student's own archive was unpacked"
    assert len(list(extracted.rglob("eveevil_34567_101_modules_and_sgd.zip"))) == 1
    assert "no notebook in the upload" in refusal(lines, "eve:")


def test_a_canvas_name_that_holds_ids_is_nobody_elses(tmp_path):
    """Canvas writes the student's own name first, and a student may call herself `bob_333` (so the ids that follow
    are read as Bob's) or put `_` in her name before a LATE marker: her upload is not collected and is named, never
    graded as Bob's nor taken as on time."""
    root = course(tmp_path)
    spoofs = ("bob_333_222_888_modules_and_sgd.ipynb", "eve_x_LATE_222_889_modules_and_sgd.ipynb",
              "obrienann_23456_1_x_222_890_modules_and_sgd.ipynb",
              "Ann Obrien_23456_assignsubmission_file_x_222_assignsubmission_file_modules_and_sgd.ipynb")
    lms_zip(root, {**dict.fromkeys(spoofs, b'{"eve": 1}'), "obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}'})
    lines = collect(root)
    assert submitted(root) == {"obrienann_23456": b'{"ann": 1}'}, lines
    for name in spoofs:
        assert any(name in line for line in lines), (name, lines)


@pytest.mark.parametrize("as_zip", [True, False], ids=["zip", "loose"])
def test_a_dot_file_archive_is_a_students_upload_by_its_place(tmp_path, as_zip):
    """An upload named `.x.zip` (Canvas: eveevil_34567_101_.x.zip), and a bare dot-file archive, among the download's
    loose files or inside its zip: a student's file by where it is, never the LMS's archive, whatever its name."""
    root = course(tmp_path)
    spoof = zipped({"obrienann_23456_999_modules_and_sgd.ipynb": b'{"spoof": 1}',
                    "smithjohn_12345_998_modules_and_sgd.ipynb": b'{"spoof": 2}'})
    files = {"obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}',
             "smithjohn_LATE_12345_101_modules_and_sgd.ipynb": b'{"john": 1}',
             "eveevil_34567_102_.x.zip": spoof, ".x.zip": spoof}
    if as_zip:
        lms_zip(root, files)
    else:
        for name, data in files.items():
            (archive_dir(root) / name).write_bytes(data)
    lines = collect(root)
    assert submitted(root) == {"obrienann_23456": b'{"ann": 1}', "smithjohn_12345": b'{"john": 1}'}, lines
    assert any(line.startswith("Late by Canvas's LATE marker: smithjohn_12345") for line in lines), lines
    extracted = root / "downloaded" / ASSIGNMENT.name / "extracted"
    assert not list(extracted.rglob("*_99[89]_*")), "a student's own archive was unpacked"
    (archive_dir(root) / "submissions.zip").unlink(missing_ok=True)
    for name in [n for n in files if n.endswith(".zip")]:  # the download as archives, a student's among them
        (archive_dir(root) / name).write_bytes(spoof)
    lms_zip(root, {k: v for k, v in files.items() if k.endswith(".ipynb")})
    collect(root)
    assert not list(extracted.rglob("*_99[89]_*")), "a student's own archive was unpacked"


def test_what_the_instructors_system_leaves_in_archive_is_passed_over(tmp_path):
    """Finder writes archive/.DS_Store as soon as the folder is opened (Explorer: Thumbs.db, desktop.ini; a copy to
    a FAT drive: ._submissions.zip): none is the LMS's, so the download is still unpacked as the LMS's archives."""
    root = course(tmp_path)
    lms_zip(root, {"obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}'})
    for litter in (".DS_Store", "Thumbs.db", "desktop.ini", "._submissions.zip"):
        (archive_dir(root) / litter).write_bytes(b"\0\0\0\1Bud1")
    (archive_dir(root) / "__MACOSX").mkdir()
    lines = collect(root)
    assert submitted(root) == {"obrienann_23456": b'{"ann": 1}'}, lines
    assert lines == [], lines


def test_a_download_taken_as_loose_files_says_in_one_line_why_its_archive_was_not_unpacked(tmp_path):
    """Anything else beside the LMS's zip makes archive/ the download's files as they are: the zip is copied, never
    unpacked, and one line says so, naming what made it so (never "0 submissions" alone)."""
    root = course(tmp_path)
    lms_zip(root, {"obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}'})
    (archive_dir(root) / "notes.txt").write_text("the instructor's")
    lines = collect(root)
    assert submitted(root) == {}, lines
    assert lines == ["Not collected: submissions.zip: not unpacked: archive/ also holds notes.txt, which is not an "
                     "archive, so its files were taken as they are (put the LMS's download alone in archive/)"], lines


@pytest.mark.parametrize("hostile", ["=1+2", "+cmd|calc", "..", "\x1b]0;pwned\x07\x1b[2J", "Ada", "a" * 65,
                                     "x' is 1 to 64 (the instructor checked it); 'y"])
def test_an_id_outside_the_safe_alphabet_is_refused_for_that_file_alone(tmp_path, hostile):
    root = course(tmp_path)
    lms_zip(root, {f"{hostile}_1_modules_and_sgd.ipynb": b"{}", "bob_2_modules_and_sgd.ipynb": b'{"bob": 1}'})
    lines = collect(root)
    assert submitted(root) == {"bob": b'{"bob": 1}'}
    line = refusal(lines, "")
    assert "is not 1 to 64 of a-z, 0-9 and _" in line
    assert line.isprintable(), "an escape sequence reached the summary"
    assert "the instructor checked it); 'y' is not" not in line, "the id's quote ended the kit's quotes"


def test_a_name_that_leaves_the_download_writes_nothing_outside(tmp_path):
    root = course(tmp_path)
    lms_zip(root, {"../../../escaped_1_modules_and_sgd.ipynb": b"{}", "/tmp/abs_1_modules_and_sgd.ipynb": b"{}",
                   "bob_2_modules_and_sgd.ipynb": b'{"bob": 1}'})
    lines = collect(root)
    assert submitted(root) == {"bob": b'{"bob": 1}'}
    assert not list(root.parent.rglob("escaped_1_*")) and not Path("/tmp/abs_1_modules_and_sgd.ipynb").exists()
    assert "outside the download" in refusal(lines, "../../../escaped")


def test_an_id_two_lms_identities_share_is_refused_for_both(tmp_path):
    root = course(tmp_path)
    lms_zip(root, {
        "John Smith_12345_assignsubmission_file_modules_and_sgd.ipynb": b'{"john": 1}',
        "Jöhn Smith_12345_assignsubmission_file_modules_and_sgd.ipynb": b'{"impostor": 1}',  # the same id
        "lovelaceada_777_1_modules_and_sgd.ipynb": b'{"ada": 1}',
        "evil_777_2_modules_and_sgd.ipynb": b'{"evil": 1}',  # Ada's Canvas number under another id
        "kimlee_555_3_modules_and_sgd.ipynb": b'{"kim": 1}',
    })
    lines = collect(root)
    assert submitted(root) == {"kimlee_555": b'{"kim": 1}'}
    assert sum("Not collected: johnsmith_12345" in line and "2 LMS identities" in line for line in lines) == 2
    assert "also evil_777's" in refusal(lines, "lovelaceada_777")
    assert "also lovelaceada_777's" in refusal(lines, "evil_777")


def test_the_canvas_import_never_has_two_rows_for_one_user():
    def row(student: str, score: str) -> dict:
        return {"assignment": "a", "max_score": "10", "student_id": student, "last_name": "", "first_name": "",
                "score": score, "auto_score": score}

    downloaded = {"smithjohn_12345": "12345", "evil_12345": "12345", "kim_6": "6"}  # ids a Canvas download gave
    table = canvas_rows([row("smithjohn_12345", "9"), row("evil_12345", "0"), row("kim_6", "5")], "a",
                        collected=downloaded)
    ids = [r[1] for r in table.rows[1:]]
    assert ids == ["6"] and table.shared == ["evil_12345", "smithjohn_12345"]

    # without a roster, a login chosen to end in a classmate's number (no download gave it) is no Canvas user's: its
    # row goes by SIS Login ID, and the classmate who has no row of her own keeps her grade in Canvas
    table = canvas_rows([row("eve_12345", "9"), row("kim_6", "5")], "a", collected=downloaded)
    assert [r[1:4] for r in table.rows[1:]] == [["", "", "eve_12345"], ["6", "", ""]]
    assert table.without_id == ["eve_12345"]
    # a name with no letter a-z or digit (李明) gives the LMS's number alone as the id
    assert [r[1] for r in canvas_rows([row("4242", "7")], "a", collected={"4242": "4242"}).rows[1:]] == ["4242"]
    # an id a download gave with no LMS number (the fourth pattern's student number) is no Canvas user's id: the
    # roster's, and its SIS Login ID
    # (a course whose folders carry SIS User IDs: c.GraderSettings.canvas_folder_ids), in that column
    assert canvas_rows([row("20231234", "7")], "a", roster=Roster({"20231234": "777001"}, column="SIS User ID"),
                       collected={"20231234": ""}).rows[1][1:4] == ["777001", "20231234", ""]
    # one a kit before the number recorded: its ending, as then
    assert [r[1] for r in canvas_rows([row("kim_6", "5")], "a", collected={"kim_6": None}).rows[1:]] == ["6"]

    # jsmith is Canvas user 12345 by the roster (a course that named its students); eve chose the login eve_12345,
    # which gives her no Canvas number; a download that gave eve_12345 and a roster that says jsmith is 12345 disagree
    roster = Roster({"jsmith": "12345", "kim": "6"})
    table = canvas_rows([row("jsmith", "9"), row("eve_12345", "0"), row("kim", "5")], "a", roster=roster)
    assert [r[1] for r in table.rows[1:]] == ["12345", "", "6"] and table.shared == []
    table = canvas_rows([row("jsmith", "9"), row("eve_12345", "0"), row("kim", "5")], "a", roster=roster,
                        collected={"eve_12345": "12345"})
    ids = [r[1] for r in table.rows[1:]]
    assert ids == ["6"] and table.shared == ["eve_12345", "jsmith"]


def test_the_collection_records_the_lms_number_each_id_came_with(tmp_path):
    """collected.json keeps, for each student, the number the LMS named them with: a student number that names a
    file of the fourth pattern (`20231234_modules_and_sgd.ipynb`) is an id of digits, and no Canvas user's id."""
    from autograder.intake.collect import collected_ids
    from autograder.settings import load_config

    root = course(tmp_path)
    lms_zip(root, {"kimlee_555_3_modules_and_sgd.ipynb": b'{"kim": 1}',
                   "20231234_modules_and_sgd.ipynb": b'{"number": 1}'})
    collect(root)
    assert submitted(root) == {"20231234": b'{"number": 1}', "kimlee_555": b'{"kim": 1}'}
    assert collected_ids(load_config(root), ASSIGNMENT.name) == {"20231234": "", "kimlee_555": "555"}


def test_two_files_from_one_student_are_theirs_alone(tmp_path):
    """Canvas's <name>-1.ipynb is the second upload of <name>.ipynb, in whatever case the student saved it (the
    intake grades Modules_and_SGD.ipynb as modules_and_sgd.ipynb): the newer is collected, never both."""
    root = course(tmp_path)
    lms_zip(root, {
        "smithjohn_12345_100_modules_and_sgd.ipynb": b'{"first": 1}',
        "smithjohn_12345_101_modules_and_sgd-1.ipynb": b'{"second": 1}',  # Canvas's renumbered later upload
        "carol_222_100_Modules_and_SGD.ipynb": b'{"carol first": 1}',
        "carol_222_200_Modules_and_SGD-1.ipynb": b'{"carol second": 1}',
        # two files in one Moodle submission, uploaded at the same time: the intake grades the nearest the top
        "Kim Lee_3_assignsubmission_file_/modules_and_sgd.ipynb": b'{"kim": 1}',
        "Kim Lee_3_assignsubmission_file_/old/modules_and_sgd.ipynb": b'{"kim old": 1}',
        "bob_2_modules_and_sgd.ipynb": b'{"bob": 1}',
    })
    lines = collect(root)
    assert submitted(root) == {"smithjohn_12345": b'{"second": 1}', "bob": b'{"bob": 1}',
                               "carol_222": b'{"carol second": 1}', "kimlee_3": b'{"kim": 1}'}, lines
    assert os.listdir(root / "submitted" / "carol_222" / ASSIGNMENT.name) == [NOTEBOOK], lines
    chosen = [line for line in lines if line.startswith("Collected the newest of several files: smithjohn_12345")]
    assert chosen and "took smithjohn_12345_101_modules_and_sgd-1.ipynb" in chosen[0]


# ------------------------------------------------------------------------ every archive is bounded

def test_an_upload_whose_extension_is_in_upper_case_is_the_notebook(tmp_path):
    """A Windows tool saves the notebook as `.IPYNB`, which the intake grades (files.is_notebook): the collection
    reads the extension in any case too, so Ada's upload is collected (pass 20: "no notebook in the upload") and
    Bob's later `.IPYNB` upload is one name with his earlier `.ipynb` one, the newer taken (it was dropped)."""
    root = course(tmp_path)
    lms_zip(root, {"adalovelace_123_456_modules_and_sgd.IPYNB": b'{"ada": 1}',
                   "bob_124_500_Modules_and_SGD.ipynb": b'{"bob old": 1}',
                   "bob_124_501_Modules_and_SGD-1.IPYNB": b'{"bob new": 1}',
                   # two spellings of a notebook that is not the assignment's: one name, as on a disk that ignores case
                   "cy_125_600_notes.ipynb": b'{"cy old": 1}', "cy_125_601_modules_and_sgd.ipynb": b'{"cy": 1}',
                   "cy_125_602_Notes.IPYNB": b'{"cy new": 1}'})
    lines = collect(root)
    assert submitted(root) == {"adalovelace_123": b'{"ada": 1}', "bob_124": b'{"bob new": 1}', "cy_125": b'{"cy": 1}'}
    cy = root / "submitted" / "cy_125" / ASSIGNMENT.name  # the newer upload's name, its extension as valid_ext's
    assert sorted(p.name for p in cy.iterdir()) == ["Notes.ipynb", NOTEBOOK]
    assert (cy / "Notes.ipynb").read_bytes() == b'{"cy new": 1}'
    assert lines == [
        "Collected the newest of several files: bob_124: took bob_124_501_Modules_and_SGD-1.IPYNB of "
        "bob_124_500_Modules_and_SGD.ipynb, bob_124_501_Modules_and_SGD-1.IPYNB",
        "Collected the newest of several files: cy_125: took cy_125_602_Notes.IPYNB of cy_125_600_notes.ipynb, "
        "cy_125_602_Notes.IPYNB"], lines


def test_a_nested_zip_bomb_stays_a_small_file(tmp_path):
    root = course(tmp_path)
    bomb = b"0" * (8 << 20)
    for level in range(3):  # a zip of four zips of four zips of 8 MB of zeros: 128 MB unpacked, a few KB packed
        bomb = zipped({f"{level}_{i}.zip" if level else f"{i}.ipynb": bomb for i in range(4 if level else 1)})
    assert len(bomb) < 200_000
    lms_zip(root, {"eve_9_1_modules_and_sgd.zip": bomb, "bob_2_modules_and_sgd.ipynb": b'{"bob": 1}'})
    lines = collect(root)
    assert submitted(root) == {"bob": b'{"bob": 1}'}
    assert "no notebook in the upload, only eve_9_1_modules_and_sgd.zip" in refusal(lines, "eve_9")
    extracted = root / "downloaded" / ASSIGNMENT.name / "extracted"
    assert sum(p.stat().st_size for p in extracted.rglob("*") if p.is_file()) < 2 * len(bomb)


def test_a_file_over_a_cap_is_too_large_for_its_student_alone(tmp_path):
    root = course(tmp_path, "c.BoundedExtractor.max_file_mb = 1", "c.BoundedExtractor.max_submission_mb = 2",
                  "c.BoundedExtractor.max_total_mb = 4")
    kim = "Kim Lee_7_assignsubmission_file_"
    lms_zip(root, {
        "big_1_modules_and_sgd.ipynb": b" " * (2 << 20),  # over the file cap
        f"{kim}/modules_and_sgd.ipynb": b" " * (900 << 10),
        f"{kim}/extra.ipynb": b" " * (900 << 10),
        f"{kim}/more.ipynb": b" " * (900 << 10),  # past the submission's 2 MB
        "a_2_modules_and_sgd.ipynb": b" " * (900 << 10),
        "b_3_modules_and_sgd.ipynb": b" " * (900 << 10),
        "d_5_modules_and_sgd.ipynb": b" " * (900 << 10),  # past the download's 4 MB
    })
    lines = collect(root)
    assert sorted(submitted(root)) == ["a", "b", "kimlee_7"], lines
    assert "too large (the cap is 1 MB a file" in refusal(lines, "big (big_1")
    assert "too large (the cap is 2 MB a student" in refusal(lines, f"kimlee_7 ({kim}/more.ipynb")
    assert "too large (the cap is 4 MB for the download" in refusal(lines, "d (d_5")
    assert not (root / "downloaded" / ASSIGNMENT.name / "extracted" / "submissions" / "big_1_modules_and_sgd.ipynb").exists()


def test_one_students_folder_cannot_use_up_the_class_caps(tmp_path):
    root = course(tmp_path, "c.BoundedExtractor.max_submission_files = 5", "c.BoundedExtractor.max_depth = 3")
    eve = "Eve Evil_1_assignsubmission_file_"
    files = {f"{eve}/junk/{i:02}.txt": b"x" for i in range(50)}
    files["Deep Dan_2_assignsubmission_file_/a/b/modules_and_sgd.ipynb"] = b"{}"  # 4 parts deep
    files.update({f"s{i}_{i}_modules_and_sgd.ipynb": b"{}" for i in range(10)})
    lms_zip(root, files)
    lines = collect(root)
    assert sorted(submitted(root)) == sorted(f"s{i}" for i in range(10)), lines
    about_eve = [line for line in lines if eve in line]
    named = [line for line in about_eve if "/junk/" in line and "no notebook" not in line]
    assert len(named) == 3 and all("more than 5 files" in line for line in named), about_eve
    assert "no notebook in the upload" in refusal(lines, "eveevil_1:") and len(about_eve) == 5
    assert any("(and more): 42 more of its entries not collected" in line for line in about_eve)
    assert "folders deep" in refusal(lines, "deepdan_2")


def test_caps_count_per_student_so_one_student_spends_only_their_own(tmp_path):
    """Canvas gives each upload a top-level file of its own: Eve's many uploads of zeros count against her caps
    together, never against the download's share of her classmates."""
    root = course(tmp_path, "c.BoundedExtractor.max_file_mb = 1", "c.BoundedExtractor.max_submission_mb = 2",
                  "c.BoundedExtractor.max_submission_files = 20", "c.BoundedExtractor.max_total_mb = 4")
    files = {f"eveevil_34567_{100 + i}_zeros{i}.ipynb": b"0" * (900 << 10) for i in range(30)}
    files.update({f"s{i}_{i}_modules_and_sgd.ipynb": b" " * (400 << 10) for i in range(4)})
    lms_zip(root, files)
    lines = collect(root)
    assert sorted(submitted(root)) == [f"s{i}" for i in range(4)], lines
    about_eve = [line for line in lines if "eveevil" in line]
    assert any("2 MB a student" in line for line in about_eve), about_eve
    assert len([line for line in about_eve if "zeros" in line and "(and more)" not in line]) == 3, about_eve
    assert any("(and more): 25 more of its entries" in line for line in about_eve), about_eve


def test_the_download_has_an_entry_cap(tmp_path):
    root = course(tmp_path, "c.BoundedExtractor.max_entries = 4")
    lms_zip(root, {f"s{i}_{i}_modules_and_sgd.ipynb": b"{}" for i in range(10)})
    lines = collect(root)
    assert sorted(submitted(root)) == ["s0", "s1", "s2", "s3"], lines
    assert lines == ["Not collected: s4 (s4_4_modules_and_sgd.ipynb): the download holds more than 4 entries "
                     "(BoundedExtractor.max_entries): this one and those after it"]


def test_entries_are_written_with_fixed_modes_and_never_as_links(tmp_path):
    root = course(tmp_path)
    path = archive_dir(root) / "submissions.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        setuid = zipfile.ZipInfo("suid_1_modules_and_sgd.ipynb", LMS_TIME)
        setuid.external_attr = (stat.S_IFREG | stat.S_ISUID | stat.S_ISGID | 0o777) << 16
        bundle.writestr(setuid, b'{"suid": 1}')
        link = zipfile.ZipInfo("link_2_modules_and_sgd.ipynb", LMS_TIME)
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        bundle.writestr(link, b"/etc/shadow")
    tar = archive_dir(root) / "more.tar.gz"
    with tarfile.open(tar, "w:gz") as bundle:
        for name, kind in (("tarsuid_3_modules_and_sgd.ipynb", tarfile.REGTYPE),
                           ("tarlink_4_modules_and_sgd.ipynb", tarfile.SYMTYPE),
                           ("tardev_5_modules_and_sgd.ipynb", tarfile.CHRTYPE)):
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.uid, info.gid = kind, 0o6777, 4242, 4242
            info.linkname = "/etc/shadow" if kind == tarfile.SYMTYPE else ""
            data = b'{"tar": 1}' if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    lines = collect(root)
    assert sorted(submitted(root)) == ["suid", "tarsuid"], lines
    for student in ("link", "tarlink", "tardev"):
        assert "a link or a special file" in refusal(lines, student)
    download = root / "downloaded" / ASSIGNMENT.name
    extracted, students = download / "extracted", list((root / "submitted").iterdir())
    written = [extracted, *extracted.rglob("*"), download / "collected.json", *students,
               *(p for s in students for p in s.rglob("*"))]
    assert len(written) > 8 and not any(p.is_symlink() for p in written)
    for path in written:
        info = path.lstat()
        assert info.st_uid == os.geteuid(), path
        assert stat.S_IMODE(info.st_mode) & ~(0o700 if path.is_dir() else 0o600) == 0, (path, oct(info.st_mode))


# ------------------------------------------------------------------------ newer work and lateness

def test_the_lms_copy_never_overwrites_newer_work(tmp_path):
    root = course(tmp_path)
    lms_zip(root, {"ada_1_modules_and_sgd.ipynb": b'{"lms": 1}', "bob_2_modules_and_sgd.ipynb": b'{"lms": 2}',
                   "cy_3_modules_and_sgd.ipynb": b'{"lms": 3}'})
    assert collect(root) == []
    folder = root / "submitted" / "{}" / ASSIGNMENT.name / NOTEBOOK
    regraded = Path(str(folder).format("ada"))
    regraded.write_bytes(b'{"regraded": 1}')  # the late notebook `make regrade` graded...
    old = datetime.datetime(2026, 1, 1).timestamp()
    os.utime(regraded, (old, old))  # ...copied with its own, older time stamp (cp -p)
    newer = Path(str(folder).format("bob"))
    newer.write_bytes(b'{"newer": 1}')  # newer than the LMS copy
    lines = collect(root)
    assert submitted(root) == {"ada": b'{"regraded": 1}', "bob": b'{"newer": 1}', "cy": b'{"lms": 3}'}
    assert any(line.startswith("Kept submitted/ada/") and "changed after" in line for line in lines), lines
    assert any(line.startswith("Kept submitted/bob/") and "newer than the LMS copy" in line for line in lines)

    # A newer download (a later upload of Cy's) replaces Cy's earlier LMS copy, which nobody changed.
    (archive_dir(root) / "submissions.zip").unlink()
    lms_zip(root, {"cy_3_modules_and_sgd.ipynb": b'{"lms": 4}'}, when=(2026, 11, 21, 9, 0, 0))
    collect(root)
    assert submitted(root)["cy"] == b'{"lms": 4}'


def test_a_backups_second_link_in_submitted_is_no_newer_work(tmp_path):
    """`cp -al submitted submitted.bak` gives every collected notebook a second link. The intake reads such a file
    as what it holds, and so does the collection comparing it with the LMS copy: a later upload replaces the copy
    nobody changed (pass 20: it was "changed after the LMS copy was collected", kept, and the old work graded)."""
    root = course(tmp_path)
    lms_zip(root, {"cy_3_modules_and_sgd.ipynb": b'{"lms": 3}'})
    collect(root)
    subprocess.run(["cp", "-al", str(root / "submitted"), str(root / "submitted.bak")], check=True)
    (archive_dir(root) / "submissions.zip").unlink()
    lms_zip(root, {"cy_3_modules_and_sgd.ipynb": b'{"lms": 4}'}, when=(2026, 11, 21, 9, 0, 0))
    lines = collect(root)
    assert submitted(root) == {"cy": b'{"lms": 4}'} and lines == [], lines


def test_a_terabyte_in_submitted_is_compared_as_the_intake_reads_it(tmp_path):
    """Whether submitted/ holds newer work is told from what the intake reads of its notebook (at most
    notebook_kb and a byte): a terabyte-long sparse file there, never graded, never stalls the collect."""
    root = course(tmp_path)
    lms_zip(root, {"ada_1_modules_and_sgd.ipynb": b'{"lms": 1}'})
    assert collect(root) == []
    sparse(root / "submitted" / "ada" / ASSIGNMENT.name / NOTEBOOK)
    with within(20):
        lines = collect(root)
    assert any(line.startswith("Kept submitted/ada/") and "newer than the LMS copy" in line for line in lines), lines


def test_canvas_late_marker_is_the_submissions_lateness(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    from autograder.settings import load_config

    """X24-d15-1: a Canvas download holds no upload time (each entry has the time Canvas built the zip), so the LATE
    marker writes no timestamp.txt (nbgrader counts the folder on time): the summary names the upload LATE, the most
    it can be late by (the build time against the due date of the day), or that it is on time by the due date, and
    the timestamp.txt to write by hand from the time Canvas gives the submission."""
    root = course(tmp_path)
    coursedir = CourseDirectory(config=load_config(root))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    lms_zip(root, {"obrienann_LATE_23456_7_modules_and_sgd.ipynb": b"{}", "smithjohn_12345_8_modules_and_sgd.ipynb": b"{}"})
    late = root / "submitted" / "obrienann_23456" / ASSIGNMENT.name
    for due, said in ((datetime.datetime(2026, 11, 19, 12, 0), "so late by at most 21 h 30 min"),
                      (datetime.datetime(2026, 11, 25, 12, 0), "before the due date 2026-11-25 12:00 UTC, so on time")):
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            gb.update_or_create_assignment(ASSIGNMENT.name, duedate=due)
        lines = collect(root)
        assert coursedir.get_existing_timestamp(str(late)) is None, lines  # as autograde reads it: on time
        assert (f"Late by Canvas's LATE marker: obrienann_23456: Canvas marked it LATE, but its download holds no time "
                f"of the upload (each file has the time Canvas built the download, 2026-11-20 09:30 UTC, {said}): "
                f"nbgrader counts it on time unless you write the time Canvas gives the submission (SpeedGrader, or "
                f"the API's submitted_at) into submitted/obrienann_23456/{ASSIGNMENT.name}/timestamp.txt, as "
                f"`YYYY-MM-DD HH:MM:SS UTC`") in lines, lines
    assert not (root / "submitted" / "smithjohn_12345" / ASSIGNMENT.name / "timestamp.txt").exists()

    # Without a due date, the build time bounds nothing, and no time stamp is written either.
    root = course(tmp_path / "no-due")
    lms_zip(root, {"obrienann_LATE_23456_7_modules_and_sgd.ipynb": b"{}"})
    lines = collect(root)
    stamp = CourseDirectory(config=load_config(root)).get_existing_timestamp(
        str(root / "submitted" / "obrienann_23456" / ASSIGNMENT.name))
    assert stamp is None and "the time Canvas built the download, 2026-11-20 09:30 UTC): nbgrader" in lines[0], lines


def test_a_late_students_time_stamp_is_the_time_of_the_notebook_graded(tmp_path):
    """red-e8: a LATE Canvas submission of two files (the notebook, uploaded after the due date, and a.ipynb, a file
    whose upload is older) was recorded with the time of the LATE file whose name sorts first (collect.py _transfer:
    `next(f for f in files if f.info["late"])`), a.ipynb's: the notebook graded is counted on time. Since X24-d15-1 no
    time stamp is written (a Canvas entry's time is the download's), and the line's bound is the notebook's."""
    from nbgrader.coursedir import CourseDirectory

    from autograder.settings import load_config

    root = course(tmp_path, "c.GraderSettings.due_date = '2026-11-19 12:00:00 UTC'")
    with zipfile.ZipFile(archive_dir(root) / "submissions.zip", "w") as bundle:
        for entry, when in (("obrienann_LATE_23456_7_a.ipynb", (2026, 11, 18, 9, 0, 0)),
                            ("obrienann_LATE_23456_9_modules_and_sgd.ipynb", LMS_TIME)):
            bundle.writestr(zipfile.ZipInfo(entry, when), b"{}")
    lines = collect(root)
    stamp = CourseDirectory(config=load_config(root)).get_existing_timestamp(
        str(root / "submitted" / "obrienann_23456" / ASSIGNMENT.name))
    assert stamp is None and "2026-11-20 09:30 UTC, so late by at most 21 h 30 min" in lines[0], lines


@pytest.mark.parametrize("litter", [".DS_Store", ".ipynb_checkpoints", "__MACOSX"])
def test_what_a_file_browser_leaves_in_a_collected_folder_never_keeps_out_the_students_new_upload(tmp_path, litter):
    """red-e8: the instructor looks into submitted/ada/ (Finder writes .DS_Store; Jupyter, opening the notebook there,
    .ipynb_checkpoints/): the next collection keeps the folder as "put there by hand" (_kept_because reads every
    top-level entry), so Ada's newer upload is never collected, though nothing the intake grades changed. The
    download's own OS litter is passed over (unpack.is_os_litter); the collected folder's is not."""
    root = course(tmp_path)
    lms_zip(root, {"ada_1_modules_and_sgd.ipynb": b'{"first": 1}'})
    assert collect(root) == []
    folder = root / "submitted" / "ada" / ASSIGNMENT.name
    (folder / litter).mkdir() if litter.startswith(".ipynb") else (folder / litter).write_bytes(b"\0\0\0\1Bud1")
    lms_zip(root, {"ada_2_modules_and_sgd.ipynb": b'{"second": 1}'})
    lines = collect(root)
    assert submitted(root)["ada"] == b'{"second": 1}', lines


def test_a_moodle_downloads_folders_are_never_named_as_not_collected(tmp_path):
    """red-e8: Moodle's "download submissions in folders" zip holds each student's folder as an entry of its own
    (`John Smith_12345_assignsubmission_file_/`), which no pattern names (owner() reads no file in it), so every
    folder spends the one share of what no student owns (unpack.UNOWNED): past max_submission_files of them, the
    summary says "Not collected: <a classmate's folder>" for students whose notebooks were collected. (A student may
    make that many folders in their own upload as well.)"""
    root = course(tmp_path, "c.BoundedExtractor.max_submission_files = 5")
    with zipfile.ZipFile(archive_dir(root) / "moodle.zip", "w") as bundle:
        for i in range(8):
            folder = f"Student{chr(97 + i)} X_{1000 + i}_assignsubmission_file_/"
            bundle.writestr(zipfile.ZipInfo(folder, LMS_TIME), b"")
            bundle.writestr(zipfile.ZipInfo(folder + NOTEBOOK, LMS_TIME), b"{}")
    lines = collect(root)
    assert len(submitted(root)) == 8, lines
    assert not [line for line in lines if line.startswith("Not collected")], lines


@pytest.mark.parametrize("as_zip", [True, False], ids=["zip", "loose"])
def test_a_students_own_folders_count_against_their_own_caps(tmp_path, as_zip):
    """A folder is the student's whose notebook in it would be collected (LmsFileNameCollectorPlugin.owner): Moodle's
    folder of each student and the folders of a student's own upload spend that student's caps, in the LMS's zip
    (`name/`) or unzipped into archive/ (a folder). Ada's 8 folders spend hers (in the zip, her notebook after them
    is refused as hers), and every classmate is collected and named nowhere."""
    root = course(tmp_path, "c.BoundedExtractor.max_submission_files = 5")
    ada = "Ada Byron_1000_assignsubmission_file_/"
    entries = [ada, *(f"{ada}sub{i}/" for i in range(8)), ada + NOTEBOOK]
    for i in range(6):  # their folders alone are past a cap of 5, when they share one
        folder = f"Student{chr(97 + i)} X_{2000 + i}_assignsubmission_file_/"
        entries += [folder, folder + NOTEBOOK]
    if as_zip:
        with zipfile.ZipFile(archive_dir(root) / "moodle.zip", "w") as bundle:
            for entry in entries:
                bundle.writestr(zipfile.ZipInfo(entry, LMS_TIME), b"" if entry.endswith("/") else b"{}")
    else:
        for entry in entries:
            path = archive_dir(root) / entry
            path.mkdir(parents=True) if entry.endswith("/") else path.write_bytes(b"{}")
    lines = collect(root)
    assert {f"student{chr(97 + i)}x_{2000 + i}" for i in range(6)} <= set(submitted(root)), lines
    refused = [line for line in lines if line.startswith("Not collected")]
    assert len(refused) == 4 and all(line.startswith(f"Not collected: {ada[:-1]}") for line in refused), lines
    assert "its student's uploads hold more than 5 files and folders" in refused[1], refused


def test_a_notebook_collected_is_never_refused_for_the_share_others_spent(tmp_path):
    """red-e8 4b: a notebook the collector reads (pattern 4 with `.IPYNB`, as a Windows tool saves it, and a dot in
    the name) is its student's for the caps as well: owner() reads a name as collect() does. Before, it fell into the
    share of what no one owns, which uploads no pattern reads had spent."""
    root = course(tmp_path, "c.BoundedExtractor.max_submission_files = 5")
    files = {f"junk{i}.txt": b"x" for i in range(10)}
    files["20231234_v1.2_modules_and_sgd.IPYNB"] = b'{"mine": 1}'
    lms_zip(root, files)
    lines = collect(root)
    assert submitted(root) == {"20231234": b'{"mine": 1}'}, lines


def test_a_time_stamp_no_record_names_is_kept_with_the_true_reason(tmp_path):
    """A LATE timestamp.txt no record names, written by a kit that recorded no time stamps (a kit before af42b67
    wrote one from the due date, which no collection writes now) or by the instructor (the time Canvas gives the
    submission, as the LATE line says): the folder is kept, and the summary says what is known, the newer upload in the
    download too, with its LATE line (red-b26 X35-b26-2: else nothing says there is one to copy in)."""
    root = course(tmp_path)
    lms_zip(root, {"obrienann_LATE_23456_7_modules_and_sgd.ipynb": b"{}"})
    collect(root)
    stamp = root / "submitted" / "obrienann_23456" / ASSIGNMENT.name / "timestamp.txt"
    stamp.write_text("2026-11-19 12:00:01.000000 UTC")  # the due date and a second, as such a kit wrote it
    (archive_dir(root) / "submissions.zip").unlink()
    lms_zip(root, {"obrienann_LATE_23456_8_modules_and_sgd.ipynb": b'{"new": 1}'})
    lines = collect(root)
    assert lines == ["Kept submitted/obrienann_23456/ and not the LMS copy: its timestamp.txt is not one a collection "
                     "records writing (yours, an extension, or the LATE time stamp of a kit that recorded none): "
                     "delete it, or the folder, to collect it again; the download holds an upload other than the one "
                     "collected, obrienann_LATE_23456_8_modules_and_sgd.ipynb, yours to copy in if it is newer (Canvas "
                     "marked it LATE, but its download holds no time of the upload (each file has the time Canvas built "
                     "the download, 2026-11-20 09:30 UTC): nbgrader counts it on time unless you write the time Canvas "
                     "gives the submission (SpeedGrader, or the API's submitted_at) into "
                     "submitted/obrienann_23456/dl01_6_3/timestamp.txt, as `YYYY-MM-DD HH:MM:SS UTC`)"], lines


def test_a_students_own_timestamp_is_never_collected(tmp_path):
    root = course(tmp_path)
    folder = "Kim Lee_7_assignsubmission_file_"
    lms_zip(root, {f"{folder}/modules_and_sgd.ipynb": b"{}", f"{folder}/timestamp.txt": b"2020-01-01 00:00:00 UTC",
                   "bob_2_modules_and_sgd.ipynb": b"{}", "bob_2_timestamp.txt": b"2020-01-01 00:00:00 UTC"})
    collect(root)
    assert sorted(submitted(root)) == ["bob", "kimlee_7"]
    assert not list((root / "submitted").rglob("timestamp.txt"))


def test_one_students_many_uploads_never_spend_the_downloads_entry_cap(tmp_path):
    """Eve's 200 uploads (Canvas: a top-level file each) come first in the download: past her own cap of files they
    are refused as hers, and spend none of the entries the download may unpack, so her classmates are collected."""
    root = course(tmp_path, "c.BoundedExtractor.max_entries = 100", "c.BoundedExtractor.max_submission_files = 5")
    files = {f"aaroneve_34567_{1000 + i}_junk{i}.txt": b"x" for i in range(200)}
    files.update({f"s{i}_{i}_modules_and_sgd.ipynb": b"{}" for i in range(10)})
    lms_zip(root, files)
    lines = collect(root)
    assert sorted(submitted(root)) == sorted(f"s{i}" for i in range(10)), lines
    assert not any("BoundedExtractor.max_entries" in line for line in lines), lines
    assert any("(and more): 192 more of its entries" in line for line in lines), lines


def test_uploads_no_pattern_names_share_one_students_caps_and_never_spend_a_classmates(tmp_path):
    """red-c7 (pass 20), B. As test_one_students_many_uploads_never_spend_the_downloads_entry_cap, but Eve names each
    upload so that no pattern reads it (`1_junk0.txt`: Canvas writes aaroneve_34567_1000_1_junk0.txt, which reads
    as hers or as the ids 1000 and 1 of a student named `aaroneve_34567`), and calls herself `bob_2` in Canvas (her
    uploads read as Bob's, or as hers under that name). Entries no one owns share one student's caps, so they spend
    none of a classmate's share (Bob's notebook is collected past them), nor the download's, and the summary names
    three of them and counts the rest."""
    root = course(tmp_path, "c.BoundedExtractor.max_entries = 100", "c.BoundedExtractor.max_submission_files = 5")
    files = {f"aaroneve_34567_{1000 + i}_1_junk{i}.txt": b"x" for i in range(200)}
    files.update({f"bob_2_34567_{2000 + i}_x{i}.txt": b"x" for i in range(200)})
    files.update({f"s{i}_{i}_modules_and_sgd.ipynb": b"{}" for i in range(10)})
    files["bob_2_3000_modules_and_sgd.ipynb"] = b'{"bob": 1}'
    lms_zip(root, files)
    lines = collect(root)
    collected = sorted(p.parent.name for p in (root / "submitted").glob(f"*/{ASSIGNMENT.name}"))
    assert collected == sorted(["bob_2", *(f"s{i}" for i in range(10))]), (collected, [line[:160] for line in lines][:8])
    assert len(lines) == 4 and "392 more of its entries" in lines[-1], lines


def test_an_id_the_student_chose_that_is_a_classmates_sis_id_gets_no_canvas_user_id(tmp_path):
    """red-r2 (pass 16). A folder name the student chose (a GitHub Classroom clone names it by the GitHub username)
    that is a classmate's student number or login would carry the classmate's Canvas user id, and the import would
    put the student's score on the classmate, whose own folder (their GitHub username) has no id, so no row is
    "shared" and nothing is left out. The roster matches the one SIS column the course's folders carry
    (c.GraderSettings.canvas_folder_ids), and an id it gives another column or two users is left out and named."""
    def row(student: str, score: str) -> dict:
        return {"assignment": "a", "max_score": "10", "student_id": student, "last_name": "", "first_name": "",
                "score": score, "auto_score": score}

    export = tmp_path / "canvas-export.csv"  # Canvas's Grades > Export
    export.write_text("Student,ID,SIS User ID,SIS Login ID,Section,a\n    Points Possible,,,,,10\n"
                      "Alice Smith,777,20231234,asmith,A,\nEve Evil,666,20239999,20235555,A,\n"
                      "Bob Jones,555,20235555,bjones,A,\nKim Lee,444,kimlee,kimlee,A,\n")
    by_login = read_roster(export)
    table = canvas_rows([row("20231234", "0"), row("alice-gh", "10")], "a", roster=by_login)
    alice_rows = [r for r in table.rows[1:] if r[1] == "777"]
    assert all(r[5] == "10" for r in alice_rows), f"Alice's Canvas user gets {alice_rows}"
    assert "Canvas user 777's SIS User ID, not as a SIS Login ID" in table.refused["20231234"], table.refused
    # Eve's login is Bob's student number: by either column, the id could be either user's
    for roster in (by_login, read_roster(export, "SIS User ID")):
        table = canvas_rows([row("20235555", "0"), row("kimlee", "5")], "a", roster=roster)
        assert [r[1] for r in table.rows[1:]] == ["444"], table.rows
        assert "Canvas user 555 (SIS User ID) and Canvas user 666 (SIS Login ID)" in table.refused["20235555"]
    # the column the course's folders carry matches, and a row without a Canvas user id names its id in that column
    assert [r[1:4] for r in canvas_rows([row("asmith", "9"), row("nobody", "1")], "a", roster=by_login).rows[1:]] == \
        [["777", "", "asmith"], ["", "", "nobody"]]
    by_number = read_roster(export, "SIS User ID")
    assert [r[1:4] for r in canvas_rows([row("20231234", "9"), row("asmith", "1")], "a", roster=by_number).rows[1:]] \
        == [["777", "20231234", ""]]
    # folders the students named (GitHub usernames, canvas_folder_ids = "none"): no row is matched by a SIS id,
    # so a username that is a classmate's login never takes the classmate's grade (red-r4 pass 18, D1)
    chosen = canvas_rows([row("asmith", "0"), row("ada_12", "7")], "a", roster=Roster(column=CHOSEN),
                         collected={"ada_12": "12"})
    assert [r[1:4] for r in chosen.rows[1:]] == [["12", "", ""]] and list(chosen.refused) == ["asmith"]


@pytest.mark.parametrize("folder_ids", [CHOSEN, "SIS Login ID"])
def test_a_canvas_number_is_only_the_download_of_the_folder_it_wrote(tmp_path, monkeypatch, folder_ids):
    """red-t5 L1 (pass 18). Assignment 1's Canvas download names 王伟, whose name has no letter a-z, by his Canvas user
    id alone: the id `12345`. Assignment 2 is not collected from Canvas, and a folder there named `12345` (a GitHub
    username, or a login of digits chosen to be the classmate's Canvas number) is not his: it was exported with his
    Canvas user id, the score landing on him. A Canvas number is read only from the download of the assignment
    exported, the one that wrote the folder; assignment 2's own download still gives its ids theirs."""
    from nbgrader.api import Gradebook

    from autograder.outputs import export, lms

    root = course(tmp_path, f"c.GraderSettings.canvas_folder_ids = {folder_ids!r}")
    lms_zip(root, {"王伟_12345_999_modules_and_sgd.ipynb": b'{"wang": 1}'})
    collect(root)
    assert submitted(root) == {"12345": b'{"wang": 1}'}
    record = root / "downloaded" / "a2" / "collected.json"  # assignment 2's download, which gave ada_7 alone
    record.parent.mkdir(parents=True)
    record.write_text('{"ada_7": {"lms_id": "7"}}')
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "dl01"):
        pass

    def row(student: str, score: str) -> dict:
        return {"assignment": "a2", "max_score": "24", "student_id": student, "last_name": "", "first_name": "",
                "score": score, "auto_score": score}

    rows = [row("12345", "24"), row("wangwei-gh", "3"), row("ada_7", "20")]
    monkeypatch.setattr(export, "grade_rows", lambda gradebook, assignments: ([], rows))
    written = lms.write_canvas_csv(root, "a2", tmp_path / "a2-canvas.csv")
    exported = {line.split(",")[0]: line.split(",")[1:4] for line in
                (tmp_path / "a2-canvas.csv").read_text().splitlines()[2:]}
    assert "12345" not in {canvas_id for canvas_id, *_ in exported.values()}, exported
    assert exported["ada_7"] == ["7", "", ""]
    if folder_ids == CHOSEN:  # a name a student chose, with no download's number: left out and named
        assert set(exported) == {"ada_7"} and sorted(written.refused) == ["12345", "wangwei-gh"]
    else:  # a name the SIS gave: matched by it, as every folder named without a download
        assert exported["12345"] == ["", "", "12345"] and written.without_id == ["12345", "wangwei-gh"]


def test_grades_lms_names_each_id_the_roster_ties_to_no_one_user(tmp_path, monkeypatch, capsys):
    """The command's output names every row left out for the roster, and why, in one line."""
    from autograder.outputs import lms

    written = lms.CanvasImport(tmp_path / "a-canvas.csv", 1, [], [], "a", refused={
        "20235555": "the roster gives it to Canvas user 555 (SIS User ID) and Canvas user 666 (SIS Login ID)"})
    monkeypatch.setattr(lms, "write_canvas_csv", lambda root, name, dest: written)
    assert lms.command(tmp_path, "a") == 0
    assert ("Left out 1 students the roster ties to no one Canvas user as a SIS Login ID "
            "(c.GraderSettings.canvas_folder_ids), so either score could be another student's: 20235555: the roster "
            "gives it to Canvas user 555 (SIS User ID) and Canvas user 666 (SIS Login ID).") in capsys.readouterr().out


def test_a_due_date_moved_is_no_change_of_a_late_students_submission(tmp_path, monkeypatch):
    """red-r2 (pass 16). A due date is a course input: moving it makes every grade stale, previewed before it is applied
    (classroom/changes.py). The collection wrote a LATE student's timestamp.txt from the due date (a second past it),
    so the next collect rewrote it, and that student's folder read as a changed submission: graded without the
    preview ("new or changed submission"), though the student sent nothing new. It holds the upload's time now."""
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    from autograder.classroom.ledger import folder_fingerprint
    from autograder.intake.files import IntakeRules
    from autograder.settings import GraderSettings, load_config

    root = course(tmp_path)
    coursedir = CourseDirectory(config=load_config(root))
    rules = IntakeRules.of(GraderSettings(config=load_config(root)), NOTEBOOK)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    lms_zip(root, {"obrienann_LATE_23456_7_modules_and_sgd.ipynb": b"{}"})
    prints = []
    for due in (datetime.datetime(2026, 11, 19, 12, 0), datetime.datetime(2026, 11, 22, 12, 0)):  # then extended
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            gb.update_or_create_assignment(ASSIGNMENT.name, duedate=due)
        collect(root)
        prints.append(folder_fingerprint(root / "submitted", ("obrienann_23456", ASSIGNMENT.name), rules))
    assert prints[0] == prints[1], "the same upload reads as a changed submission"


def test_make_preview_collects_nothing(tmp_path, monkeypatch):
    """red-r2 (pass 16). `make preview` took the roll as make grade does, collecting the LMS download into submitted/ and
    collected.json, though a preview writes nothing but its table (autograder/classroom/preview.py): it previews the
    class as submitted/ holds it, and the download waits for make grade."""
    import subprocess

    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    from autograder.classroom import ledger
    from autograder.settings import load_config

    root = course(tmp_path)
    coursedir = CourseDirectory(config=load_config(root))
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # nbgrader's alembic
    monkeypatch.setenv("PATH", path)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:  # a gradebook as make grade leaves it
        gb.update_or_create_assignment(ASSIGNMENT.name)
        ledger.read(gb.db, ASSIGNMENT.name)
        gb.db.commit()
    lms_zip(root, {"obrienann_LATE_23456_7_modules_and_sgd.ipynb": b"{}"})

    def files() -> dict[str, bytes]:  # by content: opening the gradebook (nbgrader's session) touches its time
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
                if p.is_file() and not p.is_relative_to(root / "reports")}

    before = files()
    done = subprocess.run([sys.executable, "-m", "autograder", "preview", "--assignment", ASSIGNMENT.name], cwd=root,
                          env={**os.environ, "PATH": path}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Nothing to preview" in done.stdout, done.stdout
    assert files() == before, "make preview wrote outside its scratch"


def test_a_hand_copy_of_the_notebook_in_another_case_is_newer_work_the_collection_keeps(tmp_path):
    """The intake grades a notebook spelled in any case, and the collection files Canvas's upload under the
    notebook's own name: work an instructor put in submitted/ by hand under the student's spelling is newer work
    all the same, kept, never deleted by the next collection (red-t5, pass 18)."""
    root = course(tmp_path)
    lms_zip(root, {"carol_222_100_Modules_and_SGD.ipynb": b'{"lms": 1}'})
    collect(root)
    folder = root / "submitted" / "carol_222" / ASSIGNMENT.name
    (folder / "modules_and_sgd.ipynb").unlink()
    (folder / "Modules_and_SGD.ipynb").write_bytes(b'{"by hand": 1}')  # newer than the LMS copy
    lines = collect(root)
    assert (folder / "Modules_and_SGD.ipynb").read_bytes() == b'{"by hand": 1}', lines


@pytest.mark.parametrize("hand_copy", ["Modules_and_SGD (1).ipynb", "from-email/modules_and_sgd.ipynb"])
def test_the_notebook_the_intake_would_grade_is_the_one_the_collection_keeps(tmp_path, hand_copy):
    """The collection tells newer work by the notebook the intake grades (choose_notebook: the assignment's name, the
    nearest, in any case; else the only notebook), not by the top-level name alone: an e-mailed copy the instructor
    put in place of the LMS copy, under the name the mail gave it or in a folder of its own, is graded by make
    grade, and the next collection keeps it (pass 20: it deleted it with the folder and graded the LMS copy again)."""
    root = course(tmp_path)
    lms_zip(root, {"carol_222_100_modules_and_sgd.ipynb": b'{"lms": 1}'})
    collect(root)
    folder = root / "submitted" / "carol_222" / ASSIGNMENT.name
    (folder / NOTEBOOK).unlink()
    (folder / hand_copy).parent.mkdir(exist_ok=True)
    (folder / hand_copy).write_bytes(b'{"by hand": 1}')  # newer than the LMS copy
    lines = collect(root)
    assert (folder / hand_copy).read_bytes() == b'{"by hand": 1}' and not (folder / NOTEBOOK).exists(), lines
    assert lines == [f"Kept submitted/carol_222/ and not the LMS copy: its {hand_copy} is not what a collection wrote "
                     "there (put there by hand)"], lines  # by its path: the keep rule reads every file at any depth


def test_a_hand_copy_is_kept_when_the_lms_upload_has_another_name(tmp_path):
    """red-c7 (pass 20), A. Carol's Canvas upload is my_work.ipynb (graded as the notebook, renamed). The instructor
    puts the right notebook in her folder by hand: the folder now holds a file no collection wrote there, so the next
    collection keeps it whole and says so, as it keeps a hand copy of an upload named as the notebook
    (test_a_hand_copy_of_the_notebook_in_another_case_is_newer_work_the_collection_keeps)."""
    root = course(tmp_path)
    lms_zip(root, {"carol_222_100_my_work.ipynb": b'{"lms": 1}'})
    collect(root)
    folder = root / "submitted" / "carol_222" / ASSIGNMENT.name
    assert (folder / "my_work.ipynb").read_bytes() == b'{"lms": 1}'
    (folder / NOTEBOOK).write_bytes(b'{"by hand": 1}')
    lines = collect(root)
    assert (folder / NOTEBOOK).is_file(), ("the instructor's hand copy was deleted by the collection", lines,
                                           sorted(p.name for p in folder.iterdir()))
    assert lines == [f"Kept submitted/carol_222/ and not the LMS copy: its {NOTEBOOK} is not what a collection wrote "
                     "there (put there by hand)"], lines


def test_a_folder_no_record_names_is_kept_and_the_summary_says_how_to_take_the_upload(tmp_path):
    """red-k10 K2 (pass 21): the copy the instructor put in submitted/ for a student no collection ever wrote a folder
    for (work sent by mail) is, on disk, what a kit before the records collected; both collections keep it (hand work
    is never undone), and the one line says how to take the new upload instead, as the exchange's Collect says it."""
    root = course(tmp_path)
    folder = root / "submitted" / "carol_222" / ASSIGNMENT.name
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_bytes(b'{"by mail": 1}')
    lms_zip(root, {"carol_222_100_modules_and_sgd.ipynb": b'{"lms": 1}'})
    lines = collect(root)
    assert submitted(root) == {"carol_222": b'{"by mail": 1}'}, lines
    assert lines == ["Kept submitted/carol_222/ and not the LMS copy: no collection records writing it (your copy, or "
                     "one a kit before the records collected): delete the folder to collect the new submission"], lines
    shutil.rmtree(folder)  # as the line says
    assert collect(root) == [] and submitted(root) == {"carol_222": b'{"lms": 1}'}


@pytest.mark.parametrize("recorded", [False, True], ids=["this-kit", "a-kit-that-wrote-the-build-time"])
def test_a_time_stamp_the_instructor_wrote_beside_a_collected_notebook_stays(tmp_path, recorded):
    """red-c7 (pass 20), E. Ann's Canvas upload is LATE. The instructor writes the time Canvas gives her submission
    into timestamp.txt, as the LATE line says (X24-d15-1: the collection writes none), or grants an extension so: the
    next collection of the same upload keeps her folder as it is, and says so. A time stamp a kit before X24-d15-1
    wrote from the download's build time, and recorded, is that kit's: the folder is written again without it."""
    import hashlib
    import json

    root = course(tmp_path)
    lms_zip(root, {"obrienann_LATE_23456_7_modules_and_sgd.ipynb": b"{}"})
    collect(root)
    stamp = root / "submitted" / "obrienann_23456" / ASSIGNMENT.name / "timestamp.txt"
    assert not stamp.exists()
    extension = "2026-11-20 09:31:07 UTC"
    stamp.write_text(extension)
    if recorded:
        record_path = root / "downloaded" / ASSIGNMENT.name / "collected.json"
        record = json.loads(record_path.read_text())
        record["obrienann_23456"]["timestamp.txt"] = hashlib.sha256(extension.encode()).hexdigest()
        record_path.write_text(json.dumps(record))
    lines = collect(root)
    if recorded:
        assert not stamp.exists() and lines[0].startswith("Late by Canvas's LATE marker: obrienann_23456: "), lines
        return
    assert stamp.read_text() == extension, lines
    assert len(lines) == 1 and lines[0].startswith("Kept submitted/obrienann_23456/ and not the LMS copy: "), lines


def test_a_collection_leaves_an_unchanged_students_folder_in_place(tmp_path):
    """red-c7 (pass 20), F. Every make grade collects the download again. A folder that holds the LMS copy already is
    never touched: a run reading it meanwhile (make regrade, the formgrader's Autograde button, a second make grade)
    would find it gone, "its folder could not be read", and record a zero under the fingerprint of a folder that
    never changed, which no later run grades again (/work/pass20/red-c7/F-collect-during-intake.py: 2 of 516 intakes
    beside one collection of 200 students)."""
    root = course(tmp_path)
    lms_zip(root, {"ada_1_modules_and_sgd.ipynb": b'{"lms": 1}'})
    collect(root)
    folder = root / "submitted" / "ada" / ASSIGNMENT.name
    held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)  # as an intake reading it holds it
    try:
        assert collect(root) == []
        assert os.fstat(held).st_nlink > 0, "an unchanged student's folder was deleted and written again by the collection"
    finally:
        os.close(held)


def test_a_new_lms_copy_is_written_whole_beside_the_folder_and_put_in_place_holding_the_lock(tmp_path, monkeypatch):
    """A later upload replaces a folder no one changed since its collection: written whole beside it, then renamed
    into place, while the collection holds submitted/'s lock (submitted_folders.py), which every read of a student's
    folder holds shared; nothing is left beside it."""
    from autograder.intake import collect as collection
    from conftest import locked_against

    root = course(tmp_path)
    lms_zip(root, {"ada_1_modules_and_sgd.ipynb": b'{"lms": 1}', "bob_2_modules_and_sgd.ipynb": b'{"lms": 2}'})
    collect(root)
    (archive_dir(root) / "submissions.zip").unlink()
    lms_zip(root, {"ada_1_modules_and_sgd.ipynb": b'{"lms": 3}', "bob_2_modules_and_sgd.ipynb": b'{"lms": 2}'},
            when=(2026, 11, 21, 9, 0, 0))
    staged, put = [], collection.put_in_place

    def watched(new: Path, dest: Path) -> None:
        assert locked_against(root / "submitted", exclusive=False), "written without submitted/'s lock"
        staged.append((dest.parent.name, sorted(p.name for p in new.iterdir())))
        put(new, dest)

    monkeypatch.setattr(collection, "put_in_place", watched)
    assert collect(root) == []
    assert staged == [("ada", [NOTEBOOK])], "only ada's new copy is written, and whole before it is put in place"
    assert submitted(root) == {"ada": b'{"lms": 3}', "bob": b'{"lms": 2}'}
    assert sorted(p.name for p in (root / "submitted" / "ada").iterdir()) == [ASSIGNMENT.name]


def test_put_in_place_never_leaves_a_student_without_a_folder(tmp_path):
    """red-e8 E8-1: when the staged copy cannot be put in place (gone: another collection moved it; a file system's
    error), the student's folder goes back where it was before the error is raised, and nothing is left beside it."""
    from autograder.intake.submitted_folders import put_in_place

    dest = tmp_path / "submitted" / "ada" / ASSIGNMENT.name
    dest.mkdir(parents=True)
    (dest / NOTEBOOK).write_text("collected")
    with pytest.raises(FileNotFoundError):
        put_in_place(dest.with_name(".gone.collecting"), dest)
    assert (dest / NOTEBOOK).read_text() == "collected"
    assert sorted(p.name for p in dest.parent.iterdir()) == [ASSIGNMENT.name]


def test_each_collection_stages_in_a_folder_of_its_own(tmp_path):
    """red-e8 E8-1, across routes: an exchange collect's staged copy of Ada (made outside submitted/'s lock, while it
    reads her inbound folder) is its own: an LMS collection writing Ada's folder meanwhile neither empties nor moves
    it, and leaves nothing of its own beside her folder."""
    from autograder.intake.submitted_folders import staging_for

    root = course(tmp_path)
    lms_zip(root, {"ada_1_modules_and_sgd.ipynb": b'{"first": 1}'})
    collect(root)
    dest = root / "submitted" / "ada" / ASSIGNMENT.name
    (archive_dir(root) / "submissions.zip").unlink()
    lms_zip(root, {"ada_1_modules_and_sgd.ipynb": b'{"second": 1}'}, when=(2026, 11, 21, 9, 0, 0))
    with staging_for(dest) as exchanges:
        (exchanges / NOTEBOOK).write_text("the exchange's copy")
        assert collect(root) == []
        assert (exchanges / NOTEBOOK).read_text() == "the exchange's copy"
        assert submitted(root)["ada"] == b'{"second": 1}'
    assert sorted(p.name for p in dest.parent.iterdir()) == [ASSIGNMENT.name]


def test_what_the_intakes_walk_never_reads_in_a_students_moodle_folder_is_never_collected(tmp_path):
    """red-i9 (pass 20). files.skipped is the intake's rule for what is no one's work (hidden names, __MACOSX), and
    the collection's for what is no edit, but the collection applies no such rule to what it takes: Moodle's folder
    pattern takes a notebook at any depth of the student's folder, hidden folders too, and writes it at the top of
    submitted/. Ada unzipped her working folder in Moodle's file manager (Windows zips .ipynb_checkpoints/, which
    it does not hide): the checkpoint becomes a second notebook beside hers, the intake finds no notebook of the
    assignment's name and two others, and Ada's work is not graded. Read where it was, the checkpoint is skipped
    and her one notebook is graded."""
    from autograder.intake.files import choose_notebook

    root = course(tmp_path)
    ada = "Ada Byron_1000_assignsubmission_file_/"
    with zipfile.ZipFile(archive_dir(root) / "moodle.zip", "w") as bundle:
        bundle.writestr(zipfile.ZipInfo(ada + "work (1).ipynb", LMS_TIME), b'{"ada": 1}')
        bundle.writestr(zipfile.ZipInfo(ada + ".ipynb_checkpoints/work (1)-checkpoint.ipynb", LMS_TIME), b"{}")
    lines = collect(root)
    folder = root / "submitted" / "adabyron_1000" / ASSIGNMENT.name
    names = sorted(p.name for p in folder.iterdir())
    assert choose_notebook(names, NOTEBOOK)[0] == "work (1).ipynb", (names, lines)


def test_a_copy_deeper_in_a_students_moodle_folder_never_costs_them_the_notebook_at_its_top(tmp_path):
    """red-i9 (pass 20). The intake grades the assignment's notebook nearest the top of the folder (choose_notebook);
    Moodle's folder pattern takes a notebook at any depth, and the collection keeps one file per name by the LMS's
    time alone. Ada's folder holds her notebook and, in old/, a draft of the same name, uploaded together (one time):
    she is "not collected: two files", though the folder read as it is grades her notebook at the top."""
    root = course(tmp_path)
    ada = "Ada Byron_1000_assignsubmission_file_/"
    with zipfile.ZipFile(archive_dir(root) / "moodle.zip", "w") as bundle:
        bundle.writestr(zipfile.ZipInfo(ada + NOTEBOOK, LMS_TIME), b'{"final": 1}')
        bundle.writestr(zipfile.ZipInfo(ada + "old/" + NOTEBOOK, LMS_TIME), b'{"draft": 1}')
    lines = collect(root)
    assert submitted(root) == {"adabyron_1000": b'{"final": 1}'}, lines


def test_a_collected_notebook_past_the_old_cap_is_replaced_by_a_newer_upload_after_the_instructor_raises_notebook_kb(
        tmp_path):
    """K-1. The keep rule's digest of a file longer than file_bytes is 'the SHA-256 of its first file_bytes + 1 bytes
    and its size'; a shorter one's is its plain SHA-256. file_bytes follows notebook_kb, so when the instructor
    raises notebook_kb (the usual answer to "not graded: the notebook is larger than notebook_kb"), the very file
    the LMS collection wrote digests another way than collected.json records: the folder reads as edited by hand,
    and the student's newer upload is never collected ("changed after it was collected (a regrade, or by hand)"),
    though no one touched it. Lowering notebook_kb does the same to every collected file between the two caps."""
    root = course(tmp_path, "c.GraderSettings.notebook_kb = 1", "c.GraderSettings.submission_file_kb = 1")
    big = b'{"big": "' + b"x" * 6000 + b'"}'  # past file_bytes (4 KB here: the time stamp's floor)
    lms_zip(root, {"carol_222_100_modules_and_sgd.ipynb": big})
    assert collect(root) == [] and submitted(root) == {"carol_222": big}
    with (root / "nbgrader_config.py").open("a") as config:  # the instructor lets such a notebook be graded
        config.write("c.GraderSettings.notebook_kb = 8\n")
    (root / "downloaded" / "dl01_6_3" / "archive" / "submissions.zip").unlink()
    lms_zip(root, {"carol_222_101_modules_and_sgd.ipynb": b'{"fixed": 1}'}, when=(2026, 11, 21, 9, 30, 0))
    lines = collect(root)
    assert submitted(root) == {"carol_222": b'{"fixed": 1}'}, lines


def test_an_upload_of_more_files_than_submission_entries_is_replaced_by_the_students_next_upload(tmp_path):
    """K-2. The LMS collection writes up to BoundedExtractor.max_submission_files (100) of a student's notebooks;
    the keep rule reads the folder within GraderSettings.submission_entries. A course that sets submission_entries
    below that (here 2) gets, from a student's upload of three notebooks, a folder `held` marks UNSEEN: the next
    collection keeps it as "more than a collection writes (put there by hand)" (the collection wrote it), and the
    student's newer upload is never collected. Lowering submission_entries later does the same to folders
    collected before."""
    root = course(tmp_path, "c.GraderSettings.submission_entries = 2")
    lms_zip(root, {f"carol_222_100_{name}.ipynb": b"{}" for name in ("modules_and_sgd", "scratch", "notes")})
    collect(root)
    (root / "downloaded" / "dl01_6_3" / "archive" / "submissions.zip").unlink()
    lms_zip(root, {"carol_222_101_modules_and_sgd.ipynb": b'{"fixed": 1}'}, when=(2026, 11, 21, 9, 30, 0))
    lines = collect(root)
    assert submitted(root) == {"carol_222": b'{"fixed": 1}'}, lines


@pytest.mark.parametrize("upload", ["20231234_modules_and_sgd.ipynb", "dl01_6_3_modules_and_sgd.ipynb",
                                    "2_modules_and_sgd.ipynb", "modules_and_sgd_2026_11_20.ipynb"])
def test_a_canvas_upload_whose_own_name_starts_with_a_student_number_is_collected_or_named_as_its_students(
        tmp_path, upload):
    """red-c12 R1: a course that asks students to put their student number first (`20231234_modules_and_sgd.ipynb`),
    or a student who saved the notebook under the lesson's number (`dl01_6_3_...`, the assignment's own folder name),
    uploads a right notebook under the Canvas name `smithjohn_12345_100_<upload>`. The LMS wrote that name and the
    download's ids lead it; nobody else's ids follow it. The student is either collected, or the summary names them
    (`smithjohn_12345`) and says why their upload was passed over, never "matches none of the LMS's patterns" for a
    name the LMS wrote, with no student named."""
    root = course(tmp_path)
    lms_zip(root, {f"smithjohn_12345_100_{upload}": b'{"john": 1}',
                   "leeann_23456_101_modules_and_sgd.ipynb": b'{"ann": 1}'})
    lines = collect(root)
    if "smithjohn_12345" in submitted(root):
        return
    about = [line for line in lines if upload in line]
    assert about and all(line.startswith("Not collected: smithjohn_12345") for line in about), lines
    assert not any("matches none of the LMS's patterns" in line for line in about), lines


def test_a_demo_students_folder_gives_way_to_a_real_student_of_that_id_in_the_lms_download(tmp_path):
    """red-c12 R2: `make grade` on a fresh clone writes the demo class (ada: the reference); the instructor then drops
    the class's download into downloaded/. A real student whose id the download gives as `ada` (the generic pattern
    `<student id>_<anything>_modules_and_sgd.ipynb`: a login) is a real student (docs/instructors.md: "a real `ada`
    ... is a real student"): their upload is collected, never kept out by the demo's copy of the reference, which
    would then be graded as theirs at full marks. At the least the summary never calls the kit's own demo folder
    "your copy"."""
    from autograder.assignment import find_assignment
    from autograder.classroom.lifecycle import write_demo

    root = course(tmp_path)
    assert "ada" in write_demo(find_assignment(root, ASSIGNMENT.name), root / "submitted")
    lms_zip(root, {"ada_x_modules_and_sgd.ipynb": b'{"real ada": 1}', "zoe_x_modules_and_sgd.ipynb": b'{"zoe": 1}'})
    lines = collect(root)
    assert submitted(root)["zoe"] == b'{"zoe": 1}', lines
    assert submitted(root)["ada"] == b'{"real ada": 1}', lines


@pytest.mark.parametrize("upload", ["eveevil_34567_102_x_1_2_y.zip", "eveevil_34567_102_2_x.zip",
                                    "eveevil_LATE_34567_102_bob_9_9_modules_and_sgd.ipynb.zip",
                                    "Eve Evil_34567_assignsubmission_file_x_1_assignsubmission_file_y.zip"])
def test_a_students_archive_whose_own_name_holds_ids_is_never_unpacked_as_the_lms_download(tmp_path, upload):
    """red-c12 R3: the download as archives, a student's among them (as the test above lays it out), where the
    student's upload is named so that no pattern reads it (Canvas's name, then ids again in its own name, or a
    number first): `student_of` gives no one, so BoundedExtractor.extract takes it for the LMS's download and
    unpacks it, and each entry at its top is read as a name the LMS wrote: a classmate's, with any attachment
    number. One copy replaces Ann's notebook with Eve's; several make Ann "not collected: two files"."""
    root = course(tmp_path)
    lms_zip(root, {"obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}',
                   "eveevil_34567_101_modules_and_sgd.ipynb": b'{"eve": 1}'})
    (archive_dir(root) / upload).write_bytes(zipped({"obrienann_23456_999_modules_and_sgd.ipynb": b'{"spoof": 1}'}))
    lines = collect(root)
    assert submitted(root) == {"obrienann_23456": b'{"ann": 1}', "eveevil_34567": b'{"eve": 1}'}, lines
    extracted = root / "downloaded" / ASSIGNMENT.name / "extracted"
    assert not list(extracted.rglob("*_999_*")), "a student's own archive was unpacked"


def test_an_lms_runs_first_line_names_the_demo_students_left_beside_the_class(tmp_path):
    """red-c12 R2: the demo class written earlier stays in submitted/ beside the download's students and is graded
    with them: the run's first line names them, as it does for submitted/ alone, never as part of the real class."""
    from autograder.assignment import find_assignment
    from autograder.classroom.class_run import ClassRun
    from autograder.classroom.lifecycle import write_demo
    from autograder.classroom.students import collect_class
    from autograder.settings import GraderSettings, load_config

    root = course(tmp_path)
    demo = write_demo(find_assignment(root, ASSIGNMENT.name), root / "submitted")
    lms_zip(root, {"ada_x_modules_and_sgd.ipynb": b'{"real ada": 1}', "zoe_x_modules_and_sgd.ipynb": b'{"zoe": 1}'})
    run = ClassRun.open(find_assignment(root, ASSIGNMENT.name), GraderSettings(config=load_config(root)))
    origin, _ = collect_class(run)
    left = [s for s in demo if s != "ada"]  # ada's folder gave way to the real ada's upload
    assert origin == (f"the LMS download in downloaded/{ASSIGNMENT.name}, and {len(left)} of the bundled demo's in "
                      f"submitted/ ({', '.join(left)}: `make new-class` removes them)"), origin


@pytest.mark.parametrize("name", ["dl01_6_3_submissions.zip", "week6_modules_and_sgd.zip"])
def test_the_lms_download_alone_in_archive_renamed_by_the_instructor_is_unpacked_or_named_as_the_download(
        tmp_path, name):
    """red-c13 X23-c13-1: the LMS's download, alone in archive/, saved under a name of the instructor's (the
    assignment's id first, `dl01_6_3_submissions.zip`, or `week6_modules_and_sgd.zip`) begins as the LMS names an
    upload (Canvas's `<name>_<user>_<attachment>_`, or the generic pattern read on its stem), so is_upload holds and
    it is never unpacked: the class is not collected, and the summary's only line names a student no class has
    (`dl01_6`, `week6`) with "no notebook in the upload ... an archive in an upload is never unpacked", never
    saying the download was taken for a student's upload nor that a rename would collect it."""
    root = course(tmp_path)
    lms_zip(root, {"obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}'}, name=name)
    lines = collect(root)
    invented = name.split("_6_3_")[0] + "_6" if "_6_3_" in name else name.split("_")[0]
    assert submitted(root) == {"obrienann_23456": b'{"ann": 1}'} or not any(
        line.startswith(f"Not collected: {invented}:") for line in lines), lines


def test_the_same_upload_in_two_downloads_is_one_file_not_two(tmp_path):
    """red-c13 X23-c13-2: the download taken twice (Canvas's `submissions.zip`, then `submissions (1).zip` after a
    late upload, both left in archive/) holds each earlier upload twice, byte for byte, under one attachment number:
    one upload, yet _choose reads it as "two files ... neither the LMS's numbers nor its time stamps say which is
    newer" and every student of the first download is not collected; only the late student is."""
    root = course(tmp_path)
    files = {"obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}'}
    lms_zip(root, files)
    lms_zip(root, {**files, "latelee_45678_102_modules_and_sgd.ipynb": b'{"lee": 1}'}, name="submissions (1).zip")
    lines = collect(root)
    assert submitted(root).get("obrienann_23456") == b'{"ann": 1}', lines


def test_a_late_upload_named_by_its_start_alone_says_it_is_late_where_it_says_to_copy_it_by_hand(tmp_path):
    """red-c13 X23-c13-3: a late student names her upload with a number first (`1_modules_and_sgd.ipynb`); Canvas
    writes `eveevil_LATE_34567_101_1_modules_and_sgd.ipynb`, which is not collected (R1, on file) and is named by its
    start, with "check in the LMS whose it is before you copy it into submitted/eveevil_34567/dl01_6_3/". The line
    never says that the upload is LATE nor its LMS time: copied by hand as told, the folder has no timestamp.txt and
    nbgrader counts it on time, where a classmate uploading at the same moment under a plain name is "late by 21 h
    30 min". The instruction to copy by hand must carry what the collection would have written (the time stamp)."""
    root = course(tmp_path, 'c.GraderSettings.due_date = "2026-11-19 12:00:00 UTC"')
    lms_zip(root, {"eveevil_LATE_34567_101_1_modules_and_sgd.ipynb": b'{"eve": 1}',
                   "leelate_LATE_45678_102_modules_and_sgd.ipynb": b'{"lee": 1}'})
    lines = collect(root)
    assert any(line.startswith("Late by Canvas's LATE marker: leelate_45678") for line in lines), lines
    line = refusal(lines, "eveevil_34567")
    assert "timestamp.txt" in line or "late by" in line.lower(), line


@pytest.mark.parametrize("name", ["dl01_6_3_submissions.zip", "week6_modules_and_sgd.zip",
                                  "Moodle-DL01-Lab_6_3_x-42.zip"])
def test_an_archive_alone_in_archive_named_as_an_upload_is_named_by_itself_and_a_rename_collects_the_class(
        tmp_path, name):
    """X23-c13-1, as fixed: alone in archive/, a zip whose name reads as an upload is either the LMS's download the
    instructor renamed or the one zip upload of a download unpacked into archive/, whose entries the student chose
    (the next test): its name alone tells them apart, so it is not unpacked, and its one line names the archive, not
    a student its name makes up, and says the rename that collects the class."""
    root = course(tmp_path)
    download = lms_zip(root, {"obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}'}, name=name)
    lines = collect(root)
    assert submitted(root) == {}, lines
    assert len(lines) == 1 and lines[0].startswith(f"Not collected: {name}: not unpacked: "), lines
    assert "give it a name without `_`" in lines[0], lines
    download.rename(download.with_name("submissions.zip"))
    lines = collect(root)
    assert submitted(root) == {"obrienann_23456": b'{"ann": 1}'}, lines


def test_a_students_zip_alone_in_archive_is_never_unpacked_as_the_download(tmp_path):
    """Why a lone archive is not the download by its place: the LMS's download of one upload, a zip, unpacked into
    archive/ as the docs allow, leaves that student's zip alone there, and its entries are named as she chose."""
    root = course(tmp_path)
    (archive_dir(root) / "eveevil_34567_101_x.zip").write_bytes(
        zipped({"obrienann_23456_999_modules_and_sgd.ipynb": b'{"spoof": 1}'}))
    lines = collect(root)
    assert submitted(root) == {}, lines
    extracted = root / "downloaded" / ASSIGNMENT.name / "extracted"
    assert not list(extracted.rglob("*_999_*")), "a student's own archive was unpacked"
    assert [line.split(": not unpacked: ")[0] for line in lines] == ["Not collected: eveevil_34567_101_x.zip"], lines


def test_one_upload_in_two_downloads_is_collected_silently_and_a_later_upload_of_the_same_bytes_is_still_later(
        tmp_path):
    """X23-c13-2, as fixed: byte-identical copies under one attachment number, LATE marker and time are one file
    (no line); the same bytes uploaded again later (a new attachment number, LATE) are a second upload, the newer."""
    root = course(tmp_path, 'c.GraderSettings.due_date = "2026-11-19 12:00:00 UTC"')
    ann = {"obrienann_23456_100_modules_and_sgd.ipynb": b'{"ann": 1}'}
    lms_zip(root, ann)
    lms_zip(root, {**ann, "obrienann_LATE_23456_105_modules_and_sgd.ipynb": b'{"ann": 1}'}, name="submissions (1).zip")
    lines = collect(root)
    assert submitted(root) == {"obrienann_23456": b'{"ann": 1}'}, lines
    assert [line.split(": ")[0] for line in lines] == ["Collected the newest of several files",
                                                       "Late by Canvas's LATE marker"], lines
    assert "took obrienann_LATE_23456_105_" in lines[0], lines


def test_a_late_upload_to_copy_by_hand_gives_the_time_stamp_to_write(tmp_path):
    """X23-c13-3, as fixed, and X24-d15-1: the line says Canvas marked it LATE, the most it can be late by, and where to
    write the submission's time, as for the classmate's LATE upload collected (no time stamp written for either)."""
    root = course(tmp_path, 'c.GraderSettings.due_date = "2026-11-19 12:00:00 UTC"')
    lms_zip(root, {"eveevil_LATE_34567_101_1_modules_and_sgd.ipynb": b'{"eve": 1}',
                   "leelate_LATE_45678_102_modules_and_sgd.ipynb": b'{"lee": 1}'})
    lines = collect(root)
    line = refusal(lines, "eveevil_34567")
    folder = f"submitted/eveevil_34567/{ASSIGNMENT.name}"
    assert "Canvas marked it LATE, but its download holds no time of the upload" in line, line
    assert "2026-11-20 09:30 UTC, so late by at most 21 h 30 min" in line, line
    assert f"(SpeedGrader, or the API's submitted_at) into {folder}/timestamp.txt, as `YYYY-MM-DD HH:MM:SS UTC`" in line
    assert not (root / "submitted" / "leelate_45678" / ASSIGNMENT.name / "timestamp.txt").exists()


def test_a_late_uploads_time_does_not_move_when_canvas_builds_the_download_again(tmp_path):
    """red-d15 X24-d15-1 (pass 24): Canvas writes its download with rubyzip's `get_output_stream(name)` and no time
    (lib/content_zipper.rb, add_attachment_to_zip), so every entry's time is rubyzip's default, `DOSTime.now`: when
    Canvas built the zip, not when the student uploaded. The collection takes that time as "the LMS's time of the
    upload" for a LATE student's timestamp.txt, so the lateness nbgrader counts is the time from the due date to the
    instructor's download, and it grows with every download: the same LATE upload (same attachment number, same bytes)
    downloaded a week later is collected as a week later, a new submission time, and a per-day penalty counts it.
    The upload's time is a fact of the upload that no download changes (collect.py's docstring)."""
    from nbgrader.coursedir import CourseDirectory

    from autograder.settings import load_config

    root = course(tmp_path, 'c.GraderSettings.due_date = "2026-11-19 12:00:00 UTC"')
    uploads = {"obrienann_LATE_23456_105_modules_and_sgd.ipynb": b'{"ann": 1}',
               "smithjohn_12345_100_modules_and_sgd.ipynb": b'{"john": 1}'}
    folder = root / "submitted" / "obrienann_23456" / ASSIGNMENT.name
    lms_zip(root, uploads)  # built 2026-11-20 09:30: every entry has that time, as rubyzip writes it
    first = collect(root)
    stamp = CourseDirectory(config=load_config(root)).get_existing_timestamp(str(folder))
    # fix: the entry's time is not written as the upload's (the test held it was, then that it did not move)
    assert stamp is None, first
    written = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    (archive_dir(root) / "submissions.zip").unlink()
    lms_zip(root, uploads, when=(2026, 11, 27, 9, 30, 0))  # the same submissions, downloaded a week later
    again = collect(root)
    restamped = CourseDirectory(config=load_config(root)).get_existing_timestamp(str(folder))
    assert restamped == stamp, (first, again)
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == written, "the same upload was written again"
    # Both downloads in archive/: one upload by its attachment number, whatever the times Canvas built them at.
    lms_zip(root, uploads, name="submissions (1).zip")
    both = collect(root)
    assert [line.split(": ")[0] for line in both] == ["Late by Canvas's LATE marker"], both


def test_a_canvas_download_with_anonymous_grading_is_never_one_student_named_anon(tmp_path):
    """red-d15 X24-d15-2 (pass 24): with anonymous grading on, Canvas names each upload `anon_<anonymous id>_
    <attachment>_<name>` (`LATE_anon_...` when late: lib/content_zipper.rb, get_filename: the user's name is left out
    and the id is `anon_<submission.anonymous_id>`, five letters and digits). No Canvas pattern reads that, and the
    fourth (`<student id>_<anything>_modules_and_sgd.ipynb`) reads every on-time upload of the class as student
    `anon`: the newest by the entry's time (rubyzip stamps each entry as Canvas writes it) is collected as `anon` and
    graded, the rest of the class dropped with one "Collected the newest of several files" line; the late ones are
    each refused as student `LATE`. One student's work is graded under an id that is the whole class's."""
    root = course(tmp_path, 'c.GraderSettings.due_date = "2026-11-19 12:00:00 UTC"')
    with zipfile.ZipFile(archive_dir(root) / "submissions.zip", "w") as bundle:
        for entry, when, data in (("anon_x7k2p_100_modules_and_sgd.ipynb", LMS_TIME, b'{"ada": 1}'),
                                  ("anon_q9w3e_101_modules_and_sgd.ipynb", (2026, 11, 20, 9, 30, 2), b'{"bob": 1}'),
                                  ("LATE_anon_m4n8r_102_modules_and_sgd.ipynb", (2026, 11, 20, 9, 30, 4), b'{"cy": 1}')):
            bundle.writestr(zipfile.ZipInfo(entry, when), data)
    lines = collect(root)
    assert "anon" not in submitted(root), lines


def test_an_entry_name_that_is_not_utf8_under_the_zips_utf8_flag_stops_only_that_archive(tmp_path):
    """red-d15 X24-d15-4 (pass 24): a zip entry whose general-purpose flag says its name is UTF-8 (bit 11) but whose
    bytes are not makes Python's zipfile raise UnicodeDecodeError (a ValueError) when the archive is opened: inside
    BoundedExtractor._unpack, whose handler takes OSError, BadZipFile, TarError and EOFError ("the LMS archive could not
    be read to the end"), so it escapes the collect step and `make grade` stops for the class with a traceback. The
    entry's name is the student's upload's name, written by the LMS."""
    import struct

    root = course(tmp_path)
    path = lms_zip(root, {"smithjohn_12345_8_modules_and_sgd.ipynb": b"{}", "eveevil_34567_9_XXXX.ipynb": b"{}"})
    data = bytearray(path.read_bytes().replace(b"XXXX", b"\xff\xfe\xfd\xfc"))
    at = data.find(b"PK\x01\x02")
    while at >= 0:  # each central directory entry says its name is UTF-8
        struct.pack_into("<H", data, at + 8, struct.unpack_from("<H", data, at + 8)[0] | 0x800)
        at = data.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(data))
    lines = collect(root)  # today: UnicodeDecodeError out of LmsZipCollect.start
    assert any("submissions.zip" in line or "eveevil_34567" in line for line in lines), lines


def test_a_damaged_entry_of_the_download_stops_only_its_own_file(tmp_path):
    """red-d15 X24-d15-5 (pass 24): a download damaged in one member's deflate stream (a bit flipped on the way: not a
    bad CRC, which zipfile reports as BadZipFile, but a block zlib cannot decode) raises zlib.error while that member is
    read: BoundedExtractor._write_entry takes OSError, RuntimeError, BadZipFile and NotImplementedError, _unpack OSError,
    BadZipFile, TarError and EOFError, so it escapes the collect step and `make grade` stops for the class, where the
    docstring promises that entry's "unreadable in the archive" line and the rest of the class collected."""
    root = course(tmp_path)
    notebook = b'{"cells": [], "x": "' + b"abcdefgh" * 4000 + b'"}'
    path = lms_zip(root, {"smithjohn_12345_8_modules_and_sgd.ipynb": b"{}",
                          "eveevil_34567_9_modules_and_sgd.ipynb": notebook})
    with zipfile.ZipFile(path) as bundle:
        info = bundle.getinfo("eveevil_34567_9_modules_and_sgd.ipynb")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data = bytearray(path.read_bytes())
    for at in range(start + 5, start + 40):
        data[at] ^= 0x5A
    path.write_bytes(bytes(data))
    lines = collect(root)  # today: zlib.error out of LmsZipCollect.start
    assert "smithjohn_12345" in submitted(root), lines


def test_each_anonymous_canvas_upload_is_its_own_student_and_ids_alike_but_for_case_are_refused(tmp_path):
    """fix of X24-d15-2: each anonymous id is a student, `anon_` and the id in lower case (SAFE_ID), its LATE marker
    read; Canvas's anonymous ids differ in case, so two that differ only so give one id and are refused, as any two
    LMS identities under one id are, never collected as one student's."""
    root = course(tmp_path, 'c.GraderSettings.due_date = "2026-11-19 12:00:00 UTC"')
    lms_zip(root, {"anon_x7K2p_100_modules_and_sgd.ipynb": b'{"ada": 1}',
                   "LATE_anon_m4n8r_102_modules_and_sgd.ipynb": b'{"cy": 1}',
                   "anon_Q9w3e_103_modules_and_sgd.ipynb": b'{"dan": 1}', "anon_q9w3e_104_modules_and_sgd.ipynb": b"{}"})
    lines = collect(root)
    assert set(submitted(root)) == {"anon_x7k2p", "anon_m4n8r"}, lines
    assert any(line.startswith("Late by Canvas's LATE marker: anon_m4n8r: Canvas marked it LATE") for line in lines), lines
    assert "2 LMS identities (anon_Q9w3e, anon_q9w3e) give this id" in refusal(lines, "anon_q9w3e (anon_Q9w3e_103"), lines


def test_a_blackboard_download_is_never_collected_as_one_student_named_after_the_assignment(tmp_path):
    """red-a20 X29-a20-2 (pass 29). Blackboard's "Assignment File Download" names each upload
    `<assignment>_<username>_attempt_<date>_<file name>`: nbgrader's own example of a download
    (FileNameCollectorPlugin.named_regexp's help, `ps1_bitdiddle_attempt_2016-01-30-15-00-00_problem1.ipynb`). The last
    of named_regexps ("anything else": `<student id>_<anything>_modules_and_sgd.ipynb`) reads the assignment's name as
    every student's id: the whole class is one student `ps1`, graded on the newest upload of the class, and every
    other student's notebook is dropped; the summary's one line says "the newest of several files" of `ps1`, as if one
    student had uploaded twice. Each upload is its own student's, or is named as not collected."""
    root = course(tmp_path)
    with zipfile.ZipFile(archive_dir(root) / "gradebook.zip", "w") as bundle:
        for user, hour in (("bitdiddle", 10), ("hacker", 11)):
            entry = f"ps1_{user}_attempt_2026-11-20-{hour}-00-00_{NOTEBOOK}"
            bundle.writestr(zipfile.ZipInfo(entry, (2026, 11, 20, hour, 0, 0)), f'{{"{user}": 1}}'.encode())
    lines = collect(root)
    folders = submitted(root)
    assert "ps1" not in folders, (folders, lines)
    for user in ("bitdiddle", "hacker"):
        assert (folders.get(user) == f'{{"{user}": 1}}'.encode()
                or any(line.startswith("Not collected:") and user in line for line in lines)), (user, folders, lines)


def test_blackboard_attempts_are_ordered_by_their_time_and_an_ambiguous_or_doubled_prefix_is_named(tmp_path):
    """fix-bb (X29-a20-2): Blackboard's attempt time orders one student's two attempts (its digits, as Canvas's
    attachment number), whatever the zip entries' times; its receipt (`..._attempt_<time>.txt`) is its student's and
    no line of the summary; a title holding `_` (`hw_3`, read as title or username alike) is named as not collected,
    never collected as `hw` or `3_bob`; a file name holding the marker again is named as the uploader's, not collected."""
    root = course(tmp_path)
    stamp = "attempt_2026-11-20-{}-00-00"
    entries = {  # the earlier attempt has the later entry time
        f"Lab six_bitdiddle_{stamp.format(10)}_{NOTEBOOK}": (b'{"late": 1}', (2026, 11, 20, 9, 0, 0)),
        f"Lab six_bitdiddle_{stamp.format('09')}_{NOTEBOOK}": (b'{"early": 1}', (2026, 11, 20, 12, 0, 0)),
        f"Lab six_bitdiddle_{stamp.format(10)}.txt": (b"Name: Ben Bitdiddle", LMS_TIME),
        f"Lab six_hacker_{stamp.format(11)}_{NOTEBOOK}": (b'{"hacker": 1}', LMS_TIME),
        f"hw_3_bob_{stamp.format(11)}_{NOTEBOOK}": (b'{"bob": 1}', LMS_TIME),
        f"Lab six_eve_{stamp.format(11)}_x_hacker_{stamp.format(12)}_{NOTEBOOK}": (b'{"eve": 1}', LMS_TIME),
    }
    with zipfile.ZipFile(archive_dir(root) / "gradebook.zip", "w") as bundle:
        for entry, (data, when) in entries.items():
            bundle.writestr(zipfile.ZipInfo(entry, when), data)
    lines = collect(root)
    assert submitted(root) == {"bitdiddle": b'{"late": 1}', "hacker": b'{"hacker": 1}'}, lines
    assert any(line.startswith(f"Collected the newest of several files: bitdiddle: took Lab six_bitdiddle_{stamp.format(10)}")
               for line in lines), lines
    assert "matches none of the LMS's patterns" in refusal(lines, f"hw_3_bob_{stamp.format(11)}"), lines
    assert "collected as no one's" in refusal(lines, f"eve (Lab six_eve_{stamp.format(11)}_x_hacker"), lines
    assert len([line for line in lines if line.startswith("Not collected:")]) == 2, lines


def test_a_blackboard_receipt_of_a_dotted_username_is_its_students_and_no_line_of_the_summary(tmp_path):
    """red-b21 X30-b21-2: fix-bb reads Blackboard's receipt (`<title>_<user>_attempt_<time>.txt`) as its student's,
    for the caps, with no summary line. A username with a dot (`stud.a`, slugged to `studa`, which the docs name) has
    its receipt read as no one's: owner() tries the name with `.ipynb` added (`...<time>.txt.ipynb`, which the pattern
    does not read) and its stem cut at the first dot (`ps1_stud.ipynb`). So each dotted student's receipt spends the
    share of what no one owns, and past that cap each one is a "Not collected" line naming no student (7 students
    with a cap of 5: 2 lines; the same class with usernames `studa`... gets none)."""
    root = course(tmp_path, "c.BoundedExtractor.max_submission_files = 5")
    files = {}
    for i in range(7):
        files[f"ps1_stud.{chr(97 + i)}_attempt_2026-11-20-10-00-0{i}_{NOTEBOOK}"] = b"{}"
        files[f"ps1_stud.{chr(97 + i)}_attempt_2026-11-20-10-00-0{i}.txt"] = b"Name: A Student"
    lms_zip(root, files)
    lines = collect(root)
    assert set(submitted(root)) == {f"stud{chr(97 + i)}" for i in range(7)}, lines
    assert lines == [], lines


def test_a_blackboard_attempt_of_a_dotted_username_with_no_notebook_is_named_in_the_summary(tmp_path):
    """red-b21 X30-b21-2, its other effect: an attempt holding only Blackboard's receipt (no file attached, or only a
    comment) is named "no notebook in the upload" for `bob`, but for the dotted username `ann.lee` the summary says
    nothing at all: her receipt is read as no one's (owner() cannot read `..._attempt_<time>.txt` when the username
    holds a dot), so the instructor is never told that she submitted and nothing was collected."""
    root = course(tmp_path)
    lms_zip(root, {"ps1_ann.lee_attempt_2026-11-20-10-00-00.txt": b"Name: Ann Lee",
                   "ps1_bob_attempt_2026-11-20-10-00-00.txt": b"Name: Bob"})
    lines = collect(root)
    assert "no notebook in the upload" in refusal(lines, "bob"), lines
    assert "no notebook in the upload" in refusal(lines, "annlee"), lines


def test_a_later_download_never_puts_another_lms_identity_in_a_folder_collected_for_one_that_shares_its_id(tmp_path):
    """red-b26 X35-b26-1 (pass 35): an id is the LMS's name cut down (Blackboard's username in lower case, letters and
    digits only: `ann.lee` and `annlee` are both `annlee`; Canvas's anonymous `anon_Q9w3e` and `anon_q9w3e` both
    `anon_q9w3e`). Two identities under one id in one download are refused (_refuse_clashes), but collected.json keeps
    no identity, only the id: the first download (a Blackboard download of the attempts selected, or one taken before
    the second student uploaded) collects ann.lee's attempt into submitted/annlee/; the next, holding only annlee's,
    replaces it whole (the folder holds what a collection wrote), with no line in the summary (measured: lines [],
    submitted/annlee/ holds the other user's notebook; her gradebook row and hand grades now stand on it). The folder
    a collection wrote for one identity is kept, and the clash named, when a later download gives its id to another."""
    root = course(tmp_path)
    lms_zip(root, {f"ps1_ann.lee_attempt_2026-11-20-10-00-00_{NOTEBOOK}": b'{"ann.lee": 1}'})
    assert collect(root) == [] and submitted(root) == {"annlee": b'{"ann.lee": 1}'}
    (archive_dir(root) / "submissions.zip").unlink()
    lms_zip(root, {f"ps1_annlee_attempt_2026-11-21-10-00-00_{NOTEBOOK}": b'{"annlee": 1}'}, when=(2026, 11, 21, 9, 0, 0))
    lines = collect(root)
    assert submitted(root) == {"annlee": b'{"ann.lee": 1}'}, ("another user's upload replaced ann.lee's", lines)
    assert "ann.lee" in refusal(lines, "annlee"), lines


def test_a_folder_kept_for_its_time_stamp_says_when_the_download_holds_a_newer_upload(tmp_path):
    """red-b26 X35-b26-2 (pass 35): Ann's LATE upload is collected and the instructor writes its time into timestamp.txt,
    as the LATE line says; from then on each collection keeps her folder ("the folder is yours ... a newer upload from
    that student is yours to copy too", docs/instructors.md). Five days later she uploads again (Canvas's attachment
    9 after 7, other bytes, LATE). kept_because stops at the time stamp, the first entry of the folder no collection
    wrote, and never compares the download's upload with the one collected: the summary's one line for her is,
    character for character, the line it gives when the download holds the very upload collected (measured: both
    runs `Kept submitted/obrienann_23456/ and not the LMS copy: its timestamp.txt is not one a collection records
    writing ...`). So her newer upload is never graded, nor named: she is graded on the first upload, at its
    lateness, and the instructor has no way to tell from the summary that there is anything to copy. The folder
    stays (the instructor's time stamp is theirs); the line names the newer upload in the download."""
    root = course(tmp_path, 'c.GraderSettings.due_date = "2026-11-19 12:00:00 UTC"')
    lms_zip(root, {"obrienann_LATE_23456_7_modules_and_sgd.ipynb": b'{"first": 1}'})
    collect(root)
    (root / "submitted" / "obrienann_23456" / ASSIGNMENT.name / "timestamp.txt").write_text("2026-11-19 13:00:00 UTC")
    same = collect(root)
    (archive_dir(root) / "submissions.zip").unlink()
    upload = "obrienann_LATE_23456_9_modules_and_sgd.ipynb"
    lms_zip(root, {upload: b'{"second": 1}'}, when=(2026, 11, 25, 9, 0, 0))
    newer = collect(root)
    assert submitted(root) == {"obrienann_23456": b'{"first": 1}'}, "the instructor's folder stays"
    assert newer != same, ("the summary reads the same whether or not the download holds a newer upload", newer)
    assert any("obrienann_23456" in line and upload in line for line in newer), newer


@pytest.mark.parametrize(("first", "second", "identity", "shown_as"), [
    ("anon_Q9w3e_111_modules_and_sgd.ipynb", "anon_q9w3e_222_modules_and_sgd.ipynb", "anon_Q9w3e", "anon_Q9w3e"),
    (f"ps1_ann\x1blee_attempt_2026-11-20-10-00-00_{NOTEBOOK}", f"ps1_annlee_attempt_2026-11-21-10-00-00_{NOTEBOOK}",
     "ann\x1blee", "ann\\x1blee"),
], ids=["canvas-anonymous", "blackboard-escape"])
def test_another_lms_identity_under_a_collected_id_is_refused_by_name_and_escaped(tmp_path, first, second, identity,
                                                                                   shown_as):
    """red-b26 X35-b26-1: Canvas's anonymous ids differ in case (`anon_Q9w3e`, `anon_q9w3e`: one id, `anon_q9w3e`), and
    a Blackboard username may hold a character a terminal acts on, which the id drops: the later download's upload
    is refused for that student alone, in one line that names the identity collected, escaped; the folder stays, and
    collected.json keeps the first identity."""
    root = course(tmp_path)
    lms_zip(root, {first: b'{"first": 1}', "bob_2_modules_and_sgd.ipynb": b"{}"})
    assert collect(root) == []
    (archive_dir(root) / "submissions.zip").unlink()
    lms_zip(root, {second: b'{"second": 1}', "bob_2_modules_and_sgd.ipynb": b'{"bob": 2}'}, when=(2026, 11, 21, 9, 0, 0))
    lines = collect(root)
    student = next(s for s in submitted(root) if s != "bob")
    assert submitted(root) == {student: b'{"first": 1}', "bob": b'{"bob": 2}'}, lines
    assert len(lines) == 1 and f"identity {shown_as}, whose id is also {student}" in refusal(lines, student), lines
    assert not any(ch < " " for ch in lines[0]), lines
    record = json.loads((root / "downloaded" / ASSIGNMENT.name / "collected.json").read_text())
    assert record[student]["lms_identity"] == identity, record


def test_one_lms_number_is_one_user_whatever_its_name_is_spelled_as(tmp_path):
    """red-b26 X35-b26-1's fix compares the identity as written, but one LMS number is one user: a Moodle student whose
    name the LMS spells otherwise in a later download (`Jöhn Smith` then `John Smith`, both `johnsmith_12345`) is
    collected as before."""
    root = course(tmp_path)
    lms_zip(root, {"Jöhn Smith_12345_assignsubmission_file_modules_and_sgd.ipynb": b'{"first": 1}'})
    assert collect(root) == []
    (archive_dir(root) / "submissions.zip").unlink()
    lms_zip(root, {"John Smith_12345_assignsubmission_file_modules_and_sgd.ipynb": b'{"second": 1}'},
            when=(2026, 11, 21, 9, 0, 0))
    assert collect(root) == []
    assert submitted(root) == {"johnsmith_12345": b'{"second": 1}'}


def test_an_id_another_assignment_collected_for_another_lms_identity_is_refused(tmp_path):
    """red-b26 X35-b26-1, across assignments: an id is one gradebook student in every assignment, so ann.lee collected
    for one assignment and annlee for the next would be one student, `annlee`, with no line. The other assignment's
    record is written as its collection writes it (the test course has one assignment); this download's annlee is
    refused by name, and no folder is made for her."""
    root = course(tmp_path)
    other = root / "downloaded" / "ps0" / "collected.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({"annlee": {"lms_id": "", "lms_identity": "ann.lee", NOTEBOOK: "0" * 64},
                                 "bob": {"lms_id": "", "lms_identity": "bob", NOTEBOOK: "0" * 64}}))
    lms_zip(root, {f"ps1_annlee_attempt_2026-11-21-10-00-00_{NOTEBOOK}": b'{"annlee": 1}',
                   f"ps1_bob_attempt_2026-11-21-10-00-00_{NOTEBOOK}": b'{"bob": 1}'})
    lines = collect(root)
    assert submitted(root) == {"bob": b'{"bob": 1}'}, lines
    assert "submitted/annlee/ps0/ was collected for the LMS identity ann.lee" in refusal(lines, "annlee"), lines
    assert len(lines) == 1, lines
