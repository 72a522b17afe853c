"""The Python view of the result (``ssdkit.Result`` and the classes it holds) checked field by
field against the schema the Rust core generates (docs/result.schema.json), walking the whole
schema: references, nested objects, arrays, optional and nullable fields. A field the core
writes must be reachable on the view with a compatible type, so a field added to the Rust
result without its Python counterpart fails here.

Which Python class reads which schema object is not listed by hand: it follows from the type
annotations, starting at ``Result``. A field the view keeps as a mapping (``dict[str, Any]``,
e.g. ``device.precondition`` or ``device.random_streams``) reaches every key below it, so the
schema may type those records in more detail without a change here; a mapping with typed
values (``dict[str, int]``) must take each of the schema's properties.

The schema is regenerated from the Rust types by ``make schema`` (a Rust test keeps it
current); nothing on the Python side is generated: after ``make schema`` this test names each
field the view lacks or reads with the wrong type."""

import copy
import json
import pathlib
import sys
import types
import typing
from typing import Any, Union

import pytest
import ssdkit
from ssdkit import _record
from ssdkit.result import Result

SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "docs" / "result.schema.json"

#: Document keys the view reads under another attribute name, by view class.
RENAMED = {
    ("OpStats", "latency_us"): "latency",
    ("OpStats", "latency_histogram"): "histogram",
}

#: Fields the schema allows to be null that the view reads as its default instead, and why.
NULL_READS_AS_DEFAULT = {
    ("Stats", "flush"): "written only when flushes completed: none is zero requests",
}

#: View fields with no counterpart in the core's document, and why.
VIEW_ONLY = {
    ("Result", "raw"): "the document itself",
    ("Result", "request_log"): "the per-request log, asked of ssdkit.run (request_log=True)",
    ("Result", "fairness"): "added by the Python side's fairness runs (ssdkit.run(..., fairness=True))",
}

_SCALARS = {"integer": (int,), "number": (float,), "string": (str,), "boolean": (bool,)}


def _hints(cls):
    import pandas  # result.py names it and `Any` in annotations only, under TYPE_CHECKING

    return typing.get_type_hints(cls, vars(sys.modules[cls.__module__]), {"pandas": pandas, "Any": Any})


def _is_union(tp):
    return typing.get_origin(tp) is Union or (hasattr(types, "UnionType") and isinstance(tp, types.UnionType))


def _split_none(tp):
    """``(allows None, the type without None)``."""
    if _is_union(tp):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return len(args) < len(typing.get_args(tp)), (args[0] if len(args) == 1 else Union[tuple(args)])
    return tp is Any, tp


def _has_default(f):
    return f.default is not _record.MISSING or f.default_factory is not _record.MISSING


