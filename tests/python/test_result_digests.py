"""Optimisations change no result: every case of result_digests.py (covering every feature)
gives the digest recorded in tests/data/result_digests.json."""

import json

import pytest
import result_digests as rd

RECORDED = json.loads(rd.RECORD.read_text())


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(rd.CASES)


@pytest.mark.parametrize("name", list(rd.CASES))
def test_result_digest_is_unchanged(name):
    got = rd.digest(name)
    assert got["result"] == RECORDED[name]["result"], (
        f"the simulated result of `{name}` changed. An optimisation must not change it; a deliberate "
        "change of the model is recorded with `python tests/python/result_digests.py --write` and "
        "explained in the issue's note"
    )
    assert got["config"] == RECORDED[name]["config"], (
        f"the configuration echoed in the result of `{name}` changed (its simulated figures did not): "
        "a change of the configuration's format or defaults is recorded with "
        "`python tests/python/result_digests.py --write` and named in the issue's note"
    )


def test_canonical_drops_the_wall_clock_and_the_checkout():
    doc = {
        "wall_time_s": 1.0,
        "config_hash": "ab",
        "device": {"precondition": {"snapshot_load_s": 2.0, "mode": "fast"}},
    }
    doc["flow"] = [{"trace": str(rd.REPO / "tests" / "x.trace")}]
    assert rd.canonical(doc) == {
        "device": {"precondition": {"mode": "fast"}},
        "flow": [{"trace": "<repo>/tests/x.trace"}],
    }
