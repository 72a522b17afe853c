//! The one simulator thread: it owns the `Device`, takes requests from the connections'
//! readers through a channel, and hands each finished request to its connection's writer.
//! With the real clock, simulated time follows the wall clock: a request enters the device at
//! its arrival and its reply is released when the simulated completion time comes on the wall
//! clock (sleep to near it, then spin). With the fast clock, replies leave as soon as they are
//! simulated and simulated time only moves while requests are outstanding.

use crate::conn::{Out, Reply, Sent};
use crate::{Clock, Shared, Tally};
use ssdkit_core::device::{Completion, Device};
use ssdkit_core::internals::workload::Op;
use ssdkit_core::Error;
use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The simulated operations of one NBD request: most are one, large TRIMs and zeroings are
/// cut into pieces the device takes (its sizes count sectors in 32 bits).
pub struct Work {
    pub op: Op,
    pub offset: u64,
    pub length: u64,
}

pub enum SimMsg {
    Open {
        conn: u64,
        queue: u32,
        replies: Sender<Option<Reply>>,
        out: Arc<Out>,
    },
    Req {
        conn: u64,
        cookie: u64,
        /// A READ's range, read from the store by the writer when the reply leaves.
        read: Option<(u64, u32)>,
        work: Vec<Work>,
        arrival: Instant,
    },
    Closed {
        conn: u64,
    },
    /// The result document now, for SIGUSR1, `--result-every` and the library's callers.
    Result(Sender<Result<ssdkit_core::result::RunResult, Error>>),
    /// Finish what is outstanding, then return the device.
    Stop,
}

struct ConnState {
    queue: u32,
    replies: Sender<Option<Reply>>,
    out: Arc<Out>,
    pending: u32,
    closed: bool,
}

struct Pending {
    conn: u64,
    cookie: u64,
    read: Option<(u64, u32)>,
    pieces: u32,
    arrival: Instant,
    submit_ps: u64,
    complete_ps: u64,
    op: Op,
    offset: u64,
    bytes: u64,
}

pub struct SimLoop {
    dev: Device,
    shared: Arc<Shared>,
    rx: Receiver<SimMsg>,
    conns: HashMap<u64, ConnState>,
    pending: HashMap<u64, Pending>,
    /// Piece id -> the id of its request's first piece, for requests cut into pieces.
    piece_of: HashMap<u64, u64>,
    done: Vec<Completion>,
    stopping: bool,
    spin: Duration,
    /// Replies this thread sent itself, handed to the shared books now and then.
    tally: Tally,
    handed: Instant,
    scratch: Vec<u8>,
}

impl SimLoop {
    pub fn new(dev: Device, shared: Arc<Shared>, rx: Receiver<SimMsg>, spin: Duration) -> Self {
        Self {
            dev,
            rx,
            conns: HashMap::new(),
            pending: HashMap::new(),
            piece_of: HashMap::new(),
            done: Vec::new(),
            stopping: false,
            spin,
            tally: Tally::new(shared.keeps_log()),
            handed: Instant::now(),
            scratch: Vec::new(),
            shared,
        }
    }

    /// Runs until told to stop and everything outstanding is answered; returns the device
    /// (for the final result) or the simulator's error.
    pub fn run(mut self) -> Result<Device, Error> {
        if self.shared.clock == Clock::Real {
            set_timer_slack_minimal();
        }
        let out = match self.shared.clock {
            Clock::Real => self.run_real(),
            Clock::Fast => self.run_fast(),
        };
        self.shared.absorb(&mut self.tally);
        // Dropping the senders ends the writers once they have written what they hold.
        self.conns.clear();
        out.map(|_| self.dev)
    }

