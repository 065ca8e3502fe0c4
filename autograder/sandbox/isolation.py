"""Keep each submission away from every other submission and from the grader.

The sandbox worker (root, and never running student code) loads this file when the grader asks for
isolation. For each submission it forks a *session* process that serves that submission only:

* `Isolation.enter` makes the session. With namespaces it enters fresh PID, mount, network, IPC and
  UTS namespaces and becomes process 1 there: when it ends, the kernel ends every process the
  submission started. Its mount namespace has a root of its own, built the way bubblewrap builds one:
  a fresh tmpfs holding read-only bind mounts of an allow-list only (`allowed_paths`: what the
  interpreter and its loaded libraries need, the virtual environment, the assignment's public
  folder), a few device nodes, a fresh /proc, and one fresh tmpfs of `disk_mb` as /tmp, /var/tmp and
  /dev/shm; then pivot_root into it. Nothing else of the machine is there: no course folder, no other
  clone of the course, no socket file. Its network namespace has only a loopback device, switched
  off (and abstract unix sockets are per network namespace). A memory and a pids cgroup bound the
  whole submission, the session included; a cpuacct one (on v2, the same folder) counts its CPU time.
* `Isolation.drop` runs in each process that loads student code, before its first line: it becomes
  the worker's own uid, one no other process on the machine uses (uids.py: no submission can signal,
  trace or use up the process quota of another), with no way to regain privileges, in its
  submission's session keyring (`Isolation.enter` joins a new one), with the uid's own keyrings
  emptied. Its process budget is the pids cgroup; only without one is it the uid's `RLIMIT_NPROC`.
* `Isolation.over` runs in the session each tick while a call runs: without a memory cgroup it sums the
  memory the submission's live processes hold (and at `uid` its files in the machine's tmpfs folders, memory
  too, wherever they are there, and those its processes hold open or mapped with no name), without a private tmpfs what
  its scratch folder holds, and names the budget passed; the session then stops the loader and all it
  started, as the cgroup's OOM killer would (and empties the folder, and those files, so the calls after it
  start with room).
* `Isolation.end` runs in the worker once the session has ended: it kills anything left, says which
  budget the submission hit, removes the cgroups and empties the uid's keyrings (and, without
  namespaces, removes the uid's files). What a stopped run left (its cgroups, keys, processes and
  files of its uid) is cleaned when the next worker starts, for the uid it claims and for each uid whose
  lock no live worker holds (uids.py): nothing carries into the next run.

`level` names what this machine allowed, strongest first: "namespaces+cgroups", "namespaces",
"uid+landlock" (no namespaces: a uid per worker, its processes killed and its files in /tmp, /var/tmp and
/dev/shm removed between submissions, and each loader confined by Landlock to the allow-list a namespace
session's root holds and its own scratch folder: landlock.py), "uid" (the same where the kernel offers no
Landlock: the disk is closed by permissions alone), or "none" (not root).

Imported two ways: by the worker from its path, as a top-level module beside its siblings (worker.py
imports `forks`, `landlock` and `uids` first), and by the caller as part of the package, to learn the machine's level.
"""
from __future__ import annotations

import ctypes
import os
import platform
import re
import resource
import secrets
import signal
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISDIR, S_ISVTX, S_IWOTH, S_IXOTH
from typing import Callable, Iterable, Iterator

if __package__:
    from . import cputime, forks, landlock, uids
else:  # the worker's siblings, as top-level modules
    import cputime  # type: ignore[no-redef]  # the same module, imported by its own name
    import forks  # type: ignore[no-redef]  # likewise
    import landlock  # type: ignore[no-redef]  # likewise
    import uids  # type: ignore[no-redef]  # likewise

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
NAMESPACES = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
SYSCALLS = {"x86_64": {"pivot_root": 155, "keyctl": 250}, "aarch64": {"pivot_root": 41, "keyctl": 219}}
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -3, -4, -5
STALE_SECONDS = 120  # an empty kit cgroup older than this is a stopped run's, never a live neighbour's
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")  # the places any user may write, which a namespace session has its own of
WRITABLE = (*SCRATCH, "/run/lock")  # and every folder of a Debian machine that any user may write (mode 1777)
SHARED = S_ISVTX | S_IWOTH | S_IXOTH  # a folder any user may write in, whose entries only their owners may move
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")  # whose files are the machine's memory (/dev/shm, often /tmp and /run/lock)
# What of the system a session may read, besides the interpreter's own files (allowed_paths): programs and
# shared libraries (a student may run `sleep`; ctypes loads libc), and the dynamic loader's files. Not
# /usr/local, /usr/share, /usr/src, /home, /root, /srv, /opt, /etc: a course or its clone may live there.
SYSTEM = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr/bin", "/usr/sbin", "/usr/lib",
          "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/share/zoneinfo",
          "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")  # bound writable, as bwrap --dev
# The scratch folder's walk without a private tmpfs (_disk_use): how often, and how far. More entries, or folders
# nested deeper, than honest code makes count as over the disk budget, so that a walk never takes long. The private
# tmpfs holds as many entries (its nr_inodes).
DISK_EVERY, DISK_ENTRIES, DISK_DEPTH = 0.5, 4096, 64
# How many entries of everyone's the walk of the tmpfs folders at `uid` looks at (_owned), in which each uid's own
# are at most DISK_ENTRIES: a shared tmpfs may hold many of other users, and the walk stays short.
MEMORY_WALK = 4 * DISK_ENTRIES
# The session's looks at the submission's memory without a memory cgroup (Isolation.over) are its own CPU time, not
# charged to the submission: how many a check gets follows its wall-clock time, so the machine's load, and a grade
# would follow it too. What a submission can make one look cost (many processes, large mappings to read PSS through)
# is bounded instead: after a look of c CPU seconds the next comes no sooner than LOOK_SPACING * c later (and
# cputime.TICK), so the looks take at most a fifth of a CPU however dear they are.
LOOK_SPACING = 4
# The session's exit code: a bit for each budget it saw hit that the worker cannot count itself (Isolation.end).
HIT_BITS = {"disk budget": 16, "memory budget": 32}


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


