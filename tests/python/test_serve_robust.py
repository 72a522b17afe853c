"""`ssdkit serve` under abuse and over time: random bytes on fresh connections, a client gone in
the middle of a payload, a soak of 8 connections checked against a model of the bytes with the
server's memory bounded; the two clocks and what they write (-o on SIGUSR1, every
--result-every seconds and at SIGTERM, the latency log); durable data surviving SIGKILL, holes
punched in the backing file by TRIM, and the in-memory store's limit.

Each server is the small test device (the mqsim-paper timing on TINY's geometry, 59.5 MiB) and
starts in under a second.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import nbd_raw as n
import pyarrow.csv as pacsv
import pytest
from _serve import READY, peak_rss_bytes, served
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_serve_clients import ssdkit_args
from test_serve_protocol import DEVICE, SIZE, MiB, connect, pattern, serve

KiB = 1 << 10


def wait_for(cond, timeout: float = 10.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        time.sleep(0.05)


def result_if(path: Path, pred) -> dict | None:
    """The result at ``path`` if it exists, parses and satisfies ``pred``."""
    try:
        r = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return r if pred(r) else None


# ---------------------------------------------------------------------------------------------
# Random bytes


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("fuzz"), "--queues", "4") as s:
        yield s


PREFIXES = {
    "none": b"",
    # Client flags, so the bytes land in option haggling.
    "options": struct.pack(">I", n.CLIENT_FIXED_NEWSTYLE | n.CLIENT_NO_ZEROES),
    # Client flags and a GO: the bytes land in transmission.
    "transmission": struct.pack(">I", 3) + struct.pack(">QII", n.IHAVEOPT, n.OPT_GO, 6) + n.info_request(""),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.sampled_from(sorted(PREFIXES)), junk=st.binary(min_size=1, max_size=300))
def test_random_bytes_on_fresh_connections(fuzzed, prefix, junk):
    _send_and_drain(fuzzed, PREFIXES[prefix] + junk)


def _send_and_drain(fuzzed, data: bytes) -> None:
    """Sends `data` on a fresh connection and shuts our side: the server answers or closes, and
    with our side shut it must close in the end, staying up itself."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(str(fuzzed.socket))
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            while s.recv(1 << 16):
                pass
        except (ConnectionResetError, BrokenPipeError):
            pass
    assert fuzzed.proc.poll() is None


def _option(opt: int, data: bytes, length: int | None) -> bytes:
    return struct.pack(">QII", n.IHAVEOPT, opt, len(data) if length is None else length) + data


def _request(flags: int, kind: int, offset: int, length: int, payload: bytes) -> bytes:
    return struct.pack(">IHHQQI", n.REQUEST_MAGIC, flags, kind, 7, offset, length) + payload


U32 = st.integers(0, 2**32 - 1)
OPTIONS = st.builds(_option, st.integers(0, 12) | U32, st.binary(max_size=64), st.none() | U32)
REQUESTS = st.builds(
    _request,
    st.integers(0, 31) | st.integers(0, 2**16 - 1),
    st.integers(0, 9) | st.integers(0, 2**16 - 1),
    st.sampled_from([0, 512, 4096, SIZE - 4096, SIZE, 2**63]) | st.integers(0, 2**64 - 1),
    st.sampled_from([0, 512, 4096, 32 * MiB, 32 * MiB + 512]) | U32,
    st.binary(max_size=64),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    msgs=st.one_of(
        st.tuples(st.just("options"), st.lists(OPTIONS, min_size=1, max_size=4)),
        st.tuples(st.just("transmission"), st.lists(REQUESTS, min_size=1, max_size=4)),
    )
)
def test_well_framed_nonsense_on_fresh_connections(fuzzed, msgs):
    """Options and requests with valid magics and random fields (unknown types, lying lengths,
    huge offsets and lengths), so the bytes get past the framing into the checks."""
    prefix, items = msgs
    _send_and_drain(fuzzed, PREFIXES[prefix] + b"".join(items))


