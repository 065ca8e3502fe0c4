"""A small reverse-mode autograd engine on NumPy arrays.

Every operation on a ``Tensor`` returns a new ``Tensor`` and, while recording
is on, remembers the tensors it was computed from (``parents``) together with a
closure (``backward_fn``) that pushes the output's gradient back to them.
``backward()`` visits that graph in reverse topological order and runs the
closures.

Two conventions matter for the lesson built on top of this file:

* Closures *add* into ``.grad`` (``+=``). A tensor used twice in one forward
  pass must collect both contributions, and adding is the only way to do that
  when the contributions arrive one closure at a time.
* ``backward()`` clears the gradients of interior nodes (results of
  operations) but never of leaves (tensors with no parents, e.g. weights).
  So a leaf's gradient keeps growing across calls until someone zeroes it,
  which is what an optimizer's ``zero_grad()`` is for.

``Tensor.recording`` is a class-wide switch: when it is False, operations still
compute their values but attach no parents and no closure, so no graph is kept.
"""

from __future__ import annotations

from typing import Callable, Optional, Union

import numpy as np

__all__ = ["Tensor", "cross_entropy", "unbroadcast"]

ArrayLike = Union["Tensor", np.ndarray, float, int, list, tuple]


class Tensor:
    """An array that can remember how it was computed.

    Attributes:
        data: the values, always a float ndarray owned by this tensor.
        grad: d(output)/d(this tensor) after ``backward()``; same shape as data.
        parents: the tensors this one was computed from (empty for a leaf).
        backward_fn: closure that adds this tensor's grad into its parents'
            grads, or None for a leaf.
    """

    # Class attribute, not per instance: one switch turns recording off for
    # every operation at once (that is how a no_grad() context works).
    recording: bool = True

    # Make NumPy hand `ndarray <op> Tensor` back to our reflected operators
    # instead of trying to broadcast the Tensor as an object element.
    __array_ufunc__ = None

    def __init__(self, data: ArrayLike) -> None:
        """Wrap ``data`` as a float array with a zero gradient and no history."""
        # Copy: an optimizer updates .data in place, and that must never
        # silently change an array the caller still holds.
        self.data: np.ndarray = np.array(data, dtype=float)
        self.grad: np.ndarray = np.zeros_like(self.data)
        self.parents: tuple[Tensor, ...] = ()
        self.backward_fn: Optional[Callable[[], None]] = None

    def record(self, parents: tuple[Tensor, ...], backward_fn: Callable[[], None]) -> Tensor:
        """Attach the graph edge (parents and closure) if recording; return self.

        Every operation goes through here, so this is the single place where
        the recording switch has to be honoured.
        """
        if Tensor.recording:
            self.parents, self.backward_fn = parents, backward_fn
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the underlying array."""
        return self.data.shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.data!r})"

    # ---- elementwise arithmetic (with broadcasting) -------------------------

    def __add__(self, other: ArrayLike) -> Tensor:
        """Elementwise sum; gradients are summed back over broadcast axes."""
        other = lift(other)
        out = Tensor(self.data + other.data)

        def backward_fn() -> None:
            self.grad += unbroadcast(out.grad, self.shape)
            other.grad += unbroadcast(out.grad, other.shape)

        return out.record((self, other), backward_fn)

    def __sub__(self, other: ArrayLike) -> Tensor:
        """Elementwise difference."""
        other = lift(other)
        out = Tensor(self.data - other.data)

        def backward_fn() -> None:
            self.grad += unbroadcast(out.grad, self.shape)
            other.grad -= unbroadcast(out.grad, other.shape)

        return out.record((self, other), backward_fn)

    def __mul__(self, other: ArrayLike) -> Tensor:
        """Elementwise product: each factor's gradient is the other factor."""
        other = lift(other)
        out = Tensor(self.data * other.data)

        def backward_fn() -> None:
            self.grad += unbroadcast(out.grad * other.data, self.shape)
            other.grad += unbroadcast(out.grad * self.data, other.shape)

        return out.record((self, other), backward_fn)

    def __radd__(self, other: ArrayLike) -> Tensor:
        """``number + tensor``."""
        return lift(other) + self

    def __rsub__(self, other: ArrayLike) -> Tensor:
        """``number - tensor`` (order matters, so not an alias of __sub__)."""
        return lift(other) - self

    def __rmul__(self, other: ArrayLike) -> Tensor:
        """``number * tensor``."""
        return lift(other) * self

    def __neg__(self) -> Tensor:
        """Elementwise negation."""
        out = Tensor(-self.data)

        def backward_fn() -> None:
            self.grad -= out.grad

        return out.record((self,), backward_fn)

    def __pow__(self, k: float) -> Tensor:
        """Elementwise power by a plain number (not a tensor exponent)."""
        if isinstance(k, Tensor):
            raise TypeError("the exponent must be a number, not a Tensor")
        out = Tensor(self.data**k)

        def backward_fn() -> None:
            self.grad += k * self.data ** (k - 1) * out.grad

        return out.record((self,), backward_fn)

    # ---- elementwise functions ----------------------------------------------

    def exp(self) -> Tensor:
        """Elementwise e**x; its derivative is its own value."""
        out = Tensor(np.exp(self.data))

        def backward_fn() -> None:
            self.grad += out.data * out.grad

        return out.record((self,), backward_fn)

    def log(self) -> Tensor:
        """Elementwise natural logarithm."""
        out = Tensor(np.log(self.data))

        def backward_fn() -> None:
            self.grad += out.grad / self.data

        return out.record((self,), backward_fn)

    def tanh(self) -> Tensor:
        """Elementwise tanh; derivative 1 - tanh**2, reusing the output."""
        out = Tensor(np.tanh(self.data))

        def backward_fn() -> None:
            self.grad += (1.0 - out.data**2) * out.grad

        return out.record((self,), backward_fn)

    def relu(self) -> Tensor:
        """Elementwise max(x, 0); the gradient passes only where x > 0."""
        out = Tensor(np.maximum(self.data, 0.0))

        def backward_fn() -> None:
            self.grad += (self.data > 0) * out.grad

        return out.record((self,), backward_fn)

    # ---- linear algebra and reductions --------------------------------------

    def __matmul__(self, other: ArrayLike) -> Tensor:
        """Matrix product of 1-D or 2-D operands (NumPy's ``@`` rules)."""
        other = lift(other)
        out = Tensor(self.data @ other.data)

        def backward_fn() -> None:
            # View vectors as 1-row / 1-column matrices, the way @ treats them,
            # so a single pair of matrix rules covers every 1-D/2-D case.
            a = self.data.reshape(1, -1) if self.data.ndim == 1 else self.data
            b = other.data.reshape(-1, 1) if other.data.ndim == 1 else other.data
            g = out.grad.reshape(a.shape[0], b.shape[1])
            self.grad += (g @ b.T).reshape(self.shape)
            other.grad += (a.T @ g).reshape(other.shape)

        return out.record((self, other), backward_fn)

    def __rmatmul__(self, other: ArrayLike) -> Tensor:
        """``array @ tensor``."""
        return lift(other) @ self

    @property
    def T(self) -> Tensor:
        """Transpose (reverses the axes); the gradient is transposed back."""
        out = Tensor(self.data.T)

        def backward_fn() -> None:
            self.grad += out.grad.T

        return out.record((self,), backward_fn)

    def sum(self, axis: Optional[Union[int, tuple[int, ...]]] = None, keepdims: bool = False) -> Tensor:
        """Sum over ``axis`` (all axes if None); every summed entry gets the grad."""
        out = Tensor(self.data.sum(axis=axis, keepdims=keepdims))

        def backward_fn() -> None:
            self.grad += _spread(out.grad, axis, keepdims, self.shape)

        return out.record((self,), backward_fn)

    def mean(self, axis: Optional[Union[int, tuple[int, ...]]] = None, keepdims: bool = False) -> Tensor:
        """Mean over ``axis``; like sum, but each entry gets grad / count."""
        out = Tensor(self.data.mean(axis=axis, keepdims=keepdims))
        count = self.data.size / max(out.data.size, 1)

        def backward_fn() -> None:
            self.grad += _spread(out.grad, axis, keepdims, self.shape) / count

        return out.record((self,), backward_fn)

    # ---- the backward pass --------------------------------------------------

    def backward(self) -> None:
        """Fill ``.grad`` of every tensor this one depends on.

        Interior nodes start from zero on every call; leaves are *not* reset,
        so their gradients accumulate across calls (see the module docstring).
        """
        order = self._topological_order()
        for node in order:
            if node.parents:
                node.grad = np.zeros_like(node.data)
            elif node is not self:
                node._check_grad_takes_floats()
        self.grad = np.ones_like(self.data)  # d(self)/d(self)
        # Reverse topological order: a node's grad is complete (all its
        # consumers have contributed) before its own closure runs.
        for node in reversed(order):
            if node.backward_fn is not None:
                node.backward_fn()

    def _check_grad_takes_floats(self) -> None:
        """A leaf's ``.grad`` must take the float gradients a closure adds into it (in place, shaped like
        ``.data``). Else fail here, naming what holds it, not deep inside a closure with NumPy's words."""
        grad = self.grad
        if isinstance(grad, np.ndarray):
            try:
                takes = np.broadcast_shapes(grad.shape, self.shape) == grad.shape
            except ValueError:  # shapes that do not broadcast at all
                takes = False
            takes = takes and np.can_cast(np.float64, grad.dtype, "same_kind")
        else:
            takes = grad is not None  # a number: `0 += array` gives the array
        if not takes:
            what = "None" if grad is None else f"an array of dtype {grad.dtype} and shape {grad.shape}"
            raise TypeError(f"backward() cannot add float gradients of shape {self.shape} into a .grad that is "
                            f"{what}: zero_grad() must make each p.grad np.zeros_like(p.data)")

    def _topological_order(self) -> list[Tensor]:
        """Every node reachable from self, each after all of its parents.

        Iterative depth-first search with an explicit stack: a deep graph (a
        long training loop, a long chain) would overflow Python's recursion
        limit. A node is pushed twice: first to expand its parents, then
        (flag True) to be emitted once they are all done.
        """
        order: list[Tensor] = []
        visited: set[int] = set()
        stack: list[tuple[Tensor, bool]] = [(self, False)]
        while stack:
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
                continue
            if id(node) in visited:
                continue
            visited.add(id(node))
            stack.append((node, True))
            stack.extend((p, False) for p in node.parents if id(p) not in visited)
        return order