def _encode(text: str | None) -> bytes | None:
    return text.encode(errors="surrogateescape") if text is not None else None  # a path's bytes as read


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(_encode(source), _encode(target), _encode(fstype), flags, _encode(data)), f"mount {target}")


def _bind(source: str, target: str, flags: int = 0) -> None:
    """Bind `source` (a folder, a file or a device; a symbolic link is made again as one) at `target`."""
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    if os.path.islink(source):
        os.symlink(os.readlink(source), target)
        return
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        open(target, "a").close()
    _mount(source, target, None, MS_BIND | flags)


def _mountinfo_path(field: str) -> str:
    """A path as mountinfo writes it: the path's bytes as they are, but for space, tab, newline and backslash,
    each an octal escape (the kernel's seq_file mangling). Read back as bytes, then as _encode gives paths."""
    raw = field.encode(errors="surrogateescape")
    return re.sub(rb"\\([0-7]{3})", lambda escape: bytes([int(escape[1], 8)]), raw).decode(errors="surrogateescape")


def _mount_points() -> list[tuple[str, int]]:
    """Every mount point with the flags a read-only remount must keep (nosuid, nodev, noexec)."""
    kept = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as info:
        for line in info:
            fields = line.split()
            target = _mountinfo_path(fields[4])
            flags = sum(kept.get(option, 0) for option in fields[5].split(","))
            points.append((target, flags))
    return points


def _under(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == f or path.startswith(f + "/") for f in folders)


def _syscall(name: str, *args: int | bytes | None) -> int:
    """A system call glibc has no wrapper for (pivot_root, keyctl), on this machine's number for it."""
    number = SYSCALLS.get(platform.machine(), {}).get(name)
    if number is None:
        raise OSError(f"{name}: no system call number known for {platform.machine()}")
    return _libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) if isinstance(a, int) else a for a in args))


def _pivot_root(new_root: str, put_old: str) -> None:
    _check(_syscall("pivot_root", new_root.encode(), put_old.encode()), f"pivot_root {new_root}")


def _join_new_session_keyring() -> None:
    """In a session's process, before it forks a loader: a new anonymous session keyring, which its loaders
    share (not the grader's, which they would otherwise inherit). One per submission, not one per loader:
    each keyring the kernel frees makes its key collector walk every key on the machine."""
    _syscall("keyctl", KEYCTL_JOIN_SESSION_KEYRING, None)


def _forget_keys() -> None:
    """In a process of the uid student code gets: the uid's user, user-session and persistent keyrings
    emptied. With the session keyring, a key one submission stores can reach neither the next nor outlive
    the run."""
    for keyring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        _syscall("keyctl", KEYCTL_CLEAR, keyring)
    persistent = _syscall("keyctl", KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_SESSION_KEYRING)
    if persistent > 0:  # -1 where the kernel keeps no persistent keyrings
        _syscall("keyctl", KEYCTL_CLEAR, persistent)


