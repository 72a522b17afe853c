"""A small NBD client in pure Python for protocol tests: it sends what it is told, well-formed or
not, and parses what comes back without judging it, so a test can check a server's every byte.

The protocol is NetworkBlockDevice/nbd's doc/proto.md (fixed newstyle negotiation, simple
replies only). All integers are big-endian. Typical use::

    with Client.connect(socket_path) as c:
        c.handshake()                      # fixed newstyle, no zeroes
        info = c.go("")                    # Export(size, flags, block sizes, ...)
        a = c.send(CMD_WRITE, 0, data=b"x" * 4096)
        b = c.send(CMD_READ, 0, 4096)      # pipelined: both requests are out
        replies = {r.cookie: r for r in (c.reply(), c.reply())}
"""

from __future__ import annotations

import itertools
import socket
import struct
from collections import deque
from dataclasses import dataclass, field
from typing import Self

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
REPLY_MAGIC = 0x0003E889045565A9
REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698
STRUCTURED_REPLY_MAGIC = 0x668E33EF

# Handshake flags (server) and client flags.
FLAG_FIXED_NEWSTYLE = 1
FLAG_NO_ZEROES = 2
CLIENT_FIXED_NEWSTYLE = 1
CLIENT_NO_ZEROES = 2

# Options.
OPT_EXPORT_NAME = 1
OPT_ABORT = 2
OPT_LIST = 3
OPT_PEEK_EXPORT = 4
OPT_STARTTLS = 5
OPT_INFO = 6
OPT_GO = 7
OPT_STRUCTURED_REPLY = 8
OPT_LIST_META_CONTEXT = 9
OPT_SET_META_CONTEXT = 10
OPT_EXTENDED_HEADERS = 11

# Option reply types; errors have bit 31 set.
REP_ACK = 1
REP_SERVER = 2
REP_INFO = 3
REP_META_CONTEXT = 4
REP_FLAG_ERROR = 1 << 31
REP_ERR_UNSUP = REP_FLAG_ERROR | 1
REP_ERR_POLICY = REP_FLAG_ERROR | 2
REP_ERR_INVALID = REP_FLAG_ERROR | 3
REP_ERR_PLATFORM = REP_FLAG_ERROR | 4
REP_ERR_TLS_REQD = REP_FLAG_ERROR | 5
REP_ERR_UNKNOWN = REP_FLAG_ERROR | 6
REP_ERR_SHUTDOWN = REP_FLAG_ERROR | 7
REP_ERR_BLOCK_SIZE_REQD = REP_FLAG_ERROR | 8
REP_ERR_TOO_BIG = REP_FLAG_ERROR | 9

# Information types of NBD_OPT_INFO / NBD_OPT_GO.
INFO_EXPORT = 0
INFO_NAME = 1
INFO_DESCRIPTION = 2
INFO_BLOCK_SIZE = 3

# Transmission flags.
TFLAG_HAS_FLAGS = 0x1
TFLAG_READ_ONLY = 0x2
TFLAG_SEND_FLUSH = 0x4
TFLAG_SEND_FUA = 0x8
TFLAG_ROTATIONAL = 0x10
TFLAG_SEND_TRIM = 0x20
TFLAG_SEND_WRITE_ZEROES = 0x40
TFLAG_SEND_DF = 0x80
TFLAG_CAN_MULTI_CONN = 0x100
TFLAG_SEND_RESIZE = 0x200
TFLAG_SEND_CACHE = 0x400
TFLAG_SEND_FAST_ZERO = 0x800

# Commands and command flags.
CMD_READ = 0
CMD_WRITE = 1
CMD_DISC = 2
CMD_FLUSH = 3
CMD_TRIM = 4
CMD_CACHE = 5
CMD_WRITE_ZEROES = 6
CMD_BLOCK_STATUS = 7
CMD_RESIZE = 8
CMD_FLAG_FUA = 1
CMD_FLAG_NO_HOLE = 2
CMD_FLAG_DF = 4
CMD_FLAG_REQ_ONE = 8
CMD_FLAG_FAST_ZERO = 16

# Error values of replies (Linux errno numbers, as the spec fixes them).
EPERM = 1
EIO = 5
ENOMEM = 12
EINVAL = 22
ENOSPC = 28
EOVERFLOW = 75
ENOTSUP = 95
ESHUTDOWN = 108


class ProtocolError(Exception):
    """The server sent something this client cannot parse (a wrong magic, a short item)."""


class OptionError(Exception):
    """An option got an error reply; ``reply`` is the :class:`OptionReply`."""

    def __init__(self, reply: OptionReply) -> None:
        super().__init__(f"option {reply.option} got reply type {reply.type:#x}: {reply.message!r}")
        self.reply = reply


