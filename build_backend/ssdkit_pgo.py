"""The profile the optimised build is guided by (see ssdkit_build.py's docstring): whether a
build uses it, and the rustc flags that do. Apart from ssdkit_build.py so that the tests can
import it without maturin."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PGO_DIR = ROOT / "build_backend" / "pgo"
PGO_PROFILE = PGO_DIR / "ssdkit.profdata.gz"
PGO_META = PGO_DIR / "profile.json"


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


def encoded_rustflags(env: dict[str, str] | os._Environ, profile: Path) -> str:
    """`CARGO_ENCODED_RUSTFLAGS` for a build with `profile`: the flags the user gave first
    (`CARGO_ENCODED_RUSTFLAGS`, else `RUSTFLAGS`, as cargo reads them), then the profile's.
    Cargo's encoded form (flags separated by 0x1f) keeps a folder with a space in its name one
    argument, and cargo reads it ahead of `RUSTFLAGS`."""
    if "CARGO_ENCODED_RUSTFLAGS" in env:
        given = [f for f in env["CARGO_ENCODED_RUSTFLAGS"].split("\x1f") if f]
    else:
        given = env.get("RUSTFLAGS", "").split()
    # A function changed since the profile was recorded gets no profile (rustc's default);
    # the warning LLVM gives for each is left out of the build's output.
    return "\x1f".join([*given, f"-Cprofile-use={profile}", "-Cllvm-args=-no-pgo-warn-mismatch"])


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
