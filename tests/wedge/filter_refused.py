"""A kernel that refuses the system-call filter (ENOMEM: it has no memory left for one more)."""
import errno

import seccomp


def _refuse() -> None:
    raise OSError(errno.ENOMEM, "prctl(22): ENOMEM")


seccomp.install = _refuse
