"""The modules of the Python package form a tree: each imports only modules of layers below its
own, in the order declared here, so no import circle exists, at module level or inside a
function. A function-local import is kept only for an optional or heavy third-party package
(its import time is paid by the call that needs it, not by ``import ssdkit``), never to dodge
a circle between ssdkit's own modules.

The test reads the sources (ast), it does not import them: an import inside a function body or
under ``if TYPE_CHECKING:`` counts as much as one at the top. So do the modules the package
(``_LAZY``) and the command line (``_Lazy("api")``) import on first use, to start fast: they
too must be of lower layers."""

import ast
import pathlib
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "ssdkit"

#: The declared module order, bottom first. A module imports only modules of earlier layers;
#: modules of one layer do not import each other. A new module gets a place here.
LAYERS = (
    # The extension: the engine, the exception classes, the configuration schema.
    ("_native",),
    # Leaves: safe output files, the request log's native columns, TOML reading, a
    # configuration as dotted keys, the C API's files, the NBD server's option values,
    # modules imported on first use, the record classes that stand in for dataclasses,
    # indented JSON written fast, MQSim's random draws an import reproduces.
    ("outputs", "_columns", "_toml", "_dotted", "c", "serve_options", "_lazy", "_record", "_json", "_mqsim_random"),
    # Plots read a result document (a mapping), not the Result class.
    ("plot",),
    # The result model: the typed view of the result document.
    ("result",),
    # Running: fairness (n + 1 runs), the latency log writer, then the run API.
    ("fairness", "latency_log"),
    ("api",),
    # Configuration trees as TOML text and --set overrides on them, for the converters.
    ("_tomltext",),
    # Built on the run API: the request-at-a-time device, the fio and MQSim converters,
    # sweeps, the bench, HTML reports, the NBD server, the analytical models.
    ("device", "fio", "sweep", "bench", "report", "serve", "models"),
    # The probe fits its points with the models; calibrate runs sweeps and starts from the models.
    ("probe", "calibrate"),
    ("mqsim",),
    # The command line, and the package's public names.
    ("cli",),
    ("__init__", "__main__"),
)

#: Third-party packages a function may import where it needs them: optional, or heavy enough
#: that ``import ssdkit`` (and every CLI command) should not pay for them. ``resource`` is
#: Unix-only. ``subprocess`` (4.7 ms with its imports), ``shutil`` (2.2 ms: it loads bz2 and
#: lzma) and ``html`` (1.2 ms), measured with ``python -X importtime``, serve one command or
#: view each, where a whole ``ssdkit run`` of a small workload takes about 100 ms. ``numbers``
#: (0.6 ms) is needed only for a value that is not a built-in int, float or str (numpy's
#: scalars), which a command line run never passes. ``threading`` (1.0 ms with ``_weakrefset``)
#: serves `ssdkit serve --run` alone (`ssdkit.serve` imports it at the top). ``json`` (1.0 ms
#: with its decoder and scanner) and ``contextlib`` (0.3 ms): a command line run gets the
#: device's figures and its result from the core as objects and text, and neither parses
#: nor encodes JSON in Python.
LOCAL_IMPORTS_ALLOWED = {
    "json",
    "contextlib",
    "numbers",
    "threading",
    "subprocess",
    "shutil",
    "html",
    "numpy",
    "pandas",
    "pyarrow",
    "matplotlib",
    "dask",
    "distributed",
    "dask_jobqueue",
    "scipy",
    "tqdm",
    "resource",
}


def _modules():
    """Module name -> source path, for every module of the package (``c`` is a package)."""
    found = {p.stem: p for p in PACKAGE.glob("*.py")}
    for init in PACKAGE.glob("*/__init__.py"):
        found[init.parent.name] = init
    return found


