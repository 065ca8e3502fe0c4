"""no_grad() (`pytest -m no_grad`): inside `with no_grad():` Tensor.recording is False, so operations compute
the same values but record no parents; on leaving the block, even by an exception (which it lets through),
Tensor.recording gets back the value it had before the block (so nested blocks work)."""
import causes
import numpy as np


def block(nb):
    """What nb.no_grad() returned, failing first with the cause when a `with` block cannot run it (contextlib
    would raise from its own code, naming none of yours)."""
    made = nb.no_grad()
    missing = [name for name in ("__enter__", "__exit__") if not hasattr(made, name)]
    cause = causes.no_grad_made(type(made).__name__, missing, type(made.gen).__name__ if hasattr(made, "gen") else "",
                                isinstance(nb.no_grad, type))
    assert not cause, cause
    return made


def test_records_no_parents_inside_the_block(nb):
    a, b = nb.Tensor(np.array([1.0, 2.0])), nb.Tensor(np.array([3.0, -1.0]))
    with block(nb):
        c = (a * b + a).relu()
    assert not c.parents and c.backward_fn is None, (
        "an operation inside `with no_grad():` still recorded its parents: Tensor.recording was still on: "
        "switch it off on entry (Tensor.recording = False)")


def test_computes_the_same_values(nb):
    a, b = nb.Tensor(np.array([1.0, 2.0])), nb.Tensor(np.array([3.0, -1.0]))
    with block(nb):
        inside = (a * b + a).relu().data.copy()
    assert np.allclose(inside, [4.0, 0.0]), (f"inside no_grad() the operations gave {inside.tolist()}, expected "
                                             "[4.0, 0.0]: no_grad() changes what is recorded, not the values")


def test_records_again_after_the_block(nb):
    with block(nb):
        pass
    assert nb.Tensor.recording is True, ("after a no_grad() block operations still record nothing (Tensor.recording "
                                         "is still off): restore Tensor.recording on exit")
    a = nb.Tensor(np.array([1.0]))
    assert len((a * a).parents) == 2, "after a no_grad() block operations record no graph: restore " \
                                      "Tensor.recording on exit"


def test_restores_recording_after_an_exception(nb):
    with block(nb):
        pass
    plain, nb.Tensor.recording, escaped = nb.Tensor.recording, True, False  # recording after a block left normally
    try:
        with block(nb):
            raise ValueError("raised inside the block")
    except ValueError:
        escaped = True
    assert escaped, causes.swallowed(isinstance(nb.no_grad, type))
    assert nb.Tensor.recording is True, (  # a finally clause is the fix only where a block left normally restores it
        "after an exception inside a no_grad() block recording stayed off: restore Tensor.recording in a finally "
        "clause around the yield" if plain is True else "after a no_grad() block recording stayed off, with or "
        "without an exception inside it: restore on exit the value Tensor.recording had before the block (read "
        "before switching it off)")


def test_restores_the_previous_value_when_nested(nb):
    with block(nb):
        with block(nb):
            inside = nb.Tensor.recording
        between = nb.Tensor.recording
    assert inside is False, ("inside nested no_grad() blocks Tensor.recording was on: switch it off on entry "
                             "(set it to False, whatever it was)")
    assert between is False, ("after an inner no_grad() block ended inside an outer one, recording came back on: "
                              "restore the previous value of Tensor.recording, not True")
    assert nb.Tensor.recording is True, ("after two nested no_grad() blocks ended, recording is still off: "
                                         "restore the previous value on exit")
