"""Hand grades (a manual score, an override of an autograded part, extra credit) are never kept silently on an answer
that changed, and never undone: grading again flags them for review (SaveAutoGradesAtOnce, from the checksums
FindGradingNotes takes of the notebook as submitted: autograder/classroom/ledger.py) and leaves every score as the
instructor gave it.

Each student is graded by nbgrader's Autograde with the kit's steps, as `make grade` runs it, the hidden suites
replaced by a fixed outcome (test_exporters.FixedOutcome): the answers are under test, not the checks. The term as an
instructor lives it, through `make grade`, is tests/test_term.py's.
"""
from __future__ import annotations

import base64
import copy
import json
import re
import struct
import zlib
from dataclasses import asdict
from pathlib import Path

import nbformat
import pytest
from nbgrader.coursedir import CourseDirectory
from test_exporters import autograde
from test_formgrader_browser import formgrade_html
from test_lifecycle import gradebook

from autograder.assignment import find_assignment
from autograder.classroom import grade_students, ledger
from autograder.classroom.changes import Plan, plan_class
from autograder.classroom.class_run import ClassRun
from autograder.nbgrader_glue.formgrader_saves import save_grade, shown_answers
from autograder.nbgrader_glue.preprocessors import save_auto_grades_at_once
from autograder.nbgrader_glue.preprocessors.grading_notes import ANSWERS_KEY
from autograder.nbgrader_glue.preprocessors.run_hidden_suites import report_path
from autograder.report import Report
from autograder.settings import GraderSettings, load_config
from conftest import ASSIGNMENT, NOTEBOOK, course_copy, generate_gradebook, solution_notebook, write_notebook

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's session noise, as make grade

STEM = NOTEBOOK.removesuffix(".ipynb")
WRITTEN = ("answer_zeroing", "answer_outside_graph", "answer_shared_weight")


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course copy whose gradebook knows the assignment; each test grades students of its own."""
    return generate_gradebook(course_copy(tmp_path_factory.mktemp("hand_grades") / "course"))


def submit_and_grade(course: Path, student: str, notebook: dict) -> None:
    write_notebook(notebook, course / "submitted" / student / ASSIGNMENT.name / NOTEBOOK)
    result = autograde(course, student, load_config(course).Autograde.exporter_class)
    assert result["success"], result.get("error")


def hand_grade(course: Path, student: str, names, manual: float | None = 1.5, extra: float | None = None) -> None:
    """The formgrader's work: each grade scored (or given extra credit) and so no longer flagged."""
    with gradebook(course) as gb:
        for name in names:
            grade = gb.find_grade(name, STEM, ASSIGNMENT.name, student)
            grade.manual_score, grade.extra_credit, grade.needs_manual_grade = manual, extra, False
        gb.db.commit()


def grades(course: Path, student: str, names) -> dict[str, tuple[float | None, float | None, bool]]:
    """Each grade's (manual score, extra credit, flagged for review)."""
    with gradebook(course) as gb:
        return {name: (grade.manual_score, grade.extra_credit, bool(grade.needs_manual_grade)) for name in names
                for grade in [gb.find_grade(name, STEM, ASSIGNMENT.name, student)]}


def cell(notebook: dict, grade_id: str) -> dict:
    return next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def insert_after(notebook: dict, grade_id: str, new_cell: dict) -> dict:
    notebook["cells"].insert(notebook["cells"].index(cell(notebook, grade_id)) + 1, new_cell)
    return new_cell


