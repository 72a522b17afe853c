"""What the README shows works on the install the README gives (`pip install .`, no extras).

A fresh virtual environment gets the wheel and only the dependencies it declares (none of the
test extras). There, every command of the README's "Use" list runs as written, from a folder
laid out like the repository's root (the commands read its tests/data and examples), and must
end with status 0 and no traceback; and examples/c/closed_loop.c is compiled with the flags
`ssdkit c-flags` prints and run, against the installed libssdkit and ssdkit.h alone.

The wheel: SSDKIT_WHEEL (`make test-python` passes the one it built and installed for the other
tests); without it, one is built here as the Makefile does (`pip wheel --no-deps` with the quick
profile, reusing cargo's target folder). Without cargo, venv or a package index to fetch the
dependencies from, the tests are skipped, saying which.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import ssdkit.c
from ssdkit.cli import main
from test_readme import ROOT, readme_blocks, shell_commands

QUICK_BUILD = {"CARGO_PROFILE_RELEASE_LTO": "off", "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "16"}
# What the test extras and the dask extra bring: none may be in the fresh environment.
NOT_INSTALLED = ["pytest", "hypothesis", "jsonschema", "ruff", "dask"]
# pip's words when it cannot reach the package index.
NETWORK_ERRORS = re.compile(
    r"NewConnectionError|Temporary failure in name resolution|Network is unreachable|Max retries exceeded|ProxyError"
)
TIMEOUT_S = 1800


def use_commands() -> list[str]:
    """The command lines of the `sh` block under the README's "## Use" heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = text.index("## Use") + 1
    end = next((i for i in range(start, len(text)) if text[i].startswith("## ")), len(text))
    blocks = [b for b in readme_blocks() if start < b.line <= end and b.lang == "sh"]
    assert blocks, "README.md: no sh code block under ## Use"
    return shell_commands(blocks[0])


def _clean_env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _pip_version() -> tuple[int, ...]:
    try:
        import pip
    except ImportError:
        return (0,)
    return tuple(int(x) for x in re.findall(r"\d+", pip.__version__)[:2])


def _wheel(tmp: Path) -> Path:
    given = os.environ.get("SSDKIT_WHEEL")
    if given:
        assert Path(given).is_file(), f"SSDKIT_WHEEL={given}: no such file"
        return Path(given)
    if shutil.which("cargo") is None:
        pytest.skip("no cargo on the PATH: cannot build the wheel (or set SSDKIT_WHEEL to one)")
    out = tmp / "wheel"
    _pip_or_skip(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(ROOT)],
        {**os.environ, **QUICK_BUILD},
        unreachable="building the wheel needs maturin from the package index, which is unreachable",
        failed="pip wheel failed",
    )
    (whl,) = out.glob("ssdkit-*.whl")
    return whl


def _pip_or_skip(cmd: list, env: dict, *, unreachable: str, failed: str) -> None:
    """Runs a pip command; skips the test when it failed for want of the package index (this
    machine has no network), fails it on any other error."""
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    if p.returncode != 0 and NETWORK_ERRORS.search(p.stdout + p.stderr):
        pytest.skip(f"{unreachable}:\n{p.stderr[-1500:]}")
    assert p.returncode == 0, f"{failed}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment holding the wheel and its declared dependencies."""
    tmp = tmp_path_factory.mktemp("install")
    whl = _wheel(tmp)
    venv = tmp / "venv"
    # This interpreter's pip installs into the new environment (`pip --python`, pip >= 22.3) when
    # it can: an environment without its own pip is made in a fraction of the time. Bytecode is
    # compiled on import, for the modules the commands use, not for all of pandas and matplotlib.
    outer_pip = _pip_version() >= (22, 3)
    p = subprocess.run(
        [sys.executable, "-m", "venv", *(["--without-pip"] if outer_pip else []), str(venv)],
        capture_output=True,
        text=True,
        check=False,
    )
    if p.returncode != 0:
        pytest.skip(f"cannot make a virtual environment (python3-venv missing?): {p.stderr.strip()[-500:]}")
    py = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(py)] if outer_pip else [str(py), "-m", "pip"]
    _pip_or_skip(
        [*pip, "install", "--quiet", "--no-compile", str(whl)],
        _clean_env(venv),
        unreachable="the package index is unreachable, so the wheel's dependencies cannot be installed",
        failed=f"pip install {whl.name} failed",
    )
    return venv


def _run(cmd: str, cwd: Path, venv: Path) -> subprocess.CompletedProcess:
    p = subprocess.run(
        ["bash", "-c", "set -o pipefail; " + cmd],
        cwd=cwd,
        env=_clean_env(venv),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    out = f"--- stdout (end) ---\n{p.stdout[-3000:]}\n--- stderr (end) ---\n{p.stderr[-3000:]}"
    assert "Traceback (most recent call last)" not in p.stdout + p.stderr, f"`{cmd}` ended in a traceback\n{out}"
    assert p.returncode == 0, f"`{cmd}` exited with status {p.returncode}\n{out}"
    return p


def test_the_install_has_no_test_extras(installed):
    code = f"import importlib.util as u; print(' '.join(m for m in {NOT_INSTALLED!r} if u.find_spec(m)))"
    found = _run(f"python -c {shlex.quote(code)}", installed, installed).stdout.split()
    assert found == [], f"the fresh environment should hold only what `pip install .` gives, not {found}"


def test_readme_use_list_runs_on_the_default_install(installed, tmp_path):
    cmds = use_commands()
    assert any(c.startswith("ssdkit plot") for c in cmds) and any(c.startswith("ssdkit sweep") for c in cmds)
    for entry in ROOT.iterdir():  # the repository's root, as the README's examples expect
        if not entry.name.startswith(".") and entry.name != "target":
            (tmp_path / entry.name).symlink_to(entry)
    where = _run("python -c 'import ssdkit; print(ssdkit.__file__)'", tmp_path, installed).stdout.strip()
    assert Path(where).is_relative_to(installed), f"ssdkit imported from {where}, not the fresh install"
    for cmd in cmds:
        _run(cmd, tmp_path, installed)


def test_c_example_builds_against_the_install(installed, tmp_path):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or $CC)")
    flags = _run("ssdkit c-flags", tmp_path, installed).stdout.strip()
    assert str(ROOT) not in flags, f"the flags name the repository, not the install: {flags}"
    assert f"-Wl,-rpath,{installed}" in flags
    for part in ("--cflags", "--libs"):
        assert _run(f"ssdkit c-flags {part}", tmp_path, installed).stdout.strip() in flags
    exe = tmp_path / "closed_loop"
    cmd = [cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
    cmd += [str(ROOT / "examples" / "c" / "closed_loop.c"), *shlex.split(flags), "-o", str(exe)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, f"{shlex.join(cmd)}\n{p.stderr[-3000:]}"
    # No LD_LIBRARY_PATH: the run path the flags set finds the installed library.
    out = _run(f"{shlex.quote(str(exe))} 2000", tmp_path, installed).stdout
    assert "requests completed: 2000" in out, out


def test_c_flags_without_the_library_is_one_error_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(ssdkit.c, "HERE", tmp_path)
    assert main(["c-flags"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ssdkit: error: this ssdkit has no C API"), err
    assert str(tmp_path / "include" / "ssdkit.h") in err[0]
