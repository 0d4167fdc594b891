//! The inbox crate's integration tests: one binary, as in every package of the workspace (each
//! test binary links the whole dependency tree), one module per concern. The `amqp` module tests
//! the feature of that name and is built with it only (`cargo test -p outbox-inbox --features
//! amqp`; the workspace's test run has it on).

#[cfg(feature = "amqp")]
mod amqp;
#[cfg(feature = "amqp")]
mod consumer;
#[cfg(feature = "amqp")]
mod hooks;
mod inbox;
mod support;
mod types;
