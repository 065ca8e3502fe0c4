"""A kernel that never finishes installing the system-call filter: the loader spins in it for ever."""
import seccomp


def _spin() -> None:
    while True:
        pass


seccomp.install = _spin
