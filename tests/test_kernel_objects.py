"""No kernel object crosses sessions (issue 29, item 4): two submissions graded at the same time share no key,
System V message queue, semaphore set or shared memory segment, or POSIX message queue, because student code
runs under the system-call filter (autograder/sandbox/seccomp.py), at every isolation level."""
from __future__ import annotations

import os
import platform
import pty
import subprocess
import sys

import pytest
import sandbox_probes
from catalogue_hostile import KERNEL_OBJECTS, SHARED_FILE_REFUSED, SHARED_FILE_SIGNALS

from autograder.sandbox import Cell, Limits, Sandbox, seccomp
from conftest import ROOT, needs_level

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="the probes name x86_64's key calls")

PROBES = ROOT / "tests" / "sandbox_probes.py"
LEFT = "key EPERM; setperm EPERM; message queue EPERM; semaphores EPERM; shared memory EPERM; POSIX queue EPERM"


def box(level: str | None = None) -> Sandbox:
    """A sandbox at the machine's level, or at most `level`."""
    from autograder.settings import GraderSettings

    isolation = GraderSettings().isolation()
    return Sandbox(modules={"sandbox_probes": PROBES}, limits=Limits(seconds=3, memory_mb=1024, output_kb=64),
                   isolation={**isolation, "level": level} if level else isolation)


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


def test_two_submissions_graded_at_once_share_no_lock_watch_or_name():
    with box() as first, box() as second:
        first.begin()
        second.begin()
        seen = [first.call([Cell("student", SHARED_FILE_SIGNALS)], sandbox_probes.value, name="message"),
                second.call([Cell("student", SHARED_FILE_SIGNALS)], sandbox_probes.value, name="message")]
        first.end()
        second.end()
    assert [outcome.value for outcome in seen] == [SHARED_FILE_REFUSED] * 2, [(o.reason, o.load_errors) for o in seen]


@pytest.mark.skipif(os.geteuid() != 0, reason="the `uid` level, where /dev/tty is the machine's, needs root")
def test_student_code_graded_from_a_terminal_has_no_terminal_to_type_into():
    """`make grade` in the instructor's terminal: at the `uid` level (no mount namespace) /dev/tty is the
    machine's, and a process with that terminal as its controlling one could push characters into the
    instructor's shell with TIOCSTI. The loader starts a session of its own, so /dev/tty opens nothing."""
    code = f"""
import sys
sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "tests")!r}]
import sandbox_probes
from autograder.sandbox import Cell, Limits, Sandbox
from autograder.settings import GraderSettings
isolation = {{**GraderSettings().isolation(), "level": "uid"}}
with Sandbox(modules={{"sandbox_probes": sandbox_probes.__file__}}, limits=Limits(seconds=3, memory_mb=1024,
             output_kb=64), isolation=isolation) as sandbox:
    outcome = sandbox.call([Cell("student", {TYPE_INTO_TERMINAL!r})], sandbox_probes.value, name="message")
print("outcome:", outcome.value, outcome.reason, *outcome.load_errors, flush=True)
"""
    pid, terminal = pty.fork()  # the child's controlling terminal is a new pseudo-terminal, as in a shell
    if pid == 0:
        os.execv(sys.executable, [sys.executable, "-c", code])
    output = b""
    while True:
        try:
            chunk = os.read(terminal, 4096)
        except OSError:  # EIO: the child ended
            break
        if not chunk:
            break
        output += chunk
    os.waitpid(pid, 0)
    assert output.split(b"outcome: ")[-1].strip() == b"no terminal: ENXIO", output


TYPE_INTO_TERMINAL = """\
import errno, fcntl, os
try:
    fcntl.ioctl(os.open("/dev/tty", os.O_RDWR), 0x5412, b"#")  # TIOCSTI
    message = "typed into the grader's terminal"
except OSError as error:
    message = "no terminal: " + errno.errorcode[error.errno]"""


# Kernel memory a process holds outside its own memory: a socket pair's queues, an epoll's watches, a Landlock
# ruleset's rules, pipes' buffers.
KERNEL_BUFFERS = """\
import ctypes, errno, os, resource, select
libc = ctypes.CDLL(None, use_errno=True)
pair = (ctypes.c_int * 2)()
made = "made" if libc.socketpair(1, 1, 0, pair) == 0 else errno.errorcode[ctypes.get_errno()]
try:
    select.epoll()
    watches = "made"
except OSError as error:
    watches = errno.errorcode[error.errno]
rules = "made" if libc.syscall(444, None, 0, 1) >= 0 else errno.errorcode[ctypes.get_errno()]  # Landlock's ABI
pipes = []
try:
    while True:
        pipes.append(os.pipe())
except OSError as error:
    full = errno.errorcode[error.errno]
for ends in pipes:  # the loader needs one to run the check
    os.close(ends[0])
    os.close(ends[1])
limit = resource.getrlimit(resource.RLIMIT_NOFILE)
result = (f"socketpair {made}; epoll {watches}; landlock {rules}; descriptors {limit}; pipes {full} under 128: "
          f"{len(pipes) < 128}")"""


