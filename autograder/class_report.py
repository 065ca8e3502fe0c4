"""`make report`: one HTML page on where the class stands, written to reports/<assignment>.html.

After `make grade`, it reads what grading left behind and writes nothing else:

* the gradebook (through grades.csv's own rows, autograder/export.py): each student's autograded score,
  and each part's score, for the score histogram and each part's pass rate (full marks on the part);
* each autograded notebook's grade cells (autograded/<student>/<assignment>/), which hold one line per
  check, `FAIL <check>: <message>`: the most frequent messages, with how many students got each (the
  class's misconceptions);
* the report beside it (report.json, written by RunHiddenSuites): the limits hit, as the summary of
  `make grade` names them (time, memory, output, budgets); without one, the limits its messages name;
* a submission that could not be graded has no autograded notebook; its feedback page says why.

Plots are drawn with matplotlib (Agg) and embedded as PNG data URIs, so the page is one file with no
script. Every text shown comes from students' submissions and is HTML-escaped.
"""
from __future__ import annotations

import base64
import html
import io
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

LIMIT_WORDS = {  # a message's words -> the limit it says was hit (the sandbox and suites.py write them)
    "did not finish within": "time", "ran out of memory": "memory", "printed more than the output limit": "output",
    "the submission used its": "time budget", "message withheld: this submission's messages": "message budget",
    "the submission took": "time budget", "used their memory budget": "memory budget",
    "used its process budget": "process budget",
}
FAIL_LINE = re.compile(r"^FAIL (?P<check>[^:]+): (?P<message>.*)$")


@dataclass
class ClassData:
    assignment: str
    parts: list[tuple[str, float]]  # (grade id, points) of the autograded parts
    max_auto: float
    scores: dict[str, float] = field(default_factory=dict)  # student -> autograded score
    part_scores: dict[str, dict[str, float]] = field(default_factory=dict)  # student -> part -> score
    messages: Counter = field(default_factory=Counter)  # (part, message) -> students
    limits: dict[str, set[str]] = field(default_factory=dict)  # student -> limits hit
    not_graded: dict[str, str] = field(default_factory=dict)  # student -> why


def _grade_cell_lines(notebook: dict) -> dict[str, list[str]]:
    """grade id -> the lines its outputs show."""
    lines = {}
    for cell in notebook.get("cells", []):
        grade_id = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")
        if cell.get("cell_type") != "code" or not grade_id:
            continue
        text = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                text += str(output.get("text", "")).splitlines()
            elif output.get("output_type") == "error":
                text += [str(line) for line in output.get("traceback", [])]
        lines[grade_id] = text
    return lines


def _why_not_graded(page: Path) -> str:
    try:
        text = page.read_text(errors="replace")
    except OSError:
        return "no autograded notebook and no feedback page"
    match = re.search(r"not graded</h1><p>(.*?)</p>", text, re.S)
    return html.unescape(match.group(1)) if match else "no autograded notebook (see its feedback page)"


def gather(root: Path, assignment, coursedir) -> ClassData:
    from nbgrader.api import Gradebook

    from .export import grade_rows, graded_parts
    from .preprocessors.run_hidden_suites import report_path
    from .report import Report

    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        _, rows = grade_rows(gradebook, [assignment.name])
        parts = graded_parts(gradebook.find_assignment(assignment.name))[0]
    data = ClassData(assignment.name, parts, sum(p for _, p in parts))
    stem = Path(assignment.notebook_name).stem
    for row in rows:
        student = row["student_id"]
        data.scores[student] = float(row["auto_score"] or 0)
        data.part_scores[student] = {name: float(row.get(name) or 0) for name, _ in parts}
        autograded = root / "autograded" / student / assignment.name / assignment.notebook_name
        if not autograded.is_file():
            if row["timestamp"] or (root / "feedback" / student / assignment.name).is_dir():
                data.not_graded[student] = _why_not_graded(root / "feedback" / student / assignment.name / f"{stem}.html")
            continue
        try:
            notebook = nbformat.read(autograded, as_version=4)
        except Exception as exc:  # an autograded file nbgrader wrote is readable; say so if not
            data.not_graded[student] = f"its autograded notebook is unreadable ({type(exc).__name__})"
            continue
        seen = set()
        for part, lines in _grade_cell_lines(notebook).items():
            for line in lines:
                match = FAIL_LINE.match(line.strip())
                if not match:
                    continue
                message = match["message"].strip()
                seen.add((part, message))
                for words, limit in LIMIT_WORDS.items():
                    if words in message:
                        data.limits.setdefault(student, set()).add(limit)
        data.messages.update(seen)  # one count per student and message
        try:
            limits = set(Report.load(report_path(coursedir, student, assignment.name)).limits)
        except (OSError, ValueError, KeyError, TypeError):  # graded before reports were kept: the messages say
            continue
        if limits:
            data.limits[student] = limits
        else:
            data.limits.pop(student, None)
    return data


