"""`make test-machines`: the README's commands on fresh machines, and the Gradescope zip as Gradescope runs it.

Each machine starts from a cached debootstrap image (machines.rootfs) holding only the packages it lists,
with a copy of the kit (`git ls-files`: what a clone holds, uncommitted edits included) at /kit:

* debian12, debian13: `make grade` (the demo class, which must get the golden scores,
  tests/golden/demo_scores.json) and `make test TESTS="..."` (SUBSET below: the kit, the sandbox and
  isolation at the level the machine gives);
* no-sys-admin: Debian 12 as root without CAP_SYS_ADMIN, as in a container that allows no namespaces:
  `make grade` must name the level without namespaces (`uid+landlock`, or `uid` on a kernel without Landlock:
  the machines share this machine's kernel) and still give the golden scores, and the isolation tests must
  pass or skip, saying why;
* podman-userns: Debian 12 as root of a user namespace that maps 65,536 ids (root, and 65,535 more), the shape
  rootless Podman gives by default (machines/userns.py): `make grade` must give the golden scores and name the
  level a session was proven at (sandbox/proof.py): `namespaces+cgroups` with CAP_SYS_ADMIN in the namespace
  (`--cap-add=SYS_ADMIN`), then again without it (a runtime's default capabilities; `make grade FORCE=1`, the
  class being unchanged), the level without namespaces;
* root-alone-userns: the same with root the only id mapped: `make grade` must refuse in one line, exit non-zero
  and write nothing (no gradebook.db, grades.csv, feedback/, autograded/ nor submitted/);
  where this machine cannot make user namespaces, both say so and are skipped;
* gradescope: a bare Debian 12 with python3, curl and unzip only: the zip unpacked into
  /autograder/source (no source/ nor solutions/ in it), `setup.sh`, then `run_autograder` on the reference,
  the blank release and hostile submissions, each results.json checked against Gradescope's specification
  (machines.gradescope_results).

It ends with one line per machine: image, Python, what ran and passed, and how long each step took.
Logs and each machine's written files stay in build/machines/<machine>/.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.sandbox import landlock
from machines import chroot, rootfs, userns
from machines.gradescope_results import check_results

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "machines"
KIT = ("python3", "python3-venv", "make")  # the README's prerequisites: each image has these and no more
GRADESCOPE = ("python3", "curl", "unzip")  # Gradescope's base image, as far as the kit may count on it
# Proves the set-up in ~3 minutes (the whole `make test` takes 12+): the student kit with a notebook run in a
# Jupyter kernel and nbgrader's release, the sandbox, and isolation at the level the machine gives.
SUBSET = "tests/test_kit.py tests/test_sandbox.py tests/test_isolation.py"
HOSTILE = ("read-hidden", "os-exit-top", "fork-bomb")
WITHOUT_NAMESPACES = "uid+landlock" if landlock.abi() else "uid"  # a chroot runs on this machine's kernel  # tests/catalogue_hostile.py entries graded on Gradescope


@dataclass
class Outcome:
    """What one machine ran and how it went: one closing line."""

    machine: str
    image: rootfs.Image
    steps: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    python: str = "?"

    def step(self, name: str, ok: bool, seconds: float, detail: str = "") -> None:
        self.steps.append(f"{name} {'ok' if ok else 'FAILED'}{f' ({detail})' if detail else ''} {seconds:.0f} s")
        if not ok:
            self.failed.append(name)

    def line(self) -> str:
        image = f"{self.image.suite} + {' '.join(self.image.packages)}"
        return f"{self.machine}: {image}; {self.python}; " + "; ".join(self.steps)


class Machine:
    """One fresh machine: its image, its run folder (build/machines/<name>) and its log."""

    def __init__(self, name: str, image: rootfs.Image, outcome: Outcome) -> None:
        self.name, self.image, self.outcome = name, image, outcome
        self.run_dir = OUT / name
        subprocess.run(["rm", "-rf", str(self.run_dir)], check=True)  # a fresh machine every run
        self.run_dir.mkdir(parents=True)
        self.log = self.run_dir / "log.txt"
        path, seconds, cached = rootfs.build(image, self.run_dir / "debootstrap.txt")
        self.root = path
        outcome.step("image", True, seconds, "cached" if cached else "debootstrap")
        outcome.python = self.output("python3 --version").strip()

    def run(self, command: str, drop_sys_admin: bool = False, idmap: str = "") -> tuple[bool, float, str]:
        """(succeeded, seconds, its output) of `command` run in the machine (in a user namespace: `idmap`)."""
        start = self.log.stat().st_size if self.log.exists() else 0
        code, seconds = chroot.run_in(self.root, self.run_dir, command, self.log, drop_sys_admin, idmap=idmap)
        with open(self.log, errors="replace") as log:
            log.seek(start)
            return code == 0, seconds, log.read()

    def output(self, command: str) -> str:
        ok, _, text = self.run(command)
        return text.split("\n", 1)[1] if ok else "?"

    def file(self, path: str) -> Path:
        """Where a file the machine wrote is seen from the host (its overlay's upper layer)."""
        return self.run_dir / "upper" / path.lstrip("/")


def kit_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def pytest_summary(output: str) -> str:
    found = re.findall(r"=+ (\d+ (?:passed|failed|error|skipped)[^=]*?) in [\d.]+s", output)
    return found[-1] if found else "no pytest summary"


def demo_scores(machine: Machine) -> dict:
    from bench.course import gradebook_scores

    return gradebook_scores(machine.file("/kit"))


def run_kit(name: str, image: rootfs.Image, drop_sys_admin: bool, tests: str) -> Outcome:
    """`make grade` and `make test TESTS=...` at /kit, as the README tells a new user."""
    outcome = Outcome(name, image)
    machine = Machine(name, image, outcome)
    chroot.put_tree(machine.run_dir, "/kit", ROOT, kit_files())
    ok, seconds, output = machine.run("cd /kit && make grade", drop_sys_admin)
    level = named_level(output)
    golden = json.loads((ROOT / "tests" / "golden" / "demo_scores.json").read_text())
    same = ok and demo_scores(machine) == golden
    wanted = WITHOUT_NAMESPACES if drop_sys_admin else "namespaces+cgroups"
    outcome.step("make grade", ok and same and level == wanted, seconds,
                 f"isolation: {level}" + ("" if level == wanted else f", not {wanted}")
                 + ("; demo scores as golden" if same else "; demo scores NOT as golden"))
    ok, seconds, output = machine.run(f"cd /kit && make test TESTS='{tests}'", drop_sys_admin)
    outcome.step(f"make test TESTS='{tests}'", ok, seconds, pytest_summary(output))
    return outcome


def named_level(output: str) -> str:
    found = re.search(r"each submission isolated by: ([\w+]+)", output)
    return found[1] if found else "no level named"


def run_userns(name: str, image: rootfs.Image, idmap: str) -> Outcome:
    """`make grade` at /kit as root of a user namespace mapping `idmap`: the golden scores at a proven level when it
    maps enough ids, else one line, a non-zero exit and nothing written."""
    outcome = Outcome(name, image)
    why_not = userns.possible()
    if why_not:
        outcome.step("make grade", True, 0, f"skipped: {why_not}")
        return outcome
    machine = Machine(name, image, outcome)
    chroot.put_tree(machine.run_dir, "/kit", ROOT, kit_files())
    ok, seconds, output = machine.run("cd /kit && make grade", idmap=idmap)
    mapped = f"{sum(int(line.split()[2]) for line in idmap.split(','))} ids mapped"
    if idmap != userns.ROOT_ALONE:
        golden = json.loads((ROOT / "tests" / "golden" / "demo_scores.json").read_text())
        for drop, wanted in ((False, "namespaces+cgroups"), (True, WITHOUT_NAMESPACES)):
            if drop:  # the container runtimes' default capabilities: no CAP_SYS_ADMIN in the namespace either; FORCE=1,
                # since the class is unchanged since the first run and would otherwise not be graded again
                ok, seconds, output = machine.run("cd /kit && make grade FORCE=1", drop_sys_admin=True, idmap=idmap)
            same = ok and demo_scores(machine) == golden
            level = named_level(output)
            outcome.step("make grade" + (" without CAP_SYS_ADMIN" if drop else ""), same and level == wanted, seconds,
                         f"{mapped}; isolation: {level} (proven)" + ("" if level == wanted else f", not {wanted}")
                         + ("; demo scores as golden" if same else "; demo scores NOT as golden"))
        return outcome
    refusal = [line for line in output.splitlines() if line.startswith("Not graded, nothing written: ")]
    written = [path for path in ("gradebook.db", "grades.csv", "feedback", "autograded", "submitted")
               if machine.file(f"/kit/{path}").exists()]
    outcome.step("make grade", not ok and len(refusal) == 1 and "maps no id" in refusal[0] and not written, seconds,
                 f"{mapped}; " + (f"refused: {refusal[0][len('Not graded, nothing written: '):][:60]}..." if refusal
                                  else "no refusal") + (f"; WROTE {', '.join(written)}" if written else "; nothing written"))
    return outcome


def run_gradescope(name: str, image: rootfs.Image, zip_path: Path) -> Outcome:
    """The zip as Gradescope runs it: unpacked into /autograder/source, setup.sh, then run_autograder."""
    sys.path.insert(0, str(ROOT / "tests"))
    from catalogue_hostile import HOSTILE as CATALOGUE

    from conftest import FULL, release_notebook, solution_notebook  # type: ignore[attr-defined]  # tests/conftest.py (sys.path above), not the root's

    outcome = Outcome(name, image)
    machine = Machine(name, image, outcome)
    chroot.put(machine.run_dir, {"/tmp/gradescope.zip": zip_path})
    ok, seconds, _ = machine.run("mkdir -p /autograder/source && cd /autograder/source && unzip -q /tmp/gradescope.zip "
                                 "&& test ! -e solutions && test ! -e source && bash ./setup.sh")  # no reference in it
    outcome.step("setup.sh", ok, seconds)
    if not ok:
        return outcome
    reference, release = solution_notebook(), release_notebook()
    entries = {e.student: e for e in CATALOGUE}
    submissions = {"reference": ({"modules_and_sgd.ipynb": json.dumps(reference)}, None),
                   "blank": ({"modules_and_sgd.ipynb": json.dumps(release)}, None)}
    submissions.update({s: (entries[s].files(reference, release), entries[s]) for s in HOSTILE})
    for student, (files, entry) in submissions.items():
        chroot.put(machine.run_dir, {f"/tmp/submissions/{student}/{n}": text.encode() for n, text in files.items()})
        ok, seconds, _ = machine.run(
            f"rm -rf /autograder/submission /autograder/results && mkdir -p /autograder/submission && "
            f"cp -r /tmp/submissions/{student}/. /autograder/submission/ && cd /autograder && "
            "/autograder/source/run_autograder")
        results = machine.file("/autograder/results/results.json")
        data = json.loads(results.read_text()) if ok and results.exists() else None
        problems = check_results(data, FULL, expected=18.0 if student == "reference" else
                                 0.0 if student == "blank" else None, entry=entry)
        (machine.run_dir / f"results-{student}.json").write_text(json.dumps(data, indent=1))
        level = re.search(r"isolation: ([\w+]+)", data.get("output", "")) if data else None
        score = (f"{data['score']:g} points" + (f", isolation: {level[1]}" if level and student == "reference" else "")
                 if data else "no results.json")
        outcome.step(f"run_autograder {student}", ok and not problems, seconds,
                     "; ".join([score] + problems))
    return outcome


def main() -> int:
    machines = ("debian12", "debian13", "no-sys-admin", "podman-userns", "root-alone-userns", "gradescope")
    parser = argparse.ArgumentParser(prog="python -m machines", description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(machines), help=f"some of {','.join(machines)}")
    parser.add_argument("--tests", default=SUBSET, help="what `make test TESTS=...` runs in the kit machines")
    parser.add_argument("--zip", type=Path, default=ROOT / "build" / "gradescope.zip")
    args = parser.parse_args()
    missing = [tool for tool in ("debootstrap", "unshare", "capsh") if not shutil.which(tool)]
    if os.geteuid() != 0 or missing:
        parser.error("needs root" + (f" and {', '.join(missing)} (apt-get install debootstrap util-linux libcap2-bin)"
                                     if missing else ""))
    chosen = [m for m in args.only.split(",") if m]
    unknown = set(chosen) - set(machines)
    if unknown:
        parser.error(f"no machine {', '.join(sorted(unknown))}: choose from {', '.join(machines)}")
    plans = {"debian12": lambda: run_kit("debian12", rootfs.Image("bookworm", KIT), False, args.tests),
             "debian13": lambda: run_kit("debian13", rootfs.Image("trixie", KIT), False, args.tests),
             "no-sys-admin": lambda: run_kit("no-sys-admin", rootfs.Image("bookworm", KIT), True,
                                             "tests/test_isolation.py"),
             "podman-userns": lambda: run_userns("podman-userns", rootfs.Image("bookworm", KIT), userns.PODMAN),
             "root-alone-userns": lambda: run_userns("root-alone-userns", rootfs.Image("bookworm", KIT),
                                                     userns.ROOT_ALONE),
             "gradescope": lambda: run_gradescope("gradescope", rootfs.Image("bookworm", GRADESCOPE), args.zip)}
    start, outcomes = time.monotonic(), []
    for name in chosen:
        print(f"test-machines: {name} ...", flush=True)
        outcomes.append(plans[name]())
        print(f"test-machines: {outcomes[-1].line()}", flush=True)
    failed = [r.machine for r in outcomes if r.failed]
    print(f"\ntest-machines ran, in {time.monotonic() - start:.0f} s (logs in {OUT.relative_to(ROOT)}/<machine>/):")
    for outcome in outcomes:
        print(f"  {outcome.line()}")
    print(f"test-machines: {'FAILED on ' + ', '.join(failed) if failed else 'every machine passed'}")
    print(f"machines: {len(outcomes) - len(failed)} passed, {len(failed)} failed")  # the plain count CI reads
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