def png(red: int, green: int, blue: int) -> str:
    """A 1x1 PNG of one colour, base64 (as Jupyter attaches a pasted picture)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    image = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes([0, red, green, blue])))
    return base64.b64encode(image + chunk(b"IEND", b"")).decode()


def graded_then_resubmitted(course: Path, student: str, before: dict, after: dict, names, **given) -> dict:
    """`before` graded and hand graded, graded again as it is (nothing to review), then `after` graded: the grades."""
    submit_and_grade(course, student, before)
    hand_grade(course, student, names, **given)
    submit_and_grade(course, student, before)
    assert not any(flag for *_, flag in grades(course, student, names).values()), "the answers graded, as graded"
    submit_and_grade(course, student, after)
    return grades(course, student, names)


def test_a_swapped_picture_in_a_written_answer_flags_its_hand_grade(course):
    before = solution_notebook()
    answer = cell(before, "answer_zeroing")
    answer["source"] = "The gradients add up, as the plot shows: ![loss](attachment:loss.png)"
    answer["attachments"] = {"loss.png": {"image/png": png(255, 0, 0)}}
    after = copy.deepcopy(before)
    cell(after, "answer_zeroing")["attachments"] = {"loss.png": {"image/png": png(0, 0, 255)}}  # same text
    assert graded_then_resubmitted(course, "pia", before, after, WRITTEN) == {
        "answer_zeroing": (1.5, None, True), "answer_outside_graph": (1.5, None, False),
        "answer_shared_weight": (1.5, None, False)}


@pytest.mark.parametrize("defined_in", ["a cell the student added", "another written answer"])
def test_a_changed_mathjax_macro_flags_the_written_answer_that_uses_it(course, defined_in):
    """MathJax's definitions hold for the whole page the formgrader shows: a macro changed anywhere the student
    writes changes how an answer that uses it reads."""
    student = "macro-added" if defined_in == "a cell the student added" else "macro-answer"
    before = solution_notebook()
    cell(before, "answer_zeroing")["source"] = "Each backward pass adds to it: $\\grad L$ accumulates."
    macro = "Notation: $\\newcommand{\\grad}{\\nabla}$"
    if defined_in == "a cell the student added":
        defining = insert_after(before, "answer_zeroing", nbformat.v4.new_markdown_cell(macro))
    else:
        defining = cell(before, "answer_outside_graph")
        defining["source"] += "\n\n" + macro
    after = copy.deepcopy(before)
    after["cells"][before["cells"].index(defining)]["source"] = defining["source"].replace("\\nabla", "\\Delta")
    regraded = graded_then_resubmitted(course, student, before, after, WRITTEN)
    assert regraded["answer_zeroing"] == (1.5, None, True), regraded


@pytest.mark.parametrize("refers", ["\\eqref{main}", "&#92;eqref{main}"])
def test_an_answer_that_refers_to_an_equation_is_flagged_when_the_numbering_changes_in_another(course, refers):
    """MathJax numbers equations and keeps labels for the whole page (autoNumber "AMS"): another answer's equations
    decide what an answer's \\eqref reads, spelled with a character reference too (markdown decodes `&#92;` before
    MathJax reads the page: red-q3, pass 17). An answer without numbers or references is not flagged."""
    before = solution_notebook()
    cell(before, "answer_zeroing")["source"] = "$$\\begin{equation}\\label{main} g = g_1 + g_2\\end{equation}$$"
    cell(before, "answer_outside_graph")["source"] = f"The update uses the gradient of {refers} only."
    after = copy.deepcopy(before)
    cell(after, "answer_zeroing")["source"] = "$$\\begin{equation} 0 = 1 \\end{equation}$$\n\n" + \
        cell(before, "answer_zeroing")["source"]
    assert graded_then_resubmitted(course, f"noa-{len(refers)}", before, after, WRITTEN) == {
        "answer_zeroing": (1.5, None, True), "answer_outside_graph": (1.5, None, True),
        "answer_shared_weight": (1.5, None, False)}


def test_two_different_answers_longer_than_128_kb_flag_the_hand_grade(course):
    """The kit replaces a markdown cell past SanitizeMarkdown.max_cell_kb with a note: the answer is still the
    student's, and one that differs past its first 128 KB is another answer."""
    before, after = solution_notebook(), solution_notebook()
    long = "Gradients add up. " * 10000  # 180 KB
    cell(before, "answer_zeroing")["source"] = long + "So they are zeroed."
    cell(after, "answer_zeroing")["source"] = long + "So they are never zeroed."
    regraded = graded_then_resubmitted(course, "lou", before, after, WRITTEN)
    assert regraded["answer_zeroing"] == (1.5, None, True), regraded


