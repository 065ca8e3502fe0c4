"""Runs the public checks (test_<part>.py in this folder) on the notebook's code, each part in a child process.

`pytest` (conftest.py) runs each part on the notebook as last saved; a test cell of the notebook calls
`check("<part>", globals())`, which runs the same checks on the kernel's code. Either way a child process
runs them: a check that ends the process or runs over CHECK_SECONDS fails alone (the kernel goes on), and a
part stops after TIMEOUTS such. The child starts by forking on Linux and as a new Python elsewhere (fork is
unsafe on macOS, absent on Windows); NOTEBOOK_CHECKS_START=fork|spawn|forkserver chooses. The notebook's cells
run as Jupyter's kernel runs them (runner.py). Needs NumPy.
"""
from __future__ import annotations

import importlib.util
import multiprocessing
import os
import re
import sys
import warnings
from collections import Counter
from pathlib import Path

from cells import bound_by, graded_cells, left_out, saved_cells, schema_reason
from explain import describe_exception, is_a, own_streams, printable, where, why_missing
from facts import Missing, Names
from runner import CHECK_SECONDS, HERE, NOT_WRITTEN, run_cells

NOTEBOOK = HERE / "modules_and_sgd.ipynb"
LOAD_SECONDS = 10.0  # for running the notebook's cells in a new child (CHECK_SECONDS: one check, in runner.py)
START_SECONDS = 60.0  # for a new child to start Python and import NumPy (a new Python on a slow laptop)
TIMEOUTS = 3  # a part stops after this many of its checks ran out of time: about 10 s at most
CALL = re.compile(r'from notebook_checks import check\ncheck\("\w+", globals\(\)\)')  # a test cell, as released


def start_method() -> str:
    """How a child starts: NOTEBOOK_CHECKS_START if set, else fork on Linux and spawn elsewhere."""
    return os.environ.get("NOTEBOOK_CHECKS_START") or ("fork" if sys.platform.startswith("linux") else "spawn")


def load(path: Path = NOTEBOOK, as_graded: bool = False) -> tuple[dict, list[tuple[str, str | frozenset | None]]]:
    """run_cells on the cells of the notebook saved at `path` the grade runs as code, as it runs them (graded_cells);
    a cell the grade runs otherwise than Jupyter is a note with the names it binds (bound_by). `as_graded`: edited
    given cells run as released, as in the grade, and their note leads every failure (None: it explains any)."""
    runs, notes = graded_cells(*saved_cells(path), as_graded=as_graded)
    names, errors = run_cells(runs)
    return names, errors + [(note, None if as_graded else bound_by(source)) for note, source in notes]


def loads(path: Path) -> list[tuple[dict, list]]:
    """load of the notebook saved at `path`; then, where you edited a given cell (Jupyter runs your text, the grade
    the released copy), load as_graded too: a check passes only if it passes on both (_verdict)."""
    saved = saved_cells(path)
    edited = graded_cells(*saved)[0] != graded_cells(*saved, as_graded=True)[0]
    return [load(path)] + ([load(path, as_graded=True)] if edited else [])


def checks(part: str) -> list:
    """(name, function) for each check of test_<part>.py, in file order (loaded afresh: plain asserts)."""
    spec = importlib.util.spec_from_file_location(f"public_checks_{part}", HERE / f"test_{part}.py")
    spec.loader.exec_module(module := importlib.util.module_from_spec(spec))
    return [(name, fn) for name, fn in vars(module).items() if name.startswith("test_") and callable(fn)]


def run_check(fn, names: dict, load_errors: list) -> tuple[bool, str]:
    """(passed, one-line message) for one check on the notebook's `names` (nb.Linear), after the note of each
    edited given cell that can explain its failure."""
    # as the engine starts: no earlier cell's or check's no_grad() counts (the engine's Tensor, which the given code
    # uses: the notebook's name may be rebound to anything, np.ndarray for type hints)
    tensor = getattr(sys.modules.get("engine"), "Tensor", None)
    if isinstance(tensor, type) and "recording" in vars(tensor):
        tensor.recording = True
    nb, Names.read = Names(**names), set()
    try:
        fn(nb)
        return True, ""
    except BaseException as exc:  # noqa: B036 - a KeyboardInterrupt too: the grade names it, the checks go on
        # An edited cell may explain what the notebook's code raised (it may call into it), or a check's own
        # assert on a name it binds; not an assert on names it never binds.
        own = is_a(exc, AssertionError) and where(exc) is None
        return False, "; ".join([*(reason for reason, binds in load_errors if not isinstance(binds, str) and (
            binds is None or not own or binds & Names.read)), _failure(exc, load_errors)])


def _verdict(fn, loaded: list[tuple[dict, list]]) -> tuple[bool, str]:
    """run_check on each of `loaded` (loads) until one fails: as Jupyter runs the cells, then as the grade does."""
    results = (run_check(fn, names, errors) for names, errors in loaded)
    return next((result for result in results if not result[0]), (True, ""))


def _failure(exc: BaseException, load_errors: list) -> str:
    if is_a(exc, Missing):  # a name the notebook does not define
        missing, because = exc.args[0], why_missing(exc.args[0], load_errors)
        return f"the notebook defines no {missing} " + (f"(because {because})" if because else
                                                         "(run the cells above, in Jupyter; pytest reads the notebook as last saved)")
    if is_a(exc, AssertionError) and where(exc) is None:  # the check's own assert
        return (str(exc).strip().splitlines() or ["the check failed"])[0]
    return describe_exception(exc)


