"""The system-call filter student code runs under: no kernel object one submission could share with another.

Each loader installs it on itself (child.py), last, after it dropped its privileges, so that it and every
process it starts (check children, anything student code forks or runs) carry it; it cannot be removed. A
classic BPF program given to the kernel with prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) through ctypes,
as nsjail and bubblewrap hand one over: no compiler, no libseccomp.

What it denies starts from Docker's default profile (moby's profiles/seccomp/default.json), which allows a list and
denies the rest with EPERM: of what that profile denies, every call a process could use to reach past its own
session. Keys first: a key is found by its serial number machine-wide (/proc/keys), whatever session keyring holds
it, and no namespace the kernel offers here hides it; then the calls that name or make kernel objects other sessions
can see (SysV message queues, semaphores, shared memory and POSIX message queues, which without an IPC namespace of
its own, the levels without namespaces, are the machine's; namespaces themselves; mounts), that read or write
another process (ptrace, process_vm_*, kcmp, pidfd_getfd), or the kernel's own state (modules, bpf, perf events, the
clock, swap, reboot). Unlike Docker's, it also denies the System V calls Docker allows inside an IPC namespace,
io_uring (which Docker has denied since 2023), seccomp itself and prctl's PR_SET_SECCOMP (a filter is kernel memory
no process holds; Docker allows a container its own), memfd_create (a memfd's pages are outside RLIMIT_AS, the memory bound
where there is no memory cgroup), Linux AIO (io_setup and the rest: RWF_NOWAIT reads the page cache, and its
contexts are counted machine-wide), socketpair, vmsplice, splice, tee and epoll (a socket's queues, a page a pipe
holds by reference and an epoll's watches are memory no process holds: outside RLIMIT_AS and the session's count of
its processes' memory), and what Docker allows because a container has its own network, files and terminal, and a
session without namespaces does not (nor a session at any level its neighbour's libraries, which are the same
files): `socket` (every family: with socketpair denied, student code has no socket at all), `bind`, `connect` and
`listen`, so no socket has a name another session could reach (an abstract one, a socket file in /tmp or /run);
`flock`, `inotify_add_watch` and fcntl's locks, leases and folder notices, each a signal to a session that opens the
same file, `cachestat`, `fadvise64` and preadv2's RWF_NOWAIT, which write and read such a file's page cache, and a
futex not marked private, which one session can wait on and another wake through such a file's page; a new action
for SIGCHLD, whose SIG_IGN would hide children's CPU time from a count without a cgroup; ioctl's TIOCSTI and
TIOCLINUX, which type into a terminal (the loader has none: child.py starts a session of its own); a change of
RLIMIT_CORE, whose 1 is what keeps a dump from a pipe core_pattern's root helper (child.py). A grader's checks
need none of them: numpy, the reference and every honest notebook run the same under it (tests/test_sandbox.py), but
for asyncio's default event loop, which needs epoll.

Beyond any of Docker's, it denies a clone that makes a thread (CLONE_THREAD): code a cell leaves running in a
thread binds names at moments of its own, so a grade would depend on timing, and no look at a thread tells a
student's from an idle library one (tqdm's monitor, which turns itself off when its thread does not start). So for
a timer of its own: timer_create and timerfd_create, whose signal or readable descriptor comes at a moment of its own
and which no look from Python reads back (cell_runner.left_running reads setitimer's three; red-a26 X35-a26-9). And it
keeps every process a check starts below the check's own process, whose CPU time and waits are the check's: a
clone whose child would be the caller's sibling (CLONE_PARENT) is denied, and so is prctl's unsetting of
PR_SET_CHILD_SUBREAPER (a check child's, which takes in what a process below it double-forks: child.py).

A denied call fails with EPERM (a socket with EAFNOSUPPORT), as under Docker; clone3 fails with ENOSYS, so
that the C library falls back to clone, whose flags the filter can read (a clone that asks for a new
namespace is denied), and so do preadv2, pwritev2, futex_waitv, the futex2 calls and sendfile (FALL_BACK); fallocate
fails with EOPNOTSUPP, so that posix_fallocate writes the blocks instead (NOT_SUPPORTED). A
call made with another architecture's numbers (32-bit x86 on x86_64, its x32 ABI) kills the process: the
filter reads numbers for one architecture only.

Standard library only: a loader imports this file as a top-level module beside its siblings.
"""
from __future__ import annotations

