//! The end-to-end tests: one binary (every test binary links the whole dependency tree), one
//! module per concern. Every test may run beside every other, and beside the other packages'
//! tests: a test that restarts or blocks a broker does so on a RabbitMQ node of its own
//! (`outbox_testkit::rabbit_node`), and the cluster's tests take the cluster's turn
//! (`e2e::cluster`). One module's tests: `cargo test -p e2e --test it end_to_end::`.

mod alerts;
mod amqp_tls;
mod bench_smoke;
mod broker_users;
mod chaos;
mod chaos_cluster;
mod chaos_fleet;
mod chaos_shards;
mod cluster;
mod compose;
mod console;
mod console_rates;
mod dashboard;
mod demo;
mod end_to_end;
mod model;
mod otlp;
mod scripts;
mod shards;
