"""The cause-finder the hidden suites share with the students' public checks: release/dl01_6_3/causes.py.

One file names a cause ("set p.grad to None", "moved up the gradient") for both audiences, so a student
reads in the grade what their own checks said. It lives in the public release and is imported from there
(the grader may read what students have; nothing hidden goes the other way): the suites' `import causes`
gets that module itself. They call it in the grader's process only, on the plain data the probes sent
back, before they compare a consequence.
"""
import sys
from pathlib import Path

from autograder.checks.modules import import_file

_PUBLIC = Path(__file__).resolve().parents[2] / "release" / Path(__file__).parent.name / "causes.py"
# causes.py gives out training_causes.py's causes too, importing it by name: the public module of that name, first
sys.modules["training_causes"] = import_file("training_causes", _PUBLIC.with_name("training_causes.py"))
_public = import_file(__name__, _PUBLIC)
sys.modules[__name__] = _public  # what `import causes` returns: the public module, not this one
