//! The benchmarks: every stage of the system next to what PostgreSQL and RabbitMQ can do on the
//! same machine, in the same run (`cargo run --release -p e2e --bin bench`).
//!
//! 1. write path: `Upsert` over gRPC vs the same SQL transaction through sqlx, and through
//!    pgbench (`pgbench`);
//! 2. relay drain: relay-svc draining a pre-filled outbox vs a plain confirmed lapin publisher;
//! 3. consume path: mail-svc on a pre-loaded queue vs a plain lapin consume+ack loop;
//! 4. end to end: commit→publish and commit→mail latency at fixed offered loads and at the max;
//! 5. idle cost: queries per second the relay and mail-svc make when nothing happens;
//! 6. scaling: 1, 2, 4 mail-svc instances and 1, 2, 4 order shards, with a capacity model
//!    (`crate::scaling`);
//! 7. cost vs work done (`crate::cost`);
//! 8. the completeness audit: section 4's maximum with and without `outboxctl audit --watch`,
//!    and an audit pass at 1,000,000 orders next to the raw reads it is made of;
//! 9. the operator console at 1,000,000 orders, 100,000 dead letters and 10,000 held chains:
//!    each page's server time next to the time of its own reads;
//! 10. the relay fleet: 200 outbox databases, 3 relay-svc instances in fleet mode, light
//!     traffic and one noisy database: connections and idle queries per database, commit→publish
//!     per database, rebalance times, and nothing lost, doubled or misordered.
//!
//! Layout: [`run`] (the sections in order), one module a section (`write`, `drain`, `consume`,
//! `end_to_end`, `idle`; 6 is [`crate::scaling`], 7 [`crate::cost`]), `report` (what was
//! measured), [`table`] (the report as text) and [`mod@compare`] (the report's key figures against
//! the last recorded revision's). What the sections share with `scaling` and
//! `cost` is in [`crate::load`], below all three.

mod audit;
pub mod compare;
mod console;
mod consume;
mod drain;
mod end_to_end;
mod fleet;
mod idle;
pub mod pgbench;
mod report;
mod run;
mod table;
mod write;

pub use audit::AuditCost;
pub use compare::{Baseline, Comparison, compare, figures, render};
pub use console::ConsoleCost;
pub use fleet::FleetCost;
pub use report::{
    BenchReport, EndToEnd, EndToEndRun, Idle, Machine, Pair, Runs, WritePath, ratio_spread,
};
pub use run::run;
pub use table::table;

pub use crate::options::BenchOptions;
