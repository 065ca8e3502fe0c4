"""Hidden tests for Linear.forward (grade cell test_forward)."""
import causes
import numpy as np
import probes
import pytest
from reported import close, per_parameter

from autograder.sandbox.messages import as_notebooks

STUDENT_CELLS = ("linear",)

CASES = [
    dict(n_in=3, n_out=5, batch=4, seed=0),
    dict(n_in=5, n_out=2, batch=7, seed=1),
    dict(n_in=4, n_out=4, batch=3, seed=2),
    dict(n_in=1, n_out=3, batch=1, seed=3),
    dict(n_in=6, n_out=1, batch=5, seed=4),
]
IDS = [f"{c['n_in']}_to_{c['n_out']}_batch_{c['batch']}" for c in CASES]


def inputs(n_in, n_out, batch, seed, weight=None, bias=None, x=None, zero_weight=False):
    """The case's weight, bias, input and upstream gradient, made here from its seed (never by the student's process)."""
    rng = np.random.default_rng(seed)
    w = np.asarray(weight, dtype=float) if weight is not None else rng.normal(size=(n_out, n_in))
    b = np.asarray(bias, dtype=float) if bias is not None else rng.normal(size=n_out)
    x = np.asarray(x, dtype=float) if x is not None else rng.normal(size=(batch, n_in))
    if zero_weight:
        w = np.zeros_like(w)
    return {"weight": w, "bias": b, "x": x, "upstream": rng.normal(size=(x.shape[0], n_out))}


def forward(runner, **case):
    given = inputs(**case)
    result = runner.run(probes.linear_forward, **{k: v.tolist() for k, v in given.items()})
    # the two lines come from the notebook's process, whose code may rebind what wrote them: the loader's shapes only
    where, said = (as_notebooks(result[key]) if result["error"] is not None else "" for key in ("error", "said"))
    assert result["error"] is None, causes.forward_raised(where, said, case["n_in"], case["n_out"],
                                                          result.get("elementwise") is True)
    assert result["is_tensor"], ("Linear.forward must return a Tensor built with Tensor operations on x, "
                                 "self.weight and self.bias")
    return {**result, "given": given}  # a new dict: the runner's answer is shared by every check


def wrong(got, message):
    """A wrong output's message, or first what Linear.__init__ keeps when it is no Parameter weight and bias."""
    return causes.forward_reads(got, message) if "kinds" in got else message


def arrays(result):
    return [result["given"][k] for k in ("x", "weight", "bias")]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_output_is_a_tensor_of_shape_batch_by_n_out(student, reference, case):
    got = forward(student, **case)
    assert got["shape"] == [case["batch"], case["n_out"]], (
        f"Linear({case['n_in']}, {case['n_out']}).forward on a ({case['batch']}, {case['n_in']}) input returned "
        f"shape {tuple(got['shape'])}, expected ({case['batch']}, {case['n_out']}): one row per example, one "
        "column per output")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_output_is_x_times_weight_transposed_plus_bias(student, reference, case):
    got, want = forward(student, **case), forward(reference, **case)
    x, w, b = arrays(want)
    out = np.asarray(got["data"], dtype=float)
    assert np.allclose(np.asarray(want["data"]), x @ w.T + b)
    assert out.shape == (case["batch"], case["n_out"]), (f"Linear.forward returned shape {out.shape}, expected "
                                                          f"({case['batch']}, {case['n_out']})")
    assert not np.allclose(out, x @ w.T), "Linear.forward left out the bias: the layer computes x @ W.T + b"
    assert not (w.shape[0] == w.shape[1] and np.allclose(out, x @ w + b)), (
        "Linear.forward computed x @ W + b: the weight is stored as (n_out, n_in), so the layer computes "
        "x @ W.T + b")
    assert np.allclose(out, want["data"]), wrong(got, "Linear.forward returned wrong numbers: a layer computes "
                                                 "x @ W.T + b with W of shape (n_out, n_in)")


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_square_layer_multiplies_by_the_transposed_weight(student, reference, seed):
    case = dict(n_in=4, n_out=4, batch=3, seed=seed)
    got, want = forward(student, **case), forward(reference, **case)
    x, w, b = arrays(want)
    assert not close(got["data"], x @ w + b), (
        "Linear.forward computed x @ W + b: with n_in == n_out the shapes fit, but the weight is stored as "
        "(n_out, n_in), so the layer computes x @ W.T + b")
    assert close(got["data"], want["data"]), wrong(got, "Linear.forward gave wrong numbers on a square layer")


@pytest.mark.parametrize("case", CASES[:3], ids=IDS[:3])
def test_bias_is_added_to_every_row(student, reference, case):
    got = forward(student, **case, zero_weight=True)
    bias = got["given"]["bias"]
    assert close(got["data"], np.tile(bias, (case["batch"], 1))), wrong(got,
        "with a zero weight every row of the output must equal the bias: add self.bias (shape (n_out,)) to "
        "x @ W.T, it broadcasts over the rows")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_reach_weight_bias_and_input(student, reference, case):
    got, want = forward(student, **case), forward(reference, **case)
    assert got["shape"] == want["shape"], (f"Linear.forward returned shape {tuple(got['shape'])}, expected "
                                           f"{tuple(want['shape'])}, so no gradient could be checked")
    for key, name in [("weight_grad", "self.weight"), ("bias_grad", "self.bias"), ("x_grad", "the input x")]:
        grad = np.asarray(got[key], dtype=float)
        assert np.any(grad != 0), (f"after backward no gradient reached {name}: compute the output with Tensor "
                                   "operations on x, self.weight and self.bias (not on their .data)")
        assert grad.shape == np.shape(want[key]) and np.allclose(grad, want[key]), (
            f"after backward the gradient of {name} is wrong: the output must be x @ self.weight.T + self.bias")


def test_forward_changes_neither_weight_nor_bias_nor_input(student, reference):
    got = forward(student, **CASES[0])
    before = [got["given"][k] for k in ("weight", "bias", "x")]
    after = per_parameter(got["after"], len(before))
    assert all(np.shape(a) == np.shape(b) and np.array_equal(a, b) for a, b in zip(after, before)), (
        "Linear.forward changed self.weight, self.bias or x: it only computes an output")


def test_lesson_layer_gives_minus_1_3(student, reference):
    case = dict(n_in=2, n_out=1, batch=1, seed=0, weight=[[0.5, -1.0]], bias=[0.2], x=[[1.0, 2.0]])
    got = forward(student, **case)
    assert close(got["data"], [[-1.3]]), wrong(got, f"Linear(2, 1) with weight (0.5, -1), bias 0.2 on "
                                                     f"x = (1, 2) gave {got['data']}, expected [[-1.3]]")
