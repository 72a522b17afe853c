"""`ssdkit._json.dumps` writes the same text as `json.dumps(obj, indent=n)`, and so does the
core when it hands a run's document to Python (`_native.run`, which `ssdkit run -o` writes as
it is through `Result._document_text`): every result file goes through one or the other, so a
byte of difference would change what users diff and digest."""

from __future__ import annotations

import json
import math
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ssdkit import _json, _native
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


# What a result document can hold: serde_json has no NaN or infinity, integers within i64 and
# u64, and strings of Unicode scalar values (no lone surrogates).
_core_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
_core_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _core_text,
    lambda kids: st.lists(kids, max_size=6) | st.dictionaries(_core_text, kids, max_size=6),
    max_leaves=40,
)


def _core(obj) -> str:
    return _native.json_dumps_indent2(json.dumps(obj))


@settings(max_examples=400, deadline=None)
@given(_core_values)
def test_the_core_writes_what_the_standard_encoder_writes(obj):
    assert _core(obj) == json.dumps(obj, indent=2)


def test_the_core_writes_floats_as_repr_does():
    # Every exponent and sign, from random bit patterns (seeded), and the edges of repr's
    # switch between positional and exponent notation.
    rng = random.Random(20261128)
    xs = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(50_000)]
    xs = [x for x in xs if math.isfinite(x)]
    for e in range(-8, 20):
        for m in (1.0, 9.999999999999999, 1.5, 2.0 / 3.0):
            xs += [m * 10.0**e, -m * 10.0**e, math.nextafter(m * 10.0**e, 0.0)]
    xs += [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 9007199254740993.0]
    assert _core(xs) == json.dumps(xs, indent=2)


def test_the_core_refuses_text_that_is_not_json():
    with pytest.raises(ValueError, match="not JSON"):
        _native.json_dumps_indent2("{")


def test_the_written_text_is_the_cores_until_the_document_changes():
    import ssdkit
    from ssdkit import _record

    r = ssdkit.run("mqsim-paper", overrides={"flow.0.requests": 300})
    assert r._document_text() == r.to_json() == json.dumps(r.raw, indent=2)
    assert r._document_text() is r._document_text()  # the core's text, not encoded again
    # A result made with another document (as fairness runs add theirs) writes that one,
    raw = dict(r.raw, extra=1)
    assert _record.replace(r, raw=raw)._document_text() == json.dumps(raw, indent=2)
    # and to_json writes the document as it is, changed in place or not.
    r.raw["device"]["extra"] = 2
    assert json.loads(r.to_json())["device"]["extra"] == 2


def _typed(obj) -> str:
    """A document's text with its types (1 and 1.0 differ, unlike under ==) and key order."""
    return json.dumps(obj)


@settings(max_examples=400, deadline=None)
@given(_core_values)
def test_the_core_builds_the_document_json_loads_reads(obj):
    text = _core(obj)
    assert _typed(_native.json_loads_core(text)) == _typed(json.loads(text))


def test_a_run_hands_over_the_document_its_text_holds():
    """`_native.run(parsed=True)` (what ``ssdkit.run`` asks for) gives the text and the
    document `json.loads` reads from it, the same whether or not it builds the document."""
    kw = {"preset": "mqsim-paper", "overrides": ["flow.0.requests=300", "run.timeseries_window_ms=1"]}
    text, doc = _native.run(parsed=True, **kw)
    assert _typed(doc) == _typed(json.loads(text))
    again = _native.run(**kw)
    assert json.loads(again)["config_hash"] == doc["config_hash"]
    assert _steady(again) == _steady(text)


def _steady(text: str) -> list[str]:
    """A document's lines but those of wall-clock figures (they differ run to run)."""
    return [line for line in text.splitlines() if "wall" not in line]
