//! relay-svc's integration tests: one binary (every test binary links the whole dependency
//! tree), one module per concern, the shared harness in [`common`]. One module's tests:
//! `cargo test -p relay-svc --test it publish::`.

mod admin_input;
mod admin_tokens;
mod alarm;
mod bench;
mod blackhole;
mod common;
mod concurrency;
mod fleet;
mod frozen;
mod generic;
mod health;
mod help;
mod metrics;
mod outage;
mod publish;
mod refused;
mod replay;
mod secrets;
mod settings;
mod shards;
mod startup;
mod upgrade;