@pytest.mark.parametrize("level", [pytest.param("uid+landlock", marks=needs_level("uid")), None])
def test_student_code_holds_no_socket_queue_and_few_pipes(level):
    """Without a memory cgroup (`uid+landlock`, `uid`) the session counts its processes' memory, which a socket's
    queues, an epoll's watches and a pipe's buffer are not: the filter refuses socketpair and epoll, and each
    process holds at most 256 descriptors (and so pipes)."""
    with box(level) as sandbox:
        outcome = sandbox.call([Cell("student", KERNEL_BUFFERS)], sandbox_probes.value, name="result")
        assert level is None or sandbox.level in ("uid+landlock", "uid")
    assert outcome.value == ("socketpair EPERM; epoll EPERM; landlock EPERM; descriptors (256, 256); pipes EMFILE "
                             "under 128: True"), (
        outcome.reason, outcome.load_errors)


LOWER_THROUGH_AUTOGROUP = """\
import ctypes
ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: the loader's /proc/self files are its uid's again
try:
    with open("/proc/self/autogroup", "w") as autogroup:  # the weight of the loader's session (setsid) on the CPU
        autogroup.write("10")
except OSError:
    pass
result = open("/proc/self/autogroup").read().split()[-1]"""


@pytest.mark.skipif(not os.path.exists("/proc/self/autogroup"), reason="a kernel without autogroups")
@pytest.mark.parametrize("level", [pytest.param("uid+landlock", marks=needs_level("uid")), None])
def test_student_code_cannot_lower_its_priority_through_its_autogroup(level):
    """The filter denies setpriority and the sched_* calls: a process that lowers its own priority beside a busy
    neighbour waits for a CPU nearly all the time, and waits are taken off the wall-clock backstop. Each loader
    starts a session of its own, so an autogroup of its own, whose nice value /proc/self/autogroup sets (red-b7
    pass 20: at nice 10, pinned beside one busy process, a check that burns 2.5 s of CPU held its grader 22 to 24 s
    before the 6 s backstop stopped it, a sleeping check 12 s)."""
    with box(level) as sandbox:
        outcome = sandbox.call([Cell("student", LOWER_THROUGH_AUTOGROUP)], sandbox_probes.value, name="result")
    assert (outcome.value, outcome.load_errors) == ("0", [])



def test_student_code_in_a_read_only_proc_is_still_the_oom_killers_choice():
    """A namespaces session's /proc is read-only to its processes; the loader still sets its OOM score back to 0
    (the session's is -1000 where the machine allows it) through the session's writable one, before student code."""
    with box(None) as sandbox:
        outcome = sandbox.call([Cell("student", "result = open('/proc/self/oom_score_adj').read().strip()")],
                               sandbox_probes.value, name="result")
    assert (outcome.value, outcome.load_errors) == ("0", [])

