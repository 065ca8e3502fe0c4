"""A student cell that searches its own process for the answer key (tests/test_answer_key_isolation.py).
(Every place it looks is spelled out, even where two look alike: a reader should see each one searched.)

`search_cell(...)` returns the source of a code cell to add to a submission. When the grader loads the
part, the cell looks for tokens everywhere code in that process can look: every frame, every object the
garbage collector knows (and the strings they hold), the modules and their files, linecache, /proc/self
(cmdline, environ, maps and the mapped files, the process's own memory, every open file descriptor), the
environment, the working directory, /tmp and the course's files by path. It stores what it found in the
global `_answer_key_findings`, writes it to a file in `report_dir` when it can, and, only when it found
no forbidden token and did find the control token (so the search demonstrably works), replaces the five
stubs with working code: the grade then shows, part by part, that its process was clean.

No token appears whole in the cell: it knows each by a prefix, its length and its SHA-256, so finding its
own text proves nothing.
"""
from __future__ import annotations

import hashlib

# Channels whose findings come from the process itself; the others read files by path, which the
# operating system keeps from student code only when the grader runs it as another user (as root).
PATH_CHANNELS = ("course_files", "module_files", "getsource", "cwd", "tmp")

_TEMPLATE = r'''
def _answer_key_search():
    import gc, hashlib, inspect, linecache, os, stat, sys, time, types

    try:
        import select
    except ImportError:  # a confined process may not import what the worker did not: pipes then go unread
        select = None

    tokens = <<TOKENS>>  # name -> (prefix, length, sha256 of the token)
    forbidden, control, check_paths = <<FORBIDDEN>>, <<CONTROL>>, <<CHECK_PATHS>>
    course, report_dir = <<COURSE>>, <<REPORT_DIR>>
    path_channels = <<PATH_CHANNELS>>
    found, scanned, errors = {}, {}, {}
    started = time.monotonic()
    # A str is kept 1, 2 or 4 bytes a character (the tokens are ASCII): the codecs by hand, since a
    # confined process may not import the codec modules.
    def widen(raw, width):
        return b"".join(bytes([c]) + bytes(width - 1) for c in raw)

    encoded = {name: [(widen(p.encode("ascii"), width), width) for width in (1, 2, 4)]
               for name, (p, _, _) in tokens.items()}

    def hit(channel, name):
        found.setdefault(channel, set()).add(name)

    def count(channel, n=1):
        scanned[channel] = scanned.get(channel, 0) + n

    def digest_of(text):
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def text(channel, value):
        for name, (prefix, length, digest) in tokens.items():
            start = value.find(prefix)
            while start >= 0:
                if digest_of(value[start:start + length]) == digest:
                    hit(channel, name)
                    break
                start = value.find(prefix, start + 1)

    def data(channel, value):
        value = bytes(value)
        for name, (prefix, length, digest) in tokens.items():
            for needle, width in encoded[name]:
                start = value.find(needle)
                while start >= 0:
                    window = value[start:start + length * width]
                    same = (len(window) == length * width and not any(window[k::width].strip(bytes(1))
                                                                        for k in range(1, width))
                            and hashlib.sha256(window[::width]).hexdigest() == digest)
                    if same:
                        hit(channel, name)
                        break
                    start = value.find(needle, start + 1)

    def code(channel, obj, depth=0):
        if depth > 20:
            return
        count(channel)
        for value in (obj.co_filename, obj.co_name, getattr(obj, "co_qualname", ""), *obj.co_names,
                      *obj.co_varnames, *obj.co_freevars, *obj.co_cellvars):
            text(channel, value)
        data(channel, obj.co_code)
        for const in obj.co_consts:
            any_value(channel, const, depth + 1)

    def any_value(channel, value, depth=0):
        if depth > 4:
            return
        if isinstance(value, str):
            text(channel, value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            try:
                data(channel, value)
            except (TypeError, ValueError, BufferError):
                pass
        elif isinstance(value, types.CodeType):
            code(channel, value, depth)
        elif isinstance(value, (types.FunctionType, types.MethodType)):
            function = getattr(value, "__func__", value)
            code(channel, function.__code__, depth)
            for item in (function.__defaults__ or ()) + tuple((function.__kwdefaults__ or {}).values()):
                any_value(channel, item, depth + 1)
            text(channel, function.__doc__ or "")
        elif isinstance(value, dict):
            for key, item in list(value.items())[:100000]:
                any_value(channel, key, depth + 1)
                any_value(channel, item, depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in list(value)[:100000]:
                any_value(channel, item, depth + 1)
        elif isinstance(value, type):
            any_value(channel, dict(vars(value)), depth + 1)

    def guarded(channel, work):
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 (record, go on with the next channel)
            errors[channel] = f"{type(exc).__name__}: {exc}"[:300]

    def read_file(channel, path, limit=64 << 20):
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                return
            with open(path, "rb") as handle:
                data(channel, handle.read())
            count(channel)
        except OSError:
            pass

    def walk(channel, top, max_files=20000, max_seconds=60.0):
        deadline = time.monotonic() + max_seconds
        for folder, dirs, files in os.walk(top, onerror=lambda error: None):
            text(channel, folder)
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
            for name in files:
                text(channel, name)
                read_file(channel, os.path.join(folder, name), limit=8 << 20)
                if scanned.get(channel, 0) >= max_files or time.monotonic() > deadline:
                    errors[channel] = "walk cut short"
                    return

    # -- the process: frames
    def frames():
        seen, starts = set(), list(sys._current_frames().values()) + [sys._getframe()]
        for frame in starts:
            while frame is not None and id(frame) not in seen:
                seen.add(id(frame))
                count("frames")
                code("frames", frame.f_code)
                any_value("frames", dict(frame.f_locals))
                any_value("frames", dict(frame.f_globals), depth=3)
                frame = frame.f_back
        for info in inspect.stack(0):
            any_value("frames", (info.filename, info.function))

    # -- the process: every object the collector knows, and what they refer to
    def objects():
        gc.unfreeze()  # frozen objects are left out of get_objects(); student code may unfreeze them too
        everything = gc.get_objects()
        count("gc", len(everything))
        for obj in everything:
            if isinstance(obj, (types.FunctionType, types.CodeType, types.MethodType)):
                any_value("gc", obj)
            for ref in gc.get_referents(obj):
                if isinstance(ref, (str, bytes, bytearray)):
                    any_value("gc", ref)
                elif isinstance(ref, types.CodeType):
                    code("gc", ref)

    def modules():
        for name, module in list(sys.modules.items()):
            count("modules")
            text("modules", name)
            namespace = dict(getattr(module, "__dict__", {}))
            any_value("modules", namespace, depth=2)
            for key in ("__file__", "__cached__"):
                path = namespace.get(key)
                if isinstance(path, str):
                    read_file("module_files", path)
            spec = namespace.get("__spec__")
            for attr in ("origin", "cached"):
                path = getattr(spec, attr, None)
                if isinstance(path, str):
                    text("modules", path)
                    read_file("module_files", path)
            loader = namespace.get("__loader__")
            for attr in ("path", "name"):
                value = getattr(loader, attr, None)
                if isinstance(value, str):
                    text("modules", value)

    def sources():
        prefixes = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
        for obj in gc.get_objects():
            if isinstance(obj, types.FunctionType) and not obj.__code__.co_filename.startswith(prefixes):
                try:
                    text("getsource", inspect.getsource(obj))
                    count("getsource")
                except (OSError, TypeError):
                    pass

    def lines():
        for filename, entry in list(linecache.cache.items()):
            count("linecache")
            any_value("linecache", (filename, entry))

    def environment():
        for key, value in os.environ.items():
            count("environ")
            text("environ", key)
            text("environ", value)

    # -- the process, through /proc/self
    def proc_files():
        try:
            import ctypes

            ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: let this process read its own /proc
        except Exception:  # noqa: BLE001 (no prctl here: the reads below show what they can)
            pass
        for name in ("cmdline", "environ", "maps", "status", "cwd", "exe"):
            path = f"/proc/self/{name}"
            try:
                if name in ("cwd", "exe"):
                    text("proc", os.readlink(path))
                else:
                    with open(path, "rb") as handle:
                        data("proc", handle.read())
                count("proc")
            except OSError as exc:
                errors.setdefault("proc", "")
                errors["proc"] += f"{name}: {exc.strerror}; "

    def regions():
        with open("/proc/self/maps") as maps:
            rows = [line.split(None, 5) for line in maps]
        return [(int(row[0].split("-")[0], 16), int(row[0].split("-")[1], 16), row[1],
                 row[5].strip() if len(row) > 5 else "") for row in rows]

    def mapped_files():
        prefixes = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
        for path in sorted({path for _, _, _, path in regions() if path.startswith("/")}):
            text("maps", path)
            if not path.startswith(prefixes):
                read_file("maps", path)

    def memory():
        prefixes = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
        overlap, chunk = 4 * max(length for _, length, _ in tokens.values()), 8 << 20
        fd = os.open("/proc/self/mem", os.O_RDONLY)
        try:
            for start, end, perms, path in regions():
                if "r" not in perms or path in ("[vvar]", "[vsyscall]") or (path.startswith(prefixes) and "w" not in perms):
                    continue
                at = start
                while at < end:
                    size = min(chunk + overlap, end - at)
                    try:
                        block = os.pread(fd, size, at)
                    except OSError:
                        break
                    data("memory", block)
                    count("memory", len(block))
                    at += chunk
        finally:
            os.close(fd)

    def descriptors():
        for entry in os.listdir("/proc/self/fd"):
            fd = int(entry)
            count("fds")
            try:
                text("fds", os.readlink(f"/proc/self/fd/{entry}"))
                info = os.fstat(fd)
            except OSError:
                continue
            try:
                if stat.S_ISREG(info.st_mode) and info.st_size <= 64 << 20:
                    data("fds", os.pread(fd, info.st_size, 0))
                elif (select and (stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode))
                      and select.select([fd], [], [], 0)[0]):
                    data("fds", os.read(fd, 1 << 16))
            except OSError:
                pass

    # -- files by path
    def course_files():
        for folder in ("solutions", "source", "autograder", "release", ""):
            top = os.path.join(course, folder)
            if folder:
                walk("course_files", top)
            else:
                for name in os.listdir(course):
                    read_file("course_files", os.path.join(course, name))

    for channel, work in [("frames", frames), ("gc", objects), ("modules", modules), ("getsource", sources),
                          ("linecache", lines), ("environ", environment), ("proc", proc_files),
                          ("maps", mapped_files), ("memory", memory), ("fds", descriptors),
                          ("course_files", course_files), ("cwd", lambda: walk("cwd", os.getcwd())),
                          ("tmp", lambda: walk("tmp", "/tmp"))]:
        guarded(channel, work)

    found = {channel: sorted(names) for channel, names in found.items()}
    leaked = sorted({name for channel, names in found.items() for name in names if name in forbidden
                     and (check_paths or channel not in path_channels)})
    controlled = any(control in names for channel, names in found.items() if channel not in path_channels)
    findings = {"found": found, "scanned": scanned, "errors": errors, "leaked": leaked,
                "control_found": controlled, "clean": not leaked and controlled,
                "seconds": round(time.monotonic() - started, 2), "uid": os.geteuid(), "pid": os.getpid()}
    try:
        import json

        with open(os.path.join(report_dir, f"findings-{os.getpid()}-{time.monotonic_ns()}.json"), "w") as out:
            json.dump(findings, out)
    except OSError as exc:
        findings["errors"]["report"] = str(exc)
    return findings


_answer_key_findings = _answer_key_search()

if _answer_key_findings["clean"]:  # the channel the grade itself shows: working stubs, part by part
    import contextlib as _contextlib

    count_64_32_10 = 32 * (64 + 1) + 10 * (32 + 1)  # the exercises, answered (their cells stay blank stubs)
    z2_with_zero_grad, z2_without_zero_grad = 0.908, 3.668
    loss2_with_zero_grad, loss2_without_zero_grad = (0.908 - 1) ** 2, (3.668 - 1) ** 2

    def _working_parameters(self):
        found, seen = [], set()
        for value in vars(self).values():
            for item in (value if isinstance(value, (list, tuple)) else (value,)):
                if isinstance(item, Parameter):
                    candidates = [item]
                elif isinstance(item, Module):
                    candidates = item.parameters()
                else:
                    continue
                for p in candidates:
                    if id(p) not in seen:
                        seen.add(id(p))
                        found.append(p)
        return found

    def _working_forward(self, x):
        return x @ self.weight.T + self.bias

    def _working_zero_grad(self):
        for p in self.params:
            p.grad = np.zeros_like(p.data)

    def _working_step(self):
        for p in self.params:
            p.data -= self.lr * p.grad

    @_contextlib.contextmanager
    def no_grad():
        previous = Tensor.recording
        Tensor.recording = False
        try:
            yield
        finally:
            Tensor.recording = previous

    Module.parameters = _working_parameters
    Linear.forward = _working_forward
    SGD.zero_grad, SGD.step = _working_zero_grad, _working_step
'''


def fingerprint(token: str, prefix_length: int = 24) -> tuple[str, int, str]:
    """How the cell knows a token without holding it: a prefix, the length, the SHA-256."""
    return token[:prefix_length], len(token), hashlib.sha256(token.encode()).hexdigest()


def search_cell(tokens: dict[str, str], forbidden: list[str], control: str, course: str, report_dir: str,
                check_paths: bool) -> str:
    """The cell's source for these tokens (name -> token); the tokens themselves are not in it."""
    source = (_TEMPLATE
              .replace("<<TOKENS>>", repr({name: fingerprint(token) for name, token in tokens.items()}))
              .replace("<<FORBIDDEN>>", repr(sorted(forbidden)))
              .replace("<<CONTROL>>", repr(control))
              .replace("<<CHECK_PATHS>>", repr(check_paths))
              .replace("<<PATH_CHANNELS>>", repr(PATH_CHANNELS))
              .replace("<<COURSE>>", repr(course))
              .replace("<<REPORT_DIR>>", repr(report_dir)))
    assert not any(token in source for token in tokens.values())
    return source