import ctypes
import errno
import platform
import struct

# The kernel's names for the architectures the filter knows (linux/audit.h), and their numbers of the calls
# it looks at (asm/unistd_64.h; aarch64 uses asm-generic/unistd.h).
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000  # x86_64's x32 ABI: numbers with this bit are another table's
DENIED: dict[str, tuple[int, int | None]] = {  # name: (x86_64, aarch64), None where it has no such call
    # keys: the object that crossed sessions (issue 29)
    "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219),
    # System V IPC and POSIX message queues: the machine's, where the session has no IPC namespace
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "mq_open": (240, 180), "mq_unlink": (241, 181), "mq_timedsend": (242, 182), "mq_timedreceive": (243, 183),
    "mq_notify": (244, 184), "mq_getsetattr": (245, 185),
    # other processes
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "kcmp": (312, 272),
    "pidfd_getfd": (438, 438),
    # namespaces and mounts
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41),
    "chroot": (161, 51), "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430),
    "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442),
    "name_to_handle_at": (303, 264), "open_by_handle_at": (304, 265),
    # the kernel's own state
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282), "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426), "io_uring_register": (427, 427), "init_module": (175, 105),
    "finit_module": (313, 273), "delete_module": (176, 106), "kexec_load": (246, 104),
    "kexec_file_load": (320, 294), "reboot": (169, 142), "swapon": (167, 224), "swapoff": (168, 225),
    "acct": (163, 89), "settimeofday": (164, 170), "clock_settime": (227, 112), "clock_adjtime": (305, 266),
    "adjtimex": (159, 171), "quotactl": (179, 60), "lookup_dcookie": (212, 18), "fanotify_init": (300, 262),
    "syslog": (103, 116), "vhangup": (153, 58), "mbind": (237, 235), "set_mempolicy": (238, 237),
    "migrate_pages": (256, 238), "move_pages": (279, 239),
    # what two sessions share without making anything: a lock or a watch on a file both can read (a library of
    # the session's root is the same inode in every session), and an address (a socket's name, abstract or a
    # file): no socket is made at all (socketpair: below)
    "flock": (73, 32), "inotify_add_watch": (254, 27), "bind": (49, 200), "connect": (42, 203),
    "listen": (50, 201),
    # the page cache of such a file: which of its pages another session read (cachestat) or dropped them (fadvise)
    "cachestat": (451, 451), "fadvise64": (221, 223),
    # Linux AIO: a read with RWF_NOWAIT asks the page cache as preadv2 would, and its contexts are one count for
    # the whole machine (fs.aio-max-nr), which one session could spend for every other
    "io_setup": (206, 0), "io_destroy": (207, 1), "io_submit": (209, 2), "io_cancel": (210, 3),
    "io_getevents": (208, 4), "io_pgetevents": (333, 292),
    # memory no per-process limit counts: a memfd's pages, until mapped, are outside RLIMIT_AS (the only memory
    # bound where there is no memory cgroup); the kit and numpy never make one
    "memfd_create": (319, 279), "memfd_secret": (447, 447),
    # memory no process holds, outside RLIMIT_AS and the session's count of PSS and RSS: a socket's queues (1.6 GB
    # in 200 pairs measured, whose sender showed 30 MB), and a page vmsplice, splice or tee put in a pipe, held by
    # reference after it is unmapped or its file removed (a huge page whole: 4 KB vmspliced into each of 100 pipes
    # held 167 MB); the kit, numpy and the probes use none of them
    "socketpair": (53, 199), "vmsplice": (278, 75), "splice": (275, 76), "tee": (276, 77),
    # and an epoll's watches, about 200 bytes each, one per file and descriptor number registered: a file can be
    # registered under every number in turn (460,000 in one process of 256 descriptors held 89 MB), up to 4% of
    # the machine's memory per uid (fs.epoll.max_user_watches); the loader waits with poll (protocol.Lines), and
    # asyncio's default loop is the one user of epoll a notebook might have. aarch64 has epoll_create1 only.
    "epoll_create": (213, None), "epoll_create1": (291, 20), "epoll_ctl": (233, 21),
    # and a Landlock ruleset's rules (195,000 held 13 MB): the loader enforces its own before this filter
    "landlock_create_ruleset": (444, 444), "landlock_add_rule": (445, 445), "landlock_restrict_self": (446, 446),
    # and filters of its own (prctl's PR_SET_SECCOMP too: below): each is a compiled BPF program in kernel memory
    # no process holds. Thousands stacked in each of a session's processes held 1.4 GB, and freeing them all at
    # once when the session was killed wedged a 6.18 kernel's BPF allocator for the whole machine. With socket,
    # bpf, ptrace and perf_event_open denied too, student code has no way left to make a BPF program.
    "seccomp": (317, 277),
    # and its own priority: a process that lowers itself (nice 19, SCHED_IDLE) beside a busy neighbour waits for a
    # CPU nearly all the time, and time spent waiting is taken off the wall-clock backstop (cputime.Stopwatch); the
    # session raises a late submission's priority from outside the filter (worker.py: hurry). Nor the CPUs it may
    # run on: pinned to the one a heavier neighbour keeps busy, it waits as well. (A namespaces session's /proc is
    # read-only, so its autogroup's nice value is not student code's to write either: isolation.py.)
    "setpriority": (141, 140), "sched_setparam": (142, 118), "sched_setscheduler": (144, 119),
    "sched_setattr": (314, 274), "sched_setaffinity": (203, 122),
    # and a timer of its own beyond setitimer's three, which signal.getitimer reads: a POSIX timer sends a signal at
    # a moment of its own (SIGINT, whose handler every cell starts with, stops whichever later cell runs then: red-a26
    # X35-a26-9), and a timerfd becomes readable at one (a loop reader waits on it); neither can be read back from
    # Python (cell_runner.left_running). Python's time and signal modules, asyncio, numpy and tqdm make neither.
    "timer_create": (222, 107), "timerfd_create": (283, 85),
}
# Answered ENOSYS, so that the C library falls back to a call the filter reads: clone3 (to clone, whose flags it
# reads), preadv2 and pwritev2 (to preadv and pwritev, without RWF_NOWAIT, which tells whether a page is cached),
# futex_waitv and the futex2 calls (to futex, whose private flag it reads; the C library uses none of them), and
# sendfile, which puts a file's pages into a pipe as splice does (shutil's copy falls back to read and write).
FALL_BACK = {"clone3": (435, 435), "preadv2": (327, 286), "pwritev2": (328, 287), "futex_waitv": (449, 449),
             "futex_wake": (454, 454), "futex_wait": (455, 455), "futex_requeue": (456, 456), "sendfile": (40, 71)}
