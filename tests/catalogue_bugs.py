"""The single-fault catalogue: one function of the reference rewritten the way a student gets it wrong (or
right in another way), what the grader must take away, what it must leave alone, and the words its feedback
must use to name the misconception.

Each entry is data (entries repeat one shape by design: one row per misconception); tests/test_catalogue_bugs.py grades every entry through the hidden suites in one batch
and checks it. docs/catalogues.md is written from this list. An entry with `gap` set is a
bug the suites do not catch today: its test is an xfail(strict) that turns into a failure once the suites
catch it, so the gap stays visible until it is closed.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass

from autograder.classroom.mutate import Mutation

PARTS = ("test_forward", "test_parameters", "test_exercise_count", "test_zero_grad", "test_step",
         "test_exercise_second_step", "test_no_grad", "test_lesson_numbers")
LESSON = "test_lesson_numbers"  # runs all five stubs together, so a bug may or may not show there


@dataclass(frozen=True)
class Bug:
    id: str
    did: str  # what the student did, one line
    mutations: tuple[Mutation, ...]
    loses: tuple[str, ...] = ()  # parts that must score less than full marks
    keeps: tuple[str, ...] = ()  # parts that must keep full marks; () means every part not in `loses`
    phrase: str = ""  # the feedback of the lost parts must contain it (case-insensitive)
    gap: str = ""  # set when the suites miss this bug: the entry is expected to fail (xfail strict)
    absent: str = ""  # a message that would blame another misconception: the feedback must not contain it
    absent_gap: str = ""  # set when the suites do show that misleading message today (xfail strict)
    # What the student's code did, in the words of the first failing message (tests/test_first_messages.py):
    # `cause` in the first failing message of the report, `lesson_cause` in the first failing message of the
    # whole-notebook part (when the entry loses it and that message can name the cause).
    cause: str = ""
    lesson_cause: str = ""
    # Every failing message, of the grade and of the public checks alike, names one of these (issue 31: a
    # message points at the code that is wrong, not at a method the bug only reaches through).
    every: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.keeps:
            object.__setattr__(self, "keeps", tuple(p for p in PARTS if p not in self.loses))
        assert not set(self.loses) & set(self.keeps), self.id
        assert set(self.loses) | set(self.keeps) == set(PARTS), f"{self.id}: say where {LESSON} stands"
        assert bool(self.loses) == bool(self.phrase), f"{self.id}: a bug names its misconception, a variant does not"
        assert bool(self.loses) == bool(self.cause), f"{self.id}: a bug's first message names its cause"
        assert not self.lesson_cause or LESSON in self.loses, self.id

    @property
    def correct(self) -> bool:
        return not self.loses and not self.gap


def module(body: str) -> Mutation:
    return Mutation("module", "Module.parameters", body)


def linear(body: str) -> Mutation:
    return Mutation("linear", "Linear.forward", body)


def zero_grad(body: str) -> Mutation:
    return Mutation("sgd", "SGD.zero_grad", body)


def step(body: str) -> Mutation:
    return Mutation("sgd", "SGD.step", body)


def sgd_init(body: str) -> Mutation:
    """SGD's given __init__ rewritten (it sits in the student's sgd cell)."""
    return Mutation("sgd", "SGD.__init__", body)


def linear_init_bug(id: str, did: str, *, bound: str = "1.0 / np.sqrt(n_in)", size: str = "(n_out, n_in)",
                    weight: str = "Parameter", bias_first: bool = False, **names: str) -> Bug:
    """Linear's given __init__ (in the student's cell linear) edited, forward() right: only the lesson's networks,
    which make their layers with __init__, go wrong, and every failing message names Linear.__init__."""
    lines = [f"self.weight = {weight}(rng.uniform(-bound, bound, size={size}))",
             "self.bias = Parameter(rng.uniform(-bound, bound, size=(n_out,)))"]
    body = "\n".join([f"bound = {bound}", *(lines[::-1] if bias_first else lines)])
    return Bug(id, f"Linear's given __init__ {did}, forward() right", (Mutation("linear", "Linear.__init__", body),),
               loses=(LESSON,), lesson_cause="Linear.__init__", every=("Linear.__init__",), **names)


def no_grad(body: str) -> Mutation:
    return Mutation("no_grad", "no_grad", body)


def no_grad_cell(source: str) -> Mutation:
    """The whole no_grad cell replaced (a class instead of a generator)."""
    return Mutation("no_grad", "no_grad", "", source=source)


def exercise_cell(grade_id: str, source: str) -> Mutation:
    """An exercise cell replaced (it holds no function)."""
    return Mutation(grade_id, "", "", source=source)


NO_GRAD_CLASS = """\
class no_grad:
    \"\"\"Inside `with no_grad():` operations record no graph.\"\"\"

    def __enter__(self):
        self.previous = Tensor.recording
        Tensor.recording = False
        return self

    def __exit__(self, exc_type, exc, tb):
        Tensor.recording = self.previous
        return False
"""


# Cell sgd with step()'s loop body at 16 spaces and the line after it at 12 (an IndentationError on line 18).
SGD_UNINDENT = """\
from collections.abc import Iterable


class SGD:
    \"\"\"Plain (stochastic) gradient descent over a fixed list of Parameters.\"\"\"

    def __init__(self, params: Iterable[Parameter], lr: float) -> None:
        self.params = list(params)
        self.lr = lr

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = np.zeros_like(p.data)

    def step(self) -> None:
        for p in self.params:
                p.data -= self.lr * p.grad
            p.grad = p.grad
"""


def module_cell(parameters: str, name: str = "Module", after: str = "") -> Mutation:
    """The whole Module cell, with `parameters` as the method's full text (signature included), the class
    called `name`, and `after` (top-level code the student left below the class)."""
    return Mutation("module", "Module.parameters", "", source=f"""\
class {name}:
    \"\"\"A part of a network. It stores Parameters and other Modules as attributes.\"\"\"

{parameters}

    def __call__(self, x: Tensor) -> Tensor:
        return self.forward(x)
{after}""")


# The reference's walk, with a hole for how one attribute's items are found and how a candidate is kept.
def walk(items: str = "value if isinstance(value, (list, tuple)) else (value,)",
         parameter: str = "isinstance(item, Parameter)",
         recurse: str = "isinstance(item, Module)",
         keep: str = "id(p) not in seen",
         take: str = "p",
         values: str = "vars(self).values()",
         ret: str = "return found") -> str:
    return f"""\
found = []
seen = set()
for value in {values}:
    items = {items}
    for item in items:
        if {parameter}:
            candidates = [item]
        elif {recurse}:
            candidates = item.parameters()
        else:
            continue
        for p in candidates:
            if {keep}:
                seen.add(id(p))
                found.append({take})
{ret}"""


# parameters() as a generator (yield), deduplicated by id: PyTorch's own design, accepted (the notebook says so).
GENERATOR = module("""\
seen = set()
for value in vars(self).values():
    for item in (value if isinstance(value, (list, tuple)) else (value,)):
        subs = [item] if isinstance(item, Parameter) else (item.parameters() if isinstance(item, Module) else [])
        for p in subs:
            if id(p) not in seen:
                seen.add(id(p))
                yield p""")

# The reference's parameters() as the Module cell writes it (for entries that change the rest of the cell).
PARAMETERS = textwrap.indent("def parameters(self):\n" + textwrap.indent(walk(), "    "), "    ")

# A scratch line left at the end of the Module cell: once Module is defined, it raises (NameError: `layer` is
# a name of a later demonstration) as the cell loads, so the whole-notebook part has a cell that failed.
SCRATCH = module_cell(PARAMETERS, after="\nprint(layer.parameters())\n")

# Exercise 2 worked out by replaying the worked example with the student's own Linear and SGD.
REPLAYED = """\
def replay(zero_between):
    layer = Linear(2, 1, np.random.default_rng(0))
    layer.weight.data[...] = [[0.5, -1.0]]
    layer.bias.data[...] = [0.2]
    opt = SGD(layer.parameters(), lr=0.1)
    x = Tensor([[1.0, 2.0]])
    for step in (1, 2):
        if step == 1 or zero_between:
            opt.zero_grad()
        ((layer(x) - 1.0) ** 2).sum().backward()
        opt.step()
    z = layer(x).data.item()
    return z, (z - 1.0) ** 2


z2_with_zero_grad, loss2_with_zero_grad = replay(True)
z2_without_zero_grad, loss2_without_zero_grad = replay(False)
"""

# The Linear cell with the class renamed Dense (Keras's name), every line else the reference's.
DENSE = """\
class Dense(Module):
    \"\"\"Fully connected layer: x of shape (batch, n_in) -> x @ weight.T + bias, shape (batch, n_out).\"\"\"

    def __init__(self, n_in: int, n_out: int, rng: np.random.Generator) -> None:
        bound = 1.0 / np.sqrt(n_in)
        self.weight = Parameter(rng.uniform(-bound, bound, size=(n_out, n_in)))
        self.bias = Parameter(rng.uniform(-bound, bound, size=(n_out,)))

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.weight.T + self.bias
"""


# The blank Module stub, as a student pastes it into a later cell while trying things out.
MODULE_STUB = """\
class Module:
    def parameters(self):
        raise NotImplementedError

    def __call__(self, x):
        return self.forward(x)


"""


def sgd_cell(above: str = "", below: str = "", imports: str = "") -> str:
    """Cell sgd as the reference writes it, with the student's `above` the class and `below` it."""
    return f"""\
{imports}from collections.abc import Iterable


{above}class SGD:
    def __init__(self, params: Iterable[Parameter], lr: float) -> None:
        self.params = list(params)
        self.lr = lr

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = np.zeros_like(p.data)

    def step(self) -> None:
        for p in self.params:
            p.data -= self.lr * p.grad
{below}"""


# Cell sgd with an older Linear (no bias) pasted below while experimenting.
SGD_WITH_A_LINEAR = sgd_cell(below="""

class Linear(Module):
    def __init__(self, n_in, n_out, rng):
        bound = 1.0 / np.sqrt(n_in)
        self.weight = Parameter(rng.uniform(-bound, bound, size=(n_out, n_in)))
        self.bias = Parameter(rng.uniform(-bound, bound, size=(n_out,)))

    def forward(self, x):
        return x @ self.weight.T
""")
# Cell sgd with a helper of the student's above the class that cell no_grad calls.
SGD_WITH_RECORDING_STATE = sgd_cell("def recording_state() -> bool:\n    return Tensor.recording\n\n\n")
# Cell sgd with a draft of no_grad() above the class (cell no_grad, later, defines the right one).
SGD_WITH_A_DRAFT_NO_GRAD = sgd_cell("@contextlib.contextmanager\ndef no_grad():\n    Tensor.recording = False\n    yield\n\n\n",
                                    imports="import contextlib\n")
# Cell sgd with a helper above the class that Linear.forward calls (cell linear, earlier, calls it).
SGD_WITH_AFFINE = sgd_cell("def affine(x, weight, bias):\n    return x @ weight.T + bias\n\n\n")
# Cell linear as solved, forward through affine() of cell sgd, and a helper below it that SGD.zero_grad calls.
LINEAR_WITH_ZEROS_FOR = DENSE.replace("class Dense", "class Linear").replace(
    "return x @ self.weight.T + self.bias", "return affine(x, self.weight, self.bias)") + """

def zeros_for(p):
    return np.zeros_like(p.data)
"""
# A right step() written under the student's no_grad(), as PyTorch's optimizers do it.
STEP_UNDER_NO_GRAD = step("with no_grad():\n    for p in self.params:\n        p.data -= self.lr * p.grad")

