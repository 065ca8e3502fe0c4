"""A loader the memory budget's OOM killer picks while it confines itself: the kernel kills it (wedge.loader_killed)
and the submission's memory cgroup counts the kill (the session's look at its count says so), as when files the
submission left in its scratch space hold the cgroup full."""
import __main__  # the worker, whose _Session forks the loaders
import wedge.loader_killed  # noqa: F401 (the kill)

__main__._Session.memory_killed = lambda self: "the submission's processes together used their memory budget of 1024 MB"
