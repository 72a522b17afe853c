"""Where the CLI's output goes: never over one of the run's inputs, in place into devices and
pipes, all or nothing for several files, and a clear line when standard output fails."""

import os
import shutil
import stat
import subprocess
import sys
import threading

import pytest
import ssdkit
from conftest import TINY_SET

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
TRACE = os.path.join(DATA, "mqsim", "traces", "tpcc-small.trace")
SSDCONFIG = os.path.join(DATA, "mqsim", "ssdconfig.xml")
WORKLOAD = os.path.join(DATA, "mqsim", "workload.xml")
FIO_JOB = os.path.join(DATA, "fio", "example.fio")
QUICK = ["--set", "flash.blocks_per_plane=128", "--set", "flow.0.requests=500", "--no-progress"]


def cli(*args, cwd=None, **kw):
    return subprocess.run(
        [sys.executable, "-m", "ssdkit", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        **kw,
    )


def one_error_line(p):
    """The error line; MQSim conversions may print their warning block before it."""
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert [x for x in lines if "error" in x] == lines[-1:], p.stderr
    assert lines[-1].startswith("ssdkit: error: ") and (len(lines) == 1 or lines[0].startswith("ssdkit: warning:"))
    return lines[-1]


def snapshot_of(folder):
    """Every file of ``folder`` with its bytes, to show a refused command changed nothing."""
    return {n: (folder / n).read_bytes() for n in sorted(os.listdir(folder)) if (folder / n).is_file()}


@pytest.fixture
def trace_config(tmp_path):
    """A configuration file with a trace flow whose trace sits beside it (relative path)."""
    shutil.copy(TRACE, tmp_path / "t.trace")
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(
        "[flash]\nblocks_per_plane = 128\n\n"
        '[[flow]]\ntrace = "t.trace"\ntrace_format = "mqsim"\nfold = "modulo"\nrequests = 200\n'
    )
    return cfg


@pytest.fixture
def tiny_snap(tmp_path):
    snap = tmp_path / "dev.snap"
    p = cli("precondition", "mqsim-paper", *[a for kv in TINY_SET for a in ("--set", kv)], "-o", snap)
    assert p.returncode == 0, p.stderr
    return snap


# --- outputs that name an input ---------------------------------------------------------------


@pytest.mark.parametrize(
    "args, out, what",
    [
        (["run", "cfg.toml", "--no-progress"], "cfg.toml", "configuration file"),
        (["run", "cfg.toml", "--no-progress"], "t.trace", "trace file of flow 0"),
        (["run", "cfg.toml", "--no-progress", "--set", "flow.0.trace=./t.trace"], "./t.trace", "trace file"),
        (["run", "cfg.toml", "--no-progress"], "sub/../cfg.toml", "configuration file"),
        (["precondition", "cfg.toml"], "cfg.toml", "configuration file"),
        (["precondition", "cfg.toml"], "t.trace", "trace file of flow 0"),
        (["config", "show", "cfg.toml"], None, None),  # no -o: nothing to refuse
    ],
)
def test_output_that_is_an_input_is_refused(tmp_path, trace_config, args, out, what):
    (tmp_path / "sub").mkdir()
    before = snapshot_of(tmp_path)
    if out is None:
        assert cli(*args, cwd=tmp_path).returncode == 0
        return
    line = one_error_line(cli(*args, "-o", out, cwd=tmp_path))
    assert f"`{out}`" in line and what in line and "same file" in line
    assert snapshot_of(tmp_path) == before
    assert sorted(os.listdir(tmp_path)) == ["cfg.toml", "sub", "t.trace"]


def test_links_to_an_input_are_the_input(tmp_path, trace_config):
    os.link(trace_config, tmp_path / "hard.toml")
    os.symlink("t.trace", tmp_path / "soft.trace")
    before = snapshot_of(tmp_path)
    for out in ["hard.toml", "soft.trace"]:
        line = one_error_line(cli("run", "cfg.toml", "--no-progress", "-o", out, cwd=tmp_path))
        assert out in line and ("cfg.toml" in line or "t.trace" in line)
    assert snapshot_of(tmp_path) == before
    assert os.path.islink(tmp_path / "soft.trace")


def test_output_over_the_snapshot_is_refused(tmp_path, tiny_snap):
    before = tiny_snap.read_bytes()
    sets = [a for kv in TINY_SET for a in ("--set", kv)]
    line = one_error_line(cli("run", "mqsim-paper", *sets, "--snapshot", tiny_snap, "-o", tiny_snap))
    assert "snapshot file" in line and str(tiny_snap) in line
    assert tiny_snap.read_bytes() == before
    assert os.listdir(tmp_path) == ["dev.snap"]


def test_fio_and_mqsim_inputs_are_refused_as_outputs(tmp_path):
    job = tmp_path / "job.fio"
    shutil.copy(FIO_JOB, job)
    ssd, wl = tmp_path / "ssd.xml", tmp_path / "wl.xml"
    shutil.copy(SSDCONFIG, ssd)
    shutil.copy(WORKLOAD, wl)
    (tmp_path / "traces").mkdir()
    shutil.copy(TRACE, tmp_path / "traces" / "tpcc-small.trace")
    cfg = tmp_path / "dev.toml"
    cfg.write_text(cli("presets", "show", "mqsim-paper").stdout)
    before = {**snapshot_of(tmp_path), **snapshot_of(tmp_path / "traces")}
    cases = [
        (["run", "--fio", job, "--no-progress", "-o", job], "fio job file"),
        (["run", cfg, "--fio", job, "--no-progress", "-o", cfg], "configuration file"),
        (["fio2toml", job, "-o", job], "fio job file"),
        (["fio2toml", job, cfg, "-o", cfg], "configuration file"),
        (["run", "--mqsim", ssd, wl, "--scenario", "1", "--no-progress", "-o", wl], "MQSim workload.xml"),
        (["run", "--mqsim", ssd, wl, "--scenario", "1", "--no-progress", "-o", ssd], "MQSim ssdconfig.xml"),
        (["run", "--mqsim", ssd, wl, "--scenario", "3", "--no-progress", "-o", "traces/tpcc-small.trace"], "trace"),
        (["import", "mqsim", ssd, "-o", ssd], "MQSim ssdconfig.xml"),
        (["import", "mqsim", ssd, wl, "--scenario", "2", "-o", wl], "MQSim workload.xml"),
        (["import", "mqsim", ssd, wl, "--scenario", "3", "-o", "traces/tpcc-small.trace"], "trace file of scenario 3"),
    ]
    for args, what in cases:
        line = one_error_line(cli(*args, cwd=tmp_path))
        assert what in line and "same file" in line, (args, line)
        assert {**snapshot_of(tmp_path), **snapshot_of(tmp_path / "traces")} == before, args
    assert sorted(os.listdir(tmp_path)) == ["dev.toml", "job.fio", "ssd.xml", "traces", "wl.xml"]


# --- devices, pipes, links --------------------------------------------------------------------


def read_fifo(path, into):
    with open(path, "rb") as f:
        into.append(f.read())


@pytest.mark.parametrize("command", ["run", "precondition", "fio2toml", "import"])
def test_a_pipe_is_written_in_place(tmp_path, command):
    fifo = tmp_path / "out.pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=read_fifo, args=(fifo, got), daemon=True)
    reader.start()
    sets = [a for kv in TINY_SET for a in ("--set", kv)]
    args = {
        "run": ["run", "mqsim-paper", *QUICK, "-o", fifo],
        "precondition": ["precondition", "mqsim-paper", *sets, "-o", fifo],
        "fio2toml": ["fio2toml", FIO_JOB, "-o", fifo],
        "import": ["import", "mqsim", SSDCONFIG, "-o", fifo],
    }[command]
    p = cli(*args)
    reader.join(timeout=60)
    assert p.returncode == 0, p.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the pipe, not a file renamed over it
    assert os.listdir(tmp_path) == ["out.pipe"]  # no temporary file beside it
    data = got[0]
    head = {"run": b"{", "precondition": b"SSDKSNAP", "fio2toml": b"#", "import": b"#"}[command]
    assert data.startswith(head) and len(data) > 100


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root")
def test_a_device_node_is_written_in_place(tmp_path):
    # A private copy of /dev/null: if the device were replaced, only this copy would suffer.
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        with open(dev, "w") as f:
            f.write("x")
    except OSError as e:
        pytest.skip(f"cannot create or write a device node here: {e}")
    sets = [a for kv in TINY_SET for a in ("--set", kv)]
    for args in (["run", "mqsim-paper", *QUICK], ["precondition", "mqsim-paper", *sets]):
        p = cli(*args, "-o", dev)
        assert p.returncode == 0, p.stderr
        assert stat.S_ISCHR(os.lstat(dev).st_mode), args
        assert os.listdir(tmp_path) == ["null"]


def test_dev_full_output_is_one_error_line(tmp_path):
    # Writing into a device that fails: the device is left alone and the error is one line.
    full = tmp_path / "full"
    os.symlink("/dev/full", full)
    line = one_error_line(cli("run", "mqsim-paper", *QUICK, "-o", full))
    assert str(full) in line and "No space left" in line
    sets = [a for kv in TINY_SET for a in ("--set", kv)]
    line = one_error_line(cli("precondition", "mqsim-paper", *sets, "-o", full))
    assert str(full) in line and "No space left" in line
    assert os.listdir(tmp_path) == ["full"] and os.path.islink(full)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize("command", ["run", "precondition"])
def test_a_symlink_output_replaces_its_target(tmp_path, command):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out"
    target.write_text("old")
    link = tmp_path / "link"
    os.symlink(target, link)
    sets = [a for kv in TINY_SET for a in ("--set", kv)]
    args = ["run", "mqsim-paper", *QUICK] if command == "run" else ["precondition", "mqsim-paper", *sets]
    p = cli(*args, "-o", link)
    assert p.returncode == 0, p.stderr
    assert os.path.islink(link) and target.read_bytes()[:1] in (b"{", b"S")
    assert sorted(os.listdir(tmp_path)) == ["link", "real"] and os.listdir(tmp_path / "real") == ["out"]


def test_directory_output_is_refused(tmp_path):
    for args in (["run", "mqsim-paper", *QUICK], ["fio2toml", FIO_JOB], ["precondition", "mqsim-paper"]):
        line = one_error_line(cli(*args, "-o", tmp_path))
        assert str(tmp_path) in line and "directory" in line
    assert os.listdir(tmp_path) == []


# --- several outputs: all or nothing -----------------------------------------------------------


def test_import_writes_every_scenario_or_none(tmp_path):
    wl = tmp_path / "wl.xml"
    shutil.copy(WORKLOAD, wl)
    (tmp_path / "traces").mkdir()
    shutil.copy(TRACE, tmp_path / "traces" / "tpcc-small.trace")
    out = tmp_path / "mq.toml"
    (tmp_path / "mq_scenario_1.toml").write_text("old 1")
    # Scenario 3's output fails at write time (a device that is always full): scenarios 1
    # and 2 must not be replaced or created, and no temporary file may stay behind.
    os.symlink("/dev/full", tmp_path / "mq_scenario_3.toml")
    before = snapshot_of(tmp_path)
    line = one_error_line(cli("import", "mqsim", SSDCONFIG, wl, "-o", out))
    assert "mq_scenario_3.toml" in line and "No space left" in line
    assert snapshot_of(tmp_path) == before
    assert sorted(os.listdir(tmp_path)) == ["mq_scenario_1.toml", "mq_scenario_3.toml", "traces", "wl.xml"]

    os.unlink(tmp_path / "mq_scenario_3.toml")
    p = cli("import", "mqsim", SSDCONFIG, wl, "-o", out)
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(tmp_path)) == [
        "mq_scenario_1.toml",
        "mq_scenario_2.toml",
        "mq_scenario_3.toml",
        "traces",
        "wl.xml",
    ]
    assert (tmp_path / "mq_scenario_1.toml").read_text().startswith("#")