# parameters() reading a constant container (the kinds of attribute it searches, never written to) with one
# real bug in the walk: the message names that bug, not the constant (facts.collected: it holds no Parameter or id).
CONSTANT_READ = """\
class Module:
    KINDS = [list, tuple]

    def parameters(self):
        found, seen = [], set()
        for value in VALUES:
            for item in (value if isinstance(value, tuple(self.KINDS)) else (value,)):
                ps = [item] if isinstance(item, Parameter) else item.parameters() if isinstance(item, Module) else []
                for p in ps:
                    if DEDUP:
                        seen.add(id(p))
                        found.append(p)
        return found

    def __call__(self, x):
        return self.forward(x)
"""
REVERSED = "reversed(list(vars(self).values()))"


def constant_read(top: str = "", signature: str = "self", kinds: str = "self.KINDS", values: str = REVERSED,
                  dedup: str = "id(p) not in seen", on_class: bool = True) -> Mutation:
    """The Module cell of CONSTANT_READ: the constant on the class, or (`top`, `signature`) a global or default."""
    source = CONSTANT_READ if on_class else CONSTANT_READ.replace("    KINDS = [list, tuple]\n\n", "")
    return Mutation("module", "Module.parameters", "", source=top + source.replace("self.KINDS", kinds).replace(
        "def parameters(self)", f"def parameters({signature})").replace("VALUES", values).replace("DEDUP", dedup))