def test_an_override_of_an_autograded_part_is_flagged_when_a_code_cell_the_student_added_changes(course):
    """The part's checks ran the student's added cells too (they run where they stand)."""
    before = solution_notebook()
    added = insert_after(before, "linear", nbformat.v4.new_code_cell("SCALE = 1.0"))
    after = copy.deepcopy(before)
    after["cells"][before["cells"].index(added)]["source"] = "SCALE = 2.0"
    regraded = graded_then_resubmitted(course, "max", before, after, ["test_forward"], manual=2.0)
    assert regraded == {"test_forward": (2.0, None, True)}


def test_an_override_of_an_autograded_part_is_flagged_when_the_solution_cells_grade_id_moves(course):
    """Which code cell holds a solution's grade id is part of the answer: the checks run that cell's text as the
    solution (and the release's stub in its place for the other parts), and the formgrader shows it as the answer.
    Moving the id to another cell, every text left as it was, is another answer."""
    before = solution_notebook()
    added = insert_after(before, "exercise_count", nbformat.v4.new_code_cell("count_64_32_10 = 0"))
    after = copy.deepcopy(before)
    moved = after["cells"][before["cells"].index(added)]
    solution = cell(after, "exercise_count")
    moved["metadata"]["nbgrader"] = solution["metadata"].pop("nbgrader")
    regraded = graded_then_resubmitted(course, "ned", before, after, ["test_exercise_count"], manual=1.0)
    assert regraded == {"test_exercise_count": (1.0, None, True)}


def test_extra_credit_alone_is_a_hand_grade(course):
    """Extra credit on an autograded part, no manual score: code that changed flags it, the credit kept."""
    before, after = solution_notebook(), solution_notebook()
    cell(after, "sgd")["source"] += "\n# tidied after the deadline\n"
    regraded = graded_then_resubmitted(course, "eve", before, after, ["test_step"], manual=None, extra=1.0)
    assert regraded == {"test_step": (None, 1.0, True)}


def test_a_hand_grade_entered_or_cleared_while_the_class_is_graded_stays_as_the_instructor_left_it(course, monkeypatch):
    """Grading writes no manual score, extra credit or comment (nbgrader 0.9.6's autograde and SaveAutoGradesAtOnce
    write auto scores, auto comments and the review flag only), so what the instructor does in the formgrader while
    `make grade` runs is the newer word: a score entered then stays, and an override cleared then (to give the
    autograded score back) stays cleared (red-r2, pass 16: it was put back, flagged)."""
    student = "ivy"
    submit_and_grade(course, student, solution_notebook())
    hand_grade(course, student, WRITTEN)
    hand_grade(course, student, ["test_forward"], manual=0.5)  # an override of an autograded part

    def graded_meanwhile(run, students, autograde, close):
        hand_grade(course, student, ["answer_zeroing"], manual=2.0)  # the formgrader, while the class is graded
        hand_grade(course, student, ["test_forward"], manual=None)  # the override cleared: an empty score box
        submit_and_grade(course, student, solution_notebook())
        Report([]).save(report_path(run.coursedir, student, ASSIGNMENT.name))  # as RunHiddenSuites writes it
        return {student: None}

    monkeypatch.setattr(grade_students, "_autograde_all", graded_meanwhile)
    monkeypatch.setattr(grade_students, "prepare_class", lambda assignment, settings: None)
    monkeypatch.setattr(grade_students, "autograder_for", lambda *args: None)
    config = load_config(course)
    run = ClassRun.open(find_assignment(course, ASSIGNMENT.name), GraderSettings(config=config, jobs=1))
    assert grade_students.grade_students(run, [student], "submitted/").with_grades() == [student]
    assert grades(course, student, [*WRITTEN, "test_forward"]) == {
        "answer_zeroing": (2.0, None, False), "answer_outside_graph": (1.5, None, False),
        "answer_shared_weight": (1.5, None, False), "test_forward": (None, None, False)}


