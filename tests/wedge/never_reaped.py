"""A kernel that never lets a killed process end: waiting for one that was sent SIGKILL never returns, and
asked without waiting (WNOHANG), it is still running. The process is killed indeed: the worker's own end
takes it."""
import os
import signal
import time

_kill, _killpg, _waitpid = os.kill, os.killpg, os.waitpid
killed: set[int] = set()  # the processes (and process groups) this process sent SIGKILL


def kill(pid: int, sig: int) -> None:
    if sig == signal.SIGKILL:
        killed.add(pid)
    _kill(pid, sig)


def killpg(group: int, sig: int) -> None:
    if sig == signal.SIGKILL:
        killed.add(group)
    _killpg(group, sig)


def waitpid(pid: int, options: int) -> tuple[int, int]:
    if pid not in killed:
        return _waitpid(pid, options)
    if options & os.WNOHANG:
        return 0, 0
    while True:
        time.sleep(3600)


os.kill, os.killpg, os.waitpid = kill, killpg, waitpid