BUGS: list[Bug] = [
    Bug("reference", "the reference solution, unchanged", ()),

    # ------------------------------------------------------------------ Module.parameters
    Bug("parameters-no-dedup", "parameters() without deduplication: a shared weight is listed twice",
        (module(walk(keep="True")),),
        loses=("test_parameters", LESSON), phrase="listed the same Parameter object more than once", cause='listed the same Parameter object more than once', lesson_cause='listed it 2 times'),
    Bug("parameters-not-recursive", "parameters() collects the module's own Parameters but does not ask sub-modules",
        (module(walk(recurse="False")),),
        loses=("test_parameters", LESSON), phrase="when an attribute is a Module, add that module's parameters() (recursion)", cause="when an attribute is a Module, add that module's parameters() (recursion)", lesson_cause='parameters() gave 0'),
    Bug("parameters-blind-to-lists", "parameters() looks at each attribute but not inside lists (Sequential's self.layers)",
        (module(walk(items="(value,)")),),
        loses=("test_parameters", LESSON), phrase="look at every item of a list", cause='look at every item of a list', lesson_cause='parameters() gave 0'),
    Bug("parameters-lists-of-modules-only", "parameters() looks inside lists for Modules but not for Parameters",
        (module(walk(items="value if isinstance(value, list) else (value,)",
                     parameter="isinstance(item, Parameter) and item is value")),),
        loses=("test_parameters",), phrase="when an attribute is a list, collect every Parameter in it",
        absent="a list that outlives the call", cause='when an attribute is a list, collect every Parameter in it'),
    Bug("parameters-returns-a-set", "parameters() returns a set: no repeats, but no order either",
        (module(walk(ret="return set(found)")),),
        loses=("test_parameters",), phrase="returns a set, whose order changes from run to run",
        cause="returns a set, whose order changes from run to run"),
    Bug("parameters-sorted-by-name", "parameters() walks the attributes sorted by name (bias before weight)",
        (module(walk(values="(vars(self)[name] for name in sorted(vars(self)))")),),
        loses=("test_parameters",), phrase="found every Parameter but in another order", cause='found every Parameter but in another order'),
    Bug("parameters-plain-tensors", "parameters() collects every Tensor, not only Parameters",
        (module(walk(parameter="isinstance(item, Tensor)")),),
        loses=("test_parameters",), phrase="returned a plain Tensor", cause='returned a plain Tensor'),
    Bug("parameters-returns-arrays", "parameters() returns the arrays p.data instead of the Parameters",
        (module(walk(take="p.data")),),
        loses=("test_parameters", LESSON), phrase="which is not a Parameter: list the Parameter objects themselves",
        cause="parameters() listed a ndarray, which is not a Parameter"),
    Bug("parameters-no-return", "parameters() collects everything and forgets to return it",
        (module(walk(ret="")),),
        loses=("test_parameters", LESSON), phrase="parameters() returned None", cause='parameters() returned None'),
    Bug("parameters-default-list", "parameters(self, found=[]): the default list keeps growing across calls",
        (module_cell("""\
    def parameters(self, found=[]):
        for value in vars(self).values():
            for item in (value if isinstance(value, (list, tuple)) else (value,)):
                if isinstance(item, Parameter):
                    if item not in found:
                        found.append(item)
                elif isinstance(item, Module):
                    item.parameters(found)
        return found"""),),
        loses=("test_parameters",), phrase="a list that outlives the call", cause="has a default argument found=[]",
        every=("default argument found=[]",)),
    Bug("parameters-generator", "correct: parameters() as a generator (yield), deduplicated by id",
        (GENERATOR,)),
    Bug("parameters-in-list-by-identity", "correct: deduplicated with `if p not in found` (Tensor has no __eq__, so by identity)",
        (module(walk(keep="p not in found")),)),
    Bug("parameters-tuple-blind", "parameters() looks inside lists but not tuples (the TODO says list or tuple)",
        (module(walk(items="value if isinstance(value, list) else (value,)")),),
        loses=("test_parameters",), phrase="when an attribute is a tuple, treat it like a list", cause='when an attribute is a tuple, treat it like a list'),
    Bug("parameters-dedup-by-value", "parameters() drops a Parameter whose values equal one already found",
        (module(walk(keep="not any(np.array_equal(p.data, q.data) for q in found)")),),
        loses=("test_parameters",), phrase="compare id(p), or use `is`), not when its values are equal", cause='two different Parameters that hold equal values'),
    Bug("parameters-lists-modules", "parameters() lists each sub-module as well as its Parameters, [item] + "
        "item.parameters(): SGD then holds a Linear, which zero_grad() cannot clear",
        (module(walk().replace("candidates = item.parameters()", "candidates = [item] + item.parameters()")),),
        loses=("test_parameters", LESSON), phrase="parameters() listed a Linear, which is not a Parameter",
        absent="SGD.zero_grad", cause="which is not a Parameter", lesson_cause="parameters() listed a Linear",
        every=("which is not a Parameter",)),
    Bug("parameters-seen-on-class", "parameters() keeps its seen-set on the class (Module.seen = set()): every call, on "
        "every module, shares it",
        (module_cell("    seen: set = set()\n\n" + PARAMETERS.replace("seen = set()", "seen = Module.seen")),),
        loses=("test_parameters", LESSON), phrase="outlives the call", absent="SGD.__init__",
        cause="Module.seen is a set kept on the class", lesson_cause="Module.seen is a set kept on the class",
        every=("Module.seen is a set kept on the class",)),

    Bug("parameters-seen-global", "parameters() keeps its seen-set in a global of the Module cell (SEEN = set()): "
        "every call, on every module, shares it",
        (module_cell(PARAMETERS.replace("seen = set()", "seen = SEEN"), after="\nSEEN: set = set()\n"),),
        loses=("test_parameters", LESSON), phrase="outlives the call", absent="collect every attribute",
        cause="SEEN is a set at the top of its cell (a global)", lesson_cause="SEEN is a set at the top of its cell",
        every=("SEEN is a set at the top of its cell",)),
    Bug("parameters-seen-on-instance", "parameters() keeps its seen-set on the module itself (self._seen = "
        "getattr(self, '_seen', set())): a second call on a module finds nothing new",
        (module_cell(PARAMETERS.replace("seen = set()", "self._seen = getattr(self, '_seen', set())\n"
                                                         "        seen = self._seen")),),
        loses=("test_parameters",), phrase="outlives the call", absent="class attribute",
        cause="self._seen is a set kept on the module itself", every=("self._seen is a set kept on the module",)),
    Bug("parameters-seen-default-set", "parameters(self, seen=set()): the default set keeps every id across calls",
        (module_cell(PARAMETERS.replace("def parameters(self):", "def parameters(self, seen=set()):")
                     .replace("        seen = set()\n", "")),),
        loses=("test_parameters", LESSON), phrase="a set that outlives the call", absent="a list that outlives",
        cause="has a default argument seen=set()", lesson_cause="has a default argument seen=set()",
        every=("default argument seen=set()",)),
    Bug("parameters-cached", "parameters() under @functools.cache: one list object for every call, which keeps a "
        "Parameter replaced since and what a caller appended",
        (Mutation("module", "Module.parameters", "", source="import functools\n\n\n" + module_cell(
            "    @functools.cache\n" + PARAMETERS).source),),
        loses=("test_parameters",), phrase="returned the same list object on two calls",
        cause="returned the same list object on two calls", absent="class attribute"),
    Bug("parameters-reversed-constant-on-class", "parameters() walks the attributes in reverse and reads a constant "
        "KINDS = [list, tuple] on the class", (constant_read(),),
        loses=("test_parameters",), phrase="in another order", cause="in another order", absent="KINDS"),
    Bug("parameters-no-dedup-constant-on-class", "parameters() without deduplication, reading a constant KINDS = "
        "[list, tuple] on the class", (constant_read(values="vars(self).values()", dedup="True"),),
        loses=("test_parameters", LESSON), phrase="more than once", cause="more than once", absent="KINDS"),
    Bug("parameters-reversed-constant-global", "parameters() walks the attributes in reverse and reads a global "
        "KINDS = [list, tuple]", (constant_read("KINDS = [list, tuple]\n\n\n", kinds="KINDS", on_class=False),),
        loses=("test_parameters",), phrase="in another order", cause="in another order", absent="KINDS"),
    Bug("parameters-reversed-constant-default-dict", "parameters(self, names=NAMES) walks in reverse, NAMES a dict "
        "of names at the top of the cell", (constant_read("NAMES = {'weight': 0, 'bias': 1}\n\n\n",
                                                          "self, names=NAMES", "(list, tuple)", on_class=False),),
        loses=("test_parameters",), phrase="in another order", cause="in another order", absent="NAMES"),
    Bug("parameters-reversed-constant-default-list", "parameters(self, kinds=[list, tuple]) walks in reverse",
        (constant_read(signature="self, kinds=[list, tuple]", kinds="kinds", on_class=False),),
        loses=("test_parameters",), phrase="in another order", cause="in another order", absent="default argument"),
    Bug("parameters-no-dedup-call-counter", "parameters() without deduplication, with a call counter in a default "
        "argument, parameters(self, _calls=[0]) (_calls[0] += 1; it never holds a Parameter or an id)",
        (module_cell("    def parameters(self, _calls=[0]):\n        _calls[0] += 1\n"
                     + textwrap.indent(walk(keep="True"), "        ")),),
        loses=("test_parameters", LESSON), phrase="more than once", cause="more than once", absent="_calls"),
    Bug("module-getattr-answers-none", "correct: Module.__getattr__ answers None for a missing attribute (dunder "
        "names still raise): a ReLU answers .weight too",
        (module_cell(PARAMETERS + "\n\n    def __getattr__(self, name):\n        if name.startswith('__'):\n"
                     "            raise AttributeError(name)\n        return None"),)),

    # ------------------------------------------------------------------ Linear.forward
    Bug("forward-weight-in-out", "forward() uses the weight as (in, out): x @ W + b",
        (linear("return x @ self.weight + self.bias"),),
        loses=("test_forward", LESSON), phrase="the weight is stored as (n_out, n_in), so the layer computes x @ W.T + b", cause='the weight is stored as (n_out, n_in)', lesson_cause='Linear.forward raised'),
    Bug("forward-helper-in-out", "forward() hands x @ W + b to a helper of its own, which raises",
        (linear("def affine(x, w, b):\n    return x @ w + b\n\nreturn affine(x, self.weight, self.bias)"),),
        loses=("test_forward", LESSON), phrase="affine raised ValueError", cause="affine raised ValueError",
        lesson_cause="affine raised ValueError"),
    Bug("linear-weight-property", "correct: Linear.weight a property over self._weight with a setter, the given "
        "__init__ untouched (it assigns through the setter)",
        (Mutation("linear", "Linear", "", source=DENSE.replace("class Dense", "class Linear") + (
            "\n    @property\n    def weight(self) -> Parameter:\n        return self._weight\n\n"
            "    @weight.setter\n    def weight(self, value: Parameter) -> None:\n        self._weight = value\n")),)),
    Bug("forward-no-bias", "forward() without the bias: x @ W.T",
        (linear("return x @ self.weight.T"),),
        loses=("test_forward", LESSON), phrase="left out the bias", cause='left out the bias', lesson_cause='Linear(2, 1) must compute x @ W.T + b',
        absent="every layer must compute with Tensor operations"),
    Bug("forward-on-data", "forward() computes on .data and wraps the result: the gradient never reaches the weights",
        (linear("return Tensor(x.data @ self.weight.data.T + self.bias.data)"),),
        loses=("test_forward", LESSON), phrase="not on their .data", cause='no gradient reached self.weight', lesson_cause='no gradient reached the layer'),
    Bug("forward-bias-data", "forward() adds the bias's .data: the bias gets no gradient, the weight does",
        (linear("return x @ self.weight.T + self.bias.data"),),
        loses=("test_forward", LESSON), phrase="no gradient reached", cause="no gradient reached",
        lesson_cause="no gradient reached the layer's bias"),
    Bug("forward-relu-inside", "forward() applies a ReLU inside the layer",
        (linear("return (x @ self.weight.T + self.bias).relu()"),),
        loses=("test_forward", LESSON), phrase="returned wrong numbers: a layer computes x @ W.T + b", cause='Linear.forward returned wrong numbers', lesson_cause='Linear(2, 1) must compute x @ W.T + b'),
    Bug("forward-returns-array", "forward() computes on .data and returns the NumPy array, not a Tensor (the next "
        "layer of a network, a given ReLU, fails on it)",
        (linear("return x.data @ self.weight.data.T + self.bias.data"),),
        loses=("test_forward", LESSON), phrase="must return a Tensor", absent="ReLU.forward",
        cause="with Tensor operations", lesson_cause="Linear.forward returned a ndarray"),
    Bug("forward-init-transposed", "Linear's given __init__ and forward() both transposed: weight (n_in, n_out), "
        "x @ W + b (the lesson's numbers then differ through forward() alone)",
        (Mutation("linear", "Linear.__init__", "bound = 1.0 / np.sqrt(n_in)\n"
                  "self.weight = Parameter(rng.uniform(-bound, bound, size=(n_in, n_out)))\n"
                  "self.bias = Parameter(rng.uniform(-bound, bound, size=(n_out,)))"),
         linear("return x @ self.weight + self.bias")),
        loses=("test_forward", LESSON), phrase="the weight is stored as (n_out, n_in)",
        absent="another amount than lr * grad", cause="the weight is stored as (n_out, n_in)"),
    linear_init_bug("linear-init-transposed", "makes the weight (n_in, n_out)", size="(n_in, n_out)",
                    phrase="Linear.__init__ made the weight of Linear(2, 1) of shape (2, 1)",
                    absent="Linear.forward raised", cause="Linear.__init__ made the weight"),
    linear_init_bug("linear-init-bound-without-sqrt", "draws in +-1/n_in, not +-1/sqrt(n_in)", bound="1.0 / n_in",
                    phrase="Linear.__init__", absent="than with recording on", cause="Linear.__init__"),
    linear_init_bug("linear-init-bias-first", "draws the bias before the weight (vars() lists bias first)",
                    bias_first=True, phrase="Linear.__init__ sets self.bias before self.weight",
                    absent="Linear.forward", cause="Linear.__init__ sets self.bias before self.weight"),
    linear_init_bug("linear-init-weight-tensor", "makes the weight a plain Tensor, not a Parameter (which "
                    "parameters() is right to skip)", weight="Tensor",
                    phrase="Linear.__init__ keeps no Parameter self.weight", absent="parameters() gave",
                    cause="Linear.__init__ keeps no Parameter self.weight"),
    # The layers' facts call forward() and the layer itself: what each returned names the one that dropped it.
    Bug("module-call-no-return", "the given Module.__call__ without its return (self.forward(x)): layer(x) is None",
        (Mutation("module", "Module.__call__", "self.forward(x)"),),
        loses=(LESSON,), phrase="the given Module.__call__ must return self.forward(x)",
        absent="Linear.forward returned", cause="Module.__call__ must return self.forward(x)",
        lesson_cause="Module.__call__ must return self.forward(x)", every=("Module.__call__",)),
    Bug("linear-defined-again", "an older Linear (no bias) pasted at the end of cell sgd: the lesson's networks use "
        "it, Linear.forward's own part grades cell linear's (right)",
        (Mutation("sgd", "SGD", "", source=SGD_WITH_A_LINEAR),),
        loses=(LESSON,), phrase="the Linear in use is the one cell sgd defines again",
        cause="the Linear in use is the one cell sgd defines again",
        lesson_cause="the Linear in use is the one cell sgd defines again", every=("cell sgd defines again",)),
    Bug("forward-bias-first", "correct: forward() written as self.bias + x @ self.weight.T",
        (linear("return self.bias + x @ self.weight.T"),)),
    Bug("forward-weight-times-x", "correct: forward() written as (self.weight @ x.T).T + self.bias",
        (linear("return (self.weight @ x.T).T + self.bias"),)),

    # ------------------------------------------------------------------ SGD.zero_grad
    Bug("zero-grad-does-nothing", "zero_grad() that does nothing (the lesson's 'loss jumps about' bug)",
        (zero_grad("pass"),),
        loses=("test_zero_grad", LESSON), phrase="zero_grad() left the gradients as they were",
        absent="calling zero_grad() twice in a row broke the gradients", cause='zero_grad() left the gradients as they were', lesson_cause='zero_grad() left the gradients as they were'),
    Bug("zero-grad-first-only", "zero_grad() with `return` inside the loop: clears only the first parameter",
        (zero_grad("for p in self.params:\n    p.grad = np.zeros_like(p.data)\n    return"),),
        loses=("test_zero_grad", LESSON), phrase="is a return inside the loop", cause='cleared only 1 of the 3 gradients'),
    Bug("zero-grad-none", "zero_grad() sets p.grad = None",
        (zero_grad("for p in self.params:\n    p.grad = None"),),
        loses=("test_zero_grad", LESSON), phrase="must be a NumPy array shaped like p.data",
        absent="left the gradients as they were", cause='set p.grad to None', lesson_cause="set p.grad to None",
        every=("zero_grad", "p.grad")),
    Bug("zero-grad-int", "zero_grad() makes integer zeros, np.zeros(p.data.shape, dtype=int): backward() cannot add "
        "float gradients into them",
        (zero_grad("for p in self.params:\n    p.grad = np.zeros(p.data.shape, dtype=int)"),),
        loses=("test_zero_grad", LESSON), phrase="zero_grad() must make each p.grad np.zeros_like(p.data)",
        cause="of dtype int64", lesson_cause="of dtype int64", every=("zero_grad",)),
    Bug("zero-grad-len", "zero_grad() makes np.zeros(len(p.data)): a weight's grad gets the shape (n_out,)",
        (zero_grad("for p in self.params:\n    p.grad = np.zeros(len(p.data))"),),
        loses=("test_zero_grad", LESSON), phrase="must be a NumPy array shaped like p.data",
        cause="must be a NumPy array shaped like p.data", lesson_cause="backward() cannot add float gradients",
        every=("zero_grad",)),
    Bug("zero-grad-scalar", "zero_grad() sets p.grad = 0 (a number, not an array)",
        (zero_grad("for p in self.params:\n    p.grad = 0"),),
        loses=("test_zero_grad",), phrase="must be a NumPy array shaped like p.data", cause='must be a NumPy array shaped like p.data'),
    Bug("zero-grad-zeroes-data", "zero_grad() zeroes the values p.data as well as the gradients",
        (zero_grad("for p in self.params:\n    p.grad = np.zeros_like(p.data)\n    p.data[...] = 0"),),
        loses=("test_zero_grad", LESSON), phrase="zero_grad() changed p.data", cause='zero_grad() changed p.data',
        lesson_cause='zero_grad() changed p.data', every=("zero_grad()",)),
    # What zero_grad() left is told from the grads before the call: set to ones is not "left as they were"; the
    # lesson's checks read what it left before any number, so none blames a right Linear.forward.
    Bug("zero-grad-ones-like", "zero_grad() sets every grad to ones (np.ones_like for np.zeros_like)",
        (zero_grad("for p in self.params:\n    p.grad = np.ones_like(p.data)"),),
        loses=("test_zero_grad", LESSON), phrase="holding 1 everywhere", absent="left the gradients as they were",
        cause="holding 1 everywhere", lesson_cause="holding 1 everywhere", every=("zero_grad()",)),
    # np.empty_like leaves what the memory held (zeros, or old gradients, by chance): the loop ran over every
    # Parameter, so no return inside it is suggested.
    Bug("zero-grad-empty-like", "zero_grad() with np.empty_like (uncleared memory) for np.zeros_like",
        (zero_grad("for p in self.params:\n    p.grad = np.empty_like(p.data)"),),
        loses=("test_zero_grad", LESSON), phrase="zero_grad() left", absent="return inside the loop",
        cause="zero_grad() left", lesson_cause="zero_grad() left", every=("zero_grad()",)),
    Bug("zero-grad-fill", "correct: p.grad.fill(0)",
        (zero_grad("for p in self.params:\n    p.grad.fill(0)"),)),
    Bug("zero-grad-one-array-per-shape", "zero_grad() hands Parameters of one shape one zeros array (a cache by "
        "shape): backward() then adds two Parameters' gradients into it",
        (zero_grad("cache = {}\nfor p in self.params:\n    p.grad = cache.setdefault(p.data.shape, "
                   "np.zeros(p.data.shape))"),),
        loses=("test_zero_grad", LESSON), phrase="sharing grad arrays (one memory, or views of it)",
        cause="sharing grad arrays", absent="old gradients"),
    Bug("zero-grad-views-of-one-array-per-shape", "zero_grad() gives each Parameter its own view of one zeros array "
        "per shape (buffer.view()): no two grads are one object, yet backward() adds two Parameters' gradients "
        "into one memory",
        (zero_grad("cache = {}\nfor p in self.params:\n    p.grad = cache.setdefault(p.data.shape, "
                   "np.zeros(p.data.shape)).view()"),),
        loses=("test_zero_grad", LESSON), phrase="sharing", cause="sharing", absent="one array per Parameter"),
    Bug("zero-grad-ellipsis", "correct: p.grad[...] = 0",
        (zero_grad("for p in self.params:\n    p.grad[...] = 0"),)),
    Bug("zero-grad-times-zero", "correct: p.grad *= 0",
        (zero_grad("for p in self.params:\n    p.grad *= 0"),)),

    # ------------------------------------------------------------------ SGD.step
    Bug("step-tensor-ops", "step() with tensor operations: p = p - lr * p.grad (the model stops changing)",
        (step("for p in self.params:\n    p = p - self.lr * p.grad"),),
        loses=("test_step", LESSON), phrase="p = p - lr * p.grad only rebinds a local name", cause='left the Parameters where they were', lesson_cause='step() left the Parameters where they were'),
    Bug("step-tensor-ops-stored", "step() with tensor operations stored back: self.params[i] = p - lr * p.grad (graph grows)",
        (step("for i, p in enumerate(self.params):\n    self.params[i] = p - self.lr * p.grad"),),
        loses=("test_step", LESSON), phrase="do it on the array (p.data -= self.lr * p.grad), not with Tensor operations", cause='left the Parameters where they were', lesson_cause='step() left the Parameters where they were'),
    Bug("step-augmented-tensor", "step() with p -= lr * p.grad on the Tensor (no in-place operator: a new node)",
        (step("for p in self.params:\n    p -= self.lr * p.grad"),),
        loses=("test_step", LESSON), phrase="change p.data in place", cause='left the Parameters where they were', lesson_cause='step() left the Parameters where they were'),
    Bug("step-plus", "step() with + instead of -: moves up the gradient",
        (step("for p in self.params:\n    p.data += self.lr * p.grad"),),
        loses=("test_step", LESSON), phrase="moved the Parameters up the gradient",
        absent="the very objects it was given", cause='moved the Parameters up the gradient', lesson_cause='moved the Parameters up the gradient'),
    Bug("step-zeroes-grads", "step() that also zeroes the gradients",
        (step("for p in self.params:\n    p.data -= self.lr * p.grad\n    p.grad = np.zeros_like(p.data)"),),
        loses=("test_step", LESSON), phrase="clearing the gradients is zero_grad()'s job", cause='step() changed p.grad', lesson_cause='step() must not clear p.grad'),
    Bug("step-hard-coded-lr", "step() with a hard-coded learning rate 0.1 instead of self.lr",
        (step("for p in self.params:\n    p.data -= 0.1 * p.grad"),),
        loses=("test_step", LESSON), phrase="as if the learning rate were 0.1",
        absent="the very objects it was given", cause='as if the learning rate were 0.1', lesson_cause='as if the learning rate were 0.1',
        every=("as if the learning rate were 0.1",)),
    Bug("step-lr-over-count", "step() divides each move by the number of Parameters, with self.lr (a stray factor)",
        (step("for p in self.params:\n    p.data -= self.lr * p.grad / len(self.params)"),),
        loses=("test_step", LESSON), phrase="as if the learning rate were",
        absent="use the learning rate stored in self.lr", cause='as if the learning rate were',
        lesson_cause='as if the learning rate were'),
    # The gradients it moves by are gone before it reads them: the facts are where p.data stayed and what p.grad
    # holds after the call, not a guess at a rebound name.
    Bug("step-zero-grad-first", "step() calls self.zero_grad() before its loop, so it moves by zero gradients",
        (step("self.zero_grad()\nfor p in self.params:\n    p.data -= self.lr * p.grad"),),
        loses=("test_step", LESSON), phrase="set their gradients to zero",
        absent="only rebinds a local name", cause="set their gradients to zero",
        lesson_cause="set their gradients to zero", every=("set their gradients to zero", "set its gradient to zero",
                                                            "step() changed p.grad")),
    Bug("step-first-only", "step() with `return` inside the loop: moves only the first parameter",
        (step("for p in self.params:\n    p.data -= self.lr * p.grad\n    return"),),
        loses=("test_step", LESSON), phrase="moved only some of the parameters",
        absent="the very objects it was given", cause='moved only some of the parameters', lesson_cause='moved only some of the parameters',
        every=("moved only some of the parameters",)),
    # The bias whose grad sums to zero stays: the moved ones did not move by lr * grad, so no return is asked
    # about, nor (the first step being wrong already) other objects.
    Bug("step-mean-grad", "step() moves each Parameter by lr times the mean of its grad (p.grad.mean())",
        (step("for p in self.params:\n    p.data -= self.lr * p.grad.mean()"),),
        loses=("test_step", LESSON), phrase="something other than lr * grad", absent="return inside the loop",
        cause="something other than lr * grad"),
    # A cell that does not run defines nothing, in Jupyter as here: SGD is missing for zero_grad() too, and every
    # message of the three parts names the cell's error, once.
    Bug("step-syntax-error", "step() with a stray parenthesis: cell sgd has a syntax error, so no SGD exists",
        (step("for p in self.params:\n    p.data -= self.lr * p.grad)"),),
        loses=("test_zero_grad", "test_step", LESSON), phrase="cell sgd: a syntax error on line",
        absent="cell sgd: cell sgd", cause="cell sgd: a syntax error on line",
        lesson_cause="cell sgd: a syntax error on line", every=("cell sgd: a syntax error on line",)),
    Bug("step-default-self-lr", "def step(self, lr=self.lr): a NameError as the class is made, so no SGD exists",
        (Mutation("sgd", "SGD", "", source=sgd_cell().replace("def step(self) -> None:",
                                                              "def step(self, lr=self.lr) -> None:")),),
        loses=("test_zero_grad", "test_step", LESSON), phrase="cell sgd: SGD raised NameError",
        cause="cell sgd: SGD raised NameError", lesson_cause="cell sgd: SGD raised NameError",
        every=("cell sgd: SGD raised NameError",)),
    Bug("step-on-a-copy-only", "step() subtracts from a copy of the array and never stores it",
        (step("for p in self.params:\n    new = p.data.copy()\n    new -= self.lr * p.grad"),),
        loses=("test_step", LESSON), phrase="left the Parameters where they were", cause='left the Parameters where they were', lesson_cause='step() left the Parameters where they were'),
    Bug("step-does-nothing", "step() that does nothing (pass)",
        (step("pass"),),
        loses=("test_step", LESSON), phrase="left the Parameters where they were",
        absent="should move once", cause="left the Parameters where they were",
        lesson_cause="step() left the Parameters where they were"),
    Bug("step-name-error", "step() with a typo: lr for self.lr (a NameError; the part's other cells are the blank "
        "release's, whose exercise cells raise as they load)",
        (step("for p in self.params:\n    p.data -= lr * p.grad"),),
        loses=("test_step", LESSON), phrase="NameError: name 'lr' is not defined", absent="exercise_count",
        cause="SGD.step raised NameError", lesson_cause="SGD.step raised NameError"),
    Bug("step-under-no-grad", "correct: step() under `with no_grad():` (PyTorch's idiom), with a right no_grad(): the "
        "step part runs cell sgd with the blank no_grad first, then with the student's own, which passes its part",
        (STEP_UNDER_NO_GRAD,)),
    Bug("step-under-no-grad-up-the-gradient", "step() under `with no_grad():` with a right no_grad(), moving each "
        "Parameter up its gradient: the step part, graded with the student's no_grad, names the step's own mistake",
        (step("with no_grad():\n    for p in self.params:\n        p.data += self.lr * p.grad"),),
        loses=("test_step", LESSON), phrase="up the gradient", absent="is blank in this part",
        cause="up the gradient", lesson_cause="up the gradient"),
    Bug("step-under-a-wrong-no-grad", "step() under `with no_grad():`, and a no_grad() that never restores recording: "
        "no_grad's own part fails, so the step part keeps it blank",
        (STEP_UNDER_NO_GRAD,
         no_grad("Tensor.recording = False\nyield")),
        loses=("test_step", "test_no_grad", LESSON), phrase="no_grad is blank in this part",
        absent="no_grad is not written yet", cause="no_grad"),  # the cell that is wrong, named by both parts
    Bug("zero-grad-helper-in-module-cell", "correct: zero_grad() calls zeros_for(p), a helper the student wrote below "
        "Module: the zero_grad part runs the released module cell, then again with the student's, which passes its part",
        (module_cell(PARAMETERS, after="\n\ndef zeros_for(p):\n    return np.zeros_like(p.data)\n"),
         zero_grad("for p in self.params:\n    p.grad = zeros_for(p)"))),
    Bug("forward-helper-and-exercise-replayed", "correct: Linear.forward calls affine(), a helper below Module, and "
        "Exercise 2 replays the worked example with the student's classes: cell linear is lent once its part passes "
        "with cell module lent",
        (module_cell(PARAMETERS, after="\n\ndef affine(x, weight, bias):\n    return x @ weight.T + bias\n"),
         linear("return affine(x, self.weight, self.bias)"),
         exercise_cell("exercise_second_step", REPLAYED))),
    Bug("no-grad-reads-a-helper-of-cell-sgd", "correct: step() under `with no_grad():` and no_grad() reads "
        "Tensor.recording through recording_state(), a helper at the top of cell sgd: each of the two cells passes "
        "its parts in full only with the other lent (a cycle; the notebook runs top to bottom)",
        (Mutation("sgd", "SGD.step", "", source=SGD_WITH_RECORDING_STATE), STEP_UNDER_NO_GRAD,
         no_grad("previous = recording_state()\nTensor.recording = False\ntry:\n    yield\n"
                 "finally:\n    Tensor.recording = previous"))),
    Bug("forward-and-zero-grad-call-helpers-of-each-others-cells", "correct: Linear.forward calls affine(), a helper "
        "at the top of cell sgd, and SGD.zero_grad calls zeros_for(), a helper below Linear: the forward and zero_grad "
        "parts each pass in full only with the other's cell lent (a cycle)",
        (Mutation("linear", "Linear.forward", "", source=LINEAR_WITH_ZEROS_FOR),
         Mutation("sgd", "SGD.step", "", source=SGD_WITH_AFFINE), zero_grad("for p in self.params:\n    p.grad = zeros_for(p)"))),
    Bug("step-under-no-grad-with-a-draft-in-cell-sgd", "correct: step() under `with no_grad():`; cell sgd also holds "
        "a draft no_grad() that never restores, which the right one of cell no_grad replaces as the notebook runs",
        (Mutation("sgd", "SGD.step", "", source=SGD_WITH_A_DRAFT_NO_GRAD), STEP_UNDER_NO_GRAD),
        absent="no_grad is not written yet"),
    Bug("step-clips-the-gradient", "step() clips the gradient to [-1, 1]: p.data -= self.lr * np.clip(p.grad, -1, 1) "
        "(it reads self.lr and p.grad)",
        (step("for p in self.params:\n    p.data -= self.lr * np.clip(p.grad, -1.0, 1.0)"),),
        loses=("test_step", LESSON), phrase="did not move each parameter by -lr * grad",
        cause="did not move each parameter by -lr * grad",
        absent="use the learning rate stored in self.lr and the gradient in p.grad"),
    Bug("step-new-array", "correct: p.data = p.data - self.lr * p.grad",
        (step("for p in self.params:\n    p.data = p.data - self.lr * p.grad"),)),
    Bug("step-copy-then-in-place", "correct: p.data = p.data.copy(); p.data -= self.lr * p.grad",
        (step("for p in self.params:\n    p.data = p.data.copy()\n    p.data -= self.lr * p.grad"),)),
    Bug("step-np-subtract", "correct: np.subtract(p.data, self.lr * p.grad, out=p.data)",
        (step("for p in self.params:\n    np.subtract(p.data, self.lr * p.grad, out=p.data)"),)),
    Bug("step-leaves-out-data", "step() writes p.data = -self.lr * p.grad (the p.data term left out), zero_grad() right",
        (step("for p in self.params:\n    p.data = -self.lr * p.grad"),),
        loses=("test_step", LESSON), phrase="leaving out their values", cause="leaving out their values",
        lesson_cause="leaving out their values", absent="zero_grad() changed p.data"),

    # ------------------------------------------------------------------ the exercise cells
    Bug("exercise-count-own-classes", "correct: Exercise 1's count computed with the student's own right classes: "
        "the exercise part runs its cell with the blank Module first, then with the student's cells, which pass "
        "their own parts",
        (exercise_cell("exercise_count", "count_64_32_10 = sum(p.data.size for p in Sequential(\n"
                       "    Linear(64, 32, np.random.default_rng(0)), ReLU(), Linear(32, 10, np.random.default_rng(0))"
                       ").parameters())\n"),)),
    Bug("exercise-count-later-name", "Exercise 1 calls count_by_formula, which a later cell defines (a NameError)",
        (exercise_cell("exercise_count", "count_64_32_10 = count_by_formula([64, 32, 10])\n"),),
        loses=("test_exercise_count",), phrase="NameError: name 'count_by_formula' is not defined",
        cause="NameError: name 'count_by_formula' is not defined"),
    Bug("exercise-count-as-text", "Exercise 1's count written as text, count_64_32_10 = '2410'",
        (exercise_cell("exercise_count", "count_64_32_10 = '2410'\n"),),
        loses=("test_exercise_count",), phrase="is a str: assign a number", cause="is a str: assign a number"),
    Bug("exercise-count-as-array", "Exercise 1's count as a 0-d array, count_64_32_10 = np.array(2410)",
        (exercise_cell("exercise_count", "count_64_32_10 = np.array(2410)\n"),),
        loses=("test_exercise_count",), phrase="is a ndarray: assign a number", cause="is a ndarray: assign a number"),
    Bug("exercise-count-as-decimal", "Exercise 1's count as a Decimal (not a numbers.Real)",
        (exercise_cell("exercise_count", "from decimal import Decimal\n\ncount_64_32_10 = Decimal(2410)\n"),),
        loses=("test_exercise_count",), phrase="is a Decimal: assign a number", cause="is a Decimal: assign a number"),
    Bug("exercise-count-fraction", "correct: Exercise 1's count as a Fraction (a real number; no .4g format before "
        "Python 3.12)",
        (exercise_cell("exercise_count", "from fractions import Fraction\n\ncount_64_32_10 = Fraction(2410)\n"),)),
    Bug("exercise-second-step-as-text", "Exercise 2's answers written as text ('0.908', ...)",
        (exercise_cell("exercise_second_step", "z2_with_zero_grad = '0.908'\nloss2_with_zero_grad = '0.008464'\n"
                       "z2_without_zero_grad = '3.668'\nloss2_without_zero_grad = '7.118'\n"),),
        loses=("test_exercise_second_step",), phrase="is a str: assign a number", cause="is a str: assign a number"),
    Bug("exercise-second-step-nan", "Exercise 2's first answer left as a placeholder, z2_with_zero_grad = math.nan",
        (exercise_cell("exercise_second_step", "import math\nz2_with_zero_grad = math.nan  # to do\n"
                       "loss2_with_zero_grad = 0.008464\nz2_without_zero_grad = 3.668\n"
                       "loss2_without_zero_grad = 7.118\n"),),
        loses=("test_exercise_second_step",), phrase="z2_with_zero_grad is nan", absent="is a float: assign",
        cause="z2_with_zero_grad is nan"),
    Bug("exercise-second-step-loss-at-the-edge", "Exercise 2 with loss2_without_zero_grad = 7.19, 1.0014% from the "
        "answer as the kit keeps it (4 digits, 7.118) though 0.9983% from the exact 7.118224: both routes read the "
        "answer with answers.is_right, so both fail",
        (exercise_cell("exercise_second_step", "z2_with_zero_grad = 0.908\nloss2_with_zero_grad = 0.008464\n"
                       "z2_without_zero_grad = 3.668\nloss2_without_zero_grad = 7.19\n"),),
        loses=("test_exercise_second_step",), phrase="loss2_without_zero_grad = 7.19 is not right",
        cause="loss2_without_zero_grad = 7.19 is not right"),
    Bug("exercise-second-step-loss-abs", "Exercise 2 with z right and the loss written as |z - y|, not (z - y)^2",
        (exercise_cell("exercise_second_step", "z2_with_zero_grad = 0.908\nloss2_with_zero_grad = abs(0.908 - 1)\n"
                       "z2_without_zero_grad = 3.668\nloss2_without_zero_grad = 2.668 ** 2\n"),),
        loses=("test_exercise_second_step",), phrase="z2_with_zero_grad is right, so the loss is off",
        cause="loss2_with_zero_grad = 0.092 is not right", absent="its own gradient"),

    # ------------------------------------------------------------------ SGD.__init__ (given, in the sgd cell)
    Bug("sgd-keeps-generator", "SGD.__init__ keeps params as given (self.params = params) and parameters() yields: "
        "the optimizer keeps a generator, which its first loop uses up",
        (GENERATOR, sgd_init("self.params = params\nself.lr = lr")),
        loses=(LESSON,), phrase="SGD.__init__ kept params as the generator", absent="p.data in place",
        cause="SGD.__init__ kept params as the generator", lesson_cause="SGD.__init__ kept params as the generator",
        every=("SGD.__init__",)),
    Bug("sgd-walks-generator-twice", "SGD.__init__ checks each of params in one loop, then keeps list(params): with "
        "parameters() a generator, the second walk finds nothing",
        (GENERATOR, sgd_init("for p in params:\n    if not isinstance(p, Parameter):\n"
                             "        raise TypeError('SGD optimizes Parameters only')\n"
                             "self.params = list(params)\nself.lr = lr")),
        loses=(LESSON,), phrase="the optimizer held 0 of the model's", absent="p.data in place",
        cause="the optimizer held 0 of the model's", lesson_cause="SGD.__init__ must keep every one",
        every=("SGD.__init__",)),
    Bug("sgd-init-copies", "SGD.__init__ keeps copies, [Parameter(p.data.copy()) for p in params]: the right "
        "zero_grad() and step() work on the copies",
        (sgd_init("self.params = [Parameter(p.data.copy()) for p in params]\nself.lr = lr"),),
        loses=("test_zero_grad", "test_step", LESSON), phrase="SGD.__init__ did not keep the Parameters it was given",
        absent="zero_grad() left the gradients as they were", cause="SGD.__init__ did not keep the Parameters",
        lesson_cause="SGD.__init__ must keep every one", every=("SGD.__init__",)),
    Bug("sgd-init-arrays", "SGD.__init__ keeps the Parameters' arrays, [p.data for p in params]: the right "
        "zero_grad() and step() raise on them",
        (sgd_init("self.params = [p.data for p in params]\nself.lr = lr"),),
        loses=("test_zero_grad", "test_step", LESSON), phrase="SGD.__init__", absent="raised AttributeError",
        cause="SGD.__init__ did not keep the Parameters", lesson_cause="SGD.__init__ must keep every one",
        every=("SGD.__init__",)),
    Bug("sgd-init-lr-fixed", "SGD.__init__ keeps self.lr = 0.1 whatever rate it is given (step() right)",
        (sgd_init("self.params = list(params)\nself.lr = 0.1"),),
        loses=("test_step", LESSON), phrase="SGD.__init__ kept self.lr = 0.1", absent="a Parameter listed twice",
        cause="SGD.__init__ kept self.lr = 0.1", lesson_cause="SGD.__init__ kept self.lr = 0.1",
        every=("SGD.__init__",)),
    Bug("sgd-list-of-a-list", "correct: SGD.__init__ keeps a copy, self.params = [p for p in params]",
        (GENERATOR, sgd_init("self.params = [p for p in params]\nself.lr = lr"))),

    # ------------------------------------------------------------------ no_grad
    Bug("no-grad-no-finally", "no_grad() without try/finally: an exception leaves recording off",
        (no_grad("previous = Tensor.recording\nTensor.recording = False\nyield\nTensor.recording = previous"),),
        loses=("test_no_grad",), phrase="restore Tensor.recording in a finally clause", cause='recording stayed off'),
    Bug("no-grad-restores-true", "no_grad() sets recording back to True instead of the previous value",
        (no_grad("Tensor.recording = False\ntry:\n    yield\nfinally:\n    Tensor.recording = True"),),
        loses=("test_no_grad",), phrase="restore the previous value of Tensor.recording, not True", cause='recording came back on'),
    Bug("no-grad-swallows", "no_grad() catches and swallows exceptions raised inside the block",
        (no_grad("previous = Tensor.recording\nTensor.recording = False\ntry:\n    yield\n"
                 "except Exception:\n    pass\nfinally:\n    Tensor.recording = previous"),),
        loses=("test_no_grad",), phrase="swallowed an exception", cause='swallowed an exception'),
    Bug("no-grad-never-restores", "no_grad() switches recording off and never back on",
        (no_grad("Tensor.recording = False\nyield"),),
        loses=("test_no_grad",), phrase="restore Tensor.recording on exit", cause='still record nothing'),
    # What no_grad() returned is read before any `with` block: contextlib's own error names no code of the student's.
    Bug("no-grad-no-yield", "no_grad() without its yield (the block never runs inside it)",
        (no_grad("previous = Tensor.recording\nTensor.recording = False\ntry:\n    pass\n"
                 "finally:\n    Tensor.recording = previous"),),
        loses=("test_no_grad", LESSON), phrase="no_grad() has no yield", cause="no_grad() has no yield",
        lesson_cause="no_grad() has no yield", every=("no_grad() has no yield",)),
    Bug("no-grad-undecorated", "no_grad() without @contextlib.contextmanager: a generator, not a context manager",
        (no_grad_cell("import contextlib\n\n\ndef no_grad():\n    previous = Tensor.recording\n"
                      "    Tensor.recording = False\n    try:\n        yield\n    finally:\n"
                      "        Tensor.recording = previous\n"),),
        loses=("test_no_grad", LESSON), phrase="not a context manager", cause="not a context manager",
        lesson_cause="not a context manager", every=("not a context manager",)),
    Bug("no-grad-does-nothing", "no_grad() that only yields: recording stays on",
        (no_grad("yield"),),
        loses=("test_no_grad", LESSON), phrase="Tensor.recording was still on: switch it off on entry", cause='Tensor.recording was still on', lesson_cause='still has a graph of 18 nodes'),
    Bug("no-grad-class-state-on-class", "no_grad as a class that saves the previous state on the class (nesting overwrites it)",
        (no_grad_cell("""\
class no_grad:
    def __enter__(self):
        no_grad.previous = Tensor.recording
        Tensor.recording = False

    def __exit__(self, *exc):
        Tensor.recording = no_grad.previous
"""),),
        loses=("test_no_grad",), phrase="recording is still off", cause='recording is still off'),
    Bug("no-grad-class", "correct: no_grad as a class with __enter__ and __exit__", (no_grad_cell(NO_GRAD_CLASS),)),
    Bug("no-grad-class-no-exit", "no_grad as a class whose __exit__ is misspelt __exit_",
        (no_grad_cell(NO_GRAD_CLASS.replace("def __exit__", "def __exit_")),),
        loses=("test_no_grad", LESSON), phrase="have no __exit__", cause="have no __exit__",
        lesson_cause="have no __exit__", every=("have no __exit__",)),

    # ------------------------------------------------------------------ a name not found, another cell failing
    # The cause is the cell that defines the name in the released notebook (or, for a name it does not define,
    # the code that raised), never the first cell that failed as the notebook loaded.
    Bug("linear-renamed", "Linear renamed Dense, and a scratch line at the end of the Module cell fails as it loads",
        (SCRATCH, Mutation("linear", "Linear", "", source=DENSE)),
        loses=("test_forward", LESSON), phrase="because cell linear defines no Linear", absent="because cell module",
        cause="defines no Linear", lesson_cause="defines no Linear"),
    Bug("module-renamed", "Module renamed Layer: Linear(Module) and the given ReLU and Sequential fail as they load",
        (module_cell(PARAMETERS, name="Layer"),),
        loses=("test_parameters", LESSON), phrase="because cell module defines no Module",
        absent="because cell relu_sequential", cause="defines no", lesson_cause="defines no"),
    Bug("step-name-error-and-a-failing-cell", "step-name-error, and a scratch line at the end of the Module cell "
        "fails as it loads (a NameError too, for a name no cell defines)",
        (SCRATCH, step("for p in self.params:\n    p.data -= lr * p.grad")),
        loses=("test_step", LESSON), phrase="NameError: name 'lr' is not defined", absent="because cell module",
        cause="SGD.step raised NameError", lesson_cause="SGD.step raised NameError"),

    # ------------------------------------------------------------------ red-e12 (pass 22): messages that blame other code
    # type(item) == Module for isinstance: a Linear (a subclass) is never asked for its parameters(). The lists are
    # walked, and dedup is by id: "look at every item of a list" and "compare id(p)" blame code that is right.
    Bug("parameters-type-equals-module", "parameters() tests type(item) == Module (not isinstance): a Linear or "
        "Sequential, a subclass, is never asked for its parameters()",
        (module(walk(recurse="type(item) == Module")),),
        loses=("test_parameters", LESSON), phrase="isinstance", cause="isinstance",
        absent="look at every item of a list"),
    # np.dot on two Tensors: NumPy makes each a 0-d object array and multiplies the two objects, Tensor * Tensor,
    # which broadcasts (4, 3) against (3, 5). The weight is used transposed already: no word about its storage.
    Bug("forward-np-dot", "forward() computes np.dot(x, self.weight.T) + self.bias: NumPy's dot on Tensors "
        "multiplies them elementwise (Tensor * Tensor), so it raises, or gives a wrong square result",
        (linear("return np.dot(x, self.weight.T) + self.bias"),),
        loses=("test_forward", LESSON), phrase="Tensor operations", cause="NumPy",
        absent="the weight is stored as (n_out, n_in)"),
    # A generator expression kept by the given __init__: the optimizer holds the very Parameters, once. The grade
    # knows it is a one-shot iterator (probes._held) and says so in the whole-notebook part only; the public
    # checks' own sgd() helper walks it first and then blame step() and zero_grad(), which are right.
    Bug("sgd-init-generator-expression", "SGD.__init__ keeps self.params = (p for p in params), a generator "
        "expression: its first loop uses it up (zero_grad() and step() right)",
        (sgd_init("self.params = (p for p in params)\nself.lr = lr"),),
        loses=("test_zero_grad", "test_step", LESSON), phrase="kept params as the generator",
        cause="SGD.__init__ kept params as the generator", lesson_cause="SGD.__init__ kept params as the generator",
        absent="zero_grad() left the gradients as they were", every=("SGD.__init__",)),
    # step() clears what it used, p.grad = None: the worked example without zero_grad() then fails in backward(),
    # and the whole-notebook part tells the student to fix zero_grad(), which is right (and not called there).
    Bug("step-sets-grad-none", "step() moves p.data right, then sets p.grad = None",
        (step("for p in self.params:\n    p.data -= self.lr * p.grad\n    p.grad = None"),),
        loses=("test_step", LESSON), phrase="step() changed p.grad", cause="step() changed p.grad",
        lesson_cause="step()", absent="zero_grad() must make each p.grad"),
    # The given __init__'s attributes renamed self.W and self.b, and forward() written on them: forward() ignores the
    # self.weight a check sets, and the lesson's Linear(2, 1) has no weight at all (not one "of shape ()").
    Bug("linear-attributes-renamed", "Linear's given __init__ keeps self.W and self.b, and forward() computes "
        "x @ self.W.T + self.b",
        (Mutation("linear", "Linear.__init__", "bound = 1.0 / np.sqrt(n_in)\n"
                  "self.W = Parameter(rng.uniform(-bound, bound, size=(n_out, n_in)))\n"
                  "self.b = Parameter(rng.uniform(-bound, bound, size=(n_out,)))"),
         linear("return x @ self.W.T + self.b")),
        loses=("test_forward", LESSON), phrase="self.weight", cause="self.weight",
        lesson_cause="Linear.__init__ keeps no Parameter self.weight", absent="of shape ()", every=("self.weight",)),
    # parameters-seen-on-instance with an OrderedDict (a dict subclass, which facts.collected takes): causes.stale_list
    # looks its type name up in {"list", "dict", "set"} and raises KeyError in the grader's process. The check then
    # "could not run", a grader fault written as a failed check, and the whole-notebook part (which
    # parameters-seen-on-instance keeps) loses 2.18 points to the same crash; the public check says the notebook
    # "raised KeyError: 'OrderedDict'".
    Bug("parameters-seen-ordered-dict-on-instance", "parameters() keeps its seen ids in an OrderedDict on the module "
        "itself (self._seen = getattr(self, '_seen', OrderedDict())): a second call on a module finds nothing new",
        (module_cell(PARAMETERS.replace("seen = set()", "from collections import OrderedDict\n"
                                        "        self._seen = getattr(self, '_seen', OrderedDict())\n"
                                        "        seen = self._seen").replace("seen.add(id(p))", "seen[id(p)] = True")),),
        loses=("test_parameters",), phrase="outlives the call", absent="KeyError",
        cause="self._seen is a", every=("self._seen is a",)),
    # A class no_grad whose __exit__ returns True: the advice "try/finally, no except" is the generator's; the code
    # has neither, and the probe knows no_grad is a class (probes.no_grad_made's is_class).
    Bug("no-grad-class-exit-returns-true", "no_grad as a class whose __exit__ restores recording and returns True "
        "(which swallows the exception)",
        (no_grad_cell(NO_GRAD_CLASS.replace("return False", "return True")),),
        loses=("test_no_grad",), phrase="swallowed an exception", cause="__exit__", absent="try/finally, no except"),
    # p.grad made a Tensor (PyTorch's .grad is one): the probe's _array_or_none cannot read it as floats and sends None,
    # so the grade says "set p.grad to None"; the whole-notebook part blames SGD.step (ndarray -= Tensor raises there),
    # and the public checks print their own float()/abs() TypeErrors as "raised TypeError: ...".
    Bug("zero-grad-tensor", "zero_grad() makes each grad a Tensor of zeros, p.grad = Tensor(np.zeros_like(p.data))",
        (zero_grad("for p in self.params:\n    p.grad = Tensor(np.zeros_like(p.data))"),),
        loses=("test_zero_grad", LESSON), phrase="Tensor", cause="zero_grad() set p.grad to a Tensor",
        lesson_cause="zero_grad()", absent="set p.grad to None", every=("zero_grad()",)),
    # `*` for `@`: Tensor * Tensor broadcasts (4, 3) against (3, 5) and raises from Tensor.__mul__; the weight is used
    # transposed already, and the message blames its storage (the same guess as forward-np-dot).
    Bug("forward-elementwise-star", "forward() computes x * self.weight.T + self.bias (`*`, elementwise, for `@`)",
        (linear("return x * self.weight.T + self.bias"),),
        loses=("test_forward", LESSON), phrase="elementwise", cause="elementwise",
        absent="the weight is stored as (n_out, n_in)"),
    # no_grad() that flips Tensor.recording (not) on entry and on exit: right alone, but an inner block switches it
    # back on. The grade says so ("inside nested no_grad() blocks"); the public check says "switch it off on entry",
    # which the code does.
    Bug("no-grad-toggles", "no_grad() flips Tensor.recording on entry and flips it again in finally",
        (no_grad("Tensor.recording = not Tensor.recording\ntry:\n    yield\nfinally:\n"
                 "    Tensor.recording = not Tensor.recording"),),
        loses=("test_no_grad",), phrase="nested", cause="nested"),

    # ------------------------------------------------------------------ red-e13 (pass 23): messages that blame other code
    # A recursion that asks only the classes the lesson makes, type(item) in (Linear, Sequential): a Module of another
    # class (the checks' own boxes) is never asked. The grade tells it to recurse, which it does; the public check
    # (test_keeps_two_parameters_with_equal_values, whose inner box is such a class) tells it to compare id(p), which
    # it does, while the grade's check of equal values passes.
    Bug("parameters-type-in-known-classes", "parameters() recurses only into the lesson's classes, "
        "type(item) in (Linear, Sequential), not every Module",
        (module(walk(recurse="type(item) in (Linear, Sequential)")),),
        loses=("test_parameters",), phrase="isinstance", cause="isinstance", absent="compare id(p)",
        every=("isinstance",),
        gap="the grade says 'when an attribute is a Module, add that module's parameters() (recursion)' to code that "
            "recurses, and the public check 'find the Parameters held directly and in sub-modules' (it said 'compare "
            "id(p)' to code that does before pass 24): neither names isinstance"),
    # parameters-seen-default-set moved into a recursive helper of the Module cell, _collect(module, found=None,
    # seen=set()): the set outlives the call; facts.defaults_of reads the defaults of the functions parameters() calls
    # by name too, so the messages name _collect's seen=set(), not a rule the code keeps.
    Bug("parameters-helper-default-set", "parameters() returns _collect(self), a recursive helper of the Module cell "
        "with a default argument seen=set() that keeps every id across calls",
        (module_cell("    def parameters(self):\n        return _collect(self)\n", after="""

def _collect(module, found=None, seen=set()):
    if found is None:
        found = []
    for value in vars(module).values():
        for item in (value if isinstance(value, (list, tuple)) else (value,)):
            if isinstance(item, Parameter):
                if id(item) not in seen:
                    seen.add(id(item))
                    found.append(item)
            elif isinstance(item, Module):
                _collect(item, found, seen)
    return found
"""),),
        loses=("test_parameters",), phrase="_collect has a default argument seen=set()", cause="seen=set()",
        every=("_collect",)),
    # parameters-seen-ordered-dict-on-instance with a collections.deque: facts.collected reads any mutable container
    # (not only a list, dict or set), so both sides name self._seen, not "a default argument such as found=[]".
    Bug("parameters-seen-deque-on-instance", "parameters() keeps its seen ids in a deque on the module itself "
        "(self._seen = getattr(self, '_seen', deque())): a second call on a module finds nothing new",
        (module_cell(PARAMETERS.replace("seen = set()", "from collections import deque\n"
                                        "        self._seen = getattr(self, '_seen', deque())\n"
                                        "        seen = self._seen").replace("seen.add(id(p))", "seen.append(id(p))")),),
        loses=("test_parameters",), phrase="self._seen is a", cause="self._seen is a", every=("self._seen",),
        absent="a default argument such as found=[]"),
    # np.matmul on Tensors (np.dot's neighbour): NumPy refuses the Tensor (__array_ufunc__ = None); after NumPy's own
    # TypeError, both sides add that NumPy's ufuncs (np.matmul ...) refuse it and to use its own operations (@, +).
    Bug("forward-np-matmul", "forward() computes np.matmul(x, self.weight.T) + self.bias: NumPy's matmul refuses Tensors",
        (linear("return np.matmul(x, self.weight.T) + self.bias"),),
        loses=("test_forward", LESSON), phrase="use its own operations (@, +)", cause="np.matmul",
        lesson_cause="np.matmul"),
    # step() that moves right but scales the gradient in place on the way (p.grad *= self.lr; p.data -= p.grad): the
    # step part says "step() changed p.grad"; the whole-notebook part (grade and public) gives only the numbers.
    Bug("step-scales-grad-in-place", "step() scales each gradient in place, p.grad *= self.lr, then subtracts it: "
        "p.data moves right but p.grad is left lr times smaller",
        (step("for p in self.params:\n    p.grad *= self.lr\n    p.data -= p.grad"),),
        loses=("test_step", LESSON), phrase="step() changed p.grad", cause="step() changed p.grad",
        lesson_cause="step() changed p.grad", every=("step() changed p.grad",)),
    # A syntax error in cell module (a colon left out): the grade names cell module everywhere and keeps the forward
    # part (its Module is lent), while the public checks say "because cell linear: raised NameError: name 'Module' is
    # not defined" for Linear (a given line of a cell the student did not break) and fail the forward checks too.
    Bug("module-syntax-error", "parameters() with a colon left out (for value in vars(self).values()): cell module has "
        "a syntax error, so no Module exists and cell linear's class Linear(Module) fails too",
        (module_cell(PARAMETERS.replace("for value in vars(self).values():", "for value in vars(self).values()")),),
        loses=("test_parameters", LESSON), phrase="cell module: a syntax error on line 7",
        cause="cell module: a syntax error on line 7", lesson_cause="cell module: a syntax error on line 7",
        absent="because cell linear", every=("cell module: a syntax error",)),
    # sys.exit(0) left at the end of Exercise 2's cell, after every answer: Jupyter's kernel catches SystemExit and
    # nbgrader's autograde runs the next cells, so it stops only that cell: full marks, as every public check passes.
    Bug("exercise-sys-exit", "Exercise 2's four answers right, then sys.exit(0) at the end of its cell",
        (exercise_cell("exercise_second_step", "import sys\n\nz2_with_zero_grad = 0.908\n"
                       "loss2_with_zero_grad = 0.008464\nz2_without_zero_grad = 3.668\n"
                       "loss2_without_zero_grad = 7.118\nsys.exit(0)\n"),),),
    # sys.exit(0) between Exercise 2's answers: the cell stops there (the cells below still run), so the answers after
    # it are missing, and both sides name the cell and its line. (quit() and exit() do not stop a cell in Jupyter's
    # kernel, ipykernel 7.4: measured; the grade names them as themselves, test_messages.py.)
    Bug("exercise-sys-exit-early", "Exercise 2's first two answers right, then sys.exit(0), then the other two",
        (exercise_cell("exercise_second_step", "import sys\nz2_with_zero_grad = 0.908\nloss2_with_zero_grad = 0.008464\n"
                       "sys.exit(0)\nz2_without_zero_grad = 3.668\nloss2_without_zero_grad = 7.118\n"),),
        loses=("test_exercise_second_step",),
        phrase="cell exercise_second_step: called sys.exit(0) (line 4), which stops the cell there",
        cause="called sys.exit(0) (line 4)", every=("cell exercise_second_step: called sys.exit(0) (line 4)",)),
    # SGD.__init__ keeping a set (PyTorch refuses one: its order changes between runs): it holds every Parameter, the
    # very objects, and zero_grad() and step() do the same in any order; one check of step's, grade and public, says
    # the set loses the order (causes.init_order), and nothing says "not copies or others".
    Bug("sgd-init-set", "SGD.__init__ keeps self.params = set(params): every Parameter, the very objects, in the set's "
        "order (which changes between runs)",
        (sgd_init("self.params = set(params)\nself.lr = lr"),),
        loses=("test_step",), phrase="a set loses the order", cause="SGD.__init__ kept the Parameters in a set",
        absent="not copies or others", every=("SGD.__init__ kept the Parameters in a set",)),
    # zero_grad-tensor's neighbour, p.grad = Parameter(np.zeros_like(p.data)): the shape checks, grade and public,
    # name the type first (causes.grad_kind), never "got shapes [[3, 2], ...] for parameters of shapes [[3, 2], ...]".
    Bug("zero-grad-parameter", "zero_grad() makes each grad a Parameter of zeros, p.grad = Parameter(np.zeros_like(p.data))",
        (zero_grad("for p in self.params:\n    p.grad = Parameter(np.zeros_like(p.data))"),),
        loses=("test_zero_grad", LESSON), phrase="set p.grad to a Tensor", cause="zero_grad() set p.grad to a Tensor",
        lesson_cause="zero_grad() set p.grad to a Tensor", every=("zero_grad()",),
        absent="got shapes [[3, 2], [2], [1, 5]] for parameters of shapes [[3, 2], [2], [1, 5]]"),
    # An IndentationError (the loop body at 16 spaces, the next line at 12): the grade says "cell sgd: a syntax error on
    # line 18"; the public checks say "cell sgd: file '<tokenize>' has a syntax error on line 18", a file name that is
    # Python's tokenizer's, not the notebook's (red-e12 E12-9's neighbour).
    Bug("step-unindent-mismatch", "step()'s loop body indented 16 spaces and the next line 12: cell sgd has an "
        "IndentationError (unindent does not match any outer indentation level), so no SGD exists",
        (Mutation("sgd", "SGD.step", "", source=SGD_UNINDENT),),
        loses=("test_zero_grad", "test_step", LESSON), phrase="cell sgd: a syntax error on line 18",
        cause="cell sgd: a syntax error on line 18", lesson_cause="cell sgd: a syntax error on line 18",
        absent="<tokenize>", every=("cell sgd: a syntax error on line 18",)),
    # Linear's given __init__ also keeps its Parameters in a list, self.params = [weight, bias]: a check (and the
    # lesson's shared weight, l2.weight = l1.weight) that sets layer.weight leaves the old Parameter in self.params, so
    # parameters() rightly finds four. The message blames parameters() ("see its own checks", which all pass).
    Bug("linear-init-keeps-a-list", "Linear's given __init__ keeps self.params = [weight, bias] and sets self.weight, "
        "self.bias from it: a weight set later leaves the old one in the list",
        (Mutation("linear", "Linear.__init__", "bound = 1.0 / np.sqrt(n_in)\n"
                  "self.params = [Parameter(rng.uniform(-bound, bound, size=(n_out, n_in))),\n"
                  "               Parameter(rng.uniform(-bound, bound, size=(n_out,)))]\n"
                  "self.weight, self.bias = self.params"),),
        loses=(LESSON,), phrase="self.params", cause="Linear.__init__", lesson_cause="Linear.__init__",
        absent="see its own checks", every=("Linear.__init__",),
        absent_gap="the grade's lesson part sends the student to parameters()' own checks, which pass",
        gap="the lesson part says 'parameters() gave SGD(...) 4 entries ... (see its own checks)', whose checks all "
            "pass, never the list Linear.__init__ keeps"),
    # parameters-cached's neighbour: the found list kept on the module itself (self._params), a copy returned on each
    # call, so a Parameter replaced since is still listed (a bare `same list` test cannot see it, the copy being new):
    # the afresh checks replace a weight between calls, and facts.kept_outside names a list of Parameters on the
    # module that parameters() names.
    Bug("parameters-kept-on-instance-copy", "parameters() collects into self._params, a list kept on the module across "
        "calls (deduplicated by identity), and returns a copy: a Parameter replaced since is still listed",
        (module("if not hasattr(self, '_params'):\n    self._params = []\n"
                "for value in vars(self).values():\n"
                "    for item in (value if isinstance(value, (list, tuple)) else (value,)):\n"
                "        subs = [item] if isinstance(item, Parameter) else "
                "(item.parameters() if isinstance(item, Module) else [])\n"
                "        for p in subs:\n"
                "            if not any(p is q for q in self._params):\n"
                "                self._params.append(p)\n"
                "return list(self._params)"),),
        loses=("test_parameters",), phrase="self._params is a list kept on the module itself",
        cause="self._params is a list kept on the module itself", every=("self._params",)),

    # ------------------------------------------------------------------ red-f15 (pass 24): new single faults
    # Linear's given __init__ with the bias drawn as a row, size=(1, n_out): the same numbers in the same order, and
    # x @ W.T + b broadcasts to the same outputs, so the grade gives 18/18, and so do the public checks now that
    # causes.given_init compares the numbers in order, not their shape (red-f15 pass 24: two public lesson checks said
    # "Linear.__init__ draws other numbers than the given one for the same seed").
    Bug("linear-init-bias-row", "correct: Linear's given __init__ draws the bias as a row, size=(1, n_out): the same "
        "numbers, another shape, forward() right",
        (Mutation("linear", "Linear.__init__", "bound = 1.0 / np.sqrt(n_in)\n"
                  "self.weight = Parameter(rng.uniform(-bound, bound, size=(n_out, n_in)))\n"
                  "self.bias = Parameter(rng.uniform(-bound, bound, size=(1, n_out)))"),),
        absent="draws other numbers"),
    # The bias as a column, size=(n_out, 1): x @ W.T + b cannot broadcast (batch, n_out) with (n_out, 1) once
    # batch != n_out. The grade named "Linear.forward raised ValueError: operands could not be broadcast together"
    # (forward() is the reference's), the public checks "Linear.__init__ draws other numbers" (it draws the same);
    # both now name the bias's shape from facts.layers_facts (causes.layers_cause).
    Bug("linear-init-bias-column", "Linear's given __init__ draws the bias as a column, size=(n_out, 1): forward() "
        "right, but its x @ W.T + b cannot broadcast",
        (Mutation("linear", "Linear.__init__", "bound = 1.0 / np.sqrt(n_in)\n"
                  "self.weight = Parameter(rng.uniform(-bound, bound, size=(n_out, n_in)))\n"
                  "self.bias = Parameter(rng.uniform(-bound, bound, size=(n_out, 1)))"),),
        loses=(LESSON,), phrase="Linear.__init__", cause="Linear.__init__", lesson_cause="Linear.__init__",
        every=("Linear.__init__",), absent="draws other numbers"),
    # step-first-only's mirror: the subtraction written after the loop (one indent short), so only the last
    # Parameter moves. In the lesson's shared-weight check the last one is second.bias, and both sides say "step()
    # left the shared weight where it was ...: change p.data in place ... (p = p - lr * p.grad only rebinds a local
    # name)": the code does change p.data in place and rebinds nothing.
    Bug("step-last-only", "step() computes each update in the loop but subtracts after it (one indent short): "
        "only the last parameter moves",
        (step("for p in self.params:\n    update = self.lr * p.grad\np.data -= update"),),
        loses=("test_step", LESSON), phrase="moved only some of the parameters",
        cause="moved only some of the parameters", lesson_cause="moved only some of the parameters",
        absent="only rebinds a local name", every=("moved only some of the parameters",)),
    # `return found` one level too deep, inside the loop over the attributes: a Linear gives [weight], a module
    # without attributes (ReLU) None. The public fresh-list check says "a list that outlives the call (a default
    # argument such as found=[] or a class attribute)", and the public equal-values check "compare id(p) ... not when
    # its values are equal": the code has neither a kept list nor a comparison of values.
    Bug("parameters-return-in-loop", "parameters() with `return found` inside the loop over the attributes: it "
        "returns after the first attribute (None for a module without any)",
        (module(walk(ret="").replace("                found.append(p)",
                                     "                found.append(p)\n    return found")),),
        loses=("test_parameters", LESSON), phrase="parameters() found", cause="parameters() found",
        lesson_cause="Module.parameters", absent="outlives the call", every=("parameters()", "Module.parameters")),
    # `for value in vars(self):` (the names, .values() left out): nothing is ever found. The grade's and the public
    # equal-values checks say "skip a Parameter only when it is the very same object (compare id(p), or use `is`), not
    # when its values are equal": the code compares ids and drops nothing by value (red-e13 E13-3's message, reached
    # by another bug, and here by the grade as well).
    Bug("parameters-iterates-names", "parameters() walks `for value in vars(self):`, the attribute names, not "
        "their values: it finds nothing",
        (module(walk(values="vars(self)")),),
        loses=("test_parameters", LESSON), phrase="parameters() found", cause="parameters() found",
        lesson_cause="parameters() gave 0", absent="compare id(p)"),
    # A sub-module's Parameters read one level deep, from vars(item), not from item.parameters(): a Sequential of
    # Linears works, a module two levels down is missed. The grade's equal-values check (found 1 of 5) says "compare
    # id(p) ... not when its values are equal" to code that compares ids.
    Bug("parameters-one-level", "parameters() takes a sub-module's own Parameter attributes (vars(item)) instead of "
        "its parameters(): nothing deeper than one level is found",
        (module(walk().replace("candidates = item.parameters()",
                               "candidates = [v for v in vars(item).values() if isinstance(v, Parameter)]")),),
        loses=("test_parameters",), phrase="recursion", cause="recursion", absent="compare id(p)"),
    # no_grad() that switches recording off, then saves it (two lines swapped): it saves False and restores False.
    # Both sides say "restore Tensor.recording in a finally clause around the yield": the code has that finally
    # clause; what is wrong is the value it saved.
    Bug("no-grad-saves-after", "no_grad() sets Tensor.recording = False and then saves previous = Tensor.recording "
        "(two lines swapped): it restores False",
        (no_grad("Tensor.recording = False\nprevious = Tensor.recording\ntry:\n    yield\nfinally:\n"
                 "    Tensor.recording = previous"),),
        loses=("test_no_grad",), phrase="still record nothing", cause="still record nothing",
        absent="in a finally clause"),
    # `Tensor.recording == False` (a comparison, not an assignment): recording never goes off. The grade's nested
    # exception check says "recording came back on inside the outer block: restore the previous value in a finally
    # clause": it never went off, and the code restores the previous value in a finally clause.
    Bug("no-grad-compares", "no_grad() writes Tensor.recording == False (a comparison) for the assignment: "
        "recording stays on",
        (no_grad("previous = Tensor.recording\nTensor.recording == False\ntry:\n    yield\nfinally:\n"
                 "    Tensor.recording = previous"),),
        loses=("test_no_grad", LESSON), phrase="Tensor.recording was still on", cause="Tensor.recording was still on",
        lesson_cause="still has a graph of 18 nodes", absent="in a finally clause"),
    # zero_grad() shapes every grad like the first Parameter's, np.zeros_like(self.params[0].data): backward()'s
    # check takes a grad that broadcasts wider than p.data (a bias (1,) with a grad (1, 2)), so the lesson's worked
    # example fails later, in step(): the whole-notebook part, grade and public, says "SGD.step raised ValueError:
    # non-broadcastable output operand", naming the reference's step() for zero_grad()'s arrays.
    Bug("zero-grad-shape-of-first", "zero_grad() makes every grad np.zeros_like(self.params[0].data), the first "
        "Parameter's shape",
        (zero_grad("for p in self.params:\n    p.grad = np.zeros_like(self.params[0].data)"),),
        loses=("test_zero_grad", LESSON), phrase="worked example: zero_grad()", cause="shaped like p.data",
        lesson_cause="zero_grad()", every=("zero_grad()",), absent="SGD.step raised",
        gap="the worked example's zero_grad() is not measured before step() raises on its grads (grade and public)",
        absent_gap="the lesson part says 'SGD.step raised ValueError: non-broadcastable output operand'"),
    # no_grad()'s previous value read once, at the top of its cell (previous = Tensor.recording, True), not on entry:
    # nested blocks come back on. The nested-exception check says "restore the previous value in a finally clause",
    # which the code does (what it restores is read at the wrong time).
    Bug("no-grad-previous-at-cell-top", "no_grad() restores `previous`, read once at the top of its cell, not on "
        "entry: an inner block switches recording back on",
        (Mutation("no_grad", "no_grad", "", source="""\
import contextlib

previous = Tensor.recording


@contextlib.contextmanager
def no_grad():
    Tensor.recording = False
    try:
        yield
    finally:
        Tensor.recording = previous
"""),),
        loses=("test_no_grad",), phrase="not True", cause="not True", absent="in a finally clause"),
    # The blank Module stub (raise NotImplementedError) pasted above class Linear in cell linear, cell module solved:
    # the grade keeps the parameters part (it runs cell module's Module) and names the copy in the lesson part; the
    # public checks fail every parameters check with "Module.parameters is not written yet: replace `raise
    # NotImplementedError()` with your code", naming neither cell linear nor its copy, and lose a part the grade keeps.
    Bug("linear-cell-pastes-module-stub", "the blank Module stub (parameters() raises NotImplementedError) pasted "
        "above class Linear in cell linear; cell module solved",
        (Mutation("linear", "Linear.forward", "", source=MODULE_STUB + DENSE.replace("class Dense", "class Linear")),),
        loses=(LESSON,), phrase="cell linear defines again", cause="cell linear defines again",
        lesson_cause="cell linear defines again", every=("cell linear",)),
    # linear-cell-pastes-module-stub's neighbours: the stub pasted above SGD in cell sgd, and a solved copy of the
    # Module cell pasted above no_grad() in cell no_grad. Either copy is a new class Module, which the reference
    # parameters() (isinstance(item, Module), a global name) reads from then on, so a Linear made by cell linear is no
    # Module of it. The grade keeps the parameters part and names the copy in the lesson part; the public parameters
    # checks fail ("Module.parameters is not written yet", or, for the solved copy, "ask every Module in it for its
    # parameters()", which the code does) and name neither the cell nor the copy.
    Bug("sgd-cell-pastes-module-stub", "the blank Module stub pasted above class SGD in cell sgd; cell module solved",
        (Mutation("sgd", "SGD.step", "", source=sgd_cell(MODULE_STUB)),),
        loses=(LESSON,), phrase="cell sgd defines again", cause="cell sgd defines again",
        lesson_cause="cell sgd defines again", every=("cell sgd",)),
    Bug("no-grad-cell-pastes-module", "a copy of the solved Module cell pasted above no_grad() in cell no_grad",
        (Mutation("no_grad", "no_grad", "", source="import contextlib\n\n\n" + module_cell(PARAMETERS).source + """

@contextlib.contextmanager
def no_grad():
    previous = Tensor.recording
    Tensor.recording = False
    try:
        yield
    finally:
        Tensor.recording = previous
"""),),
        loses=(LESSON,), phrase="cell no_grad defines again", cause="cell no_grad defines again",
        lesson_cause="cell no_grad defines again", every=("cell no_grad",)),
    # step() subtracting from the gradient instead of the values, p.grad -= self.lr * p.grad: nothing moves and the
    # grads shrink. One check says "step() changed p.grad" (true); every other, grade and public, says "change p.data in
    # place, p.data -= self.lr * p.grad (p = p - lr * p.grad only rebinds a local name)": the code rebinds nothing.
    Bug("step-moves-the-grad", "step() writes p.grad -= self.lr * p.grad (grad for data): the Parameters stay, "
        "their gradients shrink",
        (step("for p in self.params:\n    p.grad -= self.lr * p.grad"),),
        loses=("test_step", LESSON), phrase="step() changed p.grad", cause="left the Parameters where they were",
        lesson_cause="left the Parameters where they were", absent="only rebinds a local name"),
    # A scratch line left at the end of cell sgd, Tensor.recording = False (trying out what no_grad() will do): the
    # class is right. Every check, hidden (each probe) and public (notebook_checks.run_check), starts with recording
    # on, as the engine starts, so the line costs no part of a method it does not touch (red-f15 pass 24: it cost
    # three parts, named zero_grad(), step() and Linear.forward faults, while every public check passed).
    Bug("sgd-cell-leaves-recording-off", "correct: a scratch line Tensor.recording = False left at the end of cell "
        "sgd, every method right",
        (Mutation("sgd", "SGD.step", "", source=sgd_cell(below="\n\nTensor.recording = False\n")),),
        absent="calling zero_grad() twice in a row broke the gradients"),
    # Its neighbour in an exercise: Exercise 1's cell starts with Tensor.recording = False (the count is right): it
    # was told "Linear.forward must compute with Tensor operations ... (not on their .data)".
    Bug("exercise-count-leaves-recording-off", "correct: Exercise 1's cell sets Tensor.recording = False above a "
        "right count",
        (exercise_cell("exercise_count", "Tensor.recording = False\ncount_64_32_10 = 32 * (64 + 1) + 10 * (32 + 1)\n"),),
        absent="Linear.forward must compute"),
    # W.T worked out once, in Linear's __init__ (self.weight_t = self.weight.T, a Tensor of its own copied data), and
    # forward() computing x @ self.weight_t + self.bias: a weight set or stepped later is never seen. The forward
    # checks say "add self.bias ... to x @ W.T" (it does) and "after backward no gradient reached self.weight: compute
    # the output with Tensor operations ... (not on their .data)" (it uses no .data); none names the copy kept in
    # __init__.
    Bug("linear-caches-weight-t", "Linear's __init__ keeps self.weight_t = self.weight.T and forward() computes "
        "x @ self.weight_t + self.bias: a weight changed later is never used",
        (Mutation("linear", "Linear.__init__", "bound = 1.0 / np.sqrt(n_in)\n"
                  "self.weight = Parameter(rng.uniform(-bound, bound, size=(n_out, n_in)))\n"
                  "self.bias = Parameter(rng.uniform(-bound, bound, size=(n_out,)))\n"
                  "self.weight_t = self.weight.T"),
         linear("return x @ self.weight_t + self.bias")),
        loses=("test_forward", LESSON), phrase="Linear.forward returned wrong numbers",
        cause="Linear.forward returned wrong numbers", lesson_cause="Linear(2, 1) must compute",
        absent="not on their .data", absent_gap="no check names the W.T kept in __init__: the gradient check says "
                                                "'not on their .data' to code that uses no .data"),
]
