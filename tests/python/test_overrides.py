"""Python values survive the trip through an override: rendered by `toml_literal`, parsed as
TOML by the core."""

import sys

import pytest

pytest.importorskip("hypothesis")
from hypothesis import given
from hypothesis import strategies as st
from ssdkit.api import toml_literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # a dependency of ssdkit on Python < 3.11
    import tomli as tomllib

scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(),
)


@given(st.one_of(scalars, st.lists(scalars, max_size=5)))
def test_literal_round_trips(v):
    assert tomllib.loads(f"v = {toml_literal(v)}")["v"] == v
