"""The hostile and broken catalogue: a small class graded together in one `make grade` run.

Each entry is a student folder under submitted/<student>/dl01_6_3/ and what must hold for it after the
run. Hostile code is put either on the blank release (so any point it earns was stolen, and it must score
0) or into one stub of the reference (so it must lose that stub's part and keep the others: it earns no more
than its honest work). Honest students sit in the same class; their scores must equal what each gets when
graded alone. tests/test_catalogue_hostile.py runs the class and checks every entry; docs/catalogues.md's
"Catalogues" section is written from this list.
"""
from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from catalogue_bugs import LESSON, PARTS
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.classroom.mutate import Mutation, apply

NOTEBOOK = "modules_and_sgd.ipynb"
SLEEP_MARK = "777.25"  # `sleep 777.25`: the process the `leave-a-process` student starts, found by its argument


@dataclass(frozen=True)
class Link:
    """A symbolic link in the student's folder (as a clone or an instructor's unzip keeps it): to `target`, a
    path from the student's folder or an absolute one."""

    target: str


FIFO = object()  # a named pipe in the student's folder, in place of a file


@dataclass(frozen=True)
class Hostile:
    student: str  # the folder name under submitted/
    did: str  # what the submission does, one line
    files: Callable[[dict, dict], dict[str, str | Link | object]]  # (reference, release) -> {name: content, Link or FIFO}
    max_total: float | None = None  # the score may not exceed this (None: the parts below decide)
    loses: tuple[str, ...] = ()  # parts that must score less than full marks
    keeps: tuple[str, ...] = ()  # parts that must keep full marks
    reason: str = ""  # one line the summary and/or the feedback must say (case-insensitive)
    summary: bool = False  # the summary must carry `reason` on a line naming the student
    honest: bool = False  # graded alone (`python -m autograder grade --json`) it must score the same
    limit: str = ""  # the limit the summary must say it hit: time, memory or output
    root_only: bool = False  # what must hold rests on dropping privileges, which needs the grader to run as root
    gap: str = ""  # set when the grader does not hold this today (its checks are xfail strict)
    never: str = ""  # text that must appear neither in the summary nor on the feedback page


def notebook(nb: dict) -> str:
    return json.dumps(nb, indent=1) + "\n"


def only(nb: dict) -> dict[str, str]:
    return {NOTEBOOK: notebook(nb)}


def write_entry(folder: Path, name: str, content: str | Link | object) -> None:
    """One file of an entry's folder: its text, a link or a FIFO."""
    if isinstance(content, Link):
        (folder / name).symlink_to(content.target)
    elif content is FIFO:
        os.mkfifo(folder / name)
    else:
        (folder / name).write_text(str(content))


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


EASY_QUESTION = "Question 1 (2 points): answer with the single word yes"


def rewritten_question(reference: dict, release: dict) -> dict[str, str]:
    """The reference whose Question 1 asks something easier, and whose answer then answers that (the question is
    what the grader reads the answer against: pass 14 rewrote it, and the grading page showed it under the rubric)."""
    nb = json.loads(json.dumps(reference))
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid == "question_1":
            cell["source"] = f"### {EASY_QUESTION}"
        elif gid == "answer_zeroing":
            cell["source"] = "yes"
    return only(nb)


def question_replaced(moved_to_the_end: bool) -> Callable[[dict, dict], dict[str, str]]:
    """The reference whose locked Question 1 is deleted (or moved, unchanged, to the end), a plain cell of the
    student's asking an easier one in its place, answered so: nbgrader puts back a locked cell only where it is."""
    def files(reference: dict, release: dict) -> dict[str, str]:
        nb = json.loads(json.dumps(reference))
        ids = [cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in nb["cells"]]
        question = nb["cells"][ids.index("question_1")]
        nb["cells"][ids.index("question_1")] = new_markdown_cell(f"### {EASY_QUESTION}")
        nb["cells"][ids.index("answer_zeroing")]["source"] = "yes"
        if moved_to_the_end:
            nb["cells"].append(question)
        return only(nb)
    return files


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


def hidden_on_the_pages(reference: dict, release: dict) -> dict[str, str]:
    """The reference with every code cell tagged to carry Bootstrap's `hidden` class on the pages, its code marked
    to be left out (`transient.remove_source`) and folded away (`jupyter.source_hidden`)."""
    nb = json.loads(json.dumps(reference))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["metadata"].update(tags=["x hidden", "x modal-backdrop in"], transient={"remove_source": True},
                                    jupyter={"source_hidden": True})
    return only(nb)