def test_a_submission_cannot_bring_the_checksums_of_the_answers_graded(course):
    student, before = "kim", solution_notebook()
    submit_and_grade(course, student, before)
    hand_grade(course, student, WRITTEN)
    with gradebook(course) as gb:
        graded = {name: answer["seen"] for name, answer in ledger.read_answers(gb.db, ASSIGNMENT.name, student)[STEM].items()}
    after = solution_notebook()
    cell(after, "answer_zeroing")["source"] = "Another answer, sent with the checksums of the one graded."
    after["metadata"][ANSWERS_KEY] = graded
    submit_and_grade(course, student, after)
    assert grades(course, student, WRITTEN)["answer_zeroing"] == (1.5, None, True)


def older_kits_answers(nb) -> dict[str, str]:
    """What the kit before ANSWERS_FORMAT 2 recorded: the checksums of the notebook as autograded."""
    del nb.metadata[ANSWERS_KEY]
    return ledger.answer_checksums_v1(nb)


def graded_by_the_older_kit(course: Path, student: str, notebook: dict, monkeypatch) -> None:
    with monkeypatch.context() as older_kit:
        older_kit.setattr(save_auto_grades_at_once, "submitted_answers", older_kits_answers)
        submit_and_grade(course, student, notebook)


def plan(course: Path, student: str) -> Plan:
    """What `make grade` would do with the student, whose report.json says they were graded."""
    config = load_config(course)
    coursedir, settings = CourseDirectory(config=config), GraderSettings(config=config)
    Report([]).save(report_path(coursedir, student, ASSIGNMENT.name))
    return plan_class(find_assignment(course, ASSIGNMENT.name), settings, coursedir, course / "submitted",
                      [student], force=False)


def record_inputs_of(course: Path, student: str, older_kit: bool = False) -> None:
    """The student's inputs in the ledger as `make grade` records them after grading, or as the older kit did."""
    recorded = asdict(plan(course, student).inputs[student])
    if older_kit:
        del recorded["answers_format"]
    with gradebook(course) as gb:
        ledger.write(gb.db, ASSIGNMENT.name, student, "inputs", json.dumps(recorded))
        gb.db.commit()


def test_an_upgrade_grades_every_student_again_and_keeps_their_hand_grades(course, monkeypatch):
    """A grade recorded by the kit before ANSWERS_FORMAT 2 (no format in its inputs, the answers' checksums of the
    notebook as autograded) is graded again by the next `make grade`, which leaves every hand grade of an unchanged
    answer unflagged; a changed answer is flagged after that, as always."""
    student = "ole"
    graded_by_the_older_kit(course, student, solution_notebook(), monkeypatch)
    hand_grade(course, student, WRITTEN)
    record_inputs_of(course, student)
    assert plan(course, student).unchanged == [student], "recorded by this kit: left alone"
    record_inputs_of(course, student, older_kit=True)
    assert plan(course, student).fresh == [student], "graded again: its answers' checksums are taken anew"

    submit_and_grade(course, student, solution_notebook())
    assert grades(course, student, WRITTEN) == {name: (1.5, None, False) for name in WRITTEN}
    record_inputs_of(course, student)
    changed = solution_notebook()
    cell(changed, "answer_shared_weight")["source"] = "Listed once: parameters() drops the second copy."
    submit_and_grade(course, student, changed)
    assert grades(course, student, WRITTEN) == {"answer_zeroing": (1.5, None, False),
                                                "answer_outside_graph": (1.5, None, False),
                                                "answer_shared_weight": (1.5, None, True)}