def test_after_the_fuzz_a_normal_client_is_served(fuzzed):
    # Runs after the fuzz (file order): every queue pair was given back.
    clients = [connect(fuzzed) for _ in range(4)]
    for i, c in enumerate(clients):
        assert c.write(i * MiB, pattern(i, 8192)).error == 0
    for i, c in enumerate(clients):
        assert c.read(i * MiB, 8192).data == pattern(i, 8192)
        c.close()
    # A panicking connection thread would leave the server up but say so on stderr.
    assert "panick" not in fuzzed.stderr(), fuzzed.stderr()[-3000:]


def test_client_gone_in_the_middle_of_a_write_payload(tmp_path):
    with serve(tmp_path, "--queues", "2") as s:
        with connect(s) as c:
            assert c.write(2 * MiB, pattern(1, MiB)).error == 0
        with connect(s) as c:
            c.send_raw(struct.pack(">IHHQQI", n.REQUEST_MAGIC, 0, n.CMD_WRITE, 7, 2 * MiB, MiB))
            c.send_raw(pattern(2, 300 * KiB))
        # Both queue pairs are free again (the half-written connection gave its back), and the
        # acknowledged data is intact: the torn write was never applied.
        with connect(s) as a, connect(s) as b:
            assert a.read(2 * MiB, MiB).data == pattern(1, MiB)
            assert b.write(0, pattern(3, 4096)).error == 0
        assert s.proc.poll() is None


# ---------------------------------------------------------------------------------------------
# Soak

SOAK_CONNECTIONS = 8
SOAK_REGION = 4 * MiB
SOAK_SECONDS = 10.0
SOAK_MAX_OPS = 4000


