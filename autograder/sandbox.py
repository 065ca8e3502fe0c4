"""Run a notebook's code in a child process, under limits, and bring back plain data only.

This is the one way the kit executes a notebook: the student's `pytest` self-check and the
instructor's grader both use it. The design, from the outside in:

* `Sandbox` (the caller's side) starts one *worker*: a fresh interpreter that imports numpy and
  the trusted modules once, so no check pays for them again.
* For each program (a list of cells) the worker forks a *loader* that confines itself (time,
  memory, output, no privileges when the grader is root) and runs the cells once. A batch of
  calls then runs in the loader itself, one call after another (a call sees what earlier ones
  changed), or, sent `fresh`, each in a *check child* forked from the loaded state, so that no
  call can disturb the next; `call` sends one call, fresh. A call that ends its process costs only
  itself: the worker loads the program again for the rest, and runs them a child each.
* A call names a trusted function `module:function`; the check child runs `function(ns, **kwargs)`
  on the notebook's namespace and sends back JSON. Nothing else crosses: no pickles, no objects.
* The worker, which never runs student code, enforces the wall-clock limit and kills whatever the
  student's code left behind (it is a child subreaper on Linux).

Every failure comes back as an `Outcome` with a one-line `reason`.
"""
from __future__ import annotations

import builtins
import dataclasses
import gc
import io
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["Cell", "Limits", "Outcome", "Sandbox", "describe_exception", "program_from_notebook"]


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Limits:
    """What one check may use. The grader reads these from nbgrader_config.py."""

    seconds: float = 3.0  # wall-clock time for one check, and for loading the notebook's cells
    memory_mb: int = 1024  # address space the student's code may add to the worker's
    output_kb: int = 1024  # what the student's code may print before it is stopped


@dataclass(frozen=True)
class Cell:
    """One piece of a program: `name` is shown in messages as "cell <name>" (a grade_id, or the
    index of a cell the student added)."""

    name: str
    source: str


@dataclass
class Outcome:
    """What came back from one call: a value, or a one-line reason it has none."""

    ok: bool
    value: Any = None
    reason: str = ""
    limit: str = ""  # "time", "memory" or "output" when a limit ended it
    load_errors: list[str] = field(default_factory=list)  # cells that raised while loading


# --------------------------------------------------------------- notebook -> program

_MAGIC = re.compile(r"^(\s*)([%!])")


def _strip_magics(source: str) -> str:
    """Comment out IPython magics and shell escapes: plain Python cannot run them."""
    if source.lstrip().startswith("%%"):
        return "\n".join("# " + line for line in source.splitlines())
    return "\n".join(_MAGIC.sub(r"\1# \2", line) for line in source.splitlines())


def _nbgrader(cell: Mapping) -> Mapping:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _text(cell: Mapping) -> str:
    """A cell's source: saved notebooks may store it as a list of lines."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _role(cell: Mapping) -> str:
    """given | solution | test | demo | other, from a (trusted) source cell's metadata."""
    meta = _nbgrader(cell)
    if "demo" in cell.get("metadata", {}).get("tags", []):
        return "demo"
    if meta.get("solution"):
        return "solution"
    if meta.get("grade"):
        return "test"
    if meta.get("locked"):
        return "given"
    return "other"


