import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import SMALL_SET, TINY_SET


def ssdkit(*args, cwd=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "ssdkit", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def small_sets():
    return [a for kv in SMALL_SET for a in ("--set", kv)]


def sets(kvs):
    return [a for kv in kvs for a in ("--set", kv)]


# 4 KiB random writes on the tiny device (see conftest.TINY_WRITES).
TINY_WRITE_SETS = sets([*TINY_SET, "flow.0.read_fraction=0", "flow.0.requests=3000"])


def one_error_line(p):
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdkit: error: "), p.stderr
    assert p.stdout == ""
    return lines[0]


def test_presets_lists_names():
    p = ssdkit("presets")
    assert p.returncode == 0
    assert "mqsim-paper" in p.stdout and "x25m" in p.stdout


def test_presets_show():
    p = ssdkit("presets", "show", "x25m")
    assert p.returncode == 0
    assert "channels = 10" in p.stdout


def test_run_prints_summary():
    p = ssdkit("run", "mqsim-paper", "--set", "flow.0.requests=2000", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert "randread-qd32" in p.stdout and "IOPS" in p.stdout and "GC runs" in p.stdout
    assert "Traceback" not in p.stderr


def test_overrides_rename_a_preset_flow_they_no_longer_describe(tmp_path):
    """The issue's case: a QD1 writer made from mqsim-paper's `randread-qd32` flow is reported as
    `randwrite-qd1`; a name given with --set, or an override the name does not describe, keeps it."""
    writer = sets(["flow.0.queue_depth=1", "flow.0.read_fraction=0", "flow.0.requests=300"])
    small = sets(["flash.blocks_per_plane=128"])
    p = ssdkit("run", "mqsim-paper", *small, *writer, "--no-progress", "-o", str(tmp_path / "w.json"))
    assert p.returncode == 0, p.stderr
    assert "randwrite-qd1" in p.stdout and "randread-qd32" not in p.stdout, p.stdout
    doc = json.loads((tmp_path / "w.json").read_text())
    assert [f["name"] for f in doc["flows"]] == ["randwrite-qd1"]
    assert doc["config"]["flow"][0]["name"] == "randwrite-qd1"
    p = ssdkit("config", "show", "mqsim-paper", *writer, "--set", "flow.0.name=mine")
    assert p.returncode == 0 and 'name = "mine"' in p.stdout, p.stderr
    p = ssdkit("config", "show", "mqsim-paper", "--set", "flow.0.requests=300")
    assert p.returncode == 0 and 'name = "randread-qd32"' in p.stdout, p.stderr


def test_run_writes_json(tmp_path):
    out = tmp_path / "out.json"
    p = ssdkit("run", "mqsim-paper", *small_sets(), "--seed", "3", "-o", str(out), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1 and doc["seed"] == 3
    assert json.loads(p.stdout) == doc
    assert os.listdir(tmp_path) == ["out.json"]  # no temporary file left behind


def test_config_show_and_schema(tmp_path):
    p = ssdkit("config", "show", "--preset", "x25m", "--set", "flash.channels=4")
    assert p.returncode == 0 and "channels = 4" in p.stdout and "link_model" in p.stdout
    cfg = tmp_path / "dev.toml"
    cfg.write_text(p.stdout)
    again = ssdkit("config", "show", str(cfg))
    assert again.returncode == 0 and again.stdout == p.stdout
    s = ssdkit("config", "schema")
    assert s.returncode == 0 and json.loads(s.stdout)["title"] == "Config"


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["mqsim-paper", "--set", "flash.channels=0"], ["flash.channels"]),
        (["mqsim-paper", "--set", "flash.page_size_bytes=3000"], ["page_size_bytes", "power of two"]),
        (["mqsim-paper", "--set", "flash.chanels=8"], ["chanels"]),
        (["mqsim-paper", "--set", "flow.0.read_fraction=1.5"], ["read_fraction"]),
        (["mqsim-paper", "--set", "flow.0.queue_depth=0"], ["queue_depth"]),
        (["mqsim-paper", "--set", "flash.channels"], ["flash.channels", "key.path=value"]),
        (["no-such-preset"], ["no-such-preset", "mqsim-paper"]),
        (["--preset", "no-such-preset"], ["no-such-preset", "mqsim-paper"]),
        (["missing.toml"], ["missing.toml"]),
        ([], ["no configuration"]),
    ],
)
def test_bad_input_is_one_line_exit_2_no_file(tmp_path, args, fragments):
    out = tmp_path / "out.json"
    p = ssdkit("run", *args, "-o", str(out), cwd=tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdkit: error: "), p.stderr
    for f in fragments:
        assert f in lines[0]
    assert p.stdout == ""
    assert os.listdir(tmp_path) == []


def test_unwritable_output_fails_before_running(tmp_path):
    p = ssdkit("run", "mqsim-paper", "-o", str(tmp_path / "no" / "dir" / "out.json"))
    assert p.returncode == 2 and "does not exist" in p.stderr and "Traceback" not in p.stderr


def test_argparse_errors_exit_2():
    p = ssdkit("run", "--seed", "abc")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    p = ssdkit("presets", "show")
    assert p.returncode == 2


def test_a_command_gets_its_parser_alone_and_a_wrong_word_every_command():
    """Parsing a command's words builds its parser and no other (each command listed costs
    a parser of its own); an option or a misspelt command gets all of them listed, as the
    full parser lists them, in argparse's choices and error."""
    from ssdkit import cli

    def commands(p):
        (action,) = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        return list(action.choices)

    every = commands(cli._parser())
    assert len(every) >= 15 and "run" in every
    assert commands(cli._parser("run")) == ["run"]
    assert commands(cli._parser("c-flags")) == ["c-flags"]
    assert commands(cli._parser("--version")) == every
    assert commands(cli._parser("rnu")) == every
    assert cli._parser("run").parse_args(["run", "x"]).config == "x"
    p = ssdkit("rnu")
    # (Python 3.12.8 and 3.13 quote the choices otherwise: each name is looked for alone.)
    assert p.returncode == 2 and "invalid choice: 'rnu'" in p.stderr
    assert all(name in p.stderr.split("choose from", 1)[1] for name in every), p.stderr
    p = ssdkit("--version")
    assert p.returncode == 0 and p.stdout.startswith("ssdkit ")


def test_console_script_entry_point():
    exe = shutil.which("ssdkit", path=os.path.dirname(sys.executable)) or shutil.which("ssdkit")
    if exe is None:
        pytest.skip("ssdkit console script not on PATH")
    p = subprocess.run([exe, "presets"], check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "mqsim-paper" in p.stdout


def test_run_leaves_at_once_with_everything_written(tmp_path):
    """`ssdkit run` ends its process without the interpreter's teardown (`cli.entry`): what
    it printed to a pipe (block-buffered) and the result file must be whole all the same, and
    its status kept, for a success, a failed run and a reader that leaves early."""
    # Output to a pipe buffered, as outside this test run (PYTHONUNBUFFERED would hide a lost
    # buffer).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}

    def run(*args):
        return ssdkit("run", "mqsim-paper", *args, env=env)

    out = tmp_path / "out.json"
    p = run(*sets(TINY_SET), "--seed", "3", "-o", str(out))
    assert p.returncode == 0, p.stderr
    # The summary's last line: everything buffered reached the pipe.
    assert p.stdout.rstrip().splitlines()[-1].startswith("events/s"), p.stdout
    assert json.loads(out.read_text())["seed"] == 3
    p = run(*sets(TINY_SET), "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["device"]["stats"]["all"]["count"] > 0
    # A run whose configuration the core refuses: the one error line, status 2.
    one_error_line(run("--set", "flash.page_bytes=-1"))
    # The reader has left before the first line: status 1 (cli.main), nothing on stderr.
    r, w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssdkit", "run", "mqsim-paper", *sets(TINY_SET), "--json"],
        stdout=w,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(w)
    os.close(r)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and err == b"", err


def test_precondition_then_run_from_snapshot(tmp_path):
    snap = tmp_path / "device.snap"
    p = ssdkit("precondition", "mqsim-paper", *TINY_WRITE_SETS, "--seed", "4", "-o", str(snap))
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    summary = p.stdout.strip()
    assert len(summary.splitlines()) == 1  # one paragraph
    size = snap.stat().st_size
    for word in ["fast", "greedy", "predicted WA", str(snap), f"{size:,} bytes"]:
        assert word in summary
    assert os.listdir(tmp_path) == ["device.snap"]

    out = tmp_path / "out.json"
    r = ssdkit("run", "mqsim-paper", *TINY_WRITE_SETS, "--seed", "4", "--snapshot", str(snap), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "snapshot" in r.stdout and str(snap) in r.stdout and "precondition" in r.stdout
    doc = json.loads(out.read_text())
    rec = doc["device"]["precondition"]
    assert rec["mode"] == "fast" and rec["snapshot"] == str(snap) and rec["snapshot_load_s"] >= 0
    assert doc["device"]["ftl"]["gc_runs"] > 0 and doc["seed"] == 4

    # The same run without the snapshot (preconditioning from scratch) simulates the same.
    direct = ssdkit("run", "mqsim-paper", *TINY_WRITE_SETS, "--seed", "4", "--json", "--no-progress")
    assert direct.returncode == 0, direct.stderr
    d = json.loads(direct.stdout)
    assert d["device"]["stats"] == doc["device"]["stats"] and d["device"]["ftl"] == doc["device"]["ftl"]


def test_precondition_json(tmp_path):
    snap = tmp_path / "w.snap"
    p = ssdkit(
        "precondition", "mqsim-paper", *TINY_WRITE_SETS, "--set", "precondition.mode=write", "-o", str(snap), "--json"
    )
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["mode"] == "write" and rec["snapshot"] == str(snap)
    assert rec["snapshot_bytes"] == snap.stat().st_size
    assert rec["stable"] is True and rec["write_amplification"] > 1


def _damage(snap, how):
    data = snap.read_bytes()
    if how == "corrupt":
        snap.write_bytes(data[: len(data) // 2] + bytes([data[len(data) // 2] ^ 0xFF]) + data[len(data) // 2 + 1 :])
    elif how == "truncated":
        snap.write_bytes(data[: len(data) // 2])
    elif how == "not-a-snapshot":
        snap.write_text("just text\n")
    elif how == "missing":
        snap.unlink()


@pytest.mark.parametrize(
    "how, extra, fragments",
    [
        ("corrupt", [], ["corrupt", "checksum"]),
        ("truncated", [], ["truncated"]),
        ("not-a-snapshot", [], ["not an ssdkit snapshot"]),
        ("missing", [], ["No such file"]),
        (None, ["--set", "flash.blocks_per_plane=256"], ["flash.blocks_per_plane", "different device"]),
    ],
)
def test_bad_snapshot_is_one_line_exit_2(tmp_path, how, extra, fragments):
    snap = tmp_path / "device.snap"
    p = ssdkit("precondition", "mqsim-paper", *TINY_WRITE_SETS, "-o", str(snap))
    assert p.returncode == 0, p.stderr
    _damage(snap, how)
    out = tmp_path / "out.json"
    r = ssdkit("run", "mqsim-paper", *TINY_WRITE_SETS, *extra, "--snapshot", str(snap), "-o", str(out))
    line = one_error_line(r)
    assert str(snap) in line
    for f in fragments:
        assert f in line
    assert not out.exists()


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["mqsim-paper", "--set", "precondition.mode=warm"], ["precondition.mode"]),
        (["mqsim-paper", "--set", "flash.channels=0"], ["flash.channels"]),
        (["no-such-preset"], ["no-such-preset", "mqsim-paper"]),
    ],
)
def test_precondition_bad_input(tmp_path, args, fragments):
    snap = tmp_path / "device.snap"
    line = one_error_line(ssdkit("precondition", *args, "-o", str(snap), cwd=tmp_path))
    for f in fragments:
        assert f in line
    assert os.listdir(tmp_path) == []


def test_precondition_output_checked_first(tmp_path):
    line = one_error_line(ssdkit("precondition", "mqsim-paper", "-o", str(tmp_path / "no" / "dir" / "x.snap")))
    assert "does not exist" in line
    p = ssdkit("precondition", "mqsim-paper")
    assert p.returncode == 2 and "-o" in p.stderr and "Traceback" not in p.stderr


def test_bench_small(tmp_path):
    # A shrunken device so the test stays quick; TMPDIR lets us see the snapshot is removed.
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "bench", "--requests", "20000", "--set", "flash.blocks_per_plane=128"],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "requests/s" in out and "events/s" in out and "peak memory (RSS)" in out
    for case in [
        "randread-4k-qd1",
        "randread-4k-qd32",
        "seqread-128k-qd32",
        "randwrite-4k-qd32",
        "randread-4k-qd32-cmt",
        "randwrite-4k-qd32-cmt",
        "mixed-70r-4k-qd16-cmt",
        "randread-4k-qd32-x10",
        "mqsim-randread-4k-qd32",
        "mqsim-randread-4k-qd32-ideal",
        "mqsim-randwrite-4k-qd32",
        "mqsim-mixed-70r-4k-qd16",
        "dramnvm-64b-qd32",
    ]:
        assert case in out
    for word in [
        "wall-clock second of the simulation phase",
        "Preconditioning for randwrite-4k-qd32 (mode fast",
        "Snapshot of the preconditioned device:",
        "save time",
        "load time",
        "requests simulated per second",
        "write amplification",
        "flash.blocks_per_plane=128",
        "ev/req",
        "B/page",
        "As runs grow (randread-4k-qd32-x10 against randread-4k-qd32)",
    ]:
        assert word in out, word
    # Figures and their meaning only: no goals, verdicts or internal labels.
    assert not re.search(r"(?i)\btargets?\b|\bmissed\b|\bmet\b|\bissue\b|\bseed 0|gc_runs", out)
    gc_runs = [ln for ln in out.splitlines() if ln.startswith("  GC runs ")]
    assert len(gc_runs) == 1 and int(gc_runs[0].split()[-1].replace(",", "")) > 0  # GC ran in the write case
    assert os.listdir(tmp_path) == []


def _simulated(case: dict) -> dict:
    """A bench case's figures that describe the simulation, not the machine."""
    return {k: case[k] for k in ("case", "requests", "events", "gc_runs", "write_amplification", "physical_pages")}


def test_bench_json():
    p = ssdkit("bench", "--requests", "2000", "--set", "flash.blocks_per_plane=128", "--json", "--jobs", "2")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["jobs"] == 2
    # Workloads side by side simulate what they simulate one at a time (each its own process).
    one = ssdkit("bench", "--requests", "2000", "--set", "flash.blocks_per_plane=128", "--json", "--jobs", "1")
    assert one.returncode == 0, one.stderr
    alone = json.loads(one.stdout)
    assert alone["jobs"] == 1
    assert [_simulated(c) for c in alone["cases"]] == [_simulated(c) for c in doc["cases"]]
    assert [c["case"] for c in doc["cases"]] == [
        "randread-4k-qd1",
        "randread-4k-qd32",
        "seqread-128k-qd32",
        "trace-read-4k-qd32",
        "randwrite-4k-qd32",
        "randread-4k-qd32-cmt",
        "randwrite-4k-qd32-cmt",
        "mixed-70r-4k-qd16",
        "mixed-70r-4k-qd16-cmt",
        "randread-4k-qd32-x10",
        "mqsim-randread-4k-qd32",
        "mqsim-randread-4k-qd32-ideal",
        "mqsim-randwrite-4k-qd32",
        "mqsim-mixed-70r-4k-qd16",
        "dramnvm-64b-qd32",
    ]
    cases = {c["case"]: c for c in doc["cases"]}
    for c in doc["cases"]:
        # Each workload ran in its own process: its own peak memory, over the device's pages.
        assert c["events_per_request"] == c["events"] / c["requests"]
        assert c["bytes_per_page"] == c["peak_rss_mib"] * 2**20 / c["physical_pages"]
        # The whole process contains its event loop.
        assert c["process_s"] > c["wall_time_s"] > 0
    for name in ("mqsim-randread-4k-qd32", "mqsim-randread-4k-qd32-ideal", "mqsim-randwrite-4k-qd32"):
        # `ssdkit run --mqsim` on the shipped files: MQSim's empty device, the --set applied.
        m = cases[name]
        assert m["requests"] == 2000 and m["precondition_mode"] == "empty", m
        assert m["physical_pages"] == cases["randread-4k-qd32"]["physical_pages"]
    assert cases["randread-4k-qd32-x10"]["requests"] == 10 * cases["randread-4k-qd32"]["requests"]
    assert cases["dramnvm-64b-qd32"]["physical_pages"] != cases["randread-4k-qd32"]["physical_pages"]
    mixed = cases["mixed-70r-4k-qd16"]
    # The mixed case starts from the write snapshot (fast preconditioning): GC from its first
    # writes.
    assert mixed["requests"] == 2000 and mixed["gc_runs"] > 0
    dram = doc["cases"][-1]
    # The DRAM-like NVM keeps its own geometry (the --set is for the mqsim-paper cases) and
    # never collects garbage.
    assert dram["requests"] == 2000 and dram["gc_runs"] == 0
    figs = doc["figures"]
    assert set(figs) == {
        "precondition_s",
        "precondition_peak_rss_mib",
        "snapshot_save_s",
        "snapshot_load_s",
        "randwrite_requests_per_wall_s",
    }
    assert "targets" not in doc and "targets_met" not in doc
    assert figs["snapshot_load_s"] > 0 and figs["snapshot_save_s"] > 0 and figs["precondition_s"] > 0
    assert 0 < figs["precondition_peak_rss_mib"] < 10_000
    assert doc["precondition"]["record"]["mode"] == "fast"
    assert doc["cases"][4]["precondition_mode"] == "fast" and doc["cases"][0]["precondition_mode"] == "fast"
    # The trace case replays every generated line.
    assert doc["cases"][3]["requests"] == doc["requests"]


def test_argparse_strings_are_translated_as_gettext_does():
    """The parser looks the message catalogue up once (`cli._translate_once`); what argparse
    says must not change."""
    import argparse
    import gettext

    from ssdkit import cli

    cli._parser("run")
    for s in ("usage: ", "the following arguments are required: %s", "show this help message and exit"):
        assert argparse._(s) == gettext.gettext(s)
    for n in (1, 2):
        assert argparse.ngettext("expected %s argument", "expected %s arguments", n) == gettext.ngettext(
            "expected %s argument", "expected %s arguments", n
        )


def _write_mo(path, messages: dict[str, str]) -> None:
    """A GNU message catalogue (.mo) of ``messages``, laid out as CPython's msgfmt.py writes one."""
    import struct

    keys = sorted(messages)
    ids = strs = b""
    offsets = []
    for k in keys:
        kb, vb = k.encode(), messages[k].encode()
        offsets.append((len(ids), len(kb), len(strs), len(vb)))
        ids += kb + b"\0"
        strs += vb + b"\0"
    keystart = 7 * 4 + 16 * len(keys)
    valuestart = keystart + len(ids)
    table = [x for o1, l1, _, _ in offsets for x in (l1, o1 + keystart)]
    table += [x for _, _, o2, l2 in offsets for x in (l2, o2 + valuestart)]
    head = struct.pack("Iiiiiii", 0x950412DE, 0, len(keys), 7 * 4, 7 * 4 + len(keys) * 8, 0, 0)
    path.parent.mkdir(parents=True)
    path.write_bytes(head + struct.pack(f"{len(table)}i", *table) + ids + strs)


@pytest.mark.parametrize("catalogue", [True, False])
def test_argparse_uses_the_catalogue_gettext_finds(tmp_path, catalogue):
    """With a catalogue for the user's language in the domain's folder, argparse's strings come
    from it; with no such folder they stay as written, and the search's `locale` import is
    skipped."""
    localedir = tmp_path / "locale"
    if catalogue:
        _write_mo(
            localedir / "xx" / "LC_MESSAGES" / "messages.mo",
            {"": "Content-Type: text/plain; charset=UTF-8\n", "usage: ": "emploi : "},
        )
    code = (
        "import argparse, gettext, sys; gettext.bindtextdomain('messages', sys.argv[1]); "
        "from ssdkit import cli; cli._parser('run'); print(argparse._('usage: ') + '|' + str('locale' in sys.modules))"
    )
    env = {**os.environ, "LANGUAGE": "xx"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(localedir)], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert out.strip() == ("emploi : |True" if catalogue else "usage: |False")


def test_building_the_parser_does_not_import_shutil():
    """argparse's formatter imports shutil for the terminal's width (and with it the
    compression modules); `cli._Formatter` finds the width by the same rules without it."""
    code = (
        "import sys; from ssdkit import cli; cli._parser(); cli._parser('run').parse_args(['run', 'x']); "
        "print('shutil' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("env", [{"COLUMNS": "100"}, {"COLUMNS": "61"}, {"COLUMNS": "x"}, {}])
def test_the_help_width_is_shutils(env, monkeypatch):
    from ssdkit import cli

    monkeypatch.delenv("COLUMNS", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert cli._terminal_columns() == shutil.get_terminal_size().columns
