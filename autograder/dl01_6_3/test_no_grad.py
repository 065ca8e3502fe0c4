"""Hidden tests for no_grad() (grade cell test_no_grad)."""
import causes
import probes
import pytest
from reported import block_cause, close, reference_holds

STUDENT_CELLS = ("no_grad",)
NETWORKS = [((2, 16, 16, 2), 4, 0), ((3, 7, 5), 6, 1), ((4, 2), 3, 2)]
IDS = ["2-16-16-2", "3-7-5", "4-2"]


def made(runner):
    """`runner`, failing first with the cause when what no_grad() returned cannot run a `with` block."""
    cause = block_cause(runner)
    assert not cause, cause
    return runner


def run_forward(runner, widths, batch, seed):
    return made(runner).run(probes.no_grad_forward, widths=list(widths), batch=batch, seed=seed)


def states(runner, scenario):
    return made(runner).run(probes.no_grad_states, scenario=scenario)


@pytest.mark.parametrize("widths,batch,seed", NETWORKS, ids=IDS)
def test_output_has_no_parents_inside_the_block(student, reference, widths, batch, seed):
    got = run_forward(student, widths, batch, seed)
    assert not got["inside"], "inside a no_grad() block Tensor.recording was still on: switch it off on entry"
    assert len(got["quiet_graph"]) == 1 and not got["quiet_closure"], (
        f"a forward pass inside a no_grad() block still recorded a graph of {len(got['quiet_graph'])} nodes, "
        "expected 1 (the output alone, no parents)")


@pytest.mark.parametrize("widths,batch,seed", NETWORKS, ids=IDS)
def test_gives_the_same_values_as_the_recorded_pass(student, reference, widths, batch, seed):
    got = run_forward(student, widths, batch, seed)
    want = run_forward(reference, widths, batch, seed)
    assert close(got["quiet"], got["recorded"]) and close(got["quiet"], want["quiet"]), (
        "inside no_grad() the network gave other values: no_grad() changes what is recorded, not the numbers")


def test_recording_resumes_after_the_block(student, reference):
    got = run_forward(student, *NETWORKS[1])
    want = run_forward(reference, *NETWORKS[1])
    assert got["after"] and len(got["again_graph"]) == len(want["again_graph"]), (
        "after a no_grad() block operations still record nothing: restore Tensor.recording on exit")


def test_restores_recording_after_an_exception_inside_the_block(student, reference):
    got = states(student, "exception")
    # A finally clause is the fix only where a block that ends without an exception does restore recording.
    assert got["after"]["recording"] and got["after"]["records"], (
        "after an exception inside a no_grad() block recording stayed off: restore Tensor.recording in a "
        "finally clause around the yield" if states(student, "plain")["after"]["recording"] else STAYS_OFF)


def test_lets_the_exception_propagate(student, reference):
    got = states(student, "exception")
    assert got["propagated"], causes.swallowed(student.run(probes.no_grad_made).get("is_class") is True)


STAYS_OFF = ("after a no_grad() block recording stayed off, with or without an exception inside it: restore on exit "
             "the value Tensor.recording had before the block (read before switching it off)")


def nested_cause(got):
    """What two nested no_grad() blocks (no exception) did wrong ('' if nothing), from no_grad_states' "nested"."""
    if got["inner"]["records"]:
        return ("inside nested no_grad() blocks operations still recorded their parents: switch recording off on "
                "entry (set it to False, whatever it was)")
    if got["between"]["recording"] or got["between"]["records"]:
        return ("when an inner no_grad() block ended inside an outer one, recording came back on: restore the value "
                "Tensor.recording had before the block (save it on entry), not True")
    return "" if got["after"]["recording"] and got["after"]["records"] else (
        "after two nested no_grad() blocks ended, recording is still off: restore the previous value on exit")


def test_inner_exit_keeps_recording_off_until_the_outer_block_ends(student, reference):
    cause = nested_cause(states(student, "nested"))
    assert not cause, cause


def test_restores_the_previous_value_rather_than_true(student, reference):
    got = states(student, "already_off")
    assert not got["after"]["recording"], ("no_grad() switched recording on at exit although it was off before "
                                           "the block: restore the previous value of Tensor.recording, not True")


def test_an_exception_in_an_inner_block_restores_each_level(student, reference):
    got = states(student, "nested_exception")
    # A finally clause is the fix only where nested blocks without an exception keep recording off between them.
    assert not got["between"]["recording"], nested_cause(states(student, "nested")) or (
        "after an exception left an inner no_grad() block, recording came back on inside the outer block: "
        "restore the previous value in a finally clause")
    assert got["after"]["recording"], "after the outer no_grad() block ended, recording is still off"


def test_switches_recording_off_inside_and_back_on_after(student, reference):
    got = states(student, "plain")
    want = states(reference, "plain")
    reference_holds(want == {"before": {"recording": True, "records": True}, "inside": {"recording": False, "records": False},
                             "after": {"recording": True, "records": True}}, "the reference no_grad() misbehaves")
    assert not got["inside"]["records"], "inside a no_grad() block an operation still recorded its parents"
    assert got["after"]["recording"] and got["after"]["records"], (
        "after a no_grad() block operations record nothing: restore Tensor.recording on exit")