@dataclass
class OptionReply:
    option: int
    type: int
    data: bytes

    @property
    def is_error(self) -> bool:
        return bool(self.type & REP_FLAG_ERROR)

    @property
    def message(self) -> str:
        """An error reply's optional message (UTF-8, undecodable bytes replaced)."""
        return self.data.decode("utf-8", "replace") if self.is_error else ""

    @property
    def info_type(self) -> int:
        """For REP_INFO: the information type (INFO_EXPORT, ...)."""
        return struct.unpack_from(">H", self.data)[0]

    @property
    def server_name(self) -> str:
        """For REP_SERVER (a LIST answer): the export's name."""
        (n,) = struct.unpack_from(">I", self.data)
        return self.data[4 : 4 + n].decode()


@dataclass
class Export:
    """What INFO or GO said about an export (None where no item told it)."""

    size: int | None = None
    flags: int | None = None
    min_block: int | None = None
    preferred_block: int | None = None
    max_payload: int | None = None
    name: str | None = None
    description: str | None = None
    replies: list[OptionReply] = field(default_factory=list, repr=False)

    def add(self, r: OptionReply) -> None:
        t = r.info_type
        if t == INFO_EXPORT:
            if len(r.data) != 12:
                raise ProtocolError(f"INFO_EXPORT item of {len(r.data)} bytes, not 12")
            _, self.size, self.flags = struct.unpack(">HQH", r.data)
        elif t == INFO_BLOCK_SIZE:
            if len(r.data) != 14:
                raise ProtocolError(f"INFO_BLOCK_SIZE item of {len(r.data)} bytes, not 14")
            _, self.min_block, self.preferred_block, self.max_payload = struct.unpack(">HIII", r.data)
        elif t == INFO_NAME:
            self.name = r.data[2:].decode()
        elif t == INFO_DESCRIPTION:
            self.description = r.data[2:].decode()


@dataclass
class Reply:
    """A simple reply: ``data`` is the payload of a successful READ (empty otherwise)."""

    error: int
    cookie: int
    data: bytes = b""


def info_request(name: str = "", infos: tuple[int, ...] = ()) -> bytes:
    """The data of NBD_OPT_INFO / NBD_OPT_GO: the export name and the information requested."""
    raw = name.encode()
    return struct.pack(">I", len(raw)) + raw + struct.pack(f">H{len(infos)}H", len(infos), *infos)


