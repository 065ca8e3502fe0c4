"""What produced each grade, kept beside it in gradebook.db, so that `make grade` regrades only what changed.

nbgrader's gradebook holds scores, not their causes. The ledger is one table of the kit's in the same database
(`autograder_ledger`, made when missing), one row per student and assignment:

* `inputs`: the fingerprint of what the grade is a function of (`Inputs`): the student's submitted folder as
  the intake sees it (`folder_fingerprint`: what it looks at and reads, within its caps), with the intake's rules
  it was read under (so that a change of those rules is told from a change of the folder), the hidden suites,
  the reference (source, release and solution notebooks and modules), and the settings that can change a
  score (limits, budgets, the late policy). Written by `make grade` after the student is
  graded, or not graded for a reason of the student's own file (that reason is in its report.json); and, for a
  student left unchanged whose row holds other intake rules than today's (or none), with today's
  (changes.Plan.rules_to_record).
* `answers`: for each grade cell, a checksum of its answer in the notebook as submitted (`answer_checksums`: a
  written answer's cell with its pictures and the cells around it that show with it; for an autograded part,
  all of the student's code) as last autograded, so as the formgrader shows it (`seen`; none after a submission
  not graded, or without the cell), and, for a hand grade (a manual score or extra credit), of the answer the
  instructor gave or last confirmed it on (`reviewed`: for a save from a formgrader page opened before the answer
  last graded, the one that page showed: given_on). Written with the grades, in the same transaction
  (SaveAutoGradesAtOnce, not_graded; given_on with the formgrader's save of the flag): a hand grade is flagged for review exactly when the answer differs from the
  one it was reviewed on. Never a score: the kit flags a hand grade, it never changes one.
* `page`: the fingerprint of the grades and comments the student's feedback page shows (`grades_fingerprint`),
  written when the page is: a page is written again only when its grades changed.

The rows travel with the grades they describe: a copy of gradebook.db carries them, `make reset-gradebook`
empties them with the rest, and nbgrader never reads them.
"""
from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import text

from ..intake.files import IntakeRules, Refused, survey
from ..intake.submitted_folders import submitted_lock
from ..nbgrader_glue.preprocessors.page_budget import typeset_text

TABLE = "autograder_ledger"
_SCHEMA = (f"CREATE TABLE IF NOT EXISTS {TABLE} (assignment VARCHAR(128) NOT NULL, student VARCHAR(128) NOT NULL, "
           "inputs TEXT, answers TEXT, page TEXT, PRIMARY KEY (assignment, student))")


@dataclass(frozen=True)
class Inputs:
    """The fingerprint of one grade's inputs: each a SHA-256, and the format of the answers' checksums recorded
    with it (ANSWERS_FORMAT: a grade recorded under another is graded again, so that its hand grades stand on
    checksums of this format before the student's next submission; SaveAutoGradesAtOnce carries them over)."""

    submission: str
    suites: str
    reference: str
    settings: str
    answers_format: str
    # The intake's rules `submission` was read under (GraderSettings' notebook_kb, submission_files,
    # submission_file_kb, submission_files_total_kb, submission_entries), so that the folder can be read again as it
    # was then (changes.folder_changed). None: not known in full (recorded by a kit before the field, or before one
    # of today's rules), so the folder cannot be read again as it was.
    intake: IntakeRules | None = None
    # The due date in force and the late policy alone (also within `settings`): a grade recorded under today's may have
    # its late penalty worked out again from new hand grades without a preview (changes.graded_under_todays_late_policy),
    # whatever else changed. None: not recorded (a kit before the field), so not known to be today's.
    late: str | None = None

    @property
    def reading(self) -> str:
        """How the kit that recorded `submission` read folders (IntakeRules.reading): a row without its rules was
        recorded by a kit older than every reading that records them."""
        return self.intake.reading if self.intake is not None else FIRST_READING

    def course_changed(self, other: Inputs) -> list[str]:
        """Which of the course's inputs (suites, reference, settings) differ from `other`'s, for a folder that did
        not change (changes.folder_changed): its fingerprints differ then only when the intake's rules read it
        otherwise, a change of settings."""
        changed = {name: getattr(self, name) != getattr(other, name) for name in ("suites", "reference", "settings")}
        changed["settings"] |= self.submission != other.submission
        return [name for name, differs in changed.items() if differs]

    @classmethod
    def from_json(cls, data: str | None) -> Inputs | None:
        try:
            recorded = {"answers_format": "1", **json.loads(data)} if data else None  # 1: before the field
            if recorded and recorded.get("intake") is not None:
                recorded["intake"] = _recorded_rules(recorded["intake"])
            return cls(**recorded) if recorded else None
        except (TypeError, ValueError, KeyError):  # written by another version: graded again, as if unknown
            return None


