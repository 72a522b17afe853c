#![allow(dead_code)]
use serde_json::Value;
use ssdkit_core::api::{load, run, Source};
use ssdkit_core::config::Config;

pub fn preset(name: &str, overrides: &[&str]) -> Config {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load(Source::Preset(name), &o).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run_cfg(c: &Config) -> Value {
    run(c, false, false)
        .unwrap_or_else(|e| panic!("{e}"))
        .result
}

pub fn mean_us(r: &Value, op: &str) -> f64 {
    r["device"]["stats"][op]["latency_us"]["mean"]
        .as_f64()
        .unwrap()
}

pub fn count(r: &Value, op: &str) -> u64 {
    r["device"]["stats"][op]["count"].as_u64().unwrap()
}

/// Relative error |a - b| / b.
pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}
