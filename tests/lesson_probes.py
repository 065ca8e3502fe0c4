"""Probes the kit's tests run in the sandbox on the reference: the lesson's numbers, computed."""
from __future__ import annotations


def _mlp(ns: dict, widths: list[int], seed: int = 0):
    rng = ns["np"].random.default_rng(seed)
    layers = []
    for n_in, n_out in zip(widths, widths[1:]):
        layers += [ns["Linear"](n_in, n_out, rng), ns["ReLU"]()]
    return ns["Sequential"](*layers[:-1])


def parameter_counts(ns: dict) -> list[int]:
    return [sum(p.data.size for p in _mlp(ns, widths).parameters()) for widths in ([2, 16, 16, 2], [64, 32, 10])]


def worked_example(ns: dict, zero_between: bool) -> dict:
    """Linear(2, 1), w = (0.5, -1), b = 0.2, x = (1, 2), y = 1, squared error, lr = 0.1, two steps."""
    Tensor, np = ns["Tensor"], ns["np"]
    layer = ns["Linear"](2, 1, np.random.default_rng(0))
    layer.weight.data[...] = [[0.5, -1.0]]
    layer.bias.data[...] = [0.2]
    opt = ns["SGD"](layer.parameters(), lr=0.1)
    x = Tensor([[1.0, 2.0]])
    losses, outputs = [], []
    for step in range(3):
        if step and zero_between:
            opt.zero_grad()
        z = layer(x)
        loss = ((z - 1.0) ** 2).sum()
        losses.append(float(loss.data))
        outputs.append(float(z.data.ravel()[0]))
        if step < 2:
            loss.backward()
            opt.step()
    return {"losses": losses, "outputs": outputs}


def graph_sizes(ns: dict) -> dict:
    """Nodes reachable from a 2-16-16-2 output, recorded and under no_grad, and whether outputs agree."""
    np = ns["np"]
    model = _mlp(ns, [2, 16, 16, 2])
    x = ns["Tensor"](np.random.default_rng(1).normal(size=(4, 2)))

    def count(out) -> int:
        seen, stack = set(), [out]
        while stack:
            node = stack.pop()
            if id(node) not in seen:
                seen.add(id(node))
                stack.extend(node.parents)
        return len(seen)

    recorded = model(x)
    with ns["no_grad"]():
        quiet = model(x)
    return {"recorded": count(recorded), "no_grad": count(quiet),
            "equal": bool(np.array_equal(recorded.data, quiet.data))}


def shared_weight(ns: dict) -> dict:
    """One Parameter used by two layers: how often parameters() lists it, how far one step moves it."""
    np = ns["np"]
    rng = np.random.default_rng(2)
    first, second = ns["Linear"](3, 3, rng), ns["Linear"](3, 3, rng)
    second.weight = first.weight
    model = ns["Sequential"](first, ns["ReLU"](), second)
    params = model.parameters()
    before = first.weight.data.copy()
    first.weight.grad = np.ones_like(before)
    ns["SGD"](params, lr=0.1).step()
    return {"listed": sum(p is first.weight for p in params),
            "moved": float(np.max(np.abs(before - first.weight.data)))}