def test_an_older_kits_review_is_carried_over_on_the_first_grading_after_the_upgrade_only(course, monkeypatch):
    """A answered and hand graded, B sent (flagged), the kit upgraded (B still flagged), then A sent again with its
    picture swapped: what the older kit recorded of A cannot tell the picture, so it is never read again."""
    student, answer = "ula", solution_notebook()
    cell(answer, "answer_zeroing")["source"] = "As the plot shows: ![loss](attachment:loss.png)"
    cell(answer, "answer_zeroing")["attachments"] = {"loss.png": {"image/png": png(255, 0, 0)}}
    graded_by_the_older_kit(course, student, answer, monkeypatch)
    hand_grade(course, student, WRITTEN)
    other = copy.deepcopy(answer)
    cell(other, "answer_zeroing")["source"] = "I changed my mind."
    graded_by_the_older_kit(course, student, other, monkeypatch)
    record_inputs_of(course, student, older_kit=True)
    submit_and_grade(course, student, other)  # the first grading after the upgrade
    assert grades(course, student, WRITTEN)["answer_zeroing"] == (1.5, None, True)
    record_inputs_of(course, student)
    swapped = copy.deepcopy(answer)
    cell(swapped, "answer_zeroing")["attachments"] = {"loss.png": {"image/png": png(0, 0, 255)}}
    submit_and_grade(course, student, swapped)
    assert grades(course, student, WRITTEN)["answer_zeroing"] == (1.5, None, True)


def answers_on_the_page(course: Path, student: str) -> str:
    """What the student's grading page, as the kit renders it now, sends with each score saved (SHOWN_HEADER)."""
    page = formgrade_html(course, student)
    return json.dumps(json.loads(re.search(r"var kit_answers_shown = (.*);\n", page).group(1)))


def save_from_the_page(course: Path, student: str, name: str, page: str, manual: float | None,
                       extra: float | None = None) -> bool:
    """The formgrader's save of a score and extra credit from a page (formgrader_saves.put; the page's grade model
    sends both): whether it was flagged as given on an answer no longer graded."""
    with gradebook(course) as gb:
        grade_id = gb.find_grade(name, STEM, ASSIGNMENT.name, student).id
        return save_grade(gb, grade_id, {"manual_score": manual, "extra_credit": extra}, shown_answers(page))[1]


def test_a_score_given_on_a_page_make_grade_regraded_meanwhile_is_flagged(course):
    """red-r2 (pass 16). The formgrader shows the autograded notebook as it was when the page was opened; the
    instructor's score is saved later. When `make grade` regrades a resubmission in between (docs/instructors.md:
    "You can keep grading in the formgrader while make grade runs"), the score was given on the answer the page
    showed, not on the resubmitted one, and must be flagged for review ("flags a hand grade exactly when its answer
    differs from the one you graded ... shown when you gave the grade"): the page carries the answers it shows and
    the save checks them (autograder/nbgrader_glue/formgrader_saves.py). A page opened again can confirm it."""
    shown = solution_notebook()
    submit_and_grade(course, "red_r2_vic", shown)
    page = answers_on_the_page(course, "red_r2_vic")  # the page the instructor opens shows this answer
    resubmitted = copy.deepcopy(shown)
    cell(resubmitted, "answer_zeroing")["source"] = "I do not know."
    submit_and_grade(course, "red_r2_vic", resubmitted)  # make grade, while the page is open
    assert save_from_the_page(course, "red_r2_vic", "answer_zeroing", page, 2.0), "saved, said to be flagged"
    submit_and_grade(course, "red_r2_vic", resubmitted)  # the next make grade (FORCE=1)
    assert grades(course, "red_r2_vic", ["answer_zeroing"])["answer_zeroing"] == (2.0, None, True), \
        "a score for another answer, unflagged"
    assert save_from_the_page(course, "red_r2_vic", "answer_zeroing", page, 2.0), "the stale page cannot clear it"
    assert grades(course, "red_r2_vic", ["answer_zeroing"])["answer_zeroing"] == (2.0, None, True)
    reloaded = answers_on_the_page(course, "red_r2_vic")
    assert not save_from_the_page(course, "red_r2_vic", "answer_zeroing", reloaded, 2.0)
    submit_and_grade(course, "red_r2_vic", resubmitted)
    assert grades(course, "red_r2_vic", ["answer_zeroing"])["answer_zeroing"] == (2.0, None, False), "reviewed"


