"""Run one command and measure it: wall time, and peak memory of its whole process tree.

Memory is sampled every 0.1 s from /proc through psutil: the sum over the command's process and all
its descendants (sandbox workers, forked loaders and check children, Jupyter kernels) of PSS, the
proportional set size, which splits each shared page between the processes sharing it, so a
forked child is not counted again for the pages it shares with its parent. The sum of RSS (which
does count shared pages once per process) is kept too. A process shorter than 0.1 s can be missed.

Other work on the machine skews every timing, so each run also reports the share of the machine's
CPU time that went to processes outside the command's tree while it ran: the machine's busy CPU
time (psutil.cpu_times) less the command's own (getrusage RUSAGE_CHILDREN: every descendant that
was waited for), over wall time x cores.
"""
from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

MB = 1024 * 1024


@dataclass
class Run:
    seconds: float
    started: float  # epoch seconds, just before the process was started
    returncode: int
    peak_pss_mb: float
    peak_rss_mb: float
    cpu_seconds: float = 0.0  # user + system time of the command's whole tree
    timed_out: bool = False  # stopped at the timeout: the numbers are not a finished run
    others: float = 0.0  # share of the machine's CPU used by other processes meanwhile (0..1)


def _busy() -> float:
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def _ours() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class TreeSampler(threading.Thread):
    def __init__(self, pid: int, interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_pss = self.peak_rss = 0
        self.done = threading.Event()

    def sample(self) -> None:
        try:
            root = psutil.Process(self.pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        pss = rss = 0
        for process in tree:
            try:
                info = process.memory_full_info()
            except psutil.Error:
                continue
            pss += getattr(info, "pss", info.rss)
            rss += info.rss
        self.peak_pss, self.peak_rss = max(self.peak_pss, pss), max(self.peak_rss, rss)

    def run(self) -> None:
        while not self.done.wait(self.interval):
            self.sample()


def run(command: list[str], cwd: Path, env: dict, log: Path, timeout: float | None = None,
        sample_memory: bool = True) -> Run:
    """Run `command` in `cwd`, output to `log`; measure it. Without `sample_memory`, its peak memory is not
    sampled (0): the sampler reads every process's smaps ten times a second, CPU time the command itself loses
    on a machine of two cores, so a run timed for its wall clock alone is timed without it."""
    with open(log, "ab") as out:
        busy0, ours0 = _busy(), _ours()
        started, t0 = time.time(), time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        sampler = TreeSampler(process.pid)
        if sample_memory:
            sampler.start()
        timed_out = False
        try:
            code = process.wait(timeout=None if timeout is None else max(timeout, 0.1))
        except subprocess.TimeoutExpired:  # end what this call started: the process and its descendants
            try:
                tree = [*psutil.Process(process.pid).children(recursive=True)]
            except psutil.Error:
                tree = []
            process.kill()
            for child in tree:
                try:
                    child.kill()
                except psutil.Error:
                    pass
            code, timed_out = process.wait(), True
        seconds = time.perf_counter() - t0
        sampler.done.set()
        if sample_memory:
            sampler.join()
    ours = _ours() - ours0
    others = max(0.0, _busy() - busy0 - ours) / (seconds * (os.cpu_count() or 1))
    return Run(seconds, started, code, sampler.peak_pss / MB, sampler.peak_rss / MB, cpu_seconds=ours,
               others=min(others, 1.0), timed_out=timed_out)