class Walker:
    """Checks a schema node against a Python type, collecting every mismatch."""

    def __init__(self, schema):
        self.schema = schema
        self.errors = []
        self.fields = 0  # schema properties checked, to show the walk covered the schema
        self.views = {}  # view class -> the document keys its schema objects name

    def deref(self, node):
        while isinstance(node, dict):
            if "$ref" in node:
                node = self.schema["definitions"][node["$ref"].rsplit("/", 1)[1]]
            elif len(node.get("allOf", [])) == 1:
                node = node["allOf"][0]
            else:
                break
        return node

    def split_null(self, node):
        """``(nullable, the node without null)``: ``anyOf [X, null]`` or ``type [T, "null"]``."""
        if not isinstance(node, dict):
            return False, node
        for key in ("anyOf", "oneOf"):
            variants = node.get(key)
            if variants and any(self.deref(v) == {"type": "null"} for v in variants):
                rest = [v for v in variants if self.deref(v) != {"type": "null"}]
                return True, (self.deref(rest[0]) if len(rest) == 1 else {key: rest})
        t = node.get("type")
        if isinstance(t, list) and "null" in t:
            others = [x for x in t if x != "null"]
            return True, {**node, "type": others[0] if len(others) == 1 else others}
        return False, node

    def check(self, node, tp, where):
        node = self.deref(node)
        if node is True or (isinstance(node, dict) and not set(node) - {"description", "title", "default"}):
            return  # any JSON value: whatever the view holds it in reads it
        nullable, node = self.split_null(node)
        node = self.deref(node)
        allows_none, tp = _split_none(tp)
        if nullable and not allows_none:
            self.errors.append(f"{where}: the schema allows null, the view's type {tp} does not")
        if tp is Any:
            return
        variants = node.get("oneOf") or node.get("anyOf")
        if variants:
            for v in variants:
                self.check(v, tp, where)
            return
        t = node.get("type")
        if isinstance(t, list):
            for x in t:
                self.check({**node, "type": x}, tp, where)
            return
        origin = typing.get_origin(tp) or tp
        if "enum" in node or t in _SCALARS:
            want = _SCALARS[t or "string"]
            if origin is typing.Literal:
                ok = all(isinstance(v, want) for v in typing.get_args(tp))
            else:
                ok = isinstance(origin, type) and issubclass(origin, want) and not (t != "boolean" and origin is bool)
            if not ok:
                self.errors.append(f"{where}: the schema's {t} does not fit the view's {tp}")
        elif t == "array":
            if origin not in (list, tuple, typing.Sequence, __import__("collections").abc.Sequence):
                self.errors.append(f"{where}: the schema's array does not fit the view's {tp}")
                return
            args = [a for a in typing.get_args(tp) if a is not Ellipsis]
            self.check(node.get("items", True), args[0] if args else Any, f"{where}[]")
        elif t == "object" or "properties" in node:
            self.check_object(node, tp, origin, where)
        else:
            self.errors.append(f"{where}: schema node {json.dumps(node)[:80]} not understood by the walker")

    def check_object(self, node, tp, origin, where):
        props = node.get("properties", {})
        required = set(node.get("required", []))
        if _record.is_record(tp):
            fields = {f.name: f for f in _record.fields(tp)}
            hints = _hints(tp)
            self.views.setdefault(tp, set()).update(RENAMED.get((tp.__name__, n), n) for n in props)
            for name, sub in props.items():
                self.fields += 1
                attr = RENAMED.get((tp.__name__, name), name)
                if attr not in fields:
                    self.errors.append(f"{where}.{name}: in the schema, not on {tp.__name__}")
                    continue
                hint = hints[attr]
                if name not in required and not _has_default(fields[attr]) and not _split_none(hint)[0]:
                    self.errors.append(
                        f"{where}.{name}: optional in the schema, but {tp.__name__}.{attr} has no default"
                    )
                if (tp.__name__, attr) in NULL_READS_AS_DEFAULT and _has_default(fields[attr]):
                    hint = typing.Optional[hint]
                self.check(sub, hint, f"{where}.{name}")
            extra = node.get("additionalProperties")
            if extra not in (None, False):
                self.errors.append(f"{where}: the schema allows more keys than {tp.__name__} has fields")
        elif origin in (dict, typing.Mapping, __import__("collections").abc.Mapping):
            args = typing.get_args(tp)
            value = args[1] if len(args) == 2 else Any
            for name, sub in props.items():
                self.fields += 1
                self.check(sub, value, f"{where}.{name}")
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                self.check(extra, value, f"{where}.*")
        else:
            self.errors.append(f"{where}: the schema's object does not fit the view's {tp}")


def walk(schema, root=Result):
    w = Walker(schema)
    w.check(schema, root, "result")
    return w


@pytest.fixture(scope="module")
def schema():
    if sys.version_info < (3, 10):
        pytest.skip("the view's annotations (X | None) evaluate from Python 3.10")
    return json.loads(SCHEMA.read_text())


def test_the_result_view_reaches_every_field_of_the_schema(schema):
    w = walk(schema)
    assert not w.errors, "the Python result view and docs/result.schema.json differ:\n" + "\n".join(w.errors)
    # The walk went through the nested records, not just the top level.
    assert w.fields > 300


def _view_only(schema):
    """``(class, field)`` of each view field that no schema object names."""
    w = walk(schema)
    assert len(w.views) > 20
    return {(cls.__name__, f.name) for cls, keys in w.views.items() for f in _record.fields(cls) if f.name not in keys}


def test_every_field_of_the_view_comes_from_the_schema(schema):
    """The other way round: a field the core no longer writes leaves the view too."""
    assert _view_only(schema) == set(VIEW_ONLY)
    changed = copy.deepcopy(schema)
    del changed["definitions"][_ftl(changed)]["properties"]["gc_runs"]
    assert _view_only(changed) == {*VIEW_ONLY, ("FtlStats", "gc_runs")}


def _ftl(schema):
    """The definition of ``device.ftl``."""
    node = schema["definitions"]["DeviceResult"]["properties"]["ftl"]
    return (node.get("$ref") or node["allOf"][0]["$ref"]).rsplit("/", 1)[1]


