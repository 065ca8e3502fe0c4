"""A kernel that kills the loader while it confines itself (as its OOM killer may, on a machine out of memory)."""
import os
import signal

import seccomp


def _killed() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


seccomp.install = _killed
