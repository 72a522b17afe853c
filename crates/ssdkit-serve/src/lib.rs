//! `ssdkit serve`: the simulated SSD as an NBD export (docs/serve.md).
//!
//! A crate of its own because the core is deterministic, single-threaded and free of OS
//! calls, while a server needs sockets, threads, wall time and `libc` (fallocate, flock,
//! prctl); and because the fuzz target links the protocol parser without the rest.
//!
//! Threads: an acceptor; per connection a reader (handshake, requests, data into the store)
//! and a writer (replies, read data out of the store); and one simulator thread that owns the
//! `Device`, fed through channels, so nothing on the simulator's event path takes a lock.
//! Plain threads rather than an async runtime: `nbdkit`, the reference server, is threaded
//! too, and with two threads per connection the kernel's socket buffers do the queueing.

mod conn;
#[doc(hidden)]
pub mod fuzzing;
pub mod handshake;
pub mod proto;
mod simloop;
pub mod store;

use hdrhistogram::Histogram;
pub use simloop::timer_floor;
use simloop::{SimLoop, SimMsg};
use ssdkit_core::device::Device;
use ssdkit_core::internals::workload::Op;
use ssdkit_core::result::{
    EmulatorConnection, EmulatorResult, EmulatorStore, LatencyHistogram, LatencySummary, RunResult,
};
use ssdkit_core::Error;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::io::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use store::{FileStore, MemStore, Store};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    Real,
    Fast,
}

#[derive(Debug, Clone)]
pub enum Endpoint {
    Unix(PathBuf),
    /// `HOST:PORT`.
    Tcp(String),
}

#[derive(Debug, Clone)]
pub struct Options {
    pub endpoint: Endpoint,
    /// Listen on a non-loopback address (NBD has no authentication).
    pub allow_remote: bool,
    pub clock: Clock,
    pub read_only: bool,
    pub backing: Option<PathBuf>,
    pub durable: bool,
    /// Bytes the in-memory store may hold (without `backing`).
    pub memory_limit: u64,
    pub export_name: String,
    /// Real clock: the last stretch before a deadline is spun, not slept.
    pub spin_us: u64,
    /// Keep a row per request for the latency log (taken with `Server::take_log`).
    pub keep_log: bool,
}

fn err(m: String) -> Error {
    Error::Config(m)
}

/// The listening socket and the store, made before the device is built: bad input fails
/// before the slow part, and nothing is served yet.
pub struct Prepared {
    opts: Options,
    listener: Listener,
    store: Store,
    created: Option<PathBuf>,
    uri: String,
    capacity: u64,
}

impl Prepared {
    /// Checks the options, opens the store for a device of `capacity` bytes and binds.
    pub fn new(opts: Options, capacity: u64) -> Result<Self, Error> {
        if opts.export_name.len() > 4096 {
            return Err(err(
                "--export-name is longer than the NBD limit of 4096 bytes".into(),
            ));
        }
        let (store, created) = match &opts.backing {
            Some(p) => {
                let (f, created) = FileStore::open(p, capacity, opts.read_only).map_err(err)?;
                (Store::File(f), created.then(|| p.clone()))
            }
            None => (Store::Mem(MemStore::new(opts.memory_limit)), None),
        };
        let bound = Listener::bind(&opts.endpoint, opts.allow_remote);
        let (listener, uri) = match bound {
            Ok(x) => x,
            Err(e) => {
                if let Some(p) = &created {
                    std::fs::remove_file(p).ok();
                }
                return Err(e);
            }
        };
        Ok(Self {
            opts,
            listener,
            store,
            created,
            uri,
            capacity,
        })
    }

    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Undoes `new`: the socket and a backing file made by it are removed.
    pub fn abandon(self) {
        self.listener.remove();
        if let Some(p) = &self.created {
            std::fs::remove_file(p).ok();
        }
    }

