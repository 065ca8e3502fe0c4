"""`make bench`: grade the same class with this kit and with stock nbgrader, and compare.

    python -m bench [--quick] [--sizes 25,50] [--budget SECONDS] [--limit SECONDS] [--cell-timeout S]
                    [--profile | --profile-only] [--keep] [--stock-pytest]

For each class size N (25, 50, 100, 200; --quick: 25) it writes N submissions (two in three the
reference, the demo class's bugs in turn, one infinite loop) into two fresh course copies in a
temporary folder, and measures

* the kit: `python -m autograder class` (bench/kit_driver.py runs it with time stamps), whose
  grading step ends when the last score is in gradebook.db, before feedback and grades.csv;
* stock nbgrader: `nbgrader autograde` with its kernel executor (Execute) on the same notebooks,
  the grade cells calling the hidden checks directly in the kernel (bench/stock_checks.py: stock's fastest
  honest configuration, as a stock course's asserts would run), then `nbgrader generate_feedback` and
  `nbgrader export`; with --stock-pytest, the largest class once more with the grade cells running the
  same suites through pytest.main, printed as the `pytest-variant` lines;

checks that both give the honest submissions full marks, and prints seconds per submission, peak
memory and the ratios. It also times the student's self-check (`pytest` in a release folder holding
the reference) beside `nbgrader validate` on the same notebook, and one notebook through
`python -m autograder grade` (what Gradescope runs while a student waits). It ends with what a user
waits for (`headline`): `throughput ratio: T.T` (what one more submission costs stock over what it costs
the kit, grading step, between the two largest sizes run on both sides), `whole-job ratio: Y.Y` (stock
over kit, the whole job, at the largest size run on both sides) and `one notebook: S.SS s`. The first
size and the largest run on both sides, then the others from the largest down; each is planned into what
is left of the time budget, and those that would take the bench past it are not run, or run on the kit
alone, as the output says.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import measure
from .course import (
    ASSIGNMENT,
    CORRECT,
    NOTEBOOK,
    ROOT,
    VENV_BIN,
    copy_course,
    default_cell_timeout,
    env,
    full_marks,
    gradebook_scores,
    make_stock_course,
    notebooks_by_kind,
    prepare_gradebook,
    roster,
    write_class,
)

SIZES = [25, 50, 100, 200]
QUICK = [25]
# Seconds of predicted work the bench plans for: N = 200 on both sides takes about 7 minutes, N = 100 about 4
# (stock nbgrader: 1.7 s a submission), and the headline needs both (docs/scaling.md).
BUDGET = 20 * 60
HARD_LIMIT = 21 * 60  # a run still going at this point (from the bench's start) is stopped, not reported
DRIVER = Path(__file__).resolve().parent / "kit_driver.py"
NBGRADER = str(VENV_BIN / "nbgrader")


class BenchError(RuntimeError):
    pass


class Overtime(RuntimeError):
    """A run was stopped at the bench's hard time limit: it has no numbers."""


