"""Isolation, one property at a time: two submissions in sandboxes of two grading slots, side by side.

The class-run test (test_catalogue_hostile.py) shows the same through `make grade`; these say which
mechanism holds, quickly. They need the grader's power to isolate: root. Each runs at the level this
machine gives (conftest.LEVEL) when that level promises what it checks, and skips, saying why, where not:
the `uid` level (root without namespaces: a container without CAP_SYS_ADMIN, a plain chroot) promises a
uid of its own per worker and that a submission's processes and scratch files end with it; `uid+landlock`
adds an allow-list of the disk (the machine's /tmp closed but for the submission's own folder); namespaces
add a private view of processes and files and no network; cgroups add named memory and process budgets.
"""
from __future__ import annotations

import errno
import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, TimeoutError
from pathlib import Path

import pytest
import sandbox_probes

from autograder.sandbox import Budget, Cell, Limits, Sandbox, landlock, proof
from autograder.sandbox.messages import describe_time_out
from autograder.settings import GraderSettings
from conftest import ASSIGNMENT, CAP_SYS_ADMIN, LEVEL, ROOT, command_lines, holds_capability, needs_level

pytestmark = needs_level("uid")

PROBES = ROOT / "tests" / "sandbox_probes.py"


LIMITS = Limits(seconds=3, memory_mb=1024, output_kb=64)


def box(level: str | None = None, limits: Limits = LIMITS, **budgets) -> Sandbox:
    """A sandbox at the machine's level, or at most `level`."""
    isolation = GraderSettings(**budgets).isolation()
    return Sandbox(modules={"sandbox_probes": PROBES}, limits=limits,
                   isolation={**isolation, "level": level} if level else isolation, preload=["subprocess"])


def run(sandbox: Sandbox, code: str, name: str = "result"):
    outcome = sandbox.call([Cell("student", code)], sandbox_probes.value, name=name)
    assert outcome.ok, (outcome.reason, outcome.load_errors)
    return outcome.value


@pytest.fixture
def pair():
    with box() as one, box() as two:
        yield one, two


def root_is_a_mount_point() -> bool:
    return any(line.split()[4] == "/" for line in open("/proc/self/mountinfo"))


def test_the_worker_names_the_level_the_machine_gives(pair):
    one, _ = pair
    one.begin()
    assert one.level == LEVEL
    if holds_capability(CAP_SYS_ADMIN) and root_is_a_mount_point():
        assert LEVEL.startswith("namespaces")  # and with cgroups where it may write them: on every machine so far
    else:  # root still: a uid per worker, never "none", with Landlock's allow-list where the kernel offers it
        assert LEVEL == ("uid+landlock" if landlock.abi() else "uid")


def sleeping() -> bool:
    """Whether the process the first submission of `both_begun` started is alive."""
    return any("sleep 321.5" in args for args in command_lines())


@pytest.fixture
def both_begun(pair):
    """Both sandboxes begun; the first's submission left a process and a file in /tmp. (one, two, its uid)"""
    one, two = pair
    one.begin()
    two.begin()
    uid_one = run(one, "import os, subprocess\nsubprocess.Popen(['sleep', '321.5'])\ntry:\n"
                       "    open('/tmp/left-by-one', 'w').write('one')\n"
                       "except PermissionError:\n    pass  # uid+landlock: only its own folder\nresult = os.getuid()")
    return one, two, uid_one


def test_each_submission_gets_its_own_uid_and_its_processes_and_files_end_with_it(both_begun):
    one, two, uid_one = both_begun
    uid_two = run(two, "import os\nresult = os.getuid()")
    assert uid_one != uid_two and 0 not in (uid_one, uid_two), (uid_one, uid_two)  # the grader is root
    assert sleeping()
    one.end()
    assert not sleeping()
    assert not [p for p in ("/tmp/left-by-one", "/var/tmp/left-by-one") if os.path.exists(p)]
    assert run(two, "result = 41 + 1") == 42  # the other submission's processes lived on


LEAVE_READABLE = """\
import os
os.chmod(".", 0o755)  # its own folder opened to every uid, as a careless submission might leave it
with open("mine", "w") as mine:
    mine.write("one's secret")
os.chmod("mine", 0o644)
result = [os.getcwd(), []]  # its folder, and the shared folders it could leave a file in
for folder in ("/tmp", "/var/tmp", "/dev/shm"):
    try:
        with open(folder + "/left-by-one", "w") as left:
            left.write("one's secret")
        os.chmod(folder + "/left-by-one", 0o644)
        result[1].append(folder)
    except PermissionError:
        pass"""


def look_around(folder: str) -> str:
    """A cell that reads what LEAVE_READABLE left (its folder is `folder`) and lists the shared folders."""
    return f"""\
import os
result = {{}}
for path in ({folder!r} + "/mine", "/tmp/left-by-one", "/var/tmp/left-by-one", "/dev/shm/left-by-one"):
    try:
        result[path] = open(path).read()
    except OSError as error:
        result[path] = error.strerror
for path in ("/tmp", "/var/tmp", "/dev/shm", "/"):
    try:
        result[path] = "listed" if isinstance(os.listdir(path), list) else "?"
    except OSError as error:
        result[path] = error.strerror"""


@pytest.mark.skipif(not landlock.abi(), reason="this kernel offers no Landlock")
def test_a_confined_loader_reads_ipython_syntax_as_jupyter_does():
    """IPython's input transformer runs in the loader, which at uid+landlock may read neither IPython's files nor the
    standard library's: the worker reads and imports all it needs first (a cell with `?` in it made the loader import
    `codeop` there, "No module named 'codeop'")."""
    with box("uid+landlock") as sandbox:
        sandbox.begin()
        assert sandbox.level == "uid+landlock"
        assert run(sandbox, 'result = %time 6 * 7\nprint("why?")') == 42


@pytest.mark.skipif(not landlock.abi(), reason="this kernel offers no Landlock")
@pytest.mark.parametrize("level", ["uid+landlock", "uid"])
def test_without_namespaces_landlock_keeps_a_submission_out_of_its_neighbours_files(level):
    """Two submissions graded at once without namespaces, the first leaving what it made readable to every uid:
    at `uid` (the control) the second reads it, in the first's folder and in the machine's /tmp; at
    `uid+landlock` the first can leave nothing in the shared folders, and the second can open nothing in the
    first's folder, nor list the shared folders or the machine's root."""
    with box(level) as one, box(level) as two:
        one.begin()
        two.begin()
        assert one.level == two.level == level
        folder, shared = run(one, LEAVE_READABLE)
        seen = run(two, look_around(folder))
    if level == "uid":
        assert shared == ["/tmp", "/var/tmp", "/dev/shm"], shared
        assert seen[folder + "/mine"] == seen["/tmp/left-by-one"] == seen["/dev/shm/left-by-one"] == "one's secret"
        assert seen["/tmp"] == seen["/"] == "listed", seen
    else:
        assert shared == [], shared
        assert {path: seen[path] for path in (folder + "/mine", "/tmp", "/var/tmp", "/dev/shm", "/")} == dict.fromkeys(
            (folder + "/mine", "/tmp", "/var/tmp", "/dev/shm", "/"), "Permission denied"), seen


@needs_level("namespaces")
def test_a_submission_sees_only_its_own_processes_and_files(both_begun):
    one, two, uid_one = both_begun
    seen = run(two, "import os\nresult = [sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), "
                    "os.listdir('/tmp'), os.getuid()]")
    # its session and its loader; an empty /tmp but for where the course's allowed folders are bound, when the
    # course itself lives under /tmp (a clone in a temporary folder, as CI makes)
    under_tmp = [ROOT.relative_to("/tmp").parts[0]] if ROOT.is_relative_to("/tmp") else []
    assert seen[0] == [1, 2] and seen[1] == under_tmp, seen
    assert uid_one != seen[2] and 0 not in (uid_one, seen[2])
    killed = run(two, "import os, signal\nresult = []\nfor pid in set(range(1, 1 << 16)) - {os.getpid()}:\n"
                      "    try:\n        os.kill(pid, signal.SIGKILL)\n        result.append(pid)\n"
                      "    except OSError:\n        pass")
    assert sleeping()
    assert killed == []  # nothing but itself in sight (pid 1, its session, is root's)
    one.end()
    assert not sleeping()


@needs_level("namespaces")
def test_course_folders_are_hidden_and_disks_read_only(pair):
    one, _ = pair
    code = f"""\
import os
result = {{}}
for path in ({str(ASSIGNMENT.root / 'solutions')!r}, {str(ASSIGNMENT.root / '.git')!r}, {str(ASSIGNMENT.suite_dir)!r}):
    try:
        result[path] = os.listdir(path)
    except OSError as error:
        result[path] = "refused"
import sys
try:
    open(sys.prefix + "/planted-by-a-submission", "w")  # the virtual environment: in its root, read-only
    result["write"] = "written"
except OSError as error:
    result["write"] = error.strerror"""
    seen = run(one, code)
    # A course under /tmp (a clone in CI) is not there at all (the session's /tmp is its own): refused either way.
    assert set(list(seen.values())[:3]) == {"refused"}, seen
    assert seen["write"] == "Read-only file system"


@needs_level("namespaces")
def test_no_network_not_even_the_hosts_loopback(pair):
    one, _ = pair
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = f"""\
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
address = struct.pack("=H", 2) + struct.pack("!H4s8x", {port}, bytes([127, 0, 0, 1]))
fd = libc.socket(2, 1, 0)
result = [fd, ctypes.get_errno(), libc.connect(fd, address, len(address))]"""
        fd, error, result = run(one, code)
        # The system-call filter refuses an IPv4 socket (EAFNOSUPPORT, sandbox/seccomp.py); behind it, the network
        # namespace's loopback is down and nothing else exists (ENETUNREACH had the socket been made).
        assert fd == result == -1 and error == 97
        server.settimeout(0.2)
        with pytest.raises(TimeoutError):
            server.accept()