    /// Serves `dev` (its capacity must be the one prepared for) until `Server::stop`.
    pub fn start(self, dev: Device, description: String) -> Result<Server, Error> {
        if dev.capacity_bytes() != self.capacity {
            let msg = format!(
                "internal error: the device holds {} bytes, the store was made for {}",
                dev.capacity_bytes(),
                self.capacity
            );
            self.abandon();
            return Err(Error::Simulation(msg));
        }
        let queues = dev.queues();
        let export = proto::Export {
            name: self.opts.export_name.clone(),
            description,
            size: self.capacity,
            min_block: dev.sector_bytes() as u32,
            read_only: self.opts.read_only,
        };
        let shared = Arc::new(Shared {
            export,
            store: self.store,
            clock: self.opts.clock,
            t0: Instant::now(),
            durable: self.opts.durable,
            stopping: AtomicBool::new(false),
            queues: Mutex::new(vec![false; queues as usize]),
            queue_freed: Condvar::new(),
            draining: AtomicUsize::new(0),
            conns: Mutex::new(HashMap::new()),
            book: Mutex::new(Book::new(self.opts.keep_log)),
            fsyncs: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            clamps: AtomicU64::new(0),
            clamp_max_ps: AtomicU64::new(0),
            full_warned: AtomicBool::new(false),
        });
        let (sim_tx, sim_rx) = mpsc::channel();
        let spin = Duration::from_micros(self.opts.spin_us);
        let sim = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("ssdkit-sim".into())
                .spawn(move || SimLoop::new(dev, shared, sim_rx, spin).run())
                .map_err(|e| Error::Io(format!("cannot start the simulator thread: {e}")))?
        };
        let readers: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let acceptor = {
            let (shared, readers, sim_tx) = (shared.clone(), readers.clone(), sim_tx.clone());
            let listener = self.listener.try_clone()?;
            std::thread::Builder::new()
                .name("nbd-accept".into())
                .spawn(move || accept(listener, shared, readers, sim_tx, queues))
                .map_err(|e| Error::Io(format!("cannot start the acceptor thread: {e}")))?
        };
        Ok(Server {
            shared,
            sim_tx,
            sim: Some(sim),
            acceptor: Some(acceptor),
            readers,
            listener: self.listener,
            uri: self.uri,
            queues,
        })
    }
}

pub struct Server {
    shared: Arc<Shared>,
    sim_tx: Sender<SimMsg>,
    sim: Option<JoinHandle<Result<Device, Error>>>,
    acceptor: Option<JoinHandle<()>>,
    readers: Arc<Mutex<Vec<JoinHandle<()>>>>,
    listener: Listener,
    uri: String,
    queues: u32,
}

/// One request of the latency log.
#[derive(Debug, Clone)]
pub struct LogRow {
    pub queue: u32,
    pub op: Op,
    pub offset_bytes: u64,
    pub bytes: u64,
    pub submit_ps: u64,
    pub complete_ps: u64,
    /// Wall nanoseconds since the server started: when the request's header arrived and when
    /// its reply was written.
    pub arrival_ns: u64,
    pub reply_ns: u64,
}

impl Server {
    pub fn uri(&self) -> &str {
        &self.uri
    }

    pub fn queues(&self) -> u32 {
        self.queues
    }

    /// The export's size in bytes: the device's logical capacity.
    pub fn capacity_bytes(&self) -> u64 {
        self.shared.export.size
    }

    /// The simulator's error, if its thread has ended by itself.
    pub fn failed(&mut self) -> Option<Error> {
        if self.sim.as_ref().is_some_and(|h| h.is_finished()) {
            let out = self.sim.take().expect("present").join();
            return Some(match out {
                Ok(Err(e)) => e,
                Ok(Ok(_)) => Error::Simulation("the simulator thread ended unexpectedly".into()),
                Err(p) => Error::Simulation(format!("internal error: {}", panic_text(p))),
            });
        }
        None
    }

    /// The result document of everything so far, with the emulator's record, as JSON text.
    pub fn result_json(&self) -> Result<String, Error> {
        let (tx, rx) = mpsc::channel();
        let gone = || Error::Simulation("the simulator thread has ended".into());
        self.sim_tx.send(SimMsg::Result(tx)).map_err(|_| gone())?;
        let r = rx.recv().map_err(|_| gone())??;
        Ok(self.finish(r))
    }

    fn finish(&self, mut r: RunResult) -> String {
        r.emulator = Some(self.shared.record_of(&self.uri, self.queues));
        serde_json::to_string(&r).expect("result serialises")
    }

    /// Rows of the requests answered since the last call.
    pub fn take_log(&self) -> Vec<LogRow> {
        std::mem::take(&mut self.shared.book().tally.log)
    }

