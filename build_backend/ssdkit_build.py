"""ssdkit's PEP 517 build backend: maturin's, plus the C API in the wheel.

maturin builds the Python extension (crates/ssdkit-py) and packages one Rust library. The C API
is a second library, libssdkit.so (crates/ssdkit-c), with its header ssdkit.h. ssdkit-py
depends on ssdkit-c, so the cargo build maturin runs also builds libssdkit.so, in the same
profile, target folder and feature resolution: ssdkit-core is compiled (and, in the release
profile, link-time optimised) once per library, never twice. After maturin has made the
wheel, this backend adds that library and the committed header to it as
``ssdkit/c/lib/libssdkit.so`` and ``ssdkit/c/include/ssdkit.h`` (and to the wheel's RECORD); an
editable install gets them copied into python/ssdkit/c/ (gitignored), which it uses in place.
`ssdkit c-flags` prints the compiler flags that use them.

The optimised build is also profile-guided: where the committed profile
``build_backend/pgo/ssdkit.profdata.gz`` fits the Rust compiler (the same LLVM major version as
the one that recorded it, ``build_backend/pgo/profile.json``), the backend passes it to rustc
(``-Cprofile-use``), which lays out and inlines the simulator for the branches the recorded
workloads took: 10-12 % less time in the simulation loop (docs/performance.md). Where it does
not fit, or ``SSDKIT_PGO=0`` is set, the build is the plain optimised one and says why; the
simulated results are the same either way. ``make pgo`` records the profile again
(scripts/pgo.py).

Every other hook is maturin's.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import maturin
from maturin import (  # noqa: F401  (hooks used as they are)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)
from ssdkit_pgo import pgo_environment

ROOT = Path(__file__).resolve().parents[1]
HEADER = ROOT / "crates" / "ssdkit-c" / "include" / "ssdkit.h"
# Where the files go, inside the package (the wheel) and in the source tree (editable installs).
PACKAGE_DIR = "ssdkit/c"
SOURCE_DIR = ROOT / "python" / "ssdkit" / "c"
LIB_FILE = {"darwin": "libssdkit.dylib", "win32": "ssdkit.dll"}.get(sys.platform, "libssdkit.so")


def _fail(msg: str):
    sys.stderr.write(f"ssdkit build: {msg}\n")
    sys.exit(1)


def _option(args: list[str], name: str) -> str | None:
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def _built_library(config_settings) -> Path:
    """The libssdkit maturin's cargo build has just made (a dependency of the extension, so
    cargo keeps it in the profile's deps folder)."""
    args = maturin.get_maturin_pep517_args(config_settings)
    profile = _option(args, "--profile") or maturin.get_config().get("profile") or "release"
    triple = _option(args, "--target") or os.environ.get("CARGO_BUILD_TARGET")
    meta = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if meta.returncode != 0:
        _fail("`cargo metadata` failed: cannot find the target folder")
    target = Path(json.loads(meta.stdout)["target_directory"])
    if triple:
        target = target / triple
    lib = target / {"dev": "debug", "test": "debug", "bench": "release"}.get(profile, profile) / "deps" / LIB_FILE
    if not lib.is_file():
        _fail(f"the C library {lib} is missing after the build (crates/ssdkit-py depends on ssdkit-c to build it)")
    return lib


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _add_to_wheel(wheel: Path, files: dict[str, tuple[Path, int]]) -> None:
    """Rewrites the wheel with `files` (name in the wheel -> source, mode) added and RECORD
    listing them."""
    tmp = wheel.with_name(wheel.name + ".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        added = []
        for name, (path, mode) in files.items():
            data = path.read_bytes()
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | mode) << 16
            dst.writestr(info, data)
            added.append(_record_line(name, data))
        for item in src.infolist():
            if item.filename in files:
                continue
            data = src.read(item)
            if item.filename == record_name:
                lines = [ln for ln in data.decode().splitlines() if ln and ln.split(",")[0] not in files]
                data = ("\n".join(lines[:-1] + added + lines[-1:]) + "\n").encode()
            dst.writestr(item, data)
    os.replace(tmp, wheel)


def _c_files(config_settings) -> dict[str, tuple[Path, int]]:
    return {
        f"{PACKAGE_DIR}/lib/{LIB_FILE}": (_built_library(config_settings), 0o755),
        f"{PACKAGE_DIR}/include/{HEADER.name}": (HEADER, 0o644),
    }


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    pgo_environment()
    name = maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
    files = _c_files(config_settings)
    _add_to_wheel(Path(wheel_directory) / name, files)
    print(f"C API added to {name}: {', '.join(shlex.quote(f) for f in files)}", flush=True)
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    pgo_environment()
    name = maturin.build_editable(wheel_directory, config_settings, metadata_directory)
    for inner, (path, _mode) in _c_files(config_settings).items():
        dest = SOURCE_DIR / inner[len(PACKAGE_DIR) + 1 :]
        dest.parent.mkdir(parents=True, exist_ok=True)
        # Copied beside and renamed over: a program running on the old library keeps its copy.
        tmp = dest.with_name(dest.name + ".tmp")
        shutil.copy2(path, tmp)
        os.replace(tmp, dest)
    print(f"C API copied to {SOURCE_DIR} for the editable install", flush=True)
    return name


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)