@pytest.mark.parametrize("code,budget", [
    pytest.param("import os, time\nfor _ in range(200):\n    if os.fork() == 0:\n        time.sleep(60)\n"
                 "        os._exit(0)", "process budget", marks=needs_level("namespaces+cgroups")),
    pytest.param("for n in range(300):  # files under the 64 KB a file may be here, until the 8 MB are full\n"
                 "    open(f'/dev/shm/{n}', 'wb').write(b'x' * 60000)", "disk budget",  # its tmpfs
                 marks=needs_level("namespaces")),
    pytest.param("import os, time\nimport numpy as np\nfor _ in range(2):\n    if os.fork() == 0:\n"
                 "        block = np.ones(96 * 2**20 // 8)\n        time.sleep(60)\n        os._exit(0)\n"
                 "time.sleep(1.5)", "memory budget", marks=needs_level("namespaces+cgroups")),
])
def test_a_budget_hit_is_named(code, budget):
    with box(budget_memory_mb=128, budget_processes=16, budget_disk_mb=8) as sandbox:
        sandbox.begin()
        sandbox.call([Cell("student", code)], sandbox_probes.value, name="x")
        assert budget in sandbox.end()


# Under each process's 1024 MB, over the submission's 1024 MB together; and 100 MB in files of 1 MB (output_kb). With
# 10 s of CPU time: a VM whose host backs its memory lazily spends seconds filling 1.2 GB it touches first. The cell
# waits until both hold their 600 MB, then 2 s (the session looks every 0.05 s): a fixed 4 s was shorter than one
# fill beside a busy machine's other work (5.1 s of wall-clock time for 1.7 s of CPU time), and nothing was seen.
HOLD_TWICE_600_MB = ("import os, time\nimport numpy as np\nfilled, done = os.pipe()\nfor _ in range(2):\n"
                     "    if os.fork() == 0:\n        block = np.ones(600 * 2**20 // 8)\n        os.write(done, b'.')\n"
                     "        time.sleep(60)\n        os._exit(0)\nos.read(filled, 1)\nos.read(filled, 1)\ntime.sleep(2)")
WRITE_100_MB = "import time\nfor n in range(100):\n    open(f'{n}', 'wb').write(b'x' * 2**20)\ntime.sleep(2)"


@pytest.mark.parametrize("level", ["uid", "uid+landlock"])
@pytest.mark.parametrize("code,budget,reason", [
    (HOLD_TWICE_600_MB, "memory budget", "the submission's processes together used their memory budget of 1024 MB"),
    (WRITE_100_MB, "disk budget", "the submission's files came to more than its disk budget of 64 MB"),
], ids=["memory", "disk"])
def test_without_cgroups_the_session_bounds_memory_and_disk(level, code, budget, reason):
    """Without a memory cgroup or a private tmpfs the session sums what the submission holds, stops it past a
    budget and names it as the kernel's bounds are named; the submission goes on, with its scratch folder empty."""
    limits = Limits(seconds=10, memory_mb=1024, output_kb=1024)
    with box(level, limits, budget_memory_mb=1024, budget_disk_mb=64) as sandbox:
        sandbox.begin()
        assert sandbox.level == level or level == "uid+landlock" and sandbox.level == "uid"  # no Landlock here
        outcome = sandbox.call([Cell("student", code)], sandbox_probes.value, name="x")
        assert run(sandbox, "import os\nresult = os.listdir('.')") == []
        assert budget in sandbox.end()
    assert outcome.reason == f"cell student was stopped: {reason}", outcome


def test_the_scratch_folders_walk_is_bounded(tmp_path, monkeypatch):
    """The walk follows no link and stops early: more entries, or folders deeper, than honest code makes count as
    over the budget."""
    from autograder.sandbox import isolation

    (tmp_path / "file").write_bytes(os.urandom(100_000))  # as stored, were the file system to compress
    (tmp_path / "link").symlink_to("/usr")
    assert 100_000 <= isolation._disk_use(str(tmp_path), 1 << 20) < 200_000
    assert isolation._disk_use(str(tmp_path), 50_000) > 50_000
    monkeypatch.setattr(isolation, "DISK_ENTRIES", 5)
    for n in range(5):
        (tmp_path / str(n)).touch()
    assert isolation._disk_use(str(tmp_path), 1 << 20) > 1 << 20
    monkeypatch.setattr(isolation, "DISK_ENTRIES", 100)
    for n in range(5):
        (tmp_path / str(n)).unlink()
    (tmp_path / "/".join("d" * isolation.DISK_DEPTH)).mkdir(parents=True)
    assert isolation._disk_use(str(tmp_path), 1 << 20) > 1 << 20


SPIN = "import time\nend = time.process_time() + 0.8\nwhile time.process_time() < end:\n    pass\nx = 1"


@pytest.mark.parametrize("code,budget,spent", [
    (SPIN, 2, "the submission used its 2 s of CPU time"),  # 0.8 s of CPU time each to load
    ("import time\ntime.sleep(0.8)\nx = 1", 1, "the submission took 2 s of wall-clock time"),  # the backstop: 2 x 1 s
])
def test_the_time_budget_covers_the_whole_submission(code, budget, spent):
    with box() as sandbox:
        sandbox.begin(seconds=budget)
        outcomes = [sandbox.call([Cell(f"student{n}", code)], sandbox_probes.value, name="x")
                    for n in range(4)]  # a new program each time
        assert [o.ok for o in outcomes] == [True, True, False, False], outcomes
        assert [o.limit for o in outcomes[2:]] == ["time budget"] * 2
        assert f"stopped: {spent}" in outcomes[2].reason and outcomes[3].reason.startswith(f"not run: {spent}")
        assert [o.not_run for o in outcomes[2:]] == [False, True]  # stopped, then never started


# A call that double-forks three helpers (they leave its process tree) to burn 3 x 4.5 s of CPU time while it
# waits for them, returning before the loader's 6 s wall-clock backstop: only its CPU time limit can stop it.
HELPERS = """\
import os, time

def helped():
    for n in range(3):
        if os.fork() == 0:
            if os.fork() == 0:
                end = time.process_time() + 4.5
                while time.process_time() < end:
                    pass
                open(f"helper{n}", "w").close()
            os._exit(0)
        os.wait()
    deadline = time.monotonic() + 30  # the helpers' 13.5 s of CPU time, on a busy machine's share of two CPUs
    while time.monotonic() < deadline and not all(os.path.exists(f"helper{n}") for n in range(3)):
        time.sleep(0.05)
    return "done"
"""


@pytest.mark.parametrize("level", ["uid+landlock", None])  # None: the machine's level, with cgroups where it has them
def test_cpu_time_of_helpers_that_left_the_call_is_charged_to_it(level):
    """Charged, the helpers' CPU time ends the call at its 3 s, however long a busy machine takes to give them that
    (the call's wait for them, sleeping, is not counted by the wall-clock backstop while they wait for a CPU);
    uncharged, they end their 4.5 s each and the call answers. Its wait is bounded well past that: with 5.5 s, on
    the no-sys-admin machine beside a class's grading, the helpers had not used 3 s when it answered "done"."""
    with box(level) as sandbox:
        outcome = sandbox.call([Cell("student", HELPERS)], sandbox_probes.run, name="helped")
    assert not outcome.ok and outcome.limit == "time", outcome
    assert outcome.reason == describe_time_out("the check", 3), outcome


def test_the_protocol_survives_any_bytes_and_the_next_submission_is_graded():
    garbage = ("import os\nfor fd in range(64):\n    for chunk in (b'[' * 100000 + b'\\n', b'x' * (20 << 20), b'7\\n'):\n"
               "        try:\n            os.write(fd, chunk)\n        except OSError:\n            pass\nx = 1")
    with box() as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("student", garbage)], sandbox_probes.value, name="x")
        assert not outcome.ok and "not an answer" in outcome.reason
        sandbox.end()
        sandbox.begin()
        assert run(sandbox, "result = 41 + 1") == 42


# ------------------------------------------------------------------ what the grader hands student code (issue 18)


def test_student_code_gets_an_allow_listed_environment(monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "canary-hub-token")  # on a hub, the instructor's server token
    with box() as sandbox:
        seen = run(sandbox, "import os\nresult = dict(os.environ)")
    assert set(seen) == {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                         "MKL_NUM_THREADS", "PYTHONHASHSEED"}, seen  # the one seed: a grade follows no run's hashes
    assert seen["PYTHONHASHSEED"] == "0"
    # its scratch: the session's private /tmp, or without namespaces the uid's folder in the machine's
    assert seen["HOME"] == "/tmp" if LEVEL.startswith("namespaces") else seen["HOME"].startswith("/tmp/kit-")
    assert seen["TMPDIR"] == seen["HOME"]