def timeout(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.perf_counter()


def say(text: str = "") -> None:
    print(text, flush=True)


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# ----------------------------------------------------------------------------- sides


@dataclass
class Side:
    grade: float  # seconds, submissions to scores in gradebook.db
    whole: float  # seconds, grading + feedback + grades.csv
    peak_mb: float  # PSS sum over the process tree
    peak_rss_mb: float
    setup: float = 0.0  # seconds not timed (course copy, class, stock generate_assignment)
    scores: dict = field(default_factory=dict)
    phases: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    others: float = 0.0  # share of the machine's CPU other processes used while this side ran
    cpu: float = 0.0  # CPU seconds (user + system) of the side's whole process tree, whole job
    # The kit: seconds to the last score but the slowest submission's (the infinite loop's), whose 28 s end the
    # grading step at every size: what is left is the pace of the class (None: not measured)
    grade_but_slowest: float | None = None
    # The kit: seconds of a second `make grade` on the same class, unchanged (it autogrades no one); None: not run
    again: float | None = None


def _events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _kit_phases(events: list[dict], started: float, whole: float) -> tuple[float, dict]:
    """The grading step's end and a split of the run, from the driver's time stamps."""
    def times(name: str, edge: str) -> list[float]:
        return sorted(e["t"] - started for e in events if e["event"] == f"{name}:{edge}")

    def span(*names: str) -> float | None:
        starts = [t for n in names for t in times(n, "start")]
        ends = [t for n in names for t in times(n, "end")]
        return (max(ends) - min(starts)) if starts and ends else None

    graded = times("autograde", "end") or times("api_autograde", "end")
    if graded:
        grade_end = graded[-1]
    else:  # the kit no longer goes through nbgrader's Autograde: scores are in before feedback starts
        grade_end = next((t[0] for t in (times("feedback", "start"), times("api_generate_feedback", "start"),
                                         times("export", "start")) if t), whole)
    first = min((e["t"] - started for e in events if e["event"] not in ("driver:start",)
                 and not e["event"].startswith("imports:")), default=whole)
    phases = {
        "start-up and imports": first,
        "generate_assignment": span("generate_assignment", "api_generate_assignment"),
        "autograde (nbgrader, checks inside)": span("autograde", "api_autograde"),
        # The grading processes write most pages while the last submissions are graded: only what is after counts here.
        "feedback HTML after the grading step": max([t - grade_end for n in ("feedback", "api_generate_feedback")
                                                     for t in times(n, "end") if t > grade_end], default=None),
        "grades.csv": span("export"),
    }
    measured: dict[str, float] = {k: v for k, v in phases.items() if v is not None}
    measured["other (reading, summary)"] = max(0.0, whole - sum(measured.values()))
    return grade_end, measured


def _graded_but_slowest(events: list[dict], started: float) -> float | None:
    """Seconds to the last score in but the slowest submission's: each grading process's Autograde runs one
    student at a time, so its start and end events pair up; the longest pair is left out."""
    spans, begun = [], {}
    for event in events:
        if event["event"] == "autograde:start":
            begun[event["pid"]] = event["t"]
        elif event["event"] == "autograde:end" and event["pid"] in begun:
            spans.append((begun.pop(event["pid"]), event["t"]))
    if len(spans) < 2:
        return None
    spans.remove(max(spans, key=lambda span: span[1] - span[0]))
    return max(end for _, end in spans) - started


def kit_side(tmp: Path, n: int, people, texts, profile: Path | None = None, deadline: float | None = None) -> Side:
    t0 = time.perf_counter()
    course = prepare_gradebook(copy_course(tmp / f"kit-{n}"))
    write_class(course, people, texts)
    setup = time.perf_counter() - t0
    events, log = tmp / f"kit-{n}{'-profile' if profile else ''}.events", tmp / f"kit-{n}.log"
    command = [sys.executable, str(DRIVER), str(course), str(events)] + ([str(profile)] if profile else [])
    run = measure.run(command, cwd=course, env=env(), log=log, timeout=timeout(deadline))
    if run.timed_out:
        raise Overtime(f"the kit was stopped after {run.seconds:.0f} s")
    if run.returncode != 0:
        raise BenchError(f"the kit's class run failed (exit {run.returncode}):\n{tail(log)}")
    grade_end, phases = _kit_phases(_events(events), run.started, run.seconds)
    side = Side(grade_end, run.seconds, run.peak_pss_mb, run.peak_rss_mb, setup, gradebook_scores(course), phases,
                others=run.others, cpu=run.cpu_seconds, grade_but_slowest=_graded_but_slowest(_events(events), run.started))
    side.notes = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.startswith("Not graded:")]
    side.again = grade_again(course, tmp / f"kit-{n}-again.log", deadline)
    return side


