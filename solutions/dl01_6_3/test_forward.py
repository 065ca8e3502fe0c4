"""Linear.forward() (`pytest -m forward`): x of shape (batch, n_in) gives x @ W.T + b of shape (batch, n_out),
with the weight W stored as (n_out, n_in) and the bias b added to every row, computed with Tensor operations
so that backward() reaches the weight, the bias and the input."""
import causes
import explain
import facts
import numpy as np


def linear(nb, weight, bias):
    """A Linear layer whose weight and bias hold the given numbers."""
    weight = np.asarray(weight, dtype=float)
    layer = nb.Linear(weight.shape[1], weight.shape[0], np.random.default_rng(0))
    layer.weight, layer.bias = nb.Parameter(weight), nb.Parameter(np.asarray(bias, dtype=float))
    return layer


def forward(nb, layer, x):
    n_out, n_in = layer.weight.shape
    try:
        out = layer.forward(x)
    except ValueError as error:  # named where it was raised: forward() may call a helper of another cell
        elementwise = explain.called_by_notebook(error) is getattr(nb.Tensor.__mul__, "__code__", None)
        raise AssertionError(causes.forward_raised(explain.describe_exception(error, quote=False),
                                                   explain.describe_exception(error), n_in, n_out, elementwise)) from None
    assert isinstance(out, nb.Tensor), (f"Linear.forward returned {causes.a(type(out).__name__)}: build the result "
                                        "from x, self.weight and self.bias with Tensor operations")
    return out


def wrong(nb, message):
    """A wrong output's message, or first what Linear.__init__ keeps when it is no Parameter weight and bias."""
    return causes.forward_reads(facts.init_facts(nb.Linear(2, 1, np.random.default_rng(0))), message)


def test_returns_a_tensor_of_shape_batch_by_n_out(nb):
    out = forward(nb, linear(nb, np.ones((2, 3)), np.zeros(2)), nb.Tensor(np.ones((4, 3))))
    assert out.shape == (4, 2), (f"Linear(3, 2).forward on a (4, 3) input returned shape {out.shape}, expected "
                                 "(4, 2): one row per example, one column per output")


def test_computes_x_times_weight_transposed_plus_bias(nb):
    rng = np.random.default_rng(5)
    w, b, x = rng.normal(size=(2, 3)), rng.normal(size=2), rng.normal(size=(4, 3))
    out = forward(nb, linear(nb, w, b), nb.Tensor(x))
    assert out.shape == (4, 2), f"Linear(3, 2).forward on a (4, 3) input returned shape {out.shape}, expected (4, 2)"
    assert not np.allclose(out.data, x @ w.T), "Linear.forward left out the bias (it gave x @ W.T): add self.bias"
    assert np.allclose(out.data, x @ w.T + b), wrong(nb, "Linear.forward returned wrong numbers: a layer computes "
                                                     "x @ W.T + b, with W of shape (n_out, n_in)")


def test_adds_the_bias_to_every_row(nb):
    bias = np.array([1.0, -2.0])
    out = forward(nb, linear(nb, np.zeros((2, 3)), bias), nb.Tensor(np.ones((3, 3))))
    assert out.shape == (3, 2) and np.allclose(out.data, bias), wrong(nb,
        f"with a zero weight every row of the output should equal the bias {bias.tolist()}, got "
        f"{np.round(out.data, 3).tolist()}: add self.bias to x @ W.T")


def test_uses_the_transposed_weight_on_a_square_layer(nb):
    w, b, x = np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([0.5, -0.5]), np.array([[1.0, 3.0]])
    out = forward(nb, linear(nb, w, b), nb.Tensor(x))
    assert not np.allclose(out.data, x @ w + b), (
        "Linear.forward computed x @ W + b: the weight is stored as (n_out, n_in), so the layer computes "
        "x @ W.T + b (with n_in == n_out the shapes fit either way, only the numbers show it)")
    assert np.allclose(out.data, x @ w.T + b), wrong(nb, f"Linear.forward gave {np.round(out.data, 3).tolist()} on "
                                                     f"a square layer, expected {(x @ w.T + b).tolist()}")


def test_lets_gradients_reach_weight_bias_and_input(nb):
    rng = np.random.default_rng(6)
    w, b, x_data, upstream = (rng.normal(size=s) for s in [(2, 3), 2, (4, 3), (4, 2)])
    layer, x = linear(nb, w, b), nb.Tensor(x_data)
    (forward(nb, layer, x) * nb.Tensor(upstream)).sum().backward()
    for name, got, want in [("self.weight", layer.weight.grad, upstream.T @ x_data),
                            ("self.bias", layer.bias.grad, upstream.sum(axis=0)),
                            ("the input x", x.grad, upstream @ w)]:
        assert np.any(got != 0), (f"after backward no gradient reached {name}: compute the output with Tensor "
                                  "operations on x, self.weight and self.bias (not on their .data)")
        assert np.shape(got) == want.shape and np.allclose(got, want), (
            f"after backward the gradient of {name} is wrong: the output must be x @ self.weight.T + self.bias")


# Every check here first names a class a later cell defined again (the numbers come from that copy).
for _name, _check in list(globals().items()):
    if _name.startswith("test_"):
        globals()[_name] = facts.noting_copies(_check)
