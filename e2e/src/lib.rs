//! End-to-end tooling for the outbox system: run the real binaries ([`stack`]), prove the whole
//! path under faults ([`chaos`], the `chaos` binary), and measure it ([`bench`](mod@bench), the `bench`
//! binary); [`promql`] finds the metric names in the alert rules' and the dashboard's queries.

pub mod bench;
pub mod chaos;
pub mod cpu;
pub mod demo;
pub mod promql;
pub mod stack;
pub mod stats;
