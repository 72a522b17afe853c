import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import SMALL_SET


def ssdkit(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "ssdkit", *args], check=False, capture_output=True, text=True, cwd=cwd, timeout=300
    )


def small_sets():
    return [a for kv in SMALL_SET for a in ("--set", kv)]


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


def test_console_script_entry_point():
    exe = shutil.which("ssdkit", path=os.path.dirname(sys.executable)) or shutil.which("ssdkit")
    if exe is None:
        pytest.skip("ssdkit console script not on PATH")
    p = subprocess.run([exe, "presets"], check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "mqsim-paper" in p.stdout


def test_bench_small():
    p = ssdkit("bench", "--requests", "2000")
    assert p.returncode == 0, p.stderr
    assert "requests/s" in p.stdout and "events/s" in p.stdout and "peak RSS" in p.stdout
    for case in ["randread-4k-qd1", "randread-4k-qd32", "seqread-128k-qd32", "randwrite-4k-qd32"]:
        assert case in p.stdout
    assert "gc_runs > 0" in p.stdout and "1.3 M" in p.stdout