def soak_worker(c: n.Client, i: int, stop_at: float, counts: list[int], errors: list[BaseException]) -> None:
    """A random mix on this connection's own region, each reply checked against the model."""
    try:
        rng = random.Random(i)
        base = i * SOAK_REGION
        model = bytearray(SOAK_REGION)
        ops = 0
        while ops < SOAK_MAX_OPS and time.monotonic() < stop_at:
            ops += 1
            ln = 512 * rng.randint(1, 128)
            off = 512 * rng.randrange((SOAK_REGION - ln) // 512 + 1)
            kind = rng.random()
            if kind < 0.4:
                data = rng.randbytes(ln)
                assert c.write(base + off, data, flags=n.CMD_FLAG_FUA if rng.random() < 0.1 else 0).error == 0
                model[off : off + ln] = data
            elif kind < 0.8:
                r = c.read(base + off, ln)
                assert r.error == 0 and r.data == model[off : off + ln], (i, off, ln)
            elif kind < 0.9:
                assert c.trim(base + off, ln).error == 0
                model[off : off + ln] = bytes(ln)
            elif kind < 0.97:
                assert c.write_zeroes(base + off, ln, flags=rng.choice([0, n.CMD_FLAG_NO_HOLE])).error == 0
                model[off : off + ln] = bytes(ln)
            else:
                assert c.flush().error == 0
        assert c.read(base, SOAK_REGION).data == model
        counts[i] = ops
    except BaseException as e:  # noqa: BLE001 (handed to the main thread)
        errors.append(e)


def test_soak_8_connections_against_a_model(tmp_path):
    out = tmp_path / "o.json"
    with serve(tmp_path, "--queues", "8", "-o", str(out)) as s:
        clients = [connect(s) for _ in range(SOAK_CONNECTIONS)]
        baseline = peak_rss_bytes(s.pid)
        counts = [0] * SOAK_CONNECTIONS
        errors: list[BaseException] = []
        stop_at = time.monotonic() + SOAK_SECONDS
        threads = [
            threading.Thread(target=soak_worker, args=(c, i, stop_at, counts, errors)) for i, c in enumerate(clients)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(SOAK_SECONDS + 60)
        assert not errors, errors[:3]
        peak = peak_rss_bytes(s.pid)
        for c in clients:
            c.close()
    # The bound: what the server held when serving began, plus the data it can hold (the 8
    # regions, 32 MiB, if every byte was written), plus 64 MiB for what is in flight (a 64 KiB
    # payload per connection, the simulator's queues, the result's histograms) and the
    # allocator's slack. A leak per request (thousands of them) would pass it.
    bound = baseline + SOAK_CONNECTIONS * SOAK_REGION + 64 * MiB
    assert peak <= bound, (peak / MiB, baseline / MiB)
    total = sum(counts)
    assert total >= 1000, counts
    result = json.loads(out.read_text())
    # Every request is in the record, refused ones included (none here).
    assert result["emulator"]["requests"] >= total and result["emulator"]["errors"] == 0


# ---------------------------------------------------------------------------------------------
# Clocks and outputs


def read_log(path: Path):
    return pacsv.read_csv(path).to_pylist()


def test_fast_clock_result_matches_the_latency_log(tmp_path):
    out, log = tmp_path / "o.json", tmp_path / "log.csv"
    with serve(tmp_path, "-o", str(out), "--latency-log", str(log)) as s, connect(s) as c:
        for i in range(20):
            assert c.write(i * 64 * KiB, pattern(i, 16 * KiB)).error == 0
        for i in range(40):
            assert c.read((i % 20) * 64 * KiB, 4096 * (1 + i % 4)).error == 0
    rows = read_log(log)
    reads = [r["latency_ns"] for r in rows if r["op"] == "read"]
    assert len(reads) == 40 and len(rows) == 60
    [flow] = [f for f in json.loads(out.read_text())["flows"] if f["stats"]["read"]["count"]]
    # The result's mean is in microseconds to the picosecond; the log has nanoseconds.
    assert flow["stats"]["read"]["latency_us"]["mean"] == pytest.approx(sum(reads) / len(reads) / 1000, abs=1e-3)


def test_real_clock_replies_no_earlier_than_simulated(tmp_path):
    out, log = tmp_path / "o.json", tmp_path / "log.csv"
    args = (*ssdkit_args(DEVICE), "--clock", "real", "-o", str(out), "--latency-log", str(log))
    with served(*args, tmp_path=tmp_path) as s, connect(s) as c:
        for i in range(30):
            assert c.read(i * 64 * KiB, 4096).error == 0
        assert c.write(0, pattern(1, 4096)).error == 0
    rows = read_log(log)
    assert len(rows) == 31
    # Observed: from the request's arrival to its reply's write; the reply waits for the
    # simulated completion, so it is never shorter but for the clock's granularity (1 us).
    for r in rows:
        assert r["observed_ns"] >= r["latency_ns"] - 1000, r
        assert r["late_ns"] >= -1000, r
    emu = json.loads(out.read_text())["emulator"]
    assert emu["clock"] == "real" and emu["lateness"]["max"] >= emu["lateness"]["p50"] > 0


def test_sigusr1_rewrites_the_result_while_serving(tmp_path):
    out = tmp_path / "o.json"
    with serve(tmp_path, "-o", str(out)) as s, connect(s) as c:
        assert not out.exists()
        for i in range(3):
            assert c.write(i * 4096, pattern(i, 4096)).error == 0
        s.proc.send_signal(signal.SIGUSR1)
        first = wait_for(lambda: result_if(out, lambda r: r["emulator"]["requests"] == 3), what="-o after SIGUSR1")
        for i in range(5):
            assert c.read(i * 4096, 4096).error == 0
        s.proc.send_signal(signal.SIGUSR1)
        second = wait_for(lambda: result_if(out, lambda r: r["emulator"]["requests"] == 8), what="-o rewritten")
        assert s.proc.poll() is None
    assert first["flows"][0]["stats"]["read"]["count"] == 0
    assert second["flows"][0]["stats"]["read"]["count"] == 5


def test_result_every_rewrites_the_result(tmp_path):
    out = tmp_path / "o.json"
    with serve(tmp_path, "-o", str(out), "--result-every", "1") as s, connect(s) as c:
        assert c.write(0, pattern(1, 4096)).error == 0
        first = wait_for(lambda: result_if(out, lambda r: r["emulator"]["requests"] == 1), 5, "first periodic -o")
        for i in range(4):
            assert c.read(0, 4096).error == 0
        second = wait_for(lambda: result_if(out, lambda r: r["emulator"]["requests"] == 5), 5, "second periodic -o")
        assert second["emulator"]["uptime_s"] > first["emulator"]["uptime_s"]


def test_sigterm_writes_result_and_log_and_removes_the_socket(tmp_path):
    out, log = tmp_path / "o.json", tmp_path / "log.csv"
    with serve(tmp_path, "-o", str(out), "--latency-log", str(log)) as s:
        c = connect(s)
        answered = 0
        for i in range(10):
            answered += c.write(i * 4096, pattern(i, 4096)).error == 0
        answered += c.flush().error == 0
        assert c.read(1, 1).error == n.EINVAL  # refused: no simulated request, no row
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(30) == 0
        c.close()
    assert not s.socket.exists()
    emu = json.loads(out.read_text())["emulator"]
    assert (emu["requests"], emu["errors"]) == (12, 1)
    assert len(read_log(log)) == answered == 11


# ---------------------------------------------------------------------------------------------
# Durability, holes, memory limit


def test_durable_data_survives_sigkill(tmp_path):
    back, out = tmp_path / "dev.img", tmp_path / "o.json"
    data = {i: pattern(50 + i, 64 * KiB) for i in range(8)}
    sock, err = tmp_path / "k", tmp_path / "k.stderr"
    args = [*ssdkit_args(DEVICE), "--clock", "fast", "--backing", str(back), "--durable", "-o", str(out)]
    with err.open("wb") as e:
        proc = subprocess.Popen([sys.executable, "-m", "ssdkit", "serve", *args, "--socket", str(sock)], stderr=e)
    try:
        wait_for(lambda: READY in err.read_text(), 60, "the server to start")
        with connect(SimpleNamespace(socket=sock)) as c:
            cookies = [
                c.send(n.CMD_WRITE, 8 * MiB + i * MiB, data=d, flags=n.CMD_FLAG_FUA if i % 2 else 0)
                for i, d in data.items()
            ]
            cookies.append(c.send(n.CMD_FLUSH))
            replies = [c.reply() for _ in cookies]
            assert all(r.error == 0 for r in replies)
            proc.send_signal(signal.SIGUSR1)
            before = wait_for(lambda: result_if(out, lambda r: r["emulator"]["requests"] == 9), what="-o")
    finally:
        proc.kill()
        assert proc.wait(30) == -signal.SIGKILL
    # A SIGKILL keeps what was pwritten (it is in the page cache), so the data coming back
    # alone does not show --durable worked: the fsyncs do (only a power cut tells them apart).
    store = before["emulator"]["store"]
    assert store["kind"] == "file" and store["durable"] and store["fsyncs"] >= 5, store
    with serve(tmp_path, "--backing", str(back), name="s2") as s, connect(s) as c:
        for i, d in data.items():
            assert c.read(8 * MiB + i * MiB, len(d)).data == d


def test_trim_punches_holes_in_the_backing_file(tmp_path):
    back = tmp_path / "dev.img"
    with serve(tmp_path, "--backing", str(back)) as s, connect(s) as c:
        assert os.stat(back).st_size == SIZE
        assert c.write(4 * MiB, pattern(4, 2 * MiB)).error == 0
        assert c.flush().error == 0
        full = os.stat(back).st_blocks * 512
        assert full >= 2 * MiB
        assert c.trim(4 * MiB, MiB).error == 0
        assert c.flush().error == 0
        after = os.stat(back).st_blocks * 512
        assert after <= full - MiB, (full, after)
        assert c.read(4 * MiB, 2 * MiB).data == bytes(MiB) + pattern(4, 2 * MiB)[MiB:]


def test_memory_limit_gives_enospc(tmp_path):
    out = tmp_path / "o.json"
    with serve(tmp_path, "--memory-limit", str(MiB), "-o", str(out)) as s, connect(s) as c:
        results = [c.write(i * 64 * KiB, pattern(i, 64 * KiB)).error for i in range(32)]
        ok = [i for i, e in enumerate(results) if e == 0]
        assert set(results) == {0, n.ENOSPC}, results
        assert len(ok) * 64 * KiB <= MiB
        assert ok == list(range(len(ok)))
        # What was stored reads back; overwriting it needs no new memory.
        assert c.read(0, 64 * KiB).data == pattern(0, 64 * KiB)
        assert c.write(0, pattern(99, 64 * KiB)).error == 0
        # A refused range still reads as zeros.
        assert c.read(31 * 64 * KiB, 64 * KiB).data == bytes(64 * KiB)
    store = json.loads(out.read_text())["emulator"]["store"]
    assert store["stored_bytes"] <= MiB == store["limit_bytes"]


def test_sigterm_with_requests_in_flight_keeps_acknowledged_data(tmp_path):
    """SIGTERM while 128 writes are in flight under the real clock (about 200 ms of programs):
    each is answered (the spec allows closing instead; ssdkit.serve promises answers),
    every acknowledged one is in the backing file when the server comes back, and the log has
    a row for each."""
    back, log = tmp_path / "dev.img", tmp_path / "log.csv"
    data = {i: pattern(200 + i, 16 * KiB) for i in range(128)}
    args = (*ssdkit_args(DEVICE), "--clock", "real", "--backing", str(back), "--latency-log", str(log))
    with served(*args, tmp_path=tmp_path) as s:
        c = connect(s)
        cookies = {c.send(n.CMD_WRITE, 16 * MiB + i * 64 * KiB, data=d): i for i, d in data.items()}
        s.proc.send_signal(signal.SIGTERM)
        acked = []
        try:
            while True:
                r = c.reply()
                assert r.cookie in cookies and r.error in (0, n.ESHUTDOWN), r
                if r.error == 0:
                    acked.append(cookies[r.cookie])
        except (EOFError, ConnectionResetError):
            pass
        c.close()
        assert s.proc.wait(30) == 0
    # ssdkit serve answers what is in flight before it stops (the spec would let it close).
    assert sorted(acked) == sorted(data)
    assert len(read_log(log)) == len(acked)
    with serve(tmp_path, "--backing", str(back), name="again") as s, connect(s) as c:
        for i in acked:
            assert c.read(16 * MiB + i * 64 * KiB, 16 * KiB).data == data[i], i


def test_announced_writes_cost_no_memory_until_their_bytes_come(tmp_path):
    """16 clients each announce a 32 MiB write (the largest payload) and send 10 bytes of it:
    the server holds what arrived (in steps of 1 MiB), not 16 x 32 MiB = 512 MiB."""
    with serve(tmp_path) as s:
        baseline = peak_rss_bytes(s.pid)
        clients = [connect(s) for _ in range(16)]
        for c in clients:
            c.send_raw(struct.pack(">IHHQQI", n.REQUEST_MAGIC, 0, n.CMD_WRITE, 1, 0, 32 * MiB) + b"x" * 10)
        # Every reader has the header by now; give them a moment to (wrongly) allocate.
        time.sleep(1.0)
        grown = peak_rss_bytes(s.pid) - baseline
        for c in clients:
            c.close()
        assert grown < 64 * MiB, grown / MiB
        with connect(s) as c:
            assert c.write(0, pattern(1, 4096)).error == 0
            assert c.read(0, 4096).data == pattern(1, 4096)