def test_the_filter_denies_only_what_it_names_and_kills_another_architectures_calls():
    code = f"""
import ctypes, errno, os, socket, sys
sys.path.insert(0, {str(ROOT)!r})
from autograder.sandbox import seccomp
seccomp.install()
libc = ctypes.CDLL(None, use_errno=True)
assert libc.syscall(250, 0, -3, 0) == -1 and ctypes.get_errno() == errno.EPERM  # keyctl
assert libc.msgget(1, 0o1600) == -1 and ctypes.get_errno() == errno.EPERM
# a filter of its own, by either door (a no-op program: one instruction, allow): compiled BPF in kernel memory
allow = (ctypes.c_uint64 * 1)(0x7FFF0000 << 32 | 0x06)  # struct sock_filter {{BPF_RET|BPF_K, 0, 0, ALLOW}}
program = (ctypes.c_uint64 * 2)(1, ctypes.addressof(allow))  # struct sock_fprog {{len, filter}}
assert libc.syscall(317, 1, 0, program) == -1 and ctypes.get_errno() == errno.EPERM  # seccomp(SET_MODE_FILTER)
assert libc.prctl(22, 2, program, 0, 0) == -1 and ctypes.get_errno() == errno.EPERM  # PR_SET_SECCOMP
assert libc.prctl(38, 1, 0, 0, 0) == 0  # another prctl (PR_SET_NO_NEW_PRIVS): allowed
for lower in (lambda: os.setpriority(os.PRIO_PROCESS, 0, 19),  # its waits for a CPU would hold the backstop off
              lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)),
              lambda: os.sched_setaffinity(0, {{min(os.sched_getaffinity(0))}})):  # pinned beside a busy neighbour
    try:
        lower()
        raise SystemExit("student code lowered its own priority")
    except PermissionError:
        pass
context = ctypes.c_ulong(0)
assert libc.syscall(206, 1, ctypes.byref(context)) == -1 and ctypes.get_errno() == errno.EPERM  # io_setup
import signal
signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # another signal's action: allowed
try:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children the kernel reaps: their CPU time would be lost
    raise SystemExit("SIGCHLD's action was changed")
except OSError as error:
    assert error.errno == errno.EPERM
try:
    os.memfd_create("outside every per-process memory limit")
    raise SystemExit("a memfd was made")
except OSError as error:
    assert error.errno == errno.EPERM
try:
    socket.socketpair()  # its queues are memory no process holds
    raise SystemExit("a socket pair was made")
except OSError as error:
    assert error.errno == errno.EPERM
a, b = os.pipe()
page = ctypes.create_string_buffer(4096)
vector = (ctypes.c_void_p * 2)(ctypes.addressof(page), 4096)
assert libc.vmsplice(b, vector, 1, 0) == -1 and ctypes.get_errno() == errno.EPERM  # a page the pipe would hold
assert libc.splice(a, None, b, None, 1, 0) == -1 and ctypes.get_errno() == errno.EPERM
assert libc.tee(a, b, 1, 0) == -1 and ctypes.get_errno() == errno.EPERM
import select
try:
    select.epoll()  # its watches are memory no process holds
    raise SystemExit("an epoll was made")
except OSError as error:
    assert error.errno == errno.EPERM
assert libc.epoll_ctl(a, 1, b, None) == -1 and ctypes.get_errno() == errno.EPERM
assert select.poll().poll(0) == []  # poll: allowed
import tempfile
with tempfile.TemporaryFile() as file:  # fallocate keeping the size reserves blocks RLIMIT_FSIZE never sees
    assert libc.fallocate(file.fileno(), 1, 0, 1 << 20) == -1 and ctypes.get_errno() == errno.EOPNOTSUPP
    os.posix_fallocate(file.fileno(), 0, 8192)  # the C library then writes the blocks: allowed, and bounded
    assert os.fstat(file.fileno()).st_size == 8192
for family in (socket.AF_INET, socket.AF_UNIX):
    try:
        socket.socket(family)
        raise SystemExit(f"a socket of {{family}} was made")
    except OSError as error:
        assert error.errno == errno.EAFNOSUPPORT
import fcntl, termios
assert fcntl.fcntl(a, fcntl.F_GETFD) & fcntl.FD_CLOEXEC  # fcntl but for locks and notices: allowed
terminal, _ = os.openpty()
try:
    fcntl.ioctl(terminal, termios.TIOCSTI, b"x")  # root may type into any terminal: the filter denies it
    raise SystemExit("TIOCSTI was let through")
except OSError as error:
    assert error.errno == errno.EPERM
assert fcntl.ioctl(terminal, termios.TIOCGWINSZ, bytes(8))  # another ioctl: allowed
library = os.open("/proc/self/exe", os.O_RDONLY)  # a file every process of the machine may read
page = bytearray(4096)
assert os.preadv(library, [page], 0) == 4096  # preadv: allowed
try:
    os.sendfile(b, library, 0, 4096)  # the file's pages into a pipe, as splice; shutil falls back to read and write
    raise SystemExit("sendfile was let through")
except OSError as error:
    assert error.errno == errno.ENOSYS
import shutil
shutil.copyfile("/proc/self/exe", "/dev/null")
for call, wanted in ((lambda: os.preadv(library, [page], 0, os.RWF_NOWAIT), errno.EOPNOTSUPP),  # glibc: ENOSYS
                     (lambda: os.posix_fadvise(library, 0, 0, os.POSIX_FADV_DONTNEED), errno.EPERM)):  # drop it
    try:
        call()
        raise SystemExit("a call on the page cache was let through")
    except OSError as error:
        assert error.errno == wanted, error
assert libc.syscall(56, 0x40000000 | 17, 0, 0, 0, 0) == -1 and ctypes.get_errno() == errno.EPERM  # clone(NEWNET)
import threading
try:
    threading.Thread(target=print).start()  # clone with CLONE_THREAD: denied, grading starts no thread
    raise SystemExit("a thread was let through")
except RuntimeError as error:
    assert str(error) == "can't start new thread", error
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
