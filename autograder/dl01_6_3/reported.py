"""What the hidden suites take from a probe's answer before they compare it: as many items as they asked for.

A probe reports one item per Parameter (a gradient, a shape, a fact), for Parameters the check itself made,
so honest code, right or wrong, cannot change how many. Student code shares its process with the probe and
can rewrite the answer; an empty list would then leave a comparison made with zip() or all() nothing to
compare, and pass. Each such list goes through `per_parameter` first; what SGD(params, lr) kept goes through `init_cause`.
A probe that stops short on a cause (the layers a lesson probe builds from) says so, and its cause goes through `stop_cause`.
What a check asks of the reference's own answers goes through `reference_holds`: a wrong one is the grader's failure.
The notebook's numbers are compared through `close`, which a wrong shape fails, never raises.
"""
import causes
import numpy as np
import probes


def reference_holds(condition, what):
    """Go on only where the reference's own answer holds `condition`; where it does not (`what` says how), the
    grader is wrong, not the notebook: a RuntimeError, which suites._result names as a grader bug with no score,
    never a check the student failed (an assertion)."""
    if not condition:
        raise RuntimeError(f"{what} (a grader bug)")


def close(got, want):
    """Whether the notebook's `got` has `want`'s shape and numbers. The shape first: np.allclose broadcasts, so another
    shape raises (a ValueError from the check's own code: no score, a grader bug) or compares rows to a row."""
    return got is not None and np.shape(got) == np.shape(want) and np.allclose(got, want)


CHANGED = "the notebook changed what the check reports"


def per_parameter(answer, count):
    """`answer`, checked to hold `count` items (one per Parameter the check made)."""
    assert isinstance(answer, list) and len(answer) == count, (
        f"the check's answer holds {len(answer) if isinstance(answer, list) else 'no list of'} items for the "
        f"{count} Parameters it made: {CHANGED}")
    return answer


def stop_cause(cause, stopped):
    """`cause`, which a probe that `stopped` short found (it stops on one only): a stop the answer shows no cause of
    is a rewritten answer, failed as such, and no check reads on into what the probe never wrote."""
    assert cause or not stopped, f"the check's answer says its probe stopped on a cause it does not show: {CHANGED}"
    return cause


def init_cause(answer, total, lr):
    """What the given SGD.__init__ got wrong ('' when nothing), from what SGD(params, lr) kept once made (the
    answer's made_order and made_lr, probes._made): a check of zero_grad() or step() tests it first, since a
    copy or another rate kept there shows in their effects too; a one-shot iterator (a generator) is named as one.
    Objects that are not Parameters (made_others) are never the ones it was given, whatever numbers the answer holds
    for them, and no list (made_order None: self.params is no iterable) holds none of them: init_kept names both."""
    if answer.get("made_one_shot") is True:
        return causes.optimizer_holds(0, total, answer.get("made_kind", ""), True)
    return causes.init_kept(None if answer["made_others"] else answer["made_order"], total, answer["made_lr"], lr)


def block_cause(runner):
    """What the notebook's no_grad() returned, when a `with` block cannot run it ('' when it can: causes.no_grad_made):
    a probe's `with no_grad():` would raise from contextlib's code, naming none of the student's."""
    return causes.no_grad_made(**runner.run(probes.no_grad_made))
