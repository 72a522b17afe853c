"""ssdkit.Device, the step-by-step device: a stream submitted request by request completes
exactly as its trace replayed by ssdkit.run; the batch form equals the one-at-a-time form; bad
requests raise RequestError (or TypeError) naming the problem and leave the device usable; the
context manager closes it; the closed-loop example runs."""

import pathlib
import random
import subprocess
import sys
import threading

import numpy as np
import pytest
import ssdkit
from conftest import TINY

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python" / "closed_loop.py"

# TINY with an 8-entry submission queue, so bursts fill it and requests wait in the host.
DEV = {**TINY, "interface.io_queue_depth": 8, "flow.0.queue_depth": 1}
# Two queue pairs: the second flow of the configuration is queue 1.
TWO_QUEUES = {**DEV, "flow.1.queue_depth": 1}
WALL_CLOCK_KEYS = {"wall_time_s", "events_per_wall_s", "requests_per_wall_s"}


def stream(n, capacity_bytes, seed=7, ops=("read", "read", "write")):
    """Bursts (a few ns apart, overfilling the 8-entry queue) and gaps; 1 to 64 sectors over
    the whole device. ``(time_ns, op, offset_bytes, bytes)``; the first at time 0."""
    rng = random.Random(seed)
    sectors_total = capacity_bytes // 512
    t = 0
    out = []
    for i in range(n):
        if i:
            k = rng.randrange(10)
            t += rng.randrange(3) if k < 6 else rng.randrange(20_000) if k < 9 else rng.randrange(400_000)
        sectors = rng.randint(1, 64)
        op = rng.choice(ops)
        start = 0 if op == "flush" else rng.randrange(sectors_total - sectors)
        out.append((t, op, start * 512, 0 if op == "flush" else sectors * 512))
    return out


def simulated(r):
    """The result document without the fields that measure the host (wall-clock times)."""
    doc = {k: v for k, v in r.raw.items() if k not in WALL_CLOCK_KEYS}
    doc["device"] = {**doc["device"], "precondition": dict(doc["device"]["precondition"])}
    doc["device"]["precondition"].pop("wall_time_s", None)
    return doc


@pytest.fixture(scope="module")
def tiny_capacity():
    return ssdkit.device_info("mqsim-paper", overrides=DEV)["capacity_bytes"]


# (a) identity with the batch run ------------------------------------------------------------