    /// Stops cleanly: no new connections, each connection's reading side shut (requests in
    /// flight are answered, then the connection closes), the store flushed. Returns the final
    /// result as JSON text and the latency log's last rows.
    pub fn stop(mut self) -> Result<(String, Vec<LogRow>), Error> {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if let Some(a) = self.acceptor.take() {
            a.join().ok();
        }
        for s in self
            .shared
            .conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            s.shutdown_read();
        }
        self.sim_tx.send(SimMsg::Stop).ok();
        let dev = match self.sim.take() {
            Some(h) => match h.join() {
                Ok(r) => r,
                Err(p) => Err(Error::Simulation(format!(
                    "internal error: {}",
                    panic_text(p)
                ))),
            },
            None => Err(Error::Simulation("the simulator thread has ended".into())),
        };
        let readers = std::mem::take(&mut *self.readers.lock().unwrap_or_else(|p| p.into_inner()));
        for h in readers {
            h.join().ok();
        }
        let synced = self.shared.store.sync();
        self.listener.remove();
        let dev = dev?;
        synced.map_err(|e| Error::Io(format!("cannot flush the backing file: {e}")))?;
        Ok((self.finish(dev.result_record()), self.take_log()))
    }
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

fn accept(
    listener: Listener,
    shared: Arc<Shared>,
    readers: Arc<Mutex<Vec<JoinHandle<()>>>>,
    sim: Sender<SimMsg>,
    queues: u32,
) {
    let mut next_conn = 0u64;
    while !shared.stopping.load(Ordering::SeqCst) {
        let mut pfd = libc::pollfd {
            fd: listener.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd of a listening socket this thread owns a clone of.
        let n = unsafe { libc::poll(&mut pfd, 1, 100) };
        if n <= 0 {
            continue;
        }
        let Ok(stream) = listener.accept() else {
            continue;
        };
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        let mut live = shared.conns.lock().unwrap_or_else(|p| p.into_inner());
        // Handshakes beyond the queue pairs are turned away at once rather than left to hold
        // threads; GO still refuses politely when every queue pair is in use.
        if live.len() >= queues as usize + 64 {
            stream.shutdown_both();
            continue;
        }
        let Ok(keep) = stream.try_clone() else {
            continue;
        };
        let conn = next_conn;
        next_conn += 1;
        live.insert(conn, keep);
        drop(live);
        let (shared2, sim2) = (shared.clone(), sim.clone());
        let h = std::thread::Builder::new()
            .name(format!("nbd-reader-{conn}"))
            .stack_size(256 * 1024)
            .spawn(move || conn::serve(shared2, stream, conn, sim2));
        let mut rs = readers.lock().unwrap_or_else(|p| p.into_inner());
        rs.retain(|h| !h.is_finished());
        match h {
            Ok(h) => rs.push(h),
            Err(_) => shared.forget(conn),
        }
    }
}

/// What every thread shares: the export, the store, the queue pairs in use and the books.
/// Locks here are taken per connection or per batch of replies, never by the simulator.
pub(crate) struct Shared {
    pub(crate) export: proto::Export,
    pub(crate) store: Store,
    pub(crate) clock: Clock,
    pub(crate) t0: Instant,
    durable: bool,
    stopping: AtomicBool,
    queues: Mutex<Vec<bool>>,
    /// Signalled whenever a queue pair is given back.
    queue_freed: Condvar,
    /// Connections whose client has left but whose in-flight replies are still being
    /// answered: each will give its queue pair back shortly.
    draining: AtomicUsize,
    conns: Mutex<HashMap<u64, Stream>>,
    book: Mutex<Book>,
    fsyncs: AtomicU64,
    errors: AtomicU64,
    requests: AtomicU64,
    clamps: AtomicU64,
    clamp_max_ps: AtomicU64,
    full_warned: AtomicBool,
}

const KEPT_CONNECTIONS: usize = 1000;

/// How long a GO waits for a draining connection's queue pair before it is refused.
const QUEUE_DRAIN_WAIT: Duration = Duration::from_secs(5);
/// How long a GO waits for a queue pair when no connection is draining.
const QUEUE_CLOSE_WAIT: Duration = Duration::from_millis(250);

struct Book {
    connections: VecDeque<EmulatorConnection>,
    /// Sequence number of `connections[0]`.
    first: usize,
    total: usize,
    tally: Tally,
}

impl Book {
    fn new(keep_log: bool) -> Self {
        Self {
            connections: VecDeque::new(),
            first: 0,
            total: 0,
            tally: Tally::new(keep_log),
        }
    }
}

/// Replies written: how late (real clock), and the latency log's rows. The writers add to the
/// shared one; the simulator thread keeps its own and hands it over now and then, so that it
/// takes no lock per reply.
pub(crate) struct Tally {
    lateness_ns: Histogram<u64>,
    keep_log: bool,
    log: Vec<LogRow>,
    requests: u64,
}

impl Tally {
    pub(crate) fn new(keep_log: bool) -> Self {
        Self {
            // Bounded, so that a saturating record clamps only beyond an hour, not at the small
            // range an auto-resizing histogram starts with.
            lateness_ns: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
            keep_log,
            log: Vec::new(),
            requests: 0,
        }
    }

    pub(crate) fn add(&mut self, d: &conn::Done, sent: Instant, t0: Instant) {
        self.requests += 1;
        if let Some(t) = d.target {
            let late = sent.saturating_duration_since(t).as_nanos() as u64;
            self.lateness_ns.saturating_record(late.max(1));
        }
        if self.keep_log {
            let ns = |at: Instant| at.saturating_duration_since(t0).as_nanos() as u64;
            self.log.push(LogRow {
                queue: d.queue,
                op: d.op,
                offset_bytes: d.offset,
                bytes: d.bytes,
                submit_ps: d.submit_ps,
                complete_ps: d.complete_ps,
                arrival_ns: ns(d.arrival),
                reply_ns: ns(sent),
            });
        }
    }

    /// Moves `other`'s figures into this one.
    fn absorb(&mut self, other: &mut Tally) {
        self.lateness_ns.add(&other.lateness_ns).ok();
        other.lateness_ns.reset();
        self.log.append(&mut other.log);
        self.requests += std::mem::take(&mut other.requests);
    }
}

impl Shared {
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn secs(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.t0).as_secs_f64()
    }

    pub(crate) fn claim_queue(&self) -> Result<u32, String> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err("the server is shutting down".into());
        }
        // A client that closes a connection and at once opens another (nbdinfo then nbdcopy,
        // a test reconnecting) must not be refused because the old connection's last replies
        // are still in flight: wait for draining connections. The short wait covers the moment
        // between a client's close and its reader noticing it.
        let start = Instant::now();
        let mut q = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(i) = q.iter().position(|used| !used) {
                q[i] = true;
                return Ok(i as u32);
            }
            let now = Instant::now();
            let deadline = start
                + if self.draining.load(Ordering::SeqCst) > 0 {
                    QUEUE_DRAIN_WAIT
                } else {
                    QUEUE_CLOSE_WAIT
                };
            if now >= deadline {
                return Err(format!(
                    "all {} queue pairs are in use: one per connection (--queues)",
                    q.len()
                ));
            }
            q = self
                .queue_freed
                .wait_timeout(q, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// The connection's client is gone; its queue pair will be released once its in-flight
    /// requests are answered.
    pub(crate) fn draining(&self, on: bool) {
        let _q = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        if on {
            self.draining.fetch_add(1, Ordering::SeqCst);
        } else {
            self.draining.fetch_sub(1, Ordering::SeqCst);
        }
        self.queue_freed.notify_all();
    }

    /// A connection started on `queue`: its slot in the books.
    pub(crate) fn opened(&self, queue: u32) -> usize {
        let mut b = self.book();
        let opened_s = self.secs(Instant::now());
        b.connections.push_back(EmulatorConnection {
            queue,
            opened_s,
            closed_s: None,
            requests: 0,
        });
        if b.connections.len() > KEPT_CONNECTIONS {
            b.connections.pop_front();
            b.first += 1;
        }
        b.total += 1;
        b.total - 1
    }

    pub(crate) fn closed(&self, queue: u32, slot: usize, requests: u64) {
        let closed_s = self.secs(Instant::now());
        {
            let mut b = self.book();
            let first = b.first;
            if let Some(c) = slot
                .checked_sub(first)
                .and_then(|i| b.connections.get_mut(i))
            {
                c.closed_s = Some(closed_s);
                c.requests = requests;
            }
        }
        self.release_queue(queue);
    }

    pub(crate) fn release_queue(&self, queue: u32) {
        let mut q = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        q[queue as usize] = false;
        self.queue_freed.notify_all();
    }

    pub(crate) fn forget(&self, conn: u64) {
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&conn);
    }

    pub(crate) fn count_error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn warn_full(&self) {
        if !self.full_warned.swap(true, Ordering::Relaxed) {
            eprintln!(
                "ssdkit serve: warning: the in-memory store is full ({} bytes, --memory-limit); writes to new ranges get ENOSPC. Serve with --backing FILE for more.",
                self.store.limit_bytes().unwrap_or(0)
            );
        }
    }

    /// With `--durable`, puts the data on stable storage (FLUSH, FUA).
    pub(crate) fn sync_if(&self, asked: bool) -> Result<(), u32> {
        if !(asked && self.durable) {
            return Ok(());
        }
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        self.store.sync().map_err(|_| proto::EIO)
    }

    pub(crate) fn note_clamp(&self, by_ps: u64) {
        self.clamps.fetch_add(1, Ordering::Relaxed);
        self.clamp_max_ps.fetch_max(by_ps, Ordering::Relaxed);
    }

    /// A reply written at `sent` by a writer.
    pub(crate) fn record(&self, d: &conn::Done, sent: Instant) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.book().tally.add(d, sent, self.t0);
    }

    /// The simulator thread's tally of the replies it sent itself.
    pub(crate) fn absorb(&self, t: &mut Tally) {
        self.requests.fetch_add(t.requests, Ordering::Relaxed);
        self.book().tally.absorb(t);
    }

    pub(crate) fn keeps_log(&self) -> bool {
        self.book().tally.keep_log
    }

    pub(crate) fn count_reply(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    fn record_of(&self, uri: &str, queues: u32) -> EmulatorResult {
        let b = self.book();
        let h = &b.tally.lateness_ns;
        let us = |ns: u64| ns as f64 / 1000.0;
        let lateness = (self.clock == Clock::Real && !h.is_empty()).then(|| LatencySummary {
            mean: h.mean() / 1000.0,
            min: us(h.min()),
            p50: us(h.value_at_quantile(0.5)),
            p90: us(h.value_at_quantile(0.9)),
            p99: us(h.value_at_quantile(0.99)),
            p99_9: us(h.value_at_quantile(0.999)),
            p99_99: us(h.value_at_quantile(0.9999)),
            max: us(h.max()),
        });
        let lateness_histogram = lateness.is_some().then(|| {
            // Nanoseconds recorded, picoseconds reported, as every latency histogram of the result.
            let mut out = LatencyHistogram::default();
            for v in h.iter_recorded() {
                let upper = v.value_iterated_to();
                out.lower_ps.push(h.lowest_equivalent(upper) * 1000);
                out.upper_ps.push(upper * 1000);
                out.count.push(v.count_at_value());
            }
            out
        });
        EmulatorResult {
            clock: match self.clock {
                Clock::Real => "real",
                Clock::Fast => "fast",
            }
            .into(),
            uri: uri.into(),
            uptime_s: self.secs(Instant::now()),
            queues,
            connections_total: b.total as u64,
            connections: b.connections.iter().cloned().collect(),
            requests: self.requests.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            clamped_arrivals: self.clamps.load(Ordering::Relaxed),
            clamped_max_us: self.clamp_max_ps.load(Ordering::Relaxed) as f64 / 1e6,
            lateness,
            lateness_histogram,
            store: EmulatorStore {
                kind: self.store.kind().into(),
                path: match &self.store {
                    Store::File(f) => Some(f.path.display().to_string()),
                    Store::Mem(_) => None,
                },
                stored_bytes: self.store.stored_bytes(),
                limit_bytes: self.store.limit_bytes(),
                durable: self.durable,
                fsyncs: self.fsyncs.load(Ordering::Relaxed),
            },
        }
    }
}

