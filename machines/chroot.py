"""Run commands inside a cached image as in a fresh machine: an overlay, a chroot, its own PID namespace.

The image (machines.rootfs) is the overlay's read-only lower layer and each run writes only to its own
upper layer under the run folder, so every run starts from the same fresh machine and the cache stays
clean. The overlay is mounted on the run's root, so that inside `/` is a mount point, as on a real
machine or a container (in a plain chroot it is not, and the kit falls back to the `uid` level). The
machine gets its own PID and mount namespaces (`unshare`), the host's network and /dev, a fresh /proc
and the host's /sys (the cgroups live there). pip in the machine trusts the certificates the host trusts
(HOST_CA): where the host reaches PyPI through a TLS-inspecting proxy, so must the machine; nothing else
of the host's pip set-up (its indexes, wheels or constraints) goes in. Without CAP_SYS_ADMIN (`drop_sys_admin`), the command runs
as root that may not unshare or mount, as in a container that does not allow namespaces. With an id map (`idmap`), it
runs as root of a user namespace that maps those ids alone (machines/userns.py), as in rootless Podman or a Kubernetes
pod with user namespaces: the machine's root is the host's, as a rootless container's root is the user's own id.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

# Runs in fresh mount and PID namespaces (unshare), as their root: the mounts end with it.
ENTER = r"""set -eu
image=$1 run=$2 drop=$3 command=$4 idmap=$5 python=$6 userns=$7
mkdir -p "$run/upper" "$run/work" "$run/root"
mount -t overlay overlay -o "lowerdir=$image,upperdir=$run/upper,workdir=$run/work" "$run/root"
mount --rbind /dev "$run/root/dev"
mount --rbind /sys "$run/root/sys"
mount -t proc proc "$run/root/proc"
mount -t tmpfs -o mode=755 tmpfs "$run/root/run"  # its own, as a booted machine's: empty but for /run/lock
mkdir -m 1777 "$run/root/run/lock"
cp /etc/resolv.conf "$run/root/etc/resolv.conf"
if [ -n "$idmap" ]; then  # root of a user namespace with this id map, as in a rootless container
  mount -t proc proc /proc  # this PID namespace's, where the map's writer finds the namespace's first process
  if [ "$drop" = 1 ]; then  # and without CAP_SYS_ADMIN there, as a container runtime's default capabilities give
    exec "$python" "$userns" "$idmap" -- capsh --drop=cap_sys_admin -- -c 'exec chroot "$0" /bin/sh -c "$1"' \
      "$run/root" "$command"
  fi
  exec "$python" "$userns" "$idmap" -- chroot "$run/root" /bin/sh -c "$command"
fi
if [ "$drop" = 1 ]; then
  exec capsh --drop=cap_sys_admin -- -c 'exec chroot "$0" /bin/sh -c "$1"' "$run/root" "$command"
fi
exec chroot "$run/root" /bin/sh -c "$command"
"""
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOST_CA = Path(os.environ.get("PIP_CERT") or "/etc/ssl/certs/ca-certificates.crt")
MACHINE_CA = "/etc/ssl/host-ca.crt"  # beside the machine's own certificates, not instead of them


def put(run: Path, files: dict[str, Path | bytes]) -> None:
    """Place files in the machine (into its upper layer, so that they shadow the image): path -> source."""
    for target, source in files.items():
        dest = run / "upper" / target.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(source if isinstance(source, bytes) else source.read_bytes())


def put_tree(run: Path, target: str, root: Path, names: list[str]) -> None:
    """Copy `names` (paths relative to `root`, as `git ls-files` gives them) to `target` in the machine."""
    base = run / "upper" / target.lstrip("/")
    for name in names:
        source, dest = root / name, base / name
        if source.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(source.read_bytes())
            dest.chmod(source.stat().st_mode & 0o777)


def run_in(image: Path, run: Path, command: str, log: Path, drop_sys_admin: bool = False,
           timeout: float = 3600, idmap: str = "") -> tuple[int, float]:
    """Run `command` (sh) in the machine `run` made from `image`; (exit code, seconds). Output to `log`. With
    `idmap` (machines/userns.py's form), as root of a new user namespace with that uid and gid map."""
    start = time.monotonic()
    exports = f"PATH={PATH} HOME=/root LANG=C.UTF-8"
    if HOST_CA.is_file():
        put(run, {MACHINE_CA: HOST_CA})
        exports += f" PIP_CERT={MACHINE_CA}"
    with open(log, "a") as out:
        out.write(f"$ {command}{'  (without CAP_SYS_ADMIN)' if drop_sys_admin else ''}"
                  f"{f'  (in a user namespace mapping {idmap})' if idmap else ''}\n")
        out.flush()
        done = subprocess.run(
            ["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", ENTER, "enter",
             str(image), str(run), "1" if drop_sys_admin else "0", f"export {exports}; {command}", idmap, sys.executable,
             str(Path(__file__).with_name("userns.py"))],
            stdout=out, stderr=subprocess.STDOUT, timeout=timeout, env={"PATH": PATH})
    return done.returncode, time.monotonic() - start