def test_stepped_stream_equals_trace_replay(tmp_path, tiny_capacity):
    reqs = stream(3000, tiny_capacity)
    with ssdkit.Device("mqsim-paper", overrides=DEV) as dev:
        assert dev.capacity_bytes == tiny_capacity and dev.queues == 1
        for i, (t, op, off, nbytes) in enumerate(reqs):
            assert dev.submit(t, op, off, nbytes) == i
        assert dev.outstanding() > 0
        dev.run_to_idle()
        assert dev.outstanding() == 0
        got = dev.drain_arrays()
        stepped = dev.result()
    assert len(got["id"]) == len(reqs)

    trace = tmp_path / "stream.trace"
    # MQSim: arrival_ns device start_sector size_sectors type (0 = write, 1 = read).
    trace.write_text("".join(f"{t} 0 {off // 512} {b // 512} {int(op == 'read')}\n" for t, op, off, b in reqs))
    batch = ssdkit.run(
        "mqsim-paper",
        overrides={**DEV, "flow.0.trace": str(trace), "flow.0.trace_format": "mqsim"},
        request_log=True,
    )
    log = batch.request_log
    assert list(log.columns) == ["flow", "op", "offset_bytes", "bytes", "submit_ns", "complete_ns", "latency_ns"]
    assert log.index.name == "id"
    assert len(log) == len(reqs)

    # Both in completion order, the same requests in the same order at the same times.
    np.testing.assert_array_equal(log.index.to_numpy(), got["id"])
    for col in ("op", "offset_bytes", "bytes", "submit_ns", "complete_ns", "latency_ns"):
        np.testing.assert_array_equal(log[col].to_numpy(), got[col], err_msg=col)
    np.testing.assert_array_equal(log["flow"].to_numpy(), got["queue"])
    # And to the picosecond: the native log keeps the exact times.
    _, cols = ssdkit._native.run_with_log(
        preset="mqsim-paper",
        overrides=[f"{k}={ssdkit.api.toml_literal(v)}" for k, v in DEV.items()]
        + [f"flow.0.trace={ssdkit.api.toml_literal(str(trace))}", 'flow.0.trace_format="mqsim"'],
    )
    exact = ssdkit.device._arrays(cols)
    np.testing.assert_array_equal(exact["complete_ps"], got["complete_ps"])
    # The stream does what it is meant to: some requests waited behind the full queue.
    assert (got["latency_ns"] > 1_000_000).any()
    # Submissions are exact in ns; completions are the ps floored.
    np.testing.assert_array_equal(got["submit_ps"], got["submit_ns"].astype(np.uint64) * 1000)
    np.testing.assert_array_equal(got["complete_ns"], (got["complete_ps"] // 1000).astype(np.int64))
    np.testing.assert_array_equal(got["latency_ns"], got["complete_ns"] - got["submit_ns"])
    by_id = np.argsort(got["id"])
    np.testing.assert_array_equal(got["submit_ns"][by_id], [t for t, *_ in reqs])

    # The result documents agree on everything simulated.
    assert stepped.device.stats == batch.device.stats
    assert stepped.device.flash == batch.device.flash
    assert stepped.device.ftl == batch.device.ftl
    assert stepped.simulated_time_ps == batch.simulated_time_ps
    assert stepped.flows[0].completed == batch.flows[0].completed == len(reqs)


def test_request_log_of_a_synthetic_run():
    r = ssdkit.run("mqsim-paper", overrides={**TINY, "flow.0.requests": 500, "flow.0.read_fraction": 0.5})
    assert r.request_log is None
    r = ssdkit.run(
        "mqsim-paper", overrides={**TINY, "flow.0.requests": 500, "flow.0.read_fraction": 0.5}, request_log=True
    )
    log = r.request_log
    assert len(log) == r.completed == 500
    assert sorted(log.index) == list(range(500))
    assert set(log["op"]) == {"read", "write"}
    assert (log["flow"] == 0).all()
    assert (log["latency_ns"] > 0).all() and (log["complete_ns"] >= log["submit_ns"]).all()
    assert (log.complete_ns.diff().dropna() >= 0).all(), "completion order"
    reads = log[log.op == "read"]
    assert len(reads) == r.device.stats.read.count
    assert int(reads["bytes"].sum()) == r.device.stats.read.bytes
    # The exact mean and the mean of floored ns differ by less than a ns.
    assert abs(log["latency_ns"].mean() / 1000 - r.device.stats.all.latency.mean) < 0.001


# (b) the batch form equals the one-at-a-time form -------------------------------------------


def test_batch_form_equals_one_at_a_time(tiny_capacity):
    reqs = stream(1500, tiny_capacity, seed=11, ops=("read", "write", "trim", "flush", "read"))
    rng = random.Random(3)
    queues = [rng.randrange(2) for _ in reqs]

    one = ssdkit.Device("mqsim-paper", overrides=TWO_QUEUES)
    assert one.queues == 2
    singles = [one.submit(t, op, off, b, q) for (t, op, off, b), q in zip(reqs, queues)]
    one.run_to_idle()
    drained = one.drain()
    one_result = one.result()

    t, ops, off, nbytes = (np.array(c) for c in zip(*reqs))
    codes = np.array([ssdkit.device.OPS.index(o) for o in ops], dtype=np.uint8)
    outs = []
    for op_form in (ops, codes, list(ops)):
        dev = ssdkit.Device("mqsim-paper", overrides=TWO_QUEUES)
        # In three batches, the middle one empty: the same as one batch.
        ids = np.concatenate(
            [
                dev.submit_many(t[:700], op_form[:700], off[:700], nbytes[:700], np.array(queues[:700])),
                dev.submit_many([], [], [], [], []),
                dev.submit_many(t[700:], op_form[700:], off[700:], nbytes[700:], queues[700:]),
            ]
        )
        assert ids.dtype == np.int64
        np.testing.assert_array_equal(ids, singles)
        dev.run_to_idle()
        outs.append((dev.drain_arrays(), dev.result()))
        dev.close()

    for arrays, result in outs:
        assert simulated(result) == simulated(one_result)
        assert [tuple(c) for c in drained] == list(
            zip(*(arrays[k].tolist() for k in ssdkit.Completion._fields)),
        )
    assert one_result.device.stats.flush.count == ops.tolist().count("flush") > 0
    assert one_result.device.stats.trim.count == ops.tolist().count("trim") > 0
    assert "flush" in one_result.summary()
    assert [f.completed for f in one_result.flows] == [queues.count(0), queues.count(1)]
    c = drained[0]
    assert isinstance(c, ssdkit.Completion) and c.latency_ns == c.complete_ns - c.submit_ns
    assert {c.op for c in drained} == {"read", "write", "trim", "flush"}


def test_scalars_broadcast_in_a_batch():
    with ssdkit.Device("mqsim-paper", overrides=DEV) as dev:
        ids = dev.submit_many(np.arange(0, 5000, 1000), "read", np.arange(5) * 4096, 4096)
        np.testing.assert_array_equal(ids, range(5))
        dev.run_to_idle()
        a = dev.drain_arrays()
        assert sorted(a["offset_bytes"].tolist()) == [0, 4096, 8192, 12288, 16384]
        assert set(a["op"]) == {"read"} and set(a["op_code"].tolist()) == {0}
        a["id"][:] = 0  # the arrays are the caller's to change


# (c) bad input ------------------------------------------------------------------------------

# (args of submit after a submission at 5000 ns, expected exception, fragments of the message)
BAD_SUBMITS = [
    ((4999, "read", 0, 4096), ssdkit.RequestError, ["4999 ns", "before", "5000 ns", "non-decreasing"]),
    ((-1, "read", 0, 4096), ssdkit.RequestError, ["`time_ns` is -1", ">= 0"]),
    ((6000, "read", -512, 4096), ssdkit.RequestError, ["`offset_bytes` is -512", ">= 0"]),
    ((6000, "read", 0, -4096), ssdkit.RequestError, ["`nbytes` is -4096"]),
    ((6000, "read", 100, 4096), ssdkit.RequestError, ["offset 100", "multiples of the 512-byte sector"]),
    ((6000, "read", 0, 1000), ssdkit.RequestError, ["size 1000", "multiples of the 512-byte sector"]),
    ((6000, "read", 0, 0), ssdkit.RequestError, ["size 0 bytes", "outside 512..="]),
    ((6000, "read", "CAP-512", 1024), ssdkit.RequestError, ["past the device's logical capacity"]),
    ((6000, "read", 2**64 - 512, 1024), ssdkit.RequestError, ["past the device's logical capacity"]),
    ((6000, "read", 2**64, 4096), ssdkit.RequestError, ["`offset_bytes` is 18446744073709551616", "too large"]),
    ((-(2**70), "read", 0, 4096), ssdkit.RequestError, ["`time_ns`", ">= 0"]),
    ((2**62, "read", 0, 4096), ssdkit.RequestError, ["`time_ns`", "too large", "picoseconds"]),
    ((6000, "erase", 0, 4096), ssdkit.RequestError, ["unknown op 'erase'", "'read', 'write', 'trim', 'flush'"]),
    ((6000, "w" * 100, 0, 4096), ssdkit.RequestError, ["unknown op '" + "w" * 40 + "...'"]),
    ((6000, "READ", 0, 4096), ssdkit.RequestError, ["unknown op", "READ"]),
    ((6000, "read", 0, 4096, 2), ssdkit.RequestError, ["queue 2 does not exist", "2 queue pair(s)"]),
    ((6000, "read", 0, 4096, -1), ssdkit.RequestError, ["`queue` is -1"]),
    ((6000, "read", 0, 4096, 2**40), ssdkit.RequestError, ["queue 1099511627776 does not exist"]),
    ((6000, "flush", 0, 4096), ssdkit.RequestError, ["a flush takes no range"]),
    ((6000.0, "read", 0, 4096), TypeError, ["`time_ns` must be an int", "float"]),
    ((6000, 0, 0, 4096), TypeError, ["`op` must be a str", "int"]),
    ((6000, None, 0, 4096), TypeError, ["`op` must be a str"]),
    ((6000, "read", "0", 4096), TypeError, ["`offset_bytes` must be an int", "str"]),
    ((6000, "read", 0, True), TypeError, ["`nbytes` must be an int, not bool"]),
]


@pytest.fixture
def busy_device():
    """Two queues, one write submitted at 5000 ns."""
    with ssdkit.Device("mqsim-paper", overrides=TWO_QUEUES) as dev:
        assert dev.submit(5000, "write", 0, 4096, 1) == 0
        yield dev


@pytest.mark.parametrize("args,exc,fragments", BAD_SUBMITS, ids=[str(a) for a, _, _ in BAD_SUBMITS])
def test_bad_submissions_say_why_and_change_nothing(busy_device, args, exc, fragments):
    dev = busy_device
    args = tuple(dev.capacity_bytes - 512 if a == "CAP-512" else a for a in args)
    before = (dev.now(), dev.outstanding())
    with pytest.raises(exc) as e:
        dev.submit(*args)
    msg = str(e.value)
    for frag in fragments:
        assert frag in msg, (frag, msg)
    if exc is ssdkit.RequestError:
        assert isinstance(e.value, ssdkit.SsdkitError)
    assert (dev.now(), dev.outstanding()) == before
    # Still works: the next good request gets the next id and everything completes.
    assert dev.submit(6000, "read", 0, 4096) == 1
    dev.run_to_idle()
    assert sorted(c.id for c in dev.drain()) == [0, 1]


def test_bad_run_until(busy_device):
    dev = busy_device
    with pytest.raises(ssdkit.RequestError, match=r"run_until\(4999 ns\) is before the device's current time 5000 ns"):
        dev.run_until(4999)
    with pytest.raises(ssdkit.RequestError, match="`time_ns` is -5"):
        dev.run_until(-5)
    with pytest.raises(TypeError, match="`time_ns` must be an int"):
        dev.run_until("6000")
    # Beyond 64 bits as beyond the clock: the limit named is the clock's, in nanoseconds (issue 31).
    limit = str((2**64 - 1) // 1000)
    for t in (2**64, 2**64 - 1, 2**100):
        with pytest.raises(ssdkit.RequestError) as e:
            dev.run_until(t)
        assert f"at most {limit} ns" in str(e.value) and "picoseconds" in str(e.value), str(e.value)
        assert str(2**64 - 1) not in str(e.value).replace(str(t), ""), str(e.value)
        with pytest.raises(ssdkit.RequestError, match=f"at most {limit} ns"):
            dev.submit(t, "read", 0, 4096)
    dev.run_until(np.int64(5000))  # the current time itself is fine; numpy ints too
    assert dev.now() == 5000
    dev.run_until(10**10)
    assert dev.now() == 10**10 and dev.outstanding() == 0


# (arguments of submit_many after a submission at 5000 ns, exception, fragments)
BAD_BATCHES = [
    (([6000, 7000, 8000], "read", [0, 4096, -4096], 4096), ssdkit.RequestError, ["request 2 of the batch", "-4096"]),
    # The first bad request is the one named.
    (([6000, 7000, 8000], "read", [0, 100, -512], 4096), ssdkit.RequestError, ["request 1 of the batch", "offset 100"]),
    (([6000, 7000, 6999], "read", 0, 4096), ssdkit.RequestError, ["request 2 of the batch", "6999 ns", "before"]),
    (([4000, 7000], "read", 0, 4096), ssdkit.RequestError, ["request 0 of the batch", "4000 ns", "before"]),
    (([6000, 7000], ["read", "wirte"], 0, 4096), ssdkit.RequestError, ["ops[1]", "unknown op 'wirte'", "'read'"]),
    (([6000, 7000], [0, 7], 0, 4096), ssdkit.RequestError, ["request 1 of the batch", "op code 7"]),
    (([6000, 7000], [0, -1], 0, 4096), ssdkit.RequestError, ["request 1 of the batch", "op code -1"]),
    (([6000, 7000], "read", [0, 100], 4096), ssdkit.RequestError, ["request 1", "multiples of the 512-byte sector"]),
    (([6000, 7000], "read", 0, [4096, 0]), ssdkit.RequestError, ["request 1", "outside 512..="]),
    (([6000], "read", 2**63 - 512, 4096), ssdkit.RequestError, ["request 0", "past the device's logical capacity"]),
    (([6000], "read", np.array([2**64 - 1], dtype=np.uint64), 4096), ssdkit.RequestError, ["too large"]),
    (([6000], "read", [2**70], 4096), ssdkit.RequestError, ["offset_bytes", "64-bit"]),
    (([6000, 7000], "read", 0, 4096, [0, 9]), ssdkit.RequestError, ["request 1", "queue 9 does not exist"]),
    (([6000, 7000], "flush", 0, 4096), ssdkit.RequestError, ["request 0", "a flush takes no range"]),
    (([6000, 7000, 8000], "read", [0, 4096], 4096), ssdkit.RequestError, ["one length", "time_ns (3,)", "(2,)"]),
    (([6000.5], "read", 0, 4096), TypeError, ["`time_ns` must hold integers", "float64"]),
    (([6000], [True], 0, 4096), TypeError, ["`ops` must hold op names", "codes 0-3", "bool"]),
    (([6000], [1.0], 0, 4096), TypeError, ["`ops` must hold op names", "float64"]),
    (([6000], "read", ["0"], 4096), TypeError, ["`offset_bytes` must hold integers"]),
    (([[6000]], "read", 0, 4096), TypeError, ["1-D"]),
    (([6000], [None], 0, 4096), TypeError, ["`ops` must hold op names", "a mix of other objects"]),
    # numpy makes a list of names and numbers all str.
    (([6000, 6000], ["read", 1], 0, 4096), ssdkit.RequestError, ["ops[1]", "unknown op '1'", "codes 0 read"]),
]


@pytest.mark.parametrize("args,exc,fragments", BAD_BATCHES, ids=[str(a) for a, _, _ in BAD_BATCHES])
def test_bad_batches_submit_nothing(busy_device, args, exc, fragments):
    dev = busy_device
    with pytest.raises(exc) as e:
        dev.submit_many(*args)
    msg = str(e.value)
    for frag in fragments:
        assert frag in msg, (frag, msg)
    if exc is ssdkit.RequestError and "request " in msg:
        assert "nothing was submitted" in msg
    assert dev.outstanding() == 1
    np.testing.assert_array_equal(dev.submit_many([6000, 6000], ["read", "write"], [0, 8192], 4096), [1, 2])
    dev.run_to_idle()
    assert sorted(c.id for c in dev.drain()) == [0, 1, 2]


def test_bad_configuration_is_a_config_error():
    with pytest.raises(ssdkit.PresetError, match="neither a built-in preset"):
        ssdkit.Device("no-such-preset")
    with pytest.raises(ssdkit.ConfigError, match="flash.channels"):
        ssdkit.Device("mqsim-paper", overrides={"flash.channels": 0})
    with pytest.raises(TypeError, match="overrides must be a dict"):
        ssdkit.Device("mqsim-paper", overrides=5)
    with pytest.raises(ssdkit.SsdkitIoError):
        ssdkit.Device("mqsim-paper", overrides=TINY, snapshot="/nonexistent/device.snap")


# (d) life cycle -----------------------------------------------------------------------------


def test_context_manager_closes():
    with ssdkit.Device("mqsim-paper", overrides=DEV) as dev:
        assert not dev.closed
        assert "outstanding" in repr(dev)
        dev.submit(0, "read", 0, 4096)
    assert dev.closed
    assert "closed" in repr(dev)
    assert dev.capacity_bytes > 0 and dev.queues == 1  # still readable
    for call in (
        lambda: dev.submit(10, "read", 0, 4096),
        lambda: dev.submit_many([10], "read", 0, 4096),
        dev.run_to_idle,
        lambda: dev.run_until(10),
        dev.drain,
        dev.drain_arrays,
        dev.now,
        dev.outstanding,
        dev.result,
    ):
        with pytest.raises(ssdkit.SsdkitError, match="this Device is closed"):
            call()
    dev.close()  # again: nothing happens

    with pytest.raises(RuntimeError, match="boom"), ssdkit.Device("mqsim-paper", overrides=DEV) as dev2:
        raise RuntimeError("boom")
    assert dev2.closed


# Units, clock and result ----------------------------------------------------------------


def test_clock_units_and_result():
    dev = ssdkit.Device("mqsim-paper", overrides=DEV, seed=5)
    assert dev.now() == 0 and dev.now_ps() == 0
    rid = dev.submit(1000, "read", 0, 4096)
    assert dev.now() == 1000 and dev.now_ps() == 1_000_000
    dev.run_until(1001)
    assert dev.drain() == [] and dev.outstanding() == 1
    dev.run_to_idle()
    # run_to_idle leaves the clock on a whole ns, so a submission at now() is accepted.
    assert dev.now_ps() % 1000 == 0
    [c] = dev.drain()
    assert (c.id, c.queue, c.op, c.offset_bytes, c.bytes, c.submit_ns) == (rid, 0, "read", 0, 4096, 1000)
    assert 1000 < c.complete_ns <= dev.now() and c.latency_ns == c.complete_ns - 1000
    dev.submit(dev.now(), "flush", 0, 0)
    dev.submit(dev.now(), "trim", 0, 65536)
    dev.run_to_idle()
    assert [c.op for c in sorted(dev.drain())] == ["flush", "trim"]
    r = dev.result()
    assert isinstance(r, ssdkit.Result) and isinstance(r.device, ssdkit.DeviceResult)
    assert r.seed == 5
    assert (r.device.stats.read.count, r.device.stats.flush.count, r.device.stats.trim.count) == (1, 1, 1)
    assert r.device.stats.flush.bytes == 0
    assert r.device.stats.read.latency.mean == pytest.approx(c.latency_ns / 1000, abs=0.001)
    assert r.completed == 3
    assert {row[2] for row in r.rows()} == {"read", "write", "all", "trim", "flush"}
    assert set(r.to_pandas()["op"]) == {"read", "write", "all", "trim", "flush"}
    dev.close()


def test_next_event_steps_to_each_completion():
    dev = ssdkit.Device("mqsim-paper", overrides=DEV)
    assert dev.next_event() is None and dev.next_event_ps() is None
    dev.submit(1000, "read", 0, 4096)
    dev.submit(1000, "write", 1 << 20, 8192)
    seen = []
    while (t := dev.next_event()) is not None:
        ps = dev.next_event_ps()
        # Rounded up to a whole ns, so run_until(t) processes the event.
        assert t == -(-ps // 1000) and t >= dev.now()
        dev.run_until(t)
        for c in dev.drain():
            assert c.complete_ns == ps // 1000
            seen.append(c.op)
    assert sorted(seen) == ["read", "write"] and dev.outstanding() == 0


def test_added_queue_pairs_copy_the_last_flow(tmp_path):
    snap = tmp_path / "device.snap"
    ssdkit.precondition("mqsim-paper", snap, overrides=TINY)
    for kw in ({}, {"snapshot": snap}):
        with ssdkit.Device("mqsim-paper", overrides=TINY, queues=3, **kw) as dev:
            assert dev.queues == 3
            for q in range(3):
                dev.submit(0, "read", q * 4096, 4096, queue=q)
            dev.run_to_idle()
            assert sorted(c.queue for c in dev.drain()) == [0, 1, 2]
            r = dev.result()
        assert [f.name for f in r.flows][1:] == ["queue1", "queue2"]
    with pytest.raises(ValueError, match="1..=65535"):
        ssdkit.Device("mqsim-paper", overrides=TINY, queues=0)
    with pytest.raises(TypeError, match="queues must be an int"):
        ssdkit.Device("mqsim-paper", overrides=TINY, queues="4")


def test_device_from_snapshot(tmp_path):
    snap = tmp_path / "device.snap"
    ssdkit.precondition("mqsim-paper", snap, overrides=TINY)
    with ssdkit.Device("mqsim-paper", overrides=TINY, snapshot=snap) as dev:
        dev.submit(0, "write", 0, 4096)
        dev.run_to_idle()
        r = dev.result()
    assert r.device.precondition["snapshot"] == str(snap)
    assert r.device.stats.write.count == 1


def test_calls_from_threads_are_serialised():
    with ssdkit.Device("mqsim-paper", overrides=DEV) as dev:
        dev.submit_many(np.arange(2000) * 10, "read", (np.arange(2000) % 1000) * 4096, 4096)
        seen = []

        def poll():
            for _ in range(200):
                seen.append(dev.outstanding())

        th = threading.Thread(target=poll)
        th.start()
        dev.run_to_idle()
        th.join()
        assert seen and all(0 <= n <= 2000 for n in seen)
        assert len(dev.drain()) == 2000


# (e) the closed-loop example ----------------------------------------------------------------


def test_closed_loop_example_runs():
    p = subprocess.run(
        [sys.executable, str(EXAMPLE), "--requests", "400", "--qd", "4", "--read-fraction", "0.8", "--compare"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "host loop: 400 requests at QD 4" in out
    assert "IOPS" in out and "mean latency" in out and "batch closed loop" in out, out