@needs_level("namespaces")
def test_a_session_sees_an_allow_list_of_the_machine_not_another_clone_or_a_socket_file():
    clone, path = Path(f"/srv/kit-test-clone-{os.getpid()}"), f"/run/kit-test-{os.getpid()}.sock"
    (clone / "solutions").mkdir(parents=True)
    (clone / "solutions" / "answer.txt").write_text("the answer")
    for folder in (clone, clone / "solutions"):
        folder.chmod(0o755)
    with socket.socket(socket.AF_UNIX) as listener, box() as sandbox:
        listener.bind(path)
        os.chmod(path, 0o777)
        listener.listen(1)
        # the socket file is looked for, not connected to: the system-call filter refuses every connect before
        # the session's root is asked (tests/test_kernel_objects.py)
        code = f"""\
import os
try:
    answer = open({str(clone / "solutions" / "answer.txt")!r}).read()
except OSError as error:
    answer = error.strerror
result = [answer, os.path.lexists({path!r}), sorted(os.listdir("/")), sorted(os.listdir("/etc"))]"""
        answer, socket_file, top, etc = run(sandbox, code)
        listener.settimeout(0.2)
        with pytest.raises(TimeoutError):
            listener.accept()
    os.unlink(path)
    shutil.rmtree(clone)
    assert answer == "No such file or directory" and not socket_file
    assert not {"srv", "run", "home", "opt", "mnt"} & set(top) - {ROOT.parts[1]}, top
    assert set(etc) <= {"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime"}, etc


KEYS = """\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL, SEARCH, SETPERM = 248, 250, 10, 5
KEYRINGS = (-3, -4, -5)  # the session, user and user-session keyrings
"""


def test_no_key_passes_from_one_submission_to_the_next():
    with box() as sandbox:
        sandbox.begin()
        stored = run(sandbox, KEYS + "result = []\nfor keyring in KEYRINGS:\n"
                              "    result.append([libc.syscall(ADD_KEY, b'user', b'kit-test-key', b'secret', 6, keyring), "
                              "ctypes.get_errno()])\n"
                              "    libc.syscall(KEYCTL, SETPERM, result[-1][0], 0x3f3f3f3f)  # anyone may read it")
        assert stored == [[-1, errno.EPERM]] * 3  # the system-call filter (sandbox/seccomp.py) denies keys
        sandbox.end()
        sandbox.begin()
        found = run(sandbox, KEYS + "result = [libc.syscall(KEYCTL, SEARCH, k, b'user', b'kit-test-key', 0) "
                                    "for k in KEYRINGS]")
        assert found == [-1, -1, -1]


@pytest.mark.slow  # waits out the wall-clock backstop (6 s), plus a sandbox of its own
def test_a_loader_that_shrinks_its_pipe_and_stops_itself_ends_within_its_limit():
    from catalogue_hostile import PIPE_SHRINK_STOP

    with box() as sandbox, ThreadPoolExecutor(1) as pool:
        sandbox.begin(seconds=20)
        big_batch = [(sandbox_probes.value, {"name": "x" * 100})] * 100  # more than the page its pipe holds
        answer = pool.submit(sandbox.call_many, [Cell("student", PIPE_SHRINK_STOP + "\nx = 1")], big_batch)
        try:
            outcomes = answer.result(timeout=30)
        except TimeoutError:
            sandbox.worker.kill()  # the grader waited without a deadline: end the test, not the suite
            raise
        assert outcomes[0].limit == "time" and "did not finish within 6 s of wall-clock time" in outcomes[0].reason


@needs_level("namespaces+cgroups")
def test_a_stopped_run_leaves_nothing_that_changes_the_next():
    from autograder.sandbox.isolation import STALE_SECONDS, _cgroup_bases, _cgroup_version

    bases = list(_cgroup_bases(_cgroup_version()).values())
    with box() as first:
        first.begin()
        uid = run(first, "import os, subprocess\nsubprocess.Popen(['sleep', '323.5'])\nresult = os.getuid()")
        left = [folder for base in bases for folder in base.glob(f"kit-{uid}-*")]
        assert left
        first.worker.kill()  # as a grader stopped with Ctrl-C, or by kill -9, ends
        first.worker.wait()
        first.worker = None
    deadline = time.monotonic() + 5
    while any("sleep 323.5" in line for line in command_lines()):
        assert time.monotonic() < deadline, "the session outlived its worker"
        time.sleep(0.1)
    for folder in left:  # as old as a stopped run's folders are by the next run (a younger one may be a neighbour's)
        os.utime(folder, (time.time() - 2 * STALE_SECONDS,) * 2)
    with box() as second:  # another uid (drawn at random): it still clears what the stopped run left
        assert run(second, "result = 41 + 1") == 42
        assert not [folder for folder in left if folder.exists()]
        names = [folder.name for base in bases for folder in base.glob("kit-*")]
        assert names and not set(names) & {folder.name for folder in left}


def free_uid() -> int:
    """A uid a worker could draw that nothing uses now."""
    from autograder.sandbox import uids

    return next(uid for uid in (uids._draw(uids.mapped_ranges()) for _ in range(64))
                if not uids._in_use(uid) and not uids.held(uid))


def forked_as(uid: int, then: Callable[[], object]) -> int:
    """The pid of a child that becomes `uid` (no groups) and runs `then`; it ends when `then` returns or raises."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            then()
        finally:
            os._exit(1)
    return pid


def test_a_worker_killed_mid_run_leaves_nothing_of_its_uid_after_the_next_worker_starts(monkeypatch, tmp_path):
    """A grader killed with SIGKILL leaves its lock file unheld, and at the uid levels a process the submission
    double-forked (out of reach of PR_SET_PDEATHSIG) and its files in /tmp: the next worker, which draws
    another uid, ends and removes them when it starts. The worker's start is run here, in this process, with
    locks of its own (graders of other checkouts on this machine would sweep a lock file in the real /run)."""
    from autograder.sandbox import uids
    from autograder.sandbox.isolation import Budgets, Isolation

    monkeypatch.setattr(uids, "LOCKS", tmp_path)
    uid = free_uid()
    lock = tmp_path / str(uid)
    lock.touch()
    left = Path(f"/tmp/kit-{uid}-stopped")
    (left / "deep").mkdir(parents=True)
    (left / "deep" / "file").write_text("left by a stopped run")
    for path in (left, left / "deep", left / "deep" / "file"):
        os.chown(path, uid, uid)
    pid = forked_as(uid, lambda: os.execvp("sleep", ["sleep", "326.5"]))
    try:
        assert Isolation(Budgets(), []).uid != uid
        deadline = time.monotonic() + 5
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            assert time.monotonic() < deadline, "the stopped run's process lived on"
            time.sleep(0.1)
        pid = 0
        assert not left.exists() and not lock.exists()
    finally:
        if pid:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        shutil.rmtree(left, ignore_errors=True)
        lock.unlink(missing_ok=True)


DEEP_TREE = """import os
fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
for _ in range(3000):  # deeper than Python's recursion limit
    os.mkdir("d", dir_fd=fd)
    fd, parent = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), fd
    os.close(parent)  # a process of student code holds 256 descriptors