@pytest.mark.parametrize("saved", [(0.0, None), (1.5, 0.5)], ids=["a score", "extra credit"])
def test_a_grade_saved_from_a_stale_page_stands_on_the_answer_the_page_showed(course, saved):
    """red-v6 V3 (pass 19). A score typed on a page showing answer A, saved after `make grade` graded B, is kept
    flagged (red-r2), but the ledger still said the grade stood on Z, the answer reviewed before A: when the student
    sent Z back, the score meant for A stood on Z, unflagged. The save records A as the answer the grade stands on:
    flagged on any other, Z and B too, and unflagged only when A itself comes back."""
    student = f"red_v6_zed_{saved[1] is not None}"
    zed = solution_notebook()
    submit_and_grade(course, student, zed)
    hand_grade(course, student, ["answer_zeroing"], 1.5)  # reviewed on Z
    answer_a, answer_b = copy.deepcopy(zed), copy.deepcopy(zed)
    cell(answer_a, "answer_zeroing")["source"] = "Answer A."
    cell(answer_b, "answer_zeroing")["source"] = "Answer B."
    submit_and_grade(course, student, answer_a)
    assert grades(course, student, ["answer_zeroing"])["answer_zeroing"] == (1.5, None, True)
    page = answers_on_the_page(course, student)  # the instructor opens A's page
    submit_and_grade(course, student, answer_b)  # make grade, while the page is open
    assert save_from_the_page(course, student, "answer_zeroing", page, *saved), "saved, flagged"
    for sent in (zed, answer_b):  # the student sends Z back, or B again
        submit_and_grade(course, student, sent)
        assert grades(course, student, ["answer_zeroing"])["answer_zeroing"] == (*saved, True), \
            "the grade typed for answer A stands unflagged on another answer"
    submit_and_grade(course, student, answer_a)
    assert grades(course, student, ["answer_zeroing"])["answer_zeroing"] == (*saved, False), "A: the answer graded"


def test_an_override_flagged_on_changed_code_keeps_the_total_out_of_the_exports(course):
    """red-r2 (pass 16). A written answer's hand grade flagged for review leaves grades.csv's total and the Canvas
    column blank until it is reviewed (outputs/export.grade_rows: `complete`). An override of an autograded part
    flagged because the code changed is a hand grade on an answer no one has seen as much: the exports must not
    carry it as a final total either."""
    from autograder.outputs.export import grade_rows
    from autograder.outputs.lms import canvas_rows

    before, after = solution_notebook(), solution_notebook()
    cell(after, "sgd")["source"] += "\n# rewritten after the override\n"
    regraded = graded_then_resubmitted(course, "red_r2_wes", before, after, ["test_step"], manual=0.0)
    assert regraded == {"test_step": (0.0, None, True)}  # flagged for review, as the kit means
    hand_grade(course, "red_r2_wes", WRITTEN)  # every written answer graded: nothing else pending
    with gradebook(course) as gb:
        _, rows = grade_rows(gb, [ASSIGNMENT.name], ["red_r2_wes"])
    assert rows[0]["score"] == "", f"exported as final: {rows[0]['score']} (test_step {rows[0]['test_step']})"
    assert canvas_rows(rows, ASSIGNMENT.name).pending == ["red_r2_wes"], "make grades-lms names the student"
    # canvas_partial: the override of 0, given to the code before, is no point of the code now (red-t5, pass 18)
    # canvas_partial: a flagged override, given to the code before, counts as the part's autograded score alone
    # (red-t5, pass 18: the override went to Canvas as points of the code now)
    with gradebook(course) as gb:
        override = gb.find_grade("test_step", STEM, ASSIGNMENT.name, "red_r2_wes")
        override.manual_score, now = 2.5, override.auto_score or 0.0  # as if the override had been 2.5, flagged
        gb.db.commit()
        _, rows = grade_rows(gb, [ASSIGNMENT.name], ["red_r2_wes"])
        nbgrader_score = gb.find_submission(ASSIGNMENT.name, "red_r2_wes").score  # counts the flagged 2.5
    partial = canvas_rows(rows, ASSIGNMENT.name, partial=True).rows[-1][-1]
    assert float(partial) == nbgrader_score - 2.5 + now, (partial, nbgrader_score, now)
    # grades.csv's raw_score is the same reckoning (export.so_far, red-a17 X26-a17-5)
    assert float(rows[0]["raw_score"]) == float(partial), (rows[0]["raw_score"], partial)


