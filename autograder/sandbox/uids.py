"""A uid for each grading worker that nothing else on the machine uses, and the end of its processes.

Student code runs as this uid (isolation.py). Two graders must never share one: a uid's processes
count against one `RLIMIT_NPROC`, may signal and trace each other, and without namespaces the grader
kills every process of its uid after each submission. Locks alone cannot promise that: they live in a
folder (`/run/autograder-uids`), and two containers or chroots on one host each have their own `/run`.
So a uid is drawn at random from the ids this process may become (below), skipped when any process of
this machine's /proc runs as it or an account names it, and then locked, so that graders sharing a /run
cannot race for it. The lock is held as long as the worker (or a child) keeps its file open, and released
by the kernel however the worker ends. The same number is the gid.

Which ids: only those the uid_map and gid_map of this process's user namespace both list (a rootless
container, rootless Podman's 65,536 or a Kubernetes pod's, maps a few; a machine's own namespace maps all),
in the first band of BANDS that holds any: 2^20 .. 2^31 (above any real account and any distribution's
range for them; two graders that cannot see each other's locks pick the same one with odds of about 1 in
2*10^9 per pair), else 60001 .. 65533 (above the accounts distributions give, 60000 being login.defs'
UID_MAX, and below `nobody`): the band a namespace of 65,536 ids holds. A namespace that maps neither (root
alone) leaves the grader no id for student code: mapped_count() is 0 and the caller refuses to grade
(sandbox/proof.py) rather than run student code as root.

A user namespace per session would also give unique uids, but it is refused by many containers and
hardened kernels, changes what root may do inside (mounts, cgroups), and the uid it maps to outside
must still be chosen: the random uid is needed either way, so it is the mechanism.
"""
from __future__ import annotations

import fcntl
import os
import pwd
import secrets
import signal
import time
from pathlib import Path
from typing import Callable

LOCKS = Path("/run/autograder-uids")  # root's: one lock file per uid a live worker holds
BANDS = ((1 << 20, 1 << 31), (60001, 65534))  # [start, end), preferred first (the docstring says why)
_RANDOM = secrets.SystemRandom()
# How long kill_processes_of sends its kill again while a process of the uid still runs: the kernel ends a killed
# process at once unless it holds it (forks.KILLED_SECONDS says the same of one process).
KILL_SECONDS = 10.0
# Seconds between kill_processes_of's looks at the child that sends its kill (which a wait reports when stopped only
# if asked, WUNTRACED, and a blocking wait would hold past KILL_SECONDS): it ends within milliseconds.
KILLER_POLL = 0.001


def claim_uid(tries: int = 64, clean: Callable[[int], None] | None = None) -> int:
    """A uid no process, account or live worker on this machine uses, locked for this process's life.
    `clean` first runs for each uid whose lock no live worker holds (a stopped run's: _sweep)."""
    LOCKS.mkdir(mode=0o700, parents=True, exist_ok=True)
    _sweep(clean)
    ranges = mapped_ranges()
    if not ranges:
        raise RuntimeError("this user namespace maps no id but root's for student code to run as: "
                           "give the container more ids (rootless Podman's default maps 65,536)")
    for _ in range(tries):
        uid = _draw(ranges)
        if _in_use(uid):
            continue
        fd = _lock(LOCKS / str(uid))
        if fd is None:
            continue
        if not _in_use(uid):  # again under the lock: the worker that released it may have left a process
            return uid
        os.close(fd)
    raise RuntimeError(f"no free uid found in {tries} tries (every one drawn was in use)")