/// A connection's socket, Unix or TCP.
pub(crate) enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    pub(crate) fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
        })
    }
    pub(crate) fn shutdown_both(&self) {
        match self {
            Stream::Unix(s) => s.shutdown(Shutdown::Both).ok(),
            Stream::Tcp(s) => s.shutdown(Shutdown::Both).ok(),
        };
    }
    pub(crate) fn shutdown_read(&self) {
        match self {
            Stream::Unix(s) => s.shutdown(Shutdown::Read).ok(),
            Stream::Tcp(s) => s.shutdown(Shutdown::Read).ok(),
        };
    }
    /// Sends what the socket takes now, without waiting.
    pub(crate) fn send_now(&self, b: &[u8]) -> io::Result<usize> {
        let fd = match self {
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tcp(s) => s.as_raw_fd(),
        };
        // SAFETY: send from a live buffer on the stream's own descriptor.
        let n = unsafe {
            libc::send(
                fd,
                b.as_ptr().cast(),
                b.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
    pub(crate) fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_read_timeout(d),
            Stream::Tcp(s) => s.set_read_timeout(d),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(b),
            Stream::Tcp(s) => s.read(b),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        (&*self).write(b)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Write for &Stream {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => (&*s).write(b),
            Stream::Tcp(s) => (&*s).write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Listener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
}

impl Listener {
    fn bind(e: &Endpoint, allow_remote: bool) -> Result<(Listener, String), Error> {
        match e {
            Endpoint::Unix(p) => {
                let shown = p.display();
                let parent = p
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                if !parent.is_dir() {
                    return Err(err(format!(
                        "--socket {shown}: folder {} does not exist",
                        parent.display()
                    )));
                }
                if let Ok(m) = std::fs::symlink_metadata(p) {
                    use std::os::unix::fs::FileTypeExt;
                    if !m.file_type().is_socket() {
                        return Err(err(format!(
                            "--socket {shown} exists and is not a socket; it is left alone: give another path"
                        )));
                    }
                    if UnixStream::connect(p).is_ok() {
                        return Err(err(format!(
                            "--socket {shown} is in use by a running server; stop it or give another path"
                        )));
                    }
                    // A socket nobody listens on: left behind by a server that was killed.
                    std::fs::remove_file(p).map_err(|e| {
                        err(format!("cannot replace the stale --socket {shown}: {e}"))
                    })?;
                }
                let l = UnixListener::bind(p)
                    .map_err(|e| err(format!("cannot listen on --socket {shown}: {e}")))?;
                let abs = std::fs::canonicalize(parent)
                    .map(|d| d.join(p.file_name().unwrap_or_default()))
                    .unwrap_or_else(|_| p.clone());
                let uri = format!("nbd+unix:///?socket={}", abs.display());
                Ok((Listener::Unix(l, abs), uri))
            }
            Endpoint::Tcp(addr) => {
                let resolved: Vec<SocketAddr> = addr
                    .to_socket_addrs()
                    .map_err(|e| err(format!("--listen {addr}: not a HOST:PORT address ({e})")))?
                    .collect();
                let Some(a) = resolved.first().copied() else {
                    return Err(err(format!(
                        "--listen {addr}: the name resolves to no address"
                    )));
                };
                if !a.ip().is_loopback() && !allow_remote {
                    return Err(err(format!(
                        "--listen {addr}: {} is not a loopback address. NBD has no authentication: anyone who can reach the port can read and write the export. Give --allow-remote to serve it anyway",
                        a.ip()
                    )));
                }
                let l = TcpListener::bind(a).map_err(|e| {
                    if e.kind() == io::ErrorKind::AddrInUse {
                        err(format!("--listen {addr}: the address is already in use"))
                    } else {
                        err(format!("--listen {addr}: cannot listen: {e}"))
                    }
                })?;
                let local = l.local_addr().unwrap_or(a);
                let uri = match local {
                    SocketAddr::V6(v) => format!("nbd://[{}]:{}/", v.ip(), v.port()),
                    SocketAddr::V4(v) => format!("nbd://{}:{}/", v.ip(), v.port()),
                };
                Ok((Listener::Tcp(l), uri))
            }
        }
    }

    fn try_clone(&self) -> Result<Listener, Error> {
        let e = |x: io::Error| Error::Io(format!("cannot share the listening socket: {x}"));
        Ok(match self {
            Listener::Unix(l, p) => Listener::Unix(l.try_clone().map_err(e)?, p.clone()),
            Listener::Tcp(l) => Listener::Tcp(l.try_clone().map_err(e)?),
        })
    }

    fn fd(&self) -> i32 {
        match self {
            Listener::Unix(l, _) => l.as_raw_fd(),
            Listener::Tcp(l) => l.as_raw_fd(),
        }
    }

    fn accept(&self) -> io::Result<Stream> {
        Ok(match self {
            Listener::Unix(l, _) => Stream::Unix(l.accept()?.0),
            Listener::Tcp(l) => {
                let s = l.accept()?.0;
                // Replies are small and latency is the point.
                s.set_nodelay(true).ok();
                Stream::Tcp(s)
            }
        })
    }

    fn remove(&self) {
        if let Listener::Unix(_, p) = self {
            std::fs::remove_file(p).ok();
        }
    }
}