def _png(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def plots(data: ClassData) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images = {}
    figure, axes = plt.subplots(figsize=(7, 3.2))
    top = max(data.max_auto, 1)
    axes.hist(list(data.scores.values()), bins=min(int(top) + 1, 40), range=(0, top), color="#3a6ea5", edgecolor="white")
    axes.set_xlabel(f"autograded score (of {data.max_auto:g})")
    axes.set_ylabel("students")
    axes.set_title(f"{data.assignment}: scores of {len(data.scores)} students")
    images["histogram"] = _png(figure)
    plt.close(figure)

    figure, axes = plt.subplots(figsize=(7, 0.45 * max(len(data.parts), 1) + 1))
    names = [name for name, _ in data.parts]
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
    e = html.escape
    images = plots(data)
    n = len(data.scores)
    mean = sum(data.scores.values()) / n if n else 0.0
    rows = "".join(
        f"<tr><td>{e(name)}</td><td>{points:g}</td><td>{100 * pass_rate(data, name, points):.0f}%</td></tr>"
        for name, points in data.parts)
    common = "".join(
        f"<tr><td>{count}</td><td>{e(part)}</td><td>{e(message)}</td></tr>"
        for (part, message), count in data.messages.most_common(top))
    limited = "".join(f"<li>{e(s)}: {e(', '.join(sorted(l)))}</li>" for s, l in sorted(data.limits.items()))
    ungraded = "".join(f"<li>{e(s)}: {e(reason)}</li>" for s, reason in sorted(data.not_graded.items()))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(data.assignment)}: class report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:0.2em 0.5em;text-align:left}}
img{{max-width:100%}}</style></head>
<body>
<h1>{e(data.assignment)}: class report</h1>
<p id="summary">{n} students; mean autograded score {mean:.2f} of {data.max_auto:g}; {len(data.not_graded)} could not be
graded; {len(data.limits)} hit a limit. Written answers are graded by hand and not counted here.</p>
<h2>Scores</h2>
<img id="histogram" alt="histogram of autograded scores" src="{images['histogram']}">
<h2>Pass rate per part</h2>
<img id="pass-rates" alt="pass rate per part" src="{images['pass_rates']}">
<table id="parts"><tr><th>part</th><th>points</th><th>full marks</th></tr>{rows}</table>
<h2>Most frequent messages</h2>
<p>How many students saw each message (a check that failed, and why): the class's common mistakes.</p>
<table id="messages"><tr><th>students</th><th>part</th><th>message</th></tr>{common or '<tr><td colspan="3">none</td></tr>'}</table>
<h2>Hit a limit</h2>
<ul id="limits">{limited or '<li>none</li>'}</ul>
<h2>Could not be graded</h2>
<ul id="not-graded">{ungraded or '<li>none</li>'}</ul>
</body></html>
"""


def write_report(root: Path, assignment, dest: Path | None = None, config=None) -> Path:
    from nbgrader.coursedir import CourseDirectory

    from .settings import load_config

    coursedir = CourseDirectory(config=config if config is not None else load_config(root))
    database = Path(coursedir.db_url.replace("sqlite:///", "", 1))
    if coursedir.db_url.startswith("sqlite:///") and not database.is_file():
        raise FileNotFoundError(f"no gradebook at {database}: run `make grade` first")
    dest = Path(dest or root / "reports" / f"{assignment.name}.html")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(render(gather(root, assignment, coursedir)), encoding="utf-8")
    return dest


def main(root: Path, assignment, dest: Path | None = None, config=None) -> int:
    try:
        path = write_report(root, assignment, dest, config)
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"Wrote {path}.")
    return 0

