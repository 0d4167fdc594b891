//! Capped exponential backoff with jitter, for every loop that retries a broker or database.

use std::time::Duration;

use rand::Rng;

/// Delays that double from `min` up to `max`; each one is drawn from the upper half of its step
/// so that several instances retrying the same outage do not knock in lockstep.
#[derive(Debug, Clone)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    failures: u32,
}

impl Backoff {
    /// A backoff starting at `min` and never waiting longer than `max`.
    pub fn new(min: Duration, max: Duration) -> Self {
        Self {
            min,
            max: max.max(min),
            failures: 0,
        }
    }

    /// Records a failure and returns how long to wait before the next attempt.
    pub fn next_delay(&mut self) -> Duration {
        let step = self
            .min
            .saturating_mul(2u32.saturating_pow(self.failures.min(30)))
            .min(self.max);
        self.failures = self.failures.saturating_add(1);
        let half = step / 2;
        let jitter_ms = rand::rng().random_range(0..=half.as_millis().max(1) as u64);
        half + Duration::from_millis(jitter_ms)
    }

    /// Failures since the last success.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Records a success: the next failure starts from `min` again.
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_then_caps_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_secs(2));
        let first = b.next_delay();
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(101));
        for _ in 0..20 {
            assert!(b.next_delay() <= Duration::from_millis(2001));
        }
        let late = b.next_delay();
        assert!(
            late >= Duration::from_secs(1),
            "capped step keeps its upper half: {late:?}"
        );
        assert_eq!(b.failures(), 22);
        b.reset();
        assert_eq!(b.failures(), 0);
        assert!(b.next_delay() <= Duration::from_millis(101));
    }
}
