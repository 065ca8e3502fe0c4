"""Isolation, one property at a time: two submissions in sandboxes of two grading slots, side by side.

The class-run test (test_catalogue_hostile.py) shows the same through `make grade`; these say which
mechanism holds, quickly. They need the grader's power to isolate: root.
"""
from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

import sandbox_probes
from autograder.sandbox import Cell, Limits, Sandbox
from autograder.settings import GraderSettings
from autograder.suites import private_paths
from conftest import ASSIGNMENT, ROOT

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="isolating submissions needs the grader to run as root")

PROBES = ROOT / "tests" / "sandbox_probes.py"


def box(**budgets) -> Sandbox:
    settings = GraderSettings(**budgets)
    return Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=3, memory_mb=1024, output_kb=64),
                   isolation=settings.isolation(private_paths(ASSIGNMENT)), preload=["subprocess"])


def run(sandbox: Sandbox, code: str, name: str = "result"):
    outcome = sandbox.call([Cell("student", code)], sandbox_probes.value, name=name)
    assert outcome.ok, (outcome.reason, outcome.load_errors)
    return outcome.value


@pytest.fixture
def pair():
    with box() as one, box() as two:
        yield one, two


def test_the_worker_names_the_strongest_level(pair):
    one, _ = pair
    one.begin()
    assert one.level == "namespaces+cgroups"


def test_a_submission_sees_only_its_own_processes_and_files(pair):
    one, two = pair
    one.begin()
    two.begin()
    uid_one = run(one, "import os, subprocess\nsubprocess.Popen(['sleep', '321.5'])\n"
                       "open('/tmp/secret', 'w').write('one')\nresult = os.getuid()")
    seen = run(two, "import os\nresult = [sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), "
                    "os.listdir('/tmp'), os.getuid()]")
    assert seen[0] == [1, 2] and seen[1] == [], seen  # its session and its loader; an empty /tmp
    assert uid_one != seen[2] and 0 not in (uid_one, seen[2])
    killed = run(two, "import os, signal\nresult = []\nfor pid in set(range(1, 1 << 16)) - {os.getpid()}:\n"
                      "    try:\n        os.kill(pid, signal.SIGKILL)\n        result.append(pid)\n"
                      "    except OSError:\n        pass")
    assert "sleep 321.5" in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert killed == []  # nothing but itself in sight (pid 1, its session, is root's)
    one.end()
    assert "sleep 321.5" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


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
try:
    open("/run/lock/planted-by-a-submission", "w")  # a folder anyone may write to, on the machine's disk
    result["write"] = "written"
except OSError as error:
    result["write"] = error.strerror"""
    seen = run(one, code)
    # A course under /tmp (a clone in CI) is not there at all (the session's /tmp is its own): refused either way.
    assert set(list(seen.values())[:3]) == {"refused"}, seen
    assert seen["write"] == "Read-only file system"


def test_no_network_not_even_the_hosts_loopback(pair):
    one, _ = pair
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = f"""\
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
address = struct.pack("=H", 2) + struct.pack("!H4s8x", {port}, bytes([127, 0, 0, 1]))
fd = libc.socket(2, 1, 0)
result = [libc.connect(fd, address, len(address)), ctypes.get_errno()]"""
        result, error = run(one, code)
        assert result == -1 and error == 101  # ENETUNREACH: its loopback is down and nothing else exists
        server.settimeout(0.2)
        with pytest.raises(TimeoutError):
            server.accept()


@pytest.mark.parametrize("code,budget", [
    ("import os, time\nfor _ in range(200):\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)",
     "process budget"),
    ("for n in range(300):  # files under the 64 KB a file may be here, until the 8 MB are full\n"
     "    open(f'/dev/shm/{n}', 'wb').write(b'x' * 60000)", "disk budget"),
    ("import os, time\nimport numpy as np\nfor _ in range(2):\n    if os.fork() == 0:\n"
     "        block = np.ones(96 * 2**20 // 8)\n        time.sleep(60)\n        os._exit(0)\ntime.sleep(1.5)",
     "memory budget"),
])
def test_a_budget_hit_is_named(code, budget):
    with box(budget_memory_mb=128, budget_processes=16, budget_disk_mb=8) as sandbox:
        sandbox.begin()
        sandbox.call([Cell("student", code)], sandbox_probes.value, name="x")
        assert budget in sandbox.end()


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


def test_a_process_the_memory_budget_killed_is_named_so():
    hog = "import numpy as np\ndef hog():\n    return np.ones(400 * 2**20 // 8).sum()"  # under the 1024 MB per check
    with box(budget_memory_mb=128) as sandbox:
        sandbox.begin()
        outcome = sandbox.call([Cell("student", hog)], sandbox_probes.run, name="hog")
        assert "memory budget" in sandbox.end()
    assert outcome.reason == ("was killed by the kernel: the submission's processes together used their memory budget "
                              "of 128 MB"), outcome
