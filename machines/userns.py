"""Run a command in a new user namespace with given id maps, as rootless Podman or a Kubernetes pod would.

    python3 machines/userns.py '0 0 1,1 100000 65535' -- COMMAND...

A map is comma-separated "inside outside count" lines, the same for uids and gids; written by this
process, which must be root outside (CAP_SETUID and CAP_SETGID there): it needs no newuidmap and no
/etc/subuid. The command's exit code is this one's. Standard library only: the machines run it with the
host's python, and tests/conftest.py imports it to say whether this machine can make such a namespace.
"""
from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000
PODMAN = "0 0 1,1 100000 65535"  # rootless Podman's shape: root is the user's own id, 65,535 subordinate ids more
ROOT_ALONE = "0 0 1"  # a container given one id: its root


def _unshare_user() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"unshare(CLONE_NEWUSER): {os.strerror(error)}")


def run(mapping: str, command: list[str]) -> int:
    """Run `command` in a new user namespace whose uid and gid maps are `mapping`; its exit code."""
    lines = "".join(f"{line.strip()}\n" for line in mapping.split(","))
    ready_r, ready_w = os.pipe()  # the child has unshared
    mapped_r, mapped_w = os.pipe()  # the parent has written its maps
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(mapped_w)
        try:
            _unshare_user()
            os.write(ready_w, b"1")
            if os.read(mapped_r, 1) != b"1":
                os._exit(125)
            os.setgid(0)  # become the namespace's root (its full capabilities) before the command
            os.setuid(0)
            os.execvp(command[0], command)
        except OSError as error:
            sys.stderr.write(f"userns: {error}\n")
        os._exit(126)
    os.close(ready_w)
    os.close(mapped_r)
    if os.read(ready_r, 1) == b"1":
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{pid}/{name}", "w") as file:
                file.write(lines)
        os.write(mapped_w, b"1")
    os.close(mapped_w)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def possible() -> str:
    """Why this machine cannot make such a namespace (empty when it can): a child tries, as run() would."""
    if os.geteuid() != 0:
        return "making a user namespace with a chosen id map needs root outside it"
    code = run(ROOT_ALONE, ["true"])
    return "" if code == 0 else f"this machine refuses a new user namespace with an id map (exit code {code})"


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__.split("\n\n")[1].strip())
    sys.exit(run(sys.argv[1], sys.argv[3:]))