@pytest.mark.parametrize(
    "change, expected",
    [
        # A new counter of the FTL, in the core's result but not in FtlStats.
        (
            lambda s: s["definitions"][_ftl(s)]["properties"].update(reclaim_merges={"type": "integer"}),
            "result.device.ftl.reclaim_merges: in the schema, not on FtlStats",
        ),
        # A new field deep in an array of records (steady-state rounds, per flow).
        (
            lambda s: s["definitions"]["RoundFlow"]["properties"].update(stall_us={"type": "number"}),
            "stall_us: in the schema, not on RoundFlow",
        ),
        # A field that becomes nullable.
        (
            lambda s: s["definitions"][_ftl(s)]["properties"].update(gc_runs={"type": ["integer", "null"]}),
            "result.device.ftl.gc_runs: the schema allows null",
        ),
        # A field that changes type.
        (
            lambda s: s["definitions"][_ftl(s)]["properties"].update(gc_runs={"type": "string"}),
            "result.device.ftl.gc_runs: the schema's string does not fit",
        ),
        # A required field that becomes optional: the view must have a default for it.
        (
            lambda s: s["definitions"][_ftl(s)]["required"].remove("gc_runs"),
            "result.device.ftl.gc_runs: optional in the schema, but FtlStats.gc_runs has no default",
        ),
        # A new top-level record.
        (
            lambda s: s["properties"].update(zones={"type": "array", "items": {"type": "object"}}),
            "result.zones: in the schema, not on Result",
        ),
        # A map of integers that gains a float.
        (
            lambda s: s["definitions"]["Backlog"]["properties"].update(share={"type": "number"}),
            "result.backlog.share: the schema's number does not fit the view's <class 'int'>",
        ),
    ],
)
def test_the_walk_notices_a_field_the_view_lacks(schema, change, expected):
    changed = copy.deepcopy(schema)
    change(changed)
    errors = walk(changed).errors
    assert any(expected in e for e in errors), errors


def test_a_null_flush_reads_as_zero_requests(small_result):
    doc = copy.deepcopy(small_result.raw)
    doc["device"]["stats"]["flush"] = None
    assert Result.from_dict(doc).device.stats.flush.count == 0


def test_records_kept_as_mappings_may_gain_typed_fields(schema):
    """The precondition record and the random streams are mappings on the view: typing them
    in the schema (an object with properties, in a definition of its own) needs no change."""
    changed = copy.deepcopy(schema)
    dev = changed["definitions"]["DeviceResult"]["properties"]
    changed["definitions"]["PreconditionRecord"] = {
        "type": "object",
        "required": ["mode", "wall_time_s"],
        "properties": {
            "mode": {"type": "string", "enum": ["fast", "write", "sequential", "empty"]},
            "wall_time_s": {"type": "number"},
            "predicted_write_amplification": {"type": ["number", "null"]},
            "history": {"type": "array", "items": {"type": "integer"}},
        },
    }
    dev["precondition"] = {"description": "typed", "allOf": [{"$ref": "#/definitions/PreconditionRecord"}]}
    dev["random_streams"] = {
        "type": "object",
        "properties": {"seed": {"type": "integer"}, "streams": {"type": "array", "items": {"type": "string"}}},
    }
    assert walk(changed).errors == []


def _variants(w, node, doc, path=()):
    """``(path, "absent" | "null")`` for each key of ``doc`` that the schema lets the core leave
    out or write as null, walking ``doc`` and the schema together (the first element of each
    array; not into ``config``, which the view keeps as written)."""
    node = w.deref(node)
    _, node = w.split_null(node)
    node = w.deref(node)
    if not isinstance(node, dict):
        return
    if isinstance(doc, list) and doc:
        yield from _variants(w, node.get("items", True), doc[0], (*path, 0))
    if not isinstance(doc, dict):
        return
    props, required = node.get("properties", {}), set(node.get("required", []))
    for key, value in doc.items():
        if key not in props or path + (key,) == ("config",):
            continue
        if key not in required:
            yield (*path, key), "absent"
        if value is not None and w.split_null(w.deref(props[key]))[0]:
            yield (*path, key), "null"
        yield from _variants(w, props[key], value, (*path, key))


# One run through most of the document's optional parts: the data cache, the mapping cache,
# interrupts, the latency breakdown, time series and steady-state rounds, TRIMs.
RICH = {
    "flash.blocks_per_plane": 128,
    "flow.0.requests": 4000,
    "flow.0.read_fraction": 0.5,
    "flow.0.trim_fraction": 0.1,
    "cache.mode": "write",
    "host.completion": "interrupt",
    "run.latency_breakdown": True,
    "run.timeseries_window_ms": 1,
    "steady_state.round_ms": 1,
}


def test_the_view_reads_a_document_without_each_optional_field(schema):
    """Each field the schema lets the core leave out (or write as null), taken out of a real
    result (or set to null) one at a time: the view still reads the document."""
    doc = ssdkit.run("mqsim-paper", overrides=RICH, steady_state=True).raw
    w = Walker(schema)
    variants = list(_variants(w, schema, doc))
    assert len(variants) > 40
    assert {"steady_state", "timeseries", "cache", "host", "latency_breakdown"} <= {p[-1] for p, _ in variants}
    failed = []
    for path, how in variants:
        changed = copy.deepcopy(doc)
        parent = changed
        for p in path[:-1]:
            parent = parent[p]
        if how == "absent":
            del parent[path[-1]]
        else:
            parent[path[-1]] = None
        try:
            Result.from_dict(changed)
        except (ssdkit.SsdkitError, TypeError, KeyError, AttributeError, ValueError) as e:
            failed.append(f"{'.'.join(map(str, path))} {how}: {e!r}")
    assert not failed, "the view cannot read the document with:\n" + "\n".join(failed)
