//! What a batch run hands back and takes besides the simulation: the request log's records,
//! the run's output, its hooks (progress, log sink, build check) and the terminal progress bar.

use crate::engine::{Picoseconds, PS_PER_MS};
use crate::error::Error;
use serde_json::Value;
use std::io::{IsTerminal, Write};

/// One completed request, kept when a run asks for the request log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRecord {
    /// Submission order over the run: unique per request.
    pub id: u64,
    pub flow: u32,
    pub op: crate::workload::Op,
    pub offset_bytes: u64,
    pub bytes: u64,
    pub submit_ps: Picoseconds,
    pub complete_ps: Picoseconds,
    /// With `run.latency_breakdown`: picoseconds per step (`stats::breakdown::STEP_NAMES`;
    /// the response-time steps sum to the latency, `host_processing` is 0 here since the
    /// record is taken at the completion-queue entry).
    pub steps: Option<Box<crate::stats::breakdown::Parts>>,
}

pub struct RunOutput {
    pub result: Value,
    pub events: u64,
    pub log: Option<Vec<CompletionRecord>>,
}

/// How often, in wall time, the progress hook and bar are updated (and so how soon a host's
/// interrupt is noticed).
pub(crate) const REPORT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// A run's progress, as handed to [`RunHooks::on_progress`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Fraction done in [0, 1] where the workload has a known end: the least advanced flow by
    /// its requests, bytes, duration or trace bytes read (or the time cap's fraction if
    /// further). None otherwise.
    pub fraction: Option<f64>,
    /// Requests completed.
    pub requests: u64,
    /// Simulated time now.
    pub simulated_ps: Picoseconds,
    /// Wall time since the run started.
    pub elapsed_s: f64,
    /// Every request has completed; the device is doing the GC it owes (`run.end = "idle"`).
    pub draining: bool,
}

/// What happens to the request log of a batch run.
#[derive(Default)]
pub enum LogMode<'a> {
    #[default]
    Off,
    /// Every completion kept in [`RunOutput::log`].
    Keep,
    /// Completions handed to the sink in completion order, in batches of at most 65,536 as
    /// the run goes (memory stays bounded); an error from the sink stops the run with it.
    Stream(&'a mut LogSink<'a>),
}

/// A progress hook: an error stops the run with it.
pub type ProgressHook<'a> = dyn FnMut(&Progress) -> Result<(), Error> + 'a;
/// A request-log sink: an error stops the run with it.
pub type LogSink<'a> = dyn FnMut(&[CompletionRecord]) -> Result<(), Error> + 'a;

/// What a batch run does besides simulating.
#[derive(Default)]
pub struct RunHooks<'a> {
    /// Draw a progress bar on stderr when it is a terminal (after the first half second).
    pub bar: bool,
    /// Called with the progress every 100 ms of wall time; an error stops the run with that
    /// error. A host program interrupts a run this way (Python's Ctrl-C).
    pub on_progress: Option<&'a mut ProgressHook<'a>>,
    pub log: LogMode<'a>,
    /// Called every 65,536 page writes while `api::run_with` preconditions the device in
    /// `write` mode; an error stops it (Python's Ctrl-C before the run starts).
    pub while_building: Option<&'a mut BuildCheck<'a>>,
}

/// A check called while the device is built; an error stops it.
pub type BuildCheck<'a> = dyn FnMut() -> Result<(), Error> + 'a;

/// The terminal progress bar: fits the terminal's width, shows the fraction and an ETA where
/// the workload has a known end and a spinner where it has not; hidden when stderr is not a
/// terminal, and until the run has taken half a second (short runs stay quiet).
pub(crate) struct Bar {
    on: bool,
    bar: Option<(indicatif::ProgressBar, bool)>,
}

impl Bar {
    pub(crate) fn new(on: bool) -> Self {
        Self {
            on: on && std::io::stderr().is_terminal(),
            bar: None,
        }
    }

    pub(crate) fn show(&mut self, p: &Progress) {
        if !self.on || p.elapsed_s < 0.5 {
            return;
        }
        let known = p.fraction.is_some();
        let (bar, styled_known) = self.bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(BAR_STEPS),
                indicatif::ProgressDrawTarget::stderr(),
            );
            (b, !known)
        });
        if *styled_known != known {
            // Elapsed time and ETA are computed here from the run's start: the bar appears
            // half a second in, so its own clock and rate estimate would be wrong.
            let template = if known {
                "{spinner} {prefix} [{wide_bar}] {percent:>3}%  {msg}"
            } else {
                "{spinner} {prefix}  {wide_msg}"
            };
            bar.set_style(
                indicatif::ProgressStyle::with_template(template)
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            *styled_known = known;
        }
        bar.set_prefix(clock(p.elapsed_s));
        let done = if p.draining {
            format!(
                "all {} requests done, GC catching up: {:.1} ms simulated",
                p.requests,
                p.simulated_ps as f64 / PS_PER_MS as f64
            )
        } else {
            format!(
                "{} requests, {:.1} ms simulated",
                p.requests,
                p.simulated_ps as f64 / PS_PER_MS as f64
            )
        };
        match p.fraction {
            Some(f) => {
                bar.set_position((f * BAR_STEPS as f64) as u64);
                let eta = if f > 0.0 {
                    clock(p.elapsed_s * (1.0 - f) / f)
                } else {
                    "?".into()
                };
                if p.draining {
                    // The owed GC has no known length: no ETA.
                    bar.set_message(done);
                } else {
                    bar.set_message(format!("{done}, ETA {eta}"));
                }
            }
            None => {
                bar.set_message(done);
                bar.tick();
            }
        }
    }

    pub(crate) fn clear(&mut self) {
        if let Some((b, _)) = self.bar.take() {
            b.finish_and_clear();
        }
        let _ = std::io::stderr().flush();
    }
}

/// Positions of the bar: fine enough that the percentage moves smoothly.
const BAR_STEPS: u64 = 1_000_000;

/// Seconds as `m:ss` (or `h:mm:ss`).
fn clock(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}
