"""A wedged machine, simulated without touching the kernel (tests/test_sandbox.py's MACHINE_FAULTS).

Each module here, preloaded into the sandbox's worker (`Sandbox(path=[tests/], preload=["wedge.<module>"])`),
replaces a piece of the worker's own code with what a wedged kernel does there; the sessions and loaders the
worker forks inherit it. Only the grader sets a worker's path and preload: a student controls notebook cells
alone, which run after the worker's imports, in loaders that hold none of this.
"""
