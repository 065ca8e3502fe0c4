"""Keep each submission away from every other submission and from the grader.

The sandbox worker (root, and never running student code) loads this file when the grader asks for
isolation. For each submission it forks a *session* process that serves that submission only:

* `Isolation.start` makes the session. With namespaces it enters fresh PID, mount, network, IPC and
  UTS namespaces and becomes process 1 there: when it ends, the kernel ends every process the
  submission started. Its mount namespace hides the course's private folders, makes every disk
  read-only, and gives the submission one fresh tmpfs of `disk_mb` as /tmp, /var/tmp and /dev/shm.
  Its network namespace has only a loopback device, switched off. A memory and a pids cgroup bound
  the whole submission, the session included; a cpuacct one (on v2, the same folder) counts its CPU time.
* `Isolation.drop` runs in each process that loads student code, before its first line: it becomes
  the worker's own uid, one no other process on the machine uses (uids.py: no submission can signal,
  trace or use up the process quota of another), with no way to regain privileges. Its process budget
  is the pids cgroup; only without one is it the uid's `RLIMIT_NPROC`.
* `Isolation.end` runs in the worker once the session has ended: it kills anything left, says which
  budget the submission hit, and removes the cgroups (and, without namespaces, the uid's files).

`level` names what this machine allowed, strongest first: "namespaces+cgroups", "namespaces",
"uid" (no namespaces: a uid per worker, its processes killed and its files in /tmp, /var/tmp and
/dev/shm removed between submissions; the network is not contained), or "none" (not root).

Imported two ways: by the worker from its path, as a top-level module beside its siblings (worker.py
imports `forks` and `uids` first), and by the caller as part of the package, to learn the machine's level.
"""
from __future__ import annotations

import ctypes
import os
import resource
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

if __package__:
    from . import forks, uids
else:
    import forks
    import uids

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
NAMESPACES = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")  # the places any user may write
KEEP_WRITABLE = ("/proc", "/sys", "/dev")  # kernel interfaces: writable to root only, and /dev/null must work


@dataclass(frozen=True)
class Budgets:
    """What one submission may use, across all its processes."""

    memory_mb: int = 1024
    processes: int = 64
    disk_mb: int = 64


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    encode = lambda text: text.encode() if text is not None else None  # noqa: E731
    _check(_libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)), f"mount {target}")


def _mount_points() -> list[tuple[str, int]]:
    """Every mount point with the flags a read-only remount must keep (nosuid, nodev, noexec)."""
    kept = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}
    points = []
    with open("/proc/self/mountinfo") as info:
        for line in info:
            fields = line.split()
            target = fields[4].encode().decode("unicode_escape")
            flags = sum(kept.get(option, 0) for option in fields[5].split(","))
            points.append((target, flags))
    return points


def _under(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == f or path.startswith(f + "/") for f in folders)