    fn run_fast(&mut self) -> Result<(), Error> {
        loop {
            if self.dev.outstanding() == 0 {
                if self.stopping {
                    return Ok(());
                }
                match self.rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(m) => self.handle(m, None)?,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => self.stopping = true,
                }
            }
            self.intake(None)?;
            if let Some(t) = self.dev.next_event_ps() {
                self.dev.run_until(t)?;
            }
            self.release(None);
        }
    }

    fn run_real(&mut self) -> Result<(), Error> {
        let t0 = self.shared.t0;
        let give_up = Duration::from_secs(10);
        let mut stop_at: Option<Instant> = None;
        loop {
            let now = Instant::now();
            self.intake(Some(now))?;
            let wall = wall_ps(t0, Instant::now());
            if wall > self.dev.now_ps() {
                self.dev.run_until(wall)?;
            }
            self.release(Some(t0));
            if self.stopping {
                let at = *stop_at.get_or_insert(now);
                if self.dev.outstanding() == 0 || now.duration_since(at) > give_up {
                    return Ok(());
                }
            }
            let deadline = match self.dev.next_event_ps() {
                Some(t) => t0 + Duration::from_nanos(t.div_ceil(1000)),
                None => Instant::now() + Duration::from_millis(100),
            };
            match wait_until(&self.rx, deadline, self.spin) {
                Ok(Some(m)) => self.handle(m, Some(Instant::now()))?,
                Ok(None) => {}
                Err(()) => self.stopping = true,
            }
        }
    }

    fn intake(&mut self, now: Option<Instant>) -> Result<(), Error> {
        loop {
            match self.rx.try_recv() {
                Ok(m) => self.handle(m, now)?,
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => {
                    self.stopping = true;
                    return Ok(());
                }
            }
        }
    }

    /// `real`: the wall-clock instant of handling, with the real clock.
    fn handle(&mut self, m: SimMsg, real: Option<Instant>) -> Result<(), Error> {
        match m {
            SimMsg::Open {
                conn,
                queue,
                replies,
                out,
            } => {
                self.conns.insert(
                    conn,
                    ConnState {
                        queue,
                        replies,
                        out,
                        pending: 0,
                        closed: false,
                    },
                );
            }
            SimMsg::Req {
                conn,
                cookie,
                read,
                work,
                arrival,
            } => self.submit(conn, cookie, read, work, arrival, real.is_some())?,
            SimMsg::Closed { conn } => {
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.closed = true;
                    if c.pending == 0 {
                        self.conns.remove(&conn);
                    }
                }
            }
            SimMsg::Result(tx) => {
                self.shared.absorb(&mut self.tally);
                tx.send(Ok(self.dev.result_record())).ok();
            }
            SimMsg::Stop => self.stopping = true,
        }
        Ok(())
    }

    fn submit(
        &mut self,
        conn: u64,
        cookie: u64,
        read: Option<(u64, u32)>,
        work: Vec<Work>,
        arrival: Instant,
        real: bool,
    ) -> Result<(), Error> {
        let Some(c) = self.conns.get_mut(&conn) else {
            return Ok(());
        };
        let queue = c.queue;
        let at = if real {
            let a = wall_ps(self.shared.t0, arrival);
            let now = self.dev.now_ps();
            if a < now {
                self.shared.note_clamp(now - a);
            }
            a.max(now)
        } else {
            self.dev.now_ps()
        };
        let mut first = None;
        let (op, offset) = (work[0].op, work[0].offset);
        let bytes: u64 = work.iter().map(|w| w.length).sum();
        for w in &work {
            let id = match self.dev.submit(at, w.op, w.offset, w.length, queue) {
                Ok(id) => id,
                Err(Error::Request(m)) => {
                    return Err(Error::Simulation(format!(
                        "the device refused a request the NBD checks let through ({m}); please report it"
                    )))
                }
                Err(e) => return Err(e),
            };
            match first {
                None => first = Some(id),
                Some(f) => {
                    self.piece_of.insert(id, f);
                }
            }
        }
        let first = first.expect("a request has at least one piece");
        c.pending += 1;
        self.pending.insert(
            first,
            Pending {
                conn,
                cookie,
                read,
                pieces: work.len() as u32,
                arrival,
                submit_ps: at,
                complete_ps: 0,
                op,
                offset,
                bytes,
            },
        );
        Ok(())
    }

    /// Sends finished requests' replies, or hands them to their writers. `t0`: real clock,
    /// so each reply carries the wall-clock instant it was due.
    fn release(&mut self, t0: Option<Instant>) {
        self.dev.drain_into(&mut self.done);
        if self.done.is_empty() {
            return;
        }
        if self.handed.elapsed() > Duration::from_millis(20) {
            self.shared.absorb(&mut self.tally);
            self.handed = Instant::now();
        }
        for d in self.done.drain(..) {
            let first = self.piece_of.remove(&d.id).unwrap_or(d.id);
            let Some(p) = self.pending.get_mut(&first) else {
                continue;
            };
            p.pieces -= 1;
            p.complete_ps = p.complete_ps.max(d.complete_ps);
            if p.pieces > 0 {
                continue;
            }
            let p = self.pending.remove(&first).expect("present");
            let Some(c) = self.conns.get_mut(&p.conn) else {
                continue;
            };
            let reply = Reply {
                cookie: p.cookie,
                error: 0,
                read: p.read,
                done: Some(crate::conn::Done {
                    queue: c.queue,
                    op: p.op,
                    offset: p.offset,
                    bytes: p.bytes,
                    arrival: p.arrival,
                    submit_ps: p.submit_ps,
                    complete_ps: p.complete_ps,
                    target: t0.map(|t| t + Duration::from_nanos(p.complete_ps.div_ceil(1000))),
                }),
            };
            match c.out.try_send(&self.shared, reply, &mut self.scratch) {
                Sent::At { at, kick, done } => {
                    c.out.answered(true);
                    if let Some(d) = done {
                        self.tally.add(&d, at, self.shared.t0);
                    }
                    if kick {
                        c.replies.send(None).ok();
                    }
                }
                // A writer whose connection broke has gone; the request is complete all the
                // same.
                Sent::Declined(r) => {
                    c.replies.send(Some(r)).ok();
                }
            }
            c.pending -= 1;
            if c.closed && c.pending == 0 {
                self.conns.remove(&p.conn);
            }
        }
    }
}

