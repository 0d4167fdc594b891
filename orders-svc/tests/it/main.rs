//! orders-svc's integration tests: one binary (every test binary links the whole dependency
//! tree), one module per concern, the shared start-up in [`common`]. One module's tests:
//! `cargo test -p orders-svc --test it upsert::`.

mod bench;
mod common;
mod concurrency;
mod group_commit;
mod grpc_security;
mod health;
mod help;
mod metrics;
mod outage;
mod reflection;
mod secrets;
mod shards;
mod upsert;
mod wake;
mod write_path;
