"""What a notebook may take from IPython's display in Jupyter, for the sandbox, which runs plain Python and has no
IPython: `display()` (also given without an import, as Jupyter gives it), its handles, `clear_output()` and the
rich-text wrappers, each as plain text printed (the output goes nowhere a grade reads). A right notebook that shows
its progress so is graded as it runs in Jupyter (red-s5: `from IPython.display import display` cost 7 points)."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


class DisplayHandle:
    """What display(..., display_id=True) returns: update() shows the object again."""

    def display(self, thing: Any, **options: Any) -> None:
        print(repr(thing))

    update = display


def display(*objects: Any, display_id: Any = None, **options: Any) -> DisplayHandle | None:
    for thing in objects:
        print(repr(thing))
    return DisplayHandle() if display_id else None


def clear_output(wait: bool = False) -> None:
    """Nothing is shown, so nothing is cleared."""


class _Shown:
    """Markdown, HTML, Latex, Math, Pretty, Image: the text (or data) they wrap, shown as its repr."""

    def __init__(self, data: Any = None, *args: Any, **options: Any) -> None:
        self.data = data

    def __repr__(self) -> str:
        return repr(self.data)


def install() -> None:
    """`IPython` and `IPython.display` importable in the sandbox."""
    shown = ModuleType("IPython.display")
    shown.__dict__.update(display=display, clear_output=clear_output, DisplayHandle=DisplayHandle,
                          **{name: type(name, (_Shown,), {}) for name in ("Markdown", "HTML", "Latex", "Math",
                                                                           "Pretty", "Image", "JSON")})
    package = ModuleType("IPython")
    package.__dict__.update(display=shown, get_ipython=lambda: None)
    package.__path__ = []  # a package, so that `import IPython.display` finds its module in sys.modules
    sys.modules.setdefault("IPython", package)
    sys.modules.setdefault("IPython.display", shown)
