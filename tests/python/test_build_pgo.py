"""The build backend's use of the committed profile (build_backend/ssdkit_pgo.py): a build
takes it only where the compiler can read it and nobody asked otherwise, and says why."""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build_backend"))
import ssdkit_pgo

RUSTC = "rustc 1.95.0 (59807616e 2026-04-14)\nhost: x86_64-unknown-linux-gnu\nLLVM version: {}\n"
META = {"llvm_major": 22, "source": "abc1234"}


def test_the_profile_is_used_by_the_compiler_that_can_read_it():
    use, why = ssdkit_pgo.pgo_decision({}, META, RUSTC.format("22.1.2"))
    assert use and "abc1234" in why


@pytest.mark.parametrize(
    ("env", "meta", "rustc", "said"),
    [
        ({"SSDKIT_PGO": "0"}, META, RUSTC.format("22.1.2"), "SSDKIT_PGO=0"),
        ({"RUSTFLAGS": "-Cprofile-generate=/tmp/x"}, META, RUSTC.format("22.1.2"), "already set a profile"),
        ({"CARGO_ENCODED_RUSTFLAGS": "-Cprofile-use=/p"}, META, RUSTC.format("22.1.2"), "already set a profile"),
        ({"CARGO_PROFILE_RELEASE_LTO": "off"}, META, RUSTC.format("22.1.2"), "CARGO_PROFILE_RELEASE_LTO set"),
        ({}, None, RUSTC.format("22.1.2"), "no profile"),
        ({}, META, None, "rustc -vV failed"),
        ({}, META, RUSTC.format("21.1.0"), "recorded with LLVM 22; this rustc has LLVM 21"),
        ({}, META, "rustc 1.95.0\n", "this rustc has LLVM None"),
    ],
)
def test_a_build_goes_without_it_and_says_why(env, meta, rustc, said):
    use, why = ssdkit_pgo.pgo_decision(env, meta, rustc)
    assert not use
    assert said in why


@pytest.mark.parametrize(
    ("env", "given"),
    [
        # No flags given: the ones .cargo/config.toml gives this machine, which cargo would
        # drop once the profile's flags are set.
        ({}, ["-Cconfig"]),
        ({"RUSTFLAGS": " -Ctarget-cpu=native  -g "}, ["-Ctarget-cpu=native", "-g"]),
        ({"CARGO_ENCODED_RUSTFLAGS": "-Cfoo=a b\x1f-g", "RUSTFLAGS": "-Cignored"}, ["-Cfoo=a b", "-g"]),
        # Set but empty replaces the configuration's, as cargo reads them.
        ({"CARGO_ENCODED_RUSTFLAGS": ""}, []),
        ({"RUSTFLAGS": ""}, []),
    ],
)
def test_the_users_flags_stay_first_and_a_path_with_a_space_stays_one_argument(env, given, monkeypatch):
    monkeypatch.setattr(ssdkit_pgo, "config_rustflags", lambda: ["-Cconfig"])
    profile = Path("/a folder/ssdkit.profdata")
    flags = ssdkit_pgo.encoded_rustflags(env, profile).split("\x1f")
    assert flags == [*given, "-Cprofile-use=/a folder/ssdkit.profdata", "-Cllvm-args=-no-pgo-warn-mismatch"]


def test_the_cargo_configuration_gives_each_processor_its_own_flags(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        '[target.\'cfg(target_arch = "x86_64")\']\nrustflags = ["-Ctarget-cpu=x86-64-v2"]\n'
        '[target.\'cfg(target_arch = "aarch64")\']\nrustflags = ["-Ca", "-Cb"]\n'
    )
    assert ssdkit_pgo.config_rustflags("x86_64", config) == ["-Ctarget-cpu=x86-64-v2"]
    assert ssdkit_pgo.config_rustflags("AMD64", config) == ["-Ctarget-cpu=x86-64-v2"]
    assert ssdkit_pgo.config_rustflags("arm64", config) == ["-Ca", "-Cb"]
    assert ssdkit_pgo.config_rustflags("riscv64", config) == []
    assert ssdkit_pgo.config_rustflags("x86_64", tmp_path / "none.toml") == []
    config.write_text('[target.x86_64-unknown-linux-gnu]\nrustflags = ["-Cx"]\n')
    with pytest.raises(ValueError, match=r"x86_64-unknown-linux-gnu.*only \[target.'cfg\(target_arch"):
        ssdkit_pgo.config_rustflags("x86_64", config)
    config.write_text('[build]\nrustflags = ["-Cx"]\n')
    with pytest.raises(ValueError, match=r"\[build\] rustflags.*only \[target.'cfg\(target_arch"):
        ssdkit_pgo.config_rustflags("x86_64", config)
    # The repository's own: x86-64 builds target x86-64-v2 (docs/performance.md).
    assert ssdkit_pgo.config_rustflags("x86_64") == ["-Ctarget-cpu=x86-64-v2"]


def test_the_committed_profile_is_whole_and_described():
    # The file rustc reads: LLVM's indexed profile (its magic number), whole (gzip checks its
    # CRC), with what recorded it in profile.json.
    meta = json.loads(ssdkit_pgo.PGO_META.read_text())
    assert isinstance(meta["llvm_major"], int) and meta["source"] and meta["workloads"]
    data = gzip.decompress(ssdkit_pgo.PGO_PROFILE.read_bytes())
    assert data[:8] == b"\xfflprofi\x81"


def test_a_damaged_profile_or_description_builds_without_it_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("CARGO_ENCODED_RUSTFLAGS", raising=False)
    monkeypatch.setattr(ssdkit_pgo, "ROOT", tmp_path)
    monkeypatch.setattr(ssdkit_pgo, "pgo_decision", lambda env, meta, rustc: (True, "used"))
    meta, profile = tmp_path / "profile.json", tmp_path / "ssdkit.profdata.gz"
    monkeypatch.setattr(ssdkit_pgo, "PGO_META", meta)
    monkeypatch.setattr(ssdkit_pgo, "PGO_PROFILE", profile)
    profile.write_bytes(gzip.compress(b"\xfflprofi\x81")[:-3])  # cut short
    meta.write_text("{not json")
    ssdkit_pgo.pgo_environment()
    assert "profile.json unreadable" in capsys.readouterr().out
    meta.write_text(json.dumps(META))
    ssdkit_pgo.pgo_environment()
    assert "ssdkit.profdata.gz is damaged" in capsys.readouterr().out
    assert "CARGO_ENCODED_RUSTFLAGS" not in os.environ
    assert not (tmp_path / "target").exists()
