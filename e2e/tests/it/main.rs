//! The end-to-end tests: one binary (every test binary links the whole dependency tree), one
//! module per concern. [`serial`] says which tests may run side by side: the few that restart
//! the machine's broker or count this process's CPU run alone. One module's tests:
//! `cargo test -p e2e --test it end_to_end::`.

mod alerts;
mod amqp_tls;
mod bench_smoke;
mod broker_users;
mod chaos;
mod chaos_cluster;
mod chaos_shards;
mod cluster;
mod compose;
mod dashboard;
mod demo;
mod end_to_end;
mod model;
mod otlp;
mod scripts;
mod serial;
mod shards;