def program_from_notebook(
    notebook: Mapping,
    source: Mapping | None = None,
    release: Mapping | None = None,
    student_cells: Iterable[str] | str = "all",
) -> list[Cell]:
    """The code to run for `notebook`, in the order of the trusted `source` notebook.

    Test cells and cells tagged `demo` are left out (the checks replace the first; the second only
    illustrate). Given cells come from `source`, so an edited copy changes nothing. Solution cells
    named in `student_cells` come from `notebook`; the others from `release`, the public release
    (blank stubs), so a check of one part runs no other part's code, the student's or the reference's:
    the grader's probes build what else they need. No solution cell is ever taken from `source`
    (the instructor's copy holds the answers): one missing from `release` raises. Cells the student
    added run where they stand, after the known cell before them. Without `source` and `release`
    (the self-check) the notebook is its own source and release.
    """
    source = source or notebook
    release = release or notebook
    take_all = student_cells == "all"
    wanted = set() if take_all else set(student_cells)
    blank_text = {_nbgrader(c).get("grade_id"): _text(c) for c in release.get("cells", [])}

    student_text: dict[str, str] = {}
    added: dict[str | None, list[Cell]] = {}  # extra cells, keyed by the known cell before them
    known = {_nbgrader(c).get("grade_id") for c in source["cells"]} - {None}
    anchor = None
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        gid = _nbgrader(cell).get("grade_id")
        if gid in known and gid not in student_text:
            student_text[gid] = _text(cell)
            anchor = gid
        else:  # added by the student, or a duplicate of a known cell: runs as written
            added.setdefault(anchor, []).append(Cell(str(index), _strip_magics(_text(cell))))

    program = list(added.get(None, []))
    for cell in source["cells"]:
        gid, role = _nbgrader(cell).get("grade_id"), _role(cell)
        if not gid:  # prose, or (in the self-check) a cell the student added: placed above
            continue
        if cell.get("cell_type") == "code" and role not in ("test", "demo"):
            if role != "solution":
                text = _text(cell)
            elif take_all or gid in wanted:
                text = student_text.get(gid, f"raise RuntimeError('the cell {gid} is missing from the notebook')")
            else:
                text = blank_text.get(gid, f"raise RuntimeError('the cell {gid} is missing from the release')")
            program.append(Cell(gid, _strip_magics(text)))
        program.extend(added.get(gid, []))
    return program


# ------------------------------------------------------------- one-line explanations


def _in_notebook(filename: str) -> bool:
    """Code from a notebook cell: the sandbox's "<cell ...>", or IPython's in a live kernel."""
    return filename.startswith(("<cell", "<ipython-input")) or "ipykernel_" in filename


def _where(exc: BaseException) -> str | None:
    """The innermost notebook function the exception passed through."""
    where = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        if _in_notebook(frame.f_code.co_filename):
            where = frame.f_code.co_qualname
    return where if where != "<module>" else None


def describe_exception(exc: BaseException) -> str:
    """`Class.method raised Type: message`, naming the innermost notebook function involved."""
    where = _where(exc)
    if isinstance(exc, NotImplementedError) and where:
        return f"{where} is not written yet: replace `raise NotImplementedError()` with your code"
    if isinstance(exc, SyntaxError):
        return f"{(exc.filename or 'a cell').strip('<>')} has a syntax error on line {exc.lineno}: {exc.msg}"
    if isinstance(exc, MemoryError):
        return f"{where or 'the code'} ran out of memory"
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return f"{where} raised {what}" if where else f"raised {what}"


def _describe_exit(exc: BaseException) -> str:
    """For exceptions that are not Exceptions: they end the program, so they end the check."""
    where = _where(exc)
    what = (f"called sys.exit({exc.code!r}), which ends the program" if isinstance(exc, SystemExit)
            else f"raised {type(exc).__name__}, which stops the program")
    return f"{where} {what}" if where else what


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return "used more CPU time than the limit allows"
        if sig == signal.SIGKILL:
            return "was killed (out of memory?)"
        return f"crashed ({signal.Signals(sig).name})"
    return f"ended the process (os._exit({os.WEXITSTATUS(status)})?) before the check finished"


# ------------------------------------------------------------------- the child side

_report: Callable[[dict], None] = lambda msg: None  # where a limit breach is reported
_CPU_SECONDS = 5  # CPU seconds one call may use; set from the limits when a loader confines itself


def _send(fd: int, message: dict) -> None:
    data = (json.dumps(message, default=_plain, allow_nan=True) + "\n").encode()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _plain(obj: Any) -> Any:
    """numpy arrays and scalars become lists and numbers; anything else is refused."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not plain data")


class _CappedText(io.TextIOBase):
    """stdout/stderr for student code: discards text, and stops the code past the limit."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def write(self, text: str) -> int:
        self.left -= len(text)
        if self.left < 0:
            _report({"ok": False, "limit": "output", "reason": "printed more than the output limit allows"})
            os._exit(0)
        return len(text)

    def writable(self) -> bool:
        return True


