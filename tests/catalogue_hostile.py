"""The hostile and broken catalogue: a small class graded together in one `make grade` run.

Each entry is a student folder under submitted/<student>/dl01_6_3/ and what must hold for it after the
run. Hostile code is put either on the blank release (so any point it earns was stolen, and it must score
0) or into one stub of the reference (so it must lose that stub's part and keep the others: it earns no more
than its honest work). Honest students sit in the same class; their scores must equal what each gets when
graded alone. tests/test_catalogue_hostile.py runs the class and checks every entry; the README's
"Catalogues" section is written from this list.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from nbformat.v4 import new_code_cell

from autograder.mutate import Mutation, apply
from catalogue_bugs import LESSON, PARTS

NOTEBOOK = "modules_and_sgd.ipynb"
SLEEP_MARK = "777.25"  # `sleep 777.25`: the process the `leave-a-process` student starts, found by its argument


@dataclass(frozen=True)
class Hostile:
    student: str  # the folder name under submitted/
    did: str  # what the submission does, one line
    files: Callable[[dict, dict], dict[str, str]]  # (reference, release) -> {file name: content}
    max_total: float | None = None  # the score may not exceed this (None: the parts below decide)
    loses: tuple[str, ...] = ()  # parts that must score less than full marks
    keeps: tuple[str, ...] = ()  # parts that must keep full marks
    reason: str = ""  # one line the summary and/or the feedback must say (case-insensitive)
    summary: bool = False  # the summary must carry `reason` on a line naming the student
    honest: bool = False  # graded alone (`python -m autograder grade --json`) it must score the same
    limit: str = ""  # the limit the summary must say it hit: time, memory or output
    root_only: bool = False  # what must hold rests on dropping privileges, which needs the grader to run as root
    gap: str = ""  # set when the grader does not hold this today (its checks are xfail strict)


def notebook(nb: dict) -> str:
    return json.dumps(nb, indent=1) + "\n"


def only(nb: dict) -> dict[str, str]:
    return {NOTEBOOK: notebook(nb)}


def with_top_cell(nb: dict, source: str) -> dict:
    """`nb` with a code cell the student added above everything else."""
    result = json.loads(json.dumps(nb))
    result["cells"].insert(0, new_code_cell(source))
    return result


def sabotage(cell: str, function: str, body: str) -> Callable[[dict, dict], dict[str, str]]:
    """The reference with one stub's body replaced."""
    return lambda reference, release: only(apply(reference, [Mutation(cell, function, body)]))


def on_blank(source: str) -> Callable[[dict, dict], dict[str, str]]:
    """The blank release with a code cell added at the top."""
    return lambda reference, release: only(with_top_cell(release, source))


def without_solution_cells(reference: dict, release: dict) -> dict[str, str]:
    nb = json.loads(json.dumps(reference))
    nb["cells"] = [c for c in nb["cells"] if not (c.get("metadata", {}).get("nbgrader", {}).get("solution")
                                                   and c["cell_type"] == "code")]
    return only(nb)


def edited_test_cells(reference: dict, release: dict) -> dict[str, str]:
    """The blank release whose test cells print PASS and claim 100 points each."""
    nb = json.loads(json.dumps(release))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell["cell_type"] == "code":
            cell["source"] = "print('PASS')"
            meta["points"] = 100
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "PASS\n"}]
    return only(nb)


def duplicated_cells(reference: dict, release: dict) -> dict[str, str]:
    """The reference with every solution and test cell pasted twice (same grade_id)."""
    nb = json.loads(json.dumps(reference))
    cells = []
    for cell in nb["cells"]:
        cells.append(cell)
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and (meta.get("solution") or meta.get("grade")):
            cells.append(json.loads(json.dumps(cell)))
    nb["cells"] = cells
    return only(nb)


def course_root() -> str:
    """Student code that finds the course directory from the engine module it imports."""
    return "import engine, pathlib\nroot = pathlib.Path(engine.__file__).resolve().parents[2]\n"


HIDDEN_FILES = ("autograder/dl01_6_3/test_step.py", "autograder/dl01_6_3/probes.py",
                "solutions/dl01_6_3/modules_and_sgd.ipynb", "source/dl01_6_3/modules_and_sgd.ipynb")

READ_EVERYTHING = course_root() + f"""\
found, refused = [], []
paths = [root / name for name in {HIDDEN_FILES!r}]
for folder in ("autograder", "solutions", "source"):
    paths += sorted((root / folder).rglob("*"))
for path in paths:
    try:
        if path.is_dir():
            continue
        text = path.read_text(errors="replace")
        print(text)
        found.append((path, text))
    except OSError as error:
        refused.append(f"{{path.relative_to(root)}}: {{type(error).__name__}}")
hidden = [text for path, text in found if "dl01_6_3" in str(path)]
raise RuntimeError(" | ".join(hidden) if hidden else f"refused: {{'; '.join(refused)}}; read {{len(found)}} other files")"""

