"""The raw NBD client of the protocol tests (nbd_raw.py), checked against the reference server,
`nbdkit memory` (Debian package nbdkit): if the client misread the protocol, the `ssdkit serve`
tests built on it would prove nothing."""

from __future__ import annotations

import os
import struct

import nbd_raw as nr
import pytest
from _serve import served

SIZE = 64 << 20


@pytest.fixture(scope="module")
def nbdkit(tmp_path_factory):
    with served(tmp_path=tmp_path_factory.mktemp("nbdkit"), server="nbdkit", size=str(SIZE)) as s:
        yield s


def connect(s) -> nr.Client:
    return nr.Client.connect(str(s.socket), timeout=10)


def test_greeting_and_list(nbdkit):
    with connect(nbdkit) as c:
        flags = c.handshake()
        assert flags & nr.FLAG_FIXED_NEWSTYLE and flags & nr.FLAG_NO_ZEROES
        # nbdkit's single export is the default one, "".
        assert c.list_exports() == [""]
        # The session goes on after LIST: an unknown option gets ERR_UNSUP and it still does.
        [r] = c.option(99, b"whatever")
        assert r.type == nr.REP_ERR_UNSUP and r.option == 99
        assert c.abort().type == nr.REP_ACK
        assert c.at_eof()


def test_info_decodes_export_and_block_sizes(nbdkit):
    with connect(nbdkit) as c:
        c.handshake()
        e = c.info("", (nr.INFO_BLOCK_SIZE, nr.INFO_NAME, nr.INFO_DESCRIPTION))
        assert e.size == SIZE
        assert e.flags & nr.TFLAG_HAS_FLAGS and e.flags & nr.TFLAG_CAN_MULTI_CONN
        assert not e.flags & nr.TFLAG_READ_ONLY
        # What _serve.nbdkit_memory sets, as ssdkit serve advertises.
        assert (e.min_block, e.preferred_block, e.max_payload) == (512, 4096, 32 << 20)
        assert e.name == ""
        assert e.replies[-1].type == nr.REP_ACK
        # INFO leaves the session in negotiation: GO after it works.
        assert c.go("").size == SIZE
        assert c.write(0, b"\1" * 512).error == 0


def test_option_errors_are_parsed(nbdkit):
    with connect(nbdkit) as c:
        c.handshake()
        # A malformed INFO (the name length runs past the data) gets ERR_INVALID.
        [r] = c.option(nr.OPT_INFO, struct.pack(">I", 100) + b"ab")
        assert r.is_error and r.type == nr.REP_ERR_INVALID and r.option == nr.OPT_INFO
        [r] = c.option(nr.OPT_LIST, b"x")
        assert r.type == nr.REP_ERR_INVALID
        [r] = c.option(nr.OPT_STARTTLS)
        assert r.type == nr.REP_ERR_POLICY
        # A name longer than the spec's 4096 bytes: the helpers raise with the reply.
        with pytest.raises(nr.OptionError) as err:
            c.go("n" * 5000)
        assert err.value.reply.is_error
        assert c.go("").size == SIZE


def test_write_read_round_trip_and_zeroes(nbdkit):
    data = os.urandom(64 << 10)
    with connect(nbdkit) as c:
        c.handshake()
        c.go()
        assert c.write(1 << 20, data, flags=nr.CMD_FLAG_FUA).error == 0
        r = c.read(1 << 20, len(data))
        assert r.error == 0 and r.data == data
        # Never-written ranges read as zeros; so do trimmed and zeroed ones.
        assert c.read(32 << 20, 4096).data == bytes(4096)
        assert c.write_zeroes(1 << 20, 4096, flags=nr.CMD_FLAG_NO_HOLE).error == 0
        assert c.trim((1 << 20) + 4096, 4096).error == 0
        assert c.read(1 << 20, 8192).data == bytes(8192)
        assert c.read((1 << 20) + 8192, 4096).data == data[8192 : 8192 + 4096]
        assert c.flush().error == 0
        # Past the end or misaligned: EINVAL and no payload, and the stream stays in step.
        assert c.read(SIZE, 4096).error == nr.EINVAL
        assert c.read(100, 512).error == nr.EINVAL
        assert c.read(0, 512).error == 0
        c.disc()
        assert c.at_eof()


def test_pipelined_requests(nbdkit):
    """Sixty-four requests out at once, writes and reads of other ranges mixed; each reply is
    matched to its request by cookie, whatever order they come in."""
    blocks = {i: os.urandom(4096) for i in range(32)}
    with connect(nbdkit) as c:
        c.handshake()
        c.go()
        base = 8 << 20
        for i, b in blocks.items():
            c.write(base + i * 4096, b)
        sent = {}
        for i in range(32):
            sent[c.send(nr.CMD_READ, base + i * 4096, 4096)] = ("read", i)
            sent[c.send(nr.CMD_WRITE, base + (64 + i) * 4096, data=blocks[i])] = ("write", i)
        got = {}
        for _ in sent:
            r = c.reply()
            assert r.error == 0 and r.cookie in sent and r.cookie not in got
            got[r.cookie] = r
        for cookie, (kind, i) in sent.items():
            assert got[cookie].data == (blocks[i] if kind == "read" else b"")
        assert c.read(base + 64 * 4096, 32 * 4096).data == b"".join(blocks.values())


def test_export_name_with_and_without_zeroes(nbdkit):
    with connect(nbdkit) as c:
        c.handshake(nr.CLIENT_FIXED_NEWSTYLE)
        size, flags, pad = c.export_name("")
        assert size == SIZE and flags & nr.TFLAG_HAS_FLAGS and pad == bytes(124)
        assert c.write(0, b"\2" * 512).error == 0
        assert c.read(0, 512).data == b"\2" * 512
    with connect(nbdkit) as c:
        c.handshake()
        size, _, pad = c.export_name("")
        assert size == SIZE and pad == b""
        assert c.read(0, 512).data == b"\2" * 512


def test_bad_request_magic_closes_the_connection(nbdkit):
    with connect(nbdkit) as c:
        c.handshake()
        c.go()
        c.send(nr.CMD_READ, 0, 512, magic=0x12345678)
        with pytest.raises((EOFError, ConnectionResetError)):
            c.reply()
    # Only that connection.
    with connect(nbdkit) as c:
        c.handshake()
        c.go()
        assert c.read(0, 512).error == 0