def allowed_paths(see: list[str]) -> list[str]:
    """What a session may read, found from the running worker: the system's programs and libraries
    (SYSTEM), the virtual environment and the interpreter's prefix (only Python's folders in a prefix that is
    the system's own, /usr or /usr/local), every link from sys.executable to the real interpreter (a venv's python may point into
    pyenv or /usr/bin), every file mapped into this process (libpython, numpy's libraries), and `see`.
    Run after the worker's imports, so the mapped files are all it loads. Shortest first, none under another."""
    paths = {p for p in SYSTEM if os.path.lexists(p)} | set(see)
    shared = ("/", "/usr", "/usr/local")  # a prefix that is the system's own: only Python's folders in it
    for prefix in {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}:
        if prefix in shared:
            scheme = sysconfig.get_paths(vars={"base": prefix, "platbase": prefix, "installed_base": prefix})
            paths |= {scheme[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
            paths |= {entry for entry in sys.path if _under(entry, (prefix.rstrip("/") + "/lib",))}  # dist-packages
        else:
            paths.add(prefix)
    link = sys.executable
    while os.path.islink(link):
        paths.add(link)
        link = os.path.join(os.path.dirname(link), os.readlink(link))
    paths.add(os.path.realpath(sys.executable))
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].startswith("/") and os.path.isfile(fields[5].rstrip("\n")):
                paths.add(fields[5].rstrip("\n"))
    kept: list[str] = []
    for path in sorted((os.path.normpath(p) for p in paths if os.path.lexists(p)), key=lambda p: (p.count("/"), p)):
        if not _under(path, tuple(kept)):
            kept.append(path)
    return kept


class _Cgroups:
    """One submission's memory and pids cgroups (v1 hierarchies, or the v2 one), under the worker's own,
    and on v1 a cpuacct one where the machine mounts it (v2's folder counts CPU time in cpu.stat)."""

    FILES = {1: {"memory": "memory.limit_in_bytes", "pids": "pids.max"},
             2: {"memory": "memory.max", "pids": "pids.max"}}
    # The memory budget bounds swap too, or its reclaim swaps the submission out where the machine has swap, and
    # never kills it (red-e15 X24-e15-2). v2: no swap. v1: RAM and swap together at the budget and SWAP_MARGIN_MB
    # (set after the RAM limit: v1 refuses one below it). Not at the budget itself: v1 tries that limit first,
    # and a 6.18 kernel counts no failcnt there, which tells the budget's OOM kills from the machine's (events);
    # with the margin the RAM limit is still the one reached first, swap or none. A kernel without swap accounting
    # has no such file.
    SWAP, SWAP_MARGIN_MB = {1: "memory.memsw.limit_in_bytes", 2: "memory.swap.max"}, 8
    # The counters read to tell which budget was hit. The session reads some after it left the machine's /sys
    # behind (its root is an allow-list): they are opened where the cgroups are made, and read by descriptor.
    COUNTERS = ("memory.failcnt", "memory.events", "memory.oom_control", "pids.events")

    def __init__(self, name: str, budgets: Budgets) -> None:
        self.version, self.dirs = _cgroup_version(), []
        self.cpu: cputime.CgroupCounter | None = None  # the submission's CPU time
        self.counters: dict[str, list[int]] = {}  # counter file name -> a descriptor per folder that has one
        bases = _cgroup_bases(self.version)
        limits = {"memory": budgets.memory_mb * 1024 * 1024, "pids": budgets.processes + 1}  # + the session
        try:
            for controller, base in bases.items():
                folder = base / name
                folder.mkdir()
                self.dirs.append(folder)
                (folder / self.FILES[self.version][controller]).write_text(str(limits[controller]))
                if controller == "memory" and (folder / self.SWAP[self.version]).exists():
                    swap = limits["memory"] + (self.SWAP_MARGIN_MB << 20) if self.version == 1 else 0
                    (folder / self.SWAP[self.version]).write_text(str(swap))
            counting = _cpu_folder(self.version, name, self.dirs)
            if counting and counting not in self.dirs:
                self.dirs.append(counting)
            self.cpu = cputime.CgroupCounter(counting) if counting else None
            for folder in self.dirs:
                for counter in self.COUNTERS:
                    if (folder / counter).exists():
                        self.counters.setdefault(counter, []).append(os.open(folder / counter, os.O_RDONLY))
        except BaseException:  # Ctrl-C included: a probe or a run stopped here leaves no folder
            self.remove()
            raise

    @staticmethod
    def remove_stale() -> None:
        """Remove the empty folders stopped runs left (`kit-<uid>-...`, and probes'), whatever their uid, unless a
        live worker here holds that uid. Only empty ones: a folder with processes is a live session's (perhaps
        a neighbouring grader's, whose locks are in another /run), or holds what the kernel is still ending."""
        version = _cgroup_version()
        bases = list(_cgroup_bases(version).values())
        if version == 1:
            try:
                bases += list(_cgroup_bases(1, ("cpuacct",)).values())
            except KeyError:  # no cpuacct hierarchy here
                pass
        for base in bases:
            for folder in base.glob("kit-*"):
                owner = folder.name.split("-")[1]
                if owner.isdigit() and uids.held(int(owner)):
                    continue
                try:
                    # A neighbouring grader's folder is empty between its making and its session's joining it:
                    # only one left that long ago (a stopped run's) is removed.
                    if time.time() - folder.stat().st_mtime < STALE_SECONDS:
                        continue
                    if not (folder / "cgroup.procs").read_text().split():
                        folder.rmdir()
                except OSError:  # not empty after all, or gone meanwhile
                    pass

    def add(self, pid: int) -> None:
        for folder in self.dirs:
            (folder / "cgroup.procs").write_text(str(pid))

    def _read(self, counter: str) -> list[dict[str, int]]:
        """Each folder's `counter` file as {key: count} (a file of one number: {"": number})."""
        found = []
        for fd in self.counters.get(counter, []):
            lines = [line.split() for line in os.pread(fd, 1 << 16, 0).decode().splitlines() if line.strip()]
            found.append({line[0]: int(line[1]) for line in lines if len(line) == 2} if len(lines[0]) == 2
                         else {"": int(lines[0][0])})
        return found

    def hit(self) -> list[str]:
        """The budgets this submission ran into."""
        hit = []
        if any(counts[""] > 0 for counts in self._read("memory.failcnt")):
            hit.append("memory budget")
        if any(counts.get("max", 0) > 0 or counts.get("oom", 0) > 0 for counts in self._read("memory.events")):
            hit.append("memory budget")
        if any(counts.get("max", 0) > 0 for counts in self._read("pids.events")):
            hit.append("process budget")
        return sorted(set(hit))

    def events(self) -> dict[str, int]:
        """How often so far the memory budget's OOM killer killed (`oom_kill`), another OOM killer killed
        (`other_oom_kill`), and the pids budget refused a fork: what tells a process the kernel killed for the
        submission's memory, or for memory the machine was short of, or a refused fork, from any other.

        The kernel counts in a cgroup's oom_kill every OOM kill of its processes, whichever OOM killer chose them:
        the budget's, the machine's or a memory limit's above the kit's cgroups (a container's --memory), whose
        shortage is the grader's failure, not the budget's. So its kills count as the budget's only up to the
        times the budget itself ran out: v2's `oom` (its OOM killer ran), v1's failcnt (a charge refused at the
        limit, which every OOM of the budget's follows)."""
        counts = [(counts.get("oom_kill", 0), counts.get("oom", 0)) for counts in self._read("memory.events")]
        counts += [(control.get("oom_kill", 0), failed[""])
                   for control, failed in zip(self._read("memory.oom_control"), self._read("memory.failcnt"))]
        budget = sum(min(kills, ran_out) for kills, ran_out in counts)
        return {"oom_kill": budget, "other_oom_kill": sum(kills for kills, _ in counts) - budget,
                "fork_refused": sum(counts.get("max", 0) for counts in self._read("pids.events"))}

    def kill_all(self) -> None:
        for folder in self.dirs:
            if (folder / "cgroup.kill").exists():  # v2 (5.14+): the kernel kills them all at once, forks too
                (folder / "cgroup.kill").write_text("1")
            while pids := (folder / "cgroup.procs").read_text().split():
                for pid in pids:
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                os.sched_yield()

    def remove(self) -> None:
        if self.cpu is not None:
            self.cpu.close()
            self.cpu = None
        for fd in (fd for fds in self.counters.values() for fd in fds):
            os.close(fd)
        self.counters = {}
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

    def __init__(self, budgets: Budgets, see: list[str], ceiling: str | None = None) -> None:
        """`see`: folders the session may read besides what allowed_paths finds (the assignment's public one);
        `ceiling`: the strongest level to set up (sandbox/proof.py tries the weaker ones when one fails)."""
        self.budgets = budgets
        self.count, self.scratch = 0, ""
        # The scratch folder as begun, held open: the uid owns it in the machine's /tmp and may rename it away and
        # leave a link in its place, which root would follow by its path (the session's walk and emptying use this).
        self.scratch_fd = -1
        # In a namespaces session: its /proc, writable, held open for the kit's own writes as root (oom_score_adj);
        # the /proc its processes see is a read-only mount of it (_enter_private_filesystem).
        self.proc_fd = -1
        self.hits: set[str] = set()  # in the session: the budgets it saw hit (exit_code)
        # In the session: when `over` next sums the memory (LOOK_SPACING), last walked the scratch folder; the
        # folder is over.
        self.looked, self.walked, self.overfull = 0.0, 0.0, False
        # In the session at `uid`: the places any user may write whose files are memory, which the uid may write
        # outside its scratch folder (at `uid+landlock` Landlock refuses them; namespaces have a private tmpfs).
        # Its files there count against the memory budget (Isolation.over: red-c18 X27-c18-4); they are in memory.
        self.memory_folders: tuple[str, ...] = ()
        self.memory_devices: set[int] = set()  # their file systems: those of files held open or mapped with no name
        self.in_memory = False  # they passed it: emptied once the loader is dead (note_scratch)
        self.cgroups: _Cgroups | None = None
        self.in_session = False  # this process is a session (enter), not the worker
        self.level = machine_level(budgets, ceiling)
        self.namespaces = self.level.startswith("namespaces")
        self.use_cgroups = self.level.endswith("cgroups")
        self.landlock = self.level == "uid+landlock"
        self.allowed = allowed_paths(see) if self.namespaces or self.landlock else []
        self.uid = uids.claim_uid(clean=_clean_stale_uid) if self.level != "none" else os.getuid()
        if self.level == "uid":
            self.memory_folders = _memory_folders(WRITABLE)
            self.memory_devices = {os.stat(folder).st_dev for folder in self.memory_folders}
        # Cgroup names unique per run, not just per pid (containers reuse pids), under the uid this worker holds.
        self.run = f"kit-{self.uid}-{secrets.token_hex(4)}"
        if self.level != "none":  # a uid no process uses may still hold keys a stopped run left
            self._clean_uid()
            if self.use_cgroups:
                _Cgroups.remove_stale()

    # ----------------------------------------------------------------- the worker's side

    def begin(self) -> None:
        """In the worker, before it forks a submission's session: its cgroups and scratch folder."""
        self.count += 1
        if self.use_cgroups:
            self.cgroups = _Cgroups(f"{self.run}-{self.count}", self.budgets)
        if not self.namespaces and self.level != "none":
            self.scratch = tempfile.mkdtemp(prefix=f"kit-{self.uid}-")
            os.chown(self.scratch, self.uid, self.uid)
            self.scratch_fd = os.open(self.scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)

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
        self.in_session = True
        if self.level != "none":
            _join_new_session_keyring()
        try:  # so that the budget's OOM kill picks student code (needs CAP_SYS_RESOURCE; it is the biggest anyway)
            self._write_own("oom_score_adj", "-1000")
        except OSError:
            pass

    def oom_kills(self) -> int:
        """How many of the submission's processes its memory budget's OOM killer has killed so far (0 without a memory
        cgroup): read by the session for each reply, and by the worker once the session has ended."""
        return self.cgroups.events()["oom_kill"] if self.cgroups else 0

    @property
    def exit_code(self) -> int:
        """How the session ends, so that the worker learns what it saw last."""
        return sum(HIT_BITS[name] for name in self.hits)

    def end(self, status: int) -> list[str]:
        """After the session (which exited with `status`): end what is left; the budgets it hit."""
        code = os.waitstatus_to_exitcode(status)
        hit = [name for name, bit in HIT_BITS.items() if code > 0 and code & bit]
        if self.cgroups:
            hit += self.cgroups.hit()
            self.cgroups.kill_all()
            self.cgroups.remove()
            self.cgroups = None
        if self.level != "none":
            self._clean_uid()
        return hit

    def kill_processes(self) -> None:
        """Kill every process of the submission at once, before they are reaped (worker._reap_orphans), which kills
        them one at a time: processes that fork as fast as that (each forks two and ends, at the process budget)
        outlast it. In the session at namespaces, process 1 of the submission's PID namespace: kill(-1) reaches every
        other process in it. Without namespaces, in the session or in the worker: every process of the worker's uid
        (uids.kill_processes_of). Either is one kill the kernel makes whole with respect to fork. In the worker at
        namespaces nothing is left: the namespace ended with its session."""
        if self.level == "none":
            return
        if self.namespaces:
            if self.in_session and os.getpid() == 1:  # never elsewhere: -1 would be every process of the machine
                os.kill(-1, signal.SIGKILL)
            return
        uids.kill_processes_of(self.uid)

    def _clean_uid(self) -> None:
        """Kill every process of the worker's uid (its own alone), empty its keyrings, and without namespaces
        remove its files."""
        uids.kill_processes_of(self.uid, also=_forget_keys)
        if self.namespaces:
            return
        if self.scratch_fd >= 0:  # first what the folder holds, wherever it was moved (a nested folder any user
            self._empty_scratch()  # may write, which _remove_files_of does not look in), then the folder at its path
            os.close(self.scratch_fd)
            self.scratch_fd = -1
        if self.scratch:
            _remove(self.scratch)
        _remove_files_of(self.uid)

    # ---------------------------------------------------------------- the session's side

    def _enter_private_filesystem(self) -> None:
        """As process 1 of the new namespaces: a root of the allow-list alone, read-only, with fresh scratch
        space, /proc and device nodes. As bubblewrap does it: pivot into a tmpfs first, so that every
        source (one under /tmp too) is reached at /old and the new root is built at /new, then pivot
        into /new and let go of the old root."""
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=700")  # only in this namespace
        os.mkdir("/tmp/old")
        os.mkdir("/tmp/new")
        _pivot_root("/tmp", "/tmp/old")
        os.chdir("/")
        _mount("tmpfs", "/new", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
        os.makedirs("/new/tmp")
        # nr_inodes: entries (an empty folder takes no block) and user xattrs (drawn from the same inode space, 1 KB
        # an entry) are kernel memory the tmpfs pins, which without a memory cgroup no budget counts (X24-e15-3)
        _mount("tmpfs", "/new/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
               f"size={self.budgets.disk_mb}m,nr_inodes={DISK_ENTRIES},mode=1777")
        for path in self.allowed:  # a course under /tmp shows its allowed folders in the scratch space, read-only
            _bind("/old" + path, "/new" + path, MS_REC)
        for device in DEVICES:
            _bind("/old" + device, "/new" + device)
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                             ("stderr", "/proc/self/fd/2")):
            os.symlink(target, f"/new/dev/{name}")
        for other in SCRATCH[1:]:
            _bind("/new/tmp", "/new" + other)
        os.makedirs("/new/proc")
        _mount("proc", "/new/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        # Read-only for every process of the session, a bind of it over it; the kit's writes go through the
        # writable one below, held open. Student code writes none of its own files then: once it is dumpable again
        # (prctl(PR_SET_DUMPABLE), or any program it runs) they are its uid's, and /proc/self/autogroup lowers the
        # CPU weight of its whole session (the loader's) as setpriority, which the filter denies, would: a
        # process kept waiting for a CPU holds the wall-clock backstop off, as waits are taken off it (cputime.py).
        self.proc_fd = os.open("/new/proc", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        _bind("/new/proc", "/new/proc")
        _mount(None, "/new/proc", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        _check(_libc.umount2(b"/old", MNT_DETACH), "umount /old")
        os.chdir("/new")
        _pivot_root(".", ".")  # the new root over the old; detaching the top leaves only the new
        _check(_libc.umount2(b".", MNT_DETACH), "umount the first tmpfs")
        os.chdir("/")
        for target, flags in _mount_points():
            if target not in SCRATCH and target not in DEVICES and not _under(target, ("/proc",)):
                _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)

    @property
    def workdir(self) -> str:
        """Where student code starts: its private scratch space."""
        return "/tmp" if self.namespaces else self.scratch

    def note_scratch(self) -> None:
        """In the session, after a loader ended: was the scratch space full? Without a private tmpfs, a folder
        `over` found past the budget is emptied (its processes are dead): the calls after it start with room."""
        if self.namespaces:
            stats = os.statvfs("/tmp")
            # full: less than 64 KB of blocks left, or of entries (a user xattr takes them at 1 KB each: tmpfs)
            if stats.f_bavail * stats.f_frsize < 64 * 1024 or stats.f_favail < 64:
                self.hits.add("disk budget")
        elif self.overfull:
            self.overfull = False
            self._empty_scratch()
        if self.in_memory:  # as the scratch folder: the calls after it start with the memory the files held
            self.in_memory = False
            for path, _ in list(self._in_memory()):  # listed first, as _remove_files_of
                _remove_owned(path, self.uid)

    @property
    def _held_scratch(self) -> str:
        """A path to the scratch folder as begun, wherever it was moved to: through the descriptor held open."""
        return f"/proc/self/fd/{self.scratch_fd}/."

    def _empty_scratch(self) -> None:
        """Remove what the scratch folder as begun holds, through the descriptor held open (never its path)."""
        try:
            names = os.listdir(self.scratch_fd)
        except OSError:
            return
        for name in names:
            _remove(f"{self._held_scratch}/{name}")

    def _in_memory(self) -> Iterator[tuple[str, os.stat_result | None]]:
        """The uid's entries in memory_folders, wherever they are in them (_owned), but for the scratch folder as
        begun and what it holds (whose bytes are the disk budget's): what the submission keeps in memory outside
        its processes, with the names it left them."""
        scratch = os.fstat(self.scratch_fd) if self.scratch_fd >= 0 else None
        left = "\0"  # the scratch folder's path and a slash, once met: no path starts with a NUL
        for path, stat in _owned(self.uid, self.memory_folders, self.memory_folders):
            if scratch and stat and (stat.st_dev, stat.st_ino) == (scratch.st_dev, scratch.st_ino):
                left = f"{path}/"
            elif not path.startswith(left):
                yield path, stat

    def over(self, session: int) -> str:
        """In the session, while it waits for a loader: the budget the submission passed that no cgroup or tmpfs
        bounds here, "memory budget" or "disk budget" ("" for none). Without a memory cgroup, the memory of the
        live processes below `session` (cputime.tree_memory), and at `uid` what the uid's files in a tmpfs hold
        (memory_folders walked whole, MEMORY_WALK entries and DISK_ENTRIES of its at most: _memory_use; and those
        its processes hold open or mapped with no name: _held_unlinked); without a private tmpfs, what the scratch
        folder holds. At most every cputime.TICK (or LOOK_SPACING times the last look's CPU time) and DISK_EVERY
        seconds (a walk of at most DISK_ENTRIES), however often it is asked; its CPU time is the session's, never
        charged to the submission (LOOK_SPACING). The caller stops the loader and all it started."""
        memory, disk, now = self.budgets.memory_mb << 20, self.budgets.disk_mb << 20, time.monotonic()
        if not self.use_cgroups and now >= self.looked:
            started = time.thread_time()
            held = cputime.tree_memory(session, memory)
            files = _memory_use(self._in_memory(), memory - held) if self.memory_folders and held <= memory else 0
            if self.memory_folders and files <= memory - held:  # and those with no name left, which no walk sees
                files += _held_unlinked(self.uid, self.memory_devices, memory - held - files)
            self.looked = now + max(cputime.TICK, LOOK_SPACING * (time.thread_time() - started))
            if held + files > memory:
                self.hits.add("memory budget")
                self.in_memory = files > 0
                return "memory budget"
        if self.scratch and now >= self.walked + DISK_EVERY:
            self.walked = now
            if _disk_use(self._held_scratch, disk) > disk:
                self.hits.add("disk budget")
                self.overfull = True
                return "disk budget"
        return ""

    def _write_own(self, name: str, text: str) -> None:
        """Write this process's /proc file `name`: through the session's writable /proc where it has one."""
        held = self.proc_fd >= 0
        fd = os.open(f"self/{name}" if held else f"/proc/self/{name}", os.O_WRONLY, dir_fd=self.proc_fd if held else None)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def process_limit(self) -> int | None:
        """The RLIMIT_NPROC `drop` gives a loader: the process budget, where no pids cgroup counts it (then the uid's
        processes are the submission's); None where it sets none."""
        return self.budgets.processes if self.level != "none" and not self.use_cgroups else None

    def drop(self) -> None:
        """In a loader, before student code: the OOM killer's usual choice again (not the session's -1000), the
        worker's uid, its process quota (where no pids cgroup counts it), no privileges to regain; without
        namespaces, the allow-list as Landlock rules (landlock.py)."""
        try:  # as root still: after setuid the file is no longer this process's to write
            self._write_own("oom_score_adj", "0")
        except OSError:
            pass
        if self.proc_fd >= 0:  # the session's writable /proc is not student code's
            os.close(self.proc_fd)
            self.proc_fd = -1
        if self.level == "none":
            return
        rules = landlock.ruleset(self.allowed, [self.scratch], list(DEVICES)) if self.landlock else None
        os.setgroups([])
        os.setgid(self.uid)
        os.setuid(self.uid)
        _forget_keys()
        if (processes := self.process_limit()) is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
        _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # setuid cleared it: die with the session
        if rules is not None:
            landlock.enforce(rules)


def _clean_stale_uid(uid: int) -> None:
    """For a uid a stopped run's worker held and no live one does: what _clean_uid does after a submission, at
    any level (the stopped run's may have been another; a double-forked process outlives a killed worker)."""
    try:
        uids.kill_processes_of(uid, also=_forget_keys)
    except OSError:
        pass
    _remove_files_of(uid)


def _remove_files_of(uid: int) -> None:
    """Remove what `uid` owns in the places any user may write (WRITABLE: _owned), and in their tmpfs folders
    (memory) wherever it is in them. Only after `uid`'s processes are dead: then no entry of its can be moved
    meanwhile (another uid's live ones may move their own folders: each entry is reached from "/" one folder at a
    time, following no link, and removed only if `uid` still owns it). Listed whole before the first is removed: an
    entry removed while its folder is being read may make the reading skip another (readdir's order is the file
    system's)."""
    for path, _ in list(_owned(uid, WRITABLE, _memory_folders(WRITABLE))):
        _remove_owned(path, uid)


def _remove_owned(path: str, uid: int) -> None:
    """Remove `path` (and all under it) if `uid` owns it, through its folder opened from "/" one name at a time
    without following a link: a folder on its way another uid swapped for a link leads root nowhere."""
    folder = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        *way, name = path.strip("/").split("/")
        for step in way:
            inner = os.open(step, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
            os.close(folder)
            folder = inner
        if os.stat(name, dir_fd=folder, follow_symlinks=False).st_uid == uid:
            _remove(f"/proc/self/fd/{folder}/{name}")
    except OSError:  # gone or moved meanwhile: not there
        pass
    finally:
        os.close(folder)


def _owned(uid: int, places: Iterable[str], anywhere: Iterable[str] = ()) -> Iterator[tuple[str, os.stat_result | None]]:
    """The entries `uid` owns in `places` (folders any user may write), as they are listed (a caller may stop
    early). Inside the places in `anywhere` (the tmpfs ones: memory), in every folder, whoever owns it: a file is
    charged to its owner, wherever it is (red-b19 X28-b19-2: one written into a classmate's folder any user may
    write); a folder of `uid`'s too deep to enter (DISK_DEPTH) comes with None, what it holds being unknown. In the
    others, only in the folders of root's that any user may write too (systemd-tmpfiles' /tmp/.X11-unix,
    .ICE-unix...: red-e15 X24-e15-4): only root's, sticky, so no other user can rename one or an entry of `uid`'s in
    one; `uid`'s own folders there are its whole. At most MEMORY_WALK entries looked at in all (past them, what
    is left is not); each folder once (a bind mount may nest one in itself), opened from its parent's descriptor
    without following a link."""
    deep, seen, looked = set(anywhere), set(), 0
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    stack: list[tuple[int, os._ScandirIterator[str], str]] = []  # the folders on the way down (as _disk_use)
    try:
        for place in places:
            try:
                top = os.open(place, os.O_RDONLY | os.O_DIRECTORY)
                stack.append((top, os.scandir(top), place))
            except OSError:  # no such folder here
                continue
            while stack:
                fd, listing, path = stack[-1]
                entry = next(listing, None)
                if entry is None:
                    listing.close()
                    os.close(stack.pop()[0])
                    continue
                looked += 1
                if looked > MEMORY_WALK:
                    return
                try:
                    stat = os.stat(entry.name, dir_fd=fd, follow_symlinks=False)
                except OSError:  # removed meanwhile
                    continue
                mine, inside = stat.st_uid == uid, f"{path}/{entry.name}"
                enter = S_ISDIR(stat.st_mode) and (stat.st_dev, stat.st_ino) not in seen and (
                    place in deep or (not mine and stat.st_uid == 0 and stat.st_mode & SHARED == SHARED))
                if mine:
                    yield inside, stat
                if enter and len(stack) > DISK_DEPTH:
                    if mine:
                        yield inside, None
                elif enter:
                    seen.add((stat.st_dev, stat.st_ino))
                    try:
                        inner = os.open(entry.name, flags, dir_fd=fd)
                    except OSError:  # replaced by a link meanwhile: not there
                        continue
                    try:
                        stack.append((inner, os.scandir(inner), inside))
                    except OSError:
                        os.close(inner)
    finally:
        for fd, listing, _ in stack:
            listing.close()
            os.close(fd)


def _memory_folders(places: Iterable[str]) -> tuple[str, ...]:
    """Those of `places` on a file system whose files are memory (MEMORY_FILESYSTEMS), as /proc/self/mountinfo
    says: each one's mount is the last listed (a later mount on a point covers the earlier) whose point is
    the longest that holds it."""
    mounts = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as info:
        for line in info:
            fields = line.split()
            mounts.append((_mountinfo_path(fields[4]), fields[fields.index("-") + 1]))
    found = []
    for place in places:
        real = os.path.realpath(place)
        holding = [(len(point), n, kind) for n, (point, kind) in enumerate(mounts)
                   if point == "/" or _under(real, (point,))]
        if os.path.isdir(real) and holding and max(holding)[2] in MEMORY_FILESYSTEMS:
            found.append(place)
    return tuple(found)


def _memory_use(entries: Iterable[tuple[str, os.stat_result | None]], bound: int) -> int:
    """Bytes `entries` (a walk of tmpfs folders whole: _owned) take: more than `bound` once past it, past
    DISK_ENTRIES entries, or with a folder too deep to walk (None). Each entry is counted alone: what its folders
    hold of other uids is theirs (X28-b19-2)."""
    total = walked = 0
    for _, stat in entries:
        walked += 1
        total += stat.st_blocks * 512 if stat else bound + 1
        if total > bound or walked > DISK_ENTRIES:
            return bound + 1
    return total


def _held_unlinked(uid: int, devices: set[int], bound: int) -> int:
    """Bytes the files on `devices` (tmpfs: memory) that `uid`'s processes keep with no name left take (red-b19
    X28-b19-1: opened, unlinked, then written through the descriptor; no walk sees them, no PSS counts them), each
    once however many descriptors and mappings keep it (_kept): more than `bound` once past it, or past
    DISK_ENTRIES such files (the uid's own entries, as a walk counts them)."""
    total, seen = 0, set()
    for pid in uids.processes_by_uid().get(uid, []):
        for path, key in _kept(pid, devices):
            if key in seen:
                continue
            try:
                stat = os.stat(path)  # the file itself (the link is the kernel's)
            except OSError:  # closed or unmapped meanwhile
                continue
            if stat.st_nlink == 0 and stat.st_dev in devices and (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                total += stat.st_blocks * 512
                if total > bound or len(seen) > DISK_ENTRIES:
                    return bound + 1
    return total


def _kept(pid: int, devices: set[int]) -> Iterator[tuple[str, tuple[int, int] | None]]:
    """What keeps a file open in process `pid`, as a /proc path to stat it through, with the file's (device,
    inode) where known before: each of its threads' descriptors (/proc/<tid>/fd: a thread may have a table of its
    own, cloned without CLONE_FILES, and a first thread that ended alone shows none, red-a21 X30-a21-3), and its
    mappings of deleted files on `devices` (/proc/<tid>/map_files, which root may follow: a mapping keeps a file
    with no descriptor, and one made PROT_NONE puts no page in a page table, so no PSS counts it, X30-a21-1),
    found in the maps of the thread that shows its memory (cputime.memory_status). At most the process budget times
    RLIMIT_NOFILE descriptors and vm.max_map_count mappings a process, read a line at a time."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:  # ended meanwhile
        return
    for task in tasks:
        try:
            fds = os.listdir(f"/proc/{task}/fd")
        except OSError:
            continue
        yield from ((f"/proc/{task}/fd/{fd}", None) for fd in fds)
    view = cputime.memory_status(pid, tasks)[0]
    try:
        with open(f"/proc/{view}/maps", "rb") as maps:
            for line in maps:
                if not line.endswith(b" (deleted)\n"):
                    continue
                span, _, _, device, inode = line.split(maxsplit=5)[:5]
                major, minor = (int(part, 16) for part in device.split(b":"))
                start, end = (int(part, 16) for part in span.split(b"-"))
                if os.makedev(major, minor) in devices:
                    yield f"/proc/{view}/map_files/{start:x}-{end:x}", (os.makedev(major, minor), int(inode))
    except (OSError, ValueError):  # ended meanwhile, or a line not as this kernel writes them: the rest unread
        return


def _disk_use(folders: str | Iterable[str], bound: int, entries: int | None = None) -> int:
    """Bytes the files and folders under `folders` (one, or several) take (st_blocks), following no link: more
    than `bound` once past it, or past `entries` entries in all (DISK_ENTRIES unless told) or DISK_DEPTH folders
    deep. Depth first, each folder opened from its parent's descriptor (no path grows past the kernel's longest,
    nor passes through a link made meanwhile)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    total = walked = 0
    entries = DISK_ENTRIES if entries is None else entries
    stack: list[tuple[int, os._ScandirIterator[str]]] = []  # the folders on the way down: each one's descriptor,
    # and its listing so far (a local's annotation: typeshed's name, never looked up)

    def enter(name: str, fd: int | None) -> None:
        inner = os.open(name, flags, dir_fd=fd)
        try:
            stack.append((inner, os.scandir(inner)))
        except OSError:
            os.close(inner)
            raise

    try:
        for folder in [folders] if isinstance(folders, str) else folders:
            try:
                enter(folder, None)
            except OSError:  # gone: nothing in it
                continue
            while stack:
                fd, listing = stack[-1]
                entry = next(listing, None)
                if entry is None:
                    listing.close()
                    os.close(stack.pop()[0])
                    continue
                walked += 1
                try:
                    stat = entry.stat(follow_symlinks=False)
                    total += stat.st_blocks * 512
                    if S_ISDIR(stat.st_mode) and len(stack) < DISK_DEPTH:
                        enter(entry.name, fd)
                    elif S_ISDIR(stat.st_mode):
                        return bound + 1
                except OSError:  # removed (or replaced by a link) meanwhile: not there
                    pass
                if total > bound or walked > entries:
                    return bound + 1
    finally:
        for fd, listing in stack:
            listing.close()
            os.close(fd)
    return total


def _remove(path: str) -> None:
    """Remove `path` and all under it as far as possible, raising nothing, following no link and staying on
    its file system, without recursion and with at most two folders open however deep the tree: each folder
    met inside is moved up into `path` itself under a name no one can guess, to be emptied in its turn. Only
    for a tree no process may change meanwhile (its uid's processes are killed first)."""
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:  # a file or link, or gone
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    device, token = os.fstat(top).st_dev, secrets.token_hex(8)
    pending: list[str | None] = [None]  # folders in `top` still to empty; None is `top` itself
    moved = 0
    try:
        while pending:
            name = pending.pop()
            try:
                fd = top if name is None else os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                                      dir_fd=top)
            except OSError:
                continue
            try:
                for entry in os.listdir(fd):
                    try:
                        stat = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                        if not S_ISDIR(stat.st_mode):
                            os.unlink(entry, dir_fd=fd)
                        elif stat.st_dev == device and name is None:
                            pending.append(entry)
                        elif stat.st_dev == device:
                            moved += 1
                            os.rename(entry, f"{token}-{moved}", src_dir_fd=fd, dst_dir_fd=top)
                            pending.append(f"{token}-{moved}")
                    except OSError:
                        pass
            finally:
                if fd != top:
                    os.close(fd)
            if name is not None:
                try:
                    os.rmdir(name, dir_fd=top)
                except OSError:
                    pass
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except OSError:
        pass


LEVELS = ("none", "uid", "uid+landlock", "namespaces", "namespaces+cgroups")  # weakest first


def machine_level(budgets: Budgets = Budgets(), ceiling: str | None = None) -> str:
    """The strongest level this process may set up here, none stronger than `ceiling` (see the module's docstring)."""
    if os.geteuid() != 0:
        return "none"
    if ceiling in ("uid", "uid+landlock") or not _works(_namespaces_work):
        return "uid+landlock" if ceiling != "uid" and _works(_landlock_works) else "uid"
    if ceiling == "namespaces":
        return "namespaces"
    probe = f"kit-probe-{secrets.token_hex(4)}"  # unique: a probe stopped half-way never blocks the next
    return "namespaces+cgroups" if _works(lambda: _Cgroups(probe, budgets).remove()) else "namespaces"


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
    os.mkdir("/tmp/old")
    _pivot_root("/tmp", "/tmp/old")  # not where the root is a ramfs (an initramfs): no allow-listed root there


def _landlock_works() -> None:
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    landlock.enforce(landlock.ruleset([], [], []))


def _mirror(child: int) -> None:
    """Wait for `child`, then end as it ended (a signal or an exit code)."""
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number != signal.SIGKILL:  # no action to reset (signal.signal refuses it): it ends this process as it is
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