@pytest.mark.parametrize("spelled", ["&#36;&#92;newcommand{&#92;grad}{&#92;nabla}&#36;",
                                     "&#92;(&bsol;def&bsol;grad{&bsol;nabla}&#92;)"])
def test_a_macro_written_with_character_references_flags_the_written_answer_that_uses_it(course, spelled):
    """Markdown turns `&#36;` and `&#92;` into `$` and a backslash before MathJax reads the page: a definition
    spelled with character references is a definition on the page all the same, for the answers after it
    (red-q3, pass 17: a Chromium run showed the later answer's `$\\grad L$` typeset by the earlier one's macro)."""
    student = "macro-ref-" + str(len(spelled))
    before = solution_notebook()
    cell(before, "answer_zeroing")["source"] += "\n\nNotation: " + spelled
    cell(before, "answer_outside_graph")["source"] = "Each backward pass adds to it: $\\grad L$ accumulates."
    after = copy.deepcopy(before)
    cell(after, "answer_zeroing")["source"] = cell(before, "answer_zeroing")["source"].replace("nabla", "Delta")
    regraded = graded_then_resubmitted(course, student, before, after, WRITTEN)
    assert regraded["answer_zeroing"][2], "its own text changed"
    assert regraded["answer_outside_graph"] == (1.5, None, True), regraded


def test_a_written_answer_is_flagged_when_a_code_cell_the_student_added_beside_it_changes(course):
    """The grading page shows the student's own code cells among the answers (labelled as added), so a student may
    write an answer there ("my answer is in the cell below"): a change of that cell changes what the instructor
    graded (red-q3, pass 17: only the overrides of autograded parts were flagged)."""
    before = solution_notebook()
    cell(before, "answer_zeroing")["source"] = "My answer is in the cell below."
    insert_after(before, "answer_zeroing", nbformat.v4.new_code_cell(
        "# Answer: the gradients add up over the backward passes, so zero_grad() must clear them each step."))
    after = copy.deepcopy(before)
    after["cells"][after["cells"].index(cell(after, "answer_zeroing")) + 1]["source"] = "# Answer: I do not know."
    regraded = graded_then_resubmitted(course, "code-answer", before, after, WRITTEN)
    assert regraded["answer_zeroing"] == (1.5, None, True), regraded