os.close(os.open("bottom", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
result = [os.getcwd(), os.getuid()]"""


def test_a_deep_folder_tree_is_removed_and_the_next_submission_graded():
    """Without namespaces a submission's scratch folder is the machine's: however deep the tree it makes there,
    it is removed after the submission, and the worker grades the next one."""
    with box("uid+landlock") as sandbox:
        sandbox.begin()
        folder, uid = run(sandbox, "import os\nresult = [os.getcwd(), os.getuid()]")
        assert folder.startswith(f"/tmp/kit-{uid}-")
        # Folders nested past the disk walk's depth count as over the disk budget: the cell may be stopped there,
        # once the tree is made; the folder is emptied then, and removed at the end either way.
        outcome = sandbox.call([Cell("student", DEEP_TREE)], sandbox_probes.value, name="result")
        assert outcome.ok or "disk budget" in outcome.reason, outcome.reason
        sandbox.end()
        assert not os.path.exists(folder)
        sandbox.begin()
        assert run(sandbox, "result = 41 + 1") == 42
        sandbox.end()
        assert not [entry.path for folder in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(folder)
                    for entry in os.scandir(folder) if entry.stat(follow_symlinks=False).st_uid == uid]


def test_removing_a_tree_follows_no_link(tmp_path):
    from autograder.sandbox.isolation import _remove

    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "kept").write_text("not the tree's")
    (tmp_path / "tree" / "inner").mkdir(parents=True)
    for link in (tmp_path / "tree" / "link", tmp_path / "tree" / "inner" / "link", tmp_path / "top-link"):
        link.symlink_to(tmp_path / "outside")
    _remove(str(tmp_path / "top-link"))
    _remove(str(tmp_path / "tree"))
    assert sorted(os.listdir(tmp_path)) == ["outside"] and os.listdir(tmp_path / "outside") == ["kept"]


def test_student_code_is_not_spared_by_the_oom_killer():
    """The session asks the OOM killer to spare it (-1000, where the machine allows it); its loaders inherit that,
    and drop() sets it back to 0 before student code. Where -1000 is refused, a raised value (needing no
    privilege) stands for it."""
    from autograder.sandbox.isolation import Budgets, Isolation

    isolation = Isolation.__new__(Isolation)  # what drop() reads, at a level without Landlock or cgroups
    isolation.level, isolation.landlock, isolation.use_cgroups = "uid", False, False
    isolation.budgets, isolation.uid, isolation.scratch, isolation.proc_fd = Budgets(), free_uid(), "", -1
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            for value in ("-1000", "500"):
                try:
                    Path("/proc/self/oom_score_adj").write_text(value)
                    break
                except OSError:
                    continue
            isolation.drop()
            os.write(write, Path("/proc/self/oom_score_adj").read_bytes())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as answer:
        assert answer.read().strip() == "0"


@needs_level("namespaces+cgroups")  # the memory budget is a cgroup's
def test_a_process_the_memory_budget_killed_is_named_so():
    hog = "import numpy as np\ndef hog():\n    return np.ones(400 * 2**20 // 8).sum()"  # under the 1024 MB per check
    with box(budget_memory_mb=128) as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("student", hog)], sandbox_probes.run, name="hog")
        assert "memory budget" in sandbox.end()
    assert outcome.reason == ("was killed by the kernel: the submission's processes together used their memory budget "
                              "of 128 MB"), outcome


def test_every_file_of_grades_at_the_course_root_is_closed_to_student_code(tmp_path):
    """At `uid` the course root is open to the sandbox's uid (it reaches .venv and release/ through it), so what
    keeps the grades from student code there is their modes: the gradebook, a dated copy of it that make
    reset-gradebook kept (one made before it was closed read as anyone's), SQLite's side files, grades.csv."""
    from types import SimpleNamespace

    from autograder.sandbox.policy import close_to_others

    grades = ["gradebook.db", "gradebook-2026-01-05T0930.db", "gradebook.db-wal", "grades.csv"]
    for name in [*grades, "README.md"]:
        (tmp_path / name).write_text("x")
        (tmp_path / name).chmod(0o644)
    close_to_others(SimpleNamespace(root=tmp_path))
    assert {name: (tmp_path / name).stat().st_mode & 0o777 for name in [*grades, "README.md"]} == {
        **{name: 0o600 for name in grades}, "README.md": 0o644}


@pytest.mark.skipif(not landlock.abi(), reason="this kernel offers no Landlock")
@pytest.mark.skipif(bool(proof.closed_to_others()), reason=f"this interpreter's folders are closed to other users "
                    f"({proof.closed_to_others()}): no level without namespaces is proven here")
@pytest.mark.parametrize("ceiling", ["uid+landlock", "uid"])
def test_the_proof_names_a_level_without_namespaces_only_after_a_check_ran_at_it(monkeypatch, ceiling):
    """`make grade`'s first line names the level a session really ran a check at (sandbox/proof.py): from a
    ceiling without namespaces, `uid+landlock` once the check could not list the machine's root, else `uid`."""
    monkeypatch.setattr(proof, "machine_level", lambda: ceiling)
    found = proof.prove_level(ASSIGNMENT, GraderSettings(), 2)
    assert (found.level, found.refusal) == (ceiling, ""), found


@pytest.fixture
def closed_interpreter(tmp_path, monkeypatch):
    """The grader's interpreter as a virtual environment in a folder closed to other users (as a pyenv under /root,
    mode 700, is): the sandbox's worker runs it. The grader's packages (numpy) come through a .pth file in its own
    site-packages, which stays closed."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")], check=True)
    site = next(home.glob("venv/lib/python*/site-packages"))
    (site / "grader.pth").write_text("\n".join(p for p in sys.path if p.endswith("-packages")) + "\n")
    monkeypatch.setattr(sys, "executable", str(home / "venv" / "bin" / "python"))
    return home


def test_no_level_without_namespaces_is_proven_where_student_code_cannot_reach_the_interpreter(monkeypatch,
                                                                                               closed_interpreter):
    """Student code's uid could not import a module the worker had not (`import csv` in an honest `forward`): without
    namespaces each level fails the proof, and the ladder ends in a refusal that says what to do, never at
    student code run as root."""
    ceiling = "uid+landlock" if landlock.abi() else "uid"
    monkeypatch.setattr(proof, "machine_level", lambda: ceiling)
    found = proof.prove_level(ASSIGNMENT, GraderSettings(), 2)
    assert found.level == "", found
    assert "uid: the student uid cannot reach the interpreter's files under /" in found.refusal, found
    assert "use a Python installed outside a private home" in found.refusal, found


@pytest.mark.parametrize("level,refused", [("uid+landlock", True), ("uid", True), ("namespaces", False)])
def test_one_notebooks_grade_refuses_a_level_without_namespaces_that_cannot_reach_the_interpreter(
        monkeypatch, tmp_path, level, refused):
    """`python -m autograder grade` and Gradescope's run prove no level first: from the caller's side, where other
    users may not enter the interpreter's folders, a level without namespaces is refused in one line (a namespace
    session's root opens the way)."""
    (tmp_path / "home" / "lib").mkdir(parents=True)
    (tmp_path / "home").chmod(0o700)
    monkeypatch.setattr(proof.proof_probe, "interpreter_folders", lambda: [str(tmp_path / "home" / "lib")])
    monkeypatch.setattr(proof, "machine_level", lambda: level)
    refusal = proof.closed_interpreter_refusal(GraderSettings())
    assert ("the student uid cannot reach the interpreter's files under /" in refusal) == refused, refusal


def test_one_notebooks_grade_judges_the_interpreter_folders_the_worker_runs_from(monkeypatch, tmp_path):
    """The worker starts through the interpreter's folder with its links resolved (sandbox._interpreter): a grader
    started through a link under a private folder (pytest's own 700 tmp folder, a home behind a link) to a venv
    others may enter runs a worker the student uid reaches, so it is not refused (the no-sys-admin machine's run of
    the linked-venv test, refused "cannot reach the interpreter's files under /tmp/pytest-of-root")."""
    import tempfile
    opened = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        opened.chmod(0o755)
        (opened / "lib").mkdir(mode=0o755)
        (tmp_path / "home").mkdir(mode=0o700)
        (tmp_path / "home" / "venv").symlink_to(opened, target_is_directory=True)
        monkeypatch.setattr(proof.proof_probe, "interpreter_folders", lambda: [str(tmp_path / "home" / "venv" / "lib")])
        monkeypatch.setattr(proof, "machine_level", lambda: "uid")
        assert proof.closed_interpreter_refusal(GraderSettings()) == ""
    finally:
        shutil.rmtree(opened)


@pytest.mark.parametrize("folder", ["/tmp", "/var/tmp", "/dev/shm", "/run/lock"])
def test_at_uid_a_file_left_where_any_user_may_write_ends_with_its_submission(folder):
    """Without Landlock's allow-list a submission may write wherever any user may (mode 1777 on a Debian
    machine): what it leaves there must not wait for the next submission of the same worker (the same uid)."""
    if not os.path.isdir(folder):
        pytest.skip(f"no {folder} on this machine")
    left = f"{folder}/left-by-{os.getpid()}"
    with box("uid") as one:
        one.begin()
        assert run(one, f"open({left!r}, 'w').write('for the next one')\nresult = 1") == 1
        assert os.path.exists(left)
        one.end()
        assert not os.path.exists(left)


def test_at_uid_a_link_in_place_of_the_scratch_folder_leads_root_nowhere(tmp_path):
    """At `uid` the submission owns its folder in the machine's /tmp: it may move it away and leave a link to any
    folder in its place. The session walks and empties the folder it made, held open, never the path: what the
    link points to stays, and the moved folder's files still count against the disk budget."""
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "kept").write_text("root's")
    code = f"""\
import os, time
here = os.getcwd()
os.rename(here, here + ".moved")
os.symlink({str(canary)!r}, here)
os.chdir(here + ".moved")
for n in range(5000):
    open(f"f{{n}}", "w").close()
time.sleep(2)
result = 1"""
    with box("uid", limits=Limits(seconds=10, memory_mb=1024, output_kb=64)) as one:  # files made on a busy machine
        one.begin()
        outcome = one.call([Cell("student", code)], sandbox_probes.value, name="result")
        one.end()
    assert "disk budget" in outcome.reason, (outcome.ok, outcome.reason)
    assert (canary / "kept").read_text() == "root's"


def test_at_uid_a_link_in_place_of_the_scratch_folder_is_no_way_into_a_closed_folder(tmp_path):
    """The loader enters the scratch folder as root, before it drops to the uid: through a link the submission left
    at the folder's path it would start in a folder the uid may not reach (below a folder closed to it, as the
    course's private folders are). It enters the folder the worker made, held open, wherever that was moved."""
    tmp_path.chmod(0o700)
    closed = tmp_path / "course"
    closed.mkdir(mode=0o755)
    (closed / "solution.py").write_text("ANSWER = 42")
    leave_a_link = f"""\
import os
here = os.getcwd()
os.rename(here, here + ".moved")
os.symlink({str(closed)!r}, here)
result = 1"""
    look = "import os\ntry:\n    result = open('solution.py').read()\nexcept OSError as error:\n    result = error.strerror"
    with box("uid") as one:
        one.begin()
        assert run(one, leave_a_link) == 1
        seen = run(one, look)  # a new program: a new loader, entering its folder again
        one.end()
    assert seen == "No such file or directory", seen


# A fork bomb that keeps its population at the process budget: each process forks two children (retrying while the
# budget refuses) and ends, so the session's orphans are always replaced as fast as they are killed (red-a12 A1).
REFILLING_BOMB = """\
import os
if os.fork() == 0:
    os.setsid()
    while True:
        made = 0
        while made < 2:
            try:
                pid = os.fork()
            except OSError:
                continue
            if pid == 0:
                made = -1
                break
            made += 1
        if made == 2:
            os._exit(0)
import time
time.sleep(1)  # the population grows to the budget before the program is done
result = 1"""


def run_in_loader(sandbox: Sandbox, code: str, name: str = "result"):
    """run(), the call in the loader's own process: no check's process to fork while the bomb holds the budget."""
    outcome = sandbox.call_many([Cell("student", code)], [(sandbox_probes.value, {"name": name})])[0]
    assert outcome.ok, (outcome.reason, outcome.load_errors)
    return outcome.value


@pytest.mark.slow
@pytest.mark.parametrize("level", [pytest.param("uid", marks=needs_level("uid")), None])
def test_a_self_refilling_fork_bomb_ends_with_its_submission_and_keeps_the_worker(level):
    """The session (and, without namespaces, the worker) ends what student code left by killing its orphans one
    at a time and waiting for each (worker._reap_orphans, from _Loader.stop): processes that fork two children and
    end keep the orphans at the process budget, the loop never empties them, and the session hangs until the
    grader's deadline (30 s) kills the worker. Every submission that does this costs the class 30 s of wall-clock
    time beyond its budget and a worker. Expected: the session ends them all at once (its PID namespace's end, a
    kill of the uid's every process, the cgroup's), within a few seconds, and the worker serves the next."""
    with box(level) as sandbox:
        sandbox.begin()
        assert run_in_loader(sandbox, REFILLING_BOMB) == 1
        worker = sandbox.worker.pid if sandbox.worker else None
        started = time.monotonic()
        sandbox.end()
        took = time.monotonic() - started
        kept = sandbox.worker is not None and sandbox.worker.pid == worker
        sandbox.begin()
        assert run(sandbox, "result = 2") == 2
        sandbox.end()
    assert took < 10 and kept, (took, kept)


@pytest.mark.slow
def test_a_self_refilling_fork_bomb_holds_the_grader_no_longer_than_its_budget():
    """The same bomb in each part's program (red-a12 A1): stopping the first program's loader (_Loader.stop) never
    gets past _reap_orphans, where the session reads no budget, so the grader waits out its deadline (budget plus a
    margin), loses the worker, continues the submission in a new one, whose program starts the bomb again, and waits
    out the deadline again. A submission of 6 s of CPU time (12 s of wall-clock time) held it 165 s; a notebook
    graded with `python -m autograder grade` and the default 45 s budget, 291 s (the reference: 5 s). Expected:
    within its wall-clock backstop plus one margin."""
    bomb = REFILLING_BOMB.replace("result = 1", "")
    started = time.monotonic()
    with Sandbox(modules={"sandbox_probes": PROBES}, limits=LIMITS, isolation=GraderSettings().isolation(),
                 budget=Budget(seconds=6)) as sandbox:
        sandbox.begin()
        for part in range(2):  # a new program each: the loader of the one before is stopped
            sandbox.call([Cell("student", f"{bomb}\npart = {part}")], sandbox_probes.value, name="part")
        sandbox.end()
    assert time.monotonic() - started < 2 * 6 + 30 + 10


@pytest.mark.slow
@needs_level("uid")
def test_without_namespaces_a_refilling_fork_bomb_ends_with_the_sandbox():
    """At `uid` (and `uid+landlock`) the uid's every process is killed after a submission only once the session
    has ended (Isolation._clean_uid, after _reap_orphans): when the bomb holds the session until the grader kills
    the worker (red-a12 A1), nothing kills them, and its processes run on as init's children at full CPU after the
    grader closed its sandbox, until some later worker on the machine sweeps the uid (red-a12 A3: 64 processes
    still running 6 s after the grading ended). Expected: none left once the sandbox is closed."""
    with box("uid") as sandbox:
        sandbox.begin()
        uid = run_in_loader(sandbox, REFILLING_BOMB + "\nuid = os.getuid()", name="uid")
        sandbox.end()
    left = 0
    for entry in os.listdir("/proc"):
        try:
            left += entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid
        except OSError:
            pass
    assert left == 0, f"{left} processes of the submission's uid {uid} still running"


@pytest.mark.parametrize("linked", ["venv", "parent"], ids=["red-b13-5-venv-linked", "red-b13-5-parent-linked"])
def test_a_venv_reached_through_a_symlink_still_lets_a_cell_import_what_it_holds(tmp_path, linked):
    """red-b13 5 (pass 23): isolation.allowed_paths adds sys.prefix as the grader was started with it. A venv reached
    through a symbolic link (a course whose .venv links to a shared one, a home folder behind a link, this kit's own
    worktrees) gives a prefix that is the link: the session's allow-list then holds the link, not the folder, and every
    module the worker did not preload from site-packages is not found: `from numpy import *` in cell module raises
    "ModuleNotFoundError: No module named 'numpy.f2py'" (numpy.polynomial, numpy.testing, numpy.ma likewise), a right
    notebook 12/18 (`import matplotlib` likewise) that the same grader started through the real path gives 18/18. A link
    higher up (the folder that holds the venv: a home folder behind a link) and no session starts at all: "the
    submission's sandbox could not start: mount /new/<the link>/.venv: No such file or directory", no grade."""
    import json

    import nbformat
    prefix = Path(sys.prefix).resolve()
    if linked == "venv":
        link = tmp_path / "venv"
        link.symlink_to(prefix, target_is_directory=True)
    else:
        (tmp_path / "course").symlink_to(prefix.parent, target_is_directory=True)
        link = tmp_path / "course" / prefix.name
    notebook = nbformat.read(ROOT / "solutions" / ASSIGNMENT.name / ASSIGNMENT.notebook_name, as_version=4)
    module = next(cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == "module")
    module.source = "from numpy import *\nimport numpy.polynomial\n\n\n" + module.source
    path = tmp_path / ASSIGNMENT.notebook_name
    nbformat.write(notebook, path)
    run = subprocess.run([str(link / "bin" / "python"), "-m", "autograder", "grade", str(path), "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout)
    failed = [t["message"] for p in report["parts"] for t in p["tests"] if not t["passed"]]
    assert not failed, failed[:2]


@pytest.mark.parametrize("level", ["uid", None])
def test_student_code_may_dump_no_core(level):
    """A process dumping core has not ended (forks.KILLED_SECONDS counts it), and a pipe core_pattern
    (systemd-coredump) writes past RLIMIT_FSIZE: the loader sets RLIMIT_CORE to 1, hard, before student code (1, not
    0: the kernel's one "no dump" for a pipe, X24-e15-1; below any file dump's size)."""
    with box(level) as sandbox:
        assert run(sandbox, "import resource\nresult = resource.getrlimit(resource.RLIMIT_CORE)") == [1, 1]


# A process of the submission's uid that sends SIGSTOP to every process of that uid, in a loop (kill(-1) as the
# uid: no root process is reachable, and the C library is all it needs). uids.kill_processes_of forks a child that
# becomes the uid before its own kill(-1): in that moment the loop reaches it too, and a stopped child is never
# reported to the os.waitpid(pid, 0) that waits for it (red-a13 X23-1).
STOPPER = """import ctypes
kill = ctypes.CDLL(None).kill
while True:
    kill(-1, 19)
"""


def _end_uid(uid: int, pool: ThreadPoolExecutor, stopper: int) -> None:
    """After a try: kill as root whatever the uid left (stopped ones too), then wait for the pool and the stopper."""
    from autograder.sandbox import uids

    for left in uids.processes_by_uid().get(uid, []):
        try:
            os.kill(left, signal.SIGKILL)
        except ProcessLookupError:
            pass
    pool.shutdown(wait=True)
    os.waitpid(stopper, 0)


def _stopper_as(uid: int) -> int:
    """A process of `uid` that runs STOPPER (stops every process of its uid, over and over): its pid."""
    return forked_as(uid, lambda: exec(STOPPER, {}))


def test_a_process_of_the_uid_that_stops_the_killer_does_not_hold_the_kill_past_its_bound():
    """kill_processes_of sends its kill again for at most KILL_SECONDS: a process of the uid that stops (SIGSTOP)
    the child it forks to send it, in the moment that child has become the uid and not yet killed, holds its
    os.waitpid(pid, 0) for ever (a few tries in a hundred on a 2-CPU machine: tries for 25 s here)."""
    from autograder.sandbox import uids

    uid, trying = free_uid(), time.monotonic() + 25
    for attempt in itertools.count():
        if time.monotonic() > trying:
            break
        pid = _stopper_as(uid)
        time.sleep(0.05)  # the loop runs
        pool = ThreadPoolExecutor(1)
        killing = pool.submit(uids.kill_processes_of, uid)
        try:
            killing.result(timeout=uids.KILL_SECONDS + 5)
        except TimeoutError:
            pytest.fail(f"try {attempt}: kill_processes_of({uid}) still waits {uids.KILL_SECONDS + 5:g} s later: "
                        "its child was stopped before it sent the kill")
        finally:
            _end_uid(uid, pool, pid)


STOPS_THE_KILLER = r"""
import ctypes, os
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # a daemon, the session's to end (it adopts it)
        os.close(w)
        os.read(r, 1)  # end of file once the loader and its check children, which hold w, have ended
        kill = ctypes.CDLL(None).kill
        while True:
            kill(-1, 19)  # SIGSTOP to every process of the uid: the session's killer too, once it is the uid
    os._exit(0)
os.wait()
os.close(r)
result = 1
"""


def test_a_daemon_that_stops_the_sessions_killer_does_not_wedge_the_session(monkeypatch):
    """At `uid` (and at `uid+landlock` on a kernel before 6.12, whose Landlock does not scope signals), the session
    ends each program's processes with uids.kill_processes_of: a daemon the notebook left that sends SIGSTOP to
    every process of its uid stops the killer child, and the session waits for it for ever. The grader then gives
    up on the request only at its last-resort deadline (minutes in a class run), every call of it fails with no
    answer, and the submission goes on in a new worker, the wasted time charged to no budget (red-a13 X23-1)."""
    import autograder.sandbox as sandbox_module

    monkeypatch.setattr(sandbox_module, "MARGIN_SECONDS", 2.0)  # the hang shows within seconds, not minutes
    with box("uid", Limits(seconds=2, memory_mb=1024, output_kb=64)) as sandbox:
        trying = time.monotonic() + 25
        for attempt in itertools.count():  # a new program each time: the session stops the loader, ends its processes
            if time.monotonic() > trying:
                break
            sandbox.begin(seconds=3)  # a submission each try: the daemon's loop spends its budget (more on a slow machine)
            started = time.monotonic()
            outcome = sandbox.call([Cell("student", STOPS_THE_KILLER + f"# {attempt}")], sandbox_probes.value,
                                   name="result")
            assert time.monotonic() - started < 5, f"try {attempt}: the session was wedged ({outcome.reason})"
            assert outcome.ok, outcome.reason


def test_a_daemon_that_stops_the_killer_at_the_sessions_end_does_not_outlive_the_grading(monkeypatch):
    """The same daemon (STOPS_THE_KILLER), winning at the session's last stop of its loader, after every answer was
    sent: the grades stand, the session waits for its stopped killer, the grader's end() gives up at its margin
    (30 s in a class run) and kills the worker, and the daemon, in a session of its own, is not in the process group
    the kernel hangs up when the worker dies: it runs on as its uid, with no session left to charge or stop it, until
    some later worker's start sweeps the uid (where it races again) (red-a13 X23-1)."""
    import autograder.sandbox as sandbox_module
    from autograder.sandbox import uids

    # past the kill's own bound (the class run's margin, 30 s, is too): a slow machine's killer may be stopped and sent
    # again for seconds, but never past KILL_SECONDS
    monkeypatch.setattr(sandbox_module, "MARGIN_SECONDS", uids.KILL_SECONDS + 2)
    code = STOPS_THE_KILLER.replace("result = 1", "result = os.getuid()")
    with box("uid", Limits(seconds=2, memory_mb=1024, output_kb=64)) as sandbox:
        trying = time.monotonic() + 25
        for attempt in itertools.count():
            if time.monotonic() > trying:
                break
            sandbox.begin(seconds=3)
            outcome = sandbox.call([Cell("student", code + f"# {attempt}")], sandbox_probes.value, name="result")
            assert outcome.ok, outcome.reason
            started = time.monotonic()
            sandbox.end()
            ended = time.monotonic() - started
            left = uids.processes_by_uid(running=True).get(outcome.value, [])
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            assert not left, f"try {attempt}: end() took {ended:.1f} s and left {left} running as {outcome.value}"
            assert ended < uids.KILL_SECONDS + 1, f"try {attempt}: end() took {ended:.1f} s: the session was wedged"


def test_a_left_stopper_does_not_hold_the_next_workers_start(monkeypatch, tmp_path):
    """What a daemon that outlived its grading (the test above) does to the next worker to start on the machine, a
    classmate's: its sweep of stale uids (uids._sweep, Isolation's claim of a uid) kills the daemon's uid with
    kill_processes_of, whose killer child the daemon stops as before; the worker's start then never ends (the
    grader gives up on it after STARTUP_SECONDS, 120 s, and fails that classmate's grading) (red-a13 X23-1)."""
    from autograder.sandbox import uids
    from autograder.sandbox.isolation import Budgets, Isolation

    monkeypatch.setattr(uids, "LOCKS", tmp_path)
    uid, trying = free_uid(), time.monotonic() + 25
    for attempt in itertools.count():
        if time.monotonic() > trying:
            break
        (tmp_path / str(uid)).touch()  # the lock file a killed worker left, unheld
        pid = _stopper_as(uid)
        time.sleep(0.05)
        pool = ThreadPoolExecutor(1)
        starting = pool.submit(Isolation, Budgets(), [])
        try:
            isolation = starting.result(timeout=uids.KILL_SECONDS + 5)
        except TimeoutError:
            pytest.fail(f"try {attempt}: the next worker's start still waits {uids.KILL_SECONDS + 5:g} s later")
        finally:
            _end_uid(uid, pool, pid)
        assert isolation.uid != uid
        for lock in tmp_path.iterdir():  # this process's claim: let go of it for the next try
            if lock.name != str(uid):
                lock.unlink()


CORE_LIMIT_LOWERED = ("import resource\ntry:\n    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
                      "except (OSError, ValueError):\n    pass\n")  # 0 is any process's to set, and dumps to a pipe again


@needs_level("uid")
@pytest.mark.parametrize("lowered", [False, True], ids=["as-set", "lowered-to-0"])
def test_a_pipe_core_pattern_gets_no_dump_of_student_code(tmp_path, lowered):
    """red-e15 X24-e15-1 (pass 24): `_confine` sets RLIMIT_CORE to (0, 0) so that student code dumps no core, naming a
    pipe core_pattern (systemd-coredump, apport) as the reason. But for a pipe pattern the kernel ignores RLIMIT_CORE
    (fs/coredump.c: "Normally core limits are irrelevant to pipes", only the value 1 aborts; the limit then becomes
    RLIM_INFINITY): a program student code runs is dumpable again, and its dump goes whole to the machine's helper, a
    root process outside every namespace and cgroup of the session. Measured here: `|handler %c` got limit=0 and
    25,214,976 bytes from a python3 the submission ran and sent SIGSEGV, at namespaces+cgroups. The limit is 1 now;
    `lowered-to-0`: student code that lowers it first (the filter denies the change)."""
    pattern = Path("/proc/sys/kernel/core_pattern")
    log, handler = tmp_path / "dumps", tmp_path / "handler.sh"
    handler.write_text(f"#!/bin/sh\nbytes=$(wc -c)\necho \"limit=$1 bytes=$bytes\" >> {log}\n")
    handler.chmod(0o755)
    old = pattern.read_text()
    try:
        pattern.write_text(f"|{handler} %c\n")
    except OSError as error:
        pytest.skip(f"core_pattern is not writable here ({error})")
    try:
        with box() as sandbox:
            code = (CORE_LIMIT_LOWERED * lowered +
                    "import signal, subprocess\np = subprocess.Popen(['sleep', '30'])\nimport time\ntime.sleep(0.2)\n"
                    "p.send_signal(signal.SIGQUIT)\nresult = p.wait()")
            assert run(sandbox, code) == -signal.SIGQUIT
        deadline = time.monotonic() + 5
        while not log.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        pattern.write_text(old)
    assert not log.exists(), log.read_text()


@needs_level("namespaces+cgroups")
def test_the_memory_budget_bounds_swap_too():
    """red-e15 X24-e15-2 (pass 24): a submission's memory cgroup limits its RAM alone (v1 memory.limit_in_bytes, v2
    memory.max); neither memory.memsw.limit_in_bytes (v1) nor memory.swap.max (v2) is set, so on a machine with swap
    (a CI runner's 4 GB, most VMs) the budget's reclaim swaps the submission out instead of killing it. Measured here
    with a 1 GB swap file: a check holding 400 MB under `budget_memory_mb=128` answered ok (sum 52428800.0), where
    without swap it is `killed by the kernel: ... memory budget of 128 MB`: the budget neither bounds the machine's
    memory nor fails the check it names. The swap limit must be the budget (v1: memsw equal to the limit; v2: 0)."""
    from autograder.sandbox.isolation import Budgets, _Cgroups

    cgroups = _Cgroups(f"kit-test-swap-{os.getpid()}", Budgets(memory_mb=128))
    try:
        limits = {}
        for folder in cgroups.dirs:
            for name in ("memory.memsw.limit_in_bytes", "memory.swap.max", "memory.limit_in_bytes", "memory.max"):
                if (folder / name).exists():
                    limits[name] = (folder / name).read_text().strip()
    finally:
        cgroups.remove()
    if "memory.memsw.limit_in_bytes" in limits:
        # RAM and swap together: the budget and a margin that keeps the RAM limit the one reached first (isolation)
        margin = int(limits["memory.memsw.limit_in_bytes"]) - int(limits["memory.limit_in_bytes"])
        assert 0 <= margin <= _Cgroups.SWAP_MARGIN_MB << 20 <= 16 << 20, limits
    elif "memory.swap.max" in limits:
        assert limits["memory.swap.max"] == "0", limits
    else:
        pytest.skip(f"this kernel's memory cgroup has no swap accounting ({sorted(limits)})")


SCRATCH_WITHOUT_BLOCKS = {  # what fills a tmpfs's inodes and kernel memory and none of its blocks (X24-e15-3)
    "folders": "import os\nos.mkdir('d')\nmade = 0\ntry:\n    for made in range(100_000):\n"
               "        os.mkdir(f'd/{made}')\nexcept OSError as error:\n    made = str(error)\nresult = made == 99_999",
    # 1,200 user xattrs of 60,000 bytes: 72 MB on one empty file, past the 64 MB disk budget
    "xattrs": "import os\nopen('f', 'w').close()\ntry:\n    for n in range(1200):\n"
              "        os.setxattr('f', f'user.a{n}', b'x' * 60000)\n    result = True\nexcept OSError:\n"
              "    result = False",
}


@needs_level("namespaces")
@pytest.mark.parametrize("kind", sorted(SCRATCH_WITHOUT_BLOCKS))
def test_at_namespaces_the_scratch_tmpfs_bounds_its_entries_not_only_its_bytes(kind):
    """red-e15 X24-e15-3 (pass 24): the session's scratch is a tmpfs of `size=<budget_disk_mb>m` and no `nr_inodes`,
    so it bounds bytes alone (the kernel's default is half the machine's pages in inodes: 2.8 million here). Empty
    folders take none of its blocks, but each is an inode and a dentry of kernel memory the tmpfs pins: one check of
    2 s made 224,000 folders (200-character names), the machine's Slab grew by 261 MB and the tmpfs still had all
    16,384 of its blocks free. At `namespaces` (no memory cgroup: a rootless container whose cgroup is not
    delegated) the session's memory count is its processes' PSS, which this is not, so a submission holds gigabytes
    past both its memory and its disk budget until it ends (the uid levels stop at DISK_ENTRIES of its walk). The
    scratch must refuse entries past a bound (nr_inodes), or count them as over the disk budget. tmpfs's user
    xattrs draw on the same inode space (nr_inodes x 1 KB, 2.9 GB here) and take no blocks either: one empty file held
    6,617 xattrs of 60,000 bytes (397 MB; MemAvailable -492 MB) within 2 s, the 64 MB tmpfs all free. (At
    namespaces+cgroups both are charged to the memory cgroup: held, killed with the memory budget named.)"""
    with box("namespaces") as sandbox:
        sandbox.begin()
        assert sandbox.level == "namespaces"
        outcome = sandbox.call([Cell("student", SCRATCH_WITHOUT_BLOCKS[kind])], sandbox_probes.value, name="result")
        hit = sandbox.end()
    assert not (outcome.ok and outcome.value is True), outcome
    assert hit == ["disk budget"], hit  # the summary names it (the scratch's entries ran out: Isolation.note_scratch)


def test_at_uid_a_file_left_in_a_shared_folder_inside_tmp_does_not_reach_the_next_submission():
    """red-e15 X24-e15-4 (pass 24): at `uid` the uid's files are removed after each submission from the top of /tmp,
    /var/tmp, /dev/shm and /run/lock only (isolation._remove_files_of), not from the folders any user may write
    inside them: a Debian machine's systemd-tmpfiles makes /tmp/.X11-unix, .ICE-unix, .font-unix, .XIM-unix and
    .Test-unix, root's and mode 1777. A file the submission leaves there (its own, mode 600) stays, and the next
    submission of the same worker runs as the same uid: it reads it (measured: the second submission read 'first
    student'). Nor does the file go when the run ends: files of at most output_kb each, as many as the budget's time
    writes, stay on the machine's disk for good. Here a root folder of mode 1777 stands in for /tmp/.X11-unix."""
    shared = Path(f"/tmp/.kit-test-x11-{os.getpid()}")
    shared.mkdir()
    shared.chmod(0o1777)
    left = shared / "X99"
    try:
        with box("uid") as sandbox:
            sandbox.begin()
            assert sandbox.level == "uid"
            uid = run(sandbox, f"import os\nwith open({str(left)!r}, 'w') as f:\n    f.write('first student')\n"
                               f"os.chmod({str(left)!r}, 0o600)\nresult = os.getuid()")
            sandbox.end()
            sandbox.begin()  # the next submission, in the same worker
            seen = run(sandbox, f"import os\ntry:\n    result = [os.getuid(), open({str(left)!r}).read()]\n"
                                f"except OSError as error:\n    result = [os.getuid(), str(error)]")
            sandbox.end()
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert seen[0] == uid  # the same uid: the worker's
    assert seen[1] != "first student", seen


@pytest.mark.parametrize("level", ["uid+landlock", "uid"])
def test_one_notebooks_grade_refuses_an_interpreter_reached_through_a_link_into_a_closed_folder(monkeypatch, level):
    """red-e15 X24-e15-5 (pass 24): `closed_to_others` walks the interpreter's folders as the grader was started
    (sys.prefix through a link: a course's .venv that links to a venv in a home folder), each step's mode read
    through the link (os.stat follows it), so the folders above the link's target are never looked at. The worker
    starts through the resolved folder (`_interpreter()`), under /root or a home of mode 700 that the student uid
    cannot enter: `python -m autograder grade` and Gradescope's run grade at `uid`/`uid+landlock` with every
    module the worker did not preload failing to import (the proof of `make grade` catches it: its session imports
    one as the uid), where the same venv reached by its real path is refused in one line."""
    base = Path(f"/tmp/kit-test-link-{os.getpid()}")
    try:
        (base / "home" / "venv" / "lib").mkdir(parents=True)
        (base / "home").chmod(0o700)
        (base / "course").mkdir()
        base.chmod(0o755)
        (base / "course").chmod(0o755)
        (base / "course" / ".venv").symlink_to(base / "home" / "venv", target_is_directory=True)
        monkeypatch.setattr(proof.proof_probe, "interpreter_folders", lambda: [str(base / "course" / ".venv" / "lib")])
        monkeypatch.setattr(proof, "machine_level", lambda: level)
        through_link = proof.closed_interpreter_refusal(GraderSettings())
        monkeypatch.setattr(proof.proof_probe, "interpreter_folders", lambda: [str(base / "home" / "venv" / "lib")])
        by_real_path = proof.closed_interpreter_refusal(GraderSettings())
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert "cannot reach the interpreter's files" in by_real_path, by_real_path
    assert "cannot reach the interpreter's files" in through_link, through_link


# 256 MB of the disk's blocks kept for a file of size 0 (fallocate's FALLOC_FL_KEEP_SIZE, through ctypes), then
# unlinked and held open for 1.5 s: what the machine's disk lost meanwhile, in MB.
RESERVE_256_MB = """\
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
before = os.statvfs('.')
fd = os.open('reserved', os.O_WRONLY | os.O_CREAT, 0o600)
code = libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(256 << 20))
size = os.fstat(fd).st_size
os.unlink('reserved')
time.sleep(1.5)
after = os.statvfs('.')
result = [code, size, (before.f_bavail - after.f_bavail) * after.f_frsize >> 20]"""


@pytest.mark.parametrize("level", ["uid+landlock", "uid"])
def test_without_a_private_tmpfs_a_file_reserves_no_more_of_the_disk_than_output_kb(level):
    """red-b17 X26-b17-1 (pass 26): docs/security.md bounds what a submission writes between two looks of the disk
    walk by `RLIMIT_FSIZE`, "each file is at most `output_kb`". fallocate with FALLOC_FL_KEEP_SIZE takes blocks
    without changing the file's size, and ext4 (the machine's /tmp, where the scratch folder is at the uid levels)
    checks RLIMIT_FSIZE only for a new size: one call reserves any amount of the machine's disk, past the 64 MB
    budget, in a file of size 0, and unlinked the walk never sees it. (Measured: 1 GB, disk budget not named; the
    same call at `namespaces` is refused by its tmpfs, EFBIG.) The whole free disk would fail a neighbour's files
    and the grader's own writes (gradebook, feedback, the next student's intake) for as long as the check lives."""
    with box(level, Limits(seconds=10, memory_mb=1024, output_kb=1024), budget_disk_mb=64) as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("student", RESERVE_256_MB)], sandbox_probes.value, name="result")
        hits = sandbox.end()
    assert not (outcome.ok and outcome.value[0] == 0), (outcome.value, hits)  # refused, or stopped at the budget


# 256 MB in `folder` (/dev/shm, the machine's tmpfs: memory, outside the scratch folder, or a folder in it), in files
# of 1 MB (output_kb), held 1.5 s (three looks of the disk walk, thirty of the memory count): how many MB were written.
SHM_INTO_A_FOLDER = """\
import os, time
written = 0
for n in range(256):
    try:
        with open(f'{folder}/{os.getpid()}-{n}', 'wb') as file:
            file.write(b'x' * 2**20)
        written += 1
    except OSError:
        break
time.sleep(1.5)
result = written"""
SHM_256_MB = "folder = '/dev/shm'\n" + SHM_INTO_A_FOLDER


def test_at_uid_memory_in_dev_shm_is_counted_against_a_budget():
    """red-c18 X27-c18-4 (pass 27): at `uid` docs/security.md says a submission's files outside its folder (in `/tmp`,
    `/var/tmp`, `/dev/shm`) "are bounded only by the machine's disk". `/dev/shm` is a tmpfs: its files are the
    machine's memory (here up to 24 GB, half of it), not disk, and no budget counts them: not the memory count (the
    PSS of the submission's processes: a file's pages are no process's until mapped), not the disk walk (the scratch
    folder only), not RLIMIT_AS. 256 MB past a memory budget of 128 MB and a disk budget of 64 MB, held 1.5 s,
    neither named; at this rate one check fills the machine's memory (swap, then the OOM killer among the grader's
    own processes and every other session's) before its time budget ends. Written somewhere a budget counts, or
    refused, or stopped."""
    limits = Limits(seconds=10, memory_mb=1024, output_kb=1024)
    with box("uid", limits, budget_memory_mb=128, budget_disk_mb=64) as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("student", SHM_256_MB)], sandbox_probes.value, name="result")
        hits = sandbox.end()
    assert not (outcome.ok and outcome.value == 256), (outcome.value, hits)


