//! One NBD connection: a reader thread (handshake, then requests: checks, data into the store
//! at arrival, the simulated work to the simulator thread) and a writer thread (replies, in
//! the order the simulator finishes them, with read data taken from the store as they leave).

use crate::handshake::{self, Outcome};
use crate::proto::{self, Cmd, Request};
use crate::simloop::{SimMsg, Work};
use crate::store::StoreError;
use crate::{Shared, Stream};
use ssdkit_core::internals::workload::Op;
use std::io::{BufReader, Read, Write};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A finished request's facts, for the latency log and the lateness histogram.
pub struct Done {
    pub queue: u32,
    pub op: Op,
    pub offset: u64,
    pub bytes: u64,
    pub arrival: Instant,
    pub submit_ps: u64,
    pub complete_ps: u64,
    /// Real clock: when the reply was due.
    pub target: Option<Instant>,
}

pub struct Reply {
    pub cookie: u64,
    pub error: u32,
    pub read: Option<(u64, u32)>,
    /// None for replies that never reached the simulator (refused requests, zero lengths).
    pub done: Option<Done>,
}

impl Reply {
    fn error(cookie: u64, error: u32) -> Self {
        Reply {
            cookie,
            error,
            read: None,
            done: None,
        }
    }
}

/// Requests of one connection in flight at once, at most: a client that sends without
/// reading replies is held back by its socket, and the server's memory stays bounded.
const MAX_IN_FLIGHT: u32 = 1024;
/// TRIMs and deallocating zeroings are simulated in pieces of this size; NO_HOLE zeroings are
/// simulated writes, in pieces of the largest payload.
const TRIM_PIECE: u64 = 1 << 30;
/// The writer gathers replies up to this many bytes before writing them out.
const BATCH_BYTES: usize = 1 << 20;

/// A connection's sending side, shared by its writer thread and the simulator thread: the
/// simulator sends a finished request's reply itself when the socket takes it at once (one
/// thread hop fewer, which is most of a reply's delay on a busy machine), and hands it to the
/// writer otherwise. The lock is held only while bytes go out, never waited for by the
/// simulator.
pub struct Out {
    sock: Stream,
    sending: Mutex<Sending>,
    in_flight: AtomicU32,
    requests: AtomicU64,
}

#[derive(Default)]
struct Sending {
    /// The unsent end of a reply the simulator began: it goes out before anything else.
    rest: Vec<u8>,
    broken: bool,
}

/// What `Out::try_send` did with a reply.
pub enum Sent {
    /// Written (or begun, the writer finishing it: `kick` says to wake the writer) at this
    /// instant; the reply's facts for the books.
    At {
        at: Instant,
        kick: bool,
        done: Option<Done>,
    },
    /// Not written: give it to the writer.
    Declined(Reply),
}

impl Out {
    fn new(sock: Stream) -> Self {
        Self {
            sock,
            sending: Mutex::new(Sending::default()),
            in_flight: AtomicU32::new(0),
            requests: AtomicU64::new(0),
        }
    }