def test_a_written_answer_is_flagged_when_a_raw_cell_beside_it_comes_onto_the_pages(course):
    """The pages show a raw cell of no raw mimetype or text/html, and leave out any other (nbconvert's rawcell
    block): the same text given text/html in place of text/latex appears beside the answer graded
    (red-q3, pass 17: ledger._shown reads a cell's type, text and pictures, not its raw_mimetype)."""
    before = solution_notebook()
    added = insert_after(before, "answer_zeroing", nbformat.v4.new_raw_cell(
        "<p>Correction to my answer above: the gradients are overwritten, not added.</p>",
        metadata={"raw_mimetype": "text/latex"}))
    after = copy.deepcopy(before)
    after["cells"][before["cells"].index(added)]["metadata"]["raw_mimetype"] = "text/html"
    regraded = graded_then_resubmitted(course, "raw-shown", before, after, WRITTEN)
    assert regraded["answer_zeroing"] == (1.5, None, True), regraded


@pytest.mark.parametrize("numbered_before, numbered_after, referring", [
    # an HTML comment inside the control words, which the sanitiser's cleaning removes, joining `\tag` and `\label`
    ("\\begin\\{equation\\} g \\ta<!---->g\\{the gradients add up\\} \\la<!---->bel\\{main\\} \\end\\{equation\\}",
     "\\begin\\{equation\\} g \\ta<!---->g\\{I do not know\\} \\la<!---->bel\\{main\\} \\end\\{equation\\}",
     "My answer: \\eqref{main}."),
    # markdown's escaped braces, which markdown turns into `\begin{equation}` outside `$`
    ("", "\\begin\\{equation\\} 0 = 1 \\end\\{equation\\}",
     "$$\\begin{equation}\\label{own} g = g_1 + g_2\\end{equation}$$ so \\eqref{own} holds."),
], ids=["comment-in-control-word", "escaped-braces"])
def test_numbering_spelled_so_that_markdown_or_the_sanitiser_makes_it_flags_the_answer_that_refers(
        course, numbered_before, numbered_after, referring):
    """What MathJax numbers, tags and labels is in the page's text, after markdown (escaped braces become braces)
    and the sanitiser's cleaning (a comment `<!---->` inside `\\la<!---->bel` goes, leaving `\\label`): another
    answer numbered or tagged so decides what an answer's \\eqref reads (red-q4, pass 18: Chromium showed "My answer:
    (the gradients add up)" for the referring answer, the tag's text of the other one)."""
    student = "hidden-numbers-" + str(len(numbered_before))
    before = solution_notebook()
    cell(before, "answer_zeroing")["source"] = "Each use adds its part.\n\n" + numbered_before
    cell(before, "answer_outside_graph")["source"] = referring
    after = copy.deepcopy(before)
    cell(after, "answer_zeroing")["source"] = "Each use adds its part.\n\n" + numbered_after
    regraded = graded_then_resubmitted(course, student, before, after, WRITTEN)
    assert regraded["answer_zeroing"][2], "its own text changed"
    assert regraded["answer_outside_graph"] == (1.5, None, True), regraded


def test_a_reference_spelled_with_a_tag_the_sanitiser_strips_flags_the_answer_that_refers(course):
    """The sanitiser's cleaning removes a tag outside its allowlist and keeps its text (`\\eq<x></x>ref` is `\\eqref` on
    the page), as it removes a comment: the answer then reads the other answer's tag, and a change of that tag changes
    what the referring answer shows (red-s5, pass 18: a variation of red-q4's comment inside a control word)."""
    before = solution_notebook()
    cell(before, "answer_zeroing")["source"] = ("Each use adds its part.\n\n$$\\begin{equation} g \\tag{the gradients add"
                                                " up} \\label{main} \\end{equation}$$")
    cell(before, "answer_outside_graph")["source"] = "My answer: \\eq<x></x>ref{main}."
    after = copy.deepcopy(before)
    cell(after, "answer_zeroing")["source"] = cell(before, "answer_zeroing")["source"].replace(
        "the gradients add up", "I do not know")
    regraded = graded_then_resubmitted(course, "stripped-tag-reference", before, after, WRITTEN)
    assert regraded["answer_zeroing"][2], "its own text changed"
    assert regraded["answer_outside_graph"] == (1.5, None, True), regraded