def _confine(limits: Limits, isolation: Any, workdir: str) -> None:
    """Everything a loader does to itself before it runs a line of student code."""
    import resource

    os.setpgid(0, 0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdout = sys.stderr = _CappedText(limits.output_kb * 1024)
    sys.stdin = io.StringIO()
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large file becomes an OSError
    extra = limits.memory_mb * 1024 * 1024
    # CPU time is a soft limit only: each check child raises it for each call it runs (_run_calls).
    global _CPU_SECONDS
    _CPU_SECONDS = int(limits.seconds) + 2
    rules = [(resource.RLIMIT_CPU, _CPU_SECONDS, resource.RLIM_INFINITY),
             (resource.RLIMIT_FSIZE, limits.output_kb * 1024, limits.output_kb * 1024)]
    try:
        with open("/proc/self/statm") as statm:
            address_space = int(statm.read().split()[0]) * resource.getpagesize() + extra
            rules.append((resource.RLIMIT_AS, address_space, address_space))
    except OSError:  # not Linux: no address-space limit to lean on
        pass
    for which, soft, hard in rules:
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass
    os.chdir(workdir)
    if isolation is not None:
        isolation.drop()


def _load(cells: list[list[str]], results: int) -> dict:
    """Run the cells like a notebook with errors allowed: an exception ends only its cell."""
    global _report
    _report = lambda msg: _send(results, {"event": "fatal", **msg})
    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    errors = []
    for name, text in cells:
        _send(results, {"event": "cell", "name": name})
        try:
            exec(compile(text, f"<cell {name}>", "exec"), ns)
        except Exception as exc:
            errors.append(f"cell {name}: {describe_exception(exc)}")
        except BaseException as exc:
            _send(results, {"event": "fatal", "reason": f"cell {name} {_describe_exit(exc)}"})
            os._exit(0)
    _send(results, {"event": "loaded", "errors": errors})
    return ns


def _run_calls(ns: dict, modules: dict[str, CodeType], calls: list[dict], results: int) -> None:
    """Run each call on `ns` in turn (in the loader, or in a check child) and send one message per call to `results`.

    The functions come from a fresh run of their module's code, compiled before any student code
    ran: whatever the notebook did to the module objects it could reach is not used. Each call
    gets its own CPU allowance (the wall-clock limit is the worker's to enforce).
    """
    global _report
    import resource

    _report = lambda msg: _send(results, {"event": "result", **msg})
    trusted: dict[str, dict] = {}
    for call in calls:
        module_name, name = call["function"].split(":")
        used = resource.getrusage(resource.RUSAGE_SELF)
        allowance = int(used.ru_utime + used.ru_stime + _CPU_SECONDS)
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (allowance, resource.RLIM_INFINITY))
        except (ValueError, OSError):
            pass
        try:
            if module_name not in trusted:
                trusted[module_name] = {"__name__": module_name, "__builtins__": builtins}
                exec(modules[module_name], trusted[module_name])
            message = {"ok": True, "value": trusted[module_name][name](ns, **call["kwargs"])}
        except MemoryError as exc:
            message = {"ok": False, "limit": "memory", "reason": describe_exception(exc)}
        except Exception as exc:
            message = {"ok": False, "reason": describe_exception(exc)}
        except BaseException as exc:
            message = {"ok": False, "reason": _describe_exit(exc)}
        try:
            _send(results, {"event": "result", **message})
        except (TypeError, ValueError) as exc:
            _send(results, {"event": "result", "ok": False,
                            "reason": f"returned something that is not plain data ({exc})"})


def _run_batch(ns: dict, modules: dict[str, CodeType], calls: list[dict], results: int, fresh: bool) -> None:
    """In the loader: answer every call of a batch on `results`, one message each, in order.

    `fresh`: each call runs in its own child, forked from the loaded program; a child that dies
    answers for its call. Otherwise the loader runs the calls itself, one after another: the worker
    loads the program again for the rest if one of them ends the process.
    """
    if not fresh:
        _run_calls(ns, modules, calls, results)
        return
    for call in calls:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _run_calls(ns, modules, [call], write_end)
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as answer:
            line = answer.readline()
        _, status = os.waitpid(pid, 0)
        try:
            json.loads(line)
        except ValueError:  # nothing, or a line cut short by the child's death
            line = (json.dumps({"event": "result", "ok": False, "reason": _describe_status(status)}) + "\n").encode()
        os.write(results, line)


def _loader_main(cells, limits, isolation, workdir, commands: int, results: int, modules: dict) -> None:
    """The loader: confine, load the cells, then answer calls until the session hangs up."""
    try:
        _confine(limits, isolation, workdir)
        ns = _load(cells, results)
        gc.freeze()  # the loaded program is shared by every check child: no collection needs to touch it
        with os.fdopen(commands, "r") as calls:
            for line in calls:
                batch = json.loads(line)
                _run_batch(ns, modules, batch["calls"], results, batch["fresh"])
    finally:
        os._exit(0)