def test_the_walk_of_the_uids_files_in_memory_is_bounded(tmp_path, monkeypatch):
    """fix-shm (X27-c18-4): at `uid` the session counts the uid's files in the machine's tmpfs folders against the
    memory budget. The walk of them is bounded as the scratch folder's is: DISK_ENTRIES entries in all, the uid's
    top-level ones and those inside its folders together; others' entries are neither counted nor walked into."""
    from autograder.sandbox import isolation

    mine, theirs = os.getuid(), os.getuid() + 1
    (tmp_path / "file").write_bytes(os.urandom(100_000))
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "inner").write_bytes(os.urandom(100_000))
    def use(uid, bound):
        return isolation._memory_use(isolation._owned(uid, [str(tmp_path)], [str(tmp_path)]), bound)

    assert 200_000 <= use(mine, 1 << 20) < 300_000
    assert use(mine, 150_000) > 150_000
    assert use(theirs, 0) == 0
    monkeypatch.setattr(isolation, "DISK_ENTRIES", 5)
    for n in range(3):
        (tmp_path / "folder" / str(n)).touch()
    assert use(mine, 1 << 20) > 1 << 20  # 2 + 4 entries


def test_the_folders_whose_files_are_memory_are_found_from_the_mounts():
    """fix-shm (X27-c18-4): the places any user may write that are a tmpfs (or ramfs), as /proc/self/mountinfo says
    (the last mount on the longest point holding each): those the memory walk looks in at `uid`."""
    from autograder.sandbox import isolation

    kinds = {}
    with open("/proc/self/mountinfo") as info:
        for line in info:
            fields = line.split()
            kinds[fields[4]] = fields[fields.index("-") + 1]
    found = isolation._memory_folders(isolation.WRITABLE)
    assert ("/dev/shm" in found) == (kinds.get("/dev/shm") in isolation.MEMORY_FILESYSTEMS)
    assert "/nonexistent-kit-folder" not in isolation._memory_folders(["/nonexistent-kit-folder"])