def grade_again(course: Path, log: Path, deadline: float | None) -> float:
    """Seconds of `make grade` run again on the class just graded: nothing changed, so nobody is autograded."""
    run = measure.run([sys.executable, "-m", "autograder", "class", "--assignment", ASSIGNMENT], cwd=course, env=env(),
                      log=log, timeout=timeout(deadline), sample_memory=False)
    if run.timed_out or run.returncode != 0:
        raise BenchError(f"the kit's second class run failed (exit {run.returncode}):\n{tail(log)}")
    if "Autograded in this run: 0;" not in log.read_text(errors="replace"):
        raise BenchError(f"the kit's second class run autograded submissions of an unchanged class:\n{tail(log)}")
    return run.seconds


def stock_side(tmp: Path, n: int, people, texts, cell_timeout: int | None, finish: bool = True,
               deadline: float | None = None, runner: str = "run_suite") -> Side:
    """Stock nbgrader on the class: autograde, then (`finish`) generate_feedback and export; its grade cells
    run the checks with `runner` (bench/stock_checks.py)."""
    t0 = time.perf_counter()
    course = make_stock_course(tmp / f"stock-{n}-{runner}", cell_timeout, runner)
    write_class(course, people, texts)
    setup = time.perf_counter() - t0
    log = tmp / f"stock-{n}-{runner}.log"
    commands = {"nbgrader autograde": ["autograde", ASSIGNMENT]}
    if finish:
        commands.update({"nbgrader generate_feedback": ["generate_feedback", ASSIGNMENT], "nbgrader export": ["export"]})
    steps = {}
    for name, command in commands.items():
        steps[name] = measure.run([NBGRADER, *command], cwd=course, env=env(), log=log, timeout=timeout(deadline))
        if steps[name].timed_out:
            raise Overtime(f"stock nbgrader was stopped in `{name}` after {sum(r.seconds for r in steps.values()):.0f} s")
    if finish:
        if not (course / "grades.csv").exists():
            raise BenchError(f"stock nbgrader wrote no grades.csv:\n{tail(log)}")
    runs = list(steps.values())
    side = Side(runs[0].seconds, sum(r.seconds for r in runs), max(r.peak_pss_mb for r in runs),
                max(r.peak_rss_mb for r in runs), setup, gradebook_scores(course))
    side.phases = {name: r.seconds for name, r in steps.items()}
    side.others = sum(r.others * r.seconds for r in runs) / side.whole
    side.cpu = sum(r.cpu_seconds for r in runs)
    failed = sorted({line.split("for student '")[1].split("'")[0] for line in log.read_text(errors="replace").splitlines()
                     if "There was an error processing assignment" in line and "for student '" in line})
    side.notes = [f"nbgrader could not autograde {s} (see its log)" for s in failed]
    return side


# ------------------------------------------------------------------------ self-check


def median_run(command: list[str], cwd: Path, log: Path, times: int = 5,
               ok=lambda text: True) -> tuple[float, bool, float]:
    """Median wall time of `times` runs (their memory not sampled), whether every run succeeded, and the most
    other processes took."""
    seconds, passed, others = [], True, 0.0
    for _ in range(times):
        start = log.stat().st_size if log.exists() else 0
        run = measure.run(command, cwd=cwd, env=env(), log=log, sample_memory=False)  # timed for its wall clock only
        seconds.append(run.seconds)
        others = max(others, run.others)
        with open(log, "rb") as handle:
            handle.seek(start)
            passed = passed and run.returncode == 0 and ok(handle.read().decode(errors="replace"))
    return statistics.median(seconds), passed, others


def one_notebook(tmp: Path) -> tuple[float, str]:
    """`python -m autograder grade` on the reference, what Gradescope runs while a student waits: its median
    wall time, and a line saying so."""
    notebook = ROOT / "solutions" / ASSIGNMENT / NOTEBOOK
    seconds, ok, busy = median_run([sys.executable, "-m", "autograder", "grade", str(notebook)], ROOT,
                                   tmp / "one-notebook.log", ok=lambda text: "total" in text)
    return seconds, (f"one notebook: python -m autograder grade on the reference (what Gradescope runs): {seconds:.2f} s "
                     f"wall (median of 5){'' if ok else ' FAILED'}; busy {busy:.0%}")