# ------------------------------------------------------------------ the worker side


class _Lines:
    """Read newline-ended JSON messages from a pipe, with a deadline.

    Student code can write anything to the pipes it holds: a line that is not a JSON object (cut
    short, nested past the parser's depth, or longer than `limit` bytes) reads as {"event": "garbled"}.
    """

    def __init__(self, fd: int, limit: int = 1 << 24) -> None:
        self.fd, self.buffer, self.limit = fd, b"", limit
        self.selector = selectors.DefaultSelector()
        self.selector.register(fd, selectors.EVENT_READ)

    def next(self, deadline: float | None = None) -> dict | None:
        """The next message; {} at end of file; None when the deadline passes first."""
        while b"\n" not in self.buffer:
            left = None if deadline is None else deadline - time.monotonic()
            if (left is not None and left <= 0) or not self.selector.select(left):
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return {}
            self.buffer += chunk
            if len(self.buffer) > self.limit and b"\n" not in self.buffer:
                self.buffer = b""
                return {"event": "garbled"}
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return {"event": "garbled"}
        return message if isinstance(message, dict) else {"event": "garbled"}

    def close(self) -> None:
        self.selector.close()
        os.close(self.fd)


class _Loader:
    """The session's handle on one loaded program."""

    def __init__(self, cells, config: dict, modules: dict, session: "_Session") -> None:
        self.failure, self.errors, self.session = None, [], session
        limits = Limits(**config["limits"])
        commands_r, self.commands = os.pipe()
        results, results_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            _close_fds_except({0, 1, 2, commands_r, results_w})
            _loader_main(cells, limits, session.isolation, session.workdir, commands_r, results_w, modules)
        os.close(commands_r)
        os.close(results_w)
        self.lines = _Lines(results)
        self.seconds = limits.seconds
        self._wait_loaded()

    def _deadline(self) -> float:
        return min(time.monotonic() + self.seconds, self.session.budget_end)

    def _time_out(self, what: str) -> dict:
        """Why `what` has no answer at the deadline: the check's own time, or the submission's."""
        if time.monotonic() >= self.session.budget_end:
            return {"limit": "time budget", "reason": f"{what} was stopped: the submission used its {self.session.budget:g} s"}
        return {"limit": "time", "reason": f"{what} did not finish within {self.seconds:g} s (an infinite loop?)"}

    def _wait_loaded(self) -> None:
        cell = "the first cell"
        while True:
            message = self.lines.next(self._deadline())
            if message is None:
                self.failure = self._time_out(f"cell {cell}")
            elif message.get("event") == "cell" and isinstance(message.get("name"), str):
                cell = message["name"][:40]
                continue
            elif message.get("event") == "loaded":
                errors = message.get("errors")
                self.errors = [str(e)[:300] for e in errors[:20]] if isinstance(errors, list) else []
                return
            elif message.get("event") == "fatal":
                self.failure = _clean(message)
                self.failure.pop("ok")
            else:
                self.failure = {"reason": f"cell {cell} {self._ended(message)}"}
            self.stop()
            return

    def run(self, calls: list[dict], fresh: bool) -> list[dict]:
        """Answers to `calls`, in order, each within the time limit from the end of the one before.

        Fewer answers than calls when the loader ended on the way (it is then stopped): after a
        time-out, a failure to load, or a call that ended the process.
        """
        if self.failure:
            return [{"ok": False, **self.failure}]
        try:
            os.write(self.commands, (json.dumps({"calls": calls, "fresh": fresh}) + "\n").encode())
        except OSError:
            self.failure = {"reason": "the notebook's process ended before the check could start"}
            return [{"ok": False, **self.failure}]
        answers = []
        for _ in calls:
            message = self.lines.next(self._deadline())
            if message is None:
                answers.append({"ok": False, **self._time_out("the check")})
                self.stop()
                break
            if message.get("event") != "result":
                answers.append({"ok": False, "reason": self._ended(message)})
                self.stop()
                break
            answers.append(_clean(message))
            if answers[-1]["limit"] == "output":  # the process stopped itself after saying so
                self.stop()
                break
        return answers

    def _ended(self, message: dict) -> str:
        """Why the loader sent no answer: it ended, or it wrote something that is not one."""
        status = self._status()
        return "wrote to the grader's pipe something that is not an answer" if message else status

    def _status(self) -> str:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        return _describe_status(status)

    def stop(self) -> None:
        """Kill the loader, its group, and (by reaping the session's orphans) everything it started."""
        if self.pid:
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            os.waitpid(self.pid, 0)
            self.pid = 0
        if self.commands >= 0:
            os.close(self.commands)
            self.lines.close()
            self.commands = -1
        _reap_orphans()
        if self.session.isolation is not None:
            self.session.isolation.note_scratch()