def ungraded_test_cells(reference: dict, release: dict) -> dict[str, str]:
    """The reference whose test cells the student marked `grade: false` (and a plain cell marked as a graded one)."""
    nb = json.loads(json.dumps(reference))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell["cell_type"] == "code":
            meta["grade"] = False
    nb["cells"].append(new_code_cell("x = 1", metadata={"nbgrader": {"grade": True, "grade_id": "my_points", "points": 50,
                                                                     "locked": False, "solution": False, "schema_version": 3}}))
    return only(nb)


SOLUTION_FROM_SUBMITTED = "../../../solutions/dl01_6_3/modules_and_sgd.ipynb"  # from submitted/<student>/<assignment>/
LINKED_EXTRAS = {"answers.ipynb.txt": SOLUTION_FROM_SUBMITTED, "suite.py": "../../../autograder/dl01_6_3/test_step.py",
                 "grades.db": "../../../gradebook.db", "shadow": "/etc/shadow"}


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
raise RuntimeError(" | ".join(hidden) if hidden else f"read {{len(found)}} other files; refused: {{'; '.join(refused)}}")"""

WRITE_EVERYWHERE = course_root() + """\
results = []
for target, mode in (("gradebook.db", "ab"), ("grades.csv", "w"), ("submitted/ada/dl01_6_3/modules_and_sgd.ipynb", "w"),
                     ("submitted/ada/dl01_6_3/extra.txt", "w"), ("nbgrader_config.py", "a"), ("autograder/report.py", "a")):
    try:
        with open(root / target, mode) as handle:
            handle.write(b"owned" if "b" in mode else "owned")
        results.append(f"{target}: WRITTEN")
    except OSError:
        results.append(f"{target}: refused")
raise RuntimeError("; ".join(results))"""

READ_CLASSMATES = course_root() + """\
results = []
for target in ("submitted/ada/dl01_6_3/modules_and_sgd.ipynb", "gradebook.db"):
    try:
        data = (root / target).read_bytes()
        results.append(f"{target}: READ {len(data)} bytes {data[:40]!r}")
    except OSError:
        results.append(f"{target}: refused")
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

# Rewrite the loader's own replies (its writer, found in sys.modules): zero_grad's answers say every gradient is zero,
# and the lists the checks compare item by item come back empty, so that a comparison over them has nothing to fail.
FORGE_REPLIES = """\
import sys
loader = sys.modules.get("child")
if loader is not None and not hasattr(loader, "real_write"):
    loader.real_write = loader.write
    def write(fd, message, real=loader.real_write):
        value = getattr(message, "value", None)
        if isinstance(value, dict) and "grad_shapes" in value:
            value.update(grads=[[0.0] * (s[0] if s else 1) for s in value["grad_shapes"]], data=[])
        if isinstance(value, dict) and "cleared" in value and "first" in value:
            value.update(cleared=[], second=[])
        return real(fd, message)
    loader.write = write"""

LEAVE_A_PROCESS = f"""\
import subprocess
subprocess.Popen(["sleep", "{SLEEP_MARK}"], start_new_session=True)
for p in self.params:
    p.data -= self.lr * p.grad"""
# A thread that would bind a name a while after its cell ended: a grade that raced it would change from run to run
THREAD_LATER = """\
import threading
threading.Timer(0.05, lambda: globals().__setitem__("Module", None)).start()"""