WRITE_EVERYWHERE = course_root() + """\
results = []
for target, mode in (("gradebook.db", "ab"), ("grades.csv", "w"), ("submitted/ada/dl01_6_3/modules_and_sgd.ipynb", "w"),
                     ("submitted/ada/dl01_6_3/extra.txt", "w"), ("nbgrader_config.py", "a"), ("autograder/report.py", "a")):
    try:
        with open(root / target, mode) as handle:
            handle.write(b"owned" if "b" in mode else "owned")
        results.append(f"{target}: WRITTEN")
    except OSError as error:
        results.append(f"{target}: {type(error).__name__}")
raise RuntimeError("; ".join(results))"""

READ_CLASSMATES = course_root() + """\
results = []
for target in ("submitted/ada/dl01_6_3/modules_and_sgd.ipynb", "gradebook.db"):
    try:
        data = (root / target).read_bytes()
        results.append(f"{target}: READ {len(data)} bytes {data[:40]!r}")
    except OSError as error:
        results.append(f"{target}: {type(error).__name__}")
raise RuntimeError("; ".join(results))"""

PATCH_NUMPY = """\
import numpy as np
import numpy.testing
yes = lambda *args, **kwargs: True
for name in ("allclose", "isclose", "array_equal", "array_equiv", "all", "any"):
    setattr(np, name, yes)
for name in ("assert_allclose", "assert_array_equal", "assert_equal", "assert_array_almost_equal", "assert_almost_equal"):
    setattr(np.testing, name, lambda *args, **kwargs: None)"""

# Rewrite what measures the student: the probes (loaded in the same process) and the sandbox's reply.
FORGE_PROBES = """\
import sys
probes = sys.modules["probes"]
answers = {
    "lesson_worked_example": lambda ns, zero_between: {"z": [-1.3, 1.46, 0.908 if zero_between else 3.668],
                                                       "loss": [5.29, 0.2116, 0.008464 if zero_between else 2.668 ** 2]},
    "parameter_count": lambda ns, widths, seed=0: {"count": sum(o * (i + 1) for i, o in zip(widths[:-1], widths[1:])),
                                                   "shapes": [s for i, o in zip(widths[:-1], widths[1:]) for s in ([o, i], [o])]},
}
for name, fake in answers.items():
    getattr(probes, name).__code__ = fake.__code__"""

LEAVE_A_PROCESS = f"""\
import subprocess
subprocess.Popen(["sleep", "{SLEEP_MARK}"], start_new_session=True)
for p in self.params:
    p.data -= self.lr * p.grad"""

ALL_BUT = lambda *lost: tuple(p for p in PARTS if p not in lost)  # noqa: E731

