//! End-to-end tooling for the outbox system: run the real binaries ([`stack`]), prove the whole
//! path under faults ([`chaos`], the `chaos` binary), and measure it ([`bench`](mod@bench), the `bench`
//! binary, with [`scaling`]: instances, shards and the capacity model, and [`cost`]: cost vs work done; [`options`] and [`load`] below all three); [`fleet`] is what the fleet's chaos run and bench section share; [`cluster`] runs the 3-node RabbitMQ cluster of `deploy/rabbit-cluster.sh`; [`promql`] finds the metric names in the alert rules' and the dashboard's queries.

pub mod bench;
pub mod chaos;
pub mod cluster;
pub mod cost;
pub mod cpu;
pub mod demo;
pub mod fleet;
pub mod load;
pub mod options;
pub mod promql;
pub mod scaling;
pub mod stack;
pub mod stats;