def _free_port() -> int:
    """A port free on the loopback now: the class-run test listens there and no submission may connect. Drawn
    per run, so two runs of the suite on one machine (or a neighbour's server) do not take each other's."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


LISTEN_PORT = _free_port()

KILL_EVERYONE = """\
import os, signal
for pid in [-1] + list(range(2, 1 << 16)):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass"""

FORK_BOMB = """\
import os, time
for _ in range(1000):
    try:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
    except OSError:
        break"""

FILL_SCRATCH = """\
import os
for folder in ("/tmp", "/var/tmp", "/dev/shm"):  # files of 1 MB, the largest a file may be, until the space runs out
    for number in range(1 << 12):
        try:
            with open(os.path.join(folder, f"left-by-fill-scratch-{number}"), "wb") as handle:
                handle.write(b"x" * (1 << 20))
        except OSError:
            break"""

MEMORY_ACROSS_PROCESSES = """\
import os, select, time
import numpy as np
ready, done = os.pipe()
for _ in range(3):
    if os.fork() == 0:
        block = np.ones(450 * 2**20 // 8)  # each under the per-check limit of 1024 MB
        os.write(done, b"x")
        time.sleep(600)
        os._exit(0)
settled = 0  # until each child holds its block or was killed: no clock, so a busy machine changes nothing
while settled < 3:
    if select.select([ready], [], [], 0.05)[0]:
        settled += len(os.read(ready, 1))
    try:
        settled += os.waitpid(-1, os.WNOHANG)[0] > 0
    except ChildProcessError:
        break"""

GARBAGE_PROTOCOL = """\
import os
garbage = [b"[" * 100_000 + b"]" * 100_000 + b"\\n", b"x" * (20 << 20), b"\\n{not json\\n",
           b'{"event": "result", "ok": true, "value": 1}\\n', b'{"event": "loaded", "errors": 7}\\n', b"[]\\n"]
for fd in range(64):
    for chunk in garbage:
        try:
            os.write(fd, chunk)
        except OSError:
            pass"""

LOOPBACK = f"""\
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
address = struct.pack("!HH4s8x", 2, {LISTEN_PORT}, bytes([127, 0, 0, 1]))
address = struct.pack("=H", 2) + address[2:]  # sa_family in the machine's order, the port in network order
for _ in range(3):
    fd = libc.socket(2, 1, 0)
    if libc.connect(fd, address, len(address)) == 0:
        libc.send(fd, b"reached the grader's host", 25, 0)
    libc.close(fd)"""

# Issue 18: what the grader hands student code. test_catalogue_hostile.py's fixture sets these up around the run.
CANARY = "canary-hub-token-5f0c2b"  # the grader's JUPYTERHUB_API_TOKEN during the run
OTHER_CLONE = "/srv/kit-catalogue-other-clone"  # another clone of the course on the machine, readable by anyone
OTHER_CLONE_MARK = "solution-in-the-other-clone-3e9a"  # a line the fixture adds to that clone's solutions
UNIX_SOCKET = "/run/kit-catalogue.sock"  # a unix socket file outside the session, open to anyone, listened on
# The cgroup a run stopped with Ctrl-C left: its uid (below the range uids are drawn from) no live worker holds.
STALE_CGROUP = "kit-999999-stopped0-1"

ENVIRONMENT = """\
import os
raise RuntimeError("token: " + os.environ.get("JUPYTERHUB_API_TOKEN", "none") + "; environment: "
                   + " ".join(sorted(os.environ)))"""

OTHER_CLONE_READ = f"""\
import pathlib
found = []
for path in sorted(pathlib.Path({OTHER_CLONE!r}).rglob("*")):
    try:
        found.append(path.read_text()[:100]) if path.is_file() else None
    except OSError:
        pass
raise RuntimeError(f"other clone: read {{len(found)}} files " + " ".join(found))"""

# Looks for a key that another submission or an earlier run stored, in the keyrings a process can name without
# knowing a key's number, and stores one of its own there, readable by anyone. A key's payload names the
# submission that stored it by its PID namespace ("pid:[<number>]"), which all of a submission's processes share.
KEYRING = """\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL, SEARCH, READ, SETPERM = 248, 250, 10, 11, 5
mine, found = os.readlink("/proc/self/ns/pid").encode(), []
for keyring in (-3, -4, -5):  # the session, user and user-session keyrings
    serial = libc.syscall(KEYCTL, SEARCH, keyring, b"user", b"kit-catalogue-key", 0)
    payload = ctypes.create_string_buffer(64)
    if serial > 0 and libc.syscall(KEYCTL, READ, serial, payload, 64) > 0 and payload.value != mine:
        found.append(payload.value.decode())
    serial = libc.syscall(ADD_KEY, b"user", b"kit-catalogue-key", mine, len(mine), keyring)
    if serial > 0:
        libc.syscall(KEYCTL, SETPERM, serial, 0x3f3f3f3f)
raise RuntimeError((f"a key from another submission: {found[0]}" if found else "no key from another submission")
                   + f" (uid {os.getuid()})")"""

UNIX_SOCKET_SEND = f"""\
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
address = struct.pack("=H", 1) + {UNIX_SOCKET.encode()!r} + b"\\0"  # AF_UNIX, in the machine's order
fd = libc.socket(1, 1, 0)
if libc.connect(fd, address, len(address)) == 0:
    libc.send(fd, b"reached the grader's unix socket", 32, 0)
    outcome = "connected"
else:
    outcome = os.strerror(ctypes.get_errno())
raise RuntimeError("unix socket: " + outcome)"""

# Issue 29: what passes between two submissions graded at the same time through the kernel rather than a file.
# Looks for what another submission left (a key in /proc/keys, whose serial numbers are machine-wide; a System V
# message queue, semaphore set or shared memory segment under one fixed key; a POSIX message queue by name),
# then leaves each of its own, open to anyone; `message` says what it found and how each of its own fared.
# (x86_64's numbers for the key calls, which glibc does not wrap.)
KERNEL_OBJECTS = """\
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
KEY, NAME, found, left = 0x6B697429, b"/kit-catalogue-queue", [], []
try:
    found += ["key " + line.split()[0] for line in open("/proc/keys") if "kit-catalogue-object" in line]
except OSError:
    pass
for what, look in (("message queue", lambda: libc.msgget(KEY, 0)), ("semaphores", lambda: libc.semget(KEY, 0, 0)),
                   ("shared memory", lambda: libc.shmget(KEY, 0, 0)), ("POSIX queue", lambda: libc.mq_open(NAME, 0))):
    if look() >= 0:
        found.append(what)
serial = libc.syscall(248, b"user", b"kit-catalogue-object", b"answers", 7, -4)  # add_key, to the user keyring
made = [("key", serial, ctypes.get_errno()), ("setperm", libc.syscall(250, 5, serial, 0x3F3F3F3F), ctypes.get_errno())]
for what, make in (("message queue", lambda: libc.msgget(KEY, 0o1666)), ("semaphores", lambda: libc.semget(KEY, 1, 0o1666)),
                   ("shared memory", lambda: libc.shmget(KEY, 4096, 0o1666)),
                   ("POSIX queue", lambda: libc.mq_open(NAME, 0o102, 0o666, None))):
    made.append((what, make(), ctypes.get_errno()))
left = "; ".join(f"{what} " + ("made" if number >= 0 else errno.errorcode.get(code, str(code))) for what, number, code in made)
message = ("kernel objects from another " + "submission: " + ", ".join(found) if found
           else "no kernel object from another submission") + f" (left: {left})\""""

# Ways to signal to a submission graded at the same time without making a kernel object: a lock, an inotify watch
# or a shared futex on a file both sessions map (the C library: the same inode at every level), and a name (an
# abstract socket).
# Each call's errno, or "made" (the other session would see it).
SHARED_FILE_SIGNALS = """\
import ctypes, errno, fcntl, struct
libc = ctypes.CDLL(None, use_errno=True)
shared, start = next((line.split()[-1], int(line.split("-")[0], 16)) for line in open("/proc/self/maps")
                     if "libc.so" in line or "libc-" in line)
held = open(shared, "rb")
def tried(what, call):
    try:
        call()
        return what + " made"
    except OSError as error:
        return what + " " + errno.errorcode[error.errno]
def raising(number):
    if number < 0:
        raise OSError(ctypes.get_errno(), "")
address = struct.pack("=H", 1) + b"\\0kit-kernel-objects"  # AF_UNIX, abstract
outcomes = [tried("flock", lambda: fcntl.flock(held, fcntl.LOCK_SH | fcntl.LOCK_NB)),
            tried("OFD lock", lambda: fcntl.fcntl(held, 37, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))),
            tried("watch", lambda: raising(libc.inotify_add_watch(libc.inotify_init1(0), shared.encode(), 0x21))),
            tried("socket", lambda: raising(libc.socket(1, 1, 0))),
            tried("bind", lambda: raising(libc.bind(held.fileno(), address, len(address)))),  # else ENOTSOCK
            # FUTEX_WAKE without the private flag, on a word of the library's page (x86_64's futex)
            tried("futex", lambda: raising(libc.syscall(202, ctypes.c_void_p(start), 1, 1, 0, 0, 0)))]
message = "; ".join(outcomes)\
"""
SHARED_FILE_REFUSED = "flock EPERM; OFD lock EPERM; watch EPERM; socket EAFNOSUPPORT; bind EPERM; futex EPERM"

# Each rewrites json.dumps in its process, which the loader's own protocol calls to write each answer, so that
# every answer it sends the grader is `payload` (with "ok": true): a 2 MB list of numbers, a list nested 500
# deep (within what json takes in the process that writes it), or 900 KB of text, under the limit of one
# answer, many times over the submission's.
FORGED_ANSWERS = """\
import json
payload = {payload}
def dumps(message, *args, _dumps=json.dumps, **kwargs):
    if isinstance(message, dict) and message.get("event") == "result":
        message = {{**message, "ok": True, "value": payload}}
    return _dumps(message, *args, **kwargs)
json.dumps = dumps"""
HUGE_ANSWERS = FORGED_ANSWERS.format(payload="[0.5] * 400_000")
DEEP_ANSWERS = FORGED_ANSWERS.format(payload="0.5\nfor _ in range(500):\n    payload = [payload]")
MANY_ANSWERS = FORGED_ANSWERS.format(payload="'x' * 900_000")

# Shrinks its commands pipe to one page, so a batch of calls no longer fits, then stops itself as the loader
# opens that pipe to read (os.fdopen is the os module's, which the loader shares with student code).
PIPE_SHRINK_STOP = """\
import fcntl, os, signal
for fd in map(int, os.listdir("/proc/self/fd")):
    try:
        if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:") and fcntl.fcntl(fd, fcntl.F_GETFL) & 3 == os.O_RDONLY:
            fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ
    except OSError:
        pass
os.fdopen = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGSTOP)"""

ALL_BUT = lambda *lost: tuple(p for p in PARTS if p not in lost)  # noqa: E731 (one line, beside the table that uses it)

HOSTILE: list[Hostile] = [
    # ------------------------------------------------------------------ honest students in the same class
    Hostile("ada", "the reference solution", lambda ref, rel: only(ref), keeps=PARTS, honest=True),
    Hostile("grace", "one bug: zero_grad() that does nothing",
            sabotage("sgd", "SGD.zero_grad", "pass"),
            loses=("test_zero_grad", LESSON), keeps=ALL_BUT("test_zero_grad", LESSON), honest=True),
    Hostile("blank", "the blank release, unchanged", lambda ref, rel: only(rel), max_total=0, honest=True),

    # ------------------------------------------------------------------ ending the process
    Hostile("exit-top", "sys.exit(0) in a code cell added at the top (blank release)", on_blank("import sys\nsys.exit(0)"),
            max_total=0, reason="called sys.exit(0) (line 2), which stops the cell there"),
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
            reason="did not finish within 3 s of CPU time (an infinite loop?)", limit="time"),
    # The loader stops the cell at 3 s and the cells below run (red-c26 X35-c26-2): no limit ends the load, the blank
    # stubs score 0, and the exercises' messages name the cell's stop
    Hostile("loop-top", "an infinite loop in a code cell added at the top (blank release)", on_blank("while True:\n    pass"),
            max_total=0, reason="cell 0: did not finish within 3 s of CPU time"),
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
    Hostile("thread-top", "starts a thread that binds a name later, in a code cell added at the top (reference "
                          "otherwise)", lambda reference, release: only(with_top_cell(reference, THREAD_LATER)),
            keeps=PARTS),

    # ------------------------------------------------------------------ cheating the checks
    Hostile("patch-numpy", "replaces numpy.allclose, isclose, array_equal and numpy.testing's asserts (blank release)",
            on_blank(PATCH_NUMPY), max_total=0),
    Hostile("forge-probes", "rewrites the hidden probes it can reach in its process to return the lesson's numbers (blank release)",
            on_blank(FORGE_PROBES), max_total=0),
    Hostile("hidden-on-the-pages", "tags every code cell `x hidden` and `x modal-backdrop in` (Bootstrap's classes on the "
                                   "pages) and marks its code to be left out and folded away (reference otherwise)",
            hidden_on_the_pages, keeps=PARTS, never="celltag_x hidden"),
    Hostile("forge-replies", "zero_grad() does nothing, and a top cell rewrites the loader's replies: zero gradients, and "
                             "empty lists where the checks compare item by item (reference otherwise)",
            lambda reference, release: only(with_top_cell(apply(reference, [Mutation("sgd", "SGD.zero_grad", "pass")]),
                                                          FORGE_REPLIES)),
            loses=("test_zero_grad",), reason="the notebook changed what the check reports"),

    # ------------------------------------------------------------------ files
    Hostile("read-hidden", "reads every file under autograder/, solutions/ and source/, prints it and raises it (in forward)",
            sabotage("linear", "Linear.forward", READ_EVERYTHING),
            loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON), reason="read 0 other files",
            root_only=True),
    Hostile("read-classmates", "reads another student's notebook and gradebook.db and raises what it read (in forward)",
            sabotage("linear", "Linear.forward", READ_CLASSMATES),
            loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON),
            reason="submitted/ada/dl01_6_3/modules_and_sgd.ipynb: refused; gradebook.db: refused",
            root_only=True),
    Hostile("write-files", "writes to gradebook.db, grades.csv, another student's folder, nbgrader_config.py and the "
                           "grader's code (in parameters)",
            sabotage("module", "Module.parameters", WRITE_EVERYWHERE),
            loses=("test_parameters", LESSON), keeps=ALL_BUT("test_parameters", LESSON), root_only=True,
            reason="gradebook.db: refused; grades.csv: refused; submitted/ada/dl01_6_3/modules_and_sgd.ipynb: refused; "
                   "submitted/ada/dl01_6_3/extra.txt: refused; nbgrader_config.py: refused; autograder/report.py: refused"),

    # ------------------------------------------------------------------ broken or odd files
    Hostile("not-json", "a file that is not JSON", lambda ref, rel: {NOTEBOOK: "this is not json {"},
            max_total=0, reason="is not a readable notebook", summary=True),
    Hostile("empty", "an empty file", lambda ref, rel: {NOTEBOOK: ""}, max_total=0,
            reason="is not a readable notebook", summary=True),
    Hostile("bad-timestamp", "the reference with a timestamp.txt of its own that holds no time (and an escape "
            "sequence), which failed nbgrader's whole autograde with a traceback",
            lambda ref, rel: {NOTEBOOK: notebook(ref), "timestamp.txt": "\x1b[31mon time, honest\n"}, max_total=0,
            reason="its timestamp.txt does not hold a time nbgrader can read", summary=True),
    Hostile("no-solution-cells", "the reference with its solution cells deleted", without_solution_cells,
            max_total=0, reason="cells missing from the notebook: module, linear, exercise_count, sgd, exercise_second_step, no_grad", summary=True),
    Hostile("edited-test-cells", "the blank release whose test cells print PASS and claim 100 points", edited_test_cells,
            max_total=0, reason="locked cells edited, graded as released: test_forward", summary=True),
    Hostile("rewritten-question", "the reference with Question 1 rewritten to an easy one, and answered",
            rewritten_question, keeps=PARTS, reason="locked cells edited, graded as released: question_1", summary=True,
            never=EASY_QUESTION),
    Hostile("deleted-question", "the reference with Question 1 deleted and an easy one of the student's in its place, "
            "answered", question_replaced(moved_to_the_end=False), keeps=PARTS,
            reason="cells missing from the notebook: question_1", summary=True),
    Hostile("moved-question", "the reference with Question 1 moved to the end and an easy one of the student's in its "
            "place, answered", question_replaced(moved_to_the_end=True), keeps=PARTS,
            reason="cells moved from their place in the release, shown where the student put them: question_1",
            summary=True),
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

    # ------------------------------------------------------------------ files that are not files (issue 29)
    # A clone or an instructor's unzip keeps links; the grader runs as root. Only the intake's copy is read.
    Hostile("link-to-solution", f"modules_and_sgd.ipynb is a symbolic link to {SOLUTION_FROM_SUBMITTED}",
            lambda ref, rel: {NOTEBOOK: Link(SOLUTION_FROM_SUBMITTED)}, max_total=0,
            reason="'modules_and_sgd.ipynb' is not a readable notebook (it is a symbolic link, not a file", summary=True),
    Hostile("linked-extras", "the blank release beside links to the reference, a hidden suite, gradebook.db and "
                             "/etc/shadow (nbgrader used to copy each into feedback/)",
            lambda ref, rel: {NOTEBOOK: notebook(rel), **{name: Link(target) for name, target in LINKED_EXTRAS.items()}},
            max_total=0, reason="not read: 'answers.ipynb.txt' (a symbolic link), 'grades.db' (a symbolic link)",
            summary=True),
    Hostile("link-dev-zero", "the reference beside a link to /dev/zero (it used to fill the disk)",
            lambda ref, rel: {NOTEBOOK: notebook(ref), "data.bin": Link("/dev/zero")}, keeps=PARTS,
            reason="not read: 'data.bin' (a symbolic link)", summary=True),
    Hostile("fifo-notebook", "modules_and_sgd.ipynb is a FIFO no one writes to",
            lambda ref, rel: {NOTEBOOK: FIFO}, max_total=0,
            reason="'modules_and_sgd.ipynb' is not a readable notebook (it is a FIFO, not a file", summary=True),
    Hostile("metadata-not-graded", "the reference whose test cells say `grade: false`, with a cell of its own marked "
                                   "as a 50-point grade cell (nbgrader used to fail on it: 'the grader failed')",
            ungraded_test_cells, keeps=PARTS,
            reason="cell metadata edited by the student, graded as released: test_forward, test_parameters,",
            summary=True),

    # ------------------------------------------------------------------ malformed notebooks (issue 9, item 4)
    # Each once stopped `make grade` before feedback and grades.csv; now each is not graded, with its reason.
    Hostile("source-dict", "the reference whose locked cells have a source that is a JSON object",
            lambda ref, rel: only({**ref, "cells": [
                {**c, "source": {"code": c["source"]}} if c["metadata"].get("nbgrader", {}).get("locked") else c
                for c in ref["cells"]]}),
            max_total=0, reason="has a source that is an object, not a string or a list of strings", summary=True),
    Hostile("grade-id-list", "the reference whose locked cells have a grade_id that is a list",
            lambda ref, rel: only({**ref, "cells": [
                {**c, "metadata": {**c["metadata"], "nbgrader": {**c["metadata"]["nbgrader"],
                                                                 "grade_id": [c["metadata"]["nbgrader"]["grade_id"]]}}}
                if c["metadata"].get("nbgrader", {}).get("locked") else c for c in ref["cells"]]}),
            max_total=0, reason="has metadata.nbgrader.grade_id that is a list, not a string", summary=True),
    Hostile("nbgrader-string", "the reference whose locked cells have metadata.nbgrader that is a string",
            lambda ref, rel: only({**ref, "cells": [
                {**c, "metadata": {**c["metadata"], "nbgrader": "locked"}}
                if c["metadata"].get("nbgrader", {}).get("locked") else c for c in ref["cells"]]}),
            max_total=0, reason="has metadata.nbgrader that is a string, not an object", summary=True),
    Hostile("deep-json", "the reference with 100,000 nested lists in its metadata",
            lambda ref, rel: {NOTEBOOK: json.dumps({**ref, "metadata": {**ref["metadata"], "deep": "DEEP"}})
                              .replace('"DEEP"', "[" * 100_000 + "]" * 100_000)},
            max_total=0, reason="its JSON is nested more than 64 levels deep", summary=True),
    Hostile("too-large", "the reference with a 3 MB output in a cell added at the top",
            lambda ref, rel: only({**ref, "cells": [new_code_cell("print('x' * 3_000_000)", outputs=[
                {"output_type": "stream", "name": "stdout", "text": "x" * 3_000_000}])] + ref["cells"]}),
            max_total=0, reason="more than the 2,048 KB a notebook may be", summary=True),
    Hostile("cells-object", "the reference whose cells are a JSON object instead of a list",
            lambda ref, rel: only({**ref, "cells": {str(i): c for i, c in enumerate(ref["cells"])}}),
            max_total=0, reason="its 'cells' is an object, not a list", summary=True),
    Hostile("cell-string", "the reference with a cell that is a string",
            lambda ref, rel: only({**ref, "cells": ref["cells"] + ["print('hello')"]}),
            max_total=0, reason="is a string, not an object", summary=True),

    # ------------------------------------------------------------------ harming classmates (issue 9, items 2 and 3)
    # Graded in parallel with the honest students above, who must score exactly what they score alone.
    Hostile("kill-everyone", "sends SIGKILL to every process id and to -1, from a cell added at the top (blank release)",
            on_blank(KILL_EVERYONE), max_total=0),
    Hostile("fork-bomb", "starts sleeping processes until it cannot, from a cell added at the top (blank release)",
            on_blank(FORK_BOMB), max_total=0, limit="process budget"),
    Hostile("fill-scratch", "fills /tmp, /var/tmp and /dev/shm and leaves the files for later runs (blank release)",
            on_blank(FILL_SCRATCH), max_total=0, limit="disk budget"),
    Hostile("memory-across-processes", "three processes of 450 MB each, under the per-check limit but over the "
                                       "submission's budget of 1024 MB (blank release)",
            on_blank(MEMORY_ACROSS_PROCESSES), max_total=0, limit="memory budget"),
    Hostile("sleep-under-limit", "step() sleeps 2.8 s, so that even two steps stay under the per-check wall-clock "
                                 "backstop (2 x 3 s), then steps (reference otherwise)",
            sabotage("sgd", "SGD.step", "import time\ntime.sleep(2.8)\nfor p in self.params:\n    p.data -= self.lr * p.grad"),
            # The parts run in the order of their files (exercises, forward, lesson numbers, no_grad, parameters,
            # step, zero_grad): the budget runs out in step, so zero_grad is not run either.
            loses=("test_step", "test_zero_grad", LESSON),
            keeps=("test_exercise_count", "test_exercise_second_step", "test_forward", "test_no_grad", "test_parameters"),
            reason="the submission took 90 s of wall-clock time", limit="time budget"),
    Hostile("garbage-protocol", "writes deeply nested JSON, a 20 MB line and forged answers to every descriptor "
                                "(blank release)", on_blank(GARBAGE_PROTOCOL), max_total=0),
    Hostile("huge-answers", "makes every answer it sends the grader 2 MB of numbers, by rewriting json.dumps in its "
                            "process (blank release)",
            on_blank(HUGE_ANSWERS), max_total=0, reason="returned an answer larger than 1,024 KB", limit="answer"),
    Hostile("deep-answers", "makes every answer it sends the grader a list nested 500 deep (blank release)",
            on_blank(DEEP_ANSWERS), max_total=0, reason="returned an answer nested more than 32 levels deep",
            limit="answer"),
    Hostile("many-answers", "makes every answer it sends the grader 900 KB of text, each under the limit of one "
                            "answer (blank release)",
            on_blank(MANY_ANSWERS), max_total=0, reason="your answers were larger than 8 MB in all",
            limit="answer budget"),
    Hostile("loopback", "connects to a port the grader's host listens on, at 127.0.0.1, through ctypes (blank release)",
            on_blank(LOOPBACK), max_total=0),

    # ------------------------------------------------------------------ what the grader hands student code (issue 18)
    Hostile("env-canary", "raises the grader's JUPYTERHUB_API_TOKEN and every environment variable's name (in forward)",
            sabotage("linear", "Linear.forward", ENVIRONMENT),
            loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON), reason="token: none", never=CANARY),
    Hostile("other-clone", f"reads every file of another clone of the course at {OTHER_CLONE} (in forward)",
            sabotage("linear", "Linear.forward", OTHER_CLONE_READ),
            loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON), reason="other clone: read 0 files",
            never=OTHER_CLONE_MARK, root_only=True),
    *[Hostile(student, "looks for a key another submission or an earlier run left in its keyrings, and leaves one "
                       "readable by anyone (in forward; two students do it)",
              sabotage("linear", "Linear.forward", KEYRING),
              loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON),
              reason="no key from another submission", never="pid:[", root_only=True)  # the page shows the code
      for student in ("keyring", "keyring-again")],
    *[Hostile(student, "looks for a key (in /proc/keys), a System V message queue, semaphore set or shared memory "
                       "segment and a POSIX message queue that another submission left, and leaves each open to "
                       "anyone (in forward; two students do it)",
              sabotage("linear", "Linear.forward", KERNEL_OBJECTS + "\nraise RuntimeError(message)"),
              loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON),
              reason="no kernel object from another submission (left: key EPERM; setperm EPERM; message queue EPERM")
      for student in ("kernel-objects", "kernel-objects-again")],
    Hostile("unix-socket", f"connects to the unix socket {UNIX_SOCKET} that the grader's host listens on (in forward)",
            sabotage("linear", "Linear.forward", UNIX_SOCKET_SEND),
            loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON),
            reason="unix socket: operation not permitted", root_only=True),
    Hostile("file-signals", "locks a library every session maps (flock, an OFD lock), watches it (inotify), wakes a "
            "shared futex on its page and binds an abstract socket, to signal to a classmate graded beside it (in forward)",
            sabotage("linear", "Linear.forward", SHARED_FILE_SIGNALS + "\nraise RuntimeError(message)"),
            loses=("test_forward", LESSON), keeps=ALL_BUT("test_forward", LESSON), reason=SHARED_FILE_REFUSED),
    Hostile("pipe-shrink-stop", "shrinks its commands pipe to one page and stops itself (SIGSTOP) when the loader "
                                "reads it (blank release)",
            on_blank(PIPE_SHRINK_STOP), max_total=0, reason="did not finish within 6 s of wall-clock time", limit="time"),

    # ------------------------------------------------------------------ the formgrader (issue 13)
    Hostile("markdown-payloads", "the reference whose every markdown cell (written answers too) is <script>, "
            "<img onerror>, <svg onload> and a javascript: link; its pages are opened in a browser by "
            "tests/test_formgrader_browser.py",
            lambda ref, rel: only({**ref, "cells": [
                {**c, "source": "<script>document.title='owned'</script><img src=x onerror=\"document.title='owned'\">"
                                " <svg onload=\"document.title='owned'\"></svg> [x](javascript:document.title='owned')"}
                if c["cell_type"] == "markdown" else c for c in ref["cells"]]}),
            keeps=PARTS),
]
