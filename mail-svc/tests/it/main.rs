//! mail-svc's integration tests: one binary (every test binary links the whole dependency tree),
//! one module per concern, the shared harness in [`common`] and the SMTP server whose answers a
//! test changes in [`faulty_smtp`]. One module's tests: `cargo test -p mail-svc --test it smtp::`.

mod admin_input;
mod batch;
mod bench;
mod blackhole;
mod common;
mod crash;
mod dedupe;
mod faulty_smtp;
mod health;
mod help;
mod limits;
mod metrics;
mod outage;
mod poison;
mod publishers;
mod queue;
mod race;
mod secrets;
mod settings;
mod shards;
mod smtp;
mod smtp_batch;
mod smtp_circuit;
mod smtp_retry;
mod smtp_tls;
mod transient;