_LIMITS = ("memory", "output")  # the limits a loader may report itself; time is the session's to judge


def _clean(message: dict) -> dict:
    """An answer as the grader may take it: the loader runs student code, so every field is checked."""
    ok = message.get("ok") is True
    reason = message.get("reason")
    limit = message.get("limit")
    return {"ok": ok, "value": message.get("value") if ok else None,
            "reason": " ".join(reason.split())[:500] if isinstance(reason, str) and not ok else
                      ("" if ok else "sent an answer the grader cannot read"),
            "limit": limit if limit in _LIMITS else ""}


def _close_fds_except(keep: set[int]) -> None:
    """A loader keeps only its own pipes: not the worker's protocol, not other loaders' pipes."""
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 256))
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _children() -> list[int]:
    """The worker's child processes: from the kernel's list when it keeps one, else from all of /proc."""
    me = os.getpid()
    try:
        with open(f"/proc/self/task/{me}/children") as children:
            return [int(pid) for pid in children.read().split()]
    except OSError:
        pass
    found = []
    try:
        entries = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:  # no /proc: nothing more we can find
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat") as stat:
                if int(stat.read().rsplit(")", 1)[1].split()[1]) == me:
                    found.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return found


def _reap_orphans() -> None:
    """Kill and reap every process the worker adopted (a student's daemons end up here)."""
    while orphans := _children():
        for pid in orphans:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def _become_subreaper() -> None:
    """Orphans of the student's code get this worker as their parent, so it can end them."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _import_path(name: str, path: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _Session:
    """Serves one submission: its programs and calls, until the caller ends it.

    Forked from the worker for each submission (confined first by the isolation, when there is
    one), so no session holds anything of another submission, and ending it ends all it started.
    """

    def __init__(self, config: dict, modules: dict, isolation: Any, workdir: str, budget: float) -> None:
        self.config, self.modules, self.isolation = config, modules, isolation
        self.workdir = isolation.workdir if isolation is not None else workdir
        self.budget, self.budget_end = budget, time.monotonic() + budget
        self.loader: _Loader | None = None

    def serve(self) -> None:
        _become_subreaper()  # a student's daemons end up here, to be killed with their loader
        requests, replies = _Lines(0, limit=sys.maxsize), os.fdopen(os.dup(1), "w")
        replies.write(json.dumps({"ready": True}) + "\n")
        replies.flush()
        cells: list = []
        while (request := requests.next()) and "end" not in request:
            if "cells" in request:  # a new program; otherwise the caller means the one it sent last
                cells = request["cells"]
                if self.loader:
                    self.loader.stop()
                    self.loader = None
            answers = self.answer(cells, request["calls"], request["fresh"])
            load_errors = self.loader.errors if self.loader else []
            replies.write(json.dumps({"answers": answers, "load_errors": load_errors}) + "\n")
            replies.flush()
        if self.loader:
            self.loader.stop()

    def answer(self, cells: list, calls: list[dict], fresh: bool) -> list[dict]:
        answers: list[dict] = []
        while len(answers) < len(calls) and time.monotonic() < self.budget_end:
            loader = self.loader
            if loader is None or (loader.pid == 0 and not loader.failure):  # not loaded, or ended by a call
                loader = self.loader = _Loader(cells, self.config, self.modules, self)
            answers += loader.run(calls[len(answers):], fresh)
            if loader.failure or answers[-1].get("limit") in ("time", "time budget"):
                break
            fresh = True  # a call ended the process: the rest run one child each, so one crash costs one call
        if self.loader and self.loader.failure:  # the program could not load: every call says why
            rest = {"ok": False, **self.loader.failure}
        elif time.monotonic() >= self.budget_end:
            rest = {"ok": False, "limit": "time budget", "reason": f"not run: the submission used its {self.budget:g} s"}
        else:
            rest = {"ok": False, "reason": "not run: an earlier check of this part ran out of time"}
        return answers + [dict(rest) for _ in calls[len(answers):]]


def _serve(config: dict) -> None:
    """The worker: import once, then start a session per submission as the caller asks.

    It never holds student code itself: each session is forked from it and gets the programs.
    """
    sys.path[:0] = config["path"]
    for name in config["preload"]:
        __import__(name)
    modules = {}
    for name, path in config["modules"].items():
        _import_path(name, path)  # fails here, not in a check, if it is broken; warms its imports
        modules[name] = compile(Path(path).read_text(), path, "exec")
    isolation = None
    if config["isolation"]:
        settings = config["isolation"]
        module = _import_path("isolation", settings["path"])
        isolation = module.Isolation(settings["uid_base"], module.Budgets(**settings["budgets"]), settings["hide"])
    _become_subreaper()
    gc.freeze()  # sessions, loaders and check children inherit these objects; collections in them skip them
    workdir = tempfile.mkdtemp(prefix="sandbox-")
    os.chmod(workdir, 0o755)
    requests, replies = _Lines(0, limit=sys.maxsize), os.fdopen(os.dup(1), "w")
    replies.write(json.dumps({"ready": isolation.level if isolation else "none"}) + "\n")
    replies.flush()
    # One request at a time: while a session runs, it alone reads the requests (this process waits).
    while request := requests.next():
        if isolation:
            isolation.begin()
        pid = _start_session(_Session(config, modules, isolation, workdir, request["begin"]))
        _, status = os.waitpid(pid, 0)
        _reap_orphans()
        hit = isolation.end(status) if isolation else []
        replies.write(json.dumps({"budgets": hit}) + "\n")
        replies.flush()
    os.rmdir(workdir)


def _start_session(session: _Session) -> int:
    """Fork the process that serves one submission; it tells the caller in one line if it cannot start."""
    pid = os.fork()
    if pid:
        return pid
    try:
        if session.isolation:
            session.isolation.enter()
        session.serve()
    except Exception as exc:
        os.write(1, (json.dumps({"error": f"the submission's sandbox could not start: {exc}"}) + "\n").encode())
    finally:
        os._exit(session.isolation.exit_code if session.isolation else 0)


# -------------------------------------------------------------- the caller's side

# Modules a notebook commonly imports; the worker imports them once so checks start warm (and so
# they work after privileges are dropped, when the interpreter's own files may be unreadable).
PRELOAD = (
    "numpy", "numpy.linalg", "numpy.random", "numpy.fft", "secrets", "hashlib", "math", "cmath",
    "random", "statistics", "fractions", "decimal", "numbers", "itertools", "functools", "operator",
    "collections", "collections.abc", "heapq", "bisect", "contextlib", "dataclasses", "typing", "types",
    "copy", "weakref", "time", "datetime", "string", "re", "textwrap", "json", "struct", "inspect",
    "traceback", "warnings", "abc", "enum",
)

_THREADS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


class Sandbox:
    """A warmed worker that runs calls on programs, one submission at a time. Use as a context manager.

    modules: trusted modules the calls may name, as {module name: file path}.
    path: folders put in front of the worker's sys.path (the assignment's folder, for `engine`).
    preload: more modules to import once in the worker (after `path` is set), so the notebook's
        imports of them work even when student code may not read their files.
    isolation: for the grader running as root, how to confine each submission (autograder/isolation.py):
        {"path": that file, "uid_base": where its uid search starts, "budgets": {...}, "hide": [paths]}.

    `begin` starts a submission's session with a time budget and `end` ends it; a call outside a
    session starts one with no time budget.
    """

    def __init__(
        self,
        modules: Mapping[str, str | os.PathLike],
        path: Sequence[str | os.PathLike] = (),
        limits: Limits = Limits(),
        preload: Sequence[str] = (),
        isolation: Mapping[str, Any] | None = None,
    ) -> None:
        self.limits = limits
        self.config = {
            "modules": {name: str(Path(p).resolve()) for name, p in modules.items()},
            "path": [str(Path(p).resolve()) for p in path],
            "preload": [*PRELOAD, *preload],
            "limits": dataclasses.asdict(limits),
            "isolation": dict(isolation) if isolation else None,
        }
        self.worker: subprocess.Popen | None = None
        self.level = ""  # the isolation the worker could set up (isolation.py names the levels)
        self.sent: Sequence[Cell] | None = None  # the program the session holds
        self.session = False
        self.budget = self.budget_end = float("inf")
        self.ended: list[str] = []  # budgets the last session hit, when it ended by itself

    def _start(self) -> None:
        self.worker = subprocess.Popen(
            # -B: the worker imports the assignment's modules from their folder and must write nothing there
            [sys.executable, "-I", "-B", __file__, json.dumps(self.config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **_THREADS},
            text=True,
        )
        ready = self._receive()
        if not ready or "ready" not in ready:
            self.close()
            raise RuntimeError("the sandbox worker could not start (is numpy installed?)")
        self.level = ready["ready"]

    def _send(self, request: dict) -> None:
        self.worker.stdin.write(json.dumps(request) + "\n")
        self.worker.stdin.flush()

    def _receive(self) -> dict | None:
        try:
            return json.loads(self.worker.stdout.readline())
        except (OSError, ValueError, RecursionError):
            return None

    def begin(self, seconds: float = float("inf")) -> None:
        """Start a submission's session, with `seconds` of wall-clock time for all its checks."""
        if self.session:
            self.end()
        if self.worker is None:
            self._start()
        self._send({"begin": seconds if seconds != float("inf") else 1e9})
        reply = self._receive()
        if reply is None:
            self.close()
            raise RuntimeError("the sandbox worker stopped")
        if "error" in reply:
            self._receive()  # the worker's word that the session ended
            raise RuntimeError(reply["error"])
        self.session, self.sent, self.ended = True, None, []
        self.budget, self.budget_end = seconds, time.monotonic() + seconds

    def end(self) -> list[str]:
        """End the session: everything its code started ends with it. The budgets it hit."""
        if not self.session:
            return self.ended
        self.session = False
        try:
            self._send({"end": True})
        except OSError:
            self.close()
            return []
        reply = self._receive() or {}
        return list(reply.get("budgets", []))

    def call(self, cells: Sequence[Cell], function: Callable | str, **kwargs: Any) -> Outcome:
        """Load `cells` (reusing the loaded program when it is the same) and run one call alone."""
        return self.call_many(cells, [(function, kwargs)], fresh=True)[0]

    def call_many(self, cells: Sequence[Cell], calls: Sequence[tuple[Callable | str, dict]],
                  fresh: bool = False) -> list[Outcome]:
        """Run `calls` on the loaded `cells`, in order, in one request: an Outcome each.

        They run one after another in the loaded program's process, so a call can see what an
        earlier one changed; with `fresh`, each runs in its own child and sees only the loaded program.
        """
        if not calls:
            return []
        if not self.session:
            self.begin()
        left = self.budget_end - time.monotonic()
        if left <= 0:
            reason = f"not run: the submission used its {self.budget:g} s"
            return [Outcome(False, reason=reason, limit="time budget") for _ in calls]
        request: dict[str, Any] = {"fresh": fresh, "calls": [
            {"function": f if isinstance(f, str) else f"{f.__module__}:{f.__name__}", "kwargs": kwargs}
            for f, kwargs in calls]}
        if cells != self.sent:
            request["cells"] = [[c.name, c.source] for c in cells]
            self.sent = list(cells)
        try:
            self._send(request)
        except OSError:
            self.close()
            return [Outcome(False, reason="stopped the grader's worker process") for _ in calls]
        result = self._receive()
        if result is None or "answers" not in result:  # the worker was killed, or the session failed
            reason = (result or {}).get("error", "stopped the grader's worker process")
            if result is not None:
                self.session, self.ended = False, list((self._receive() or {}).get("budgets", []))
            else:
                self.close()
            return [Outcome(False, reason=reason) for _ in calls]
        errors = result.get("load_errors", [])
        return [Outcome(ok=a.get("ok", False), value=a.get("value"), reason=a.get("reason", ""),
                        limit=a.get("limit", ""), load_errors=errors) for a in result["answers"]]

    def close(self) -> None:
        if self.worker:
            if self.session:
                self.end()
            for stream in (self.worker.stdin, self.worker.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            try:
                self.worker.wait(timeout=self.limits.seconds + 5)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                self.worker.wait()
            self.worker = None
            self.sent = None
            self.session = False

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


if __name__ == "__main__":
    _serve(json.loads(sys.argv[1]))