def _kernel_cells(history: list[str]) -> list[tuple[str, str]]:
    """The cells a kernel ran before this one (IPython's In), as run_cells takes them: not a test cell (its exact
    released text, CALL), nor a run of a cell the grade leaves out (cells.left_out, by its saved text: a cell the
    student tagged `demo` runs, as in the grade). A text that a cell the grade runs holds too (a demo edited to the
    text of an added cell) drops one entry per left-out cell, the latest; any other, every run of it."""
    saved = saved_cells(NOTEBOOK) if NOTEBOOK.exists() else ([], None)
    out, runs = Counter(left_out(*saved)), {source.strip() for _, source in graded_cells(*saved)[0]}
    kept = []
    for n, source in reversed(list(enumerate(history))):
        text = source.strip()
        if out[text]:
            out[text] -= text in runs
        elif text and not CALL.fullmatch(text):
            kept.append((f"In[{n}]", source))
    return kept[::-1]


def _kernel_errors(history: list[str]) -> list[tuple[str, str]]:
    """(reason, source), the latest first, for each cell a kernel ran that stops at a blank answer."""
    blank = [source for source in history if re.search(r"(?m)^raise NotImplementedError", source)]
    return [(f"the cell that sets it {NOT_WRITTEN}", source) for source in reversed(blank)]


def check(part: str, namespace: dict) -> None:
    """For a notebook test cell: run the checks of `part` on the kernel's code, printing a line each."""
    with warnings.catch_warnings():  # Python 3.12+ warns that a kernel has threads: the child uses none
        warnings.simplefilter("ignore", DeprecationWarning)
        # IPython stores a cell in In before it runs it: the last is the one calling check, not run again
        results = run_part(part, kernel=(namespace, [str(source) for source in namespace.get("In", [])][:-1]))
    for name, (passed, message) in results.items():
        print(printable(f"PASS {name}" if passed else f"FAIL {name}: {message}"))
    for note, _ in graded_cells(*saved_cells(NOTEBOOK))[1] if NOTEBOOK.exists() else []:  # the kernel ran no copy
        print(printable(f"NOTE {note}"))
    if failed := sum(not passed for passed, _ in results.values()):
        raise AssertionError(f"{failed} of {len(results)} checks of {part} failed; see the lines above") from None


def _child(part: str, start: int, source, pipe) -> None:
    """In the child: load the code (a saved notebook's path, a forked kernel's names, or a kernel's history
    to run again), then run the part's checks from number `start`, sending each result."""
    own_streams()
    import engine  # noqa: F401 - NumPy and the engine: start-up, timed by START_SECONDS, not LOAD_SECONDS
    pipe.send(("started",))
    try:
        loaded = loads(Path(source)) if isinstance(source, str) else [(
            source[0] or run_cells(_kernel_cells(source[1]))[0], _kernel_errors(source[1]))]
    except Exception as exc:
        return pipe.send(("unreadable", f"{Path(str(source)).name} could not be read as a notebook ({exc})"))
    pipe.send(("loaded",))
    for name, fn in checks(part)[start:]:
        pipe.send((name, *_verdict(fn, loaded)))


def run_part(part: str, path: Path = NOTEBOOK, method: str | None = None,
             kernel: tuple[dict, list[str]] | None = None) -> dict[str, tuple[bool, str]]:
    """{check name: (passed, message)} for each check of `part` on the notebook saved at `path` (or on a
    kernel's (names, history)), run in a child process; after a check that times out or ends the process,
    a new child runs the rest."""
    names = [name for name, _ in checks(part)]
    if kernel is None and (invalid := schema_reason(path)):  # once, here: nbformat takes a second to import
        return {name: (False, f"the grade does not grade {Path(path).name}: {invalid}") for name in names}
    context = multiprocessing.get_context(method or start_method())
    # A forked child has the kernel's names; a new Python runs the kernel's cells again.
    source = str(path) if kernel is None else (kernel if context.get_start_method() == "fork" else (None, kernel[1]))
    results, timeouts = {}, 0
    while len(results) < len(names) and timeouts < TIMEOUTS:
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(part, len(results), source, send), daemon=True)
        child.start()
        send.close()  # the child's end: once the child is gone, recv() sees EOF
        stage = "starting"
        while len(results) < len(names):
            running = names[len(results)]
            limit = {"starting": START_SECONDS, "started": LOAD_SECONDS}.get(stage, CHECK_SECONDS)
            if not receive.poll(limit):
                timeouts += 1
                if stage == "loaded":
                    results[running] = (False, f"did not finish within {CHECK_SECONDS:g} s (an infinite loop?)")
                else:
                    message = (f"loading the notebook did not finish within {LOAD_SECONDS:g} s (a loop in a cell?)"
                               if stage == "started" else f"Python with NumPy did not start within {limit:g} s")
                    results.update({name: (False, message) for name in names if name not in results})
                break
            try:
                message = receive.recv()
            except EOFError:
                child.join(5)
                results[running] = (False, f"the process ended during this check (exit code {child.exitcode}): "
                                           "a crash, or sys.exit() / os._exit() in your code?")
                break
            if message[0] == "unreadable":
                results.update({name: (False, message[1]) for name in names if name not in results})
            elif message[0] in ("started", "loaded"):
                stage = message[0]
            else:
                results[message[0]] = (message[1], message[2])
        child.kill()
        child.join()
        receive.close()
    return {name: results.get(name, (False, f"not run: {TIMEOUTS} checks of {part} ran out of time"))
            for name in names}
