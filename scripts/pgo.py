#!/usr/bin/env python3
"""Records the profile the optimised build is guided by (`make pgo`).

    python scripts/pgo.py            # build, train, write build_backend/pgo/
    python scripts/pgo.py --keep     # keep target/pgo/ (the instrumented wheel, venv, raw data)

Steps: builds the wheel as `pip install .` does but instrumented (`-Cprofile-generate`), installs
it in a fresh environment (target/pgo/venv), runs the training workloads below through the
`ssdkit` command as users run it, merges the counts with LLVM's `llvm-profdata` (rustup's
llvm-tools component: `rustup component add llvm-tools`), and writes
build_backend/pgo/ssdkit.profdata.gz with build_backend/pgo/profile.json (the compiler that
recorded it, the commit, the workloads). build_backend/ssdkit_build.py passes the profile to
rustc in every later build whose compiler has the same LLVM major version.

The training covers every kind of run the simulator does, so that no common path is laid
out as if it never ran: `ssdkit bench` (its 15 cases: random and sequential reads, writes
with GC from a snapshot, the mapping and data caches, a trace replay, MQSim imports, the DRAM-
like NVM), the MQSim comparison's twelve inputs (scripts/mqsim_compare.py) with and without
--mqsim-compat, each preset's demo flow, and runs with the latency breakdown, time series,
steady-state rounds and fairness, and a Python host program stepping a Device
(examples/python/closed_loop.py), and `ssdkit serve` answering fio's reads where fio is
installed (examples/python/serve_bench.py). The C API is not trained: its own code is laid
out as code that never ran (the simulator under it as trained). A
profile recorded before a change still guides the functions that did not change; record it
again after changing the simulation loop.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "build_backend"))
import mqsim_compare
import ssdkit_pgo  # where the build reads the profile, and how it reads rustc's LLVM version

WORK = REPO / "target" / "pgo"
OUT_DIR = ssdkit_pgo.PGO_DIR


def _run(cmd: list[str], **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def _llvm_profdata() -> Path:
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], stdout=subprocess.PIPE, text=True, check=True).stdout
    host = next(
        ln.split(": ", 1)[1]
        for ln in subprocess.run(["rustc", "-vV"], stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines()
        if ln.startswith("host: ")
    )
    tool = Path(sysroot.strip()) / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    if not tool.is_file():
        raise SystemExit(f"{tool} is missing: install it with `rustup component add llvm-tools`")
    return tool


# The `ssdkit` command without its last step: `ssdkit run` leaves through os._exit (no
# interpreter teardown), which would skip the exit handler that writes the counts.
_CLI = "import sys; from ssdkit.cli import main; sys.exit(main(sys.argv[1:]))"


def _training(py: Path, folder: Path) -> list[str]:
    """Runs the training workloads with the environment's Python `py`; returns their
    descriptions."""
    done = []
    out = folder / "out.json"

    def ssdkit(*args: str) -> None:
        print("+ ssdkit", *args, flush=True)
        p = subprocess.run(
            [str(py), "-c", _CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False
        )
        if p.returncode != 0:
            raise SystemExit(f"ssdkit {' '.join(args)} failed (status {p.returncode}):\n{p.stderr[-3000:]}")
        # Described by the files' names, not the temporary folder's.
        done.append(" ".join(["ssdkit", *(a.replace(f"{folder}/", "") for a in args)]))

    def run(*args: str) -> None:
        ssdkit("run", *args, "--no-progress", "-o", str(out))

    ssdkit("bench", "--requests", "100000", "--jobs", "1")
    inputs = folder / "mqsim"
    inputs.mkdir()
    for ideal in (False, True):
        for name in (*mqsim_compare.SYNTHETIC, mqsim_compare.TRACE):
            dev, wl, scenario = mqsim_compare._inputs(inputs, mqsim_compare.SHIPPED / "ssdconfig.xml", name, ideal, 0.2)
            for compat in ([], ["--mqsim-compat"]):
                run("--mqsim", str(dev), str(wl), "--scenario", str(scenario), *compat)
    for preset in ("mqsim-paper", "x25m", "nvmesim-block", "nvmesim-dram", "optane-p4800x", "largest-qlc"):
        run(preset, "--set", "flow.0.requests=50000")
    run("mqsim-paper", "--set", "flow.0.requests=50000", "--set", "run.latency_breakdown=true", "--timeseries", "5")
    run("mqsim-paper", "--set", "flow.0.read_fraction=0.5", "--set", "flow.0.requests=200000", "--steady-state")
    two_flows = folder / "two-flows.toml"
    two_flows.write_text(
        "[[flow]]\nqueue_depth = 8\nread_fraction = 1.0\nrequests = 20000\n"
        "[[flow]]\nqueue_depth = 8\nread_fraction = 0.0\nrequests = 20000\n"
    )
    run(str(two_flows), "--fairness")
    # A host program stepping a Device (the step-by-step API, as the C API's users step it).
    for extra in ([], ["--read-fraction", "0.7", "--compare"]):
        args = [str(REPO / "examples" / "python" / "closed_loop.py"), "--requests", "50000", "--qd", "16", *extra]
        print("+ python", *args, flush=True)
        subprocess.run([str(py), *args], check=True, stdout=subprocess.DEVNULL)
        done.append(" ".join(["python examples/python/closed_loop.py", *args[1:]]))
    # `ssdkit serve` answering fio's NBD reads, where fio is installed (Debian's fio).
    if shutil.which("fio"):
        args = [str(REPO / "examples" / "python" / "serve_bench.py"), "--servers", "ssdkit-fast", "--seconds", "5"]
        print("+ python", *args, flush=True)
        env = dict(os.environ, PATH=f"{py.parent}{os.pathsep}{os.environ.get('PATH', '')}")
        subprocess.run([str(py), *args], check=True, stdout=subprocess.DEVNULL, env=env)
        done.append(" ".join(["python examples/python/serve_bench.py", *args[1:]]))
    else:
        print("fio is not installed: `ssdkit serve` is left out of the training", flush=True)
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep target/pgo/ (instrumented wheel, venv, raw counts)")
    args = ap.parse_args(argv)
    profdata = _llvm_profdata()
    if WORK.exists():
        shutil.rmtree(WORK)
    raw = WORK / "raw"
    wheel_dir = WORK / "wheel"
    raw.mkdir(parents=True)
    # The flags the build would use (.cargo/config.toml's target processor), then the
    # instrumentation's: the profile describes the code the optimised build compiles.
    flags = [*ssdkit_pgo.given_rustflags(os.environ), f"-Cprofile-generate={raw}"]
    env = dict(os.environ, CARGO_ENCODED_RUSTFLAGS="\x1f".join(flags), SSDKIT_PGO="0")
    t0 = time.time()
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheel_dir), str(REPO)], env=env)
    venv = WORK / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    wheel = next(wheel_dir.glob("ssdkit-*.whl"))
    _run([str(py), "-m", "pip", "install", "--quiet", str(wheel)])
    # The build's own runs (build scripts) left counts too: only the workloads' count.
    for f in raw.glob("*.profraw"):
        f.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        workloads = _training(py, Path(tmp))
    merged = WORK / "ssdkit.profdata"
    _run([str(profdata), "merge", "-o", str(merged), str(raw)])
    rustc = subprocess.run(["rustc", "-vV"], stdout=subprocess.PIPE, text=True, check=True).stdout
    llvm = ssdkit_pgo._llvm_major(rustc)
    if llvm is None:
        raise SystemExit(f"`rustc -vV` names no LLVM version:\n{rustc}")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, stdout=subprocess.PIPE, text=True, check=False
    )
    # What the profile describes: the Rust sources (the rest of the tree does not change it).
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", "crates", "Cargo.toml", "Cargo.lock"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        check=False,
    )
    source = commit.stdout.strip() + (" with uncommitted changes to the Rust sources" if dirty.stdout.strip() else "")
    OUT_DIR.mkdir(exist_ok=True)
    meta = {
        "llvm_major": llvm,
        "rustc": rustc.splitlines()[0],
        "source": source,
        "workloads": workloads,
    }
    # Both written whole beside the old ones, then put in place one after the other.
    # mtime 0: the same counts give the same bytes.
    tmp_profile = ssdkit_pgo.PGO_PROFILE.with_name(ssdkit_pgo.PGO_PROFILE.name + ".tmp")
    tmp_profile.write_bytes(gzip.compress(merged.read_bytes(), compresslevel=9, mtime=0))
    tmp_meta = ssdkit_pgo.PGO_META.with_name(ssdkit_pgo.PGO_META.name + ".tmp")
    tmp_meta.write_text(json.dumps(meta, indent=2) + "\n")
    os.replace(tmp_profile, ssdkit_pgo.PGO_PROFILE)
    os.replace(tmp_meta, ssdkit_pgo.PGO_META)
    if not args.keep:
        shutil.rmtree(WORK)
    print(f"wrote {OUT_DIR.relative_to(REPO)}/ in {time.time() - t0:.0f} s (LLVM {llvm}, source {source})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
