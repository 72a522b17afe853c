//! Memory per flow (issue 9): 65,535 flows are allowed, so a light flow must cost a few KB, not
//! the ~290 KB that three full-range latency histograms took. Measured with a counting
//! allocator over runs of many one-request flows.

use ssdkit_core::config::Config;
use ssdkit_core::internals::sim::Simulator;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;
static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = NOW.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        NOW.fetch_sub(l.size(), Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Heap of a run of `n` flows of one 4 KiB read each, above the loaded configuration: the
/// simulator's state after the run (result document dropped) and the peak during it.
fn run_bytes(n: usize) -> (usize, usize) {
    let mut text = String::from(
        "[precondition]\nmode = \"empty\"\n[ftl]\nspare_factor = 0.2\n[flash]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 128\npages_per_block = 64\npage_size_bytes = 4096\n",
    );
    for _ in 0..n {
        text.push_str("[[flow]]\nrequests = 1\n");
    }
    let c = Config::load(&text, "flows.toml", &[]).unwrap();
    drop(text);
    let base = NOW.load(Relaxed);
    PEAK.store(base, Relaxed);
    let (out, sim) = Simulator::new(&c).unwrap().run(&c, false, false).unwrap();
    assert_eq!(out.result["flows"].as_array().unwrap().len(), n);
    drop(out);
    let state = NOW.load(Relaxed) - base;
    drop(sim);
    (state, PEAK.load(Relaxed) - base)
}

#[test]
fn a_light_flow_costs_a_few_kilobytes() {
    // The difference of two runs cancels what does not depend on the flow count (the device).
    let (small, large) = (200, 2200);
    let (state_a, peak_a) = run_bytes(small);
    let (state_b, peak_b) = run_bytes(large);
    let per = |a: usize, b: usize| b.saturating_sub(a) as f64 / (large - small) as f64;
    let (state, peak) = (per(state_a, state_b), per(peak_a, peak_b));
    println!(
        "per one-request flow: {state:.0} bytes of simulator state, {peak:.0} bytes of peak heap"
    );
    // Was ~232 KB (three latency histograms of ~18,000 counters each once a latency was in).
    assert!(state < 4096.0, "a one-request flow keeps {state:.0} bytes");
    // The peak adds the result document, about 12 KB per flow of JSON maps.
    assert!(
        peak < 32768.0,
        "a one-request flow costs {peak:.0} bytes at peak"
    );
}

/// For peak RSS by hand: `/usr/bin/time -v target/release/deps/flow_memory-* --ignored
/// --exact ten_thousand_flows --nocapture` (the figures of issue 9).
#[test]
#[ignore]
fn ten_thousand_flows() {
    let (state, peak) = run_bytes(10_000);
    println!(
        "10,000 one-request flows: {state} bytes of simulator state, {peak} bytes of peak heap"
    );
}