def _lock(path: Path) -> int | None:
    """An open descriptor holding the lock of `path`, or None when a live worker holds it. A lock file that
    _sweep removed between the open and the lock does not count (its inode is no longer the path's)."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.stat(path).st_ino == os.fstat(fd).st_ino:
            return fd
    except (BlockingIOError, FileNotFoundError):
        pass
    os.close(fd)
    return None


def _sweep(clean: Callable[[int], None] | None = None) -> None:
    """Remove the lock files no live worker holds, so that uids drawn at random leave no trail in /run. A worker
    that was killed left its lock file behind (and perhaps processes and files of its uid, which no later worker
    would draw again): `clean` runs for its uid first, while the lock is held, so that no worker claims the uid
    before it is clean. Only for a uid of BANDS that no account names: never root's or a person's."""
    for path in LOCKS.iterdir():
        fd = _lock(path)
        if fd is not None:
            try:
                if clean is not None and path.name.isdigit() and _drawable(int(path.name)):
                    clean(int(path.name))
            finally:
                path.unlink()
                os.close(fd)


def _drawable(uid: int) -> bool:
    """Whether `uid` is one a worker may have drawn: in a band of BANDS, named by no account."""
    try:
        pwd.getpwuid(uid)
        return False
    except KeyError:
        return any(low <= uid < high for low, high in BANDS)


def parse_map(text: str) -> list[tuple[int, int]]:
    """The ids a /proc/<pid>/uid_map or gid_map lets its namespace use, as [start, end) ranges of inside ids."""
    ranges = []
    for line in text.splitlines():
        if line.split():
            inside, _, count = (int(field) for field in line.split())
            ranges.append((inside, inside + count))
    return ranges


def grading_ranges(uid_map: str, gid_map: str) -> list[tuple[int, int]]:
    """The ids a worker may draw, from the text of the two maps: mapped as a uid and as a gid alike, in the
    first band of BANDS that holds any (empty when none does)."""
    both = [(max(u0, g0), min(u1, g1)) for u0, u1 in parse_map(uid_map) for g0, g1 in parse_map(gid_map)]
    for low, high in BANDS:
        ranges = sorted((max(start, low), min(end, high)) for start, end in both)
        ranges = [(start, end) for start, end in ranges if start < end]
        if ranges:
            return ranges
    return []


def mapped_ranges() -> list[tuple[int, int]]:
    """The ids this process may become and draws from (grading_ranges of its own namespace's maps; a kernel
    without user namespaces has no maps, and every id exists)."""
    try:
        uid_map, gid_map = (Path(f"/proc/self/{name}").read_text() for name in ("uid_map", "gid_map"))
    except OSError:
        uid_map = gid_map = f"0 0 {BANDS[0][1]}"
    return grading_ranges(uid_map, gid_map)


def mapped_count() -> int:
    """How many ids workers may draw here: at most so many can grade at once (0: none can run student code)."""
    return sum(end - start for start, end in mapped_ranges())


def _draw(ranges: list[tuple[int, int]]) -> int:
    """A uid uniformly at random from `ranges` (unpredictable to students, as `secrets` is)."""
    start, end = _RANDOM.choices(ranges, weights=[end - start for start, end in ranges])[0]
    return start + _RANDOM.randrange(end - start)


def _in_use(uid: int) -> bool:
    """Whether an account names `uid` or a process this machine's /proc shows runs as it (any of its ids)."""
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        pass
    return uid in processes_by_uid()


def processes_by_uid(running: bool = False) -> dict[int, list[int]]:
    """{uid: pids} for every process in /proc, by each of its real, effective, saved and filesystem uids;
    with `running`, only those that are not zombies (ended, not yet reaped)."""
    found: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as status:
                fields = dict(line.split(":", 1) for line in status if line.startswith(("State:", "Uid:")))
            ids = fields["Uid"].split()
        except (OSError, KeyError, ValueError):  # ended meanwhile
            continue
        if running and fields.get("State", "").split()[:1] == ["Z"]:
            continue
        for uid in {int(i) for i in ids}:
            found.setdefault(uid, []).append(int(entry))
    return found


def held(uid: int) -> bool:
    """Whether a live worker that shares this /run holds `uid`."""
    path = LOCKS / str(uid)
    if not path.exists():
        return False
    fd = _lock(path)
    if fd is None:
        return True
    os.close(fd)
    return False


def kill_processes_of(uid: int, also: Callable[[], None] | None = None) -> None:
    """SIGKILL every process of `uid`, from a child that becomes `uid` first: the kernel then lets the
    signal reach only processes of that uid (kill(-1) skips the rest), which, the uid being this
    worker's alone, are only the ones it started. One kill(-1) reaches them all at once (the kernel holds a
    fork back until it is done, and a fork whose parent it reached fails), so processes that fork as fast as
    they are killed one at a time cannot outlast it; it is sent again while one is still running (not a zombie),
    for at most KILL_SECONDS. `also` runs in a child, as `uid`, after its kill (emptying its keyrings); it is
    asked of the next child until one has run it.

    From its setuid until its kill has gone out the child is a process of `uid`, which any of the uid's may signal
    (kill(2) lets a sender whose uid is the target's real one): one looping kill(-1, SIGSTOP) stops it now and then
    (red-a13 X23-1). So a child found stopped is killed from here (root) at once and a fresh one sends the kill
    again, as often as it takes (a SIGCONT would not do: the uid could stop it again). Each child is open to that
    only for the moment before its first kill, whatever it sends first (a SIGSTOP to all before the SIGKILL would
    be as open; one stopped after it has only `also` left to do), and a fresh one's odds are the first's: against
    1 to 32 such loops on 2 CPUs, from one child in 50 to three in four were stopped, with the machine's load, and
    every kill was done within 0.3 s (480 tries, measured). None is waited for past KILL_SECONDS."""
    give_up = time.monotonic() + KILL_SECONDS
    while True:
        sent = _send_kill(uid, also, give_up)
        if sent:
            also = None
        if (also is None and uid not in processes_by_uid(running=True)) or time.monotonic() >= give_up:
            return
        if sent:  # what still runs is ending (else a fresh child at once: the uid's stopped the last one)
            time.sleep(0.01)


def _send_kill(uid: int, also: Callable[[], None] | None, deadline: float) -> bool:
    """Whether a child that became `uid` sent its kill(-1, SIGKILL) and then called `also` (an error of `also` is
    not tried again), by `deadline`: else it was stopped, is late or could not become `uid`, and is killed."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)  # every process this uid may signal, itself excepted
            code = 0
            if also is not None:
                also()
        finally:
            os._exit(code)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
        if done and not os.WIFSTOPPED(status):
            return os.waitstatus_to_exitcode(status) == 0
        if done or time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)  # root's: no process of the uid can hold this one back
            os.waitpid(pid, 0)
            return False
        time.sleep(KILLER_POLL)