    fn take(&self) {
        while self.in_flight.load(Ordering::Acquire) >= MAX_IN_FLIGHT {
            std::thread::sleep(Duration::from_micros(200));
        }
        self.in_flight.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn answered(&self, simulated: bool) {
        if simulated {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
        }
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// The simulator's attempt to send `r` without waiting; `buf` is its scratch buffer.
    pub(crate) fn try_send(&self, shared: &Shared, r: Reply, buf: &mut Vec<u8>) -> Sent {
        let Ok(mut s) = self.sending.try_lock() else {
            return Sent::Declined(r);
        };
        if !s.rest.is_empty() || s.broken {
            return Sent::Declined(r);
        }
        buf.clear();
        encode(shared, &r, buf);
        // A reply is released when it is handed to the socket. The send call itself, which
        // wakes the client (about 20 us on a 2-vCPU VM), is the transport's cost, as it is
        // nbdkit's.
        let at = Instant::now();
        let n = self.sock.send_now(buf);
        match n {
            Ok(n) if n == buf.len() => Sent::At {
                at,
                kick: false,
                done: r.done,
            },
            Ok(n) => {
                s.rest.extend_from_slice(&buf[n..]);
                Sent::At {
                    at,
                    kick: true,
                    done: r.done,
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Sent::Declined(r),
            Err(_) => {
                s.broken = true;
                Sent::At {
                    at,
                    kick: false,
                    done: r.done,
                }
            }
        }
    }
}

/// A reply's bytes: the header, and a successful READ's data from the store.
fn encode(shared: &Shared, r: &Reply, buf: &mut Vec<u8>) {
    match r.read {
        Some((offset, length)) if r.error == 0 => {
            let at = buf.len();
            buf.extend_from_slice(&proto::simple_reply(0, r.cookie));
            buf.resize(at + 16 + length as usize, 0);
            if shared.store.read(offset, &mut buf[at + 16..]).is_err() {
                shared.count_error();
                buf.truncate(at);
                buf.extend_from_slice(&proto::simple_reply(proto::EIO, r.cookie));
            }
        }
        _ => buf.extend_from_slice(&proto::simple_reply(r.error, r.cookie)),
    }
}

/// The reader: negotiates, then reads requests until the client leaves, sends DISC, breaks
/// the protocol, or the server stops (its socket's read side shut down).
pub fn serve(shared: Arc<Shared>, stream: Stream, conn: u64, sim: Sender<SimMsg>) {
    stream.set_read_timeout(Some(Duration::from_secs(60))).ok();
    let mut hs = match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return shared.forget(conn),
    };
    let mut claim = || shared.claim_queue();
    let queue = match handshake::negotiate(&mut hs, &shared.export, &mut claim) {
        Ok(Outcome::Go { queue }) => queue,
        Ok(Outcome::Closed(_)) | Err(_) => {
            stream.shutdown_both();
            return shared.forget(conn);
        }
    };
    stream.set_read_timeout(None).ok();
    let slot = shared.opened(queue);
    let (tx, rx) = mpsc::channel::<Option<Reply>>();
    let out = match stream.try_clone() {
        Ok(s) => Arc::new(Out::new(s)),
        Err(_) => {
            shared.release_queue(queue);
            return shared.forget(conn);
        }
    };
    let writer = {
        let (shared, out) = (shared.clone(), out.clone());
        std::thread::Builder::new()
            .name(format!("nbd-writer-{conn}"))
            .stack_size(256 * 1024)
            .spawn(move || write_replies(shared, out, rx, queue, slot))
    };
    let Ok(writer) = writer else {
        shared.release_queue(queue);
        return shared.forget(conn);
    };
    if sim
        .send(SimMsg::Open {
            conn,
            queue,
            replies: tx.clone(),
            out: out.clone(),
        })
        .is_ok()
    {
        read_requests(&shared, &stream, conn, &sim, &tx, &out);
    }
    shared.draining(true);
    sim.send(SimMsg::Closed { conn }).ok();
    drop(tx);
    writer.join().ok();
    shared.draining(false);
    stream.shutdown_both();
    shared.forget(conn);
}

fn read_requests(
    shared: &Shared,
    stream: &Stream,
    conn: u64,
    sim: &Sender<SimMsg>,
    tx: &Sender<Option<Reply>>,
    out: &Out,
) {
    let Ok(s) = stream.try_clone() else { return };
    let mut r = BufReader::with_capacity(256 * 1024, s);
    let mut head = [0u8; Request::BYTES];
    let mut data: Vec<u8> = Vec::new();
    loop {
        if !matches!(handshake::read_full(&mut r, &mut head), Ok(true)) {
            return;
        }
        let arrival = Instant::now();
        let req = Request::decode(&head);
        if req.magic != proto::REQUEST_MAGIC {
            // Nothing after a bad magic can be trusted: the spec's hard disconnect.
            stream.shutdown_both();
            return;
        }
        let cmd = match proto::check(&req, &shared.export) {
            Ok(c) => c,
            Err(e) => {
                // The payload is read (in bounded pieces) and dropped, so the stream stays in
                // step and an oversize write costs no memory.
                if !discard(&mut r, req.payload() as u64) {
                    return;
                }
                shared.count_error();
                if tx.send(Some(Reply::error(req.cookie, e))).is_err() {
                    return;
                }
                continue;
            }
        };
        // The store's side happens now, at arrival; the simulated work follows. A store that
        // refuses answers the request with its error, unsimulated.
        let staged: Result<Staged, u32> = match cmd {
            Cmd::Disc => return,
            Cmd::Read { offset, length } => Ok((
                Some((offset, length)),
                piece(Op::Read, offset, length as u64, u64::MAX),
            )),
            Cmd::Write {
                offset,
                length,
                fua,
            } => {
                if !read_payload(&mut r, &mut data, length as usize) {
                    return;
                }
                let stored = shared.store.write(offset, &data).map_err(|e| match e {
                    StoreError::Full => {
                        shared.warn_full();
                        proto::ENOSPC
                    }
                    StoreError::Io(_) => proto::EIO,
                });
                // An idle connection keeps no large buffer from its last big write.
                data.shrink_to(PAYLOAD_STEP);
                stored
                    .and_then(|_| shared.sync_if(fua))
                    .map(|_| (None, piece(Op::Write, offset, length as u64, u64::MAX)))
            }
            Cmd::Flush => shared.sync_if(true).map(|_| {
                let flush = Work {
                    op: Op::Flush,
                    offset: 0,
                    length: 0,
                };
                (None, vec![flush])
            }),
            Cmd::Trim {
                offset,
                length,
                fua,
            }
            | Cmd::WriteZeroes {
                offset,
                length,
                fua,
                punch: true,
            } => shared
                .store
                .discard(offset, length as u64)
                .map_err(|_| proto::EIO)
                .and_then(|_| shared.sync_if(fua))
                .map(|_| (None, piece(Op::Trim, offset, length as u64, TRIM_PIECE))),
            Cmd::WriteZeroes {
                offset,
                length,
                fua,
                punch: false,
            } => shared
                .store
                .zero(offset, length as u64)
                .map_err(|_| proto::EIO)
                .and_then(|_| shared.sync_if(fua))
                .map(|_| {
                    let max = proto::MAX_PAYLOAD as u64;
                    (None, piece(Op::Write, offset, length as u64, max))
                }),
        };
        let (read, work) = match staged {
            Ok(x) => x,
            Err(e) => {
                shared.count_error();
                if tx.send(Some(Reply::error(req.cookie, e))).is_err() {
                    return;
                }
                continue;
            }
        };
        if work.is_empty() {
            // A zero-length request: the spec leaves it undefined; nothing to simulate.
            if tx.send(Some(Reply::error(req.cookie, 0))).is_err() {
                return;
            }
            continue;
        }
        out.take();
        let msg = SimMsg::Req {
            conn,
            cookie: req.cookie,
            read,
            work,
            arrival,
        };
        if sim.send(msg).is_err() {
            return;
        }
    }
}

/// A checked request once the store has taken its side: a READ's range (read from the store
/// when the reply leaves) and the work to simulate.
type Staged = (Option<(u64, u32)>, Vec<Work>);

/// The range cut into pieces of at most `max` bytes (none for an empty range).
fn piece(op: Op, offset: u64, length: u64, max: u64) -> Vec<Work> {
    let mut out = Vec::with_capacity(1);
    let mut at = offset;
    while at < offset + length {
        let n = (offset + length - at).min(max);
        out.push(Work {
            op,
            offset: at,
            length: n,
        });
        at += n;
    }
    out
}

/// How far ahead of the bytes received a write's payload buffer grows.
const PAYLOAD_STEP: usize = 1 << 20;

/// Reads a write's `n`-byte payload into `data`, growing it as the bytes arrive, so that a
/// client which announces a 32 MiB write and sends nothing costs 1 MiB, not 32 (with 64
/// connections, 64 MiB instead of 2 GiB); false if the stream ended.
fn read_payload<R: Read>(r: &mut R, data: &mut Vec<u8>, n: usize) -> bool {
    data.clear();
    while data.len() < n {
        let at = data.len();
        data.resize(at + (n - at).min(PAYLOAD_STEP), 0);
        if !matches!(handshake::read_full(r, &mut data[at..]), Ok(true)) {
            return false;
        }
    }
    true
}

/// Reads and drops `n` bytes; false if the stream ended.
fn discard<R: Read>(r: &mut R, mut n: u64) -> bool {
    let mut scratch = [0u8; 64 * 1024];
    while n > 0 {
        let k = n.min(scratch.len() as u64) as usize;
        if !matches!(handshake::read_full(r, &mut scratch[..k]), Ok(true)) {
            return false;
        }
        n -= k as u64;
    }
    true
}

/// The writer: writes the replies the simulator did not send itself, a batch at a time, until
/// the reader and the simulator have both let go of the connection. `None` is a nudge to
/// finish a reply the simulator began.
fn write_replies(
    shared: Arc<Shared>,
    out: Arc<Out>,
    rx: Receiver<Option<Reply>>,
    queue: u32,
    slot: usize,
) {
    let mut buf: Vec<u8> = Vec::new();
    let mut batch: Vec<Reply> = Vec::new();
    while let Ok(first) = rx.recv() {
        buf.clear();
        let mut push = |r: Option<Reply>, buf: &mut Vec<u8>| {
            if let Some(r) = r {
                encode(&shared, &r, buf);
                batch.push(r);
            }
        };
        push(first, &mut buf);
        while buf.len() < BATCH_BYTES {
            match rx.try_recv() {
                Ok(r) => push(r, &mut buf),
                Err(_) => break,
            }
        }
        let sent = {
            let mut s = out.sending.lock().unwrap_or_else(|p| p.into_inner());
            let sent = Instant::now();
            if !s.broken {
                let mut w = &out.sock;
                let rest = std::mem::take(&mut s.rest);
                s.broken = w.write_all(&rest).and_then(|_| w.write_all(&buf)).is_err();
            }
            sent
        };
        for r in batch.drain(..) {
            out.answered(r.done.is_some());
            match r.done {
                Some(d) => shared.record(&d, sent),
                None => shared.count_reply(),
            }
        }
    }
    shared.closed(queue, slot, out.requests.load(Ordering::Relaxed));
}
