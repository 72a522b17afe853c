"""The Python API's error contract (README "Errors"): a bad value raises ssdkit.ConfigError (an
ssdkit.SsdkitError) naming the key or argument; a wrong kind of argument raises TypeError.
Nothing escapes as a bare ValueError, RecursionError, UnicodeError or OSError."""

import os

import pytest
import ssdkit
from conftest import TINY


class BytesPath:
    """A path-like whose __fspath__ returns bytes."""

    def __init__(self, b):
        self.b = b

    def __fspath__(self):
        return self.b


class Opaque:
    def __repr__(self):
        return "<opaque>"


class BadRepr:
    def __repr__(self):
        raise RuntimeError("no repr")


def nested(depth):
    d = 1
    for _ in range(depth):
        d = {"x": d}
    return d


def cyclic():
    a = []
    a.append(a)
    return a


ENTRY_POINTS = {
    "run": lambda **kw: ssdkit.run(**kw),
    "resolve_config": lambda **kw: ssdkit.resolve_config(**kw),
    "device_info": lambda **kw: ssdkit.device_info(**kw),
}

# (name, keyword arguments, expected exception, fragments the message must hold)
BAD_VALUES = [
    ("None value", {"overrides": {"flash.channels": None}}, ["flash.channels", "None", "no TOML form", "int"]),
    ("None keyword", {"flash__channels": None}, ["flash.channels", "None"]),
    ("object value", {"overrides": {"flow.0.name": Opaque()}}, ["flow.0.name", "Opaque", "<opaque>"]),
    ("broken repr", {"overrides": {"flow.0.name": BadRepr()}}, ["flow.0.name", "BadRepr"]),
    ("bytes value", {"overrides": {"flow.0.name": b"x"}}, ["flow.0.name", "bytes"]),
    ("set value", {"overrides": {"flow.0.size_list": {1, 2}}}, ["flow.0.size_list", "set"]),
    ("object in a list", {"overrides": {"flow.0.size_list": [Opaque()]}}, ["flow.0.size_list", "Opaque"]),
    ("None in a table", {"overrides": {"flow.0.size_list": [{"bytes": None}]}}, ["flow.0.size_list.bytes", "None"]),
    ("5000 levels", {"overrides": {"flash.channels": nested(5000)}}, ["flash.channels", "nested more than 32"]),
    ("cycle", {"overrides": {"flow.0.size_list": cyclic()}}, ["flow.0.size_list", "cycle"]),
    ("surrogate value", {"overrides": {"flow.0.name": "a\udcffb"}}, ["flow.0.name", "UTF-8"]),
    ("int key", {"overrides": {1: 2}}, ["override key 1"]),
    ("None key", {"overrides": {None: 2}}, ["override key None"]),
    ("tuple key", {"overrides": {("flash", "channels"): 2}}, ["('flash', 'channels')"]),
    ("empty key", {"overrides": {"": 2}}, ["override key ''"]),
    ("key with =", {"overrides": {"flash.channels=3": 2}}, ["flash.channels=3", "'='"]),
    ("key with newline", {"overrides": {"flash.channels\nx": 2}}, ["flash.channels\\nx", "newline"]),
    ("key with NUL", {"overrides": {"flash\0channels": 2}}, ["flash\\x00channels", "NUL"]),
    ("keyword key with =", {"**": {"a=b": 1}}, ["a=b", "'='"]),
    ("non-str table key", {"overrides": {"flow.0.size_list": [{1: 2}]}}, ["flow.0.size_list", "table key 1"]),
    ("unknown key", {"overrides": {"flash.chanels": 2}}, ["chanels"]),
    ("non-str list entry", {"overrides": ["flash.channels=4", 5]}, ["overrides[1]", "5"]),
    ("None list entry", {"overrides": [None]}, ["overrides[0]", "None"]),
    ("NUL in list entry", {"overrides": ['flow.0.name="a\0"']}, ["flow.0.name", "NUL"]),
    ("surrogate in list entry", {"overrides": ['flow.0.name="\udcff"']}, ["flow.0.name", "UTF-8"]),
    ("list entry without =", {"overrides": ["flash.channels"]}, ["flash.channels"]),
    ("seed as text", {"seed": "seven"}, ["run.seed"]),
    ("seed as None list", {"seed": [None]}, ["run.seed", "None"]),
    ("NUL in config name", {"config": "mqsim\0paper"}, ["`config`", "NUL"]),
    ("NUL in config path", {"config": "a\0b.toml"}, ["`config`", "NUL"]),
    ("NUL in path-like", {"config": BytesPath(b"dev\0.toml")}, ["`config`", "NUL"]),
    ("invalid bytes path", {"config": BytesPath(b"\xff\xfe.toml")}, ["`config`", "not valid UTF-8", "\\xff"]),
    ("surrogate config path", {"config": "dev\udcff.toml"}, ["`config`", "UTF-8"]),
    ("surrogate TOML text", {"config": "[flash]\nchannels = 4 # \udcff\n"}, ["`config`", "UTF-8"]),
    ("empty path-like", {"config": BytesPath(b"")}, ["`config`", "empty"]),
    ("surrogate preset", {"preset": "mqsim\udcff"}, ["`preset`", "UTF-8"]),
]