def self_check(tmp: Path) -> list[str]:
    """The student's `pytest` beside `nbgrader validate`, on a release folder holding the reference."""
    folder = tmp / "selfcheck" / ASSIGNMENT
    shutil.copytree(ROOT / "release" / ASSIGNMENT, folder, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    shutil.copy2(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK, folder / NOTEBOOK)  # the reference bodies filled in
    pytest_s, pytest_ok, pytest_busy = median_run([str(VENV_BIN / "pytest")], folder, tmp / "selfcheck-pytest.log")
    validate_s, validate_ok, validate_busy = median_run([NBGRADER, "validate", NOTEBOOK], folder,
                                                        tmp / "selfcheck-validate.log", ok=lambda text: "Success!" in text)
    return [f"self-check: pytest in a release folder with the reference filled in: {pytest_s:.2f} s wall (median of 5)"
            f"{'' if pytest_ok else ' FAILED'}; busy {pytest_busy:.0%}",
            f"nbgrader validate on the same notebook: {validate_s:.2f} s (median of 5){'' if validate_ok else ' FAILED'}"
            f"; busy {validate_busy:.0%}; the self-check is {validate_s / pytest_s:.1f}x faster"]


# ---------------------------------------------------------------------------- scores


def agree(people, kit: Side, stock: Side | None, full: dict[str, float]) -> bool:
    """Every honest submission has full marks from both sides, and the kit lost no submission."""
    honest = [s for s, kind in people if kind == CORRECT]
    sides = [kit, stock] if stock else [kit]
    return all(side.scores.get(s) == full for side in sides for s in honest) and all(s in kit.scores for s, _ in people)


def compare(n: int, people, kit: Side, stock: Side, full: dict[str, float]) -> list[str]:
    """Lines about scores: honest submissions, lost submissions, and where the two sides differ."""
    lines = []
    honest = [s for s, kind in people if kind == CORRECT]
    for name, side in (("kit", kit), ("stock", stock)):
        right = sum(1 for s in honest if side.scores.get(s) == full)
        lost = [s for s, _ in people if s not in side.scores]
        lines.append(f"  {name:<5} honest submissions with full marks: {right}/{len(honest)}; "
                     f"gradebook rows: {len(people) - len(lost)}/{len(people)}"
                     + (f" (missing: {', '.join(lost[:5])})" if lost else ""))
    same = [s for s in honest if kit.scores.get(s) == stock.scores.get(s)]
    lines.append(f"  honest submissions scored the same by both: {len(same)}/{len(honest)}"
                 + ("" if len(same) == len(honest) else "  <-- DIFFERENCE"))
    by_kind: dict[str, list[str]] = {}
    for student, kind in people:
        by_kind.setdefault(kind, []).append(student)
    for kind, students in by_kind.items():
        if kind == CORRECT:
            continue
        first = students[0]
        k, s = kit.scores.get(first, {}), stock.scores.get(first, {})
        differ = [g for g in full if k.get(g) != s.get(g)]
        if differ:
            lines.append(f"  {kind:<8} (x{len(students)}) kit {sum(k.values()):g} vs stock {sum(s.values()):g}: "
                         + ", ".join(f"{g} {k.get(g, '-')}/{s.get(g, '-')}" for g in differ))
    return lines


# --------------------------------------------------------------------------- headline


def headline(both: list[tuple[int, Side, Side]], notebook_seconds: float) -> list[str]:
    """The bench's last lines, from the sizes run on both sides (kit, stock; smallest first) and one notebook's
    median wall time: what a user waits for, against stock calling the checks directly.

    `throughput ratio:` is what one more submission costs, stock over kit: the grading step's marginal seconds
    per submission between the two largest sizes, so the fixed costs (start-up, and the infinite loop's 9 checks
    of 3 s of CPU, which bound the kit's grading step at any size: docs/scaling.md) cancel out.
    `whole-job ratio:` is at the largest size: submissions to feedback pages and grades.csv; then how long a
    second `make grade` on that class takes, unchanged (it autogrades no one: autograder/classroom/changes.py).
    """
    (n, kit, stock), lines = both[-1], []
    if len(both) > 1:
        (m, small_kit, small_stock) = both[-2]
        kit_s, stock_s = (kit.grade - small_kit.grade) / (n - m), (stock.grade - small_stock.grade) / (n - m)
        lines.append(f"one more submission, grading step, N={m}->{n}: kit {kit_s:.3f} s, stock {stock_s:.3f} s")
        if kit.grade_but_slowest is not None and small_kit.grade_but_slowest is not None:
            pace = (kit.grade_but_slowest - small_kit.grade_but_slowest) / (n - m)
            lines.append(f"  the kit to the last score but its slowest submission's (the loop's): {pace:.3f} s; stock "
                         f"over that: {stock_s / pace:.1f}" if pace > 0 else
                         f"  the kit to the last score but its slowest submission's: no later at N={n} than at N={m}")
        lines.append(f"throughput ratio: {stock_s / kit_s:.1f}" if kit_s > 0 else
                     f"throughput ratio: not measured (the kit's grading step took no longer at N={n} than at N={m})")
    else:
        lines.append(f"throughput ratio: not measured (needs two sizes on both sides; N={n} only)")
    lines.append(f"whole-job ratio: {stock.whole / kit.whole:.1f}")
    if kit.again is not None:
        lines.append(f"make grade again, unchanged class of {n}: {kit.again:.1f} s ({100 * kit.again / kit.whole:.0f}% "
                     f"of the first)")
    lines.append(f"one notebook: {notebook_seconds:.2f} s")
    return lines


# ----------------------------------------------------------------------------- driver


class Cost:
    """Seconds one side takes for a class of n, setup included, as measured so far: fixed + rate * n."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.points: list[tuple[int, float, float]] = []  # (n, seconds, fixed part)

    def add(self, n: int, seconds: float, fixed: float) -> None:
        self.points = sorted([*self.points, (n, seconds, min(fixed, seconds))])

    def predict(self, n: int) -> float:
        """With 5% to spare: a line through the two largest sizes measured, else fixed + rate * n.

        From one size the estimate is on the high side: part of the fixed cost (start-ups, time-outs)
        lands in the rate. The bench's hard limit stops a run that overshoots anyway.
        """
        if not self.points:
            return 0.0
        if len(self.points) >= 2:
            (n1, t1, _), (n2, t2, _) = self.points[-2:]
            estimate = t2 + max((t2 - t1) / (n2 - n1), 0.0) * (n - n2)
        else:
            n0, t0, fixed = self.points[0]
            estimate = fixed + (t0 - fixed) * n / n0
        return 1.05 * max(estimate, 0.0)


def make_plan(sizes: list[int], kit: Cost, stock: Cost, left: float) -> list[tuple[int, str]]:
    """Which sizes to run, and on which sides, within `left` seconds; the order to run them in.

    First the largest size both sides fit in (the headline ratio), then, from the largest down, each
    other size on both sides if it fits, else on the kit alone if that fits.
    """
    plan: dict[int, str] = {}
    for n in sorted(sizes, reverse=True):
        if kit.predict(n) + stock.predict(n) <= left:
            plan[n], left = "both", left - kit.predict(n) - stock.predict(n)
            break
    for n in sorted(sizes, reverse=True):
        if n in plan:
            continue
        if kit.predict(n) + stock.predict(n) <= left:
            plan[n], left = "both", left - kit.predict(n) - stock.predict(n)
        elif kit.predict(n) <= left:
            plan[n], left = "kit", left - kit.predict(n)
        else:
            plan[n] = "none"
    return list(plan.items())


def print_profile(path: Path, limit: int = 30) -> None:
    import io
    import pstats

    children = sorted(path.parent.glob(path.name + ".*"))
    for title, files in (("main process", [path]), (f"{len(children)} forked grading processes", children)):
        if not files:
            continue
        out = io.StringIO()
        stats = pstats.Stats(*map(str, files), stream=out)
        stats.sort_stats("cumulative").print_stats(limit)
        say(f"\ncProfile, {title} (cumulative seconds, top {limit}):")
        body = out.getvalue().split("ncalls", 1)
        say(("ncalls" + body[1]).rstrip() if len(body) > 1 else out.getvalue())


def profile_kit(tmp: Path, texts: dict[str, str], n: int = 25) -> None:
    profile = tmp / "profile" / f"kit-{n}.prof"
    say(f"\nprofiling the kit at N = {n} (cProfile; its own run, not in the table)")
    profile.parent.mkdir()
    kit = kit_side(profile.parent, n, roster(n), texts, profile=profile)
    say(f"kit N={n} under cProfile: {kit.whole:.1f} s, split (s): "
        + ", ".join(f"{k} {v:.1f}" for k, v in kit.phases.items()) + f"; busy {kit.others:.0%}")
    print_profile(profile)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 25 only (make bench QUICK=1)")
    parser.add_argument("--sizes", help="class sizes, e.g. 25,50 (default 25,50,100,200)")
    parser.add_argument("--budget", type=float, default=BUDGET, help="seconds of predicted work the bench plans sizes into")
    parser.add_argument("--limit", type=float, default=HARD_LIMIT,
                        help="seconds from the start after which a run still going is stopped (no numbers)")
    parser.add_argument("--cell-timeout", type=int, help="stock Execute timeout per cell (default: the kit's limit)")
    parser.add_argument("--profile", action="store_true", help="also run the kit at N = 25 under cProfile")
    parser.add_argument("--profile-only", action="store_true", help="only the kit at N = 25 under cProfile")
    parser.add_argument("--keep", action="store_true", help="keep the temporary courses and logs")
    parser.add_argument("--stock-pytest", action="store_true",
                        help="also grade the largest class with stock's grade cells running pytest.main (labelled)")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else [int(s) for s in args.sizes.split(",")] if args.sizes else SIZES

    begin = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="bench-"))
    os.chmod(tmp, 0o755)
    try:
        import nbgrader

        say(f"make bench: {ASSIGNMENT}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"nbgrader {nbgrader.__version__}; sizes {'25 (profile only)' if args.profile_only else ', '.join(map(str, sizes))}; "
            f"temporary courses in {tmp}")
        say("kit: python -m autograder class (time-stamped by bench/kit_driver.py); grading step = until the last "
            "score is in gradebook.db")
        say("stock: nbgrader autograde (Execute; the grade cells call the hidden checks directly, stock's fastest "
            "honest way; demo cells blanked; cell timeout = the kit's limit) + generate_feedback + export")
        say("both courses start with gradebook.db made by nbgrader generate_assignment (untimed), as for a regrade")
        say("memory: peak of the summed PSS of the whole process tree, sampled every 0.1 s; busy: the share of the "
            "CPUs other processes used meanwhile")

        if args.profile_only:
            profile_kit(tmp, texts=notebooks_by_kind())
            return 0
        say()
        for line in self_check(tmp):
            say(line)
        notebook_seconds, line = one_notebook(tmp)
        say(line)

        texts = notebooks_by_kind()
        full = full_marks(ROOT)
        rows: dict[int, tuple] = {}
        skipped: list[str] = []
        kit_cost, stock_cost = Cost("kit"), Cost("stock")

        deadline = begin + args.limit
        timeout_s = args.cell_timeout or default_cell_timeout(ROOT)

        def run_size(n: int, stock_too: bool) -> None:
            people = roster(n)
            t = time.perf_counter()
            try:
                kit = kit_side(tmp, n, people, texts, deadline=deadline)
            except Overtime as exc:
                skipped.append(f"N={n}: no numbers: {exc} at the bench's {args.limit:.0f} s limit")
                return
            # fixed: set-up, start-up, generate_assignment, and the infinite loop's two time-outs (which one of
            # the kit's grading processes waits out while the other goes on)
            kit_cost.add(n, time.perf_counter() - t, kit.setup + kit.phases.get("start-up and imports", 0)
                         + kit.phases.get("generate_assignment", 0) + timeout_s)
            stock = None
            if stock_too:
                t = time.perf_counter()
                try:
                    stock = stock_side(tmp, n, people, texts, args.cell_timeout, deadline=deadline)
                except Overtime as exc:
                    skipped.append(f"N={n}: stock has no numbers: {exc} at the bench's {args.limit:.0f} s limit")
                else:  # fixed: set-up, three start-ups (export is little else), the infinite loop's two time-outs
                    stock_cost.add(n, time.perf_counter() - t, stock.setup + 3 * stock.phases["nbgrader export"]
                                   + 2 * timeout_s)
            rows[n] = (people, kit, stock)
            say(f"N={n}: kit {kit.whole:.1f} s (grading {kit.grade:.1f} s)"
                + (f", stock {stock.whole:.1f} s (autograde {stock.grade:.1f} s)" if stock else ", stock not run"))
            if stock:
                for line in compare(n, people, kit, stock, full):
                    say(line)
            for note in kit.notes + (stock.notes if stock else []):
                say(f"  {note}")

        def left() -> float:
            return args.budget - (time.perf_counter() - begin)

        run_size(sizes[0], True)  # always, on both sides: it calibrates the plan for the others
        remaining = list(sizes[1:])
        if max(sizes) in remaining:  # the ratios the bench ends with: the largest size, on both sides, next
            say(f"next: N={max(sizes)} on both sides, for the ratios at the largest size ({left():.0f} s left "
                f"of the {args.budget:.0f} s budget; a run past {args.limit:.0f} s is stopped)")
            run_size(max(sizes), True)
            remaining.remove(max(sizes))
        while remaining:  # re-planned after every size, from everything measured so far
            plan = make_plan(remaining, kit_cost, stock_cost, left())
            runnable = [(n, what) for n, what in plan if what != "none"]
            if not runnable:
                skipped.extend(f"N={n}: not run: about {kit_cost.predict(n):.0f} s (kit) + {stock_cost.predict(n):.0f} s "
                               f"(stock) with {left():.0f} s left of the {args.budget:.0f} s budget" for n in remaining)
                break
            n, what = runnable[0]
            say(f"next: N={n} on {'both sides' if what == 'both' else 'the kit only'} (predicted "
                f"{kit_cost.predict(n):.0f} s + {stock_cost.predict(n):.0f} s for stock, {left():.0f} s left; "
                f"plan {', '.join(f'{m} {w}' for m, w in plan)})")
            if what == "kit":
                skipped.append(f"N={n}: stock nbgrader not run: about {stock_cost.predict(n):.0f} s on top of the kit's "
                               f"{kit_cost.predict(n):.0f} s, with {left():.0f} s left of the {args.budget:.0f} s budget")
            run_size(n, what == "both")
            remaining.remove(n)
        rows = {n: rows[n] for n in sorted(rows)}

        say("\nseconds per submission (grading step / whole job), peak memory MB, busy%, ratios stock/kit:")
        say(f"{'N':>5} | {'kit grade':>9} {'kit job':>8} {'kit MB':>7} {'busy%':>5} | {'stock grade':>11} "
            f"{'stock job':>9} {'stock MB':>8} {'busy%':>5} | {'grade ratio':>11} {'job ratio':>9}")
        for n, (_, kit, stock) in rows.items():
            line = f"{n:>5} | {kit.grade / n:>9.3f} {kit.whole / n:>8.3f} {kit.peak_mb:>7.0f} {kit.others:>5.0%} | "
            if stock:
                line += (f"{stock.grade / n:>11.3f} {stock.whole / n:>9.3f} {stock.peak_mb:>8.0f} {stock.others:>5.0%} | "
                         f"{stock.grade / kit.grade:>11.1f} {stock.whole / kit.whole:>9.1f}")
            else:
                line += f"{'not run':>11} {'':>9} {'':>8} {'':>5} | {'':>11} {'':>9}"
            say(line)
        sizes_run = list(rows)
        if len(sizes_run) > 1:  # what one more submission costs, start-up and the loop's time-outs left out
            say("kit marginal seconds per submission (grading step / whole job) between sizes: " + ", ".join(
                f"{a}->{b} {(rows[b][1].grade - rows[a][1].grade) / (b - a):.3f} / "
                f"{(rows[b][1].whole - rows[a][1].whole) / (b - a):.3f}" for a, b in zip(sizes_run, sizes_run[1:])))
        busiest = max((side.others for _, kit, stock in rows.values() for side in (kit, stock) if side), default=0)
        if busiest > 0.1:
            say(f"note: other processes used up to {busiest:.0%} of the CPUs during a run: those timings are slower "
                "than on an idle machine")
        for n, (_, kit, _) in rows.items():
            split = ", ".join(f"{k} {v:.1f}" for k, v in kit.phases.items())
            slowest = "" if kit.grade_but_slowest is None else f"; last score but the slowest's at {kit.grade_but_slowest:.1f} s"
            say(f"kit N={n} split (s): {split}{slowest}; RSS sum {kit.peak_rss_mb:.0f} MB; CPU {kit.cpu / n:.2f} s per submission")
        for n, (_, _, stock) in rows.items():
            if stock:
                split = ", ".join(f"{k} {v:.1f}" for k, v in stock.phases.items())
                say(f"stock N={n} split (s): {split}; RSS sum {stock.peak_rss_mb:.0f} MB; "
                    f"CPU {stock.cpu / n:.2f} s per submission")
        for line in skipped:
            say(line)

        if args.profile:
            profile_kit(tmp, texts)

        both = [(n, kit, stock) for n, (_, kit, stock) in rows.items() if stock]
        if not both:
            raise BenchError("no size was run on both sides")
        wrong = [n for n, (people, kit, stock) in rows.items() if not agree(people, kit, stock, full)]
        if wrong:
            say(f"\nSCORES DISAGREE at N={', '.join(map(str, wrong))}: an honest submission without full marks on "
                "a side, or a submission the kit did not record (see above)")
        n, kit, stock = both[-1]
        if args.stock_pytest:  # the variant a course with pytest in its grade cells would pay: labelled, never the headline
            people = rows[n][0]
            variant = stock_side(tmp, n, people, texts, args.cell_timeout, runner="run_suite_under_pytest")
            say(f"\nstock with pytest.main in its grade cells, N={n}: autograde {variant.grade:.1f} s, "
                f"whole job {variant.whole:.1f} s")
            say(f"pytest-variant whole-job ratio: {variant.whole / kit.whole:.1f}")
            say(f"pytest-variant ratio: {variant.grade / kit.grade:.1f}")
        say(f"\nbench took {time.perf_counter() - begin:.0f} s; the largest size run on both sides is N={n}"
            + ("" if n == max(sizes) else f" (not N={max(sizes)}: see above)") + ", against stock calling the checks directly")
        for line in headline(both, notebook_seconds):
            say(line)
        return 2 if wrong else 0
    except BenchError as exc:
        say(f"bench failed: {exc}")
        return 1
    finally:
        if not args.keep:  # --keep: the folder named on the first line stays
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
