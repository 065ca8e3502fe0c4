"""The class page (`make class-page`): one HTML page on where the class stands, written to reports/<assignment>.html.

After `make grade`, it reads what grading left behind and writes nothing else:

* the gradebook (through grades.csv's own rows, autograder/outputs/export.py): each student's autograded score,
  and each part's score, for the score histogram and each part's pass rate (full marks on the part);
* each submission's report.json (written by RunHiddenSuites beside its autograded notebook, or by `make grade`
  for a submission it could not grade, with the reason): the limits it hit, as `make grade`'s summary names
  them, and each part's first failed check (a check not run names no cause of its own: its Status says so),
  whose message names the cause. The most frequent of those messages are the class's misconceptions: one row
  per message, with the parts it was seen in and how many students saw it, so one mistake that fails several
  checks (or several parts) is one row; a submission not graded is listed with its report's reason.

Nothing is read back from a message's words or from a feedback page: only the report objects and the gradebook.

Parts are shown with their titles (c.GraderSettings.part_titles) beside their ids. Plots are drawn with
matplotlib (Agg) and embedded as PNG data URIs, so the page is one file with no script. Every text shown
comes from students' submissions or the course's configuration and is HTML-escaped.
"""
from __future__ import annotations

import base64
import html
import io
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..report import Report, ReportUnreadable, Status
from .inert import say


@dataclass
class ClassData:
    assignment: str
    parts: list[tuple[str, float]]  # (grade id, points) of the autograded parts
    max_auto: float
    scores: dict[str, float] = field(default_factory=dict)  # student -> autograded score
    part_scores: dict[str, dict[str, float]] = field(default_factory=dict)  # student -> part -> score
    messages: Counter = field(default_factory=Counter)  # a part's first failing message -> students
    message_parts: dict[str, set[str]] = field(default_factory=dict)  # message -> the parts it was seen in
    limits: dict[str, set[str]] = field(default_factory=dict)  # student -> limits hit
    not_graded: dict[str, str] = field(default_factory=dict)  # student -> why
    late: dict[str, tuple[float, float]] = field(default_factory=dict)  # student -> (hours late, penalty)
    titles: dict[str, str] = field(default_factory=dict)  # grade id -> what the part checks


def first_failures(report: Report) -> dict[str, str]:
    """grade id -> the message of the part's first failed check (a part that passed, or whose checks were not
    run, has none)."""
    found = {}
    for part in report.parts:
        failed = [t.message for t in part.tests if t.status is Status.FAILED]
        if failed:
            found[part.grade_id] = failed[0]
    return found


def take_report(data: ClassData, student: str, report: Report) -> None:
    """What the class page shows of one student's report: why it was not graded, or its limits and first failures."""
    if report.error:
        data.not_graded[student] = report.error
        return
    if report.limits:
        data.limits[student] = set(report.limits)
    failures = first_failures(report)
    data.messages.update(set(failures.values()))  # one count per student and message
    for part, message in failures.items():
        data.message_parts.setdefault(message, set()).add(part)


def gather(assignment, coursedir, titles: dict[str, str] | None = None) -> ClassData:
    """The class as the gradebook (grades.csv's rows) and each student's report.json hold it."""
    from nbgrader.api import Gradebook

    from ..nbgrader_glue.preprocessors.run_hidden_suites import report_path
    from .export import grade_rows, graded_parts

    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        _, rows = grade_rows(gradebook, [assignment.name])
        parts = graded_parts(gradebook.find_assignment(assignment.name))[0]
    data = ClassData(assignment.name, parts, sum(p for _, p in parts), titles=dict(titles or {}))
    for row in rows:
        student = row["student_id"]
        if row["auto_score"] != "":  # blank: the grader failed on it, and a student with no score is no 0 here
            data.scores[student] = float(row["auto_score"])
            data.part_scores[student] = {name: float(row.get(name) or 0) for name, _ in parts}
        if float(row["hours_late"] or 0) > 0:
            data.late[student] = (float(row["hours_late"]), float(row["late_submission_penalty"] or 0))
        try:
            report = Report.load(report_path(coursedir, student, assignment.name))
        except OSError:  # in the gradebook with nothing submitted: no report, and nothing to say
            if row["timestamp"]:
                data.not_graded[student] = "it has no report.json: make grade grades it again"
            continue
        except ReportUnreadable as exc:
            data.not_graded[student] = f"its report.json is unreadable ({exc}): make grade grades it again"
            continue
        take_report(data, student, report)
    return data


