"""The sandbox's messages (autograder/sandbox/protocol.py): arrays cross as bytes and come back as the
lists tolist() gives, exactly; a forged array is refused, never turned into something else."""
import json
import math

import numpy as np
import pytest

from autograder.sandbox.protocol import ARRAY, Unreadable, encode, plain


def crossed(value):
    """`value` as the grader gets it: encoded by a loader, parsed, read back."""
    return plain(json.loads(encode({"value": value}))["value"])


@pytest.mark.parametrize("array", [
    np.array([[1.5, -0.0], [np.inf, 1e-310]]), np.arange(6, dtype=np.int64).reshape(2, 3, 1),
    np.array([True, False]), np.array(2.25), np.zeros((0, 3)), np.arange(4, dtype=np.float32) / 3,
    np.arange(3, dtype=np.uint8),
], ids=["f8", "i8", "bool", "0-d", "empty", "f4", "u1"])
def test_an_array_comes_back_as_its_tolist(array):
    got = crossed({"a": [array, {"b": array}]})
    assert got == {"a": [array.tolist(), {"b": array.tolist()}]}
    assert json.dumps(got) == json.dumps({"a": [array.tolist(), {"b": array.tolist()}]})  # the same types too


def test_nan_and_negative_zero_keep_their_bits():
    got = crossed(np.array([np.nan, -0.0]))
    assert math.isnan(got[0]) and math.copysign(1.0, got[1]) == -1.0


def test_an_array_of_another_dtype_crosses_as_a_list_or_is_refused():
    assert crossed(np.array([1, 2], dtype=">i4")) == [1, 2]  # not native byte order: tolist()
    with pytest.raises(TypeError):
        encode({"value": np.array([1 + 2j])})  # complex numbers are not plain data


@pytest.mark.parametrize("forged", [
    ["<f8", [2], "AAAAAAAA8D8="],  # one float where the shape says two
    ["<c16", [1], "AAAAAAAA8D8AAAAAAAAAAA=="],  # a dtype not allowed
    ["<f8", [True], "AAAAAAAA8D8="],  # a bool as a length
    ["<f8", [-1], ""],
    ["<f8", [1], "not base64!"],
    ["<f8", "1", "AAAAAAAA8D8="],
    ["<f8", [1]],
    ["O", [1], "AA=="],
], ids=["short", "dtype", "bool-length", "negative", "base64", "shape-text", "two-fields", "object"])
def test_a_forged_array_is_refused(forged):
    with pytest.raises(Unreadable):
        plain({"x": [{ARRAY: forged}]})


def test_a_dict_without_the_key_is_plain_data():
    assert plain({"array": [1, {"k": "v"}], "n": None}) == {"array": [1, {"k": "v"}], "n": None}