HOSTILE: list[Hostile] = [
    # ------------------------------------------------------------------ honest students in the same class
    Hostile("ada", "the reference solution", lambda ref, rel: only(ref), keeps=PARTS, honest=True),
    Hostile("grace", "one bug: zero_grad() that does nothing",
            sabotage("sgd", "SGD.zero_grad", "pass"),
            loses=("test_zero_grad", LESSON), keeps=ALL_BUT("test_zero_grad", LESSON), honest=True),
    Hostile("blank", "the blank release, unchanged", lambda ref, rel: only(rel), max_total=0, honest=True),

    # ------------------------------------------------------------------ ending the process
    Hostile("exit-top", "sys.exit(0) in a code cell added at the top (blank release)", on_blank("import sys\nsys.exit(0)"),
            max_total=0, reason="called sys.exit(0), which ends the program"),
    Hostile("os-exit-top", "os._exit(0) in a code cell added at the top (blank release)", on_blank("import os\nos._exit(0)"),
            max_total=0, reason="ended the process (os._exit(0)?)"),
    Hostile("exit-in-stub", "sys.exit(0) inside step() (reference otherwise)",
            sabotage("sgd", "SGD.step", "import sys\nsys.exit(0)"),
            loses=("test_step", LESSON), keeps=ALL_BUT("test_step", LESSON), reason="called sys.exit(0)"),
    Hostile("os-exit-in-stub", "os._exit(0) inside zero_grad() (reference otherwise)",
            sabotage("sgd", "SGD.zero_grad", "import os\nos._exit(0)"),
            loses=("test_zero_grad", LESSON), keeps=ALL_BUT("test_zero_grad", LESSON), reason="os._exit(0)"),

    # ------------------------------------------------------------------ limits
    Hostile("loop-in-stub", "an infinite loop inside forward() (reference otherwise)",
            sabotage("linear", "Linear.forward", "while True:\n    pass"),
            loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON),
            reason="did not finish within 3 s (an infinite loop?)", limit="time"),
    Hostile("loop-top", "an infinite loop in a code cell added at the top (blank release)", on_blank("while True:\n    pass"),
            max_total=0, reason="did not finish within 3 s", limit="time"),
    Hostile("memory-50gb", "np.ones((50*10**9//8,)) (50 GB) inside parameters() (reference otherwise)",
            sabotage("module", "Module.parameters", "return list(np.ones((50 * 10**9 // 8,)))"),
            loses=("test_parameters", LESSON), keeps=ALL_BUT("test_parameters", LESSON),
            reason="ran out of memory", limit="memory"),
    Hostile("print-100mb", "prints 100 MB inside no_grad() (reference otherwise)",
            sabotage("no_grad", "no_grad", "print('x' * 100_000_000)\nprevious = Tensor.recording\n"
                                           "Tensor.recording = False\ntry:\n    yield\nfinally:\n    Tensor.recording = previous"),
            loses=("test_no_grad", LESSON), keeps=ALL_BUT("test_no_grad", LESSON),
            reason="printed more than the output limit allows", limit="output"),
    Hostile("leave-a-process", "starts `sleep` in its own session from step(), then steps correctly (reference otherwise)",
            sabotage("sgd", "SGD.step", LEAVE_A_PROCESS), keeps=PARTS),

    # ------------------------------------------------------------------ cheating the checks
    Hostile("patch-numpy", "replaces numpy.allclose, isclose, array_equal and numpy.testing's asserts (blank release)",
            on_blank(PATCH_NUMPY), max_total=0),
    Hostile("forge-probes", "rewrites the hidden probes it can reach in its process to return the lesson's numbers (blank release)",
            on_blank(FORGE_PROBES), max_total=0),

    # ------------------------------------------------------------------ files
    Hostile("read-hidden", "reads every file under autograder/, solutions/ and source/, prints it and raises it (in forward)",
            sabotage("linear", "Linear.forward", READ_EVERYTHING),
            loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON), reason="PermissionError",
            root_only=True),
    Hostile("read-classmates", "reads another student's notebook and gradebook.db and raises what it read (in forward)",
            sabotage("linear", "Linear.forward", READ_CLASSMATES),
            loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON),
            reason="submitted/ada/dl01_6_3/modules_and_sgd.ipynb: PermissionError; gradebook.db: PermissionError",
            root_only=True),
    Hostile("write-files", "writes to gradebook.db, grades.csv, another student's folder, nbgrader_config.py and the "
                           "grader's code (in parameters)",
            sabotage("module", "Module.parameters", WRITE_EVERYWHERE),
            loses=("test_parameters", LESSON), keeps=ALL_BUT("test_parameters", LESSON), root_only=True,
            reason="gradebook.db: PermissionError; grades.csv: PermissionError; "
                   "submitted/ada/dl01_6_3/modules_and_sgd.ipynb: PermissionError; "
                   "submitted/ada/dl01_6_3/extra.txt: PermissionError; nbgrader_config.py: PermissionError; "
                   "autograder/report.py: PermissionError"),

    # ------------------------------------------------------------------ broken or odd files
    Hostile("not-json", "a file that is not JSON", lambda ref, rel: {NOTEBOOK: "this is not json {"},
            max_total=0, reason="is not a readable notebook", summary=True),
    Hostile("empty", "an empty file", lambda ref, rel: {NOTEBOOK: ""}, max_total=0,
            reason="is not a readable notebook", summary=True),
    Hostile("no-solution-cells", "the reference with its solution cells deleted", without_solution_cells,
            max_total=0, reason="cells missing from the notebook: module, linear, sgd, no_grad", summary=True),
    Hostile("edited-test-cells", "the blank release whose test cells print PASS and claim 100 points", edited_test_cells,
            max_total=0, reason="locked cells edited, graded as released: test_forward", summary=True),
    Hostile("duplicated-cells", "the reference with every solution and test cell pasted twice", duplicated_cells,
            keeps=PARTS, reason="cells pasted more than once: module, linear", summary=True),
    Hostile("renamed", "the reference saved as 'modules_and_sgd (1).ipynb'",
            lambda ref, rel: {"modules_and_sgd (1).ipynb": notebook(ref)}, keeps=PARTS,
            reason="graded 'modules_and_sgd (1).ipynb' as modules_and_sgd.ipynb", summary=True),
    Hostile("two-notebooks", "modules_and_sgd.ipynb (the reference) and Untitled.ipynb (the blank release) in one folder",
            lambda ref, rel: {NOTEBOOK: notebook(ref), "Untitled.ipynb": notebook(rel)}, keeps=PARTS,
            reason="only modules_and_sgd.ipynb is graded", summary=True),
    Hostile("two-renamed", "two notebooks, neither named modules_and_sgd.ipynb",
            lambda ref, rel: {"a.ipynb": notebook(ref), "b.ipynb": notebook(rel)}, max_total=0,
            reason="no modules_and_sgd.ipynb in the submission", summary=True),
]