def _png(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def histogram(data: ClassData):
    """The score histogram: how many students got each score (whole students on the count axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, axes = plt.subplots(figsize=(7, 3.2))
    top = max(data.max_auto, 1)
    axes.hist(list(data.scores.values()), bins=min(int(top) + 1, 40), range=(0, top), color="#3a6ea5", edgecolor="white")
    axes.set_xlabel(f"autograded score (of {data.max_auto:g})")
    axes.set_ylabel("students")
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count of students has no fractions
    axes.set_title(f"{data.assignment}: scores of {len(data.scores)} students")
    return figure


def plots(data: ClassData) -> dict[str, str]:
    import matplotlib.pyplot as plt

    images = {}
    figure = histogram(data)
    images["histogram"] = _png(figure)
    plt.close(figure)

    figure, axes = plt.subplots(figsize=(7, 0.45 * max(len(data.parts), 1) + 1))
    names = [data.titles.get(name, name) for name, _ in data.parts]
    rates = [pass_rate(data, name, points) for name, points in data.parts]
    axes.barh(names[::-1], [100 * r for r in rates[::-1]], color="#5a9e6f")
    axes.set_xlim(0, 100)
    axes.set_xlabel("students with full marks on the part (%)")
    axes.set_title("pass rate per part")
    images["pass_rates"] = _png(figure)
    plt.close(figure)
    return images


def pass_rate(data: ClassData, part: str, points: float) -> float:
    if not data.part_scores:
        return 0.0
    return sum(1 for scores in data.part_scores.values() if scores.get(part, 0) >= points) / len(data.part_scores)


def render(data: ClassData, top: int = 15) -> str:
    from ..nbgrader_glue.late import late_by
    from .counts import counted, mean_points

    e = html.escape
    images = plots(data)
    n = len(set(data.scores) | set(data.not_graded))  # a student the grader failed on has no score, but counts
    rows = "".join(
        f"<tr><td>{e(name)}</td><td>{e(data.titles.get(name, ''))}</td><td>{points:g}</td>"
        f"<td>{100 * pass_rate(data, name, points):.0f}%</td></tr>"
        for name, points in data.parts)
    order = [name for name, _ in data.parts]
    seen_in = lambda message: ", ".join(  # noqa: E731 (one expression, kept beside the table it fills)
        f"{data.titles.get(p, p)} ({p})" if p in data.titles else p
        for p in sorted(data.message_parts.get(message, ()), key=lambda p: order.index(p) if p in order else len(order)))
    common = "".join(
        f"<tr><td>{count}</td><td>{e(seen_in(message))}</td><td>{e(message)}</td></tr>"
        for message, count in data.messages.most_common(top))
    limited = "".join(f"<li>{e(s)}: {e(', '.join(sorted(names)))}</li>" for s, names in sorted(data.limits.items()))
    ungraded = "".join(f"<li>{e(s)}: {e(reason)}</li>" for s, reason in sorted(data.not_graded.items()))
    late = "".join(f"<li>{e(s)}: by {e(late_by(hours * 3600))}, late penalty {penalty:g} points</li>"
                   for s, (hours, penalty) in sorted(data.late.items()))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(data.assignment)}: where the class stands</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:0.2em 0.5em;text-align:left}}
img{{max-width:100%}}</style></head>
<body><main>
<h1>{e(data.assignment)}: where the class stands</h1>
<p id="summary">{counted(n, 'student')}; mean autograded score {mean_points(list(data.scores.values()))} of {data.max_auto:g}; {len(data.not_graded)} could not be
graded; {len(data.limits)} hit a limit. Written answers are graded by hand and not counted here.</p>
<h2>Scores</h2>
<img id="histogram" alt="histogram of autograded scores" src="{images['histogram']}">
<h2>Pass rate per part</h2>
<img id="pass-rates" alt="pass rate per part" src="{images['pass_rates']}">
<table id="parts"><tr><th>part</th><th>what it checks</th><th>points</th><th>full marks</th></tr>{rows}</table>
<h2>Most frequent messages</h2>
<p>Each part's first failing check names the cause: how many students saw each such message, and in which
parts. These are the class's common mistakes.</p>
<table id="messages"><tr><th>students</th><th>parts</th><th>message</th></tr>{common or '<tr><td colspan="3">none</td></tr>'}</table>
<h2>Hit a limit</h2>
<ul id="limits">{limited or '<li>none</li>'}</ul>
<h2>Could not be graded</h2>
<ul id="not-graded">{ungraded or '<li>none</li>'}</ul>
<h2>Late</h2>
<ul id="late">{late or '<li>none</li>'}</ul>
</main></body></html>
"""


def write_class_page(root: Path, assignment, dest: Path | None = None, config=None) -> Path:
    """Gather the class from the gradebook and its report.json files, and write its page to `dest`."""
    from nbgrader.coursedir import CourseDirectory

    from ..settings import GraderSettings, load_config

    coursedir = CourseDirectory(config=config if config is not None else load_config(root))
    database = Path(coursedir.db_url.replace("sqlite:///", "", 1))
    if coursedir.db_url.startswith("sqlite:///") and not database.is_file():
        raise FileNotFoundError(f"no gradebook at {database}: run `make grade` first")
    dest = Path(dest or root / "reports" / f"{assignment.name}.html")
    dest.parent.mkdir(parents=True, exist_ok=True)
    titles = GraderSettings(config=coursedir.config).part_titles
    dest.write_text(render(gather(assignment, coursedir, titles)), encoding="utf-8")
    return dest


def command(root: Path, assignment, dest: Path | None = None, config=None) -> int:
    """`python -m autograder class-page`: write the page and say where, or why not (exit 1)."""
    try:
        path = write_class_page(root, assignment, dest, config)
    except FileNotFoundError as error:
        say(error, sys.stderr)
        return 1
    say(f"Wrote {path}.")
    return 0

