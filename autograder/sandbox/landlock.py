"""The file-system allow-list of a session that has no mount namespace of its own (the `uid+landlock` level).

Where the kit may not make namespaces (root without CAP_SYS_ADMIN: Docker's default), a session's processes
would see the machine's whole disk as their uid sees it, and the /tmp, /var/tmp and /dev/shm every uid
shares: what one submission graded at the same time as another leaves there. Landlock, a security module
any process may apply to itself once it has `no_new_privs`, closes that: each loader restricts itself, after
dropping its privileges (isolation.py's `drop`), to what a namespace session's root holds, the same
allow-list read-only (`allowed_paths`), its own scratch folder read-write, the device nodes a session gets,
and /proc read-only (the loader times its check children there, cputime.py). Everything it starts carries
the restriction, and nothing can lift it. Nothing outside those paths can be opened, listed, written,
made, renamed into or run. Landlock does not cover a path's metadata (stat), nor /proc's view of other
processes (docs/security.md, "Not contained").

The kernel's interface (include/uapi/linux/landlock.h) through ctypes, as bubblewrap and nsjail hand the
kernel their system-call filters: three calls, numbered alike on every architecture. Each version of the
interface (its ABI) adds rights: the ruleset handles every right the running kernel knows, so that a newer
kernel denies more; from ABI 4 it also denies TCP bind and connect (the system-call filter already refuses
sockets), from ABI 6 signals and abstract unix sockets that leave the session.

Standard library only: a loader imports this file as a top-level module beside its siblings.
"""
from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same number on x86_64 and aarch64
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
ABI_1 = (1 << 13) - 1  # the above, and removing and making every kind of file
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3 and 5
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file (not a folder) may give
TCP_BIND_AND_CONNECT = (1 << 0) | (1 << 1)  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET_AND_SIGNAL = (1 << 0) | (1 << 1)  # ABI 6

READ_ONLY = EXECUTE | READ_FILE | READ_DIR
PROC = READ_FILE | READ_DIR
DEVICE = READ_FILE | WRITE_FILE | TRUNCATE  # no ioctl

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _call(number: int, *args: object) -> int:
    result = _libc.syscall(number, *args)
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"landlock ({number}): {errno.errorcode.get(error, error)}")
    return result


def abi() -> int:
    """The version of Landlock this kernel offers, 0 where it offers none (too old, or switched off)."""
    try:
        return _call(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except OSError:
        return 0


def handled(version: int) -> tuple[int, int, int]:
    """(file-system rights, network rights, scopes) a ruleset handles on a kernel of ABI `version`."""
    fs = ABI_1 | (REFER if version >= 2 else 0) | (TRUNCATE if version >= 3 else 0) | (IOCTL_DEV if version >= 5 else 0)
    return fs, TCP_BIND_AND_CONNECT if version >= 4 else 0, SCOPE_ABSTRACT_UNIX_SOCKET_AND_SIGNAL if version >= 6 else 0


def ruleset(read_only: list[str], read_write: list[str], devices: list[str]) -> int:
    """A ruleset (its descriptor) that allows these paths (each with what is below it) and /proc read-only. Made
    while the loader is still root, which may open every path of the list (a uid may not pass /root on its way
    to a pyenv interpreter), and enforced once it is not (`enforce`). Raises OSError where the kernel refuses (no
    Landlock). A path that does not exist is left out."""
    version = abi()
    if version < 1:
        raise OSError(errno.ENOSYS, "this kernel offers no Landlock")
    fs, net, scoped = handled(version)
    size = 8 if version < 4 else 16 if version < 6 else 24  # the struct grew with the ABI
    attributes = struct.pack("=QQQ", fs, net, scoped)[:size]
    fd = _call(CREATE_RULESET, attributes, ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        for paths, rights in ((read_only, READ_ONLY), (["/proc"], PROC), (read_write, fs), (devices, DEVICE)):
            for path in paths:
                _allow(fd, path, rights & fs)
    except BaseException:
        os.close(fd)
        raise
    return fd


def enforce(fd: int) -> None:
    """Restrict this process, and all it starts from now on, to the ruleset `fd`, for good; then close it. Needs
    `no_new_privs` (isolation.py's `drop` sets it first)."""
    try:
        _call(RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0))
    finally:
        os.close(fd)


def _allow(ruleset: int, path: str, rights: int) -> None:
    """Add `rights` beneath `path` (a file takes only a file's rights)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        _call(ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
              struct.pack("=Qi", rights, fd), ctypes.c_uint32(0))
    finally:
        os.close(fd)