SHM_UNLINKED_200_MB = """\
import os, time
held = []
for n in range(200):
    try:
        file = open(f'/dev/shm/rb19-{os.getpid()}-{n}', 'wb', buffering=0)
        os.unlink(file.name)
        file.write(b'x' * 2**20)
        held.append(file)
    except OSError:
        break
time.sleep(1.5)
result = len(held)"""


def test_at_uid_memory_in_an_unlinked_dev_shm_file_is_counted_against_a_budget():
    """red-b19 X28-b19-1 (pass 28): fix-shm counts the uid's files it finds by name in the tmpfs folders. A file
    opened in /dev/shm, unlinked at once, then written through its open descriptor (1 MB each, RLIMIT_FSIZE; 200 of
    them, below RLIMIT_NOFILE) has no name to walk, and its pages are no process's PSS (never mapped): 200 MB of the
    machine's memory past a memory budget of 128 MB and a disk budget of 64 MB, held 1.5 s, neither named (end()
    gives []). Counted, refused, or stopped."""
    limits = Limits(seconds=10, memory_mb=1024, output_kb=1024)
    with box("uid", limits, budget_memory_mb=128, budget_disk_mb=64) as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("student", SHM_UNLINKED_200_MB)], sandbox_probes.value, name="result")
        hits = sandbox.end()
    assert not (outcome.ok and outcome.value == 200), (outcome.value, hits)