class _Cgroups:
    """One submission's memory and pids cgroups (v1 hierarchies, or the v2 one), under the worker's own,
    and on v1 a cpuacct one where the machine mounts it (v2's folder counts CPU time in cpu.stat)."""

    FILES = {1: {"memory": "memory.limit_in_bytes", "pids": "pids.max"},
             2: {"memory": "memory.max", "pids": "pids.max"}}

    def __init__(self, name: str, budgets: Budgets) -> None:
        self.version, self.dirs = _cgroup_version(), []
        self.cpu: Path | None = None  # the folder that counts the submission's CPU time
        bases = _cgroup_bases(self.version)
        limits = {"memory": budgets.memory_mb * 1024 * 1024, "pids": budgets.processes + 1}  # + the session
        try:
            for controller, base in bases.items():
                folder = base / name
                folder.mkdir()
                self.dirs.append(folder)
                (folder / self.FILES[self.version][controller]).write_text(str(limits[controller]))
            self.cpu = _cpu_folder(self.version, name, self.dirs)
            if self.cpu and self.cpu not in self.dirs:
                self.dirs.append(self.cpu)
        except OSError:
            self.remove()
            raise

    def add(self, pid: int) -> None:
        for folder in self.dirs:
            (folder / "cgroup.procs").write_text(str(pid))

    def hit(self) -> list[str]:
        """The budgets this submission ran into."""
        hit = []
        for folder in self.dirs:
            if self.version == 1 and (folder / "memory.failcnt").exists():
                if int((folder / "memory.failcnt").read_text()) > 0:
                    hit.append("memory budget")
            for events in ("memory.events", "pids.events"):
                if (folder / events).exists():
                    counts = dict(line.split() for line in (folder / events).read_text().splitlines())
                    if int(counts.get("max", 0)) > 0 or int(counts.get("oom_kill", 0)) > 0:
                        hit.append("memory budget" if events.startswith("memory") else "process budget")
        return sorted(set(hit))

    def events(self) -> dict[str, int]:
        """How often so far the memory budget's OOM killer killed, and the pids budget refused a fork:
        what tells a process the kernel killed for memory, or a refused fork, from any other."""
        counts = {"oom_kill": 0, "fork_refused": 0}
        for folder in self.dirs:
            for name, key, field in (("memory.events", "oom_kill", "oom_kill"), ("memory.oom_control", "oom_kill",
                                     "oom_kill"), ("pids.events", "fork_refused", "max")):
                if (folder / name).exists():
                    lines = dict(line.split() for line in (folder / name).read_text().splitlines() if line.strip())
                    counts[key] += int(lines.get(field, 0))
        return counts

    def kill_all(self) -> None:
        for folder in self.dirs:
            while pids := (folder / "cgroup.procs").read_text().split():
                for pid in pids:
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                os.sched_yield()

    def remove(self) -> None:
        for folder in self.dirs:
            try:
                folder.rmdir()
            except OSError:
                pass
        self.dirs = []


def _cpu_folder(version: int, name: str, made: list[Path]) -> Path | None:
    """Where this submission's CPU time is counted: v2's one folder, or a cpuacct cgroup on v1 (None where
    the machine has none to give: then the worker counts what its children used, cputime.py)."""
    if version == 2:
        return made[0]
    try:
        folder = _cgroup_bases(1, ("cpuacct",))["cpuacct"] / name
        folder.mkdir()
        return folder
    except (OSError, KeyError):
        return None


def _cgroup_version() -> int:
    return 1 if Path("/sys/fs/cgroup/memory/cgroup.procs").exists() else 2


def _cgroup_bases(version: int, wanted: tuple[str, ...] = ("memory", "pids")) -> dict[str, Path]:
    """The worker's own cgroup folder for each controller."""
    mine = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            mine[controller] = path.lstrip("/")
    if version == 1:
        return {c: Path("/sys/fs/cgroup") / c / mine[c] for c in wanted}
    return {"memory": Path("/sys/fs/cgroup") / mine[""]}  # v2: one folder holds both


