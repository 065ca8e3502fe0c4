"""Fresh Debian root filesystems, built with debootstrap from Debian's archive and cached.

Each image is debootstrap's `minbase` variant (the Essential packages and apt) plus exactly the
packages a machine lists, so that what the kit needs beyond them shows as a failure, not as luck.
An image is built once into `<cache>/<suite>-<packages>/` (the folder's name is its key: a changed
package list is another image) and reused by later runs, which never write into it: each run sees
it through an overlay (`machines.chroot`).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

MIRROR = "http://deb.debian.org/debian"
# Outside the repository, so that `git clean` or a fresh clone keeps it; MACHINES_CACHE moves it.
CACHE = Path(os.environ.get("MACHINES_CACHE", "/var/cache/kit-machines"))


@dataclass(frozen=True)
class Image:
    """A Debian release with a package list: what one machine starts from."""

    suite: str  # bookworm (Debian 12), trixie (Debian 13)
    packages: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.suite}-{'+'.join(sorted(self.packages))}"

    @property
    def path(self) -> Path:
        return CACHE / self.name


def build(image: Image, log: Path) -> tuple[Path, float, bool]:
    """The image's root filesystem, how long getting it took, and whether it was cached.

    debootstrap writes into a `.partial` folder that is renamed only when it succeeded, so an
    interrupted build is never taken for a cached one."""
    start = time.monotonic()
    if image.path.is_dir():
        return image.path, time.monotonic() - start, True
    partial = image.path.with_name(image.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(image.packages)}",
                        image.suite, str(partial), MIRROR], stdout=out, stderr=subprocess.STDOUT, check=True)
    subprocess.run(["chroot", str(partial), "apt-get", "clean"], check=True)  # the .debs: not part of the machine
    partial.rename(image.path)
    return image.path, time.monotonic() - start, False