# Answered EOPNOTSUPP, so that the C library's posix_fallocate falls back to writing the blocks, which RLIMIT_FSIZE
# bounds: fallocate with FALLOC_FL_KEEP_SIZE takes blocks and leaves the file's size alone, and a file system checks
# RLIMIT_FSIZE only for a new size, so one call reserved 1 GB of the machine's /tmp (the scratch folder at the uid
# levels) in a file of size 0, past the disk budget, unseen by its walk once unlinked (red-b17 X26-b17-1).
NOT_SUPPORTED = {"fallocate": (285, 47)}
CLONE, SOCKET, IOCTL, FCNTL, FUTEX, PRCTL = (56, 220), (41, 198), (16, 29), (72, 25), (202, 98), (157, 167)
# RLIMIT_CORE, set to 1 by the loader (child.py), the one value at which the kernel dumps nothing to a pipe
# core_pattern: lowered to 0 (which any process may do) it would dump again, to a root helper outside the session.
# So neither setrlimit (its resource in args[0]) nor prlimit64 with a new limit (args[1], the pointer in args[2]) may
# change it; reading it stays allowed.
SETRLIMIT, PRLIMIT64, RLIMIT_CORE = (160, 164), (302, 261), 4
# rt_sigaction on SIGCHLD with a new action: ignoring it (or SA_NOCLDWAIT) has the kernel reap the children,
# whose CPU time then reaches no parent's counters, the count of a submission without a cgroup (cputime.py).
SIGACTION, SIGCHLD = (13, 134), 17
# CLONE_NEWNS and CLONE_NEWCGROUP ... CLONE_NEWNET: the mask Docker's profile denies clone with.
NEW_NAMESPACES = 0x7E020000
# A new thread: code a cell leaves running in one binds names and changes objects at moments of its own, so what a
# later cell or check sees would depend on timing (red-b22 X31-b22-2: 16.36/18 about one run in three where Jupyter
# gives 11). Python raises "can't start new thread"; tqdm turns its monitor off; a fork (no CLONE_THREAD) is allowed.
CLONE_THREAD = 0x00010000
# A child that would be the caller's sibling: out of a check child's tree, whose CPU time is the check's (child.py)
CLONE_PARENT = 0x00008000
# ioctl's requests that act on a terminal beyond the process's own output: TIOCSTI pushes characters into its
# input (the instructor's shell, when the grader runs in a terminal), TIOCLINUX pastes a console's selection.
TERMINAL_INPUT = (0x5412, 0x541C)
# fcntl's commands that lock a file or watch a folder (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK,
# F_OFD_SETLKW, F_SETLEASE, F_NOTIFY): as flock, a way to signal to a session that opens the same file.
FILE_SIGNALS = (5, 6, 7, 36, 37, 38, 1024, 1026)
# A futex without it is keyed by the file and offset of the page its word is on, where the page is a file's (a
# library every session maps): a waiter in one session is woken from another. Threads and the C library's own
# locks are private; a lock shared between processes (multiprocessing's) is not, and fails.
FUTEX_PRIVATE_FLAG = 128