class Client:
    """One connection. Every method is a thin layer over the bytes; nothing is retried or
    checked beyond what parsing needs, so tests can also send what a real client would not."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.server_flags: int | None = None
        self.no_zeroes = False
        self._cookies = itertools.count(1)
        # READ payload lengths by cookie, in sending order, for requests not yet answered.
        self._reads: dict[int, deque[int]] = {}

    @classmethod
    def connect(cls, address: str | tuple[str, int], timeout: float = 30.0) -> Client:
        """A Unix socket path, or (host, port) for TCP."""
        family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(address)
        return cls(sock)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    # Bytes.

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise EOFError(f"connection closed after {len(buf)} of {n} bytes")
            buf += chunk
        return bytes(buf)

    def at_eof(self, timeout: float = 5.0) -> bool:
        """Whether the server closes the connection within ``timeout`` (True) or sends more or
        keeps it open (False). A reset counts as closed."""
        old = self.sock.gettimeout()
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False
        finally:
            self.sock.settimeout(old)

    # Handshake.

    def greeting(self) -> int:
        """Read the server's greeting; returns its handshake flags."""
        magic, opt, flags = struct.unpack(">QQH", self.recv_exact(18))
        if magic != NBDMAGIC or opt != IHAVEOPT:
            raise ProtocolError(f"greeting magic {magic:#x} {opt:#x}: not a fixed-newstyle NBD server")
        self.server_flags = flags
        return flags

    def handshake(self, client_flags: int = CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES) -> int:
        """Greeting, then the client flags; returns the server's handshake flags."""
        flags = self.greeting()
        self.send_raw(struct.pack(">I", client_flags))
        self.no_zeroes = bool(client_flags & CLIENT_NO_ZEROES)
        return flags

    def send_option(self, option: int, data: bytes = b"", length: int | None = None, magic: int = IHAVEOPT) -> None:
        """An option header and its data; ``length`` and ``magic`` may lie."""
        n = len(data) if length is None else length
        self.send_raw(struct.pack(">QII", magic, option, n) + data)

    def read_option_reply(self) -> OptionReply:
        magic, option, rtype, n = struct.unpack(">QIII", self.recv_exact(20))
        if magic != REPLY_MAGIC:
            raise ProtocolError(f"option reply magic {magic:#x}")
        return OptionReply(option, rtype, self.recv_exact(n))

    def option(self, option: int, data: bytes = b"") -> list[OptionReply]:
        """Send an option and read its replies up to and including the ACK or the first error."""
        self.send_option(option, data)
        replies = []
        while True:
            r = self.read_option_reply()
            replies.append(r)
            if r.type == REP_ACK or r.is_error:
                return replies

    def _info(self, option: int, name: str, infos: tuple[int, ...]) -> Export:
        replies = self.option(option, info_request(name, infos))
        if replies[-1].is_error:
            raise OptionError(replies[-1])
        export = Export(replies=replies)
        for r in replies:
            if r.type == REP_INFO:
                export.add(r)
        return export

    def info(self, name: str = "", infos: tuple[int, ...] = (INFO_BLOCK_SIZE,)) -> Export:
        return self._info(OPT_INFO, name, infos)

    def go(self, name: str = "", infos: tuple[int, ...] = (INFO_BLOCK_SIZE,)) -> Export:
        """NBD_OPT_GO: on its ACK transmission starts."""
        return self._info(OPT_GO, name, infos)

    def list_exports(self) -> list[str]:
        replies = self.option(OPT_LIST)
        if replies[-1].is_error:
            raise OptionError(replies[-1])
        return [r.server_name for r in replies if r.type == REP_SERVER]

    def export_name(self, name: str = "") -> tuple[int, int, bytes]:
        """NBD_OPT_EXPORT_NAME (the old way into transmission): size, transmission flags and the
        padding the server sent (124 zero bytes unless NO_ZEROES was agreed)."""
        self.send_option(OPT_EXPORT_NAME, name.encode())
        size, flags = struct.unpack(">QH", self.recv_exact(10))
        pad = b"" if self.no_zeroes else self.recv_exact(124)
        return size, flags, pad

    def abort(self) -> OptionReply:
        """NBD_OPT_ABORT; the server answers ACK (it may also just close, hence EOF is allowed)."""
        self.send_option(OPT_ABORT)
        return self.read_option_reply()

    # Transmission.

    def send(
        self,
        cmd: int,
        offset: int = 0,
        length: int | None = None,
        data: bytes = b"",
        flags: int = 0,
        cookie: int | None = None,
        magic: int = REQUEST_MAGIC,
    ) -> int:
        """Send one request without waiting for its reply; returns its cookie. ``length``
        defaults to len(data) (so a read needs it); it may disagree with ``data`` on purpose."""
        if cookie is None:
            cookie = next(self._cookies)
        n = len(data) if length is None else length
        if cmd == CMD_READ:
            self._reads.setdefault(cookie, deque()).append(n)
        self.send_raw(struct.pack(">IHHQQI", magic, flags, cmd, cookie, offset, n) + data)
        return cookie

    def reply(self) -> Reply:
        """Read the next simple reply, with its payload when it answers a successful READ."""
        magic, error, cookie = struct.unpack(">IIQ", self.recv_exact(16))
        if magic != SIMPLE_REPLY_MAGIC:
            raise ProtocolError(f"reply magic {magic:#x}")
        pending = self._reads.get(cookie)
        n = pending.popleft() if pending else 0
        if pending is not None and not pending:
            del self._reads[cookie]
        return Reply(error, cookie, self.recv_exact(n) if error == 0 and n else b"")

    def call(self, cmd: int, offset: int = 0, length: int | None = None, data: bytes = b"", flags: int = 0) -> Reply:
        """One request and its reply (nothing else may be outstanding)."""
        cookie = self.send(cmd, offset, length, data, flags)
        r = self.reply()
        if r.cookie != cookie:
            raise ProtocolError(f"reply for cookie {r.cookie}, expected {cookie}")
        return r

    def read(self, offset: int, length: int, flags: int = 0) -> Reply:
        return self.call(CMD_READ, offset, length, flags=flags)

    def write(self, offset: int, data: bytes, flags: int = 0) -> Reply:
        return self.call(CMD_WRITE, offset, data=data, flags=flags)

    def flush(self) -> Reply:
        return self.call(CMD_FLUSH)

    def trim(self, offset: int, length: int, flags: int = 0) -> Reply:
        return self.call(CMD_TRIM, offset, length, flags=flags)

    def write_zeroes(self, offset: int, length: int, flags: int = 0) -> Reply:
        return self.call(CMD_WRITE_ZEROES, offset, length, flags=flags)

    def disc(self) -> None:
        """NBD_CMD_DISC: no reply; the server answers what is outstanding, then closes."""
        self.send(CMD_DISC, 0, 0)
