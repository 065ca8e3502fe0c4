"""No kernel object crosses sessions (issue 29, item 4): two submissions graded at the same time share no key,
System V message queue, semaphore set or shared memory segment, or POSIX message queue, because student code
runs under the system-call filter (autograder/sandbox/seccomp.py), at every isolation level."""
from __future__ import annotations

import platform
import subprocess
import sys

import pytest
import sandbox_probes
from catalogue_hostile import KERNEL_OBJECTS

from autograder.sandbox import Cell, Limits, Sandbox, seccomp
from conftest import ROOT

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="the probes name x86_64's key calls")

PROBES = ROOT / "tests" / "sandbox_probes.py"
LEFT = "key EPERM; setperm EPERM; message queue EPERM; semaphores EPERM; shared memory EPERM; POSIX queue EPERM"


def box() -> Sandbox:
    from autograder.settings import GraderSettings

    return Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=3, memory_mb=1024, output_kb=64),
                   isolation=GraderSettings().isolation())


def look_and_leave(sandbox: Sandbox) -> str:
    outcome = sandbox.call([Cell("student", KERNEL_OBJECTS)], sandbox_probes.value, name="message")
    assert outcome.ok, (outcome.reason, outcome.load_errors)
    return outcome.value


def test_two_submissions_graded_at_once_share_no_kernel_object():
    with box() as first, box() as second:
        first.begin()
        second.begin()
        # Both sessions are open, and each loader, which made its objects as it loaded, is still running when the
        # other looks: the first looks before the second leaves anything, the second after the first did, and the
        # first again once the second's objects would be there.
        seen = [look_and_leave(first), look_and_leave(second)]
        assert first.session and second.session
        seen.append(first.call([Cell("student", KERNEL_OBJECTS + "\nagain = 1")], sandbox_probes.value,
                               name="message").value)
        first.end()
        second.end()
    assert seen == [f"no kernel object from another submission (left: {LEFT})"] * 3


def test_the_filter_denies_only_what_it_names_and_kills_another_architectures_calls():
    code = f"""
import ctypes, errno, os, socket, sys
sys.path.insert(0, {str(ROOT)!r})
from autograder.sandbox import seccomp
seccomp.install()
libc = ctypes.CDLL(None, use_errno=True)
assert libc.syscall(250, 0, -3, 0) == -1 and ctypes.get_errno() == errno.EPERM  # keyctl
assert libc.msgget(1, 0o1600) == -1 and ctypes.get_errno() == errno.EPERM
a, b = socket.socketpair()  # AF_UNIX: allowed
try:
    socket.socket(socket.AF_INET)
    raise SystemExit("an IPv4 socket was made")
except OSError as error:
    assert error.errno == errno.EAFNOSUPPORT
assert libc.syscall(56, 0x40000000 | 17, 0, 0, 0, 0) == -1 and ctypes.get_errno() == errno.EPERM  # clone(NEWNET)
pid = os.fork()  # a plain clone: allowed
if pid == 0:
    os._exit(7)
assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7
import numpy
assert numpy.linalg.inv(numpy.eye(3)).trace() == 3
libc.syscall(0x40000000 | 39)  # getpid through x86_64's x32 table: another architecture's number
raise SystemExit("a call of the x32 table was let through")
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == -31, run.stderr[-2000:]  # SIGSYS: the filter killed the process


def test_the_filter_is_a_classic_bpf_program_within_the_kernels_jump_range():
    code = seccomp.program("x86_64")
    assert len(code) % 8 == 0 and len(code) // 8 < 256  # a jump's offset is one byte
    assert seccomp.program("aarch64") != code