/// Sleeps until `spin` before `deadline`, then spins to it, returning early with a message
/// that arrives meanwhile; `Err` when every sender is gone.
fn wait_until(
    rx: &Receiver<SimMsg>,
    deadline: Instant,
    spin: Duration,
) -> Result<Option<SimMsg>, ()> {
    let now = Instant::now();
    if deadline > now + spin {
        match rx.recv_timeout(deadline - now - spin) {
            Ok(m) => return Ok(Some(m)),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Err(()),
        }
    }
    while Instant::now() < deadline {
        match rx.try_recv() {
            Ok(m) => return Ok(Some(m)),
            Err(TryRecvError::Empty) => std::hint::spin_loop(),
            Err(TryRecvError::Disconnected) => return Err(()),
        }
    }
    Ok(None)
}

/// How late this machine wakes a thread that waits for deadlines as the real clock's
/// simulator thread does (same timer slack, same sleep-then-spin, nothing else to do): one
/// deadline every `period` for `run`, the lateness of each in nanoseconds. This is the floor
/// under `emulator.lateness`; on a virtual machine whose host takes its CPUs away (steal
/// time), it is far above zero.
pub fn timer_floor(period: Duration, spin: Duration, run: Duration) -> Vec<u64> {
    let worker = std::thread::spawn(move || {
        set_timer_slack_minimal();
        let (_tx, rx) = std::sync::mpsc::channel::<SimMsg>();
        let start = Instant::now();
        let mut late = Vec::with_capacity((run.as_nanos() / period.as_nanos().max(1)) as usize + 1);
        let mut next = start + period;
        while next < start + run {
            // `_tx` lives, so the wait only ever times out.
            let _ = wait_until(&rx, next, spin);
            let now = Instant::now();
            late.push(now.duration_since(next).as_nanos() as u64);
            next += period;
            // A deadline missed by more than a period is not also counted for the ones after.
            if next < now {
                next = now + period;
            }
        }
        late
    });
    worker.join().unwrap_or_default()
}

/// Picoseconds of wall time since `t0`.
pub fn wall_ps(t0: Instant, at: Instant) -> u64 {
    at.saturating_duration_since(t0).as_nanos() as u64 * 1000
}

/// Sleeps of the real clock end within a microsecond of their deadline instead of the
/// default 50 us of timer slack.
fn set_timer_slack_minimal() {
    // SAFETY: prctl with an integer argument; it affects only the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}