def lift(x: ArrayLike) -> Tensor:
    """Return ``x`` if it already is a Tensor, else wrap it as a constant leaf."""
    return x if isinstance(x, Tensor) else Tensor(x)


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` down to ``shape``, undoing NumPy broadcasting.

    A value broadcast across an axis was used once per entry of that axis, so
    its gradient is the sum over that axis: over leading axes that broadcasting
    added, and over axes where ``shape`` has size 1.
    """
    grad = np.asarray(grad, dtype=float)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def _spread(grad: np.ndarray, axis: Optional[Union[int, tuple[int, ...]]], keepdims: bool,
            shape: tuple[int, ...]) -> np.ndarray:
    """Broadcast a reduction's output gradient back to the input ``shape``."""
    if axis is not None and not keepdims:
        # Put the reduced axes back as size-1 axes so broadcasting lines up.
        grad = np.expand_dims(grad, axis)
    return np.broadcast_to(grad, shape)


def cross_entropy(logits: Tensor, labels: np.ndarray) -> Tensor:
    """Mean softmax cross-entropy of ``logits`` (rows, classes) and int ``labels``.

    Computed as one operation with a stable log-softmax (subtract each row's
    maximum before exponentiating, so large logits cannot overflow). The
    gradient has the closed form (softmax - one_hot) / rows.
    """
    labels = np.asarray(labels, dtype=int)
    rows = np.arange(logits.shape[0])
    shifted = logits.data - logits.data.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    out = Tensor(-log_probs[rows, labels].mean())

    def backward_fn() -> None:
        delta = np.exp(log_probs)
        delta[rows, labels] -= 1.0
        logits.grad += delta / len(rows) * out.grad

    return out.record((logits,), backward_fn)