SHM_SHARED_FOLDER = """\
import os
os.mkdir(f'/dev/shm/rb19-pub-{os.getpid()}', 0o777)
os.chmod(f'/dev/shm/rb19-pub-{os.getpid()}', 0o777)
result = f'/dev/shm/rb19-pub-{os.getpid()}'"""



def test_at_uid_memory_in_another_sessions_dev_shm_folder_is_counted_against_a_budget():
    """red-b19 X28-b19-2 (pass 28): fix-shm walks the uid's own entries in /dev/shm (and root's sticky shared
    folders), not folders of other uids. Sessions run side by side (`jobs`), each under its own uid: one submission
    makes /dev/shm/x mode 0777, a second one writes 256 MB into it. Its files are its uid's but in a folder it does
    not own: not walked, not its PSS; 256 MB past a memory budget of 128 MB, end() gives [] and its cleanup leaves
    them (only the first session's end removes them; while the first runs a check they count against ITS budget, a
    classmate stopped). Counted against the writer, refused, or stopped."""
    limits = Limits(seconds=10, memory_mb=1024, output_kb=1024)
    with box("uid", limits, budget_memory_mb=128, budget_disk_mb=64) as first:
        first.begin()
        made = first.call([Cell("student", SHM_SHARED_FOLDER)], sandbox_probes.value, name="result")
        assert made.ok, made
        with box("uid", limits, budget_memory_mb=128, budget_disk_mb=64) as second:
            second.begin()
            cell = f"folder = {made.value!r}\n" + SHM_INTO_A_FOLDER
            outcome = second.call([Cell("student", cell)], sandbox_probes.value, name="result")
            hits = second.end()
        first.end()
    assert not (outcome.ok and outcome.value == 256), (outcome.value, hits)


