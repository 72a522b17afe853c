"""ssdkit._record, the records that stand in for dataclasses on every command's path, behave
as the dataclasses they replace: each case builds the same class both ways and compares."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest
from ssdkit import _record


def _pair(frozen: bool, eq: bool = True):
    @dataclasses.dataclass(frozen=frozen, eq=eq)
    class D:
        a: int
        b: list[int] = dataclasses.field(hash=False, repr=False)
        c: str = "x"
        d: list[int] = dataclasses.field(default_factory=list, hash=False)

    @_record.record(frozen=frozen, eq=eq)
    class R:
        a: int
        b: list[int] = _record.field(hash=False, repr=False)
        c: str = "x"
        d: list[int] = _record.field(default_factory=list, hash=False)

    return D, R


@pytest.mark.parametrize("frozen", [True, False])
def test_construction_repr_eq_and_hash_match_dataclasses(frozen):
    D, R = _pair(frozen)
    for args, kw in [((1, [2]), {}), ((1,), {"b": [2], "c": "y"}), ((), {"a": 3, "b": [], "d": [4]})]:
        d, r = D(*args, **kw), R(*args, **kw)
        assert repr(r).replace("R(", "D(") == repr(d)
        assert _record.asdict(r) == dataclasses.asdict(d)
        assert r == R(*args, **kw) and (d == D(*args, **kw))
        assert (r == R(9, [])) == (d == D(9, []))
        if frozen:
            assert hash(r) == hash(R(*args, **kw))
            assert hash(r) == hash((r.a, r.c))  # the fields not marked hash=False
        else:
            with pytest.raises(TypeError):
                hash(r)
    # A default factory gives each record its own list.
    assert R(1, []).d is not R(1, []).d
    assert [f.name for f in _record.fields(R)] == [f.name for f in dataclasses.fields(D)]
    assert R.c == D.c == "x" and not hasattr(R, "a") and not hasattr(D, "a")


@pytest.mark.parametrize(
    "args, kw",
    [((), {}), ((1,), {}), ((1, [], "x", [], 5), {}), ((1, []), {"e": 1}), ((1, []), {"a": 2})],
    ids=["none", "missing b", "too many", "unknown keyword", "twice"],
)
def test_bad_arguments_raise_type_error_as_dataclasses_do(args, kw):
    D, R = _pair(True)
    with pytest.raises(TypeError):
        D(*args, **kw)
    with pytest.raises(TypeError) as e:
        R(*args, **kw)
    assert "R()" in str(e.value)


def test_frozen_refuses_assignment_and_replace_copies():
    _, R = _pair(True)
    r = R(1, [2])
    with pytest.raises(AttributeError, match="cannot assign to field 'a'"):
        r.a = 2
    with pytest.raises(AttributeError):
        del r.c
    s = _record.replace(r, c="z")
    assert (s.a, s.b, s.c, r.c) == (1, [2], "z", "x")
    with pytest.raises(TypeError):
        _record.replace(r, nope=1)
    _, M = _pair(False)
    m = M(1, [2])
    m.a = 5
    assert m.a == 5


def test_eq_false_compares_identity_and_nested_records_become_dicts():
    _, R = _pair(True, eq=False)
    r = R(1, [])
    assert r != R(1, []) and r in [r] and hash(r) == object.__hash__(r)

    @_record.record(frozen=True)
    class Outer:
        inner: R
        many: list = _record.field(default_factory=list)

    o = Outer(r, [r, {"k": r}])
    assert _record.asdict(o) == {
        "inner": {"a": 1, "b": [], "c": "x", "d": []},
        "many": [{"a": 1, "b": [], "c": "x", "d": []}, {"k": {"a": 1, "b": [], "c": "x", "d": []}}],
    }
    assert _record.is_record(o) and _record.is_record(Outer) and not _record.is_record(1)
    with pytest.raises(TypeError):
        _record.fields(1)


def test_a_field_without_default_after_one_with_default_is_refused():
    with pytest.raises(TypeError, match="field `b` without a default"):

        @_record.record
        class Bad:
            a: int = 1
            b: int


def test_inherited_fields_come_first():
    @_record.record
    class Base:
        a: int

    @_record.record
    class Child(Base):
        b: int = 2

    assert [f.name for f in _record.fields(Child)] == ["a", "b"]
    assert repr(Child(1)) == "test_inherited_fields_come_first.<locals>.Child(a=1, b=2)"


def test_the_run_command_path_does_not_import_dataclasses():
    """What the records are for: `ssdkit run` imports neither dataclasses nor inspect (nor
    tomllib, read only where TOML is parsed in Python)."""
    code = (
        "import sys, ssdkit.cli, ssdkit.api, ssdkit.mqsim, ssdkit.fio, ssdkit.result; "
        "print(sorted(m for m in ('dataclasses', 'inspect', 'tomllib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_mqsim_run_from_the_command_line_imports_only_what_it_uses(tmp_path):
    """`ssdkit run --mqsim`, start to output written, loads none of the modules it does not need
    (each 0.6-4.4 ms of the process, measured with ``python -X importtime``): `typing`
    (annotations only), ElementTree (expat alone reads the XML), `numbers` (numpy scalars
    only), `copy`, none of the record's or TOML's, not the fio converter (0.6 ms; the
    MQSim converter shares only `ssdkit._tomltext` with it), not `json` (1 ms: the core hands
    over the device's figures and the result as objects and text), `contextlib` (0.3 ms) nor
    `signal`'s wrapper (0.3 ms: its enums; `_signal` does the work)."""
    data = os.path.join(os.path.dirname(__file__), "..", "data", "mqsim")
    out = tmp_path / "r.json"
    argv = [
        "run",
        "--mqsim",
        os.path.join(data, "ssdconfig.xml"),
        os.path.join(data, "workload.xml"),
        "--scenario",
        "1",
    ]
    argv += ["--set", "flash.blocks_per_plane=128", "--set", "flow.0.requests=20", "--set", "flow.1.requests=20"]
    argv += ["--no-progress", "-o", str(out)]
    unwanted = (
        "typing",
        "xml.etree.ElementTree",
        "numbers",
        "copy",
        "dataclasses",
        "inspect",
        "tomllib",
        "ssdkit.fio",
        "json",
        "contextlib",
        "signal",
    )
    code = (
        "import sys\nfrom ssdkit.cli import main\n"
        f"rc = main({argv!r})\n"
        f"print(rc, sorted(m for m in {unwanted!r} if m in sys.modules))"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert got.splitlines()[-1] == "0 []", got
    assert out.stat().st_size > 0


def test_a_result_copies_pickles_and_lists_its_fields():
    import pickle

    import ssdkit
    from ssdkit import result as R

    r = ssdkit.run("mqsim-paper", overrides=["flow.0.requests=50"])
    s = R.replace(r, seed=7)
    assert (s.seed, r.seed, s.device is r.device) == (7, r.seed, True) and s.seed != r.seed
    flash = r.device.flash
    assert list(flash.keys()) == [f.name for f in R.fields(flash)] == list(flash.to_dict())
    assert flash["page_reads"] == flash.page_reads == r.raw["device"]["flash"]["page_reads"]
    back = pickle.loads(pickle.dumps(r))
    assert back.device == r.device and back.summary() == r.summary()
    with pytest.raises(AttributeError):
        r.seed = 3