def call(entry, kw):
    kw = dict(kw)
    extra = kw.pop("**", {})
    kw.setdefault("config" if "preset" not in kw else "preset", "mqsim-paper")
    return ENTRY_POINTS[entry](**kw, **extra)


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("name, kw, fragments", BAD_VALUES, ids=[c[0] for c in BAD_VALUES])
def test_a_bad_value_is_a_config_error_naming_it(entry, name, kw, fragments):
    with pytest.raises(ssdkit.ConfigError) as e:
        call(entry, kw)
    assert isinstance(e.value, ssdkit.SsdkitError)
    msg = str(e.value)
    for f in fragments:
        assert f in msg, (f, msg)


PATH_VALUES = [
    ("NUL", "a\0b.snap", ["NUL"]),
    ("invalid bytes", BytesPath(b"\xff.snap"), ["not valid UTF-8"]),
    ("surrogate", "x\udcff.snap", ["UTF-8"]),
    ("empty", "", ["empty"]),
]


@pytest.mark.parametrize("name, path, fragments", PATH_VALUES, ids=[c[0] for c in PATH_VALUES])
def test_bad_snapshot_and_output_paths(tmp_path, monkeypatch, name, path, fragments):
    monkeypatch.chdir(tmp_path)  # an accidental write would land here
    with pytest.raises(ssdkit.ConfigError) as e:
        ssdkit.run("mqsim-paper", overrides=TINY, snapshot=path)
    assert "`snapshot`" in str(e.value) and all(f in str(e.value) for f in fragments)
    with pytest.raises(ssdkit.ConfigError) as e:
        ssdkit.precondition("mqsim-paper", path, overrides=TINY)
    assert "`output`" in str(e.value) and all(f in str(e.value) for f in fragments)
    assert os.listdir(tmp_path) == []


def test_converters_take_the_same_path_rules(tmp_path):
    with pytest.raises(ssdkit.FioError, match="`job`.*NUL"):
        ssdkit.fio_to_toml(BytesPath(b"j\0.fio"))
    with pytest.raises(ssdkit.MqsimError, match="`ssdconfig.xml`.*not valid UTF-8"):
        ssdkit.import_mqsim(BytesPath(b"\xff.xml"))
    with pytest.raises(ssdkit.MqsimError, match="ssdconfig.xml text.*UTF-8"):
        ssdkit.import_mqsim("<Execution_Parameter_Set>\udcff</Execution_Parameter_Set>")
    with pytest.raises(ssdkit.ConfigError, match="flow.0.name.*None"):
        ssdkit.fio_to_toml("[j]\nrw=read\n", overrides={"flow.0.name": None})


# (name, call, fragment of the TypeError)
WRONG_KINDS = [
    ("overrides as a string", lambda: ssdkit.run("mqsim-paper", overrides="flash.channels=4"), "single string"),
    ("overrides as bytes", lambda: ssdkit.run("mqsim-paper", overrides=b"flash.channels=4"), "single string"),
    ("overrides as an int", lambda: ssdkit.run("mqsim-paper", overrides=4), "not int"),
    ("overrides as an object", lambda: ssdkit.run("mqsim-paper", overrides=Opaque()), "not Opaque"),
    ("config as an int", lambda: ssdkit.run(42), "not int"),
    ("config as bytes", lambda: ssdkit.run(b"mqsim-paper"), "not bytes"),
    ("config as a list", lambda: ssdkit.run(["mqsim-paper"]), "not list"),
    ("preset as an int", lambda: ssdkit.run(preset=1), "preset must be a str"),
    ("snapshot as an int", lambda: ssdkit.run("mqsim-paper", snapshot=3), "snapshot"),
    ("output as bytes", lambda: ssdkit.precondition("mqsim-paper", b"x.snap"), "output"),
    ("output missing", lambda: ssdkit.precondition("mqsim-paper"), "output"),
    ("__fspath__ returns an int", lambda: ssdkit.run(BytesPath(3)), "__fspath__"),
]


@pytest.mark.parametrize("name, fn, fragment", WRONG_KINDS, ids=[c[0] for c in WRONG_KINDS])
def test_a_wrong_kind_of_argument_is_a_type_error(name, fn, fragment):
    with pytest.raises(TypeError) as e:
        fn()
    assert not isinstance(e.value, ssdkit.SsdkitError)
    assert fragment in str(e.value)


def test_good_values_still_work(tmp_path):
    # The checks must not refuse what the API documents: numbers of every kind, nested
    # tables at real depth, path-likes returning UTF-8 bytes, and text paths.
    import numpy as np

    d = ssdkit.device_info(
        "mqsim-paper", overrides={"flash.channels": np.int64(4), "ftl.spare_factor": np.float32(0.25)}
    )
    assert d["channels"] == 4
    sizes = [{"bytes": 4096, "weight": 3}, {"bytes": 8192, "weight": 1}]
    text = ssdkit.resolve_config("mqsim-paper", overrides={"flow.0.size": "list", "flow.0.size_list": sizes})
    assert "8192" in text
    cfg = tmp_path / "dév.toml"
    cfg.write_text(ssdkit.preset_toml("x25m"))
    assert ssdkit.resolve_config(BytesPath(os.fsencode(cfg))) == ssdkit.resolve_config(str(cfg))
