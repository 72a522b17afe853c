"""`ssdkit._json.dumps` writes the same text as `json.dumps(obj, indent=n)`: every result file
goes through it, so a byte of difference would change what users diff and digest."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ssdkit import _json
from ssdkit.result import Result

# JSON's own values and the extras the standard encoder accepts: non-finite floats, big
# integers, non-ASCII and control characters, keys of every type it converts.
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_keys = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
_values = st.recursive(
    _scalars,
    lambda kids: (
        st.lists(kids, max_size=6)
        | st.dictionaries(_keys, kids, max_size=6)
        | st.lists(st.integers(min_value=-(2**64), max_value=2**64), max_size=8)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(_values, st.sampled_from([2, 0, 1, 4, "\t", None]))
def test_same_text_as_the_standard_encoder(obj, indent):
    assert _json.dumps(obj, indent=indent) == json.dumps(obj, indent=indent)


@pytest.mark.parametrize(
    "obj",
    [
        [],
        {},
        [[]],
        {"a": {}},
        [1, True, 2],  # a bool among integers is not an integer list
        [0.5, math.nan, math.inf, -math.inf],
        {1: 2, 2.5: 3, False: 1, None: 4},
        (1, 2),  # a tuple: the standard encoder writes it as a list
        {"t": (1, [2])},
        "é\u2603\n\x00",
    ],
)
def test_edge_cases(obj):
    assert _json.dumps(obj) == json.dumps(obj, indent=2)


def test_what_the_standard_encoder_refuses_it_refuses_the_same_way():
    cycle: list = []
    cycle.append(cycle)
    for bad in ({(1, 2): 3}, {"x": object()}, cycle):
        with pytest.raises((TypeError, ValueError)) as ours:
            _json.dumps(bad)
        with pytest.raises(type(ours.value)) as theirs:
            json.dumps(bad, indent=2)
        assert str(ours.value) == str(theirs.value)


def test_a_run_result_writes_as_before():
    import ssdkit

    r = ssdkit.run("mqsim-paper", overrides={"flow.0.requests": 300, "run.timeseries_window_ms": 1})
    assert isinstance(r, Result)
    assert r.to_json() == json.dumps(r.raw, indent=2)
    assert r.to_json(indent=None) == json.dumps(r.raw)
    assert json.loads(r.to_json()) == r.raw
