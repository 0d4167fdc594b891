//! Latency and throughput summaries for the benchmarks, and the spread of a figure over runs.

use std::time::Duration;

use serde::Serialize;

/// Throughput and latency percentiles of one measured run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub ops: u64,
    pub secs: f64,
    pub per_sec: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Summary {
    /// Summarises `ops` operations done in `elapsed`, with per-operation `latencies` (may be empty
    /// when only throughput is measured).
    pub fn new(ops: u64, elapsed: Duration, mut latencies: Vec<Duration>) -> Self {
        latencies.sort_unstable();
        let pick = |q: f64| {
            if latencies.is_empty() {
                return 0.0;
            }
            let i = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
            latencies[i].as_secs_f64() * 1e3
        };
        let secs = elapsed.as_secs_f64();
        Self {
            ops,
            secs,
            per_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
            p50_ms: pick(0.50),
            p99_ms: pick(0.99),
            max_ms: latencies
                .last()
                .map(|d| d.as_secs_f64() * 1e3)
                .unwrap_or(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_ranked_sample() {
        let latencies = (1..=100).map(Duration::from_millis).collect();
        let s = Summary::new(100, Duration::from_secs(2), latencies);
        assert_eq!((s.p50_ms, s.p99_ms, s.max_ms), (50.0, 99.0, 100.0));
        assert_eq!(s.per_sec, 50.0);
        assert_eq!(Summary::new(0, Duration::ZERO, vec![]).p99_ms, 0.0);
    }
}

/// The median of several runs with their range.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// The median (the lower middle one of an even count: no value the runs did not produce)
    /// and the range of `values`.
    pub fn of(mut values: Vec<f64>) -> Self {
        values.sort_by(f64::total_cmp);
        match (values.first(), values.last()) {
            (Some(&min), Some(&max)) => Self {
                median: values[(values.len() - 1) / 2],
                min,
                max,
            },
            _ => Self::default(),
        }
    }
}