FIRST_READING = "1"  # IntakeRules.reading of the kits before the field


def _recorded_rules(rules: dict) -> IntakeRules | None:
    """The intake's rules as a grade recorded them; None when they are not today's set of rules (a kit without one
    of them read folders without it, today's default is not what it did; one with a rule this kit lacks read them
    otherwise too). Rules without `reading`, otherwise whole, were recorded under the first reading."""
    if set(rules) | {"reading"} != {rule.name for rule in fields(IntakeRules)}:
        return None
    return IntakeRules(**{"reading": FIRST_READING, **rules, "extra_files": tuple(rules["extra_files"])})


def _digest(chunks: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(len(chunk).to_bytes(8, "big") + chunk)
    return digest.hexdigest()


def folder_fingerprint(top: Path, parts: tuple[str, ...], rules: IntakeRules) -> str:
    """A student's folder `top`/`parts` as the intake sees it under `rules` (intake.files.survey): the name and
    kind of each entry it looks at, whether it looked at them all, and what it reads of each file it reads, within
    its caps. Nothing else of the folder can change a grade, so nothing else is read."""
    try:
        with submitted_lock(top):  # no collection writes submitted/ while it is read
            seen = survey(top, parts, rules)
    except Refused as why:  # not a folder: the intake's reason, which stays as long as the folder does
        return _digest([f"refused: {why}".encode()])
    except OSError as error:  # it changes or vanishes while read: not a fingerprint any grade can match
        return f"unreadable: {error.strerror}"
    return _digest([f"complete: {seen.complete}".encode(),
                    *(f"{entry.path}\0{entry.kind}\0{seen.reads.get(entry.path, '')}".encode("utf-8", "surrogateescape")
                      for entry in seen.entries)])


def files_fingerprint(paths: Iterable[Path], root: Path) -> str:
    """The named files, by their path under `root` and their bytes (a missing one counts as missing)."""

    def chunks() -> Iterable[bytes]:
        for path in paths:
            yield str(path.relative_to(root) if path.is_relative_to(root) else path.name).encode()
            yield path.read_bytes() if path.is_file() else b"missing"

    return _digest(chunks())


def settings_fingerprint(values: dict[str, Any]) -> str:
    return _digest([json.dumps(values, sort_keys=True, default=str).encode()])


def grades_fingerprint(submission: Any) -> str:
    """What a feedback page shows of a gradebook submission: every grade, flag, comment and the penalty."""
    rows: list[Any] = [submission.timestamp, submission.late_submission_penalty]
    for notebook in sorted(submission.notebooks, key=lambda n: n.name):
        for grade in sorted(notebook.grades, key=lambda g: g.name):
            rows.append([notebook.name, grade.name, grade.auto_score, grade.manual_score, grade.extra_credit,
                         bool(grade.needs_manual_grade)])
        for comment in sorted(notebook.comments, key=lambda c: c.name):
            rows.append([notebook.name, comment.name, comment.auto_comment, comment.manual_comment])
    return settings_fingerprint({"grades": rows})


ANSWERS_FORMAT = "2"  # how answer_checksums reads a notebook (Inputs.answers_format); each checksum begins "2:"
# A TeX definition: MathJax keeps it for the whole page, so a written answer that makes one changes how the others show.
TEX_DEFINITION = re.compile(r"\\(?:(?:re|provide)?newcommand|(?:re)?newenvironment|[gex]?def|let|DeclareMathOperator"
                            r"|require)(?![A-Za-z])")
# What MathJax numbers or labels for the whole page (TeX-AMS, autoNumber "AMS"): a numbered environment, a tag, a
# label, a reference to one. A written answer holding one reads the numbers and labels of the others that do.
TEX_NUMBERING = re.compile(r"\\(?:label|tag|eqref|ref)(?![A-Za-z])|\\begin\s*\{\s*(?:equation|align|gather|multline"
                           r"|flalign|x?alignat|eqnarray)\s*\}")


def _grade_id(cell: Any) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader")
    grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
    return grade_id if isinstance(grade_id, str) else None


def _text(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _as_maths_reads(cell: Any) -> str:
    """A cell's text as MathJax may read it on the page, twice over: with character references decoded (`&#36;` is
    `$`, `&#92;` and `&bsol;` a backslash), and with HTML comments and tags gone too (the sanitiser removes them:
    `\\la<!---->bel` is `\\label`) and markdown's backslash escapes undone (`\\{` is a brace). A definition or label
    in either is taken as one: at least what the page holds."""
    decoded = html.unescape(_text(cell))
    # the tags the sanitiser strips keep their text: `\eq<x></x>ref` is `\eqref` on the page
    return decoded + "\n" + _MARKDOWN_ESCAPE.sub(r"\1", typeset_text(_without_comments(_text(cell))))


_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash before ASCII punctuation: that character


def _without_comments(text: str) -> str:
    """`text` without HTML comments (one left open runs to the end), in linear time."""
    kept, at = [], 0
    while (start := text.find("<!--", at)) >= 0:
        kept.append(text[at:start])
        end = text.find("-->", start + 4)
        at = len(text) if end < 0 else end + 3
    kept.append(text[at:])
    return "".join(kept)


def _shown(cell: Any) -> bytes:
    """A markdown or raw cell as a page shows it: its type, its text, the pictures attached to it and, where the cell
    has one, its raw mimetype (which decides whether the pages show a raw cell at all: nbconvert's rawcell block).
    The mimetype only when present, so that the checksum of every cell without one stays what it was."""
    shown = {"type": cell.get("cell_type"), "source": _text(cell), "attachments": cell.get("attachments")}
    metadata = cell.get("metadata")
    if isinstance(metadata, dict) and "raw_mimetype" in metadata:
        shown["raw_mimetype"] = metadata["raw_mimetype"]
    return json.dumps(shown, sort_keys=True, default=str).encode()


def answer_checksums(nb: Any, release: Any) -> dict[str, str]:
    """A checksum of each grade's answer in a notebook as submitted, before the kit restores, sanitizes or cuts any
    of it, for each grade cell of the `release` the notebook holds (its last copy, the one graded). A cell the
    student added, an earlier copy of a pasted cell and the release's prose (which nothing puts back) are the
    student's cells.

    * A written answer: its own cell, the student's markdown and raw cells, and the other written answers that
      define TeX macros (and, for an answer that numbers, labels or refers to an equation, those that do too), each
      with its pictures and raw mimetype, in the notebook's order: the formgrader shows them on one page, where
      MathJax's definitions, equation numbers and labels hold for every cell. A definition or label is looked for
      in the text as MathJax reads it (character references decoded). With them, the student's code cells beside
      the answer: those between the release's cells before and after it, which the grading page shows with the
      answer (labelled as added), where a student may write the answer ("my answer is in the cell below"). The
      student's code cells elsewhere count only for the autograded parts: a change of code there flags no
      written answer.
    * An autograded part: the code its checks run, in order: the solution cells (each with its grade id, so that
      the id moved to another cell counts) and the student's code cells, each given cell (put back as released)
      counted by its grade id, so that a cell moved past it counts too.
    """
    released = {grade_id: cell for cell in release.cells if (grade_id := _grade_id(cell))}
    graded = {grade_id: index for index, cell in enumerate(nb.cells) if (grade_id := _grade_id(cell)) in released}

    def written(grade_id: str) -> bool:
        return bool(released[grade_id].metadata.nbgrader.get("solution")) and released[grade_id].cell_type != "code"

    def students(index: int) -> bool:  # no grade id, or not the release's cell in the place graded
        grade_id = _grade_id(nb.cells[index])
        return grade_id is None or graded.get(grade_id) != index

    def beside(index: int) -> Iterable[int]:
        """The student's cells next to cell `index`, up to the release's cells on either side of it."""
        for step in (-1, 1):
            other = index + step
            while 0 <= other < len(nb.cells) and students(other):
                yield other
                other += step

    code: list[bytes] = []
    added_code: dict[int, bytes] = {}  # the student's code cells, by their place
    around: list[tuple[int, bytes]] = []  # what shows with every written answer
    numbering: list[tuple[int, bytes]] = []  # the written answers that number, label or refer to equations
    for index, cell in enumerate(nb.cells):
        grade_id = _grade_id(cell)
        if grade_id is None or students(index):
            if cell.get("cell_type") == "code":
                code.append(b"code:" + _text(cell).encode())
                added_code[index] = code[-1]
            else:
                around.append((index, _shown(cell)))
        elif written(grade_id):
            if TEX_DEFINITION.search(_as_maths_reads(cell)):
                around.append((index, _shown(cell)))
            if TEX_NUMBERING.search(_as_maths_reads(cell)):
                numbering.append((index, _shown(cell)))
        elif released[grade_id].cell_type == "code":  # as released: a solution runs the student's text
            solution = released[grade_id].metadata.nbgrader.get("solution")
            # A solution by its grade id too: which cell holds the id decides what runs as that solution
            code.append(b"solution:" + grade_id.encode() + b"\0" + _text(cell).encode() if solution
                        else b"given:" + grade_id.encode())
    every_answer = f"{ANSWERS_FORMAT}:{_digest(code)}"
    sums = {}
    for grade_id, index in graded.items():
        if not released[grade_id].metadata.nbgrader.get("grade"):
            continue
        if written(grade_id):
            shown = dict(around + (numbering if TEX_NUMBERING.search(_as_maths_reads(nb.cells[index])) else []))
            shown.update((other, added_code[other]) for other in beside(index) if other in added_code)
            shown[index] = b"own:" + _shown(nb.cells[index])
            sums[grade_id] = f"{ANSWERS_FORMAT}:{_digest(chunk for _, chunk in sorted(shown.items()))}"
        else:
            sums[grade_id] = every_answer
    return sums


def answer_checksums_v1(nb: Any) -> dict[str, str]:
    """The checksums of the kit before ANSWERS_FORMAT 2, read from the notebook as autograded: a written answer's
    text, for an autograded part every solution cell's text. Read only to carry a hand grade's review over to
    format 2 (carried_over)."""
    code = [cell.source for cell in nb.cells if cell.get("metadata", {}).get("nbgrader", {}).get("solution")]
    every_answer = _digest(text.encode() for text in code)
    sums = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and meta.get("grade_id"):
            sums[str(meta["grade_id"])] = _digest([cell.source.encode()]) if meta.get("solution") else every_answer
    return sums


# ------------------------------------------------------------------------------------ the table


def _ensure(session: Any) -> None:
    session.execute(text(_SCHEMA))


def read(session: Any, assignment: str) -> dict[str, dict[str, str | None]]:
    """{student: {"inputs", "answers", "page"}} of one assignment."""
    _ensure(session)
    rows = session.execute(text(f"SELECT student, inputs, answers, page FROM {TABLE} WHERE assignment = :a"),
                           {"a": assignment})
    return {student: {"inputs": inputs, "answers": answers, "page": page} for student, inputs, answers, page in rows}


def read_row(session: Any, assignment: str, student: str) -> dict[str, str | None]:
    """{"inputs", "answers", "page"} of one student's row ({} when there is none): read once per student graded,
    so never the whole class's rows."""
    _ensure(session)
    row = session.execute(text(f"SELECT inputs, answers, page FROM {TABLE} WHERE assignment = :a AND student = :s"),
                          {"a": assignment, "s": student}).first()
    return dict(zip(("inputs", "answers", "page"), row)) if row else {}


def write(session: Any, assignment: str, student: str, column: str, value: str | None) -> None:
    """Set one column of a student's row (made when missing); the caller commits."""
    if column not in ("inputs", "answers", "page"):
        raise ValueError(column)
    _ensure(session)
    session.execute(text(f"INSERT INTO {TABLE} (assignment, student) VALUES (:a, :s) ON CONFLICT DO NOTHING"),
                    {"a": assignment, "s": student})
    session.execute(text(f"UPDATE {TABLE} SET {column} = :v WHERE assignment = :a AND student = :s"),
                    {"a": assignment, "s": student, "v": value})


def forget(session: Any, assignment: str, students: Iterable[str]) -> None:
    """Remove students' rows of `assignment` (with their gradebook rows: lifecycle.forget_students)."""
    _ensure(session)
    for student in students:
        session.execute(text(f"DELETE FROM {TABLE} WHERE assignment = :a AND student = :s"),
                        {"a": assignment, "s": student})


def inputs_json(inputs: Inputs) -> str:
    return json.dumps(asdict(inputs), sort_keys=True)


# ------------------------------------------------------------------------------------ the answers hand grades stand on

Answer = dict[str, str | None]  # {"seen": checksum, "reviewed": checksum}, each None when not known


def _answer(value: Any) -> Answer:
    if isinstance(value, str):  # a bare checksum (a row of an older kit): the answer as last autograded
        value = {"seen": value}
    value = value if isinstance(value, dict) else {}
    return {key: value.get(key) if isinstance(value.get(key), str) else None for key in ("seen", "reviewed")}


def read_answers(session: Any, assignment: str, student: str) -> dict[str, dict[str, Answer]]:
    """A student's `answers`: {notebook: {grade id: Answer}}."""
    try:
        book = json.loads(read_row(session, assignment, student).get("answers") or "{}")
    except ValueError:
        book = {}
    book = book if isinstance(book, dict) else {}
    return {str(notebook): {str(grade): _answer(value) for grade, value in grades.items()}
            for notebook, grades in book.items() if isinstance(grades, dict)}


def write_answers(session: Any, assignment: str, student: str, book: dict[str, dict[str, Answer]]) -> None:
    write(session, assignment, student, "answers", json.dumps(book, sort_keys=True))


def hand_graded(grade: Any) -> bool:
    """Whether the instructor graded it by hand: a manual score (a written answer's, or one over an autograded
    part) or extra credit."""
    return grade.manual_score is not None or grade.extra_credit is not None


def reviewed_answer(grade: Any, before: Answer | None) -> str | None:
    """The answer a hand grade stands on, read before grading touches its flag; None for a grade not hand graded.
    A hand grade without the review flag was given or confirmed on the answer the formgrader showed (`seen`):
    only the formgrader clears that flag, and the kit only when the answer is the reviewed one. A flagged one
    still stands on the answer it was reviewed on before."""
    if not hand_graded(grade):
        return None
    before = before or _answer(None)
    return before["reviewed"] if grade.needs_manual_grade else before["seen"]


def recorded_by_an_older_kit(session: Any, assignment: str, student: str) -> bool:
    """Whether the student's grade was last recorded with answers' checksums of an older format (its inputs')."""
    inputs = Inputs.from_json(read_row(session, assignment, student).get("inputs"))
    return inputs is not None and inputs.answers_format != ANSWERS_FORMAT


def carried_over(reviewed: str | None, now: str | None, now_v1: str | None) -> str | None:
    """`reviewed` in ANSWERS_FORMAT, on the first grading after an upgrade (recorded_by_an_older_kit): a checksum
    the older kit recorded (format 1) that is the answer now, as that kit read answers (`now_v1`), is the answer
    now (`now`); so that grading flags no hand grade whose answer did not change as that kit saw it. (Which
    submission that kit graded cannot be told: its folder fingerprints are of another format too. So a change it
    could not see, sent after its last grade, is not flagged by that first grading, as it would not have been by
    that kit.) A checksum of format 2 never equals one of format 1."""
    return now if reviewed is not None and reviewed == now_v1 else reviewed


def needs_review(grade: Any, answer: str | None, reviewed: str | None) -> bool:
    """The review flag of a hand grade after grading: raised when the answer is not known (None) or is not the
    one the grade was reviewed on; a grade with no score at all (extra credit on a written answer) still waits
    for one, as nbgrader flags it."""
    unscored = grade.manual_score is None and grade.auto_score is None
    return unscored or answer is None or answer != reviewed


def given_on(session: Any, grade: Any, answer: str | None) -> None:
    """Record `answer` as the one a flagged hand grade stands on: the answer the formgrader's page showed when the
    grade was saved from it, no longer the one last autograded (nbgrader_glue.formgrader_saves). Grading then
    clears the flag only on that answer (reviewed_answer, needs_review); the caller commits."""
    where = grade.to_dict()
    book = read_answers(session, where["assignment"], where["student"])
    entry = book.setdefault(where["notebook"], {}).setdefault(grade.name, _answer(None))
    entry["reviewed"] = answer
    write_answers(session, where["assignment"], where["student"], book)


def answer_gone(grade: Any, before: Answer | None) -> Answer:
    """The ledger entry of a grade whose answer the student's file no longer holds (a file not graded, or its cell
    deleted): a hand grade is flagged for review, since the answer it graded is gone, and the entry records that no
    answer is shown, keeping the one it was reviewed on (a grade confirmed now stands on no answer)."""
    reviewed = reviewed_answer(grade, before)  # before the flag changes
    if hand_graded(grade):
        grade.needs_manual_grade = True
    return {"seen": None, "reviewed": reviewed}