# Classic BPF (linux/filter.h, linux/seccomp.h): the instructions the filter uses.
_LOAD = 0x20  # BPF_LD | BPF_W | BPF_ABS: A = the 32-bit word at this offset of struct seccomp_data
_JEQ, _JGE, _JSET = 0x15, 0x35, 0x45  # BPF_JMP | BPF_JEQ / BPF_JGE / BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_NR, _ARCH, _ARG0, _ARG1, _ARG2 = 0, 4, 16, 24, 32  # offsets in struct seccomp_data (the low half of args[0..2])
ALLOW, KILL_PROCESS, ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, PR_SET_CHILD_SUBREAPER = 38, 22, 2, 36


class _Program:
    """A BPF program being written: jumps name a label, resolved (forward only) when it is done."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int = 0, true: object = 0, false: object = 0) -> None:
        self.lines.append((code, true, false, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.lines)

    def bytes(self) -> bytes:
        def offset(at: int, target: object) -> int:
            return target if isinstance(target, int) else self.labels[str(target)] - at - 1

        return b"".join(struct.pack("HBBI", code, offset(at, true), offset(at, false), k)
                        for at, (code, true, false, k) in enumerate(self.lines))


def program(machine: str) -> bytes:
    """The filter for `machine` (platform.machine()), as the kernel's array of struct sock_filter."""
    column = ("x86_64", "aarch64").index(machine)
    code = _Program()
    code.op(_LOAD, _ARCH)
    code.op(_JEQ, AUDIT_ARCH[machine], true=1)
    code.op(_RET, KILL_PROCESS)
    code.op(_LOAD, _NR)
    if machine == "x86_64":
        code.op(_JGE, X32_SYSCALL_BIT, true="kill")
    for number in (numbers[column] for numbers in DENIED.values()):
        if number is not None:
            code.op(_JEQ, number, true="deny")
    code.op(_JEQ, CLONE[column], true="clone")
    code.op(_JEQ, IOCTL[column], true="ioctl")
    code.op(_JEQ, FCNTL[column], true="fcntl")
    code.op(_JEQ, FUTEX[column], true="futex")
    code.op(_JEQ, SIGACTION[column], true="sigaction")
    code.op(_JEQ, SOCKET[column], true="no family")
    code.op(_JEQ, PRCTL[column], true="prctl")
    code.op(_JEQ, SETRLIMIT[column], true="setrlimit")
    code.op(_JEQ, PRLIMIT64[column], true="prlimit64")
    for numbers in FALL_BACK.values():
        code.op(_JEQ, numbers[column], true="enosys")
    for numbers in NOT_SUPPORTED.values():
        code.op(_JEQ, numbers[column], true="eopnotsupp")
    code.op(_RET, ALLOW)
    code.label("clone")
    code.op(_LOAD, _ARG0)
    code.op(_JSET, NEW_NAMESPACES | CLONE_THREAD | CLONE_PARENT, true="deny")
    code.op(_RET, ALLOW)
    for name, requests in (("ioctl", TERMINAL_INPUT), ("fcntl", FILE_SIGNALS)):
        code.label(name)
        code.op(_LOAD, _ARG1)
        for request in requests:
            code.op(_JEQ, request, true="deny")
        code.op(_RET, ALLOW)
    code.label("sigaction")
    code.op(_LOAD, _ARG0)
    code.op(_JEQ, SIGCHLD, true=1)
    code.op(_RET, ALLOW)
    for half in (_ARG1, _ARG1 + 4):  # the new action's pointer, both halves: NULL only reads the action
        code.op(_LOAD, half)
        code.op(_JEQ, 0, false="deny")
    code.op(_RET, ALLOW)
    code.label("prctl")  # a filter of its own: the seccomp call's other door
    code.op(_LOAD, _ARG0)
    code.op(_JEQ, PR_SET_SECCOMP, true="deny")
    code.op(_JEQ, PR_SET_CHILD_SUBREAPER, false="allow")
    code.op(_LOAD, _ARG1)
    code.op(_JEQ, 0, true="deny")  # setting it stays allowed: each check child does (child.py)
    code.op(_RET, ALLOW)
    code.label("setrlimit")
    code.op(_LOAD, _ARG0)
    code.op(_JEQ, RLIMIT_CORE, true="deny")
    code.op(_RET, ALLOW)
    code.label("prlimit64")
    code.op(_LOAD, _ARG1)
    code.op(_JEQ, RLIMIT_CORE, false="allow")
    for half in (_ARG2, _ARG2 + 4):  # the new limit's pointer, both halves: NULL only reads the limit
        code.op(_LOAD, half)
        code.op(_JEQ, 0, false="deny")
    code.op(_RET, ALLOW)
    code.label("futex")
    code.op(_LOAD, _ARG1)
    code.op(_JSET, FUTEX_PRIVATE_FLAG, false="deny")
    code.op(_RET, ALLOW)
    code.label("no family")
    code.op(_RET, ERRNO | errno.EAFNOSUPPORT)
    code.label("enosys")
    code.op(_RET, ERRNO | errno.ENOSYS)
    code.label("eopnotsupp")
    code.op(_RET, ERRNO | errno.EOPNOTSUPP)
    code.label("deny")
    code.op(_RET, ERRNO | errno.EPERM)
    code.label("allow")
    code.op(_RET, ALLOW)
    code.label("kill")
    code.op(_RET, KILL_PROCESS)
    return code.bytes()


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def supported() -> bool:
    """Whether the filter knows this machine's architecture."""
    return platform.machine() in AUDIT_ARCH


def install() -> None:
    """Put this process, and every process it starts from now on, under the filter, for good. Raises OSError
    where the kernel refuses it (a kernel without seccomp) or the architecture is not one it knows."""
    if not supported():
        raise OSError(errno.ENOSYS, f"no system-call filter for {platform.machine()}")
    code = program(platform.machine())
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    fprog = _Fprog(len(code) // 8, code)
    for option, argument, pointer in ((PR_SET_NO_NEW_PRIVS, 1, None),
                                      (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))):
        if libc.prctl(option, argument, pointer, 0, 0) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"prctl({option}): {errno.errorcode.get(error, error)}")