def _imports(path):
    """``(target, line, where, top)`` for each import in ``path``: ``target`` the ssdkit module
    imported (or ``None`` for another package, then ``top`` is its top-level name), ``where``
    ``"module"`` or ``"function"``."""
    tree = ast.parse(path.read_text(), str(path))
    own = set(_modules()) | {"_native"}
    out = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            where = "function" if in_function else "module"
            if isinstance(child, ast.Import):
                for a in child.names:
                    parts = a.name.split(".")
                    if parts[0] == "ssdkit":
                        out.append((parts[1] if len(parts) > 1 else "__init__", child.lineno, where, None))
                    else:
                        out.append((None, child.lineno, where, parts[0]))
            elif isinstance(child, ast.ImportFrom):
                mod = child.module or ""
                if child.level == 0 and mod.split(".")[0] != "ssdkit":
                    out.append((None, child.lineno, where, mod.split(".")[0]))
                    continue
                parts = mod.split(".")[1:] if child.level == 0 else [p for p in mod.split(".") if p]
                if parts:
                    out.append((parts[0], child.lineno, where, None))
                else:  # `from . import x, y`: each name a module (or a name of __init__)
                    for a in child.names:
                        out.append((a.name if a.name in own else "__init__", child.lineno, where, None))
            elif (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Name)
                and child.func.id == "_Lazy"
                and child.args
                and isinstance(child.args[0], ast.Constant)
            ):
                # The command line's modules imported on first use: edges like any other.
                out.append((child.args[0].value, child.lineno, "lazy", None))
            elif isinstance(child, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "_LAZY" for t in child.targets
            ):
                # The package's names imported on first use (PEP 562): their modules.
                for v in child.value.values:
                    out.append((v.value, child.lineno, "lazy", None))
            visit(child, inner)

    visit(tree, False)
    return out


def _graph():
    """Module -> {imported module: [(line, where)]}, over ssdkit's own modules."""
    g = {}
    for name, path in _modules().items():
        edges = g.setdefault(name, {})
        for target, line, where, _ in _imports(path):
            if target is not None and target != name:
                edges.setdefault(target, []).append((line, where))
    g.setdefault("_native", {})
    return g


def _cycles(g):
    """Every strongly connected component of more than one module (Tarjan), each sorted."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    sys.setrecursionlimit(max(1000, sys.getrecursionlimit()))

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, {}):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return comps


def test_every_module_has_a_place_in_the_declared_order():
    placed = [m for layer in LAYERS for m in layer]
    assert len(placed) == len(set(placed)), "a module is in two layers"
    missing = sorted(set(_modules()) - set(placed))
    assert not missing, f"modules without a layer in LAYERS: {missing}"
    gone = sorted(set(placed) - set(_modules()) - {"_native"})
    assert not gone, f"LAYERS names modules that do not exist: {gone}"


def test_no_import_cycle_among_the_modules():
    g = _graph()
    cycles = _cycles(g)

    def show(comp):
        edges = [
            f"{a} -> {b} (line {line}, {where})"
            for a in comp
            for b, uses in sorted(g[a].items())
            if b in comp
            for line, where in uses
        ]
        return f"{' <-> '.join(comp)}: " + "; ".join(edges)

    assert not cycles, "import cycles:\n" + "\n".join(show(c) for c in cycles)


def test_each_module_imports_only_lower_layers():
    rank = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    wrong = [
        f"{a} (layer {rank[a]}) imports {b} (layer {rank.get(b, '?')}) at line {line} ({where})"
        for a, edges in sorted(_graph().items())
        if a in rank
        for b, uses in sorted(edges.items())
        for line, where in uses
        if rank.get(b, len(LAYERS)) >= rank[a]
    ]
    assert not wrong, "imports against the declared order:\n" + "\n".join(wrong)


def test_function_local_imports_are_only_for_heavy_or_optional_packages():
    wrong = []
    for name, path in sorted(_modules().items()):
        for target, line, where, top in _imports(path):
            if where != "function":
                continue
            if target is not None:
                wrong.append(f"{name}.py:{line} imports ssdkit's {target} inside a function")
            elif top not in LOCAL_IMPORTS_ALLOWED:
                wrong.append(f"{name}.py:{line} imports {top} inside a function (cheap: import it at the top)")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from . import api\n", {"api"}),
        ("from .result import Result\n", {"result"}),
        ("def f():\n    from .device import OPS\n", {"device"}),
        ("import ssdkit.sweep\n", {"sweep"}),
        ("import ssdkit\n", {"__init__"}),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .api import run\n", {"api"}),
    ],
)
def test_the_reader_sees_every_form_of_import(tmp_path, source, expected):
    p = tmp_path / "m.py"
    p.write_text(source)
    assert {t for t, *_ in _imports(p) if t is not None} == expected


def test_the_cycle_finder_finds_a_cycle_through_a_function_local_import():
    g = {"a": {"b": [(1, "module")]}, "b": {"c": [(2, "module")]}, "c": {"a": [(9, "function")]}, "d": {}}
    assert _cycles(g) == [["a", "b", "c"]]
    assert _cycles({"a": {"b": []}, "b": {}}) == []