def test_the_memory_walk_charges_each_file_to_its_owner_in_any_folder(tmp_path):
    """fix-shm2 (X28-b19-2): in a tmpfs folder the walk enters every folder, whoever owns it, and counts each entry
    against its owner alone: a file in another uid's folder is its writer's, not the folder owner's. At the end each
    is removed from its folder reached one name at a time, following no link."""
    from autograder.sandbox import isolation

    mine, theirs = os.getuid() + 1, os.getuid() + 2
    for owner, other in ((mine, theirs), (theirs, mine)):
        folder = tmp_path / f"of-{owner}"
        folder.mkdir()
        (folder / "inside").write_bytes(os.urandom(100_000))
        os.chown(folder, owner, owner)
        os.chown(folder / "inside", other, other)
    places = [str(tmp_path)]
    for uid in (mine, theirs):
        assert 100_000 <= isolation._memory_use(isolation._owned(uid, places, places), 1 << 20) < 150_000
    assert isolation._memory_use(isolation._owned(mine, places), 1 << 20) < 100_000  # not a tmpfs: its own whole
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "kept").write_bytes(b"x")
    os.chown(tmp_path / "real" / "kept", mine, mine)
    isolation._remove_owned(str(tmp_path / f"of-{theirs}" / "inside"), mine)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    isolation._remove_owned(str(tmp_path / "link" / "kept"), mine)  # a folder on the way became a link: not followed
    assert not (tmp_path / f"of-{theirs}" / "inside").exists()
    assert (tmp_path / f"of-{mine}" / "inside").exists() and (tmp_path / "real" / "kept").exists()


def test_files_held_open_with_no_name_are_counted_once_each(tmp_path):
    """fix-shm2 (X28-b19-1): a file of a tmpfs opened, unlinked and written through its descriptor is counted
    through the /proc/<pid>/fd of the uid's processes (each once, however many descriptors hold it); one with a name
    left is the walk's, not counted here."""
    from autograder.sandbox import isolation

    shm = "/dev/shm" if "/dev/shm" in isolation._memory_folders(["/dev/shm"]) else None
    if shm is None:
        pytest.skip("no tmpfs at /dev/shm")
    devices, uid = {os.stat(shm).st_dev}, 64000 + os.getpid() % 1000  # a uid no other process runs as
    path = f"{shm}/fix-shm2-{os.getpid()}"
    ready, go = os.pipe()
    child = os.fork()
    if child == 0:  # holds one file with a name and one without (twice), as `uid`
        try:
            named, gone = os.open(path, os.O_CREAT | os.O_WRONLY), os.open(path + "-gone", os.O_CREAT | os.O_WRONLY)
            os.unlink(path + "-gone")
            os.dup(gone)
            os.write(named, os.urandom(300_000))
            os.write(gone, os.urandom(300_000))
            os.setuid(uid)
            os.write(go, b"x")
            time.sleep(30)
        finally:
            os._exit(0)
    try:
        assert os.read(ready, 1) == b"x"
        assert 300_000 <= isolation._held_unlinked(uid, devices, 1 << 40) < 400_000
        assert isolation._held_unlinked(uid, devices, 1000) > 1000
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.unlink(path)


SHM_MAPPED_UNTOUCHED_256_MB = """\
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
held = []
for n in range(256):
    try:
        name = f'/dev/shm/ra21-{os.getpid()}-{n}'
        fd = os.open(name, os.O_CREAT | os.O_RDWR, 0o600)
        os.unlink(name)
        os.write(fd, b'x' * 2**20)
    except OSError:
        break
    address = libc.mmap(None, 2**20, 0, 1, fd, 0)  # PROT_NONE, MAP_SHARED: the file kept, no page mapped
    os.close(fd)
    if address in (None, ctypes.c_void_p(-1).value):
        break
    held.append(address)
time.sleep(1.5)
result = len(held)"""


def test_at_uid_memory_in_an_unlinked_dev_shm_file_kept_by_a_mapping_is_counted_against_a_budget():
    """red-a21 X30-a21-1 (pass 30): fix-shm2 finds a tmpfs file with no name through the descriptors of the uid's
    processes (/proc/<pid>/fd). A mapping keeps a file too, with no descriptor: opened in /dev/shm, unlinked, written
    (1 MB, RLIMIT_FSIZE), mapped PROT_NONE (its pages stay out of every page table: no RSS, no PSS), then the
    descriptor closed. 256 such files are 256 MB of the machine's memory past a memory budget of 128 MB, held 1.5 s,
    none named (end() gives []); each process may map as many as RLIMIT_AS allows (1 GB here), each of 64 processes.
    Counted (for example through /proc/<pid>/map_files or maps), refused, or stopped."""
    limits = Limits(seconds=10, memory_mb=1024, output_kb=1024)
    with box("uid", limits, budget_memory_mb=128, budget_disk_mb=64) as sandbox:
        sandbox.begin()
        cell = Cell("student", SHM_MAPPED_UNTOUCHED_256_MB)
        outcome = sandbox.call([cell], sandbox_probes.value, name="result")
        hits = sandbox.end()
    assert not (outcome.ok and outcome.value == 256), (outcome.value, hits)


def test_at_uid_no_process_can_end_its_first_thread_while_a_second_holds_memory():
    """red-a21 X30-a21-2/-3 (pass 30): without a memory cgroup the session counts the memory of the submission's
    processes from /proc/<pid>/status and smaps_rollup, and finds unnamed /dev/shm files through /proc/<pid>/fd: all of
    them the first thread's, which shows nothing once that thread ended alone (the exit system call) while a second
    one held 256 MB, or 200 unlinked 1 MB files, past a 128 MB budget. The session reads through a live thread
    (/proc/<pid>/task/<tid>/...); and the system-call filter now starts no second thread at all (seccomp.py), at the
    uid level too, so no such process can be made."""
    cell = "import threading\ntry:\n    threading.Thread(target=print).start()\n    result = 'started'\n" \
           "except RuntimeError as error:\n    result = str(error)\n"
    with box("uid", Limits(seconds=10, memory_mb=1024, output_kb=1024), budget_memory_mb=128, budget_disk_mb=64) \
            as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("student", cell)], sandbox_probes.value, name="result")
    assert outcome.value == "can't start new thread", outcome
