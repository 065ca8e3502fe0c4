"""Runs the public checks (test_<part>.py in this folder) on the notebook's code; standard library only.

`pytest` (conftest.py) runs each part on the notebook as last saved, in a child process (fork, else spawn, as
on Windows): a check that ends the process or runs over CHECK_SECONDS fails alone, and a part stops after
TIMEOUTS such. A test cell of the notebook calls `check("<part>", globals())`: the same checks in the kernel.
"""
import importlib.util
import json
import multiprocessing
import os
import re
import sys
import traceback
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE / "modules_and_sgd.ipynb"
CHECK_SECONDS, LOAD_SECONDS = 3.0, 10.0  # for one check; for loading the notebook in a new child process
TIMEOUTS = 3  # a part stops after this many of its checks ran out of time: about 10 s at most
START = os.environ.get("NOTEBOOK_CHECKS_START") or ("fork" if hasattr(os, "fork") else "spawn")
# What a terminal acts on (C0 but newline and tab, DEL, C1): removed from every line printed, since a message
# can quote the notebook (an exception's text, a type's name). The grader's autograder/inert.py does the same.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` without the control characters a terminal would act on."""
    return CONTROL.sub("", text)


def _where(exc: BaseException) -> str | None:
    """The innermost notebook code (a cell's function, or "<module>") the exception passed through."""
    codes = [frame.f_code for frame, _ in traceback.walk_tb(exc.__traceback__)]
    cells = [c for c in codes if c.co_filename.startswith(("<cell", "<ipython-input")) or "ipykernel_" in c.co_filename]
    return getattr(cells[-1], "co_qualname", cells[-1].co_name) if cells else None


def describe_exception(exc: BaseException) -> str:
    """One line: `Class.method raised Type: message`, naming the innermost notebook function involved."""
    where = None if _where(exc) == "<module>" else _where(exc)
    if isinstance(exc, NotImplementedError) and where:
        return f"{where} is not written yet: replace `raise NotImplementedError()` with your code"
    if isinstance(exc, SyntaxError):
        return f"{(exc.filename or 'a cell').strip('<>')} has a syntax error on line {exc.lineno}: {exc.msg}"
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return f"{where} raised {what}" if where else f"raised {what}"


def load(path: Path = NOTEBOOK) -> tuple[dict, list[tuple[str, str]]]:
    """Run the notebook's code cells in order, but test cells and demonstrations (tag `demo`); magics are
    skipped. Returns the names defined and (reason, source) for each cell that raised (loading goes on)."""
    sys.path.insert(0, str(HERE))  # the notebook imports engine.py from this folder
    names, errors = {"__name__": "__main__"}, []
    for index, cell in enumerate(json.loads(Path(path).read_text(encoding="utf-8"))["cells"]):
        meta = cell.get("metadata", {})
        grading = meta.get("nbgrader", {})
        if cell.get("cell_type") != "code" or "demo" in meta.get("tags", []) or (
                grading.get("grade") and not grading.get("solution")):  # a test cell, or a demonstration
            continue
        source = "".join(cell.get("source", ""))
        source = "" if source.lstrip().startswith("%%") else re.sub(r"(?m)^(\s*)([%!])", r"\1# \2", source)
        name = grading.get("grade_id", str(index))
        try:
            exec(compile(source, f"<cell {name}>", "exec"), names)
        except (Exception, SystemExit) as exc:
            blank = isinstance(exc, NotImplementedError) and _where(exc) == "<module>"
            reason = "is not written yet: replace `raise NotImplementedError()` with your answer" if blank \
                else describe_exception(exc)
            errors.append((f"cell {name} {reason}", source))
    return names, errors


def checks(part: str) -> list:
    """(name, function) for each check of test_<part>.py, in file order (loaded afresh: plain asserts)."""
    spec = importlib.util.spec_from_file_location(f"public_checks_{part}", HERE / f"test_{part}.py")
    spec.loader.exec_module(module := importlib.util.module_from_spec(spec))
    return [(name, fn) for name, fn in vars(module).items() if name.startswith("test_") and callable(fn)]


def run_check(fn, names: dict, load_errors: list[tuple[str, str]]) -> tuple[bool, str]:
    """(passed, one-line message) for one check on the notebook's `names`, given as attributes (nb.Linear)."""
    tensor, recording = names.get("Tensor"), getattr(names.get("Tensor"), "recording", None)
    nb = types.SimpleNamespace(**names)
    try:
        fn(nb)
        return True, ""
    except (Exception, SystemExit) as exc:
        if isinstance(exc, AttributeError) and exc.obj is nb:  # a name the notebook does not define
            because = [reason for reason, source in load_errors if re.search(rf"\b{exc.name}\b", source)]
            return False, f"the notebook defines no {exc.name} " + (f"(because {because[0]})" if because else
                          "(run the cells above, in Jupyter; pytest reads the notebook as last saved)")
        if isinstance(exc, AssertionError) and _where(exc) is None:  # the check's own assert
            return False, (str(exc).strip().splitlines() or ["the check failed"])[0]
        return False, describe_exception(exc)
    finally:
        if recording is not None:
            tensor.recording = recording  # a broken no_grad() must not switch recording off for later checks


def check(part: str, namespace: dict) -> None:
    """For a notebook test cell: run the checks of `part` on the kernel's names, printing a line each."""
    results = [(name, *run_check(fn, namespace, [])) for name, fn in checks(part)]
    for name, passed, message in results:
        print(printable(f"PASS {name}" if passed else f"FAIL {name}: {message}"))
    if failed := sum(not passed for _, passed, _ in results):
        raise AssertionError(f"{failed} of {len(results)} checks of {part} failed; see the lines above") from None


def _child(part: str, start: int, path: str, pipe) -> None:
    """In the child: load the notebook, then run the part's checks from number `start`, sending each result."""
    try:
        names, errors = load(Path(path))
    except Exception as exc:
        return pipe.send(("unreadable", f"{Path(path).name} could not be read as a notebook ({exc})"))
    pipe.send(("loaded",))
    for name, fn in checks(part)[start:]:
        pipe.send((name, *run_check(fn, names, errors)))


def run_part(part: str, path: Path = NOTEBOOK, start_method: str | None = None) -> dict[str, tuple[bool, str]]:
    """{check name: (passed, message)} for each check of `part` on the notebook saved at `path`, run in a
    child process; after a check that times out or ends the process, a new child runs the rest."""
    names = [name for name, _ in checks(part)]
    context = multiprocessing.get_context(start_method or START)
    results, timeouts = {}, 0
    while len(results) < len(names) and timeouts < TIMEOUTS:
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(part, len(results), str(path), send), daemon=True)
        child.start()
        send.close()  # the child's end: once the child is gone, recv() sees EOF
        loaded = False
        while len(results) < len(names):
            running = names[len(results)]
            if not receive.poll(CHECK_SECONDS if loaded else LOAD_SECONDS):
                timeouts += 1
                if loaded:
                    results[running] = (False, f"did not finish within {CHECK_SECONDS:g} s (an infinite loop?)")
                else:
                    message = f"loading the notebook did not finish within {LOAD_SECONDS:g} s (a loop in a cell?)"
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
            elif message[0] != "loaded":
                results[message[0]] = (message[1], message[2])
            loaded = True
        child.kill()
        child.join()
        receive.close()
    return {name: results.get(name, (False, f"not run: {TIMEOUTS} checks of {part} ran out of time"))
            for name in names}
