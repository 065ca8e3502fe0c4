"""A machine with no process (or memory) to spare while a submission is graded: the session's fork of each loader
fails as forks.py's retries end when the kernel keeps saying EAGAIN. The worker's own fork of the session works."""
import os

import forks

_WORKER, _fork = os.getpid(), forks.fork


def _refused() -> int:
    if os.getpid() == _WORKER:
        return _fork()
    raise forks.GraderForkError(11, "fork failed 5 times: Resource temporarily unavailable")


forks.fork = _refused