def test_import_checks_every_output_before_writing_any(tmp_path):
    out = tmp_path / "mq.toml"
    (tmp_path / "mq_scenario_2.toml").mkdir()
    line = one_error_line(cli("import", "mqsim", SSDCONFIG, WORKLOAD, "--trace-dir", os.path.dirname(TRACE), "-o", out))
    assert "mq_scenario_2.toml" in line and "directory" in line
    assert os.listdir(tmp_path) == ["mq_scenario_2.toml"]


# --- standard output --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["config", "schema"],  # large: fails while printing
        ["presets"],  # small: fails at the final flush
        ["run", "mqsim-paper", *QUICK, "--json"],
        ["fio2toml", FIO_JOB],
    ],
)
def test_full_stdout_is_one_error_line(args):
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "ssdkit", *args],
            check=False,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert lines == ["ssdkit: error: cannot write to standard output: No space left on device"], p.stderr


@pytest.mark.parametrize("args", [["config", "schema"], ["presets", "show", "mqsim-paper"]])
def test_closed_pipe_is_a_quiet_exit(args):
    p = subprocess.Popen([sys.executable, "-m", "ssdkit", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first byte
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=60) == 1
    assert err == ""


# --- every writer: plot, report, sweep, the latency log ---------------------------------------
#
# Refusals come before any work: the inputs below are not even valid files for most cases
# (a result JSON of garbage), so a command that read its input first would fail differently.

SWEEP_FILE = 'config = "cfg.toml"\n[grid]\n"flow.0.queue_depth" = [1, 2]\n'


@pytest.fixture
def writers_folder(tmp_path, trace_config):
    """A folder with the inputs of every writer: a sweep file naming cfg.toml (whose flow
    reads t.trace), a result JSON and a sweep table (their content is never read)."""
    (tmp_path / "s.toml").write_text(SWEEP_FILE)
    (tmp_path / "r.json").write_text("not read")
    (tmp_path / "t.parquet").write_bytes(b"not read")
    (tmp_path / "p.json").write_text(POINTS)
    return tmp_path


def link_to(tmp_path, name, how, suffix=None):
    """The output path naming the input ``name``: itself, or a symbolic or hard link to it
    ending in ``suffix`` (default: the input's)."""
    if how == "itself":
        return name
    link = f"{how}-link{suffix or os.path.splitext(name)[1]}"
    if how == "symlink":
        os.symlink(name, tmp_path / link)
    else:
        os.link(tmp_path / name, tmp_path / link)
    return link


WRITER_INPUTS = [
    # (command without -o, the input the output names, the words naming it, output suffix)
    (["sweep", "s.toml", "--no-progress", "--workers", "1"], "s.toml", "sweep file", None),
    (["sweep", "s.toml", "--no-progress", "--workers", "1"], "cfg.toml", "configuration file", None),
    (["sweep", "s.toml", "--no-progress", "--workers", "1"], "t.trace", "trace file of flow 0", None),
    (["report", "r.json"], "r.json", "result JSON", None),
    (["report", "t.parquet"], "t.parquet", "sweep table", None),
    (["plot", "r.json", "--kind", "cdf"], "r.json", "result JSON", ".png"),
    (["calibrate", "p.json", "--base", "cfg.toml", "--fit", "flash.read_us"], "p.json", "points file", None),
    (["calibrate", "p.json", "--base", "cfg.toml", "--fit", "flash.read_us"], "cfg.toml", "configuration file", None),
]


@pytest.mark.parametrize("how", ["itself", "symlink", "hardlink"])
@pytest.mark.parametrize("args, name, what, suffix", WRITER_INPUTS, ids=lambda v: v if isinstance(v, str) else None)
def test_plot_report_and_sweep_refuse_their_inputs(writers_folder, args, name, what, suffix, how):
    tmp = writers_folder
    if suffix is not None and how == "itself":
        pytest.skip("plot's output needs an image suffix: only a link can name the result")
    out = link_to(tmp, name, how, suffix)
    before = snapshot_of(tmp)
    line = one_error_line(cli(*args, "-o", out, cwd=tmp))
    assert "same file" in line and what in line and f"`{out}`" in line, line
    assert snapshot_of(tmp) == before
    assert not [n for n in os.listdir(tmp) if n.endswith((".parts", ".tmp", ".snapshots"))]


@pytest.mark.parametrize("how", ["existing", "dangling"])
def test_latency_log_linked_to_the_result_json_is_refused(tmp_path, how):
    # --latency-log names the -o file through a symlink: one of the two would overwrite the other.
    out = tmp_path / "out.json"
    if how == "existing":
        out.write_text("old")
    os.symlink("out.json", tmp_path / "lat.csv")
    before = snapshot_of(tmp_path)
    line = one_error_line(cli("run", "mqsim-paper", *QUICK, "-o", "out.json", "--latency-log", "lat.csv", cwd=tmp_path))
    assert "same file" in line and "lat.csv" in line and "out.json" in line
    assert snapshot_of(tmp_path) == before
    assert sorted(os.listdir(tmp_path)) == (["lat.csv", "out.json"] if how == "existing" else ["lat.csv"])


def test_the_latency_log_refuses_a_hard_link_to_the_config(tmp_path, trace_config):
    os.link(trace_config, tmp_path / "lat.csv")
    before = snapshot_of(tmp_path)
    line = one_error_line(cli("run", "cfg.toml", "--no-progress", "--latency-log", "lat.csv", cwd=tmp_path))
    assert "same file" in line and "configuration file" in line
    assert snapshot_of(tmp_path) == before


@pytest.fixture(scope="module")
def result_json(tmp_path_factory):
    path = tmp_path_factory.mktemp("result") / "r.json"
    p = cli("run", "mqsim-paper", *QUICK, "-o", path)
    assert p.returncode == 0, p.stderr
    return path


#: A points file of `ssdkit probe` for `ssdkit calibrate` (its outputs are checked before it is read).
POINTS = '{"format": "ssdkit-probe/1", "points": []}'


def writer_args(command, result_json, tmp):
    """Each writer's command, given its output path."""
    (tmp / "s.toml").write_text(SWEEP_FILE)
    (tmp / "p.json").write_text(POINTS)
    (tmp / "cfg.toml").write_text("[flash]\nblocks_per_plane = 128\n[[flow]]\nrequests = 200\n")
    return {
        "run": ["run", "mqsim-paper", *QUICK, "-o"],
        "latency-log": ["run", "mqsim-paper", *QUICK, "--latency-log"],
        "precondition": ["precondition", "mqsim-paper", *[a for kv in TINY_SET for a in ("--set", kv)], "-o"],
        "sweep": ["sweep", "s.toml", "--no-progress", "--workers", "1", "-o"],
        "plot": ["plot", result_json, "-o"],
        "report": ["report", result_json, "-o"],
        "fio2toml": ["fio2toml", FIO_JOB, "-o"],
        "import": ["import", "mqsim", SSDCONFIG, "-o"],
        "calibrate": ["calibrate", "p.json", "--base", "x25m", "--fit", "flash.read_us", "-o"],
        "probe": ["probe", "new.img", "--reads-only", "-o"],
    }[command]


WRITERS = ["run", "latency-log", "precondition", "sweep", "plot", "report", "fio2toml", "import", "calibrate", "probe"]
SUFFIX = {"latency-log": ".csv", "plot": ".png", "sweep": ".parquet", "report": ".html"}


@pytest.mark.parametrize("command", WRITERS)
def test_every_writer_refuses_a_directory(tmp_path, result_json, command):
    args = writer_args(command, result_json, tmp_path)
    target = tmp_path / f"adir{SUFFIX.get(command, '.out')}"
    target.mkdir()
    line = one_error_line(cli(*args, target, cwd=tmp_path))
    assert str(target) in line and "is a directory" in line
    assert os.listdir(target) == []
    assert not [n for n in os.listdir(tmp_path) if n.endswith((".parts", ".tmp"))]


@pytest.mark.parametrize("command", WRITERS)
def test_every_writer_refuses_a_socket(tmp_path, result_json, command):
    import socket

    args = writer_args(command, result_json, tmp_path)
    path = tmp_path / f"sock{SUFFIX.get(command, '.out')}"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        line = one_error_line(cli(*args, path, cwd=tmp_path))
    assert str(path) in line and "socket" in line


@pytest.fixture
def unwritable_folder(tmp_path):
    """A folder nobody may create files in: read-only by its mode, or (for root, whom modes do
    not stop) /sys."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        (ro / "probe").touch()
    except OSError:
        yield ro
        ro.chmod(0o755)
        return
    (ro / "probe").unlink()
    ro.chmod(0o755)
    try:
        open("/sys/ssdkit-probe", "w").close()
    except OSError:
        yield "/sys"
        return
    os.unlink("/sys/ssdkit-probe")
    pytest.skip("no unwritable folder here")


@pytest.mark.parametrize("where", ["missing", "read-only"])
@pytest.mark.parametrize("command", WRITERS)
def test_every_writer_refuses_an_unwritable_folder(tmp_path, result_json, unwritable_folder, command, where):
    args = writer_args(command, result_json, tmp_path)
    folder = tmp_path / "no" / "such" if where == "missing" else unwritable_folder
    out = os.path.join(folder, f"out{SUFFIX.get(command, '.out')}")
    line = one_error_line(cli(*args, out, cwd=tmp_path))
    assert out in line
    assert ("does not exist" if where == "missing" else "not writable") in line
    assert not [n for n in os.listdir(tmp_path) if n.endswith((".parts", ".tmp"))]


def test_plot_refuses_an_unknown_image_suffix_before_drawing(tmp_path, result_json):
    # The result does not exist: the suffix is refused before it would be read.
    line = one_error_line(cli("plot", tmp_path / "missing.json", "-o", "cdf.txt", cwd=tmp_path))
    assert "cdf.txt" in line and "unknown suffix `.txt`" in line and ".png" in line and ".svg" in line
    line = one_error_line(cli("plot", result_json, "-o", "cdf", cwd=tmp_path))
    assert "no suffix" in line and ".pdf" in line
    assert os.listdir(tmp_path) == []


def test_a_sweep_table_cannot_go_to_a_pipe(tmp_path):
    (tmp_path / "s.toml").write_text('config = "mqsim-paper"\n[grid]\n"flow.0.queue_depth" = [1]\n')
    os.mkfifo(tmp_path / "t.parquet")
    line = one_error_line(cli("sweep", "s.toml", "--no-progress", "-o", "t.parquet", cwd=tmp_path))
    assert "t.parquet" in line and "regular file" in line and ".parts" in line
    assert sorted(os.listdir(tmp_path)) == ["s.toml", "t.parquet"]


@pytest.mark.parametrize(
    "command, suffix, form",
    [
        ("latency-log", ".csv", "csv"),
        ("latency-log", ".parquet", "parquet"),
        ("latency-log", "", "csv"),  # a pipe with no suffix, as /dev/stdout: CSV
        ("plot", ".png", "png"),
        ("plot", ".svg", "svg"),
        ("plot", "", "png"),
        ("report", ".html", "html"),
    ],
)
def test_pipes_are_written_in_place_by_every_streaming_writer(tmp_path, result_json, command, suffix, form):
    fifo = tmp_path / f"out{suffix}"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=read_fifo, args=(fifo, got), daemon=True)
    reader.start()
    p = cli(*writer_args(command, result_json, tmp_path), fifo, cwd=tmp_path)
    reader.join(timeout=60)
    assert p.returncode == 0, p.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the pipe, not a file renamed over it
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    data = got[0]
    if form == "csv":
        lines = data.decode().splitlines()
        assert lines[0].startswith('"id","flow","op"') and len(lines) == 501
    elif form == "parquet":
        import io

        import pyarrow.parquet as pq

        assert pq.read_table(io.BytesIO(data)).num_rows == 500
    elif form == "png":
        assert data.startswith(b"\x89PNG")
    elif form == "svg":
        assert b"<svg" in data[:1000]
    else:
        assert data.startswith(b"<!DOCTYPE html>") and b'id="summary"' in data


def test_standard_output_takes_the_result_and_the_log(tmp_path):
    # /dev/stdout and /dev/null have no suffix: the log goes as CSV, nothing is created beside them.
    p = cli("run", "mqsim-paper", *QUICK, "-o", "/dev/stdout", "--latency-log", "/dev/null", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count('"ssdkit_version"') == 2  # the -o copy, then --json's
    assert os.listdir(tmp_path) == []


# --- an interrupted write leaves the old file ---------------------------------------------------


def test_the_writer_keeps_the_old_file_when_the_work_fails(tmp_path):
    from ssdkit import outputs

    target = tmp_path / "out.json"
    target.write_text("old")
    os.symlink("out.json", tmp_path / "link.json")
    for path in (target, tmp_path / "link.json"):
        for exc in (KeyboardInterrupt, RuntimeError, OSError(28, "No space left on device")):
            expected = ssdkit.SsdkitIoError if isinstance(exc, OSError) else exc
            with pytest.raises(expected), outputs.writing(path, "result JSON") as f:
                f.write(b"half a docu")
                raise exc
            assert target.read_text() == "old"
            assert sorted(os.listdir(tmp_path)) == ["link.json", "out.json"]
    outputs.write(tmp_path / "link.json", "new", "result JSON")
    assert target.read_text() == "new" and os.path.islink(tmp_path / "link.json")


def test_an_interrupted_report_leaves_the_old_file(tmp_path, result_json, monkeypatch):
    from ssdkit import cli as ssdkit_cli

    out = tmp_path / "report.html"
    out.write_text("old report")

    def interrupted(fd):
        raise KeyboardInterrupt  # the page is written, not yet in place

    monkeypatch.setattr(os, "fsync", interrupted)
    assert ssdkit_cli.main(["report", str(result_json), "-o", str(out)]) == 128 + 2
    assert out.read_text() == "old report"
    assert os.listdir(tmp_path) == ["report.html"]


def test_a_sweep_whose_table_write_fails_leaves_the_old_table(tmp_path, monkeypatch):
    import pandas as pd

    (tmp_path / "cfg.toml").write_text("[flash]\nblocks_per_plane = 128\n[[flow]]\nrequests = 200\n")
    out = tmp_path / "t.parquet"
    out.write_bytes(b"the old table")
    real = pd.DataFrame.to_parquet

    def half_then_full_disk(self, path, *a, **kw):
        if not isinstance(path, (str, os.PathLike)):  # the final table (the part files go by path)
            path.write(b"PAR1 half a table")
            raise OSError(28, "No space left on device")
        return real(self, path, *a, **kw)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", half_then_full_disk)
    with pytest.raises(ssdkit.SsdkitIoError, match=r"cannot write sweep table `.*t\.parquet`: No space left"):
        ssdkit.sweep(tmp_path / "cfg.toml", {"flow.0.queue_depth": [1, 2]}, output=out, workers=1, progress=False)
    assert out.read_bytes() == b"the old table"
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_api_writers_raise_ssdkit_io_errors(tmp_path, result_json):
    from ssdkit.report import report

    r = tmp_path / "r.json"
    shutil.copy(result_json, r)
    with pytest.raises(ssdkit.SsdkitIoError, match="same file as the result JSON"):
        report(r, r)
    with pytest.raises(ssdkit.SsdkitIoError, match="does not exist"):
        report(r, tmp_path / "no" / "r.html")
    (tmp_path / "cfg.toml").write_text("[flash]\nblocks_per_plane = 128\n[[flow]]\nrequests = 200\n")
    with pytest.raises(ssdkit.SsdkitIoError, match="same file as the configuration file"):
        ssdkit.sweep(tmp_path / "cfg.toml", {"flow.0.queue_depth": [1]}, output=tmp_path / "cfg.toml", progress=False)
    assert not (tmp_path / "cfg.toml.parts").exists()
    os.link(tmp_path / "cfg.toml", tmp_path / "cfg.csv")
    with pytest.raises(ssdkit.SsdkitIoError, match="same file as the configuration file"):
        ssdkit.run(tmp_path / "cfg.toml", latency_log=tmp_path / "cfg.csv")
    assert r.read_bytes() == result_json.read_bytes()
