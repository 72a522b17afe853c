"""The profile the optimised build is guided by (see ssdkit_build.py's docstring): whether a
build uses it, and the rustc flags that do. Apart from ssdkit_build.py so that the tests can
import it without maturin."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import platform
import re
import subprocess
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: maturin itself depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PGO_DIR = ROOT / "build_backend" / "pgo"
PGO_PROFILE = PGO_DIR / "ssdkit.profdata.gz"
PGO_META = PGO_DIR / "profile.json"
CARGO_CONFIG = ROOT / ".cargo" / "config.toml"
# Python's names for a machine (`platform.machine()`) -> Rust's `target_arch`.
_RUST_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def _llvm_major(rustc_vv: str) -> int | None:
    """The LLVM major version in `rustc -vV`'s output."""
    m = re.search(r"^LLVM version: (\d+)", rustc_vv, re.MULTILINE)
    return int(m.group(1)) if m else None


def pgo_decision(env: dict[str, str], meta: dict | None, rustc_vv: str | None) -> tuple[bool, str]:
    """Whether this build uses the committed profile, and why (the line the build prints)."""
    if env.get("SSDKIT_PGO", "1") == "0":
        return False, "profile-guided optimisation off (SSDKIT_PGO=0)"
    flags = env.get("RUSTFLAGS", "") + " " + env.get("CARGO_ENCODED_RUSTFLAGS", "")
    if "profile-generate" in flags or "profile-use" in flags:
        return False, "RUSTFLAGS already set a profile; the committed one is not added"
    # The profile names functions as the release profile's build does (fat LTO, one codegen
    # unit: Cargo.toml); a build that overrides those (`make test`'s quick wheel) names them
    # otherwise, and the profile would match nothing.
    changed = sorted(k for k in env if k.startswith("CARGO_PROFILE_RELEASE_"))
    if changed:
        return False, f"{', '.join(changed)} set: the profile fits only the release profile's own build"
    if meta is None:
        return False, f"no profile ({PGO_META.relative_to(ROOT)} missing)"
    if rustc_vv is None:
        return False, "rustc -vV failed; building without the profile"
    have, want = _llvm_major(rustc_vv), meta.get("llvm_major")
    if have != want:
        return False, (
            f"the committed profile was recorded with LLVM {want}; this rustc has LLVM {have}: building "
            "without it (`make pgo` records one for this compiler)"
        )
    return True, f"profile-guided optimisation with {PGO_PROFILE.relative_to(ROOT)} (recorded at {meta.get('source')})"


def config_rustflags(machine: str | None = None, config: Path | None = None) -> list[str]:
    """The rustflags `.cargo/config.toml` gives a build on `machine` (default: this one's
    processor; its `[target.'cfg(target_arch = "...")']` tables, the only kind it may hold).
    Cargo uses them only where neither `RUSTFLAGS` nor `CARGO_ENCODED_RUSTFLAGS` is set, so a
    build that sets one for its profile adds them itself."""
    config = config or CARGO_CONFIG
    if not config.is_file():
        return []
    arch = (machine or platform.machine()).lower()
    arch = _RUST_ARCH.get(arch, arch)
    cfg = tomllib.loads(config.read_text())
    # Cargo would use these too (where no target table gives flags): refused rather than
    # left out of a build that sets its own flags.
    if "rustflags" in cfg.get("build", {}):
        raise ValueError(
            f"{config}: [build] rustflags: the build backend reads only [target.'cfg(target_arch = \"...\")'] tables"
        )
    flags: list[str] = []
    for key, table in cfg.get("target", {}).items():
        m = re.fullmatch(r'cfg\(target_arch = "(\w+)"\)', key)
        if m is None:
            raise ValueError(
                f"{config}: [target.'{key}']: the build backend reads only [target.'cfg(target_arch = \"...\")'] tables"
            )
        if m.group(1) == arch:
            flags += table.get("rustflags", [])
    return flags


def given_rustflags(env: dict[str, str] | os._Environ) -> list[str]:
    """The flags cargo would pass rustc without ssdkit's build: `CARGO_ENCODED_RUSTFLAGS`,
    else `RUSTFLAGS` (set, even empty, either replaces the configuration's), else
    `.cargo/config.toml`'s for this machine."""
    if "CARGO_ENCODED_RUSTFLAGS" in env:
        return [f for f in env["CARGO_ENCODED_RUSTFLAGS"].split("\x1f") if f]
    if "RUSTFLAGS" in env:
        return env["RUSTFLAGS"].split()
    return config_rustflags()


def encoded_rustflags(env: dict[str, str] | os._Environ, profile: Path) -> str:
    """`CARGO_ENCODED_RUSTFLAGS` for a build with `profile`: the flags cargo would have used
    first (`given_rustflags`), then the profile's. Cargo's encoded form (flags separated by
    0x1f) keeps a folder with a space in its name one argument, and cargo reads it ahead of
    `RUSTFLAGS`."""
    # A function changed since the profile was recorded gets no profile (rustc's default);
    # the warning LLVM gives for each is left out of the build's output.
    return "\x1f".join([*given_rustflags(env), f"-Cprofile-use={profile}", "-Cllvm-args=-no-pgo-warn-mismatch"])


def pgo_environment() -> None:
    """Adds ``-Cprofile-use`` to the cargo build maturin is about to run, when the committed
    profile fits (see the module's docstring); prints what it decided."""
    try:
        meta = json.loads(PGO_META.read_text()) if PGO_META.is_file() and PGO_PROFILE.is_file() else None
    except (OSError, ValueError) as e:
        print(f"ssdkit build: {PGO_META.relative_to(ROOT)} unreadable ({e}); building without the profile", flush=True)
        return
    try:
        rustc = subprocess.run(["rustc", "-vV"], cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        rustc = None
    use, why = pgo_decision(dict(os.environ), meta, rustc)
    print(f"ssdkit build: {why}", flush=True)
    if not use:
        return
    # Unpacked beside the build (rustc reads the raw file), once per profile.
    digest = hashlib.sha256(PGO_PROFILE.read_bytes()).hexdigest()[:16]
    raw = ROOT / "target" / "pgo" / f"ssdkit-{digest}.profdata"
    if not raw.is_file():
        try:
            data = gzip.decompress(PGO_PROFILE.read_bytes())
        except (OSError, EOFError) as e:
            print(f"ssdkit build: {PGO_PROFILE.relative_to(ROOT)} is damaged ({e}); building without it", flush=True)
            return
        raw.parent.mkdir(parents=True, exist_ok=True)
        tmp = raw.with_name(raw.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, raw)
    os.environ["CARGO_ENCODED_RUSTFLAGS"] = encoded_rustflags(os.environ, raw)
