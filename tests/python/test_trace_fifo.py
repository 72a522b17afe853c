"""A trace read from a FIFO (issue 31): opening one blocks until a program opens it for writing,
so with no writer yet ssdkit says once, on stderr, that it is waiting for one, then keeps
waiting; the run completes once a writer connects and writes the trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX feature")

TRACE = "".join(f"{1000 * (i + 1)} 0 {8 * i} 8 {i % 2}\n" for i in range(40))  # MQSim: time, device, LBA, sectors, type


def _setup(tmp_path):
    fifo = tmp_path / "live.trace"
    os.mkfifo(fifo)
    (tmp_path / "replay.toml").write_text(
        f'[flash]\nblocks_per_plane = 128\n\n[[flow]]\ntrace = "{fifo.name}"\ntrace_format = "mqsim"\n'
    )
    return fifo


def _run(tmp_path):
    return subprocess.Popen(
        [sys.executable, "-m", "ssdkit", "run", "replay.toml", "--no-progress", "-o", "out.json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _write(fifo):
    with open(fifo, "w") as w:
        w.write(TRACE)


def test_a_fifo_with_no_writer_says_once_that_it_waits(tmp_path):
    fifo = _setup(tmp_path)
    p = _run(tmp_path)
    try:
        # Long enough for the run to reach the open and wait there well past the grace period.
        time.sleep(3.0)
        assert p.poll() is None, p.communicate()
        _write(fifo)
        _out, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    waits = [x for x in err.splitlines() if "waiting for a writer" in x]
    assert len(waits) == 1, err
    assert "live.trace" in waits[0] and "FIFO" in waits[0], waits
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["flows"][0]["completed"] == 40


def test_a_fifo_whose_writer_is_there_first_gives_no_message(tmp_path):
    fifo = _setup(tmp_path)
    # The writer's open blocks until the run opens the FIFO to read; then the run's open returns at once.
    writer = threading.Thread(target=_write, args=(fifo,))
    writer.start()
    p = _run(tmp_path)
    _out, err = p.communicate(timeout=300)
    writer.join(timeout=60)
    assert p.returncode == 0, err
    assert "waiting for a writer" not in err, err
    assert json.loads((tmp_path / "out.json").read_text())["flows"][0]["completed"] == 40