class Isolation:
    """Per-submission confinement, done by the sandbox worker. See the module's docstring."""

    def __init__(self, budgets: Budgets, hide: list[str]) -> None:
        self.budgets, self.hide = budgets, hide
        self.count, self.cgroups, self.scratch, self.disk_full = 0, None, "", False
        self.level = machine_level(budgets)
        self.namespaces = self.level.startswith("namespaces")
        self.use_cgroups = self.level.endswith("cgroups")
        self.uid = uids.claim_uid() if self.level != "none" else os.getuid()

    # ----------------------------------------------------------------- the worker's side

    def begin(self) -> None:
        """In the worker, before it forks a submission's session: its cgroups and scratch folder."""
        self.count += 1
        if self.use_cgroups:
            self.cgroups = _Cgroups(f"kit-{os.getpid()}-{self.count}", self.budgets)
        if not self.namespaces and self.level != "none":
            self.scratch = tempfile.mkdtemp(prefix=f"kit-{self.uid}-")
            os.chown(self.scratch, self.uid, self.uid)

    def enter(self) -> None:
        """In the session's process, first thing: into the cgroups and fresh namespaces.

        With namespaces this forks: the process that called it stays outside as the session's
        parent and ends the way the session ends; only the session returns from here.
        """
        if self.cgroups:
            self.cgroups.add(os.getpid())
        if self.namespaces:
            _check(_libc.unshare(NAMESPACES), "unshare")
            session = forks.fork()
            if session:
                _mirror(session)
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            self._enter_private_filesystem()
        try:  # so that the budget's OOM kill picks student code (needs CAP_SYS_RESOURCE; it is the biggest anyway)
            Path("/proc/self/oom_score_adj").write_text("-1000")
        except OSError:
            pass

    @property
    def exit_code(self) -> int:
        """How the session ends, so that the worker learns what it saw last."""
        return 3 if self.disk_full else 0

    def end(self, status: int) -> list[str]:
        """After the session (which exited with `status`): end what is left; the budgets it hit."""
        hit = ["disk budget"] if os.waitstatus_to_exitcode(status) == 3 else []
        if self.cgroups:
            hit += self.cgroups.hit()
            self.cgroups.kill_all()
            self.cgroups.remove()
            self.cgroups = None
        if not self.namespaces and self.level != "none":
            self._end_uid()
        return hit

    def _end_uid(self) -> None:
        """Without namespaces: kill every process of the worker's uid (its own alone) and remove its files."""
        uids.kill_processes_of(self.uid)
        shutil.rmtree(self.scratch, ignore_errors=True)
        for folder in SCRATCH:
            for entry in os.scandir(folder) if os.path.isdir(folder) else []:
                try:
                    if entry.stat(follow_symlinks=False).st_uid == self.uid:
                        if entry.is_dir(follow_symlinks=False):
                            shutil.rmtree(entry.path, ignore_errors=True)
                        else:
                            os.unlink(entry.path)
                except OSError:
                    pass

    # ---------------------------------------------------------------- the session's side

    def _enter_private_filesystem(self) -> None:
        """As process 1 of the new namespaces: hide, make read-only, give fresh scratch space."""
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        for folder in self.hide:  # each becomes an empty folder no one but root may enter
            _mount("tmpfs", folder, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=000")
        for target, flags in _mount_points():
            if not _under(target, KEEP_WRITABLE):
                try:
                    _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
                except OSError:
                    if target == "/":
                        raise
        _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={self.budgets.disk_mb}m,mode=1777")
        for other in SCRATCH[1:]:
            if os.path.isdir(other):
                _mount("/tmp", other, None, MS_BIND)
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)

    @property
    def workdir(self) -> str:
        """Where student code starts: its private scratch space."""
        return "/tmp" if self.namespaces else self.scratch

    def note_scratch(self) -> None:
        """In the session, after a loader ended: was the scratch space full?"""
        if self.namespaces:
            stats = os.statvfs("/tmp")
            self.disk_full = self.disk_full or stats.f_bavail * stats.f_frsize < 64 * 1024

    def drop(self) -> None:
        """In a loader, before student code: the worker's uid, its process quota (where no pids cgroup
        counts it), no privileges to regain."""
        if self.level == "none":
            return
        os.setgroups([])
        os.setgid(self.uid)
        os.setuid(self.uid)
        if not self.use_cgroups:
            resource.setrlimit(resource.RLIMIT_NPROC, (self.budgets.processes, self.budgets.processes))
        _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def machine_level(budgets: Budgets = Budgets()) -> str:
    """The strongest level this process may set up here (see the module's docstring)."""
    if os.geteuid() != 0:
        return "none"
    if not _works(_namespaces_work):
        return "uid"
    return "namespaces+cgroups" if _works(lambda: _Cgroups(f"kit-probe-{os.getpid()}", budgets).remove()) \
        else "namespaces"


def _works(test: Callable[[], None]) -> bool:
    """Whether `test` runs without error in a throwaway child (namespaces change the caller)."""
    pid = os.fork()
    if pid == 0:
        try:
            test()
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def _namespaces_work() -> None:
    _check(_libc.unshare(NAMESPACES), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m")


def _mirror(child: int) -> None:
    """Wait for `child`, then end as it ended (a signal or an exit code)."""
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
