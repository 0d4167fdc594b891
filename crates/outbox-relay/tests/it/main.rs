//! The relay crate's integration tests: one binary, as in every package of the workspace (each
//! test binary links the whole dependency tree), one module per concern.

mod any_outbox;
mod broker;
mod floor;
mod operator;
